"""Stores WRITTEN by an older xarray (issue 14): units only, no dtype attribute.

old_xarray_writer.py runs in the second venv (scripts/deps builds it at
$ZF_VENV_OLD, default .venv-old: xarray 2024.10, zarr-python 2.18, numpy
1.26) and writes v2 stores with Dataset.to_zarr (blosc, zlib + delta, no
compressor, consolidated or not, '/' chunk keys, dask-written variables with
units "nanoseconds", a WeatherBench2-like layout, a native m8 array written by
zarr 2.18), plus what that xarray itself decodes.  Every .txt and .csv must
equal, byte for byte, str(pandas.Timedelta(v)) of BOTH that old decoding and
today's xarray.open_zarr(..., decode_timedelta=True) in this venv, with exact
st_size and random preads.  The old venv is part of the test setup: when it
is missing the tests fail (scripts/deps installs it), they never skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from test_cf import arrays_shown, check_bytes, expected_files, td_lines, xr_values

pytestmark = pytest.mark.filterwarnings("ignore")

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WRITER = HERE / "old_xarray_writer.py"
STORES = ["matrix", "matrix_c", "nested_c", "wb2_c"]
# xarray 2024.10 masks an integer with duration units to int64 and then
# cannot scale it in place: it fails on its own packed + masked stores
OLD_FAILS = {"packed16", "packed32_h_mask"}
PLURALS = {"days", "hours", "minutes", "seconds", "milliseconds", "microseconds", "nanoseconds"}


def old_python() -> Path:
    """The old venv's python: $ZF_VENV_OLD, else .venv-old in the repository
    or beside $ZF_VENV."""
    if os.environ.get("ZF_VENV_OLD"):
        dirs = [Path(os.environ["ZF_VENV_OLD"])]
    else:
        dirs = [REPO / ".venv-old", Path(os.environ.get("ZF_VENV", REPO / ".venv")).parent / ".venv-old"]
    for d in dirs:
        if (d / "bin" / "python").exists():
            return d / "bin" / "python"
    pytest.fail(f"no old-xarray venv at {', '.join(map(str, dirs))}: scripts/deps builds it "
                "(set ZF_VENV_OLD to use another)", pytrace=False)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """(directory, oracle.json) of the stores the old xarray wrote."""
    out = tmp_path_factory.mktemp("old_xarray")
    r = subprocess.run([str(old_python()), str(WRITER), str(out)], capture_output=True,
                       text=True, timeout=600)
    if r.returncode != 0:
        pytest.fail(f"old_xarray_writer.py failed ({r.returncode}):\n{r.stderr[-4000:]}",
                    pytrace=False)
    return out, json.loads((out / "oracle.json").read_text())


@pytest.fixture(scope="module")
def mounts(written, zf_mounter_module):
    """mount(store, mode) -> Mount, one per store and -o cf= mode."""
    out, _ = written
    cache = {}

    def get(store, mode=None):
        if (store, mode) not in cache:
            opts = ["-o", "labels=index"] + (["-o", f"cf={mode}"] if mode else [])
            cache[(store, mode)] = zf_mounter_module(out / f"{store}.zarr", *opts)
        return cache[(store, mode)]
    return get


NAT = np.iinfo(np.int64).min


def old_values(entry):
    """The old xarray's decoding as timedelta64[ns] of its shape."""
    ints = np.array([NAT if v is None else v for v in entry["ns"]], dtype="i8")
    return ints.view("m8[ns]").reshape(entry["shape"])


def differ(store, name, old, new):
    """Where the old xarray's decoding and today's differ (C-order indexes).
    Only through floats (a float dtype or packing) may they: xarray 2024
    converted with pandas.to_timedelta, today's scales by 1000 until whole,
    so a value may be 1 ns apart (zarrfs shows today's)."""
    old = old.view("i8").ravel(order="C")
    new = new.astype("m8[ns]").view("i8").ravel(order="C")
    assert np.array_equal(old == NAT, new == NAT), f"{name}: NaT differs"
    idx = np.nonzero(old != new)[0]
    if len(idx):
        through_float = zarray(store, name)["dtype"][1] == "f" or "scale_factor" in zattrs(store, name)
        assert through_float, f"{name}: the two xarrays disagree at {idx[:5]}"
        assert np.all(np.abs(old[idx] - new[idx]) == 1), f"{name}: more than 1 ns apart"
    return set(idx.tolist())


def check_old(m, name, old, dims, skip):
    """zarrfs's .txt and .csv against the old xarray's decoding, byte for
    byte, but for the lines at skip (1 ns apart, checked against today's)."""
    txt, csv = expected_files(old, dims, name)
    for ext, want, first in (("txt", txt, 0), ("csv", csv, 1)):
        got = m.read(f"{name}.{ext}")
        if not skip:
            assert got == want, f"{name}.{ext} differs from the old xarray's"
            continue
        gl, wl = got.splitlines(), want.splitlines()
        assert len(gl) == len(wl), name
        for k, (g, w) in enumerate(zip(gl, wl)):
            assert g == w or (k - first) in skip, f"{name}.{ext} line {k}: {g!r}, old xarray {w!r}"


def zarray(store: Path, name: str) -> dict:
    return json.loads((store / name / ".zarray").read_text())


def zattrs(store: Path, name: str) -> dict:
    return json.loads((store / name / ".zattrs").read_text())


def elem_name(dtype: str) -> str:
    """zarrfs's stored_type for a v2 dtype string such as '<i8'."""
    kind = {"i": "int", "u": "uint", "f": "float"}[dtype[1]]
    return f"{kind}{int(dtype[2:]) * 8}"


