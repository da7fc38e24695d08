#!/usr/bin/env python3
"""check_mount.py MNT EXPECTED_JSON LABEL [NAME...] - a mount of an Icechunk
state shows what expected.json says: only those files, each .txt and .csv
byte for byte (st_size, whole file, 12 random preads); with NAMEs, only those
arrays' files are read (and the listing is not compared).  Exit status 0,
or 1 with the first difference on stderr (for the e2e suites)."""

import json
import os
import random
import sys


def main(argv):
    mnt, path, label, only = argv[1], argv[2], argv[3], argv[4:]
    case = next(c for c in json.load(open(path))["cases"] if c["label"] == label)
    want = {n + e for n in case["files"] for e in (".txt", ".csv", ".info")}
    got = set()
    for d, _, files in os.walk(mnt):
        got |= {os.path.normpath(os.path.join(os.path.relpath(d, mnt), f)) for f in files}
    if got != want and not only:
        sys.exit(f"files differ: {sorted(got ^ want)}")
    rng = random.Random(label)
    for name, texts in sorted(case["files"].items()):
        if only and name not in only:
            continue
        for ext in ("txt", "csv"):
            rel, data = f"{name}.{ext}", texts[ext].encode()
            p = os.path.join(mnt, rel)
            if os.stat(p).st_size != len(data):
                sys.exit(f"{rel}: st_size {os.stat(p).st_size}, want {len(data)}")
            with open(p, "rb") as f:
                if f.read() != data:
                    sys.exit(f"{rel}: bytes differ")
            fd = os.open(p, os.O_RDONLY)
            try:
                for _ in range(12):
                    off, n = rng.randrange(0, len(data) + 1), rng.randrange(1, 300)
                    if os.pread(fd, n, off) != data[off:off + n]:
                        sys.exit(f"{rel}: pread({off}, {n}) differs")
            finally:
                os.close(fd)
    info = open(os.path.join(mnt, sorted(case["files"])[0] + ".info")).read()
    if f"snapshot: {case['snapshot']}\n" not in info:
        sys.exit(f"the .info names another snapshot:\n{info}")
    print(f"{label}: {2 * len(case['files'])} files checked")


if __name__ == "__main__":
    main(sys.argv)
