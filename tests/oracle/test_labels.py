"""CSV with coordinate labels (issue 17): NAME.csv against xarray itself.

Stores are written by xarray's to_zarr (v2 and v3, consolidated or not) with
time coordinates at several resolutions and reference dates, durations as
coordinates, non-dimension coordinates (1-D and 2-D, such as valid_time),
NaT in labels and values, dimensions without a coordinate and missing chunks
in coordinates.  With -o nat= every NAME.csv must be byte for byte
`xarray.open_zarr(STORE, decode_timedelta=True)[NAME].to_dataframe().to_csv()`
(exact st_size, random preads); -o labels=index keeps the index columns.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import pytest

import dask  # noqa: F401 - xarray.open_zarr(chunks={}) needs it
import xarray as xr

from test_cf import check_bytes, expected_files, xr_values

pytestmark = pytest.mark.filterwarnings("ignore")

NS_H = 3600 * 10**9


def oracle_csv(store, name, consolidated=None):
    """xarray's own CSV of one array, as a user would write it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = xr.open_zarr(str(store), decode_timedelta=True, consolidated=consolidated)
        return ds[name].to_dataframe().to_csv().encode()


def write(ds, store, fmt, consolidated=True, encoding=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(str(store), mode="w", zarr_format=fmt, consolidated=consolidated,
                   encoding=encoding or {})


def forecast(n_init=5, n_step=7, seed=1, freq="6h"):
    """lead(init_time, step): durations with NaT, a datetime and a duration
    coordinate, and valid_time(init_time, step) as a non-dimension one."""
    rng = np.random.default_rng(seed)
    init = pd.date_range("2023-12-31 18:00", periods=n_init, freq=freq)
    step = pd.to_timedelta(np.arange(n_step) * 6, unit="h")
    v = rng.integers(-10 * NS_H, 400 * NS_H, size=(n_init, n_step)).astype("timedelta64[ns]")
    v[1, 2] = np.timedelta64("NaT")
    ds = xr.Dataset({"lead": (("init_time", "step"), v)},
                    coords={"init_time": init, "step": step,
                            "valid_time": (("init_time", "step"),
                                           init.values[:, None] + step.values[None, :])})
    return ds


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("consolidated", [True, False])
def test_forecast_labels(tmp_path, zf_mount, fmt, consolidated):
    store = tmp_path / "f.zarr"
    write(forecast(), store, fmt, consolidated)
    want = oracle_csv(store, "lead", consolidated)
    m = zf_mount(store, "-o", "nat=")
    check_bytes(m, "lead.csv", want, 1)
    assert want.startswith(b"init_time,step,valid_time,lead\n")


@pytest.mark.parametrize("fmt", [2, 3])
def test_labels_index_keeps_index_columns(tmp_path, zf_mount, fmt):
    store = tmp_path / "f.zarr"
    write(forecast(), store, fmt)
    m = zf_mount(store, "-o", "labels=index")
    values, dims = xr_values(store, "lead", True)
    _, csv = expected_files(values, dims, "lead")
    check_bytes(m, "lead.csv", csv, 2)


# time coordinates at several resolutions, reference dates and signs
TIME_CASES = {
    "midnight": pd.date_range("2000-01-01", periods=9, freq="D"),
    "hours": pd.date_range("1969-12-31 21:00", periods=9, freq="3h"),
    "ms": pd.date_range("2024-02-28 23:59:59.998", periods=9, freq="1ms"),
    "us": pd.date_range("1950-06-01 12:00", periods=9, freq="250us"),
    "ns": pd.date_range("2262-04-11", periods=9, freq="7ns"),
    "old": pd.date_range("1677-09-22", periods=9, freq="37D"),
}


@pytest.mark.parametrize("case", sorted(TIME_CASES))
@pytest.mark.parametrize("fmt", [2, 3])
def test_time_coordinate_resolutions(tmp_path, zf_mount, case, fmt):
    t = TIME_CASES[case].values.copy()
    t[4] = np.datetime64("NaT")
    rng = np.random.default_rng(len(case))
    vals = rng.integers(0, 10**15, size=t.size).astype("timedelta64[ns]")
    vals[2] = np.timedelta64("NaT")
    ds = xr.Dataset({"age": (("time",), vals)}, coords={"time": t})
    store = tmp_path / "t.zarr"
    write(ds, store, fmt)
    m = zf_mount(store, "-o", "nat=")
    check_bytes(m, "age.csv", oracle_csv(store, "age"), 3)


@pytest.mark.parametrize("units", ["days since 1970-01-01", "hours since 2000-01-01 06:00",
                                   "seconds since 1999-12-31 23:59:30",
                                   "milliseconds since 2020-02-29"])
def test_cf_time_encodings(tmp_path, zf_mount, units):
    """the coordinate's CF encoding as the user chose it, negative offsets too"""
    t = pd.date_range("1999-12-30", periods=12, freq="13h").values
    ds = xr.Dataset({"lag": (("time",), np.arange(12).astype("timedelta64[h]").astype("timedelta64[ns]"))},
                    coords={"time": t})
    store = tmp_path / "cf.zarr"
    write(ds, store, 3, encoding={"time": {"units": units, "dtype": "float64" if "milli" in units else "int64"}})
    m = zf_mount(store, "-o", "nat=")
    check_bytes(m, "lag.csv", oracle_csv(store, "lag"), 4)


@pytest.mark.parametrize("fmt", [2, 3])
def test_three_dims_and_a_dimension_without_coordinate(tmp_path, zf_mount, fmt):
    init = pd.date_range("2024-01-01", periods=3, freq="12h")
    step = pd.to_timedelta([0, 90, 180, 1440], unit="min")
    v = (np.arange(3 * 4 * 5).reshape(3, 4, 5) * 1800 * 10**9).astype("timedelta64[ns]")
    v[2, 3, 4] = np.timedelta64("NaT")
    ds = xr.Dataset({"dur": (("init_time", "step", "member"), v)},
                    coords={"init_time": init, "step": step})
    store = tmp_path / "d3.zarr"
    write(ds, store, fmt, encoding={"dur": {"chunks": (2, 3, 2)}})
    m = zf_mount(store, "-o", "nat=")
    check_bytes(m, "dur.csv", oracle_csv(store, "dur"), 5)


def test_slices_choose_their_own_format(tmp_path, zf_mount):
    """pandas writes 100000 cells at a time and picks the time format per
    slice: whole days in one, hours in the next"""
    n = 200_000
    t = np.datetime64("1678-01-01", "ns") + np.arange(n).astype("timedelta64[D]")
    t[-5] += np.timedelta64(1, "h")
    v = (np.arange(n) * 86400 * 10**9).astype("timedelta64[ns]")
    v[120_001] += np.timedelta64(1, "s")
    v[190_000] += np.timedelta64(1, "us")
    ds = xr.Dataset({"span": (("time",), v)}, coords={"time": t})
    store = tmp_path / "s.zarr"
    write(ds, store, 3, encoding={"span": {"chunks": (30_000,)},
                                      "time": {"chunks": (70_000,), "dtype": "int64",
                                               "units": "hours since 1970-01-01"}})
    m = zf_mount(store, "-o", "nat=")
    check_bytes(m, "span.csv", oracle_csv(store, "span"), 6)


def test_missing_coordinate_chunks(tmp_path, zf_mount):
    """a coordinate chunk never written reads as its fill value (NaT)"""
    t = pd.date_range("2024-03-01", periods=12, freq="h").values.copy()
    t[4:8] = np.datetime64("NaT")
    ds = xr.Dataset({"wait": (("time",), np.arange(12).astype("timedelta64[m]").astype("timedelta64[ns]"))},
                    coords={"time": t})
    store = tmp_path / "m.zarr"
    write(ds, store, 3, encoding={"time": {"chunks": (4,)}})
    for root, _, files in os.walk(store / "time"):
        for f in files:
            if os.path.relpath(os.path.join(root, f), store / "time") == os.path.join("c", "1"):
                os.remove(os.path.join(root, f))
    want = oracle_csv(store, "wait")
    m = zf_mount(store, "-o", "nat=")
    check_bytes(m, "wait.csv", want, 7)


def test_persisted_index_keeps_the_formats(tmp_path, zf_mount, monkeypatch):
    """a second mount sizes the labelled .csv from the persisted offset index,
    which keeps each slice's format: the same bytes, the index not rewritten"""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    n = 150_000
    t = np.datetime64("1700-01-01", "ns") + np.arange(n).astype("timedelta64[D]")
    v = (np.arange(n) % 1000 * 86400 * 10**9).astype("timedelta64[ns]")
    v[140_000] += np.timedelta64(7, "ms")  # the second slice only: microsecond digits
    ds = xr.Dataset({"d": (("time",), v)}, coords={"time": t})
    store = tmp_path / "p.zarr"
    write(ds, store, 3, encoding={"d": {"chunks": (20_000,)},
                                  "time": {"units": "days since 1970-01-01", "dtype": "int64"}})
    want = oracle_csv(store, "d")
    m = zf_mount(store, "-o", "nat=")
    check_bytes(m, "d.csv", want, 8)
    assert not m.stop(), m.log()
    index_dir = tmp_path / "xdg" / "zarrfs"
    saved = {p.name: p.stat().st_ino for p in index_dir.glob("*.idx")}
    assert saved, "no index was saved"
    m = zf_mount(store, "-o", "nat=")
    check_bytes(m, "d.csv", want, 9)
    assert {p.name: p.stat().st_ino for p in index_dir.glob("*.idx")} == saved
    assert "does not match" not in m.log(), m.log()


@pytest.mark.parametrize("fmt", [2, 3])
def test_time_stamp_values(tmp_path, zf_mount, fmt):
    """a datetime64 array (xarray's CF encoding) labelled by its coordinates:
    its value column in pandas' time-stamp format"""
    init = pd.date_range("2024-01-01", periods=4, freq="D")
    step = pd.to_timedelta([0, 30, 90], unit="min")
    valid = init.values[:, None] + step.values[None, :]
    valid[2, 1] = np.datetime64("NaT")
    ds = xr.Dataset({"valid": (("init_time", "step"), valid)},
                    coords={"init_time": init, "step": step})
    store = tmp_path / "v.zarr"
    write(ds, store, fmt, encoding={"valid": {"units": "minutes since 2024-01-01", "dtype": "int64"}})
    m = zf_mount(store, "-o", "nat=")
    check_bytes(m, "valid.csv", oracle_csv(store, "valid"), 10)


def test_native_datetime64_values_and_coordinates(tmp_path, zf_mount):
    """numpy.datetime64 arrays as zarr-python 3.1 writes them, named as
    xarray's dimensions: the coordinate labels the values"""
    import zarr
    g = zarr.open_group(str(tmp_path / "n.zarr"), mode="w", zarr_format=3)
    t = (np.arange(6) * 3600 * 1000 + 1).astype("datetime64[ms]")
    t[3] = np.datetime64("NaT")
    a = g.create_array("time", shape=(6,), chunks=(4,), dtype="datetime64[ms]",
                       dimension_names=["time"])
    a[:] = t
    d = g.create_array("wait", shape=(6,), chunks=(4,), dtype="timedelta64[s]",
                       dimension_names=["time"])
    d[:] = np.array([0, 86400, -1, 5, 7200, 3], dtype="timedelta64[s]")
    m = zf_mount(tmp_path / "n.zarr", "-o", "nat=")
    check_bytes(m, "wait.csv", oracle_csv(tmp_path / "n.zarr", "wait", False), 11)


def test_concurrent_readers_on_a_fresh_mount(tmp_path, zf_mount):
    """eight readers at random offsets while the array is first sized"""
    import random
    import threading
    init = pd.date_range("2024-01-01", periods=400, freq="6h")
    step = pd.to_timedelta(np.arange(250) * 15, unit="min")
    rng = np.random.default_rng(5)
    v = (rng.integers(0, 10**6, size=(400, 250)) * 10**9).astype("timedelta64[ns]")
    ds = xr.Dataset({"lead": (("init_time", "step"), v)}, coords={"init_time": init, "step": step})
    store = tmp_path / "c.zarr"
    write(ds, store, 3, encoding={"lead": {"chunks": (50, 100)}})
    want = oracle_csv(store, "lead")
    m = zf_mount(store, "-o", "nat=")
    errors = []

    def reader(seed):
        r = random.Random(seed)
        ranges = [(r.randrange(0, len(want)), r.randrange(1, 70000)) for _ in range(40)]
        for (off, n), got in zip(ranges, m.preads("lead.csv", ranges)):
            if got != want[off:off + n]:
                errors.append((seed, off, n))
    threads = [threading.Thread(target=reader, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:5]
    assert m.stat("lead.csv").st_size == len(want)


@pytest.mark.parametrize("fmt", [2, 3])
def test_damaged_coordinate_falls_back_to_the_index(tmp_path, zf_mount, fmt):
    """a coordinate whose chunk cannot be decoded: its dimension is labelled by
    the index (as xarray shows the array without that coordinate), with a log
    line naming it; everything else stays exact"""
    store = tmp_path / "f.zarr"
    write(forecast(), store, fmt, consolidated=False)
    chunk = [os.path.join(d, f) for d, _, fs in os.walk(store / "init_time") for f in fs
             if not f.startswith((".z", "zarr.json"))]
    assert len(chunk) == 1, chunk
    with open(chunk[0], "wb") as f:
        f.write(b"\x00not a zstd frame")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = xr.open_zarr(str(store), decode_timedelta=True, consolidated=False,
                          drop_variables=["init_time"])
        want = ds["lead"].to_dataframe().to_csv().encode()
    m = zf_mount(store, "-o", "nat=")
    check_bytes(m, "lead.csv", want, 12)
    assert "coordinate init_time" in m.log(), m.log()


@pytest.mark.parametrize("fmt", [2, 3])
def test_number_string_and_bool_coordinates(tmp_path, zf_mount, fmt):
    """float (NaN), integer, string (quoted as pandas quotes) and bool
    coordinates, dimension and not, 1-D and 2-D"""
    rng = np.random.default_rng(9)
    lat = np.array([-90.0, 0.1, np.nan, 1e-05, 45.5])
    station = np.array(["a", "b,c", 'say "hi"', "", "line\nbreak", "zürich"], dtype=object)
    v = rng.integers(0, 10**14, size=(5, 6)).astype("timedelta64[ns]")
    v[0, 0] = np.timedelta64("NaT")
    ds = xr.Dataset({"lag": (("lat", "station"), v)},
                    coords={"lat": lat, "station": station,
                            "code": ("station", np.arange(6, dtype="int16") - 3),
                            "ok": ("lat", [True, False, True, True, False]),
                            "w": (("lat", "station"), rng.random((5, 6)).astype("float32"))})
    store = tmp_path / "n.zarr"
    write(ds, store, fmt, encoding={"lat": {"chunks": (2,)}})
    m = zf_mount(store, "-o", "nat=")
    check_bytes(m, "lag.csv", oracle_csv(store, "lag"), 13)


def test_one_dimensional_string_index(tmp_path, zf_mount):
    """a 1-D array labelled by strings (the index is not a MultiIndex)"""
    names = np.array([f"run {k}" if k % 3 else f"run,{k}" for k in range(40)], dtype="<U8")
    v = (np.arange(40) * 3_600_000_000_123).astype("timedelta64[ns]")
    ds = xr.Dataset({"took": (("run",), v)}, coords={"run": names})
    store = tmp_path / "r.zarr"
    write(ds, store, 3)
    m = zf_mount(store, "-o", "nat=")
    check_bytes(m, "took.csv", oracle_csv(store, "took"), 14)


@pytest.mark.parametrize("fmt", ["iso", "numpy", "seconds", "raw"])
def test_other_formats_apply_to_labels_too(tmp_path, zf_mount, fmt):
    """-o format= other than pandas: the same label columns, every time and
    duration column in that format, labels included: each field is its
    coordinate's .txt line, each value its array's (test_formats.py checks
    those); nat= applies to every column"""
    store = tmp_path / "f.zarr"
    ds = forecast()
    step = ds["step"].values.copy()
    step[3] = np.timedelta64("NaT")
    ds = ds.assign_coords(step=step)
    write(ds, store, 3)
    want = oracle_csv(store, "lead").decode().splitlines()
    m = zf_mount(store, "-o", f"format={fmt}", "-o", "nat=")
    got = m.read("lead.csv").decode().splitlines()
    txt = {k: m.read(f"{k}.txt").decode().splitlines()
           for k in ("init_time", "step", "valid_time", "lead")}
    n_init, n_step = ds.sizes["init_time"], ds.sizes["step"]
    assert got[0] == want[0] == "init_time,step,valid_time,lead"
    assert len(got) == n_init * n_step + 1
    for k, line in enumerate(got[1:]):
        i, j = divmod(k, n_step)
        assert line == ",".join([txt["init_time"][i], txt["step"][j], txt["valid_time"][k],
                                 txt["lead"][k]]), (k, line)
    assert "T" in got[1] or fmt != "iso"
    assert m.stat("lead.csv").st_size == len("\n".join(got)) + 1
