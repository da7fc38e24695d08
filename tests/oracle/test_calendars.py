"""CF calendars (issue 27 section 1): time stamps xarray decodes with cftime.

Stores are written by xarray.Dataset.to_zarr from cftime coordinates
(xr.date_range(..., calendar=..., use_cftime=True)) in every calendar, as
integer and float counts, and by zarr-python with the attributes other
writers use (packing, masks, negative counts, reference dates in years
1..9999 and beyond, UDUNITS unit words).  The reference is xarray with cftime,
decoding each array as a whole (xr.open_zarr(..., chunks=None): what a
dimension coordinate gets, and every variable when opened without dask):
cftime objects, or datetime64[ns] where xarray makes them so.  Every byte of
.txt and .csv is compared, in every -o format:

  pandas, numpy   str() of the cftime object (datetime64: str(pandas.Timestamp))
  iso             isoformat()
  seconds, raw    seconds and microseconds after the array's reference date,
                  from cftime's own date arithmetic (datetime64: since 1970, ns)

A masked count is NaT in zarrfs, where xarray gives the reference date (a
float) or raises (an integer): README says so; those values are taken from
the stored data, everything else from xarray.
"""

from __future__ import annotations

import fractions
import functools
import json
import warnings

import cftime
import numpy as np
import pandas as pd
import pytest

import xarray as xr
import zarr

from test_cf import NAN_B64, arrays_shown, check_bytes, v2_array, v3_array
from test_datetime import seconds_text

pytestmark = pytest.mark.filterwarnings("ignore")

CALENDARS = ["standard", "gregorian", "proleptic_gregorian", "julian", "noleap", "365_day",
             "all_leap", "366_day", "360_day"]
FORMATS = ["pandas", "iso", "numpy", "seconds", "raw"]


# ---------------------------------------------------------------------------
# the stores

def dates(cal, start, n, freq):
    return xr.date_range(start, periods=n, freq=freq, calendar=cal, use_cftime=True)


def xarray_store(path, fmt):
    """Every calendar: xarray's own encoding (int64 days or finer), float64,
    float32, counts before the reference date; the standard calendars past
    2262 and before 1678; a labelled pair (a time coordinate and a data
    variable of time stamps on it)."""
    ds, enc = xr.Dataset(), {}

    def add(name, t, e=None, chunks=3):
        ds[name] = (name + "_i", t)
        enc[name] = dict(e or {}, chunks=(chunks,))

    for cal in CALENDARS:
        c = cal.replace("_", "")
        add(f"{c}_int", dates(cal, "0001-01-01", 9, "397D"))
        add(f"{c}_us", dates(cal, "1999-12-28 23:59:59", 7, "1000001us"))
        add(f"{c}_f64", dates(cal, "1999-12-30 18:00", 9, "7h"),
            {"units": "days since 2000-01-01", "dtype": "float64"})
        add(f"{c}_f32", dates(cal, "2000-01-01", 8, "90min"),
            {"units": "hours since 2000-01-01 00:00:00", "dtype": "float32"})
        add(f"{c}_neg", dates(cal, "1900-01-28", 9, "5YS"), {"units": "seconds since 2100-01-01"})
        add(f"{c}_far", dates(cal, "2250-01-01", 9, "20YS"), {"units": "days since 1850-01-01"})
        add(f"{c}_old", dates(cal, "1500-02-28", 9, "25YS"), {"units": "hours since 1700-01-01"})
        add(f"{c}_y9999", dates(cal, "9999-12-30", 4, "12h"), {"units": "hours since 9999-01-01"})
    # a time coordinate labelling a variable (noleap and past 2262)
    for cal, start in (("noleap", "2015-01-01"), ("360_day", "2299-12-01"), ("standard", "2261-06-01")):
        t = dates(cal, start, 12, "MS")
        name = f"valid_{cal}"
        ds = ds.assign_coords({f"time_{cal}": t})
        ds[name] = (f"time_{cal}", dates(cal, "2100-01-01", 12, "D"))
        enc[name] = {"chunks": (5,)}
        enc[f"time_{cal}"] = {"chunks": (5,)}
    ds.to_zarr(str(path), zarr_format=fmt, mode="w", encoding=enc)
    return sorted(enc)


