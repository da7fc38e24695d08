"""Generate the benchmark store with zarr-python (default codecs: bytes + zstd).

    python bench/gen.py STORE N [--no-x]

(--no-x: leave out group x, as for the remote rows' store)

Layout (each array alone in its group, so `ls -l` of a group sizes one array):
    a/lt       N elements, timedelta64[ns], chunks of 10^6
    b/lt2      N elements, another seed (the second reader of target 8)
    s/lt_1e7   the first 10^7 elements of a/lt (only when N > 10^7; the peers'
               slice, measured directly through zarrfs)
    c/lt_i64   the values of a/lt CF-encoded as xarray writes them: int64 with
               attributes units "nanoseconds" and dtype "timedelta64[ns]"
    f/lt_f64   the same durations as float64 seconds, NaN for NaT, with
               units "seconds" and _FillValue NaN (base64), as dynamical.org
    x/         a forecast dataset as xarray writes it (Dataset.to_zarr,
               zarr_format=3, group "x"): x/lead(init_time, step) timedelta64[ns],
               N elements (N/1000 x 1000), whole hours in 0..30 days, 1 % NaT,
               chunks (1000, 1000); coordinates x/init_time (6-hourly from
               2020-01-01, CF int64 "hours since 2020-01-01") and x/step
               (timedelta64, hourly 0..999 h); written in pieces appended along
               init_time (row 16: labelled .csv)

Values are forecast lead times: a whole number of minutes in 0..30 days for
about half of them, the rest with nanosecond jitter, and 1 % NaT.
"""
import sys
import time

import numpy as np
import zarr

CHUNK = 10**6
SLICE = 10**7


def values(n, seed):
    rng = np.random.default_rng(seed)
    out = np.empty(n, dtype="timedelta64[ns]")
    iv = out.view(np.int64)
    step = 10**7  # generate in pieces to bound temporaries
    for lo in range(0, n, step):
        m = min(step, n - lo)
        minutes = rng.integers(0, 30 * 24 * 60 + 1, m, dtype=np.int64)
        v = minutes * 60_000_000_000
        jitter = rng.random(m) < 0.5
        v[jitter] += rng.integers(0, 60_000_000_000, int(jitter.sum()), dtype=np.int64)
        nat = rng.random(m) < 0.01
        v[nat] = np.iinfo(np.int64).min
        iv[lo:lo + m] = v
    return out


def write(root, path, data):
    a = root.create_array(path, shape=data.shape, chunks=(min(CHUNK, max(1, data.size)),),
                          dtype=data.dtype, overwrite=True)
    a[:] = data
    return a


def write_cf(root, path, data, attrs):
    a = root.create_array(path, shape=data.shape, chunks=(min(CHUNK, max(1, data.size)),),
                          dtype=data.dtype, overwrite=True, attributes=attrs)
    a[:] = data
    return a


def cf_float_seconds(d):
    """float64 seconds of timedelta64[ns] d, NaN for NaT, in pieces."""
    out = np.empty(d.size, dtype=np.float64)
    iv = d.view(np.int64)
    for lo in range(0, d.size, 10**7):
        v = iv[lo:lo + 10**7]
        f = v.astype(np.float64) / 1e9
        f[v == np.iinfo(np.int64).min] = np.nan
        out[lo:lo + v.size] = f
    return out


XSTEP = 1000      # x/lead's second dimension (step)
XPIECE = 10**7    # values per appended piece of x/lead


def write_x(store, n, seed=3):
    """Group x: a 2-D forecast lead-time dataset written by xarray in pieces."""
    import warnings
    import pandas as pd
    import xarray as xr
    # xarray consolidates metadata by default; zarr-python warns that v3 has no such spec
    warnings.filterwarnings("ignore", message="Consolidated metadata", category=UserWarning)
    nstep = min(XSTEP, max(1, n))
    ninit = max(1, n // nstep)
    rows_per = max(1, XPIECE // nstep)
    rng = np.random.default_rng(seed)
    steps = (np.arange(nstep, dtype=np.int64) * 3_600_000_000_000).view("timedelta64[ns]")
    t0 = np.datetime64("2020-01-01T00:00:00", "ns")
    for lo in range(0, ninit, rows_per):
        m = min(rows_per, ninit - lo)
        hours = rng.integers(0, 30 * 24 + 1, (m, nstep), dtype=np.int64)
        v = hours * 3_600_000_000_000
        v[rng.random((m, nstep)) < 0.01] = np.iinfo(np.int64).min
        init = t0 + (np.arange(lo, lo + m, dtype=np.int64) * 6 * 3_600_000_000_000).view(
            "timedelta64[ns]")
        ds = xr.Dataset({"lead": (("init_time", "step"), v.view("timedelta64[ns]"))},
                        coords={"init_time": pd.DatetimeIndex(init), "step": steps})
        if lo == 0:
            ds.to_zarr(store, group="x", mode="w", zarr_format=3,
                       encoding={"lead": {"chunks": (min(1000, ninit), nstep)},
                                 "init_time": {"units": "hours since 2020-01-01",
                                               "dtype": "int64"}})
        else:
            ds.to_zarr(store, group="x", mode="a", append_dim="init_time", zarr_format=3)
    return ninit, nstep


def main():
    store, n = sys.argv[1], int(float(sys.argv[2]))
    with_x = "--no-x" not in sys.argv[3:]
    t0 = time.perf_counter()
    root = zarr.open_group(store, mode="w", zarr_format=3)
    root.create_group("a")
    root.create_group("b")
    d = values(n, 1)
    a = write(root, "a/lt", d)
    if n > SLICE:
        root.create_group("s")
        write(root, "s/lt_1e7", d[:SLICE])
    root.create_group("c")
    write_cf(root, "c/lt_i64", d.view(np.int64),
             {"units": "nanoseconds", "dtype": "timedelta64[ns]"})
    root.create_group("f")
    write_cf(root, "f/lt_f64", cf_float_seconds(d),
             {"units": "seconds", "_FillValue": "AAAAAAAA+H8="})
    del d
    write(root, "b/lt2", values(n, 2))
    if with_x:
        t1 = time.perf_counter()
        ninit, nstep = write_x(store, n)
        print(f"gen: x/lead {ninit} x {nstep} (xarray to_zarr), {time.perf_counter() - t1:.1f} s",
              file=sys.stderr)
    print(f"gen: {n} elements, serializer {a.serializer}, compressors {a.compressors}, "
          f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
