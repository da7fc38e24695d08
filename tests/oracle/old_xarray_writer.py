"""Write Zarr v2 stores with an OLD xarray and dump what it decodes (issue 14).

Run with the second venv's python (scripts/deps builds it: xarray 2024.10,
zarr-python 2.18, numpy 1.26), never the main one:

    $ZF_VENV_OLD/bin/python tests/oracle/old_xarray_writer.py OUTDIR

xarray before 2025.04 wrote timedelta64 variables with a `units` attribute
only (no `dtype` attribute), and lazy (dask) variables with units
"nanoseconds".  This writes such stores with Dataset.to_zarr (v2, blosc,
zlib, delta filter, no compressor, consolidated or not, '/' chunk keys), a
WeatherBench2-like layout and one native m8 array written by zarr 2.18, then
writes OUTDIR/oracle.json:

    {"versions": {...}, "stores": {NAME: {"consolidated": bool,
      "arrays": {VAR: {"dims": [...], "shape": [...], "ns": [int|null, ...]}
                    or {"error": TEXT}},
      "other": [VAR, ...]}}}

"arrays" are the variables this xarray decodes to timedelta64 (values in C
order as int64 ns, null for NaT); "other" are the rest (time points, data).
"""

from __future__ import annotations

import json
import os
import sys
import warnings

import dask.array as da
import numcodecs
import numpy as np
import pandas as pd
import xarray as xr
import zarr
from numcodecs import Blosc, Delta, Zlib

NS = {"D": 86400 * 10**9, "h": 3600 * 10**9, "m": 60 * 10**9, "s": 10**9,
      "ms": 10**6, "us": 10**3, "ns": 1}


def ns(values) -> np.ndarray:
    """int64 ns (None for NaT) as timedelta64[ns]."""
    a = np.array([np.iinfo(np.int64).min if v is None else v for v in values], dtype="i8")
    return a.view("m8[ns]")


def matrix_dataset(rng):
    """Every unit xarray picks (int64 and float64), packed numbers with
    units, 1-D to 3-D, NaT, lazy (dask) variables, several compressors."""
    n = 24
    data, enc = {}, {}
    for u, step in NS.items():  # units = the coarsest that divides all
        v = (rng.integers(-5000, 5000, n) * step).view("m8[ns]")
        v[3] = np.timedelta64("NaT")
        data[f"u_{u}"] = ("t", v)
        enc[f"u_{u}"] = {"chunks": (8,)}
        data[f"f_{u}"] = ("t", v.copy())
        enc[f"f_{u}"] = {"dtype": "float64", "chunks": (8,)}
    data["f32_min"] = ("t", (rng.integers(-100, 100, n) * NS["m"]).view("m8[ns]"))
    enc["f32_min"] = {"dtype": "float32", "units": "minutes"}
    data["explicit_s_as_ms"] = ("t", (rng.integers(-10**6, 10**6, n) * NS["s"]).view("m8[ns]"))
    enc["explicit_s_as_ms"] = {"units": "milliseconds", "dtype": "int64"}
    # packed numbers with duration units (old xarray cannot pack timedelta64
    # itself): the attributes make them durations for a CF reader.  With a
    # _FillValue this xarray cannot decode them back (it masks to int64 and
    # then fails to scale in place): "error" in the oracle.
    secs = rng.integers(-3000, 3000, n) / 2.0
    data["packed16_nomask"] = ("t", secs.copy(), {"units": "seconds"})
    enc["packed16_nomask"] = {"dtype": "int16", "scale_factor": 0.5, "add_offset": 10.0,
                              "chunks": (8,)}
    secs[5] = np.nan
    data["packed16"] = ("t", secs, {"units": "seconds"})
    enc["packed16"] = {"dtype": "int16", "scale_factor": 0.5, "add_offset": 10.0,
                       "_FillValue": -1, "chunks": (8,)}
    hrs = rng.integers(0, 10**6, n) / 1000.0
    data["packed32_h"] = ("t", hrs.copy(), {"units": "hours"})
    enc["packed32_h"] = {"dtype": "int32", "scale_factor": 0.001, "chunks": (8,)}
    hrs[0] = np.nan
    data["packed32_h_mask"] = ("t", hrs, {"units": "hours"})
    enc["packed32_h_mask"] = {"dtype": "int32", "scale_factor": 0.001, "_FillValue": 2**31 - 1,
                              "chunks": (8,)}
    v2d = (rng.integers(-10**6, 10**6, (6, 5)) * NS["ms"]).view("m8[ns]")
    v2d[2, 3] = np.timedelta64("NaT")
    data["grid2"] = (("lead", "member"), v2d)
    enc["grid2"] = {"chunks": (4, 2)}
    v3d = (rng.integers(-10**4, 10**4, (3, 4, 5)) * NS["s"]).view("m8[ns]")
    v3d[1, 2, 3] = np.timedelta64("NaT")
    data["cube3"] = (("a", "b", "c"), v3d)
    enc["cube3"] = {"chunks": (2, 3, 2), "dtype": "float64"}
    data["all_nat"] = ("r", ns([None] * 6))
    # lazy: dask cannot look at the values, so units "nanoseconds"
    lz = (rng.integers(-10**5, 10**5, n) * NS["s"]).view("m8[ns]")
    lz[7] = np.timedelta64("NaT")
    data["lazy_ns"] = ("t", da.from_array(lz, chunks=8))
    data["lazy_2d"] = (("lead", "member"), da.from_array(v2d.copy(), chunks=(3, 5)))
    data["lazy_f_s"] = ("t", da.from_array(lz.copy(), chunks=6))
    enc["lazy_f_s"] = {"units": "seconds", "dtype": "float64"}
    data["lazy_ms"] = ("t", da.from_array(lz.copy(), chunks=6))
    enc["lazy_ms"] = {"units": "milliseconds", "dtype": "int64"}
    big = rng.integers(-10**15, 10**15, 20_000).view("m8[ns]")  # ~0.5 MiB of text
    big[rng.integers(0, big.size, 50)] = np.timedelta64("NaT")
    data["lazy_big"] = ("big", da.from_array(big, chunks=2048))
    # compressors and filters zarr 2.18 writes
    cz = (rng.integers(0, 10**4, n).cumsum() * NS["ms"]).view("m8[ns]")
    cz[9] = np.timedelta64("NaT")
    for name, e in (("zlib_delta", {"compressor": Zlib(level=3), "filters": [Delta(dtype="<i8")]}),
                    ("raw", {"compressor": None}),
                    ("blosc_zstd", {"compressor": Blosc(cname="zstd", clevel=3, shuffle=Blosc.BITSHUFFLE)}),
                    ("blosc_zlib", {"compressor": Blosc(cname="zlib", clevel=1, shuffle=Blosc.NOSHUFFLE)})):
        data[name] = ("t", cz.copy())
        enc[name] = {**e, "chunks": (10,)}
    return xr.Dataset(data), enc


