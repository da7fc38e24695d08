#!/usr/bin/env python3
"""Write the store of calendars.bats and the text xarray (with cftime) gives.

OUT/store.zarr (v3, consolidated): a noleap monthly time coordinate from 2015
to 2300 labelling `tas_time` (a noleap variable of time stamps), and a
standard-calendar scenario time axis from 1850 to 2300 in days since
1850-01-01 (a value past 2262: cftime objects for every value) labelling
`valid`; chunks of 97 values, so that sizing and labelling decode many.
OUT/NAME.txt and OUT/NAME.csv are xarray's text of each (whole-array
decoding, to_dataframe().to_csv()).

Run: PYTHON calendars_gen.py OUT
"""
import sys
import warnings

import numpy as np
import xarray as xr

warnings.simplefilter("ignore")
out = sys.argv[1]
clim = xr.date_range("2015-01-16 12:00", periods=286 * 12, freq="MS", calendar="noleap",
                     use_cftime=True)
scen = xr.date_range("1850-01-01", "2300-12-31", freq="30D", calendar="standard", use_cftime=True)
ds = xr.Dataset(coords={"time": clim, "scen": scen})
ds["tas_time"] = ("time", xr.date_range("0001-01-01", periods=clim.size, freq="7D", calendar="noleap",
                                        use_cftime=True))
ds["valid"] = ("scen", scen.shift(6, "h"))
enc = {k: {"chunks": (97,)} for k in ("time", "scen", "tas_time", "valid")}
enc["scen"]["units"] = "days since 1850-01-01"
ds.to_zarr(f"{out}/store.zarr", mode="w", zarr_format=3, encoding=enc)
back = xr.open_zarr(f"{out}/store.zarr", chunks=None)
for name in ("time", "scen", "tas_time", "valid"):
    with open(f"{out}/{name}.txt", "w") as f:
        f.writelines(str(v) + "\n" for v in back[name].values)
for name in ("tas_time", "valid"):
    back[[name]].to_dataframe().to_csv(f"{out}/{name}.csv")
