"""The encoding matrix: every codec, compressor and layout a real store uses.

Stores are written by zarr-python (>= 3.1) in v3 and v2, with and without
consolidated metadata; every array is checked byte for byte (.txt, .csv,
st_size, random preads) against text built from the values zarr-python reads
back.  The last test checks the whole matrix (reusing the checks already
run) and prints its size and result; any test runs alone.
"""

from __future__ import annotations

import itertools
import os
import random
import warnings
import zlib

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec,
                         TransposeCodec, ZstdCodec)
import zarr.codecs.numcodecs as znc

import oracle

warnings.filterwarnings("ignore", category=UserWarning)
BLOSC_CNAMES = ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]
SHUFFLES = ["noshuffle", "shuffle", "bitshuffle"]


def values(rng, shape, unit="ns"):
    lim = {"ns": 10**15, "us": 10**12, "ms": 10**9, "s": 10**6}[unit]
    v = rng.integers(-lim, lim, size=shape).astype(f"m8[{unit}]")
    if v.size:
        v.flat[::13] = np.timedelta64("NaT")
    return v


def v3_cases():
    """name -> create_array keyword arguments (v3)."""
    c = {"v3_plain": dict(compressors=None), "v3_zstd": dict(compressors=[ZstdCodec(level=3)]),
         "v3_zstd_checksum": dict(compressors=[ZstdCodec(level=1, checksum=True)]),
         "v3_gzip": dict(compressors=[GzipCodec(level=5)]),
         "v3_crc32c": dict(compressors=[Crc32cCodec()]),
         "v3_zstd_crc32c": dict(compressors=[ZstdCodec(), Crc32cCodec()]),
         "v3_big_endian": dict(serializer=BytesCodec(endian="big"), compressors=[ZstdCodec()]),
         "v3_transpose": dict(filters=[TransposeCodec(order=(1, 0))]),
         "v3_transpose_big_gzip": dict(filters=[TransposeCodec(order=(1, 0))],
                                       serializer=BytesCodec(endian="big"),
                                       compressors=[GzipCodec()]),
         "v3_keys_dot": dict(chunk_key_encoding={"name": "default", "separator": "."}),
         "v3_keys_v2_dot": dict(chunk_key_encoding={"name": "v2", "separator": "."}),
         "v3_keys_v2_slash": dict(chunk_key_encoding={"name": "v2", "separator": "/"}),
         "v3_shard_end": dict(shards=(16, 10)),
         "v3_shard_start": dict(serializer=ShardingCodec(chunk_shape=(8, 5), index_location="start"),
                                compressors=None),
         "v3_shard_noindexcrc": dict(serializer=ShardingCodec(chunk_shape=(8, 5),
                                                              index_codecs=[BytesCodec()]),
                                     compressors=None),
         "v3_shard_inner_gzip": dict(serializer=ShardingCodec(chunk_shape=(8, 5),
                                                              codecs=[BytesCodec(), GzipCodec()]),
                                     compressors=None),
         "v3_shard_nested": dict(serializer=ShardingCodec(chunk_shape=(8, 5), codecs=[
             ShardingCodec(chunk_shape=(4, 5))]), compressors=None),
         "v3_shard_outer_zstd": dict(serializer=ShardingCodec(chunk_shape=(8, 5)),
                                     compressors=[ZstdCodec()]),
         # the sharding codec sees the transposed (10, 16) shard
         "v3_transpose_shard": dict(filters=[TransposeCodec(order=(1, 0))],
                                    serializer=ShardingCodec(chunk_shape=(2, 2)), compressors=None),
         "v3_numcodecs_delta_lzma": dict(filters=[znc.Delta(dtype="<i8")],
                                         compressors=[znc.Shuffle(), znc.LZMA(), znc.Adler32()]),
         "v3_numcodecs_checksums": dict(compressors=[znc.CRC32(location="end"), znc.Fletcher32()]),
         }
    for cname, shuffle in itertools.product(BLOSC_CNAMES, SHUFFLES):
        c[f"v3_blosc_{cname}_{shuffle}"] = dict(
            compressors=[BloscCodec(cname=cname, shuffle=shuffle, typesize=8)])
    return c


def v2_cases():
    c = {"v2_none": dict(compressors=None), "v2_zstd": dict(compressors=numcodecs.Zstd(level=2)),
         "v2_zlib": dict(compressors=numcodecs.Zlib(level=4)),
         "v2_gzip": dict(compressors=numcodecs.GZip(level=4)),
         "v2_bz2": dict(compressors=numcodecs.BZ2(level=5)),
         "v2_lz4": dict(compressors=numcodecs.LZ4()),
         "v2_order_f": dict(order="F", compressors=numcodecs.Zstd()),
         "v2_order_f_none": dict(order="F", compressors=None),
         "v2_sep_slash": dict(chunk_key_encoding={"name": "v2", "separator": "/"}),
         "v2_big_endian": dict(dtype=">m8[ns]"),
         "v2_delta_lzma": dict(filters=[numcodecs.Delta(dtype="<i8")], compressors=numcodecs.LZMA()),
         "v2_shuffle_fletcher32": dict(filters=[numcodecs.Shuffle(elementsize=8)],
                                       compressors=numcodecs.Fletcher32()),
         "v2_crc32_adler32": dict(filters=[numcodecs.CRC32()],
                                  compressors=numcodecs.Adler32(location="end")),
         }
    for cname, shuffle in itertools.product(BLOSC_CNAMES, [0, 1, 2]):
        c[f"v2_blosc_{cname}_{shuffle}"] = dict(compressors=numcodecs.Blosc(cname=cname, shuffle=shuffle))
    return c


