"""Time stamps (issue 17): native datetime64 arrays and CF-encoded time stamps.

Native arrays (v3 numpy.datetime64, v2 M8) are written by zarr-python 3.1 at
every unit and several scale factors, with NaT, fill values and missing
chunks; every .txt/.csv byte must equal the text numpy and pandas give for
the value (pandas: str(pandas.Timestamp(v)); iso: Timestamp.isoformat();
numpy: str(numpy.datetime64); seconds: seconds since the epoch from numpy's
integers; raw: the stored integer), with exact st_size and random preads.
Where pandas cannot hold a value (beyond int64 seconds, or finer than ns)
the expected pandas text is numpy's string of it in pandas' layout.

CF time stamps are written by xarray.Dataset.to_zarr (v2 and v3, int64 and
float encodings, several reference dates) or by zarr-python with the
attributes xarray reads (packing, masks, calendars, time zones); the
reference is xarray.open_zarr(..., decode_times=True) itself.
"""

from __future__ import annotations

import errno
import fractions
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import dask  # noqa: F401 - xarray.open_zarr(chunks={}) needs it
import xarray as xr
import zarr

from test_cf import NAN_B64, arrays_shown, check_bytes, v2_array, v3_array

pytestmark = pytest.mark.filterwarnings("ignore")

E18 = 10**18
AS = {"W": 604800 * E18, "D": 86400 * E18, "h": 3600 * E18, "m": 60 * E18, "s": E18,
      "ms": 10**15, "us": 10**12, "ns": 10**9, "ps": 10**6, "fs": 10**3, "as": 1}
UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"]
FORMATS = ["pandas", "iso", "numpy", "seconds", "raw"]


# ---------------------------------------------------------------------------
# expected text of one value, from numpy and pandas

def pandas_layout(np_text, unit, sep):
    """numpy's string of a value at its unit, in pandas' layout (used only
    where pandas.Timestamp cannot hold the value)."""
    date, _, clock = np_text.partition("T")
    if unit == "Y":
        date += "-01-01"
    elif unit == "M":
        date += "-01"
    clock = clock + "00:00:00"[len(clock):]  # "", "hh", "hh:mm" -> "hh:mm:ss"
    hms, _, frac = clock.partition(".")
    frac = frac.rstrip("0")
    if frac:
        digits = next(d for d in (6, 9, 12, 15, 18) if len(frac) <= d)
        frac = "." + frac.ljust(digits, "0")
    return date + sep + hms + frac


def stamp_text(fmt, stored, unit, scale, nat="NaT"):
    """The text of a stored int64 of datetime64[<scale><unit>]."""
    if stored == np.iinfo(np.int64).min:
        return nat
    if fmt == "raw":
        return str(stored)
    dt = f"M8[{scale}{unit}]" if scale > 1 else f"M8[{unit}]"
    x = np.array([stored], dtype="i8").view(dt)
    if fmt == "numpy":
        return str(x[0])
    base = x.astype(f"M8[{unit}]")[0]  # the scale folded in (values stay far from overflow)
    if fmt == "seconds":
        if unit in ("Y", "M"):
            sec = fractions.Fraction(int(base.astype("M8[D]").astype("i8")) * 86400)
        else:
            sec = fractions.Fraction(int(base.astype("i8")) * AS[unit], E18)
        return seconds_text(sec)
    sep = " " if fmt == "pandas" else "T"
    fine = unit in ("ps", "fs", "as") and int(base.astype("i8")) * AS[unit] % 10**9
    if not fine:
        try:
            t = pd.Timestamp(base)
            return str(t) if fmt == "pandas" else t.isoformat()
        except (OverflowError, ValueError, pd.errors.OutOfBoundsDatetime):
            pass
    return pandas_layout(str(base), unit, sep)


