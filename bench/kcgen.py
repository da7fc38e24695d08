"""Row 19's data (scripts/bench): two NetCDF4 files written by xarray
(h5netcdf) holding a duration variable `lead` (timedelta64[ns] lead times
0..30 days in whole seconds, 1 % NaT; int64 seconds with _FillValue, chunks
of 10^6, shuffle + zlib), N/2 values each along `t`, and a kerchunk
reference set combining them (SingleHdf5ToZarr each, MultiZarrToZarr along
`t`): DIR/refs.json, targets relative to DIR.

usage: kcgen.py DIR N
"""
import json
import os
import sys
import warnings

import numpy as np
import xarray as xr
from kerchunk.combine import MultiZarrToZarr
from kerchunk.hdf import SingleHdf5ToZarr


def main():
    out, n = sys.argv[1], int(float(sys.argv[2]))
    os.chdir(out)
    half = n // 2
    rng = np.random.default_rng(19)
    refs = []
    for k in range(2):
        lead = rng.integers(0, 30 * 86400, half) * np.int64(10**9)
        lead = lead.astype("timedelta64[ns]")
        lead[rng.random(half) < 0.01] = np.timedelta64("NaT")
        t = np.arange(k * half, (k + 1) * half, dtype="int64")
        name = f"f{k}.nc"
        xr.Dataset({"lead": ("t", lead)}, coords={"t": t}).to_netcdf(
            name, engine="h5netcdf",
            encoding={"lead": {"dtype": "int64", "units": "seconds", "zlib": True,
                               "shuffle": True, "chunksizes": (min(10**6, half),),
                               "_FillValue": -1},
                      "t": {"chunksizes": (min(10**6, half),)}})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            refs.append(SingleHdf5ToZarr(name, inline_threshold=0).translate())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        combined = MultiZarrToZarr(refs, concat_dims=["t"]).translate()
    with open("refs.json", "w") as f:
        json.dump(combined, f)


if __name__ == "__main__":
    main()
