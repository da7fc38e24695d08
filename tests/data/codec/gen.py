#!/usr/bin/env python3
"""Regenerate the codec cross-check samples used by tests/unit/test_codec.c
and tests/unit/test_filter.c.

raw.bin is 1000 little-endian int64 values (timedelta64[ns], with some NaT);
raw_odd.bin is 1001 bytes.  Every v*_*.bin is raw.bin (or the sample's "raw")
encoded by numcodecs (v2 compressors and bytes filters) or written as a chunk
by zarr-python (v3 codec pipelines).  manifest.json lists them:
  {"file": F, "v2": <codec object>}  or  {"file": F, "v3": [<b2b codec>...]}
(optionally "raw": the decoded file) where the v3 list is in metadata order
(decode applies it in reverse).

arrays.json lists whole chunks of arrays with numcodecs filters (delta,
fixedscaleoffset, astype), written by zarr-python 3.1 in v2 and v3 (a_*.bin),
and what zarr-python reads back from them (a_*.out: the chunk's elements in
C order, little-endian), and numpy.promote_types over the ten element types
("promote": [a, b, result]):
  {"file", "expect", "elem": "int64"..., "shape": [...],
   "v2": {"dtype", "order", "compressor", "filters"}  or  "v3": <codecs>}
Some chunks are crafted (NaN, infinities, out-of-range values under the
filters) and written over zarr-python's; their expected elements are still
zarr-python's reading of them.  Also: transpose before sharding_indexed.

Run from this directory: /work/main/.venv/bin/python gen.py  (zarr 3.1, numcodecs 0.16)
"""
import json
import lzma
import os
import shutil
import tempfile
import warnings

import numcodecs
import numpy as np
import zarr
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec,
                         TransposeCodec, ZstdCodec)

warnings.filterwarnings("ignore")
import numcodecs.zarr3 as nc3  # noqa: E402  (deprecated alias, still the v3 names)
import zarr.codecs.numcodecs as znc  # noqa: E402

N = 1000


def raw_values():
    i = np.arange(N, dtype=np.int64)
    v = i * 1_000_000_007 + (i * i * 7919) % 1_000_003 - 5_000_000_000
    v[::97] = np.iinfo(np.int64).min  # NaT
    return v.astype("<i8")


def v2_samples(raw, manifest):
    comps = [
        numcodecs.Zstd(level=1),
        numcodecs.Zstd(level=3, checksum=True),
        numcodecs.Zlib(level=1),
        numcodecs.GZip(level=5),
        numcodecs.BZ2(level=9),
        numcodecs.LZ4(acceleration=1),
    ]
    for cname in numcodecs.blosc.list_compressors():
        for shuffle in (0, 1, 2):
            comps.append(numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle))
    comps.append(numcodecs.Blosc(cname="lz4", clevel=9, shuffle=-1, blocksize=1024))
    for k, comp in enumerate(comps):
        cfg = comp.get_config()
        name = f"v2_{k:02d}_{cfg['id']}.bin"
        with open(name, "wb") as f:
            f.write(bytes(comp.encode(raw)))
        manifest.append({"file": name, "v2": cfg})


def lzma_raw(filters):
    return numcodecs.LZMA(format=lzma.FORMAT_RAW, filters=filters)