def seconds_text(sec):
    sign = "-" if sec < 0 else ""
    sec = abs(sec)
    whole = sec.numerator // sec.denominator
    rest = sec - whole
    if not rest:
        return sign + str(whole)
    digits = str(rest.numerator * E18 // rest.denominator).zfill(18).rstrip("0")
    return sign + str(whole) + "." + digits


def files_of(lines, dims, name, shape):
    txt = "".join(s + "\n" for s in lines).encode()
    out = [",".join(list(dims) + [name])]
    if not shape:
        out.append(lines[0])
    else:
        for idx, text in zip(np.ndindex(*shape), lines):
            out.append(",".join([str(i) for i in idx] + [text]))
    return txt, "".join(s + "\n" for s in out).encode()


# ---------------------------------------------------------------------------
# native datetime64 arrays (zarr-python)

def native_values(unit, scale, n, rng):
    """stored int64 values: random in a range numpy prints without wrapping
    (|days| < 2^50), beyond pandas' ns and s ranges where the unit allows,
    small values around the epoch, and NaT."""
    span = {"Y": 2**40, "M": 2**44, "W": 2**46, "D": 2**49, "h": 2**53, "m": 2**59}.get(unit, 2**62)
    span //= scale
    v = rng.integers(-span, span, n, dtype="i8")
    v[: n // 4] = rng.integers(-100000, 100000, n // 4)
    v[1] = -1
    v[2] = 0
    v[n // 3::11] = np.iinfo(np.int64).min
    return v


NATIVE = [  # (zarr format, name, unit, scale, byte order)
    *[(3, f"v3_{u}", u, 1, "<") for u in UNITS],
    (3, "v3_10s", "s", 10, "<"), (3, "v3_25D", "D", 25, "<"), (3, "v3_3M", "M", 3, "<"),
    (3, "v3_7ms", "ms", 7, "<"), (3, "v3_1000ns", "ns", 1000, "<"),
    (3, "v3_maxus", "us", 2147483647, "<"),
    (2, "v2_ns", "ns", 1, "<"), (2, "v2_10s", "s", 10, ">"), (2, "v2_D", "D", 1, "<"),
    (2, "v2_h", "h", 1, ">"), (2, "v2_ps", "ps", 1, "<"), (2, "v2_Y", "Y", 1, "<"),
]


def write_native(root):
    rng = np.random.default_rng(17)
    stores = {2: root / "native2.zarr", 3: root / "native3.zarr"}
    groups = {f: zarr.open_group(str(s), mode="w", zarr_format=f) for f, s in stores.items()}
    expected = {}
    for fmt, name, unit, scale, order in NATIVE:
        dt = f"M8[{scale}{unit}]" if scale > 1 else f"M8[{unit}]"
        n = 600
        vals = native_values(unit, scale, n, rng)
        kw = {"dimension_names": ["t"]} if fmt == 3 else {}
        a = groups[fmt].create_array(name, shape=(n,), dtype=np.dtype(dt).newbyteorder(order),
                                     chunks=(64,), fill_value=np.datetime64("NaT"), **kw)
        a[...] = vals.view(dt)
        expected[name] = (stores[fmt], unit, scale, vals, ["t"] if fmt == 3 else ["dim_0"])
    # fill values: NaT and an integer, with chunks never written; a 2-D array
    g = groups[3]
    a = g.create_array("fill_nat", shape=(10,), dtype="M8[s]", chunks=(4,),
                       fill_value=np.datetime64("NaT"), dimension_names=["t"])
    a[0:4] = np.arange(4).astype("M8[s]")
    b = g.create_array("fill_int", shape=(10,), dtype="M8[h]", chunks=(4,),
                       fill_value=np.datetime64(-5, "h"), dimension_names=["t"])
    b[4:8] = np.array([1, 2, np.iinfo(np.int64).min, 3], dtype="i8").view("M8[h]")
    c = g.create_array("grid", shape=(5, 7), dtype="M8[ms]", chunks=(2, 3),
                       fill_value=np.datetime64("NaT"), dimension_names=["y", "x"])
    c[...] = (rng.integers(-2**50, 2**50, 35, dtype="i8")).reshape(5, 7).view("M8[ms]")
    for name, unit in (("fill_nat", "s"), ("fill_int", "h"), ("grid", "ms")):
        arr = zarr.open_array(str(stores[3]), path=name, mode="r")
        vals = arr[...].view("i8")
        expected[name] = (stores[3], unit, 1, vals, list(arr.metadata.dimension_names))
    for f, s in stores.items():
        zarr.consolidate_metadata(str(s), zarr_format=f)
    return stores, expected


@pytest.fixture(scope="module")
def native(tmp_path_factory, zf_mounter_module):
    root = tmp_path_factory.mktemp("dt_native")
    stores, expected = write_native(root)
    mounts = {}
    for fmt in FORMATS:
        for f, s in stores.items():
            opts = ["-o", f"format={fmt}"] + (["-o", "nat="] if fmt == "iso" else [])
            mounts[(fmt, f)] = zf_mounter_module(s, *opts)
    return expected, mounts


@pytest.mark.parametrize("fmt", FORMATS)
def test_native(native, fmt):
    expected, mounts = native
    for name, (store, unit, scale, vals, dims) in expected.items():
        m = mounts[(fmt, 3 if store.name == "native3.zarr" else 2)]
        # what zarr-python reads back is what the text is made of
        got = zarr.open_array(str(store), path=name, mode="r")[...]
        got = got.astype(got.dtype.newbyteorder("=")).view("i8")
        assert np.array_equal(got.ravel(), np.asarray(vals).ravel()), name
        nat = "" if fmt == "iso" else "NaT"
        lines = [stamp_text(fmt, int(v), unit, scale, nat) for v in np.asarray(vals).ravel()]
        txt, csv = files_of(lines, dims, name, np.shape(vals))
        check_bytes(m, name + ".txt", txt, 1)
        check_bytes(m, name + ".csv", csv, 2)


def test_native_shown_and_info(native):
    expected, mounts = native
    m = mounts[("pandas", 3)]
    assert set(arrays_shown(m)) == {n for n, e in expected.items() if e[0].name == "native3.zarr"}
    info = dict(line.split(": ", 1) for line in m.read("v3_10s.info").decode().splitlines())
    assert info["data_type"] == "numpy.datetime64[10s]"
    assert info["unit"] == "s" and info["scale_factor"] == "10"
    assert info["encoding"] == "native numpy.datetime64"
    assert info["epoch"].startswith("1970-01-01T00:00:00")
    assert info["calendar"].startswith("proleptic_gregorian")
    info = dict(line.split(": ", 1) for line in m.read("fill_int.info").decode().splitlines())
    assert info["fill_value"] == "-5 (1969-12-31 19:00:00)"
    m2 = mounts[("numpy", 2)]
    info = dict(line.split(": ", 1) for line in m2.read("v2_10s.info").decode().splitlines())
    assert info["data_type"] == ">M8[10s]"
    assert info["fill_value"].endswith("(NaT)")


# ---------------------------------------------------------------------------
# CF time stamps (xarray)

T_NS = np.array(["2000-01-01T06:00", "NaT", "1999-12-31T18:00:00.5", "2080-04-11",
                 "1800-09-22T00:00:00.000000001", "2024-02-29T23:59:59.999999999",
                 "1970-01-01", "1900-03-01T12:34:56.789"], dtype="M8[ns]")
# near the ends of int64 ns (a span xarray encodes only in coarse units)
EDGES = np.array(["1677-09-21T00:12:44", "2262-04-11T23:47:16", "NaT", "1677-09-22",
                  "2262-04-11", "2000-01-01", "1970-01-01T00:00:01", "1969-12-31T23:59:59"],
                 dtype="M8[s]")

XR_VARS = {  # name: (values, encoding)
    "auto_ns": (T_NS, {}),
    "auto_s": (T_NS.astype("M8[s]"), {}),
    "auto_ms": (T_NS.astype("M8[ms]"), {}),
    "sec_1970": (T_NS.astype("M8[s]"), {"units": "seconds since 1970-01-01", "dtype": "int64"}),
    "days_frac_ref": (T_NS, {"units": "days since 2000-01-01 06:00:00.5", "dtype": "float64"}),
    "neg_hours": (T_NS.astype("M8[h]"), {"units": "hours since 2060-01-01", "dtype": "int64"}),
    "f32_minutes": (T_NS, {"units": "minutes since 1999-12-31T23:00:00", "dtype": "float32"}),
    "us_ref_frac": (T_NS.astype("M8[us]"),
                    {"units": "microseconds since 1990-06-15 12:00:00.25", "dtype": "int64"}),
    "calendar_std": (T_NS.astype("M8[s]"), {"units": "minutes since 1980-01-01",
                                            "calendar": "standard"}),
    "edges_s": (EDGES, {"units": "seconds since 1970-01-01", "dtype": "int64"}),
    "edges_f64": (EDGES, {"units": "days since 1970-01-01", "dtype": "float64"}),
    # xarray picks a reference near the first value: the last one's count is
    # then beyond int64 ns; decoded with cftime, NaT (int64's least) is beyond
    # its range: xarray raises
    "edges_auto": (EDGES, {}),
}
XR_FAILS = {"edges_auto"}  # xarray fails to decode them: zarrfs reads fail with EIO


def write_xarray(root, fmt):
    store = root / f"cf{fmt}.zarr"
    t = xr.DataArray(np.arange(len(T_NS)), dims="time")
    ds = xr.Dataset({k: ("time", v) for k, (v, _) in XR_VARS.items()}, coords={"time": t})
    ds["grid"] = (("y", "x"), T_NS.reshape(2, 4))
    enc = {k: e for k, (_, e) in XR_VARS.items() if e}
    enc["grid"] = {"units": "hours since 2000-01-01", "dtype": "float64", "chunks": (1, 3)}
    for k in XR_VARS:
        enc.setdefault(k, {})["chunks"] = (3,)
    ds.to_zarr(str(store), zarr_format=fmt, mode="w", encoding=enc)
    return store, sorted(list(XR_VARS) + ["grid"])


def hand_attrs_writer(g, fmt):
    """what producers other than xarray write: packing, masks, time zones, calendars"""
    w = v3_array if fmt == 3 else v2_array
    hours = np.array([0, 1, -1, 36, 1000, -1000], dtype="i8")
    w(g, "tz_offset", hours, {"units": "hours since 2000-01-01T06:00:00+01:00"}, ["t"], (4,), 0)
    w(g, "tz_z", hours, {"units": "hours since 2000-01-01T06:00:00Z",
                         "calendar": "gregorian"}, ["t"], (4,), 0)
    w(g, "ref_date_only", hours, {"units": "Days since 2000-1-1", "calendar": "Standard"},
      ["t"], (4,), 0)
    packed = np.array([0, 1, -1, 2, 300, -300], dtype="i2")
    w(g, "packed_i16", packed, {"units": "days since 2000-01-01", "scale_factor": 0.5,
                                "add_offset": 10.0, "_FillValue": -1}, ["t"], (4,), -1)
    f = np.array([0.1, 1.5, np.nan, -2.25, 1e-7, 36524.25])
    mask = {"_FillValue": NAN_B64} if fmt == 3 else {}  # v2: the fill_value masks
    w(g, "float_days", f, {"units": "days since 1970-01-01 00:00:00", **mask}, ["t"], (4,),
      float("nan"))
    w(g, "u32_seconds", np.array([0, 1, 4294967295, 86400], dtype="u4"),
      {"units": "seconds since 1970-01-01"}, ["t"], (4,), 0)
    if fmt == 2:  # v2 fill_value acts as _FillValue: -1 is NaT
        w(g, "v2_fill_mask", hours, {"units": "hours since 2000-01-01"}, ["t"], (4,), -1)
    return sorted(["tz_offset", "tz_z", "ref_date_only", "packed_i16", "float_days",
                   "u32_seconds"] + (["v2_fill_mask"] if fmt == 2 else []))


def xr_stamps(store, name):
    others = [k for k in zarr.open_group(str(store), mode="r").array_keys() if k != name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = xr.open_zarr(str(store), decode_times=True, drop_variables=others, chunks={})
        da = ds[name]
        return da.values, list(da.dims)


def expected_cf(store, name, fmt="pandas"):
    values, dims = xr_stamps(store, name)
    assert values.dtype == np.dtype("M8[ns]"), (name, values.dtype)
    lines = []
    for v in values.ravel():
        if np.isnat(v):
            lines.append("NaT")
        elif fmt == "pandas":
            lines.append(str(pd.Timestamp(v)))
        elif fmt == "iso":
            lines.append(pd.Timestamp(v).isoformat())
        elif fmt == "numpy":
            lines.append(str(v))
        elif fmt == "seconds":
            lines.append(seconds_text(fractions.Fraction(int(v.astype("i8")), 10**9)))
        else:  # raw: the decoded int64 ns
            lines.append(str(int(v.astype("i8"))))
    return files_of(lines, dims, name, values.shape)


@pytest.fixture(scope="module")
def cf(tmp_path_factory, zf_mounter_module):
    root = tmp_path_factory.mktemp("dt_cf")
    out = {}
    for fmt in (2, 3):
        store, names = write_xarray(root, fmt)
        hand = root / f"hand{fmt}.zarr"
        hnames = hand_attrs_writer(zarr.open_group(str(hand), mode="w", zarr_format=fmt), fmt)
        out[fmt] = [(store, names, zf_mounter_module(store, "-o", "labels=index")),
                    (hand, hnames, zf_mounter_module(hand, "-o", "labels=index"))]
    return out


def check_fails(m, store, name):
    """xarray cannot decode the array; reads fail with EIO"""
    with pytest.raises((ImportError, OverflowError, ValueError)):
        xr_stamps(store, name)
    with pytest.raises(OSError) as e:
        m.read(name + ".txt")
    assert e.value.errno == errno.EIO


@pytest.mark.parametrize("fmt", [2, 3])
def test_cf_xarray(cf, fmt):
    for store, names, m in cf[fmt]:
        assert [n for n in arrays_shown(m) if n != "time"] == names
        for name in names:
            if name in XR_FAILS:
                check_fails(m, store, name)
                continue
            txt, csv = expected_cf(store, name)
            check_bytes(m, name + ".txt", txt, 1)
            check_bytes(m, name + ".csv", csv, 2)


@pytest.mark.parametrize("fmt", ["iso", "numpy", "seconds", "raw"])
def test_cf_formats(tmp_path, zf_mount, fmt):
    store, names = write_xarray(tmp_path, 3)
    m = zf_mount(store, "-o", f"format={fmt}")
    for name in set(names) - XR_FAILS:
        txt, csv = expected_cf(store, name, fmt)
        check_bytes(m, name + ".txt", txt, 1)


def test_cf_attrs_used(cf):
    """the attributes xarray wrote are the ones described"""
    store, names, m = cf[3][0]
    for name in names:
        attrs = json.loads((store / name / "zarr.json").read_text())["attributes"]
        if name in XR_FAILS:  # sized, it becomes cftime objects (whose read fails, as xarray's)
            with pytest.raises(OSError):
                m.read(name + ".txt")
        info = dict(line.split(": ", 1) for line in m.read(name + ".info").decode().splitlines())
        assert info["encoding"] == "CF time units attribute (UNIT since DATE)", name
        assert info["unit"] == ("us" if name in XR_FAILS else "ns"), name
        assert f'units="{attrs["units"]}"' in info["cf_attributes"]
        ref = pd.Timestamp(attrs["units"].split(" since ")[1])
        assert info["epoch"].split(" (")[1] == f"{ref.as_unit('ns').value} ns since 1970-01-01T00:00:00)"
        assert info["calendar"].startswith(attrs.get("calendar", "none"))


def test_cf_reference_dates(tmp_path, zf_mount):
    """reference dates in the forms pandas reads: each decodes as xarray does"""
    refs = ["1970-01-01", "1970-01-01 00:00:00", "2000-01-01T06:00:00Z", "2000-01-01 06:00:00.5",
            "2000-01-01T06:00:00+01:00", "2000-01-01 06:00:00 -05:30", "2000-1-2 3:04",
            "2000-01-01T06", "2000-01-01 00:00:00 UTC", "1999-12-31 23:59:59.123456789",
            "2262-04-11 00:00:00", "1677-09-22", "2000-02-29T12:00:00.000001+0000"]
    store = tmp_path / "refs.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=3)
    vals = np.array([0, 1, -1, 7, -40], dtype="i8")
    names = []
    for i, ref in enumerate(refs):
        names.append(f"ref{i:02d}")
        v3_array(g, names[-1], vals, {"units": f"minutes since {ref}"}, ["t"], (2,), 0)
    m = zf_mount(store)
    assert arrays_shown(m) == names
    for name in names:
        txt, _ = expected_cf(store, name)
        check_bytes(m, name + ".txt", txt, 1)


def test_cf_out_of_range(tmp_path, zf_mount):
    """a time stamp beyond int64 ns: xarray decodes the whole array with
    cftime, and so does zarrfs (test_calendars.py checks every format); a
    count beyond cftime's int64 microseconds fails its chunk with EIO"""
    store = tmp_path / "oor.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=3)
    v3_array(g, "far", np.array([0, 1, 200000, 3], dtype="i8"), {"units": "days since 2000-01-01"},
             ["t"], (2,), 0)  # 200000 days is beyond int64 ns
    v3_array(g, "far2", np.array([0, 1, 30000, 3], dtype="i8"), {"units": "days since 2200-01-01"},
             ["t"], (2,), 0)  # 30000 days is not, but 2200-01-01 + 30000 days is (2282)
    v3_array(g, "beyond", np.array([0, 1, 2**60, 3], dtype="i8"), {"units": "days since 2000-01-01"},
             ["t"], (2,), 0)  # beyond int64 microseconds: cftime raises too
    v3_array(g, "ok", np.array([0, 1, 2, 3], dtype="i8"), {"units": "days since 2000-01-01"},
             ["t"], (2,), 0)
    m = zf_mount(store)
    for name in ("far", "far2"):
        values = xr.open_zarr(str(store), chunks=None)[name].values
        assert values.dtype == object
        want = "".join(str(v) + "\n" for v in values).encode()
        check_bytes(m, name + ".txt", want, 1)
    with pytest.raises(OverflowError):
        xr.open_zarr(str(store), chunks=None)["beyond"].values
    first = b"2000-01-01 00:00:00\n2000-01-02 00:00:00\n"
    assert m.preads("beyond.txt", [(0, len(first))]) == [first]
    with pytest.raises(OSError) as e:
        m.read("beyond.txt")
    assert e.value.errno == errno.EIO
    txt, _ = expected_cf(store, "ok")
    check_bytes(m, "ok.txt", txt, 1)
    assert "beyond/c/1: corrupt data: element 0: stored value 1152921504606846976 is beyond " \
           "int64 us ticks" in m.log()


def test_cf_left_out(tmp_path, zf_mount):
    """time units neither pandas nor cftime decode are left out, one log line
    each (the other calendars: test_calendars.py)"""
    store = tmp_path / "left.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=3)
    d = np.array([0, 1], dtype="i8")
    bad = {"lunar": {"units": "days since 2000-01-01", "calendar": "lunar"},
           "weeks": {"units": "weeks since 2000-01-01"},
           "no_date": {"units": "days since"},
           "gap": {"units": "days since 1582-10-10"}}
    for name, attrs in bad.items():
        v3_array(g, name, d, attrs, ["t"], (2,), 0)
        others = [k for k in bad if k != name]
        with pytest.raises(Exception):  # xarray (with cftime) fails on each
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                xr.open_zarr(str(store), drop_variables=others, chunks={})[name].values
    good = {"good": {"units": "days since 2000-01-01", "calendar": "proleptic_gregorian"},
            "noleap": {"units": "days since 2000-01-01", "calendar": "noleap"},
            "julian": {"units": "days since 2000-01-01", "calendar": "julian"},
            "early_ref": {"units": "days since 1000-01-01"}}
    for name, attrs in good.items():
        v3_array(g, name, d, attrs, ["t"], (2,), 0)
    m = zf_mount(store)
    assert arrays_shown(m) == sorted(good)
    log = m.log()
    for name in bad:
        assert f"/{name}: left out" in log, name


def test_cf_mode_off(tmp_path, zf_mount):
    store, names = write_xarray(tmp_path, 3)
    native = zarr.open_group(str(store), mode="a").create_array(
        "native", shape=(2,), dtype="M8[s]", chunks=(2,), fill_value=np.datetime64("NaT"))
    native[...] = np.array([0, 1], dtype="i8").view("M8[s]")
    assert arrays_shown(zf_mount(store, "-o", "cf=off")) == ["native"]
    assert "auto_ns" in arrays_shown(zf_mount(store, "-o", "cf=dtype"))
