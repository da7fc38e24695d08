"""CF int64 and float64 arrays through the block loops (src/chunk/convert_fast.c)
against xarray itself.

Chunks of 1300 elements span three blocks of 512 (and end partway through
one); each chunk holds a different mix, so that each needs a different power
of 1000 (xarray picks one per dask block = per chunk): whole seconds only,
milliseconds, whole numbers but for one nanosecond-fine value in the last
block, nanoseconds with NaN payloads, subnormals and -0.0, values near the
int64 bounds of their unit, mask values.  Every .txt/.csv byte must equal
str(pandas.Timedelta(v)) of xarray.open_zarr(..., decode_timedelta=True).
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from test_cf import NAT_MIN, arrays_shown, check_array, v2_array, v3_array

pytestmark = pytest.mark.filterwarnings("ignore")

CHUNK = 1300
BLOCK = 512


def b64(x):
    import base64
    return base64.standard_b64encode(struct.pack("<d", x)).decode()


def nan_payloads(n):
    bits = np.array([0x7FF8000000000000, 0x7FF0000000000001, 0xFFF8000000000000,
                     0x7FFFFFFFFFFFFFFF, 0xFFF0000000000123], dtype=np.uint64)
    return bits[np.arange(n) % bits.size].view(np.float64)


def float_seconds(rng):
    """Five chunks, the last partial; values in seconds."""
    k = rng.integers(-10**6, 10**6, CHUNK)
    whole = k.astype("f8")
    whole[::97] = np.nan
    whole[5], whole[6], whole[7] = -0.0, 9223372036.0, -9223372036.0
    ms = rng.integers(-10**9, 10**9, CHUNK) / 1e3
    ms[3], ms[4], ms[10] = 0.1, -0.5, 0.001
    late = k.astype("f8")
    late[CHUNK - 7] = 3e-9  # only the last block needs ns
    ns = rng.integers(-10**15, 10**15, CHUNK) / 1e9
    ns[::50] = nan_payloads(ns[::50].size)
    ns[1], ns[2], ns[3] = 5e-324, -2.2250738585072014e-308 / 3, -0.0
    ns[4], ns[5] = 9223372036.8547, -9223372036.8547
    us = rng.integers(-10**12, 10**12, 777) / 1e6
    return np.concatenate([whole, ms, late, ns, us])


def int_near_bounds(rng, mult):
    """int64 counts within int64 ticks for `mult` ticks per count."""
    hi, lo = np.iinfo(np.int64).max // mult, -(np.iinfo(np.int64).max // mult)
    v = rng.integers(lo, hi, 3 * CHUNK + 41, dtype=np.int64)
    v[::61] = NAT_MIN
    v[1], v[2], v[3], v[4] = hi, lo, hi - 1, lo + 1
    v[CHUNK + BLOCK - 1], v[CHUNK + BLOCK] = hi, lo  # either side of a block edge
    return v


def write_store(store, fmt):
    import zarr
    rng = np.random.default_rng(1414)
    g = zarr.open_group(str(store), mode="w", zarr_format=fmt)
    names = []

    def add(name, data, attrs, fill):
        if fmt == 3:
            v3_array(g, name, data, attrs, ["t"], (CHUNK,), fill)
        else:
            v2_array(g, name, data, attrs, ["t"], (CHUNK,), fill)
        names.append(name)

    secs = float_seconds(rng)
    fill_nan = {"_FillValue": b64(float("nan"))} if fmt == 3 else {}
    add("f64_s", secs, {"units": "seconds", **fill_nan}, float("nan") if fmt == 2 else 0.0)
    masked = secs.copy()
    masked[::13] = -1.0
    masked[::29] = 2.5
    add("f64_ms_masked", masked, {"units": "milliseconds", "missing_value": [-1.0, 2.5]},
        None if fmt == 2 else 0.0)
    add("f64_hours", np.clip(secs, -9e9, 9e9) / 3600.0, {"units": "hours"}, None if fmt == 2 else 0.0)
    us = np.arange(2 * CHUNK, dtype="f8") * 1e6
    us[CHUNK - 3], us[CHUNK + 600] = 2.0**51 + 0.5, -(2.0**51 + 0.5)  # whole after one x1000
    add("f64_us", us, {"units": "microseconds"}, None if fmt == 2 else 0.0)
    add("i64_s", int_near_bounds(rng, 10**9), {"units": "seconds"}, None if fmt == 2 else 0)
    days = int_near_bounds(rng, 86400)
    days[::17] = -1
    add("i64_days_fill", days, {"units": "days", "dtype": "timedelta64[s]",
                                **({"_FillValue": -1} if fmt == 3 else {})}, -1 if fmt == 2 else 0)
    add("i64_ns", int_near_bounds(rng, 1), {"units": "nanoseconds", "dtype": "timedelta64[ns]"},
        None if fmt == 2 else 0)
    return names


@pytest.mark.parametrize("fmt", [2, 3])
def test_block_loops_match_xarray(tmp_path, zf_mount, fmt):
    store = tmp_path / f"fast{fmt}.zarr"
    names = write_store(store, fmt)
    m = zf_mount(store)
    assert arrays_shown(m) == sorted(names)
    for name in names:
        check_array(m, store, name, False)


def test_block_loops_without_simd(tmp_path, zf_mount, monkeypatch):
    """The same bytes from the scalar loops (ZARRFS_NO_SIMD=1)."""
    monkeypatch.setenv("ZARRFS_NO_SIMD", "1")
    store = tmp_path / "fast_nosimd.zarr"
    names = write_store(store, 3)
    m = zf_mount(store)
    for name in names:
        check_array(m, store, name, False)