def hand_store(path, fmt):
    """What other writers store: packing, masks (NaN, _FillValue, v2
    fill_value), unit words cftime reads and xarray's pandas path does not,
    reference dates in the calendar's own forms."""
    g = zarr.open_group(str(path), mode="w", zarr_format=fmt)
    w = v3_array if fmt == 3 else v2_array
    nan_mask = {"_FillValue": NAN_B64} if fmt == 3 else {}
    f = np.array([0.0, 1.5, np.nan, -2.25, 1e-7, 36524.25, 0.000001, 59.999999, 1 / 3])
    days = np.array([0, 1, 59, 60, 365, -1, -366, 146097, 106751], dtype="i8")
    names = []

    def add(name, data, attrs, fill=None):  # v2: a fill_value is a mask
        w(g, name, data, attrs, [name + "_i"], (4,), fill if fill is not None or fmt == 2 else 0)
        names.append(name)

    add("noleap_nan", f, {"units": "days since 2000-01-01", "calendar": "noleap", **nan_mask},
        float("nan"))
    add("d360_secs_f", f * 86400, {"units": "seconds since 1979-02-30", "calendar": "360_day",
                                   **nan_mask}, float("nan"))
    add("julian_mask_int", days, {"units": "days since 0001-01-01", "calendar": "julian",
                                  "_FillValue": 59}, 59)
    add("allleap_pack", np.array([0, 1, -1, 2, 300, -300, 7, 8, 9], dtype="i2"),
        {"units": "days since 2000-02-29", "calendar": "all_leap", "scale_factor": 0.25,
         "add_offset": 10.0, "_FillValue": -1}, -1)
    add("noleap_hrs", days, {"units": "hrs since 2000-01-01 06:30:00.5", "calendar": "noleap"})
    add("std_msec", days * 1000, {"units": "msec since 1-1-1", "calendar": "gregorian"})
    add("std_zone", days, {"units": "minutes since 1500-01-01T00:00:00+05:30"})
    add("pg_year0", days, {"units": "days since 0000-03-01", "calendar": "proleptic_gregorian"})
    add("julian_bc", days, {"units": "days since -0100-12-31 12:00", "calendar": "julian"})
    add("noleap_y12345", days, {"units": "common_years since 12345-06-07", "calendar": "noleap"})
    add("d360_months", days, {"units": "months since 2000-01-30", "calendar": "360_day"})
    add("std_ref1_ns", days[:5] + 730000, {"units": "days since 0001-01-01", "calendar": "standard"})
    # the ns range's microsecond ends: inside (datetime64), one beyond (cftime objects)
    add("edge_in", np.array([145225, 145226, 10**6, 2**52], dtype="i8"),
        {"units": "microseconds since 1677-09-21 00:12:43", "calendar": "standard"})
    add("edge_out", np.array([854775, 854774, 854776, -1], dtype="i8"),
        {"units": "microseconds since 2262-04-11 23:47:16"})
    add("u32_noleap", np.array([0, 1, 4294967295, 86400, 7, 8, 9, 10, 11], dtype="u4"),
        {"units": "seconds since 2000-01-01", "calendar": "noleap"})
    return sorted(names)


# ---------------------------------------------------------------------------
# expected text, from xarray and cftime

@functools.lru_cache(maxsize=None)
def opened(store, decode_times=True, mask_and_scale=True):
    """the store as xarray opens it without dask (each variable decoded as a
    whole when read)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xr.open_zarr(str(store), chunks=None, decode_times=decode_times,
                            mask_and_scale=mask_and_scale)


@functools.lru_cache(maxsize=None)
def decoded(store, name, mask_and_scale=True):
    """xarray's values of one array decoded as a whole, its dims and encoding."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        da = opened(store, mask_and_scale=mask_and_scale)[name]
        return da.values, list(da.dims), da.encoding