def add_native(path, consolidated):
    """A native <m8[s] array written by zarr 2.18 itself (shown with -o cf=off)."""
    g = zarr.open_group(path, mode="a")
    vals = np.array([0, 1, -86401, 10**9, 7], dtype="m8[s]")
    a = g.create_dataset("native_s", shape=vals.shape, dtype="<m8[s]", chunks=(2,))
    a[...] = vals
    a.attrs["_ARRAY_DIMENSIONS"] = ["n"]
    if consolidated:
        zarr.consolidate_metadata(path)


def weatherbench_dataset(rng):
    """WeatherBench2-like forecast: prediction_timedelta a coordinate (int64,
    units only), a time coordinate (a point: not a duration), a lazy lead
    time, float32 data; blosc, consolidated."""
    times = pd.date_range("2020-01-01", periods=4, freq="12h")
    lead = np.arange(0, 241, 6, dtype="i8") * NS["h"]
    temp = rng.normal(280, 10, (4, 41, 3, 2)).astype("f4")
    ds = xr.Dataset(
        {"temperature": (("time", "prediction_timedelta", "latitude", "longitude"),
                         da.from_array(temp, chunks=(1, 41, 3, 2)), {"units": "K"}),
         "valid_lead": (("time", "prediction_timedelta"),
                        da.from_array(np.tile(lead, (4, 1)).view("m8[ns]"), chunks=(2, 41)))},
        coords={"time": times, "prediction_timedelta": lead.view("m8[ns]"),
                "latitude": [-10.0, 0.0, 10.0], "longitude": [0.0, 1.5]})
    blosc = Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)
    return ds, {k: {"compressor": blosc} for k in ds.variables}


def nested_dataset(rng):
    v = (rng.integers(-10**6, 10**6, (5, 4)) * NS["us"]).view("m8[ns]")
    v[0, 0] = np.timedelta64("NaT")
    ds = xr.Dataset({"nested_us": (("x", "y"), v), "nested_h": ("x", ns([h * NS["h"] for h in range(5)]))})
    return ds, {"nested_us": {"chunks": (2, 3)}, "nested_h": {"chunks": (2,)}}


def drop_chunk(path, name, key):
    p = os.path.join(path, name, key)
    if not os.path.exists(p):
        raise SystemExit(f"old_xarray_writer: no chunk {p} to drop")
    os.unlink(p)


def decoded(path, consolidated):
    """What this xarray decodes: timedelta variables as int64 ns (or the
    error it raises reading them), the others by name."""
    ds = xr.open_zarr(path, consolidated=consolidated, decode_timedelta=True, chunks={})
    arrays, other = {}, []
    for name, var in ds.variables.items():
        if var.dtype.kind != "m":
            other.append(name)
            continue
        try:
            vals = var.values.astype("m8[ns]")
        except Exception as e:  # noqa: BLE001 - any failure of this xarray is the finding
            arrays[name] = {"error": f"{type(e).__name__}: {e}"}
            continue
        ints = vals.view("i8").ravel(order="C").tolist()
        arrays[name] = {"dims": list(var.dims), "shape": list(vals.shape),
                        "ns": [None if np.isnat(t) else i for t, i in zip(vals.ravel(), ints)]}
    return arrays, sorted(other)


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(2024)
    stores = {}

    def write(name, ds, enc, consolidated, store=None):
        path = os.path.join(out, name + ".zarr")
        ds.to_zarr(store if store is not None else path, mode="w", encoding=enc,
                   consolidated=consolidated)
        stores[name] = (path, consolidated)
        return path

    mds, menc = matrix_dataset(rng)
    for name, cons in (("matrix", False), ("matrix_c", True)):
        path = write(name, mds, menc, cons)
        drop_chunk(path, "packed16", "2")  # reads as fill_value -1: the mask, NaT
        add_native(path, cons)
    wds, wenc = weatherbench_dataset(rng)
    write("wb2_c", wds, wenc, True)
    nds, nenc = nested_dataset(rng)
    npath = os.path.join(out, "nested_c.zarr")
    write("nested_c", nds, nenc, True, zarr.DirectoryStore(npath, dimension_separator="/"))

    result = {"versions": {m.__name__: m.__version__ for m in (xr, zarr, numcodecs, np, pd)},
              "stores": {}}
    for name, (path, cons) in stores.items():
        arrays, other = decoded(path, cons)
        result["stores"][name] = {"consolidated": cons, "arrays": arrays, "other": other}
    with open(os.path.join(out, "oracle.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: old_xarray_writer.py OUTDIR")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main(sys.argv[1])
