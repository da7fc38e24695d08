"""The oracle of the Icechunk tests: what zarrfs must show for a dataset,
as xarray decodes it (through icechunk, or from a plain Zarr store).

Shared by gen_spec2.py (Python >= 3.12, icechunk 2.x: repositories and
their expected text, committed as test data) and gen_spec1.py (the test
venv's icechunk 1.1: spec 1 repositories written at test time).  NaT is
written as the empty string (the mounts use -o nat=), .csv files as
xarray's DataArray.to_dataframe().to_csv() (to_series() for a dimension
coordinate, whose own name is its index)."""

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
    """the .csv: labelled by the dimensions' coordinates and the non-dimension
    ones the variable's `coordinates` attribute names (xarray's to_dataframe
    of the variable with those coordinates), or by indices if it has none"""
    named = set(da.encoding.get("coordinates", "").split())
    da = da.drop_vars([c for c in da.coords if c not in da.dims and c not in named and c != da.name])
    if da.name in da.dims:
        return da.to_series().to_csv().encode()
    if not any(c != da.name for c in da.coords):
        lines = [",".join(list(da.dims) + [da.name])]
        for idx, text in zip(np.ndindex(*da.shape), txt_lines(da.values)):
            lines.append(",".join([str(i) for i in idx] + [text]))
        return "".join(x + "\n" for x in lines).encode()
    if da.name in da.coords:  # a non-dimension coordinate: its values, not a label too
        da = da.drop_vars(da.name)
    return da.to_dataframe().to_csv().encode()


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
