"""Generate the benchmark store with zarr-python (default codecs: bytes + zstd).

    python bench/gen.py STORE N

Layout (each array alone in its group, so `ls -l` of a group sizes one array):
    a/lt       N elements, timedelta64[ns], chunks of 10^6
    b/lt2      N elements, another seed (the second reader of target 8)
    s/lt_1e7   the first 10^7 elements of a/lt (only when N > 10^7; the peers'
               slice, measured directly through zarrfs)
    c/lt_i64   the values of a/lt CF-encoded as xarray writes them: int64 with
               attributes units "nanoseconds" and dtype "timedelta64[ns]"
    f/lt_f64   the same durations as float64 seconds, NaN for NaT, with
               units "seconds" and _FillValue NaN (base64), as dynamical.org

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


def main():
    store, n = sys.argv[1], int(float(sys.argv[2]))
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
    print(f"gen: {n} elements, serializer {a.serializer}, compressors {a.compressors}, "
          f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
