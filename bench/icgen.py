"""The Icechunk row's data (scripts/bench, row 17): a forecast as dynamical.org
publishes one, written twice with the same encoding: as an Icechunk
repository (icechunk 1.1: spec 1) and as a plain Zarr v3 store with
consolidated metadata (what a plain HTTP reader needs).

    python bench/icgen.py DIR N_INIT

DIR/repo.icechunk and DIR/plain.zarr: N_INIT init times (6-hourly, int64
`seconds since 1970-01-01`) x 100 lead times (float64 `units: seconds`,
`dtype: timedelta64[us]`, NaN fill); valid_time (init, lead) int64 seconds
since 1970 in chunks of 2000 init times; forecast_age (init, lead), a
float64 seconds duration with NaN fill, sharded (4000 x 100 shards of
1000 x 100 chunks); expected_forecast_length / ingested_forecast_length
(init) float64 seconds; temperature (init, lead) float32, sharded (not a
time: not shown, but read by the peer as a user would open the dataset).
Every codec blosc zstd, as dynamical.org's."""
import shutil
import sys
import warnings

import numpy as np
import pandas as pd
import xarray as xr
import zarr
import icechunk as ic

warnings.simplefilter("ignore")
H = 3600 * 10**6


def dataset(n_init):
    rng = np.random.default_rng(7)
    init = pd.date_range("2015-01-01", periods=n_init, freq="6h")
    lead = (np.arange(100) * 3 * H).astype("timedelta64[us]")
    age = (rng.integers(0, 240, (n_init, 100)) * H).astype("timedelta64[us]")
    age[rng.random((n_init, 100)) < 0.01] = np.timedelta64("NaT")
    ingested = (rng.integers(0, 100, n_init) * 3 * H).astype("timedelta64[us]")
    valid = init.values[:, None] + lead.astype("timedelta64[ns]")[None, :]
    temp = rng.normal(280, 10, (n_init, 100)).astype("float32")
    return xr.Dataset(
        {"expected_forecast_length": ("init_time", np.full(n_init, 297 * H).astype("timedelta64[us]")),
         "ingested_forecast_length": ("init_time", ingested),
         "forecast_age": (("init_time", "lead_time"), age),
         "temperature": (("init_time", "lead_time"), temp)},
        coords={"init_time": init, "lead_time": lead,
                "valid_time": (("init_time", "lead_time"), valid)})


def encoding():
    blosc = lambda: [zarr.codecs.BloscCodec(cname="zstd", clevel=3, shuffle="shuffle")]
    secs = {"dtype": "float64", "units": "seconds", "_FillValue": np.nan, "compressors": blosc()}
    since = {"dtype": "int64", "units": "seconds since 1970-01-01",
             "calendar": "proleptic_gregorian", "compressors": blosc()}
    return {"lead_time": dict(secs), "expected_forecast_length": dict(secs),
            "ingested_forecast_length": dict(secs), "init_time": dict(since),
            "valid_time": dict(since, chunks=(2000, 100)),
            "forecast_age": dict(secs, chunks=(1000, 100), shards=(4000, 100)),
            "temperature": {"chunks": (1000, 100), "shards": (4000, 100), "compressors": blosc()}}


def main(d, n_init):
    ds = dataset(n_init)
    shutil.rmtree(d + "/repo.icechunk", ignore_errors=True)
    shutil.rmtree(d + "/plain.zarr", ignore_errors=True)
    repo = ic.Repository.create(ic.local_filesystem_storage(d + "/repo.icechunk"))
    s = repo.writable_session("main")
    ds.to_zarr(s.store, mode="w", consolidated=False, encoding=encoding(), safe_chunks=False)
    s.commit("bench forecast")
    ds.to_zarr(d + "/plain.zarr", mode="w", consolidated=True, zarr_format=3, encoding=encoding(),
               safe_chunks=False)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