SHAPE, CHUNKS = (37, 23), (16, 10)


def write_store(path, fmt, cases, consolidated, seed):
    rng = np.random.default_rng(seed)
    g = zarr.open_group(str(path), mode="w", zarr_format=fmt)
    out = {}
    for i, (name, kw) in enumerate(sorted(cases.items())):
        kw = dict(kw)
        dtype = kw.pop("dtype", "m8[ns]")
        chunks = (8, 5) if "shards" in kw else CHUNKS  # shards=: chunks are the inner chunks
        a = g.create_array(name, shape=SHAPE, chunks=chunks, dtype=dtype,
                           fill_value=np.timedelta64("NaT", "ns") if i % 2 else np.timedelta64(3, "ns"),
                           dimension_names=["row", "col"] if fmt == 3 else None, **kw)
        if fmt == 2:
            a.attrs["_ARRAY_DIMENSIONS"] = ["row", "col"]
        v = values(rng, SHAPE)
        if i % 3 == 0:
            a[:20] = v[:20]  # the rest stays missing: fill value
        else:
            a[...] = v
        out[name] = a
    if consolidated:
        zarr.consolidate_metadata(str(path))
    return out


STORES = {"v3": (3, v3_cases, False), "v3c": (3, v3_cases, True),
          "v2": (2, v2_cases, False), "v2c": (2, v2_cases, True)}
CASES = [(store, name) for store, (_, cases, _) in STORES.items() for name in sorted(cases())]


def first_difference(got: bytes, exp: bytes) -> int:
    """Offset of the first byte where got and exp differ."""
    return next((i for i, (g, e) in enumerate(zip(got, exp)) if g != e), min(len(got), len(exp)))


def check_array(m, key: str, name: str, vals) -> str:
    """'' if the array's .txt and .csv (st_size, whole read, random preads) are
    exactly the oracle text of vals, else the first difference found."""
    txt = oracle.expected_txt(vals)
    csv = oracle.expected_csv(vals, name, ["row", "col"])
    for fname, exp in ((f"{name}.txt", txt), (f"{name}.csv", csv)):
        try:
            size = m.stat(fname).st_size
            if size != len(exp):
                return f"{key}: {fname}: st_size {size}, expected {len(exp)}"
            got = m.read(fname)
            if got != exp:
                return f"{key}: {fname}: read differs from byte {first_difference(got, exp)}"
            rnd = random.Random(zlib.crc32(key.encode()))
            ranges = [(rnd.randrange(0, len(exp) + 3), rnd.randrange(1, 700)) for _ in range(40)]
            for (off, n), got in zip(ranges, m.preads(fname, ranges)):
                if got != exp[off:off + n]:
                    return f"{key}: {fname}: pread of {n} bytes at {off} differs"
        except OSError as e:
            return f"{key}: {fname}: {e}"
    return ""


class Matrix:
    """The matrix stores, each written and mounted when a test first needs it,
    and each array's check, run once: every test gets what it needs whatever
    ran before it (pytest -k selects any subset)."""

    def __init__(self, tmp_path_factory, mounter):
        self.tmp, self.mounter = tmp_path_factory, mounter
        self.stores: dict[str, tuple] = {}
        self.problems: dict[str, str] = {}

    def store(self, store: str):
        """(Mount, {name: zarr array}) of one store."""
        if store not in self.stores:
            fmt, cases, consolidated = STORES[store]
            path = self.tmp.mktemp(store) / f"{store}.zarr"
            arrays = write_store(path, fmt, cases(), consolidated, seed=100 + list(STORES).index(store))
            self.stores[store] = (self.mounter(path), arrays)
        return self.stores[store]

    def check(self, store: str, name: str) -> str:
        """check_array of one array ('' if exact), run once per module."""
        key = f"{store}/{name}"
        if key not in self.problems:
            m, arrays = self.store(store)
            self.problems[key] = check_array(m, key, name, arrays[name][...])
        return self.problems[key]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory, zf_mounter_module):
    os.environ.setdefault("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg")))
    return Matrix(tmp_path_factory, zf_mounter_module)


@pytest.mark.parametrize("store,name", CASES)
def test_matrix(matrix, store, name):
    problem = matrix.check(store, name)
    assert not problem, problem


def test_matrix_summary(matrix):
    """Every array of the matrix checked (the ones test_matrix has checked are
    not checked again); prints the matrix size and result."""
    problems = [matrix.check(store, name) for store, name in CASES]
    failed = [p for p in problems if p]
    line = (f"encoding matrix: {len(CASES)} arrays, {len(problems)} run, "
            f"{len(problems) - len(failed)} exact, {len(failed)} failed")
    print("\n" + line)
    if os.environ.get("ZF_TEST_TMP"):  # scripts/test prints it in its summary
        with open(os.path.join(os.environ["ZF_TEST_TMP"], "matrix.txt"), "w") as f:
            f.write(line + "\n")
    assert not failed, "\n".join(failed[:20])
