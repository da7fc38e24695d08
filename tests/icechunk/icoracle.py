"""The oracle of the Icechunk tests: what zarrfs must show for a dataset,
as xarray decodes it (through icechunk, or from a plain Zarr store).

Shared by gen_spec2.py (Python >= 3.12, icechunk 2.x: repositories and
their expected text, committed as test data) and gen_spec1.py (the test
venv's icechunk 1.1: spec 1 repositories written at test time).  NaT is
written as the empty string (the mounts use -o nat=), .csv files as
xarray's DataArray.to_dataframe().to_csv() of the dataset's variable."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pandas as pd
import xarray as xr


def shown(ds) -> list[str]:
    """names of the variables zarrfs shows: durations and time stamps"""
    return sorted(n for n, v in ds.variables.items() if v.dtype.kind in "mM")


def txt_of(values) -> bytes:
    out = []
    for v in np.asarray(values).ravel(order="C"):
        if np.isnat(v):
            out.append("")
        elif v.dtype.kind == "m":
            out.append(str(pd.Timedelta(v)))
        else:
            out.append(str(pd.Timestamp(v)))
    return "".join(s + "\n" for s in out).encode()


def txt_lines(values) -> list[str]:
    return txt_of(values).decode().splitlines()


def csv_of(da) -> bytes:
    """the .csv: xarray's to_dataframe().to_csv() of the variable as the
    dataset gives it (every coordinate of the group whose dimensions are its
    own, itself too when it is one), or by indices if it has no coordinates.
    The other coordinates' columns in zarrfs's order for a store without
    consolidated metadata (README: names compared without case), not the
    store's listing order that xarray follows there"""
    if da.ndim == 0 or not list(da.coords):
        lines = [",".join(list(da.dims) + [da.name])]
        for idx, text in zip(np.ndindex(*da.shape), txt_lines(da.values)):
            lines.append(",".join([str(i) for i in idx] + [text]))
        return "".join(x + "\n" for x in lines).encode()
    df = da.to_dataframe()
    cols = [str(c) for c in df.columns]
    order = sorted(range(len(cols) - 1), key=lambda i: (cols[i].lower(), cols[i]))
    return df.iloc[:, order + [len(cols) - 1]].to_csv().encode()


def expected(ds) -> dict[str, dict[str, str]]:
    """{name: {"txt": text, "csv": text}} for every array zarrfs shows"""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in shown(ds):
            da = ds[name].load()
            out[name] = {"txt": txt_of(da.values).decode(), "csv": csv_of(da).decode()}
    return out


def open_ds(store, group=None):
    """a dataset as a user reads it: every duration and time decoded, one
    dask block per chunk (as zarrfs decodes CF floats: chunk by chunk)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xr.open_zarr(store, group=group, consolidated=False, decode_timedelta=True,
                            chunks={})


def write_expected(path, cases):
    """the cases (list of dicts) as JSON, sorted keys: stable for a diff"""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"cases": cases}, f, indent=1, sort_keys=True)
        f.write("\n")


def write_facts(path, facts):
    """what a generator knows that the tests check (ids, refs, versions)"""
    with open(path, "w") as f:
        json.dump(facts, f, indent=1, sort_keys=True)
        f.write("\n")
