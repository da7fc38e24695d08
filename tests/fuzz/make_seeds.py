#!/usr/bin/env python3
"""Regenerate the seed corpora of the fuzz targets (tests/fuzz/corpus/).

    python tests/fuzz/make_seeds.py        (needs numpy, numcodecs; reads the
                                           zarr-python fixtures in
                                           tests/data/zarr-python-3.1)

    python tests/fuzz/make_seeds.py idx    (only the corpora named: meta,
                                           pipeline, layout, idx)

Writes corpus/fuzz_meta, corpus/fuzz_pipeline, corpus/fuzz_layout,
corpus/fuzz_idx (and fuzz_meta.dict).  Files named
crash-* (regression inputs for fixed bugs) are kept; every other file in those
directories is replaced.  The output is deterministic.
"""
from __future__ import annotations

import json
import os
import shutil
import struct
import sys

import numcodecs
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(REPO, "tests", "data", "zarr-python-3.1")
CORPUS = os.path.join(HERE, "corpus")
NAT = -(2**63)


def reset(target: str) -> str:
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if not f.startswith("crash-"):
            os.remove(os.path.join(d, f))
    return d


def put(d: str, name: str, data: bytes | str) -> None:
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF


def zstd_rle_frame(total: int, content_size: int | None = None, byte: int = 0) -> bytes:
    """A zstd frame of RLE blocks (128 KiB each) decoding to `total` bytes of
    `byte`, with or without a frame content size in its header."""
    out = bytearray(struct.pack("<I", 0xFD2FB528))
    if content_size is None:
        out += bytes([0x00, (7 << 3)])  # no FCS, not single segment; window 2^17
    else:
        out += bytes([0xC0, (7 << 3)]) + struct.pack("<Q", content_size)  # 8-byte FCS
    left = total
    while True:
        n = min(left, 1 << 17)
        left -= n
        last = 1 if left == 0 else 0
        hdr = last | (1 << 1) | (n << 3)  # block type 1 = RLE
        out += struct.pack("<I", hdr)[:3] + bytes([byte])
        if last:
            return bytes(out)


# ----------------------------------------------------------------------------
# fuzz_meta


def v3_array(**over):
    m = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [11],
        "data_type": {"name": "numpy.timedelta64", "configuration": {"unit": "ns", "scale_factor": 1}},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": NAT,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
        "attributes": {},
    }
    for k, v in over.items():
        if v is None:
            m.pop(k, None)
        else:
            m[k] = v
    return json.dumps(m)


def v2_array(**over):
    m = {
        "zarr_format": 2,
        "shape": [11],
        "chunks": [5],
        "dtype": "<m8[ns]",
        "order": "C",
        "compressor": {"id": "zstd", "level": 1, "checksum": False},
        "filters": None,
        "fill_value": None,
        "dimension_separator": ".",
    }
    for k, v in over.items():
        if v is None:
            m.pop(k, None)
        else:
            m[k] = v
    return json.dumps(m)


def td(unit, scale=1):
    return {"name": "numpy.timedelta64", "configuration": {"unit": unit, "scale_factor": scale}}


