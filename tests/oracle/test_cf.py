"""CF-encoded durations (issue 14): integer and float arrays with `units`.

The reference is xarray itself: every store here is written by
xarray.Dataset.to_zarr (v2 and v3, consolidated or not), or by zarr-python
with the attributes real stores have (WeatherBench2, dynamical.org), and
every .txt/.csv byte must equal str(pandas.Timedelta(v)) of
xarray.open_zarr(..., decode_timedelta=True)[name].values (NaT as the nat
text), with exact st_size and random preads.  Nothing is computed from
zarrfs's own rules except where xarray itself cannot decode (out of range:
zarrfs fails the chunk with EIO) or does not decode (UDUNITS spellings:
compared with a twin array spelled as xarray spells it).
"""

from __future__ import annotations

import base64
import errno
import json
import os
import random
import shutil
import struct
import warnings
import zlib

import numpy as np
import pandas as pd
import pytest

import dask  # noqa: E402,F401 - xarray.open_zarr(chunks={}) needs it
import xarray as xr  # noqa: E402
import zarr  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")

NAT_MIN = np.iinfo(np.int64).min
NAN_B64 = base64.standard_b64encode(struct.pack("<d", float("nan"))).decode()  # "AAAAAAAA+H8="


# ---------------------------------------------------------------------------
# expected bytes, from xarray

