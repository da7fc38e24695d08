#!/usr/bin/env python3
"""make_ic_seeds.py - seeds of fuzz_icechunk from the spec 2 test repositories
(tests/data/icechunk/spec2): for each snapshot of each repository, the repo
file's payload, the snapshot's and every manifest's, decompressed and joined
by "\\n--ICE--\\n" (the target's input format).  Writes
tests/fuzz/corpus/fuzz_icechunk/seed-*; files named crash-* are kept."""

import os
import sys
from pathlib import Path

import zstandard

REPO = Path(__file__).resolve().parents[2]
SPEC2 = REPO / "tests" / "data" / "icechunk" / "spec2"
OUT = REPO / "tests" / "fuzz" / "corpus" / "fuzz_icechunk"
SEP = b"\n--ICE--\n"


def payload(path):
    raw = path.read_bytes()
    body = raw[39:]
    if raw[38] == 1:
        return zstandard.ZstdDecompressor().decompressobj().decompress(body)
    return body


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("seed-*"):
        old.unlink()
    for repo in sorted(SPEC2.glob("*.icechunk")):
        manifests = [payload(p) for p in sorted((repo / "manifests").iterdir())]
        info = payload(repo / "repo")
        for snap in sorted((repo / "snapshots").iterdir()):
            data = SEP.join([info, payload(snap)] + manifests)
            (OUT / f"seed-{repo.stem}-{snap.name}").write_bytes(data)
    print(f"{len(list(OUT.glob('seed-*')))} seeds in {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
