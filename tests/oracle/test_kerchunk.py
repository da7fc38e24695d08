"""Kerchunk reference sets (issue 27 section 2) against xarray reading them
through fsspec's reference file system.

NetCDF4 (h5netcdf) and NetCDF3 (scipy) files written by xarray: durations
as int and float counts with units, time stamps, a forecast-style `step`.
References written by kerchunk: SingleHdf5ToZarr and NetCDF3ToZarr as JSON
version 1 (kerchunk's own output, some chunks inlined), the same as version
0 (the bare refs), version 1 with a {{u}} template, gzip- and zstd-
compressed, and a MultiZarrToZarr combination of two files.  Every .txt and
.csv byte for byte (st_size, whole, random preads) against xarray opening
`reference://` (fsspec resolves relative target URLs against the working
directory: it runs in the files' directory).
"""

from __future__ import annotations

import gzip
import json
import os
import warnings
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("kerchunk")
pytest.importorskip("h5netcdf")
pytest.importorskip("scipy")
zstandard = pytest.importorskip("zstandard")

from kerchunk.combine import MultiZarrToZarr  # noqa: E402
from kerchunk.hdf import SingleHdf5ToZarr  # noqa: E402
from kerchunk.netCDF3 import NetCDF3ToZarr  # noqa: E402

from test_cf import check_bytes  # noqa: E402

NS_H = 3600 * 10**9


@contextmanager
def cwd(path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def dataset(t0, n=6):
    """durations (int minutes with a NaT, float seconds), time stamps, and a
    forecast step (hours) as coordinate of a 2-D duration"""
    time = pd.date_range(t0, periods=n, freq="6h")
    step = (np.arange(5) * 3 * NS_H).astype("timedelta64[ns]")
    rng = np.random.default_rng(abs(hash(t0)) % 2**32)
    dur = (rng.integers(-600, 6000, (n, 5)) * 60 * 10**9).astype("timedelta64[ns]")
    dur[1, 2] = np.timedelta64("NaT")
    fdur = (rng.integers(0, 10**6, n) * 10**6).astype("timedelta64[ns]")
    valid = time.values[:, None] + step[None, :]
    return xr.Dataset({"dur": (("time", "step"), dur), "fdur": (("time",), fdur),
                       "valid_time": (("time", "step"), valid)},
                      coords={"time": time, "step": step})


def nc4_encoding():
    return {"dur": {"zlib": True, "shuffle": True, "chunksizes": (4, 2), "dtype": "int32",
                    "units": "minutes", "_FillValue": -99999},
            "fdur": {"dtype": "float64", "units": "seconds"},
            "step": {"units": "hours", "dtype": "float64"}}


@pytest.fixture(scope="module")
def refs(tmp_path_factory):
    d = tmp_path_factory.mktemp("kerchunk")
    with cwd(d):
        dataset("2021-03-01").to_netcdf("a.nc", engine="h5netcdf", encoding=nc4_encoding())
        dataset("2021-03-02T12:00").to_netcdf("b.nc", engine="h5netcdf", encoding=nc4_encoding())
        dataset("1999-12-31").to_netcdf("c3.nc", engine="scipy",
                                        encoding={"fdur": {"dtype": "float64", "units": "seconds"}})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = SingleHdf5ToZarr("a.nc", inline_threshold=100).translate()
            b = SingleHdf5ToZarr("b.nc", inline_threshold=100).translate()
            c3 = NetCDF3ToZarr("c3.nc", inline_threshold=100).translate()
            combined = MultiZarrToZarr([a, b], concat_dims=["time"],
                                       identical_dims=["step"]).translate()
        sets = {"v1": a, "v0": a["refs"], "nc3": c3, "combined": combined}
        tmpl = {"version": 1, "templates": {"u": str(d) + "/"},
                "refs": {k: (["{{u}}" + v[0]] + v[1:] if isinstance(v, list) else v)
                         for k, v in a["refs"].items()}}
        sets["template"] = tmpl
        for name, r in sets.items():
            (d / f"{name}.json").write_text(json.dumps(r))
        text = json.dumps(a).encode()
        (d / "gz.json.gz").write_bytes(gzip.compress(text))
        (d / "zst.json.zst").write_bytes(zstandard.ZstdCompressor().compress(text))
    return d


def expected(d, doc):
    """xarray's text of every duration and time-stamp array of a reference set"""
    with cwd(d), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = xr.open_dataset("reference://", engine="zarr", decode_timedelta=True,
                             backend_kwargs={"storage_options": {"fo": str(d / doc)},
                                             "consolidated": False})
        ds.load()
    out = {}
    for name, da in ds.variables.items():
        if da.dtype.kind not in "mM":
            continue
        vals = da.values.ravel()
        nat = np.isnat(vals)
        lines = ["" if bad else str(pd.Timedelta(v) if da.dtype.kind == "m" else pd.Timestamp(v))
                 for v, bad in zip(vals, nat)]
        txt = "".join(s + "\n" for s in lines).encode()
        csv = None
        if name not in ds.dims:  # a coordinate's own .csv is the other suites' concern
            csv = ds[name].to_dataframe().to_csv().encode()
        out[name] = (txt, csv)
    return out


def check_set(m, want):
    shown = sorted(e[:-4] for e in m.listdir() if e.endswith(".txt"))
    assert shown == sorted(want)
    for k, (name, (txt, csv)) in enumerate(sorted(want.items())):
        check_bytes(m, name + ".txt", txt, k)
        if csv is not None:
            check_bytes(m, name + ".csv", csv, k + 100)


@pytest.mark.parametrize("doc", ["v1.json", "v0.json", "template.json", "nc3.json",
                                 "combined.json", "gz.json.gz", "zst.json.zst"])
def test_reference_set(zf_mount, refs, doc):
    m = zf_mount(refs / doc, "-o", "nat=")
    want = expected(refs, doc if not doc.endswith((".gz", ".zst")) else "v1.json")
    assert "dur" in want and "fdur" in want and "step" in want
    check_set(m, want)
    info = m.read("dur.info").decode()
    assert f"reference_set: {refs / doc} (kerchunk version" in info


def test_inline_and_ranges(refs):
    """the sets hold both kinds of value, so both paths are compared above"""
    r = json.loads((refs / "v1.json").read_text())["refs"]
    assert any(isinstance(v, list) for k, v in r.items() if "/." not in k)
    assert any(isinstance(v, str) for k, v in r.items() if "/." not in k and not k.startswith("."))