def meta_seeds():
    stores = sorted(s for s in os.listdir(FIXTURES) if os.path.isfile(os.path.join(FIXTURES, s, "zarr.json")))
    if len(stores) != 6:
        sys.exit(f"make_seeds.py: {FIXTURES} holds {len(stores)} stores, not the six zarr-python 3.1 fixtures")
    d = reset("fuzz_meta")
    for store in stores:
        name = store.replace("[", "_").replace("]", "").replace(".zarr", "")
        shutil.copy(os.path.join(FIXTURES, store, "zarr.json"), os.path.join(d, f"fixture-{name}.json"))
    put(d, "v3-group.json", json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {"a": [1, 2]}}))
    put(d, "v3-cf-f16-nonfinite.json",  # bare NaN / Infinity attributes, as zarr-python writes them
        v3_array(data_type="float16", fill_value="NaN",
                 attributes={"units": "hours", "dtype": "timedelta64[s]", "valid_max": float("nan"),
                             "missing_value": [float("-inf"), float("inf")]}))
    put(d, "v3-2d-dims.json", v3_array(shape=[7, 5], chunk_grid={"name": "regular", "configuration": {"chunk_shape": [3, 2]}},
                                       dimension_names=["x", None], data_type=td("ms", 10)))
    put(d, "v3-0d.json", v3_array(shape=[], chunk_grid={"name": "regular", "configuration": {"chunk_shape": []}},
                                  fill_value="NaT", codecs=[{"name": "bytes", "configuration": {"endian": "big"}}]))
    put(d, "v3-transpose.json", v3_array(
        shape=[4, 6, 8], chunk_grid={"name": "regular", "configuration": {"chunk_shape": [2, 3, 4]}},
        codecs=[{"name": "transpose", "configuration": {"order": [2, 0, 1]}},
                {"name": "bytes", "configuration": {"endian": "big"}},
                {"name": "gzip", "configuration": {"level": 5}},
                {"name": "crc32c"}]))
    put(d, "v3-blosc-v2key.json", v3_array(
        chunk_key_encoding={"name": "v2", "configuration": {"separator": "."}},
        codecs=[{"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle",
                                                    "typesize": 8, "blocksize": 0}}]))
    put(d, "v3-numcodecs.json", v3_array(
        data_type=td("us", 7), fill_value=0,
        codecs=[{"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "numcodecs.lz4", "configuration": {"acceleration": 1}},
                {"name": "numcodecs.bz2", "configuration": {"level": 9}}]))
    put(d, "v3-generic.json", v3_array(data_type=td("generic"), fill_value=9223372036854775807))
    put(d, "v3-mu.json", v3_array(data_type=td("\u03bcs", 2147483647)))
    put(d, "v3-extension.json", v3_array(extra_field={"must_understand": False, "x": 1},
                                         storage_transformers=[]))
    put(d, "v3-other-dtype.json", v3_array(data_type="int64", fill_value=0))
    put(d, "v3-datetime.json", v3_array(data_type={"name": "numpy.datetime64",
                                                   "configuration": {"unit": "s", "scale_factor": 1}}))
    put(d, "v3-unknown-codec.json", v3_array(codecs=[{"name": "bytes", "configuration": {"endian": "little"}},
                                                     {"name": "lzma", "must_understand": True}]))
    put(d, "v3-bad-fill.json", v3_array(fill_value=1.5))
    put(d, "v3-big-fill.json", v3_array(fill_value=9223372036854775808))
    put(d, "v3-nat-lower.json", v3_array(fill_value="nat"))
    put(d, "v3-neg-shape.json", v3_array(shape=[-1]))
    put(d, "v3-overflow.json", v3_array(shape=[2**40, 2**40, 2**40],
                                        chunk_grid={"name": "regular", "configuration": {"chunk_shape": [1, 1, 1]}}))
    put(d, "v3-zero-chunk.json", v3_array(chunk_grid={"name": "regular", "configuration": {"chunk_shape": [0]}}))
    put(d, "v3-rank.json", v3_array(chunk_grid={"name": "regular", "configuration": {"chunk_shape": [5, 5]}},
                                    dimension_names=["a", "b"]))
    put(d, "v3-scale0.json", v3_array(data_type=td("ns", 0)))
    put(d, "v3-extra-config.json", v3_array(data_type={"name": "numpy.timedelta64",
                                                       "configuration": {"unit": "ns", "scale_factor": 1, "x": 0}}))
    put(d, "v3-no-codecs.json", v3_array(codecs=None))
    put(d, "v3-32d.json", v3_array(shape=[1] * 32, chunk_grid={"name": "regular", "configuration": {"chunk_shape": [1] * 32}},
                                   dimension_names=[f"d{i}" for i in range(32)]))
    put(d, "v3-nested-attrs.json", v3_array().replace('"attributes": {}', '"attributes": {"x": ' + "[" * 900 + "]" * 900 + "}"))
    put(d, "v3-escaped-key.json", v3_array().replace('"fill_value"', '"fill\\u005fvalue"'))
    # CF-encoded durations (zarr/cf.h): integer and float arrays with attributes
    cf = {"units": "seconds", "dtype": "timedelta64[s]"}
    put(d, "v3-cf-int64.json", v3_array(data_type="int64", fill_value=0, attributes=cf))
    put(d, "v3-cf-float-nan.json", v3_array(data_type="float64", fill_value="NaN", attributes={
        "units": "seconds", "dtype": "timedelta64[ns]", "_FillValue": "AAAAAAAA+H8="}))
    put(d, "v3-cf-float32-hex.json", v3_array(data_type="float32", fill_value="0x7fc00000",
                                              codecs=[{"name": "bytes", "configuration": {"endian": "big"}}],
                                              attributes={"units": "hours"}))
    put(d, "v3-cf-packed.json", v3_array(data_type="int16", fill_value=-1, attributes={
        "units": "hours", "scale_factor": 0.1, "add_offset": 1.5, "_FillValue": -1,
        "missing_value": [-2, 3.5, None]}))
    put(d, "v3-cf-int-scale.json", v3_array(data_type="uint8", fill_value=255, attributes={
        "units": "d", "scale_factor": 3}))
    put(d, "v3-cf-bad-scale.json", v3_array(data_type="int32", fill_value=0, attributes={
        "units": "ms", "scale_factor": "x"}))
    put(d, "v3-cf-bad-b64.json", v3_array(data_type="float64", fill_value=0.5, attributes={
        "units": "minutes", "_FillValue": "AAAA"}))
    put(d, "v3-cf-bad-dtype.json", v3_array(data_type="int64", fill_value=0, attributes={
        "units": "seconds", "dtype": "timedelta64[Y]"}))
    put(d, "v3-cf-units-type.json", v3_array(data_type="int64", fill_value=0, attributes={"units": 5}))
    put(d, "v3-cf-since.json", v3_array(data_type="int64", fill_value=0, attributes={
        "units": "hours since 2000-01-01"}))
    # time stamps: native datetime64 and CF "UNIT since DATE"
    dt = lambda unit, scale=1: {"name": "numpy.datetime64",
                                "configuration": {"unit": unit, "scale_factor": scale}}
    put(d, "v3-datetime-10s.json", v3_array(data_type=dt("s", 10), fill_value="NaT"))
    put(d, "v3-datetime-Y-int-fill.json", v3_array(data_type=dt("Y"), fill_value=-5))
    put(d, "v3-datetime-as-max.json", v3_array(data_type=dt("as", 2147483647),
                                               fill_value=9223372036854775807))
    put(d, "v3-datetime-generic.json", v3_array(data_type=dt("generic"), fill_value=NAT))
    put(d, "v3-datetime-extra.json", v3_array(data_type={"name": "numpy.datetime64", "configuration": {
        "unit": "s", "scale_factor": 1, "tz": "UTC"}}))
    put(d, "v3-cf-since-tz.json", v3_array(data_type="int32", fill_value=0, attributes={
        "units": "hours since 2000-01-01T06:00:00.5+01:30", "calendar": "proleptic_gregorian"}))
    put(d, "v3-cf-since-float.json", v3_array(data_type="float64", fill_value="NaN", attributes={
        "units": "Days since 1970-1-1 00:00:00 UTC", "_FillValue": "AAAAAAAA+H8="}))
    put(d, "v3-cf-since-packed.json", v3_array(data_type="int16", fill_value=-1, attributes={
        "units": "seconds since 2262-04-11 23:47:16.854775807", "scale_factor": 0.5,
        "add_offset": 1e18, "_FillValue": -1, "calendar": "standard"}))
    put(d, "v3-cf-since-noleap.json", v3_array(data_type="int64", fill_value=0, attributes={
        "units": "days since 2000-01-01", "calendar": "noleap"}))
    put(d, "v3-cf-since-early.json", v3_array(data_type="int64", fill_value=0, attributes={
        "units": "days since 1677-09-21 00:12:43.145224192"}))
    put(d, "v3-cf-since-bad-date.json", v3_array(data_type="uint64", fill_value=0, attributes={
        "units": "days since 2000-02-30T25:61", "calendar": 1}))
    put(d, "v3-cf-huge-fill.json", v3_array(data_type="uint64", fill_value=18446744073709551615,
                                            attributes={"units": "days", "_FillValue": 1e300}))
    # v2: .zarray NUL .zattrs
    z = b"\0"
    put(d, "v2-basic", v2_array().encode() + z + json.dumps({"_ARRAY_DIMENSIONS": ["time"]}).encode())
    put(d, "v2-big-F", v2_array(shape=[5, 5], chunks=[2, 3], dtype=">m8[10us]", order="F", compressor=None,
                                dimension_separator="/", fill_value=-5).encode()
        + z + json.dumps({"_ARRAY_DIMENSIONS": ["a", None]}).encode())
    put(d, "v2-generic", v2_array(dtype="<m8", fill_value="NaT").encode())
    for cid, comp in [("blosc", {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
                      ("zlib", {"id": "zlib", "level": 1}), ("gzip", {"id": "gzip", "level": 1}),
                      ("bz2", {"id": "bz2", "level": 9}), ("lz4", {"id": "lz4", "acceleration": 1})]:
        put(d, f"v2-{cid}", v2_array(compressor=comp).encode() + z + b"{}")
    put(d, "v2-filters", v2_array(filters=[{"id": "delta", "dtype": "<i8"}]).encode())
    put(d, "v2-int", v2_array(dtype="<i8", fill_value=0).encode())
    put(d, "v2-bad-dtype", v2_array(dtype="|m8[ns]").encode())
    put(d, "v2-bad-unit", v2_array(dtype="<m8[3fortnights]").encode())
    put(d, "v2-bad-attrs", v2_array().encode() + z + b"[1,2")
    put(d, "v2-scale", v2_array(dtype="<m8[2147483647as]").encode())
    put(d, "v2-cf-int", v2_array(dtype="<i8", fill_value=0).encode() + z + json.dumps(
        {"units": "hours", "_ARRAY_DIMENSIONS": ["lead"]}).encode())
    put(d, "v2-cf-packed-be", v2_array(dtype=">i2", fill_value=-32768).encode() + z + json.dumps(
        {"units": "seconds", "scale_factor": 0.5, "add_offset": -3, "dtype": "timedelta64[ms]"}).encode())
    put(d, "v2-cf-float-null", v2_array(dtype="<f4", fill_value=None).encode() + z + json.dumps(
        {"units": "minutes", "_FillValue": 7, "missing_value": "NaN"}).encode())
    put(d, "v2-cf-u1", v2_array(dtype="|u1", fill_value=None).encode() + z + json.dumps(
        {"units": "ns"}).encode())
    put(d, "v2-datetime-ns", v2_array(dtype="<M8[ns]", fill_value=NAT).encode())
    put(d, "v2-datetime-10s-be", v2_array(dtype=">M8[10s]", fill_value=5).encode() + z + json.dumps(
        {"_ARRAY_DIMENSIONS": ["time"]}).encode())
    put(d, "v2-datetime-generic", v2_array(dtype="<M8", fill_value="NaT").encode())
    put(d, "v2-cf-since", v2_array(dtype="<f8", fill_value="NaN").encode() + z + json.dumps(
        {"units": "minutes since 1999-12-31 23:00:00 -05", "calendar": "gregorian"}).encode())
    put(d, "garbage", b"{\"zarr_format\": 3, \"node_type\": \"arr")


# ----------------------------------------------------------------------------
# fuzz_pipeline (shapes and codecs as in fuzz_pipeline.c)


def values(n: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.integers(-(10**15), 10**15, size=n, dtype=np.int64)
    v[0] = NAT
    v[-1] = 0
    return v


def gzip(level: int, data: bytes) -> bytes:
    """numcodecs GZip, with the header's MTIME zeroed (deterministic output)."""
    z = bytearray(numcodecs.GZip(level=level).encode(data))
    z[4:8] = b"\0\0\0\0"
    return bytes(z)


def pipeline_seeds():
    d = reset("fuzz_pipeline")
    le = lambda a: np.ascontiguousarray(a).astype("<i8").tobytes()
    be = lambda a: np.ascontiguousarray(a).astype(">i8").tobytes()
    v12 = values(12)
    put(d, "v3-zstd", bytes(numcodecs.Zstd(level=0).encode(le(v12))))
    put(d, "v3-zstd-nosize", zstd_rle_frame(96, None, 7))
    put(d, "v3-zstd-two-frames", bytes(numcodecs.Zstd(level=1).encode(le(v12[:6])))
        + bytes(numcodecs.Zstd(level=1).encode(le(v12[6:]))))
    put(d, "v3-zstd-skippable", struct.pack("<II", 0x184D2A50, 4) + b"skip" + bytes(numcodecs.Zstd(level=1).encode(le(v12))))
    put(d, "v3-zstd-bomb", zstd_rle_frame(1 << 22, None))
    put(d, "v3-zstd-bomb-fcs", zstd_rle_frame(1 << 20, 1 << 20))
    # found by fuzz_pipeline: a window over 2^31 (refused by streaming decoders)
    put(d, "v3-zstd-huge-window", bytes.fromhex("28b52ffd00af03030007"))
    put(d, "v3-gzip", gzip(5, le(v12)))
    put(d, "v3-gzip-2members", gzip(1, le(v12[:4])) + gzip(1, le(v12[4:])))
    put(d, "v3-blosc", bytes(numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1).encode(le(v12))))
    raw = le(v12)
    put(d, "v3-crc32c", raw + struct.pack("<I", crc32c(raw)))
    a = values(24, 2).reshape(2, 3, 4)
    put(d, "v3-transpose-big", be(a.transpose(2, 0, 1)))
    put(d, "v3-bytes", le(values(13, 3)))
    z = bytes(numcodecs.Zstd(level=3, checksum=True).encode(be(values(6, 4))))
    put(d, "v3-big-zstd-crc", z + struct.pack("<I", crc32c(z)))
    put(d, "v2-lz4", bytes(numcodecs.LZ4(acceleration=1).encode(le(values(10, 5)))))
    put(d, "v2-bz2-F", bytes(numcodecs.BZ2(level=9).encode(le(values(9, 6).reshape(3, 3).T))))
    put(d, "v2-zlib-big", bytes(numcodecs.Zlib(level=1).encode(be(values(7, 7)))))
    put(d, "v2-gzip", gzip(1, le(values(7, 8))))
    put(d, "v2-blosc", bytes(numcodecs.Blosc(cname="zstd", clevel=3, shuffle=2).encode(le(values(12, 9)))))
    put(d, "v2-F-raw", le(values(24, 10).reshape(3, 4, 2).T))
    put(d, "empty", b"")
    # numcodecs filters and checksums, transpose before sharding
    f8 = 1000 + np.arange(12) * 0.7
    fso = numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<i2").encode(f8)
    put(d, "v3-fso-shuffle-lzma-crc32", bytes(numcodecs.CRC32().encode(
        numcodecs.LZMA().encode(numcodecs.Shuffle(elementsize=2).encode(fso.tobytes())))))
    put(d, "v3-astype-fletcher32", bytes(numcodecs.Fletcher32().encode(
        (np.arange(9) * 3 - 5).astype("<f4").tobytes())))
    t = values(12, 11).reshape(3, 4).T  # the 4x3 shard the sharding codec sees
    inner = le(t[0:2]) + le(t[2:4])
    index = struct.pack("<4Q", 0, 48, 48, 48)
    put(d, "v3-transpose-shard", inner + index + struct.pack("<I", crc32c(index)))
    # the same with zstd inner chunks: the 6x4 shard of a transposed 4x6 chunk, 2x2 inner chunks
    t = values(24, 17).reshape(4, 6).T
    parts = [bytes(numcodecs.Zstd(level=1).encode(le(t[i:i + 2, j:j + 2])))
             for i in (0, 2, 4) for j in (0, 2)]
    offs = np.cumsum([0] + [len(p) for p in parts])
    index = b"".join(struct.pack("<QQ", int(offs[k]), len(parts[k])) for k in range(6))
    put(d, "v3-transpose-shard-zstd", b"".join(parts) + index + struct.pack("<I", crc32c(index)))
    # nested: two 2x4 shards of 1x2 zstd inner chunks (the transposed 4x4 chunk)
    t = values(16, 18).reshape(4, 4).T
    nested = []
    for r in (0, 1):
        parts = [bytes(numcodecs.Zstd(level=1).encode(le(t[2 * r + a, 2 * b:2 * b + 2])))
                 for a in (0, 1) for b in (0, 1)]
        offs = np.cumsum([0] + [len(p) for p in parts])
        nested.append(b"".join(parts) + b"".join(struct.pack("<QQ", int(offs[k]), len(parts[k]))
                                                 for k in range(4)))
    outer = struct.pack("<QQQQ", 0, len(nested[0]), len(nested[0]), len(nested[1]))
    put(d, "v3-transpose-nested-shard-zstd", nested[0] + nested[1] + outer)
    put(d, "v2-crc32", bytes(numcodecs.CRC32().encode(le(values(5, 12)))))
    put(d, "v2-adler32-end", bytes(numcodecs.Adler32(location="end").encode(le(values(5, 13)))))
    put(d, "v2-fletcher32", bytes(numcodecs.Fletcher32().encode(le(values(5, 14)))))
    put(d, "v2-delta", bytes(numcodecs.Delta(dtype="<i8").encode(values(11, 15)).tobytes()))
    put(d, "v2-shuffle", bytes(numcodecs.Shuffle(elementsize=8).encode(le(values(7, 16)))))
    small = np.asfortranarray(np.cumsum(np.arange(12) % 5).reshape(3, 4).astype(">i8"))
    dl = numcodecs.Delta(dtype=">i8", astype="<i2").encode(small)
    u1 = numcodecs.AsType(encode_dtype="|u1", decode_dtype="<i2").encode(dl)
    put(d, "v2-delta-astype-lzma-F", bytes(numcodecs.LZMA(format=1).encode(u1)))


# ----------------------------------------------------------------------------
# fuzz_layout: 24-byte header then the value stream (see fuzz_layout.c)


def layout_seed(fmt: int, nat_cache: int, unit: int, scale: int, fill: int, bad: int, vals) -> bytes:
    hdr = bytes([fmt, nat_cache, unit]) + struct.pack("<Q", scale) + struct.pack("<q", fill) + struct.pack("<Q", bad)
    assert len(hdr) == 27
    return hdr + np.asarray(vals, dtype="<i8").tobytes()


def layout_seeds():
    d = reset("fuzz_layout")
    # the fixture values (README of zarr-python-3.1) in ns
    fx = [31536000000000000, 1209600000000000, 259200000000000, 14400000000000, 300000000000,
          6000000000, 7000000000, 8000000000, 9000000000, 0, NAT]
    ext = [2**63 - 1, -(2**63) + 1, -1, 1, 999999999, -86400 * 10**9, 10**18]
    for fmt in range(5):
        put(d, f"fixture-values-f{fmt}", layout_seed(fmt, 0x20, 9, 0, NAT, 0, fx))
    put(d, "extremes-pandas", layout_seed(0, 0x21, 12, 2**31 - 2, 42, 0, ext))
    put(d, "extremes-iso-scaled", layout_seed(0x81, 0x13, 6, 2**31 - 2, -1, 0, ext + fx))
    put(d, "damaged-some", layout_seed(0, 0x20, 9, 0, 7, 0x0000_0000_0105_0402, fx * 4))
    put(d, "missing-all", layout_seed(2, 0x04, 3, 0, 5, 0xFFFF_FFFF_FFFF_0000, []))
    put(d, "years-months", layout_seed(2, 0x05, 0, 11, 3, 0, [12, -13, 0, NAT]))
    put(d, "seconds", layout_seed(3, 0x26, 10, 3, 2, 0x10, fx[::-1]))
    put(d, "raw-format", layout_seed(4, 0x22, 13, 1, 0, 0x2000_0001, ext))


def write_dicts():
    words = ["zarr_format", "node_type", "array", "group", "shape", "data_type", "numpy.timedelta64",
             "configuration", "unit", "scale_factor", "chunk_grid", "regular", "chunk_shape",
             "chunk_key_encoding", "default", "v2", "separator", "fill_value", "NaT", "codecs",
             "bytes", "endian", "little", "big", "zstd", "gzip", "blosc", "crc32c", "transpose",
             "order", "attributes", "dimension_names", "storage_transformers", "must_understand",
             "consolidated_metadata", "dtype", "<m8[ns]", ">m8[10us]", "<m8", "chunks", "compressor",
             "filters", "dimension_separator", "id", "zlib", "bz2", "lz4", "level", "checksum",
             "cname", "clevel", "shuffle", "bitshuffle", "noshuffle", "typesize", "blocksize",
             "acceleration", "_ARRAY_DIMENSIONS", "numcodecs.zstd", "numcodecs.blosc",
             "numcodecs.zlib", "numcodecs.gzip", "numcodecs.bz2", "numcodecs.lz4", "name",
             "generic", "\u03bcs", "ms", "us", "ns", "ps", "fs", "as", "Y", "M", "W", "D", "h", "m", "s",
             "units", "add_offset", "_FillValue", "missing_value", "_Unsigned", "timedelta64[ns]",
             "timedelta64[s]", "seconds", "hours", "days", "minutes", "milliseconds", "microseconds",
             "nanoseconds", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "<i2", ">i4", "|u1", "<f8", ">f4", "<f2", "AAAAAAAA+H8=", "NaN",
             "Infinity", "-Infinity", "0x7fc00000", "numpy.datetime64", "<M8[ns]", ">M8[10s]",
             "calendar", "standard", "gregorian", "proleptic_gregorian", "noleap",
             "hours since 2000-01-01", "days since 1970-01-01T00:00:00Z", " since "]
    lits = ["-9223372036854775808", "9223372036854775807", "9223372036854775808", "9007199254740993",
            "1e308", "-0", "0.5", "null", "true", "false", "2147483647", "2147483648", "[]", "{}",
            "\\u0000", "\\ud800", "\"C\"", "\"F\"", "\".\"", "\"/\"", "NaN", "Infinity", "-Infinity"]
    def esc(text: str) -> str:
        out = ""
        for b in text.encode():
            out += chr(b) if 0x20 <= b < 0x7F and b not in (0x22, 0x5C) else f"\\x{b:02x}"
        return '"' + out + '"'

    with open(os.path.join(HERE, "fuzz_meta.dict"), "w") as f:
        f.write("# libFuzzer dictionary for fuzz_meta (generated by make_seeds.py)\n")
        for w in words:
            f.write(esc('"' + w + '"') + "\n")
        for w in lits:
            f.write(esc(w) + "\n")


def idx_record(op: int, word: int, value: int) -> bytes:
    return struct.pack("<BHQ", op, word, value % 2**64)


def idx_seeds():
    """fuzz_idx: byte 0 the array (t, when, dur, sp), byte 1 the kind (even:
    patch records of the genuine index, odd: the genuine header + a body).
    Offset words: 4.. (.txt), 4 + n.. (.csv); n = 4, 4, 3, 7 entries."""
    d = reset("fuzz_idx")
    entries = [4, 4, 3, 7]
    for t, n in enumerate(entries):
        put(d, f"genuine-{t}", bytes([t, 0]))
        put(d, f"body-zeros-{t}", bytes([t, 1]) + bytes(16 * n + 16))
        put(d, f"body-ascending-{t}", bytes([t, 1]) + b"".join(struct.pack("<Q", 7 * i) for i in range(2 * n + 2)))
        put(d, f"count-{t}", bytes([t, 0]) + idx_record(2, 3, n + 1))
        put(d, f"truncated-{t}", bytes([t, 0]) + idx_record(3, 0, 32 + 8 * n))
        put(d, f"txt-block-longer-{t}", bytes([t, 0]) + idx_record(1, 5, 1 << 40))
        put(d, f"csv-shifted-{t}", bytes([t, 0]) + idx_record(4, 4 + n, ((n - 1) << 16) | 100))
        put(d, f"csv-last-{t}", bytes([t, 0]) + idx_record(1, 4 + 2 * n - 1, 1))
        put(d, f"txt-swap-{t}", bytes([t, 0]) + idx_record(1, 5, 3) + idx_record(1, 6, -3 % 2**64))
        put(d, f"total-huge-{t}", bytes([t, 0]) + idx_record(2, 4 + n - 1, 1 << 63))
        put(d, f"extra-{t}", bytes([t, 0]) + idx_record(0, 4 + 2 * n, 0xFF) + idx_record(0, 5 + 2 * n, 0x0300))
    # a 4-byte header: the .csv offsets of t moved 2 bytes below its header
    # "x,y,t\n" (AddressSanitizer: heap-buffer-overflow in emit_csv_lines before
    # the index was checked)
    put(d, "crash-offsets-below-header", bytes([0, 0]) + idx_record(4, 8, (3 << 16) | 0xFFFE))


def main():
    """Every corpus, or those named: meta pipeline layout idx."""
    makers = {"meta": meta_seeds, "pipeline": pipeline_seeds, "layout": layout_seeds, "idx": idx_seeds}
    for name in sys.argv[1:] or list(makers):
        makers[name]()
    if not sys.argv[1:]:
        write_dicts()


if __name__ == "__main__":
    main()