def v2_bytes_filters(raw, odd, manifest):
    """numcodecs codecs zarr-python uses as v2 bytes filters or compressors."""
    xz = numcodecs.LZMA()
    codecs = [
        (xz, None), (numcodecs.LZMA(preset=1, check=lzma.CHECK_NONE), None),
        (numcodecs.LZMA(check=lzma.CHECK_SHA256), None),
        (numcodecs.LZMA(format=lzma.FORMAT_ALONE), None),
        (lzma_raw([{"id": lzma.FILTER_DELTA, "dist": 8}, {"id": lzma.FILTER_LZMA2, "preset": 1}]), None),
        (lzma_raw([{"id": lzma.FILTER_LZMA1, "preset": 6, "dict_size": 1 << 20, "lc": 3, "lp": 0,
                    "pb": 2}]), None),
        (lzma_raw([{"id": lzma.FILTER_X86}, {"id": lzma.FILTER_LZMA2}]), None),
        (numcodecs.Shuffle(elementsize=8), None), (numcodecs.Shuffle(elementsize=2), None),
        (numcodecs.Shuffle(elementsize=16), None), (numcodecs.Shuffle(elementsize=1), odd),
        (numcodecs.Shuffle(elementsize=0), odd),
        (numcodecs.CRC32(), None), (numcodecs.CRC32(location="end"), None),
        (numcodecs.Adler32(), None), (numcodecs.Adler32(location="end"), None),
        (numcodecs.Fletcher32(), None), (numcodecs.Fletcher32(), odd),
        (numcodecs.CRC32C(), None), (numcodecs.CRC32C(location="start"), None),
        (numcodecs.CRC32(), odd), (numcodecs.Adler32(), odd),
    ]
    k = 22
    for codec, data in codecs:
        cfg = codec.get_config()
        name = f"v2_{k:02d}_{cfg['id']}.bin"
        with open(name, "wb") as f:
            f.write(bytes(codec.encode(raw if data is None else data)))
        entry = {"file": name, "v2": cfg}
        if data is not None:
            entry["raw"] = "raw_odd.bin"
        manifest.append(entry)
        k += 1
    # two xz streams one after the other (lzma.decompress reads both); xz data
    # read as format 0 (auto)
    half = len(raw) // 2
    for name, data, cfg in [
            (f"v2_{k:02d}_lzma.bin", xz.encode(raw[:half]) + xz.encode(raw[half:]), xz.get_config()),
            (f"v2_{k + 1:02d}_lzma.bin", xz.encode(raw), dict(xz.get_config(), format=0))]:
        with open(name, "wb") as f:
            f.write(data)
        manifest.append({"file": name, "v2": cfg})


def v3_chunk(raw, codecs):
    """Write raw as a one-chunk v3 array; return (chunk bytes, b2b codec list)."""
    d = tempfile.mkdtemp()
    try:
        a = zarr.create_array(store=d, shape=(N,), chunks=(N,), dtype="m8[ns]",
                              serializer=BytesCodec(endian="little"),
                              compressors=codecs, fill_value=None)
        a[:] = raw.view("m8[ns]")
        with open(os.path.join(d, "zarr.json")) as f:
            meta = json.load(f)
        with open(os.path.join(d, "c", "0"), "rb") as f:
            chunk = f.read()
        return chunk, [c for c in meta["codecs"] if c["name"] != "bytes"]
    finally:
        shutil.rmtree(d)


def v3_samples(raw, manifest):
    pipelines = [
        [ZstdCodec(level=0)],
        [ZstdCodec(level=5, checksum=True)],
        [GzipCodec(level=6)],
        [BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=8)],
        [BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle", typesize=8)],
        [BloscCodec(cname="blosclz", clevel=9, shuffle="noshuffle", typesize=8)],
        [Crc32cCodec()],
        [ZstdCodec(level=3), Crc32cCodec()],
        [nc3.Zlib(level=1)],
        [nc3.GZip(level=5)],
        [nc3.BZ2(level=9)],
        [nc3.LZ4()],
        [nc3.Zstd(level=3)],
        [nc3.Blosc(cname="zlib", clevel=5, shuffle=2)],
        [znc.LZMA()], [znc.LZMA(preset=9)], [znc.Shuffle()], [znc.Shuffle(elementsize=4)],
        [znc.CRC32()], [znc.CRC32(location="end")], [znc.Adler32()], [znc.Fletcher32()],
        [znc.CRC32C()], [znc.Shuffle(), znc.LZMA(), znc.CRC32(location="end")],
    ]
    for k, codecs in enumerate(pipelines):
        chunk, b2b = v3_chunk(raw, codecs)
        name = f"v3_{k:02d}_{'_'.join(c['name'] for c in b2b)}.bin"
        with open(name, "wb") as f:
            f.write(chunk)
        manifest.append({"file": name, "v3": b2b})


# ---- whole chunks of arrays with numcodecs filters (arrays.json) -------------

NC = numcodecs
N_ARR = 240


def arr_values(dtype, seed):
    """N_ARR values of dtype: smooth with jumps (so deltas stay small), and for
    floats NaN, infinities and a signed zero."""
    rng = np.random.default_rng(seed)
    t = np.dtype(dtype)
    if t.kind == "f":
        v = np.cumsum(rng.normal(0, 3, N_ARR)) + 1000
        v[7], v[50], v[51], v[99] = np.nan, np.inf, -np.inf, -0.0
        return v.astype(t)
    info = np.iinfo(t)
    span = min(int(info.max), 2**40) // 4
    v = rng.integers(-span if info.min < 0 else 0, span, N_ARR, dtype=np.int64).astype(t)
    v[::17] = t.type(info.min)
    v[5::23] = t.type(info.max)
    return v