def xr_values(store, name, consolidated):
    """xarray's decoded values and dims of one array (its siblings dropped:
    damaged ones would fail the whole open)."""
    others = [k for k in zarr.open_group(str(store), mode="r").array_keys() if k != name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = xr.open_zarr(str(store), decode_timedelta=True, consolidated=consolidated,
                          drop_variables=others, chunks={})  # dask: one block per chunk
        da = ds[name]
        return da.values, list(da.dims)


def td_lines(values, nat="NaT"):
    assert values.dtype.kind == "m", values.dtype
    return [nat if np.isnat(v) else str(pd.Timedelta(v)) for v in values.ravel(order="C")]


def expected_files(values, dims, name, nat="NaT"):
    lines = td_lines(values, nat)
    txt = "".join(s + "\n" for s in lines).encode()
    out = [",".join(list(dims) + [name])]
    if values.ndim == 0:
        out.append(lines[0])
    else:
        for idx, text in zip(np.ndindex(*values.shape), lines):
            out.append(",".join([str(i) for i in idx] + [text]))
    csv = "".join(s + "\n" for s in out).encode()
    return txt, csv


def check_bytes(m, rel, want, seed):
    """st_size, the whole file, and random preads."""
    assert m.stat(rel).st_size == len(want), rel
    got = m.read(rel)
    if got != want:
        gl, wl = got.decode().splitlines(), want.decode().splitlines()
        for k, (g, w) in enumerate(zip(gl, wl)):
            assert g == w, f"{rel} line {k}: zarrfs {g!r}, xarray {w!r}"
        assert got == want, rel
    rng = random.Random(zlib.crc32(f"{rel}:{seed}".encode()))
    ranges = [(rng.randrange(0, len(want) + 1), rng.randrange(1, 300)) for _ in range(12)]
    for (off, n), g in zip(ranges, m.preads(rel, ranges)):
        assert g == want[off:off + n], f"{rel} pread({off}, {n})"


def check_array(m, store, name, consolidated, rel=None, nat="NaT"):
    values, dims = xr_values(store, name, consolidated)
    txt, csv = expected_files(values, dims, name, nat)
    rel = rel or name
    check_bytes(m, rel + ".txt", txt, 1)
    check_bytes(m, rel + ".csv", csv, 2)


def check_labelled(m, store, names):
    """every NAME.csv of an array with coordinates is xarray's own
    to_dataframe().to_csv() (issue 17); the others keep the index columns"""
    checked = 0
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            da = xr.open_zarr(str(store), decode_timedelta=True)[name]
            if not da.coords:
                continue
            want = da.to_dataframe().to_csv().encode()
        check_bytes(m, name + ".csv", want, 3)
        checked += 1
    assert checked, "no array with coordinates"


def arrays_shown(m, rel=""):
    return sorted(e[:-4] for e in m.listdir(rel) if e.endswith(".txt"))


# ---------------------------------------------------------------------------
# the xarray-written matrix

def td(vals, unit):
    a = np.array([v if v is not None else "NaT" for v in vals], dtype=f"timedelta64[{unit}]") \
        if any(v is None for v in vals) else np.array(vals, dtype=f"timedelta64[{unit}]")
    return a


def matrix_dataset():
    """Variables in every CF unit xarray picks, int and float encodings,
    packed int16/int32, NaN and NaT, 1-D to 3-D, several resolutions."""
    rng = np.random.default_rng(14)
    n = 24
    per = {"D": 86400 * 10**9, "h": 3600 * 10**9, "m": 60 * 10**9, "s": 10**9,
           "ms": 10**6, "us": 10**3, "ns": 1}
    data = {}
    enc = {}
    for u, ns in per.items():  # xarray picks units = the coarsest dividing all
        v = (rng.integers(-5000, 5000, n) * ns).astype("timedelta64[ns]")
        v[3] = np.timedelta64("NaT")
        data[f"u_{u}"] = ("t", v)
        enc[f"u_{u}"] = {"chunks": (8,)}
        data[f"f_{u}"] = ("t", v.copy())
        enc[f"f_{u}"] = {"dtype": "float64", "chunks": (8,)}
    # other resolutions: the dtype attribute names them
    big = np.array([10**11, -(10**11), 0, 1, 2**40, None], dtype=object)
    data["res_s"] = ("r", td(list(big), "s"))  # beyond int64 ns: needs [s] ticks
    data["res_ms"] = ("r", td([1500, -1, 0, 10**14, 7, None], "ms"))
    data["res_us"] = ("r", td([1, -1, 0, 10**15, 123456789, None], "us"))
    data["float_s"] = ("r", td([1, -1, 0, 86400 * 365 * 200, 7, None], "s"))
    enc["float_s"] = {"dtype": "float64"}
    # packing
    secs = rng.integers(-3000, 3000, n).astype("timedelta64[s]").astype("timedelta64[ns]")
    secs[5] = np.timedelta64("NaT")
    data["packed16"] = ("t", secs)
    enc["packed16"] = {"dtype": "int16", "scale_factor": 0.5, "add_offset": 10.0,
                       "_FillValue": -1, "units": "seconds", "chunks": (8,)}
    hrs = (rng.integers(0, 1000, n) * 360 * 10**9).astype("timedelta64[ns]")  # 0.1 h steps
    hrs[0] = np.timedelta64("NaT")
    data["packed16_hours"] = ("t", hrs)
    enc["packed16_hours"] = {"dtype": "int16", "scale_factor": 0.1, "_FillValue": -32768,
                             "units": "hours", "chunks": (8,)}
    data["packed32"] = ("t", secs.copy())
    enc["packed32"] = {"dtype": "int32", "scale_factor": 0.001, "add_offset": -5.0,
                       "_FillValue": 2**31 - 1, "units": "seconds", "chunks": (8,)}
    data["float32_min"] = ("t", (rng.integers(-100, 100, n) * 60 * 10**9).astype("timedelta64[ns]"))
    enc["float32_min"] = {"dtype": "float32", "units": "minutes"}
    # dimensions
    v2d = (rng.integers(-10**6, 10**6, (6, 5)) * 10**6).astype("timedelta64[ns]")
    v2d[2, 3] = np.timedelta64("NaT")
    data["grid2"] = (("lead", "member"), v2d)
    enc["grid2"] = {"chunks": (4, 2)}
    v3d = (rng.integers(-10**4, 10**4, (3, 4, 5)) * 10**9).astype("timedelta64[ns]")
    v3d[1, 2, 3] = np.timedelta64("NaT")
    data["cube3"] = (("a", "b", "c"), v3d)
    enc["cube3"] = {"chunks": (2, 3, 2), "dtype": "float64"}
    data["all_nat"] = ("r", np.array(["NaT"] * 6, dtype="timedelta64[ns]"))
    return xr.Dataset(data), enc


def chunk_key(fmt, *coords):
    return ("c/" + "/".join(map(str, coords))) if fmt == 3 else ".".join(map(str, coords))


def drop_chunks(store, fmt, name, *keys):
    """Remove stored chunks: they read as the fill value (xarray and zarrfs)."""
    for k in keys:
        p = store / name / chunk_key(fmt, *k)
        assert p.exists(), p
        p.unlink()


def write_matrix(root, fmt, consolidated):
    ds, enc = matrix_dataset()
    store = root / f"m{fmt}{'c' if consolidated else ''}.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(str(store), zarr_format=fmt, consolidated=consolidated, encoding=enc)
    drop_chunks(store, fmt, "u_h", (1,))
    drop_chunks(store, fmt, "packed16", (2,))  # v2: fill_value -1 is the mask: NaT
    drop_chunks(store, fmt, "grid2", (1, 1))
    drop_chunks(store, fmt, "cube3", (0, 1, 0))
    return store, list(ds.data_vars)


def strip_dtype_attr(store, fmt):
    """Units-only store (older xarray): remove every dtype attribute."""
    for dirpath, _, files in os.walk(store):
        for f in files:
            if f not in ("zarr.json", ".zattrs"):
                continue
            p = os.path.join(dirpath, f)
            d = json.load(open(p))
            attrs = d.get("attributes", {}) if f == "zarr.json" else d
            if isinstance(attrs, dict) and attrs.pop("dtype", None) is not None:
                json.dump(d, open(p, "w"))


@pytest.fixture(scope="module")
def matrix(tmp_path_factory, zf_mounter_module):
    root = tmp_path_factory.mktemp("cf_matrix")
    out = {}
    for fmt in (2, 3):
        for cons in (False, True):
            store, names = write_matrix(root, fmt, cons)
            out[(fmt, cons)] = (store, names, zf_mounter_module(store))
    return out


@pytest.mark.parametrize("fmt,cons", [(2, False), (2, True), (3, False), (3, True)])
def test_xarray_matrix(matrix, fmt, cons):
    store, names, m = matrix[(fmt, cons)]
    assert arrays_shown(m) == sorted(names)
    for name in names:
        check_array(m, store, name, cons)


def test_matrix_info(matrix):
    store, names, m = matrix[(3, True)]
    info = dict(line.split(": ", 1) for line in m.read("packed16.info").decode().splitlines())
    assert info["encoding"] == "CF units and dtype attributes"
    assert info["stored_type"] == "int16"
    assert info["data_type"] == "int16"
    assert "scale_factor=0.5" in info["cf_attributes"] and "_FillValue=-1" in info["cf_attributes"]
    assert info["unit"] == "ns"
    info = dict(line.split(": ", 1) for line in m.read("res_s.info").decode().splitlines())
    assert info["unit"] == "s"  # integers keep the dtype attribute's resolution


@pytest.fixture(scope="module")
def units_only(tmp_path_factory, zf_mounter_module):
    root = tmp_path_factory.mktemp("cf_units_only")
    out = {}
    for fmt in (2, 3):
        store, names = write_matrix(root, fmt, False)
        strip_dtype_attr(store, fmt)
        if fmt == 2:
            zarr.consolidate_metadata(str(store), zarr_format=2)
        out[fmt] = (store, names, zf_mounter_module(store))
    return out


@pytest.mark.parametrize("fmt", [2, 3])
def test_units_only(units_only, fmt):
    """Without the dtype attribute xarray decodes to ns (and fails where a
    value does not fit: zarrfs fails those chunks with EIO)."""
    store, names, m = units_only[fmt]
    assert arrays_shown(m) == sorted(names)
    for name in names:
        try:
            xr_values(store, name, fmt == 2)
        except (OverflowError, pd.errors.OutOfBoundsTimedelta):
            assert name in ("res_s", "res_ms"), name  # 10**11 s is beyond int64 ns
            with pytest.raises(OSError) as e:
                m.read(name + ".txt")
            assert e.value.errno == errno.EIO
            continue
        check_array(m, store, name, fmt == 2)
    assert "beyond int64 ns ticks" in m.log()


def test_info_units_only(units_only):
    store, names, m = units_only[3]
    info = dict(line.split(": ", 1) for line in m.read("u_h.info").decode().splitlines())
    assert info["encoding"] == "CF units attribute"
    assert info["cf_attributes"] == 'units="hours"'


# ---------------------------------------------------------------------------
# stores as real producers write them (zarr-python, their attributes)

def v2_array(g, name, data, attrs, dims, chunks, fill, compressor=None):
    a = g.create_array(name, shape=data.shape, dtype=data.dtype, chunks=chunks, fill_value=fill,
                       compressors=compressor)
    a[...] = data
    a.attrs.update({**attrs, "_ARRAY_DIMENSIONS": dims})
    return a


def v3_array(g, name, data, attrs, dims, chunks, fill):
    a = g.create_array(name, shape=data.shape, dtype=data.dtype, chunks=chunks, fill_value=fill,
                       dimension_names=dims)
    a[...] = data
    a.attrs.update(attrs)
    return a


def write_weatherbench(store):
    """WeatherBench2 (v2, consolidated, blosc): prediction_timedelta int64
    with units only; a time coordinate (time stamps, test_datetime.py) and data."""
    from numcodecs import Blosc

    g = zarr.open_group(str(store), mode="w", zarr_format=2)
    hours = np.arange(0, 241, 6, dtype="i8")
    blosc = Blosc(cname="lz4", clevel=5, shuffle=1)
    v2_array(g, "prediction_timedelta", hours * 3600 * 10**9, {"units": "nanoseconds"},
             ["prediction_timedelta"], (41,), None, blosc)
    v2_array(g, "lead_hours", hours, {"units": "hours"}, ["prediction_timedelta"], (10,), None, blosc)
    v2_array(g, "lead_fill0", hours, {"units": "hours"}, ["prediction_timedelta"], (10,), 0, blosc)
    v2_array(g, "time", np.arange(10, dtype="i8"), {"units": "hours since 2020-01-01",
                                                   "calendar": "proleptic_gregorian"},
             ["time"], (10,), None, blosc)
    v2_array(g, "temperature", np.linspace(250, 300, 10).astype("f4"), {"units": "K"},
             ["time"], (5,), float("nan"), blosc)
    zarr.consolidate_metadata(str(store), zarr_format=2)
    return ["lead_fill0", "lead_hours", "prediction_timedelta"]


def write_dynamical(store):
    """dynamical.org (v3, consolidated): lead_time int64 seconds fill 0 (not
    a mask in v3); later fill -1 with dtype; now float64 seconds, NaN fill."""
    g = zarr.open_group(str(store), mode="w", zarr_format=3)
    secs = np.arange(0, 49, dtype="i8") * 3600
    a = v3_array(g, "lead_time_2024", secs, {"units": "seconds"}, ["lead_time"], (12,), 0)
    v3_array(g, "lead_time_2025", np.where(secs == 7200, -1, secs),
             {"units": "seconds", "dtype": "timedelta64[ns]"}, ["lead_time"], (12,), -1)
    f = secs.astype("f8")
    f[5] = np.nan
    v3_array(g, "lead_time", f, {"units": "seconds", "dtype": "timedelta64[ns]",
                                "_FillValue": NAN_B64}, ["lead_time"], (12,), float("nan"))
    v3_array(g, "expected_forecast_length", np.array([240 * 3600, -1], dtype="i8"),
             {"units": "seconds", "dtype": "timedelta64[ns]", "_FillValue": -1},
             ["x"], (1,), -1)
    zarr.consolidate_metadata(str(store), zarr_format=3)
    for k in ("c/3",):  # unwritten chunks: the fill value
        for name in ("lead_time_2024", "lead_time_2025", "lead_time"):
            (store / name / k).unlink()
    return ["expected_forecast_length", "lead_time", "lead_time_2024", "lead_time_2025"]


def test_weatherbench_layout(tmp_path, zf_mount):
    store = tmp_path / "wb2.zarr"
    names = write_weatherbench(store)
    m = zf_mount(store, "-o", "labels=index")  # the values; labels: test_labels.py
    assert arrays_shown(m) == sorted(names + ["time"])  # time stamps: test_datetime.py
    for name in names:
        check_array(m, store, name, True)
    check_labelled(zf_mount(store, "-o", "nat="), store, names)
    # v2 fill_value 0 acts as _FillValue: xarray shows the zeros as NaT
    assert m.read("lead_fill0.txt").splitlines()[0] == b"NaT"


def test_dynamical_layout(tmp_path, zf_mount):
    store = tmp_path / "dyn.zarr"
    names = write_dynamical(store)
    m = zf_mount(store, "-o", "labels=index")
    assert arrays_shown(m) == names
    for name in names:
        check_array(m, store, name, True)
    check_labelled(zf_mount(store, "-o", "nat="), store, names)
    # v3 fill_value is no mask: 0 s stays 0 s, unwritten chunks read as it
    assert m.read("lead_time_2024.txt").splitlines()[0] == b"0 days 00:00:00"


# ---------------------------------------------------------------------------
# the rules one by one (zarr-python with hand-written attributes)

def write_rules(store, fmt):
    """Element types, byte orders, masks and packing xarray's coders treat
    specially.  Returns (names xarray decodes, {udunits name: twin})."""
    g = zarr.open_group(str(store), mode="w", zarr_format=fmt)
    mk = v3_array if fmt == 3 else (lambda g, n, d, a, dims, c, f: v2_array(g, n, d, a, dims, c, f))
    names = []

    def add(name, data, attrs, fill=None, chunks=None):
        data = np.asarray(data)
        mk(g, name, data, attrs, [f"{name}_{k}" for k in range(data.ndim)], chunks or data.shape,
           fill if fill is not None else (0 if fmt == 3 else None))
        names.append(name)

    f32 = np.array([0.1, 1.5, -2.25, 3e-7, 1e6, np.nan], dtype="f4")
    add("float32_s", f32, {"units": "seconds"})           # multiplied in float32
    add("float32_h", f32, {"units": "hours"})             # float64 after * 3600
    add("float32_ms_dtype", f32, {"units": "milliseconds", "dtype": "timedelta64[s]"})
    add("float64_frac", np.array([1.5, 1e-10, 2.0000000001, -0.3, 1 / 3, np.nan]),
        {"units": "seconds", "dtype": "timedelta64[s]"})  # finer than the dtype: kept
    add("float64_days", np.array([0.5, 1 / 3, 1e5, -2.75, np.nan]), {"units": "days"})
    add("uint64_min", np.array([0, 5, 2**40, 2**57], dtype="u8"), {"units": "minutes", "dtype": "timedelta64[s]"})
    add("uint8_days", np.array([0, 1, 200, 255], dtype="u1"), {"units": "days"})
    add("int8_masked", np.array([-128, 0, 5, 127], dtype="i1"), {"units": "hours", "_FillValue": -128})
    add("missing_list", np.arange(8, dtype="i4"), {"units": "minutes", "missing_value": [3, 4]})
    add("missing_mixed", np.arange(8, dtype="i8"), {"units": "seconds", "missing_value": [2, 5.0]})
    add("missing_str", np.arange(4, dtype="i8"), {"units": "seconds", "missing_value": "2"})
    # a float in the list makes it float64 (np.ravel): 2^53 + 1 then equals 2^53
    add("missing_mixed_big", np.array([2**53, 3], dtype="i8"),
        {"units": "nanoseconds", "missing_value": [2**53 + 1, 0.5]})
    add("int64_nat", np.array([NAT_MIN, 1, -1, 2**62], dtype="i8"), {"units": "nanoseconds"})
    add("int_scale", np.array([1, -2, 3, 1000], dtype="i2"), {"units": "minutes", "scale_factor": 3})
    add("int_scale_offset", np.array([1, -2, 3], dtype="i4"), {"units": "seconds", "scale_factor": 2, "add_offset": 1})
    add("float_scale_int", np.array([1.5, -2.7, 3.9], dtype="f8"), {"units": "seconds", "scale_factor": 2})
    add("dtype_h", np.array([1, 2, -3], dtype="i8"), {"units": "hours", "dtype": "timedelta64[h]"})
    add("dtype_10s", np.array([1, 2, -3], dtype="i8"), {"units": "seconds", "dtype": "timedelta64[10s]"})
    add("dtype_ps", np.array([1, 2, -3], dtype="i8"), {"units": "microseconds", "dtype": "timedelta64[ps]"})
    add("packed_f32", np.array([1, 2, 3, -1], dtype="f4"), {"units": "seconds", "scale_factor": 0.1, "_FillValue": -1.0}
        if fmt == 2 else {"units": "seconds", "scale_factor": 0.1})
    if fmt == 3:
        add("v3_fill_float_on_int", np.array([0, 3, 4, 5], dtype="i8"), {"units": "minutes", "_FillValue": 3.7})
        add("v3_missing_chunk", np.array([1, 2, 3, 4], dtype="f8"), {"units": "seconds"}, fill=2.5, chunks=(2,))
    else:
        add("v2_null_fill_attr", np.array([1, 2, 3], dtype="i8"), {"units": "seconds", "_FillValue": 2})
        add("v2_fill_overrides", np.array([1, 2, 5], dtype="i8"), {"units": "seconds", "_FillValue": 2}, fill=5)
        add("v2_missing_chunk", np.array([1, 2, 3, 4], dtype="i2"),
            {"units": "seconds", "scale_factor": 0.25}, fill=7, chunks=(2,))
        big = g.create_array("v2_big_endian", shape=(4,), dtype=">i4", chunks=(4,), fill_value=None)
        big[...] = np.array([1, -1, 2**30, -(2**31)], dtype=">i4")
        big.attrs.update({"units": "seconds", "_ARRAY_DIMENSIONS": ["b0"]})
        names.append("v2_big_endian")
        bigf = g.create_array("v2_big_f8", shape=(3,), dtype=">f8", chunks=(3,), fill_value=None)
        bigf[...] = np.array([1.25, np.nan, -7.5], dtype=">f8")
        bigf.attrs.update({"units": "hours", "_ARRAY_DIMENSIONS": ["b1"]})
        names.append("v2_big_f8")
    twins = {}
    for spelling, plural in (("hr", "hours"), ("s", "seconds"), ("day", "days"), ("min", "minutes"),
                             ("ms", "milliseconds"), ("us", "microseconds"), ("ns", "nanoseconds")):
        data = np.array([1, -2, 30, 4000], dtype="i8")
        for nm, u in ((f"ud_{spelling}", spelling), (f"ud_{spelling}_twin", plural)):
            mk(g, nm, data, {"units": u}, ["u0"], (4,), 0 if fmt == 3 else None)
        twins[f"ud_{spelling}"] = f"ud_{spelling}_twin"
        names.append(f"ud_{spelling}_twin")
    if fmt == 3:
        (store / "v3_missing_chunk" / "c" / "1").unlink()
    else:
        (store / "v2_missing_chunk" / "1").unlink()
    return names, twins


@pytest.mark.parametrize("fmt", [2, 3])
def test_rules(tmp_path, zf_mount, fmt):
    store = tmp_path / f"rules{fmt}.zarr"
    names, twins = write_rules(store, fmt)
    m = zf_mount(store)
    assert arrays_shown(m) == sorted(names + list(twins))
    for name in names:
        check_array(m, store, name, False)
    for spelling, twin in twins.items():  # UDUNITS spellings: xarray leaves them as numbers
        values, dims = xr_values(store, twin, False)
        txt, csv = expected_files(values, dims, spelling)
        check_bytes(m, spelling + ".txt", txt, 3)
        check_bytes(m, spelling + ".csv", csv, 4)


def test_nat_option(tmp_path, zf_mount):
    store = tmp_path / "nat.zarr"
    names, _ = write_rules(store, 3)
    m = zf_mount(store, "-o", "nat=missing")
    for name in ("float32_s", "int8_masked", "int64_nat"):
        check_array(m, store, name, False, nat="missing")


# ---------------------------------------------------------------------------
# values xarray cannot decode

def test_out_of_range(tmp_path, zf_mount):
    """Beyond int64 ticks xarray raises OutOfBoundsTimedelta; zarrfs fails
    the reads that touch that chunk with EIO (log line), the rest reads."""
    store = tmp_path / "oor.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=3)
    vals = np.array([1, 2, 3, 10**11, 5, 6], dtype="i8")
    v3_array(g, "big", vals, {"units": "seconds"}, ["t"], (3,), 0)          # chunk 1: 1e11 s
    v3_array(g, "big_days", np.array([1, 2**62], dtype="i8"), {"units": "days", "dtype": "timedelta64[s]"},
             ["t"], (1,), 0)
    v3_array(g, "inf", np.array([1.0, np.inf], dtype="f8"), {"units": "seconds"}, ["t"], (1,), 0.0)
    v3_array(g, "u64", np.array([1, 2**63 + 5], dtype="u8"), {"units": "seconds", "dtype": "timedelta64[s]"},
             ["t"], (1,), 0)
    v3_array(g, "fill_oor", np.array([1, 2], dtype="i8"), {"units": "days"}, ["t"], (1,), 2**62)
    (store / "fill_oor" / "c" / "1").unlink()
    ok = np.array([1, 2, 3], dtype="i8")
    v3_array(g, "ok", ok, {"units": "hours"}, ["t"], (3,), 0)
    for name in ("big", "big_days", "inf", "u64", "fill_oor"):
        with pytest.raises((OverflowError, pd.errors.OutOfBoundsTimedelta, ValueError)):
            xr_values(store, name, False)
    m = zf_mount(store)
    assert arrays_shown(m) == ["big", "big_days", "fill_oor", "inf", "ok", "u64"]
    # the first chunk of "big" reads; the second fails with EIO
    first = b"0 days 00:00:01\n0 days 00:00:02\n0 days 00:00:03\n"
    assert m.preads("big.txt", [(0, len(first))]) == [first]
    for name in ("big", "big_days", "inf", "u64", "fill_oor"):
        with pytest.raises(OSError) as e:
            m.read(name + ".txt")
        assert e.value.errno == errno.EIO, name
    check_array(m, store, "ok", False)
    log = m.log()
    assert "beyond int64 ns ticks" in log and "fill value" in log


# ---------------------------------------------------------------------------
# -o cf= and damaged attributes

def write_modes(store):
    g = zarr.open_group(str(store), mode="w", zarr_format=3)
    d = np.array([1, 2, 3], dtype="i8")
    native = g.create_array("native", shape=(3,), dtype="m8[s]", chunks=(3,), dimension_names=["t"])
    native[...] = d.astype("m8[s]")
    v3_array(g, "with_dtype", d, {"units": "seconds", "dtype": "timedelta64[s]"}, ["t"], (3,), 0)
    v3_array(g, "units_only", d, {"units": "seconds"}, ["t"], (3,), 0)
    v3_array(g, "udunits", d, {"units": "s"}, ["t"], (3,), 0)
    v3_array(g, "time_point", d, {"units": "seconds since 2000-01-01"}, ["t"], (3,), 0)
    v3_array(g, "plain", d, {"units": "m"}, ["t"], (3,), 0)  # metres? "m" is no duration unit
    v3_array(g, "no_units", d, {}, ["t"], (3,), 0)


@pytest.mark.parametrize("mode,shown", [
    (None, ["native", "time_point", "udunits", "units_only", "with_dtype"]),
    ("all", ["native", "time_point", "udunits", "units_only", "with_dtype"]),
    ("dtype", ["native", "time_point", "with_dtype"]),  # xarray decodes time stamps by default
    ("off", ["native"]),
])
def test_cf_modes(tmp_path, zf_mount, mode, shown):
    store = tmp_path / "modes.zarr"
    write_modes(store)
    m = zf_mount(store, *(["-o", f"cf={mode}"] if mode else []))
    assert arrays_shown(m) == shown
    if "with_dtype" in shown:
        check_array(m, store, "with_dtype", False)


def test_cf_mode_invalid(tmp_path):
    import subprocess

    from conftest import zarrfs_bin

    store = tmp_path / "modes.zarr"
    write_modes(store)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = subprocess.run([str(zarrfs_bin()), "-f", "-o", "cf=some", str(store), str(mnt)],
                       capture_output=True, timeout=30)
    assert r.returncode == 1 and b"unknown cf" in r.stderr


DAMAGED = {
    # name: (data, attributes, fill)
    "bad_scale": (np.array([1, 2], dtype="i2"), {"units": "seconds", "scale_factor": "x"}, 0),
    "bad_offset_null": (np.array([1, 2], dtype="i2"), {"units": "seconds", "add_offset": None}, 0),
    "bad_base64": (np.array([1.0, 2.0]), {"units": "seconds", "_FillValue": "AAAA"}, 0.0),
    "bad_fill_number_on_float": (np.array([1.0, 2.0]), {"units": "seconds", "_FillValue": 1.0}, 0.0),
    "bad_fill_str_on_int": (np.array([1, 2]), {"units": "seconds", "_FillValue": "1"}, 0),
    "bad_units_type": (np.array([1, 2]), {"units": 5}, 0),
    "bad_dtype_attr": (np.array([1, 2]), {"units": "seconds", "dtype": "timedelta64[xx]"}, 0),
    "bad_dtype_generic": (np.array([1, 2]), {"units": "seconds", "dtype": "timedelta64"}, 0),
    "bad_missing_bool": (np.array([1, 2]), {"units": "seconds", "missing_value": True}, 0),
}


def test_damaged_cf_attributes(tmp_path, zf_mount):
    store = tmp_path / "damaged.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=3)
    for name, (data, attrs, fill) in DAMAGED.items():
        v3_array(g, name, data, attrs, ["t"], data.shape, fill)
    clean = tmp_path / "clean.zarr"  # xarray cannot open the damaged store at all
    for where in (store, clean):
        grp = g if where == store else zarr.open_group(str(clean), mode="w", zarr_format=3)
        v3_array(grp, "ok", np.array([4, 5], dtype="i8"), {"units": "minutes"}, ["t"], (2,), 0)
    m = zf_mount(store)
    assert arrays_shown(m) == ["ok"]
    values, dims = xr_values(clean, "ok", False)
    txt, csv = expected_files(values, dims, "ok")
    check_bytes(m, "ok.txt", txt, 5)
    check_bytes(m, "ok.csv", csv, 6)
    log = m.log()
    for name in DAMAGED:
        assert f"/{name}: left out" in log, name
