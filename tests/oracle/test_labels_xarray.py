"""The labelled CSV is exactly xarray's (issue 25): one case per difference a
differential run against xarray found, each against xarray itself.

With -o nat= every NAME.csv checked here must be byte for byte
`xarray.open_zarr(STORE, decode_timedelta=True)[NAME].to_dataframe().to_csv()`
(exact st_size, random preads), with the xarray and pandas the CSV follows
(oracle.CSV_VERSIONS, pinned by scripts/deps):

 1. label columns from the group's coordinate set (every array's and the
    group's own coordinates attribute, dimension coordinates; scalar ones);
 2. a coordinate's own .csv repeats itself (the bundled example too);
 3. datetime64 of unit M and Y;
 4. string coordinates in shards (<U, object, |S);
 5. -0.0 and 0.0 on a MultiIndex level;
 6. float and packed durations with a coarser dtype attribute beyond
    ±292 years;
 7. NaN, Infinity and -Infinity in attributes (v2 and v3);
 8. float16 CF durations and time stamps;
 9. the log line of a float count beyond int64 ns (EIO kept).
"""

from __future__ import annotations

import errno
import json
import os
import warnings

import numpy as np
import pandas as pd
import pytest
import zarr

import dask  # noqa: F401 - xarray.open_zarr(chunks={}) needs it
import xarray as xr

import oracle
from test_cf import check_bytes
from test_labels import oracle_csv, write

pytestmark = pytest.mark.filterwarnings("ignore")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NS_H = 3600 * 10**9


@pytest.fixture(autouse=True, scope="module")
def _versions():
    oracle.check_csv_versions()


def hours(*h):
    return (np.array(h, dtype="int64") * NS_H).astype("timedelta64[ns]")


def native(g, name, values, dims, chunks=None, attrs=None, fill_value=None):
    """an array as zarr-python writes it (no xarray attributes)"""
    values = np.asarray(values)
    kw = {"dimension_names": dims} if g.metadata.zarr_format == 3 else {}
    a = g.create_array(name, shape=values.shape, chunks=chunks or values.shape or (1,),
                       dtype=values.dtype, attributes=attrs or {}, fill_value=fill_value, **kw)
    if g.metadata.zarr_format == 2:
        a.attrs["_ARRAY_DIMENSIONS"] = dims
    a[...] = values
    return a


def check_all(m, store, names, seed, consolidated=None):
    for k, name in enumerate(names):
        check_bytes(m, f"{name}.csv", oracle_csv(store, name, consolidated), seed * 100 + k)


# ---- 1. the group's coordinates -------------------------------------------

@pytest.mark.parametrize("fmt", [2, 3])
def test_group_coordinates_label_arrays_without_the_attribute(tmp_path, zf_mount, fmt):
    """zarr-python arrays: aux(x) is a coordinate because another array's
    coordinates attribute names it, gc(x) because the group's own attribute
    does, x because it is a dimension; lag names none of them"""
    store = tmp_path / "g.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=fmt, attributes={"coordinates": "gc nothere"})
    native(g, "x", np.arange(5) * 10, ["x"])
    native(g, "aux", np.linspace(0, 1, 5), ["x"])
    native(g, "gc", np.array(["a", "b", "c", "d", "e"], dtype="<U1"), ["x"])
    native(g, "other", np.ones(5), ["x"], attrs={"coordinates": "aux"})
    native(g, "far", np.ones(3), ["y"])
    native(g, "lag", hours(1, 2, 3, 4, 5), ["x"], chunks=(2,))
    native(g, "lag2", np.zeros((5, 3), "timedelta64[s]"), ["x", "y"])
    zarr.consolidate_metadata(str(store))
    want = oracle_csv(store, "lag")
    assert want.startswith(b"x,aux,gc,lag\n"), want[:40]
    m = zf_mount(store, "-o", "nat=")
    check_all(m, store, ["lag", "lag2"], 1)


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_coordinate_with_its_own_coordinates(tmp_path, zf_mount, fmt):
    """a duration dimension coordinate step with aux(step) and a scalar ref:
    step,aux,ref,step; lead carries them all, but not aux_i(init)'s dims"""
    store = tmp_path / "s.zarr"
    step = pd.to_timedelta([0, 6, 12], unit="h")
    ds = xr.Dataset({"lead": (("init", "step"), np.zeros((2, 3), "timedelta64[ns]"))},
                    coords={"step": step, "aux": ("step", [1.5, 2.5, 3.5]), "ref": 5,
                            "aux_i": ("init", [True, False])})
    write(ds, store, fmt)
    assert oracle_csv(store, "step").startswith(b"step,aux,ref,step\n")
    m = zf_mount(store, "-o", "nat=")
    check_all(m, store, ["step", "lead"], 2)