def le(x):
    """C-order little-endian bytes of x."""
    x = np.ascontiguousarray(x)
    return x.astype(x.dtype.newbyteorder("<")).tobytes()


def one_chunk(fmt, shape, dtype, kw, values=None, crafted=None):
    """Write an array of one chunk; return (chunk bytes, metadata, read-back)."""
    d = tempfile.mkdtemp()
    try:
        a = zarr.create_array(store=d, shape=shape, chunks=shape, dtype=dtype, zarr_format=fmt,
                              fill_value=0, **kw)
        a[...] = values.reshape(shape) if values is not None else \
            arr_values(dtype, 1).reshape(shape)
        key = os.path.join(d, "c", *["0"] * len(shape)) if fmt == 3 else \
            os.path.join(d, ".".join(["0"] * len(shape)))
        if crafted is not None:
            with open(key, "wb") as f:
                f.write(crafted)
        with open(key, "rb") as f:
            chunk = f.read()
        meta = json.load(open(os.path.join(d, "zarr.json" if fmt == 3 else ".zarray")))
        back = zarr.open_array(d)[...]
        return chunk, meta, back
    finally:
        shutil.rmtree(d)


def array_cases():
    """(name, zarr format, shape, array dtype, create_array keywords, values, crafted)"""
    f8, i8 = arr_values("f8", 2), arr_values("i8", 3)
    ns = np.arange(N_ARR, dtype=np.int64) * 1_500_000_000 + 7  # durations in ns
    ns[::31] = np.iinfo(np.int64).min
    wild = np.array([np.nan, np.inf, -np.inf, 1e300, -1e300, 2.0**63, -2.0**63, 2.0**31,
                     -2.0**31 - 1, 70000.7, -70000.7, 300.5, -1.5, -0.7, 0.5, -0.0] * 15)
    c = [
        ("v2_delta_i8_zlib", 2, (N_ARR,), "<i8", dict(filters=[NC.Delta(dtype="<i8")],
                                                     compressors=NC.Zlib(level=1)), ns, None),
        ("v2_delta_i2_as_i1", 2, (N_ARR,), "<i2",
         dict(filters=[NC.Delta(dtype="<i2", astype="<i1")], compressors=None),
         (np.arange(N_ARR) * 3 - 100).astype("<i2"), None),
        ("v2_delta_i4_order_f", 2, (12, 20), "<i4",
         dict(filters=[NC.Delta(dtype="<i4")], compressors=None, order="F"), None, None),
        ("v2_fso_f8_i2_zstd", 2, (N_ARR,), "<f8",
         dict(filters=[NC.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<i2")],
              compressors=NC.Zstd()), f8, None),
        ("v2_fso_f4_u1", 2, (N_ARR,), "<f4",
         dict(filters=[NC.FixedScaleOffset(offset=0.5, scale=100, dtype="<f4", astype="<u1")],
              compressors=None), (np.arange(N_ARR) % 200 / 100 + 0.5).astype("<f4"), None),
        ("v2_fso_f4_f4", 2, (N_ARR,), "<f4",
         dict(filters=[NC.FixedScaleOffset(offset=0.1, scale=3, dtype="<f4")], compressors=None),
         arr_values("f4", 4), None),
        ("v2_fso_i8_seconds_f8", 2, (N_ARR,), "<i8",
         dict(filters=[NC.FixedScaleOffset(offset=0, scale=1e-9, dtype="<i8", astype="<f8")],
              compressors=None), ns, None),
        ("v2_fso_i8_wild_f8", 2, (N_ARR,), "<i8",
         dict(filters=[NC.FixedScaleOffset(offset=0.25, scale=0.5, dtype="<i8", astype="<f8")],
              compressors=None), None, wild.astype("<f8").tobytes()),
        ("v2_fso_i2_wild_f4", 2, (N_ARR,), "<i2",
         dict(filters=[NC.FixedScaleOffset(offset=3, scale=7, dtype="<i2", astype="<f4")],
              compressors=None), None, wild.astype("<f4").tobytes()),
        ("v2_astype_f8_f4", 2, (N_ARR,), "<f8",
         dict(filters=[NC.AsType(encode_dtype="<f4", decode_dtype="<f8")], compressors=None),
         f8, None),
        ("v2_astype_i8_i4_lzma", 2, (N_ARR,), "<i8",
         dict(filters=[NC.AsType(encode_dtype="<i4", decode_dtype="<i8")],
              compressors=NC.LZMA()), i8, None),
        ("v2_astype_wild_to_i8", 2, (N_ARR,), "<i8",
         dict(filters=[NC.AsType(encode_dtype="<f8", decode_dtype="<i8")], compressors=None),
         None, wild.astype("<f8").tobytes()),
        ("v2_astype_wild_to_i4", 2, (N_ARR,), "<i4",
         dict(filters=[NC.AsType(encode_dtype="<f8", decode_dtype="<i4")], compressors=None),
         None, wild.astype("<f8").tobytes()),
        ("v2_astype_wild_to_i2", 2, (N_ARR,), "<i2",
         dict(filters=[NC.AsType(encode_dtype="<f8", decode_dtype="<i2")], compressors=None),
         None, wild.astype("<f8").tobytes()),
        ("v2_astype_wild_to_u1", 2, (N_ARR,), "|u1",
         dict(filters=[NC.AsType(encode_dtype="<f8", decode_dtype="|u1")], compressors=None),
         None, wild.astype("<f8").tobytes()),
        ("v2_astype_big_i8_to_f4", 2, (N_ARR,), "<f4",
         dict(filters=[NC.AsType(encode_dtype="<i8", decode_dtype="<f4")], compressors=None),
         None, np.array([2**60 + 2**36 + 1, -(2**60 + 2**36 + 1), 2**24 + 1, 2**63 - 1] * 60,
                        dtype="<i8").tobytes()),
        ("v2_delta_u1", 2, (N_ARR,), "|u1", dict(filters=[NC.Delta(dtype="|u1")], compressors=None),
         arr_values("u1", 5), None),
        ("v2_chain_fso_delta_shuffle", 2, (N_ARR,), "<f8",
         dict(filters=[NC.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<i4"),
                       NC.Delta(dtype="<i4", astype="<i2"), NC.Shuffle(elementsize=2)],
              compressors=NC.Blosc(cname="zstd", shuffle=0)),
         np.nan_to_num(f8, nan=990, posinf=1010, neginf=990), None),
        ("v2_big_delta", 2, (N_ARR,), ">i8", dict(filters=[NC.Delta(dtype=">i8")], compressors=None),
         ns, None),
        ("v2_big_array_little_delta", 2, (N_ARR,), ">i8",
         dict(filters=[NC.Delta(dtype="<i8")], compressors=NC.Zstd()), ns, None),
        ("v2_delta_i8_as_f8", 2, (N_ARR,), "<i8",
         dict(filters=[NC.Delta(dtype="<i8", astype="<f8")], compressors=None),
         ns * 1000 + 3, None),
        # numpy sums the float64 deltas, then casts each sum: [0.6] * 3 -> 0, 1, 1
        ("v2_delta_i8_as_f8_fractions", 2, (N_ARR,), "<i8",
         dict(filters=[NC.Delta(dtype="<i8", astype="<f8")], compressors=None), None,
         np.array([0.6, 0.6, 0.6, -0.6, -2.5, 1e17, 3.0, 0.25] * 30, dtype="<f8").tobytes()),
        # the first element is kept as it is (-0.0 stays -0.0)
        ("v2_delta_f8_negative_zero", 2, (N_ARR,), "<f8",
         dict(filters=[NC.Delta(dtype="<f8")], compressors=None), None,
         np.array([-0.0, 1.5, -1.5, np.nan, 2.0, -np.inf] * 40, dtype="<f8").tobytes()),
        ("v2_delta_f4_as_f8", 2, (N_ARR,), "<f4",
         dict(filters=[NC.Delta(dtype="<f4", astype="<f8")], compressors=None),
         np.nan_to_num(arr_values("f4", 6), nan=1, posinf=2, neginf=3), None),
        ("v2_delta_u2_as_i2", 2, (N_ARR,), "<u2",
         dict(filters=[NC.Delta(dtype="<u2", astype="<i2")], compressors=None), arr_values("u2", 7),
         None),
        ("v2_crc32_fletcher32", 2, (N_ARR,), "<i8",
         dict(filters=[NC.Delta(dtype="<i8"), NC.CRC32()], compressors=NC.Fletcher32()), i8, None),
        ("v3_fso_f8_i2_zstd", 3, (N_ARR,), "float64",
         dict(filters=[znc.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<i2")],
              compressors=[ZstdCodec()]), f8, None),
        ("v3_fso_no_dtype_f4_u2", 3, (N_ARR,), "float32",
         dict(filters=[znc.FixedScaleOffset(offset=1, scale=2, astype="u2")], compressors=None),
         (np.arange(N_ARR) / 4).astype("f4"), None),
        ("v3_delta_i8_lzma_crc32", 3, (N_ARR,), "int64",
         dict(filters=[znc.Delta(dtype="<i8")], compressors=[znc.LZMA(), znc.CRC32()]), ns, None),
        ("v3_delta_i8_bytes_big", 3, (N_ARR,), "int64",
         dict(filters=[znc.Delta(dtype="<i8")], serializer=BytesCodec(endian="big"),
              compressors=None), ns, None),
        ("v3_delta_big_dtype", 3, (N_ARR,), "int32",
         dict(filters=[znc.Delta(dtype=">i4")], compressors=None), arr_values("i4", 8), None),
        ("v3_astype_names_i4_i2", 3, (N_ARR,), "int32",
         dict(filters=[znc.AsType(encode_dtype="int16")], compressors=[znc.Shuffle()]),
         (np.arange(N_ARR) * 7 - 800).astype("i4"), None),
        ("v3_chain_i2_shuffle_lzma_fletcher", 3, (N_ARR,), "int16",
         dict(filters=[znc.Delta(dtype="<i2")],
              compressors=[znc.Shuffle(), znc.LZMA(), znc.Fletcher32()]), arr_values("i2", 9), None),
        ("v3_astype_wild_f8_to_u8", 3, (N_ARR,), "uint64",
         dict(filters=[znc.AsType(encode_dtype="<f8", decode_dtype="<u8")], compressors=None),
         None, np.nan_to_num(wild, nan=1.0).astype("<f8").tobytes()),
        ("v3_astype_f4_to_u4", 3, (N_ARR,), "uint32",
         dict(filters=[znc.AsType(encode_dtype="<f4", decode_dtype="<u4")], compressors=None),
         None, (np.arange(N_ARR) * 1.7e7 - 1.1e9).astype("<f4").tobytes()),
        ("v3_transpose_shard", 3, (6, 8), "int64",
         dict(filters=[TransposeCodec(order=(1, 0))],
              serializer=ShardingCodec(chunk_shape=(2, 2)), compressors=None),
         np.arange(48, dtype="i8") * 1000 - 7, None),
        ("v3_transpose3_shard_zstd", 3, (4, 6, 2), "int32",
         dict(filters=[TransposeCodec(order=(2, 0, 1))],
              serializer=ShardingCodec(chunk_shape=(2, 2, 2),
                                       codecs=[BytesCodec(endian="big"), GzipCodec()],
                                       index_location="start"),
              compressors=[ZstdCodec()]), np.arange(48, dtype="i4") * 3 + 1, None),
    ]
    return c


def array_samples():
    out = []
    for k, (name, fmt, shape, dtype, kw, values, crafted) in enumerate(array_cases()):
        chunk, meta, back = one_chunk(fmt, shape, dtype, kw, values, crafted)
        base = f"a_{k:02d}_{name}"
        with open(base + ".bin", "wb") as f:
            f.write(chunk)
        with open(base + ".out", "wb") as f:
            f.write(le(back))
        e = {"file": base + ".bin", "expect": base + ".out", "elem": back.dtype.name,
             "shape": list(shape)}
        if fmt == 2:
            e["v2"] = {k2: meta[k2] for k2 in ("dtype", "order", "compressor", "filters")}
        else:
            e["v3"] = meta["codecs"]
        out.append(e)
    names = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float32", "float64"]
    promote = [[a, b, np.promote_types(a, b).name] for a in names for b in names]
    with open("arrays.json", "w") as f:
        json.dump({"zarr": zarr.__version__, "numcodecs": numcodecs.__version__,
                   "numpy": np.__version__, "arrays": out, "promote": promote}, f, indent=1)
        f.write("\n")


def main():
    for f in os.listdir("."):
        if f.endswith(".bin") or f.endswith(".out"):
            os.remove(f)
    raw = raw_values()
    with open("raw.bin", "wb") as f:
        f.write(raw.tobytes())
    odd = bytes((i * 37 + 11) % 256 for i in range(1001))
    with open("raw_odd.bin", "wb") as f:
        f.write(odd)
    manifest = []
    v2_samples(raw, manifest)
    v3_samples(raw, manifest)
    v2_bytes_filters(raw.tobytes(), odd, manifest)
    with open("manifest.json", "w") as f:
        json.dump({"raw": "raw.bin", "zarr": zarr.__version__,
                   "numcodecs": numcodecs.__version__, "samples": manifest}, f, indent=1)
        f.write("\n")
    array_samples()


if __name__ == "__main__":
    main()