@functools.lru_cache(maxsize=None)
def masked_positions(store, name):
    """where the stored counts are masked (zarrfs: NaT)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = opened(store, decode_times=False)[name].values
    return np.isnan(v) if v.dtype.kind == "f" else np.zeros(v.shape, bool)


def value_text(v, fmt, base):
    if isinstance(v, np.datetime64):
        ts = pd.Timestamp(v)
        if fmt == "pandas":
            return str(ts)
        if fmt == "iso":
            return ts.isoformat()
        if fmt == "numpy":
            return str(v.astype("M8[ns]"))
        ns = int(v.astype("M8[ns]").astype("i8"))
        return str(ns) if fmt == "raw" else seconds_text(fractions.Fraction(ns, 10**9))
    if fmt in ("pandas", "numpy"):
        return str(v)
    if fmt == "iso":
        return v.isoformat()
    td = v - base
    us = (td.days * 86400 + td.seconds) * 10**6 + td.microseconds
    return str(us) if fmt == "raw" else seconds_text(fractions.Fraction(us, 10**6))


def expected(store, name, fmt, nat="NaT"):
    mask = masked_positions(store, name)
    try:
        values, dims, enc = decoded(store, name)
    except (OverflowError, ValueError):  # a masked integer: xarray raises, zarrfs writes NaT
        assert mask.any(), name
        values, dims, enc = decoded(store, name, mask_and_scale=False)
    base = cftime.num2date(0, enc["units"], enc.get("calendar", "standard"))
    lines = [nat if mask.ravel()[k] else value_text(v, fmt, base)
             for k, v in enumerate(values.ravel())]
    txt = "".join(s + "\n" for s in lines).encode()
    out = [",".join(dims + [name])]
    for idx, text in zip(np.ndindex(*values.shape), lines):
        out.append(",".join([str(i) for i in idx] + [text]))
    return txt, "".join(s + "\n" for s in out).encode(), values


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("calendars")
    out = {}
    for fmt in (2, 3):
        out[("xr", fmt)] = (root / f"xr{fmt}.zarr", xarray_store(root / f"xr{fmt}.zarr", fmt))
        out[("hand", fmt)] = (root / f"hand{fmt}.zarr", hand_store(root / f"hand{fmt}.zarr", fmt))
    return out


def plain_arrays(names):
    return [n for n in names if not n.startswith(("valid_", "time_"))]


@pytest.mark.parametrize("kind", ["xr", "hand"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_calendars_pandas(stores, zf_mounter_module, kind, fmt):
    store, names = stores[(kind, fmt)]
    m = zf_mounter_module(store, "-o", "labels=index")
    assert [n for n in arrays_shown(m) if n in names] == names
    for name in plain_arrays(names):
        txt, csv, values = expected(store, name, "pandas")
        check_bytes(m, name + ".txt", txt, 1)
        check_bytes(m, name + ".csv", csv, 2)


@pytest.mark.parametrize("form", FORMATS[1:])
def test_calendars_formats(stores, zf_mounter_module, form):
    for kind in ("xr", "hand"):
        store, names = stores[(kind, 3)]
        m = zf_mounter_module(store, "-o", f"format={form},labels=index")
        for name in plain_arrays(names):
            txt, _, _ = expected(store, name, form)
            check_bytes(m, name + ".txt", txt, 3)


def test_what_xarray_decodes(stores):
    """the cases are what they claim: cftime objects, or datetime64 where
    xarray makes them so (the ns boundary, a standard calendar in range)"""
    store, names = stores[("xr", 3)]
    kinds = {n: decoded(store, n)[0].dtype.kind for n in plain_arrays(names)}
    assert kinds["standard_us"] == "M" and kinds["standard_far"] == "O"
    assert kinds["standard_old"] == "O" and kinds["prolepticgregorian_far"] == "O"
    assert kinds["standard_int"] == "O" and kinds["noleap_us"] == "O"
    hstore, hnames = stores[("hand", 3)]
    assert decoded(hstore, "std_ref1_ns")[0].dtype.kind == "M"
    assert decoded(hstore, "edge_in")[0].dtype.kind == "M"
    assert decoded(hstore, "edge_out")[0].dtype.kind == "O"
    assert decoded(hstore, "std_zone")[0].dtype.kind == "O"


def test_labelled_csv(stores, zf_mounter_module):
    """time coordinates in other calendars label rows as xarray writes them"""
    for fmt in (2, 3):
        store, names = stores[("xr", fmt)]
        m = zf_mounter_module(store, "-o", "nat=")
        for name in (n for n in names if n.startswith("valid_")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = opened(store)[[name]].to_dataframe().to_csv().encode()
            check_bytes(m, name + ".csv", want, 4)


@pytest.mark.parametrize("form", FORMATS[1:])
def test_labelled_csv_formats(stores, zf_mounter_module, form):
    """-o format= writes a cftime time coordinate's label column as its own
    .txt does (each object's text in that format), the values beside it too"""
    store, names = stores[("xr", 3)]
    m = zf_mounter_module(store, "-o", f"format={form}")
    for name in (n for n in names if n.startswith("valid_")):
        coord = "time_" + name[len("valid_"):]
        ctxt, _, cvals = expected(store, coord, form)
        vtxt, _, _ = expected(store, name, form)
        if coord != "time_standard":
            assert cvals.dtype.kind == "O", coord  # cftime objects as labels
        rows = zip(ctxt.decode().splitlines(), vtxt.decode().splitlines())
        want = f"{coord},{name}\n" + "".join(f"{c},{v}\n" for c, v in rows)
        check_bytes(m, name + ".csv", want.encode(), 4)


def test_info_names_the_calendar(stores, zf_mounter_module):
    store, names = stores[("xr", 3)]
    m = zf_mounter_module(store)
    for name in ("noleap_int", "360day_f64", "julian_neg", "standard_far"):
        info = dict(line.split(": ", 1) for line in m.read(name + ".info").decode().splitlines())
        attrs = json.loads((store / name / "zarr.json").read_text())["attributes"]
        assert info["calendar"].startswith(attrs["calendar"]), info
        assert "cftime.Datetime" in info["calendar"]
        assert info["epoch"].startswith(cftime.num2date(0, attrs["units"], attrs["calendar"]).isoformat())
    info = m.read("noleap_int.info").decode()
    assert "unit: us\n" in info and "raw and seconds count from the epoch" in info


def test_info_follows_the_switch(stores, zf_mounter_module):
    """a standard-calendar array becomes cftime objects when sized: its
    .info (built again at each open) then gives the ticks and the fill value
    as cftime objects"""
    store, _ = stores[("hand", 3)]
    m = zf_mounter_module(store)
    fill = b"fill_value_decoded: 2262-04-11 23:47:16 ("
    before = m.read("edge_out.info")
    assert b"unit: ns\n" in before and fill in before, before
    m.read("edge_out.txt")
    after = m.read("edge_out.info")
    assert b"unit: us\n" in after and fill in after, after


def test_left_out(tmp_path, zf_mount):
    """what cftime cannot decode either: an unknown calendar, a unit it does
    not know, a reference date not in the calendar or in the 1582 gap"""
    store = tmp_path / "left.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=3)
    d = np.array([0, 1], dtype="i8")
    bad = {"lunar": {"units": "days since 2000-01-01", "calendar": "lunar"},
           "noleap_ns": {"units": "nanoseconds since 2000-01-01", "calendar": "noleap"},
           "noleap_feb29": {"units": "days since 2000-02-29", "calendar": "noleap"},
           "std_gap": {"units": "days since 1582-10-10"},
           "julian_year0": {"units": "days since 0000-01-01", "calendar": "julian"},
           "d360_day31": {"units": "days since 2000-01-31", "calendar": "360_day"}}
    for name, attrs in bad.items():
        v3_array(g, name, d, attrs, ["t"], (2,), 0)
        with pytest.raises(Exception):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                xr.open_zarr(str(store), chunks=None)[name].values
        del g[name]
    for name, attrs in bad.items():
        v3_array(g, name, d, attrs, ["t"], (2,), 0)
    v3_array(g, "good", d, {"units": "days since 2000-01-01", "calendar": "noleap"}, ["t"], (2,), 0)
    m = zf_mount(store)
    assert arrays_shown(m) == ["good"]
    log = m.log()
    for name in bad:
        assert f"/{name}: left out" in log, name