def native(store: Path, name: str) -> bool:
    return "m8" in zarray(store, name)["dtype"]


def cf_times(store: Path, names) -> list:
    """The variables among names that the writer CF-encoded as time stamps
    (units "UNIT since DATE"): zarrfs shows them too (test_datetime.py checks
    their text), with -o cf=all and cf=dtype."""
    return [n for n in names if " since " in str(zattrs(store, n).get("units", ""))]


def test_old_versions(written):
    """The writer really ran the old stack (else this proves nothing)."""
    _, oracle = written
    v = oracle["versions"]
    assert tuple(int(x) for x in v["xarray"].split(".")[:2]) < (2025, 4), v
    assert v["zarr"].startswith("2."), v
    assert v["numpy"].startswith("1."), v
    assert sorted(oracle["stores"]) == STORES


def test_old_metadata(written):
    """The stores are what an old xarray writes: v2, units only, no dtype
    attribute, .zmetadata only when consolidated, the compressors asked for."""
    out, oracle = written
    compressors, filters, n_cf = set(), set(), 0
    for sname, s in oracle["stores"].items():
        store = out / f"{sname}.zarr"
        assert (store / ".zmetadata").exists() == s["consolidated"], sname
        for name in s["arrays"]:
            meta = zarray(store, name)
            assert meta["zarr_format"] == 2
            compressors.add((meta["compressor"] or {}).get("id"))
            filters.update(f["id"] for f in meta["filters"] or [])
            attrs = zattrs(store, name)
            assert "dtype" not in attrs, (sname, name)
            if not native(store, name):
                assert attrs["units"] in PLURALS, (sname, name, attrs)
                n_cf += 1
        if s["consolidated"]:
            zm = json.loads((store / ".zmetadata").read_text())["metadata"]
            assert all("dtype" not in v for k, v in zm.items() if k.endswith(".zattrs"))
    assert compressors == {"blosc", "zlib", None}
    assert filters == {"delta"}
    assert zattrs(out / "matrix.zarr", "lazy_ns")["units"] == "nanoseconds"  # dask-written
    assert (out / "nested_c.zarr" / "nested_us" / "0" / "0").is_file()  # '/' chunk keys
    assert n_cf >= 60, n_cf


@pytest.mark.parametrize("sname", STORES)
def test_old_store_bytes(written, mounts, sname):
    """Every array the old xarray decodes to timedelta64 is shown, and only
    those; its bytes equal both xarrays' decoding."""
    out, oracle = written
    s = oracle["stores"][sname]
    store = out / f"{sname}.zarr"
    m = mounts(sname)
    times = cf_times(store, s["other"])
    assert arrays_shown(m) == sorted([*s["arrays"], *times])
    assert not set(arrays_shown(m)) & (set(s["other"]) - set(times))
    n_1ns = 0
    for name, entry in sorted(s["arrays"].items()):
        values, dims = xr_values(store, name, s["consolidated"])  # today's xarray
        if "error" in entry:
            assert name in OLD_FAILS, (name, entry["error"])
        else:
            assert name not in OLD_FAILS, name
            assert entry["dims"] == dims and entry["shape"] == list(values.shape), name
            old = old_values(entry)
            skip = differ(store, name, old, values)
            n_1ns += len(skip)
            check_old(m, name, old, dims, skip)
        txt, csv = expected_files(values, dims, name)
        check_bytes(m, name + ".txt", txt, 11)
        check_bytes(m, name + ".csv", csv, 12)
    n_values = sum(len(e.get("ns", ())) for e in s["arrays"].values())
    assert n_1ns * 100 <= n_values, f"{n_1ns} of {n_values} values 1 ns apart"  # a few, not a pattern


@pytest.mark.parametrize("sname", STORES)
def test_old_store_info(written, mounts, sname):
    """.info: recognised by the CF units attribute (there is no dtype
    attribute), the stored type and the attributes used."""
    out, oracle = written
    store = out / f"{sname}.zarr"
    m = mounts(sname)
    for name in oracle["stores"][sname]["arrays"]:
        info = dict(line.split(": ", 1) for line in m.read(name + ".info").decode().splitlines())
        if native(store, name):
            assert info["encoding"] == "native numpy.timedelta64", name
            continue
        assert info["encoding"] == "CF units attribute", (name, info)
        assert info["stored_type"] == elem_name(zarray(store, name)["dtype"]), (name, info)
        attrs = zattrs(store, name)
        assert f'units="{attrs["units"]}"' in info["cf_attributes"], (name, info)
        assert "dtype=" not in info["cf_attributes"], (name, info)
        for key in ("scale_factor", "add_offset"):
            assert (f"{key}=" in info["cf_attributes"]) == (key in attrs), (name, key, info)


@pytest.mark.parametrize("mode", ["all", "dtype", "off"])
@pytest.mark.parametrize("sname", STORES)
def test_old_store_cf_modes(written, mounts, sname, mode):
    """-o cf=dtype and cf=off hide every units-only array (only native m8
    stays); cf=all shows them all, with the same bytes."""
    out, oracle = written
    store = out / f"{sname}.zarr"
    names = sorted(oracle["stores"][sname]["arrays"])
    natives = [n for n in names if native(store, n)]
    times = cf_times(store, oracle["stores"][sname]["other"])
    m = mounts(sname, mode)
    want = {"all": names + times, "dtype": natives + times, "off": natives}[mode]
    assert arrays_shown(m) == sorted(want)
    if mode == "all":
        base = mounts(sname)
        for name in names:
            assert m.read(name + ".txt") == base.read(name + ".txt"), name


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, *sys.argv[1:]]))