@pytest.mark.parametrize("consolidated", [True, False])
def test_coordinates_attribute_lists_fewer(tmp_path, zf_mount, consolidated):
    """xarray names only some coordinates in an array's attribute: the group
    decides (v3 without consolidation: one coordinate column, whose order
    is not in question)"""
    store = tmp_path / "f.zarr"
    ds = xr.Dataset({"lag": (("x",), hours(1, 2, 3)), "w": (("x",), [1.0, 2.0, 3.0])},
                    coords={"x": [1, 2, 3], "aux": ("x", [7, 8, 9])})
    ds["lag"].encoding["coordinates"] = None
    write(ds, store, 3, consolidated=consolidated)
    assert "coordinates" not in json.loads((store / "lag" / "zarr.json").read_text())["attributes"]
    m = zf_mount(store, "-o", "nat=")
    check_all(m, store, ["lag"], 3, consolidated)


# ---- 2. a coordinate's own .csv -------------------------------------------

@pytest.mark.parametrize("fmt", [2, 3])
def test_a_coordinate_repeats_itself(tmp_path, zf_mount, fmt):
    """valid(x), a non-dimension time coordinate: x,valid,valid, its label
    in pandas' column format (dates when all midnight) as its value column"""
    store = tmp_path / "v.zarr"
    valid = pd.date_range("2000-01-01", periods=4, freq="D").values
    ds = xr.Dataset({"lag": (("x",), hours(0, 1, 2, 3))},
                    coords={"x": [5, 6, 7, 8], "valid": ("x", valid)})
    write(ds, store, fmt)
    want = oracle_csv(store, "valid")
    assert want.startswith(b"x,valid,valid\n5,2000-01-01,2000-01-01\n"), want
    m = zf_mount(store, "-o", "nat=")
    check_all(m, store, ["valid", "lag"], 4)


