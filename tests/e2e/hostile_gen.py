"""hostile_gen.py - healthy stores written by zarr-python, for tests/e2e/hostile.bats
to damage (FIFOs, sockets, devices, symlink loops) and for the index-cache tests.

    python hostile_gen.py plain DIR [--v2] [--consolidated]
        DIR holds arrays "bad" (30 values, 3 chunks of 10, no compression) and
        "ok" (20 values); expected text of both in DIR.expected/{bad,ok}.txt.
    python hostile_gen.py rewrite DIR NAME SEED
        rewrite every chunk of DIR/NAME in place with other values of the same
        byte size (different text lengths), keeping each chunk's mtime; the
        new expected text in DIR.expected/NAME.txt.
    python hostile_gen.py chunks DIR NAME
        print the chunk files of DIR/NAME, one per line.
    python hostile_gen.py longlabels DIR
        DIR holds "v", timedelta64[s] of shape (2^12, 2^44) with no chunk
        stored (all NaT), dimensions s and t, and "s", its coordinate of 2^12
        strings of 256 characters: its labelled .csv would be over 2^64
        bytes, from a store of a few KB.

Values come from numpy's seeded generator; expected text from tests/oracle
(oracle.py, pure Python, independent of zarrfs) via zarr-python reads.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import zarr

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
import oracle  # noqa: E402

warnings.filterwarnings("ignore")
UNIT = "s"


def values(n: int, seed: int) -> np.ndarray:
    """n durations of very different text lengths (seconds to years), a NaT."""
    rng = np.random.default_rng(seed)
    mags = 10 ** rng.integers(0, 9, n)
    v = rng.integers(0, 10, n) * mags + rng.integers(0, 7, n)
    v[n // 2] = np.iinfo(np.int64).min
    return v.astype("i8").view(f"m8[{UNIT}]")


def expected(store: str, name: str) -> bytes:
    vals, unit, scale, _ = oracle.read_array(store, name)
    return oracle.expected_txt(vals, unit, scale)


def write_expected(store: str, name: str) -> None:
    d = store.rstrip("/") + ".expected"
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"{name}.txt"), "wb") as f:
        f.write(expected(store, name))


def plain(store: str, v2: bool, consolidated: bool) -> None:
    fmt = 2 if v2 else 3
    zarr.open_group(store=store, mode="w", zarr_format=fmt)
    for name, n, seed in (("bad", 30, 1), ("ok", 20, 2)):
        kw = {} if v2 else {"serializer": "auto", "filters": None}
        a = zarr.create_array(store=store, name=name, shape=(n,), chunks=(10,),
                              dtype=f"m8[{UNIT}]", compressors=None, zarr_format=fmt,
                              fill_value=None if v2 else np.timedelta64("NaT", UNIT), **kw)
        a[:] = values(n, seed)
        write_expected(store, name)
    if consolidated:
        zarr.consolidate_metadata(store)


def chunk_files(store: str, name: str) -> list[str]:
    out = []
    for dirpath, _, files in os.walk(os.path.join(store, name)):
        out += [os.path.join(dirpath, f) for f in files
                if f not in ("zarr.json", ".zarray", ".zattrs")]
    return sorted(out)


def rewrite(store: str, name: str, seed: int) -> None:
    a = zarr.open_array(store=store, path=name, mode="r")
    n = a.shape[0]
    old = {p: os.stat(p) for p in chunk_files(store, name)}
    sizes = {p: st.st_size for p, st in old.items()}
    new = values(n, seed)
    w = zarr.open_array(store=store, path=name, mode="r+")
    w[:] = new
    for p, st in old.items():  # same byte size (no compression), the old mtime back
        assert os.path.getsize(p) == sizes[p], p
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    write_expected(store, name)


def longlabels(store: str) -> None:
    g = zarr.open_group(store=store, mode="w", zarr_format=3)
    n = 2**12
    s = g.create_array("s", shape=(n,), chunks=(n,), dtype=str, dimension_names=["s"])
    s[:] = np.array(["x" * 250 + "%06d" % i for i in range(n)])
    g.create_array("v", shape=(n, 2**44), chunks=(1, 2**28), dtype="m8[s]",
                   fill_value=np.timedelta64("NaT", "s"), dimension_names=["s", "t"])


def main(argv: list[str]) -> int:
    cmd, store = argv[0], argv[1]
    if cmd == "plain":
        plain(store, "--v2" in argv, "--consolidated" in argv)
    elif cmd == "rewrite":
        rewrite(store, argv[2], int(argv[3]))
    elif cmd == "longlabels":
        longlabels(store)
    elif cmd == "chunks":
        print("\n".join(chunk_files(store, argv[2])))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
