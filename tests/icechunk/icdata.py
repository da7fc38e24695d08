"""The datasets of the Icechunk tests, shared by gen_spec2.py (icechunk 2)
and gen_spec1.py (icechunk 1): a forecast as dynamical.org publishes one,
its encoding, native timedelta64/datetime64 arrays, and a byte-for-byte
plain Zarr copy of a store."""

from __future__ import annotations

import asyncio
import shutil

import os

import numpy as np
import pandas as pd
import xarray as xr
import zarr
from zarr.core.buffer import default_buffer_prototype

import icoracle

H = 3600 * 10**6  # an hour in us


def blosc():
    return zarr.codecs.BloscCodec(cname="zstd", clevel=3, shuffle="shuffle")


def forecast(init0: str, n_init: int, seed: int) -> xr.Dataset:
    """a forecast as dynamical.org publishes one"""
    rng = np.random.default_rng(seed)
    init = pd.date_range(init0, periods=n_init, freq="12h")
    lead = (np.arange(8) * 3 * H).astype("timedelta64[us]")
    expected = np.full(n_init, 240 * H).astype("timedelta64[us]")
    ingested = (rng.integers(0, 9, n_init) * 3 * H).astype("timedelta64[us]")
    ingested[n_init // 2] = np.timedelta64("NaT")
    age = (rng.integers(-10**6, 10**8, (n_init, 8)) * 10**6).astype("timedelta64[us]")
    age[0, 3] = np.timedelta64("NaT")
    valid = init.values[:, None] + lead.astype("timedelta64[ns]")[None, :]
    temp = rng.normal(280, 10, (n_init, 8, 2)).astype("float32")
    return xr.Dataset(
        {"expected_forecast_length": ("init_time", expected),
         "ingested_forecast_length": ("init_time", ingested),
         "forecast_age": (("init_time", "lead_time"), age),
         "temperature": (("init_time", "lead_time", "latitude"), temp)},
        coords={"init_time": init, "lead_time": lead, "latitude": [10.0, 20.0],
                "valid_time": (("init_time", "lead_time"), valid)})


def encoding():
    seconds = {"dtype": "float64", "units": "seconds", "_FillValue": np.nan,
               "compressors": [blosc()]}
    since = {"dtype": "int64", "units": "seconds since 1970-01-01",
             "calendar": "proleptic_gregorian", "compressors": [blosc()]}
    return {"lead_time": dict(seconds), "expected_forecast_length": dict(seconds),
            "ingested_forecast_length": dict(seconds), "init_time": dict(since),
            "valid_time": dict(since, chunks=(2, 8)),
            "forecast_age": {"dtype": "int64", "units": "seconds", "chunks": (1, 4),
                             "shards": (2, 8), "compressors": [blosc()]},
            "temperature": {"chunks": (1, 4, 2), "shards": (2, 8, 2)}}


def native(store, seed: int, n: int):
    """native timedelta64 / datetime64 arrays (zarr-python's own data types)"""
    rng = np.random.default_rng(seed)
    g = zarr.open_group(store, path="native", mode="a")
    td = (rng.integers(-10**6, 10**6, n)).astype("timedelta64[s]")
    a = g.create_array("td", shape=(n,), dtype="timedelta64[s]", chunks=(4,), overwrite=True,
                       dimension_names=["n"],
                       fill_value=np.timedelta64("NaT"))
    a[:] = td
    dt = (np.datetime64("2025-06-01T00:00:00", "ms") + rng.integers(0, 10**9, n).astype("timedelta64[ms]"))
    dt[1] = np.datetime64("NaT")
    b = g.create_array("dt", shape=(n,), dtype="datetime64[ms]", chunks=(3,), overwrite=True,
                       dimension_names=["n"],
                       fill_value=np.datetime64("NaT"))
    b[:] = dt


def plain_copy(store, path):
    """every key of the session's store, byte for byte, as a plain Zarr store"""
    shutil.rmtree(path, ignore_errors=True)
    dst = zarr.storage.LocalStore(path)
    proto = default_buffer_prototype()

    async def copy():
        async for key in store.list():
            await dst.set(key, await store.get(key, prototype=proto))
    asyncio.run(copy())


def state(session, label, repo_dir, opts, plain_dir, out):
    """the expected text of the state a session shows, and its plain copy"""
    store = session.store
    groups = {None: icoracle.open_ds(store)}
    if "native" in zarr.open_group(store, mode="r").group_keys():
        groups["native"] = icoracle.open_ds(store, group="native")
    files = {}
    for group, ds in groups.items():
        for name, texts in icoracle.expected(ds).items():
            files[(group + "/" if group else "") + name] = texts
    rel = os.path.join("plain", label + ".zarr")
    plain_copy(store, os.path.join(plain_dir, rel))
    out.append({"label": label, "repo": repo_dir, "opts": opts, "plain": rel,
                "snapshot": session.snapshot_id, "files": files})


def v_array(group, name, n, chunk, attrs, dims):
    """an int64 array whose chunks are raw values (bytes codec only), for
    virtual chunks in files of little-endian int64s"""
    a = group.create_array(name, shape=(n,), dtype="int64", chunks=(chunk,), fill_value=0,
                           compressors=None, dimension_names=dims, overwrite=True)
    a.attrs.update(attrs)
    return a
