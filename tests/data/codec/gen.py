#!/usr/bin/env python3
"""Regenerate the codec cross-check samples used by tests/unit/test_codec.c.

raw.bin is 1000 little-endian int64 values (timedelta64[ns], with some NaT).
Every other *.bin is raw.bin encoded by numcodecs (v2 compressors) or written
as a chunk by zarr-python (v3 codec pipelines).  manifest.json lists them:
  {"file": F, "v2": <compressor object>}  or  {"file": F, "v3": [<b2b codec>...]}
where the v3 list is in metadata order (decode applies it in reverse).

Run from this directory: /tmp/venv/bin/python gen.py  (zarr 3.1, numcodecs 0.16)
"""
import json
import os
import shutil
import tempfile
import warnings

import numcodecs
import numpy as np
import zarr
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ZstdCodec

warnings.filterwarnings("ignore")
import numcodecs.zarr3 as nc3  # noqa: E402  (deprecated alias, still the v3 names)

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
    ]
    for k, codecs in enumerate(pipelines):
        chunk, b2b = v3_chunk(raw, codecs)
        name = f"v3_{k:02d}_{'_'.join(c['name'] for c in b2b)}.bin"
        with open(name, "wb") as f:
            f.write(chunk)
        manifest.append({"file": name, "v3": b2b})


def main():
    for f in os.listdir("."):
        if f.endswith(".bin"):
            os.remove(f)
    raw = raw_values()
    with open("raw.bin", "wb") as f:
        f.write(raw.tobytes())
    manifest = []
    v2_samples(raw, manifest)
    v3_samples(raw, manifest)
    with open("manifest.json", "w") as f:
        json.dump({"raw": "raw.bin", "zarr": zarr.__version__,
                   "numcodecs": numcodecs.__version__, "samples": manifest}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