def test_bundled_example_valid_time(zf_mount):
    """as a new user tries it: runs/valid_time.csv of examples/lead_times.zarr"""
    store = os.path.join(REPO, "examples", "lead_times.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = xr.open_zarr(os.path.join(store, "runs"), decode_timedelta=True)
    m = zf_mount(store, "-o", "nat=")
    for name in ("valid_time", "lead", "step", "init_time"):
        want = ds[name].to_dataframe().to_csv().encode()
        check_bytes(m, f"runs/{name}.csv", want, 5)
    assert m.read("runs/valid_time.csv").startswith(b"init_time,step,valid_time,valid_time\n")


# ---- 3. datetime64 of unit M and Y ----------------------------------------

@pytest.mark.parametrize("fmt", [2, 3])
def test_months_and_years(tmp_path, zf_mount, fmt):
    """datetime64[M] and [Y] (zarr-python's), as labels and values: dates"""
    store = tmp_path / "m.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=fmt)
    months = np.array([1, 0, -13, 120000, -2**63, 1000], dtype="int64").view("datetime64[M]")
    years = np.array([-3000, 1, 300, 10**6, 7, -2**63], dtype="int64").view("datetime64[Y]")
    native(g, "t", months, ["t"], chunks=(4,))
    native(g, "w", np.arange(6).astype("timedelta64[s]"), ["t"])
    native(g, "y", years, ["t"], chunks=(5,))
    m = zf_mount(store, "-o", "nat=")
    check_all(m, store, ["w", "t", "y"], 6, False)


# ---- 4. string coordinates in shards --------------------------------------

def test_sharded_string_coordinates(tmp_path, zf_mount):
    """<U, object (vlen-utf8) and |S coordinates under sharding_indexed, with
    an inner chunk never written (the fill value)"""
    store = tmp_path / "sh.zarr"
    n = 10
    ds = xr.Dataset({"lag": (("x", "y"), (np.arange(n * 3).reshape(n, 3) * 10**9).astype("timedelta64[ns]"))},
                    coords={"x": np.array([f"s{k},x" for k in range(n)], dtype="<U6"),
                            "sobj": ("x", np.array([f"o\"{k}" for k in range(n)], dtype=object)),
                            "y": np.array([b"a", b"bb", b"c'"])})
    enc = {"x": {"chunks": (2,), "shards": (4,)}, "sobj": {"chunks": (2,), "shards": (4,)},
           "y": {"chunks": (1,), "shards": (3,)}}
    write(ds, store, 3, encoding=enc)
    m = zf_mount(store, "-o", "nat=")
    check_all(m, store, ["lag"], 7)



@pytest.mark.parametrize("damage", ["overlap", "oversized"])
def test_damaged_string_shard_index(tmp_path, zf_mount, damage):
    """a string coordinate's shard index is checked as an array's is (issue
    24): entries sharing bytes, or one larger than any encoding of its inner
    chunk, are damage: the coordinate falls back to the index, with a log
    line saying why (a frame's index once crashed the daemon)"""
    from numcodecs import CRC32C
    store = tmp_path / "sh.zarr"
    ds = xr.Dataset({"lag": (("y",), hours(1, 2, 3))}, coords={"y": np.array([b"a", b"bb", b"c'"])})
    write(ds, store, 3, encoding={"y": {"chunks": (1,), "shards": (3,)}})
    shard = store / "y" / "c" / "0"
    raw = shard.read_bytes()
    data, idx = raw[:-52], np.frombuffer(raw[-52:-4], dtype="<u8").copy().reshape(3, 2)
    if damage == "overlap":
        idx[1] = idx[0]
    else:  # 1500 bytes, where an inner chunk of one byte is at most about 1 KB (the
        idx[2] = (len(data), 1500)  # shard, at most about 3 KB, is still read)
        data += bytes(1500)
    shard.write_bytes(data + bytes(CRC32C().encode(idx.tobytes())))
    m = zf_mount(store, "-o", "nat=")
    assert m.read("lag.csv") == b"y,lag\n0,0 days 01:00:00\n1,0 days 02:00:00\n2,0 days 03:00:00\n"
    why = "overlap at byte" if damage == "overlap" else "more than any encoding of it"
    assert "coordinate y: " in m.log() and why in m.log(), m.log()

# ---- 5. -0.0 and 0.0 on a MultiIndex level --------------------------------

@pytest.mark.parametrize("first", [-0.0, 0.0])
@pytest.mark.parametrize("dtype", ["f4", "f8"])
def test_signed_zeros_on_a_multiindex_level(tmp_path, zf_mount, first, dtype):
    """pandas' MultiIndex level holds one zero: the first one's text on
    every row; a 1-D index keeps each"""
    store = tmp_path / "z.zarr"
    lat = np.array([first, 1.0, -first, np.nan, -first], dtype=dtype)
    ds = xr.Dataset({"d2": (("lat", "k"), np.zeros((5, 2), "timedelta64[ns]")),
                     "d1": (("lat",), hours(1, 2, 3, 4, 5))},
                    coords={"lat": lat, "lon": ("lat", lat)})
    write(ds, store, 3)
    m = zf_mount(store, "-o", "nat=")
    check_all(m, store, ["d2", "d1"], 8)


# ---- 6. coarser dtype attributes beyond ±292 years ------------------------

@pytest.mark.parametrize("unit", ["s", "ms", "us"])
def test_float_durations_beyond_292_years(tmp_path, zf_mount, unit):
    """float and packed counts with dtype timedelta64[s|ms|us]: xarray
    decodes at that unit (115740 days 17:46:40 for 10^10 s)"""
    store = tmp_path / "c.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=3)
    native(g, "x", np.arange(6), ["x"])
    per = {"s": 1, "ms": 1000, "us": 10**6}[unit]
    big = 10**10 if unit == "s" else 10**13 // per * per // 1000
    secs = np.array([big, 3, np.nan, -2 * big, 1, 7], dtype="f8")
    native(g, "f", secs, ["x"], chunks=(3,), fill_value=np.nan,
           attrs={"units": "seconds", "dtype": f"timedelta64[{unit}]", "_FillValue": "AAAAAAAA+H8="})
    native(g, "p", np.array([2, -3, 1, 0, 5, 9], dtype="i4"), ["x"], chunks=(2,), fill_value=0,
           attrs={"units": "days", "dtype": f"timedelta64[{unit}]", "scale_factor": 1e5,
                  "add_offset": 0.5})
    zarr.consolidate_metadata(str(store))
    m = zf_mount(store, "-o", "nat=")
    check_all(m, store, ["f", "p"], 9)
    if unit == "s":
        assert b"115740 days 17:46:40" in m.read("f.csv")


# ---- 7. non-finite attribute values ---------------------------------------

@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("consolidated", [True, False])
def test_nonfinite_attributes(tmp_path, zf_mount, fmt, consolidated):
    """NaN, Infinity and -Infinity as zarr-python writes them (bare JSON
    literals): the CF array shows, its coordinate stays a column"""
    store = tmp_path / "nf.zarr"
    ds = xr.Dataset({"lag": ("x", hours(0, 1, 2), {"valid_max": np.nan, "vmin": -np.inf}),
                     "cf": ("x", hours(3, 4, 5), {"valid_range": [np.nan, np.inf]})},
                    coords={"x": [1, 2, 3], "aux": ("x", np.arange(3.0), {"valid_max": np.inf})})
    ds["cf"].encoding.update({"dtype": "float64", "units": "hours"})
    write(ds, store, fmt, consolidated=consolidated)
    doc = (store / "lag" / (".zattrs" if fmt == 2 else "zarr.json")).read_text()
    assert "NaN" in doc and "-Infinity" in doc
    m = zf_mount(store, "-o", "nat=")
    assert "lag.csv" in m.listdir() and "cf.csv" in m.listdir()
    check_all(m, store, ["lag", "cf"], 10, consolidated)


# ---- 8. float16 CF durations and time stamps ------------------------------

@pytest.mark.parametrize("fmt", [2, 3])
def test_float16_durations_and_time_stamps(tmp_path, zf_mount, fmt):
    """float16 counts: scaled in float16 as numpy does (0.333 s is 333 ms),
    hours made float64 first, time stamps in one float64 product"""
    store = tmp_path / "h.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=fmt)
    native(g, "x", np.arange(8), ["x"])
    vals = np.array([1.5, 7, 0.25, np.nan, 0.333, 2, -3.5, 60000], dtype="f2")
    nan = {"_FillValue": "AAAAAAAA+H8="} if fmt == 3 else {}
    for name, attrs, v in [("s", {"units": "seconds"}, vals[:7].tolist() + [1]),
                           ("h", {"units": "hours"}, vals),
                           ("t", {"units": "days since 2000-01-01"}, vals),
                           ("m", {"units": "minutes since 1970-01-01", "add_offset": 1.0}, vals)]:
        native(g, name, np.array(v, dtype="f2"), ["x"], chunks=(4,), fill_value=np.nan,
               attrs={**attrs, **nan})
    m = zf_mount(store, "-o", "nat=")
    assert "s.txt" in m.listdir()
    check_all(m, store, ["s", "h", "t", "m"], 11, False)


# ---- 9. the overflow log line ---------------------------------------------

def test_float_count_beyond_int64_ns_says_why(tmp_path, zf_mount):
    """1 ns makes the chunk ns; 10^10 s is then beyond int64 ns: xarray's
    cast gives NaT, zarrfs keeps EIO and says what it refuses and why; the
    damaged chunk counts as NaT lines (empty with nat=), the rest reads"""
    store = tmp_path / "o.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=3)
    native(g, "x", np.arange(4), ["x"])
    native(g, "f", np.array([1e-9, 1e10, 1.0, 2.0]), ["x"], chunks=(2,), fill_value=np.nan,
           attrs={"units": "seconds", "_FillValue": "AAAAAAAA+H8="})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = xr.open_zarr(str(store), decode_timedelta=True, consolidated=False)["f"].values
    assert np.isnat(got[1]), got  # what xarray shows
    m = zf_mount(store, "-o", "nat=")
    with pytest.raises(OSError) as e:
        m.read("f.txt")
    assert e.value.errno == errno.EIO
    log = m.log()
    assert "stored value 10000000000 is beyond int64 once made ns" in log, log
    assert "xarray's cast to int64 overflows there and gives NaT" in log, log
    assert "cannot decode it either" not in log, log
    assert m.preads("f.txt", [(2, 100)]) == [b"0 days 00:00:01\n0 days 00:00:02\n"]
