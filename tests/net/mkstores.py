#!/usr/bin/env python3
"""mkstores.py DIR [--many N] [--big-shard] - the stores of the remote suites, written by
zarr-python into DIR (the encodings are cases of tests/oracle/test_matrix.py):

  g3c.zarr g3.zarr   v3 groups, consolidated / not: compressed, sharded (end
                     and start index, inner gzip), blosc, v2-style keys, a
                     partly written array (fill values), and sub/deep/leaf
  g2c.zarr g2.zarr   the same in v2 (zstd, blosc, '/' separator, order F, ...)
  a3.zarr  a2.zarr   stores whose root is an array (read without any listing)
  bigshard.zarr      (--big-shard) a v3 root array whose first shard is larger
                     than 8 MiB: 34 uncompressed inner chunks of 256 KiB
  many.zarr          (--many N) a v3 group whose array has N one-element chunks
                     (listings that take several pages)
  x3.zarr  x2c.zarr  forecasts as xarray writes them (v3 not consolidated, v2
                     consolidated): lead(init_time, step) with its coordinates
                     (time stamps, durations, a float and a string one, a 2-D
                     valid_time): the labelled .csv (issue 17)
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np
import zarr

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
warnings.filterwarnings("ignore")
import test_matrix as tm  # noqa: E402  (the matrix's encodings and values)

V3 = ["v3_zstd", "v3_shard_end", "v3_shard_start", "v3_shard_inner_gzip", "v3_blosc_lz4_shuffle",
      "v3_keys_v2_dot", "v3_plain"]
V2 = ["v2_zstd", "v2_blosc_zstd_1", "v2_sep_slash", "v2_order_f", "v2_zlib", "v2_none"]


def array(g, name, fmt, kw, rng, shape, partial):
    kw = dict(kw)
    dtype = kw.pop("dtype", "m8[ns]")
    chunks = (8, 5) if "shards" in kw else (16, 10)
    a = g.create_array(name, shape=shape, chunks=chunks, dtype=dtype,
                       fill_value=np.timedelta64("NaT", "ns"),
                       dimension_names=["row", "col"] if fmt == 3 else None, **kw)
    if fmt == 2:
        a.attrs["_ARRAY_DIMENSIONS"] = ["row", "col"]
    v = tm.values(rng, shape)
    if partial:
        a[: shape[0] // 2] = v[: shape[0] // 2]
    else:
        a[...] = v


def group(path, fmt, consolidated, seed):
    rng = np.random.default_rng(seed)
    cases = tm.v3_cases() if fmt == 3 else tm.v2_cases()
    names = V3 if fmt == 3 else V2
    g = zarr.open_group(path, mode="w", zarr_format=fmt)
    for i, name in enumerate(names):
        array(g, name, fmt, cases[name], rng, (37, 23), partial=(i == 0))
    deep = g.create_group("sub").create_group("deep")
    array(deep, "leaf", fmt, cases[names[1]], rng, (50, 12), partial=False)
    if consolidated:
        zarr.consolidate_metadata(path)


def root_array(path, fmt, seed):
    rng = np.random.default_rng(seed)
    v = tm.values(rng, (300, 70))
    if fmt == 3:
        a = zarr.create_array(path, shape=v.shape, chunks=(20, 10), shards=(60, 70), dtype="m8[ns]",
                              fill_value=np.timedelta64("NaT", "ns"), dimension_names=["row", "col"], overwrite=True)
    else:
        a = zarr.create_array(path, shape=v.shape, chunks=(64, 32), dtype="m8[ns]", zarr_format=2,
                              fill_value=np.timedelta64("NaT", "ns"), overwrite=True)
        a.attrs["_ARRAY_DIMENSIONS"] = ["row", "col"]
    a[...] = v


def big_shard(path):
    """a root v3 array whose first shard (34 uncompressed inner chunks of
    256 KiB: 8.5 MiB) is too large to read whole; the second holds two"""
    inner = 32768
    n = inner * 36
    v = (np.arange(n, dtype="i8") * 1_000_003 % 10**12).astype("m8[ns]")
    a = zarr.create_array(path, shape=(n,), chunks=(inner,), shards=(inner * 34,), dtype="m8[ns]",
                          compressors=None, fill_value=np.timedelta64("NaT", "ns"),
                          dimension_names=["step"], overwrite=True)
    a[...] = v


def many(path, n):
    g = zarr.open_group(path, mode="w", zarr_format=3)
    a = g.create_array("steps", shape=(n,), chunks=(1,), dtype="m8[s]",
                       fill_value=np.timedelta64(0, "s"), dimension_names=["step"],
                       compressors=None)
    a[...] = np.arange(n, dtype="i8").astype("m8[s]") * 3600


def forecast(path, fmt, consolidated, seed):
    import pandas as pd
    import xarray as xr
    rng = np.random.default_rng(seed)
    init = pd.date_range("2024-01-01", periods=30, freq="6h")
    step = pd.to_timedelta(np.arange(17) * 90, unit="min")
    v = rng.integers(0, 10**6, size=(30, 17)).astype("timedelta64[s]").astype("timedelta64[ns]")
    v[3, 4] = np.timedelta64("NaT")
    ds = xr.Dataset({"lead": (("init_time", "step"), v)},
                    coords={"init_time": init, "step": step,
                            "lat": ("init_time", np.linspace(-90, 90, 30)),
                            "station": ("step", [f"st,{k}" if k % 5 == 0 else f"s{k}" for k in range(17)]),
                            "valid_time": (("init_time", "step"),
                                           init.values[:, None] + step.values[None, :])})
    ds.to_zarr(path, mode="w", zarr_format=fmt, consolidated=consolidated,
               encoding={"lead": {"chunks": (8, 5)}, "init_time": {"chunks": (7,)}})


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--many", type=int, default=0)
    p.add_argument("--big-shard", action="store_true")
    ns = p.parse_args()
    os.makedirs(ns.dir, exist_ok=True)
    d = lambda n: os.path.join(ns.dir, n)  # noqa: E731
    group(d("g3c.zarr"), 3, True, 1)
    group(d("g3.zarr"), 3, False, 1)
    group(d("g2c.zarr"), 2, True, 2)
    group(d("g2.zarr"), 2, False, 2)
    root_array(d("a3.zarr"), 3, 3)
    root_array(d("a2.zarr"), 2, 4)
    forecast(d("x3.zarr"), 3, False, 5)
    forecast(d("x2c.zarr"), 2, True, 6)
    if ns.many:
        many(d("many.zarr"), ns.many)
    if ns.big_shard:
        big_shard(d("bigshard.zarr"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
