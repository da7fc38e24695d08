"""The persisted offset index ($XDG_CACHE_HOME/zarrfs/*.idx) against stores
rewritten, copied and moved behind its back.

A wrong size from a stale index is worse than no index: every mount here
must show exactly zarr-python's values (tests/oracle/oracle.py).

- Chunks rewritten with the same byte size and their mtimes restored (what
  tar -x, cp -p or rsync -a of another version leave): the index is keyed on
  each chunk's device, inode, ctime, size and mtime, so it is not reused.
- An index whose last block does not match the chunks holding it (made here
  by editing the index file, keeping it well formed): detected when loaded,
  logged, recomputed.
- A copy (cp -a: new inodes) gets an index of its own; a store moved within
  its file system (mv) keeps its index, which is still exact.
"""

from __future__ import annotations

import os
import struct
import subprocess
import warnings

import numpy as np
import pytest
import zarr

import oracle

warnings.filterwarnings("ignore")

HEADER = struct.Struct("<8sQQQ")  # magic, fingerprint (2 x 64 bits), entries per view


@pytest.fixture(autouse=True)
def index_dir(tmp_path, monkeypatch):
    """A private index cache for each test (the daemon inherits the environment)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "zarrfs"


def values(n: int, seed: int) -> np.ndarray:
    """durations of very different text lengths (seconds to years) and NaT"""
    rng = np.random.default_rng(seed)
    v = rng.integers(0, 10, n) * 10 ** rng.integers(0, 9, n) + rng.integers(0, 7, n)
    v[rng.integers(0, n, n // 50)] = np.iinfo(np.int64).min
    return v.astype("i8").view("m8[s]")


ARRAYS = {"a": ((5000,), (1000,)), "b": ((2000, 7), (500, 4))}


def write(store, seed: int) -> None:
    """the arrays of ARRAYS, uncompressed (a chunk's byte size never depends on its values)"""
    for name, (shape, chunks) in ARRAYS.items():
        if (store / name).exists():
            a = zarr.open_array(store=str(store), path=name, mode="r+")
        else:
            a = zarr.create_array(store=str(store), name=name, shape=shape, chunks=chunks,
                                  dtype="m8[s]", compressors=None, zarr_format=3,
                                  fill_value=np.timedelta64("NaT", "s"))
        a[...] = values(int(np.prod(shape)), seed + len(name)).reshape(shape)


def expected(store) -> dict[str, bytes]:
    out = {}
    for name in ARRAYS:
        vals, unit, scale, dims = oracle.read_array(str(store), name)
        out[f"{name}.txt"] = oracle.expected_txt(vals, unit, scale)
        out[f"{name}.csv"] = oracle.expected_csv(vals, name, dims, unit, scale)
    return out


def check(m, want: dict[str, bytes]) -> None:
    for f, data in want.items():
        assert m.stat(f).st_size == len(data), f
        assert m.read(f) == data, f


def mount_and_check(zf_mount, store, want) -> None:
    """mount, size and read every view (the index is saved), unmount"""
    m = zf_mount(store)
    check(m, want)
    assert not m.stop(), m.log()


def chunk_files(store) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(store) for f in fs if f != "zarr.json")


def index_files(index_dir) -> dict[str, int]:
    """index file name -> inode (a rewritten file gets a new inode: saved by rename)"""
    return {p.name: p.stat().st_ino for p in index_dir.glob("*.idx")}


def test_rewritten_chunks_same_size_and_mtime(tmp_path, zf_mount, index_dir):
    store = tmp_path / "s.zarr"
    write(store, 1)
    old = expected(store)
    mount_and_check(zf_mount, store, old)
    assert index_files(index_dir), "no index was saved"
    stats = {p: os.stat(p) for p in chunk_files(store)}
    write(store, 100)  # other values, same byte sizes
    for p, st in stats.items():
        assert os.path.getsize(p) == st.st_size, p
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert os.stat(p).st_mtime_ns == st.st_mtime_ns
    new = expected(store)
    assert all(len(new[f]) != len(old[f]) for f in new), "the rewrite must change the text sizes"
    m = zf_mount(store)
    check(m, new)


def test_stale_last_block_is_detected_and_recomputed(tmp_path, zf_mount, index_dir):
    store = tmp_path / "s.zarr"
    write(store, 2)
    want = expected(store)
    mount_and_check(zf_mount, store, want)
    names = index_files(index_dir)
    assert len(names) == len(ARRAYS)
    for name in names:  # end every view one byte early: still a well-formed index
        p = index_dir / name
        raw = bytearray(p.read_bytes())
        magic, fa, fb, n = HEADER.unpack_from(raw)
        for view in range(2):
            at = HEADER.size + (view * n + n - 1) * 8
            (last,) = struct.unpack_from("<Q", raw, at)
            struct.pack_into("<Q", raw, at, last - 1)
        p.write_bytes(bytes(raw))
    m = zf_mount(store)
    check(m, want)
    assert m.log().count("persisted offset index does not match the last chunks") == len(ARRAYS), m.log()


def test_copy_gets_its_own_index(tmp_path, zf_mount, index_dir):
    store, copy = tmp_path / "s.zarr", tmp_path / "copy.zarr"
    write(store, 3)
    want = expected(store)
    mount_and_check(zf_mount, store, want)
    before = index_files(index_dir)
    subprocess.run(["cp", "-a", str(store), str(copy)], check=True, timeout=60)
    m = zf_mount(copy)
    check(m, want)
    assert not m.stop(), m.log()
    after = index_files(index_dir)
    # new inodes and ctimes: another fingerprint, so an index of its own
    assert len(after) == 2 * len(before) and all(after[k] == v for k, v in before.items())


def test_moved_store_keeps_its_index(tmp_path, zf_mount, index_dir):
    store, moved = tmp_path / "s.zarr", tmp_path / "elsewhere" / "t.zarr"
    write(store, 4)
    want = expected(store)
    mount_and_check(zf_mount, store, want)
    before = index_files(index_dir)
    moved.parent.mkdir()
    os.rename(store, moved)
    m = zf_mount(moved)
    check(m, want)
    assert not m.stop(), m.log()
    # the same files (device, inode, ctime, size, mtime): the same index, reused as is
    assert index_files(index_dir) == before
