"""Random stores, every NAME.csv against xarray itself (issue 25).

Seeded (ZF_LABELS_SEED, default 25; the seed of each store is in the failure
message): many small stores written by xarray's to_zarr (v2 and v3,
consolidated or not), each with several dimensions, dimension and other
coordinates of every type (integers, floats with NaN and signed zeros,
strings fixed and variable, bytes, bools, time stamps and durations at
every resolution, with NaT; scalar and N-D ones; some in shards), duration
and time-stamp arrays in every encoding xarray writes (int64 with a dtype
attribute, float64 / float32 / float16, packed integers; chunked at random),
coordinates named by each array's attribute, by another's only or by the
group's, and a few arrays written by zarr-python alone (native
timedelta64 / datetime64, months and years).  For every duration and
time-stamp array xarray decodes, zarrfs must show its files, and with
-o nat= its .csv must be byte for byte
`xarray.open_zarr(STORE, decode_timedelta=True)[NAME].to_dataframe().to_csv()`
(an array without coordinates: the index columns and its .txt text, as
README says).  Without consolidated metadata xarray lists a group in the
order the store lists it, which changes from one open to the next; there
the coordinate columns are compared in zarrfs's documented order (names
without case, README).

ZF_LABELS_STORES sets the number of stores (default 300; 40 with ZF_QUICK=1).
"""

from __future__ import annotations

import os
import random
import warnings

import numpy as np
import pandas as pd
import pytest
import zarr

import dask  # noqa: F401 - xarray.open_zarr(chunks={}) needs it
import xarray as xr

import oracle

pytestmark = pytest.mark.filterwarnings("ignore")

QUICK = os.environ.get("ZF_QUICK", "0") not in ("", "0")
STORES = int(os.environ.get("ZF_LABELS_STORES", "40" if QUICK else "300"))
SEED = int(os.environ.get("ZF_LABELS_SEED", "25"))
PER_TEST = 10  # stores per test case (one pytest case each, so a failure names its batch)

DIM_NAMES = ["x", "y", "time", "step", "Init", "lat", "k-1"]
NS = 10**9
DAY = 86400 * NS


# ---------------------------------------------------------------------------
# random values


def time_values(rng: random.Random, n: int, kind: str):
    """n durations ('m') or time stamps ('M') at a random resolution, some NaT"""
    res = rng.choice(["D", "h", "s", "ms", "us", "ns", "mixed"])
    step = {"D": DAY, "h": 3600 * NS, "s": NS, "ms": 10**6, "us": 1000, "ns": 1}
    out = []
    for _ in range(n):
        r = rng.choice(list(step)) if res == "mixed" else res
        v = rng.randrange(-400, 1500) * step[r] * rng.choice([1, 1, 3, 7])
        out.append(v)
    if n > 1 and rng.random() < 0.4:
        out[rng.randrange(n)] = None
    a = np.array([np.iinfo(np.int64).min if v is None else v for v in out], dtype="int64")
    if kind == "M":
        a = np.where(a == np.iinfo(np.int64).min, a, a + rng.choice([0, 946684800 * NS, -10**18]))
        return a.view("datetime64[ns]")
    return a.view("timedelta64[ns]")


def other_values(rng: random.Random, n: int, kind: str):
    """n values of a coordinate that is not a time type"""
    if kind == "int":
        dt = rng.choice(["i8", "i2", "u1"])
        return np.array([rng.randrange(0 if dt == "u1" else -50, 250) for _ in range(n)], dtype=dt)
    if kind == "float":
        pool = [0.0, -0.0, 0.1, 1e-5, 2.5, -7.25, 1e20, float("nan"), 123456.75, 1 / 3]
        return np.array([rng.choice(pool) for _ in range(n)], dtype=rng.choice(["f8", "f4"]))
    if kind == "bool":
        return np.array([rng.random() < 0.5 for _ in range(n)])
    words = ["a", "b,c", 'say "hi"', "", "zürich", "x y", "line\nbreak", "1.5", "NaN"]
    vals = [rng.choice(words) + str(k) for k in range(n)]
    if kind == "bytes":
        return np.array([v.encode("utf-8") for v in vals])
    return np.array(vals, dtype=object if kind == "object" else "<U12")


def coord_values(rng, n, index):
    """a coordinate's values; an index (a dimension coordinate) has no
    repeated values but floats may hold both zeros"""
    kind = rng.choice(["int", "float", "str", "object", "bytes", "bool", "M", "m"])
    if kind in ("M", "m"):
        return time_values(rng, n, kind)
    if index and kind == "bool":
        kind = "int"
    return other_values(rng, n, kind)


# ---------------------------------------------------------------------------
# one random store


def time_encoding(rng: random.Random, kind: str, ndim: int, shape):
    enc = {}
    if ndim and rng.random() < 0.6:
        enc["chunks"] = tuple(rng.randint(1, max(1, s)) for s in shape)
    r = rng.random()
    if kind == "m" and r < 0.25:
        enc.update({"dtype": rng.choice(["float64", "float32"]), "units": rng.choice(["seconds", "hours", "milliseconds"])})
    elif kind == "m" and r < 0.35:
        enc.update({"dtype": "int32", "units": "hours", "scale_factor": 0.25, "_FillValue": -999})
    elif kind == "m" and r < 0.42:  # scaled in float64 (made seconds first); under 65504
        enc.update({"dtype": "float16", "units": "days"})
    elif kind == "M" and r < 0.3:
        enc.update({"dtype": rng.choice(["float64", "int64"]),
                    "units": rng.choice(["hours since 2000-01-01", "seconds since 1970-01-01T00:00:00",
                                         "days since 1999-12-31 06:00"])})
    return enc


def make_store(path: str, seed: int) -> dict:
    """write one random store; returns how it was written"""
    rng = random.Random(seed)
    fmt = rng.choice([2, 3])
    consolidated = rng.random() < 0.5
    dims = rng.sample(DIM_NAMES, rng.randint(1, 3))
    sizes = {d: rng.randint(1, 5) for d in dims}
    coords, data, enc = {}, {}, {}
    for d in dims:
        if rng.random() < 0.75:
            v = coord_values(rng, sizes[d], True)
            if v.dtype.kind not in "fMm":
                v = np.unique(v)  # pandas needs no duplicates for a unique index
                sizes[d] = len(v)
            coords[d] = v
    for k in range(rng.randint(0, 3)):
        cd = rng.sample(dims, rng.randint(0, min(2, len(dims))))
        shape = [sizes[d] for d in cd]
        n = int(np.prod(shape)) if cd else 1
        coords[f"c{k}" if rng.random() < 0.7 else f"C{k}"] = (cd, coord_values(rng, n, False).reshape(shape))
    for k in range(rng.randint(1, 4)):
        kind = rng.choice(["m", "m", "M"])
        vd = rng.sample(dims, rng.randint(1, len(dims)))
        shape = [sizes[d] for d in vd]
        name = rng.choice(["lead", "valid", "age", "Wait", "t_1"]) + str(k)
        data[name] = (vd, time_values(rng, int(np.prod(shape)), kind).reshape(shape))
        enc[name] = time_encoding(rng, kind, len(vd), shape)
    if rng.random() < 0.5:
        data["w"] = (dims[:1], np.linspace(0, 1, sizes[dims[0]]))
    ds = xr.Dataset(data, coords=coords)
    for name in data:  # attributes Python's json writes as NaN, Infinity, -Infinity
        if rng.random() < 0.2:
            ds[name].attrs["valid_range"] = [float("nan"), rng.choice([float("inf"), -float("inf")])]
    for name in data:  # names in the attribute: all, fewer or none
        r = rng.random()
        if r < 0.2:
            ds[name].encoding["coordinates"] = None
        elif r < 0.3 and list(ds[name].coords):
            ds[name].encoding["coordinates"] = rng.choice(list(ds[name].coords))
    if fmt == 3 and rng.random() < 0.3:
        for c, v in coords.items():
            arr = v[1] if isinstance(v, tuple) else v
            if np.asarray(arr).ndim == 1 and len(arr) > 1 and np.asarray(arr).dtype.kind in "OUS":
                enc[c] = {"chunks": (1,), "shards": (len(arr),)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(path, mode="w", zarr_format=fmt, consolidated=False, encoding=enc)
    if rng.random() < 0.25:  # zarr-python's own arrays, no xarray attributes
        g = zarr.open_group(path, mode="a")
        d = rng.choice(dims)
        unit = rng.choice(["s", "ms", "D", "M", "Y", "h"])
        kind = "timedelta64" if unit in ("s", "ms", "D", "h") and rng.random() < 0.5 else "datetime64"
        vals = np.array([rng.randrange(-200, 2000) for _ in range(sizes[d])], dtype="int64")
        kw = {"dimension_names": [d]} if fmt == 3 else {}
        a = g.create_array(f"native_{unit}", shape=(sizes[d],), chunks=(max(1, sizes[d] // 2),),
                           dtype=f"{kind}[{unit}]", **kw)
        if fmt == 2:
            a.attrs["_ARRAY_DIMENSIONS"] = [d]
        a[:] = vals.view(f"{kind}[{unit}]")
    if consolidated:
        zarr.consolidate_metadata(path)
    return {"fmt": fmt, "consolidated": consolidated, "seed": seed}


# ---------------------------------------------------------------------------
# what xarray writes


def casefold_order(names):
    """zarrfs's order of coordinate columns where a store has no
    consolidated metadata (README): ASCII letters without case, then bytes"""
    return sorted(range(len(names)), key=lambda i: (names[i].lower(), names[i]))


def text_of(v):
    if np.isnat(v):
        return ""
    return str(pd.Timedelta(v)) if v.dtype.kind == "m" else str(pd.Timestamp(v))


def expected_csv(ds, name, consolidated) -> bytes:
    da = ds[name]
    if da.ndim == 0 or not list(da.coords):  # no coordinates: zarrfs's index columns
        lines = [",".join(list(da.dims) + [name])]
        for idx in np.ndindex(*da.shape):
            lines.append(",".join([str(i) for i in idx] + [text_of(da.values[idx])]))
        return "".join(s + "\n" for s in lines).encode()
    df = da.to_dataframe()
    if not consolidated and df.shape[1] > 2:
        cols = [str(c) for c in df.columns]
        order = [i for i in casefold_order(cols[:-1])] + [len(cols) - 1]
        df = df.iloc[:, order]
    return df.to_csv().encode()


def check_store(mounter, path: str, info: dict) -> list[str]:
    """compare every time array's .csv; the problems found"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = xr.open_zarr(path, decode_timedelta=True, consolidated=info["consolidated"] or None)
        names = [k for k in ds.variables if ds[k].dtype.kind in "mM"]
        want = {k: expected_csv(ds, k, info["consolidated"]) for k in names}
    m = mounter(path, "-o", "nat=")
    problems = []
    shown = {f[:-4] for f in m.listdir() if f.endswith(".csv")}
    if shown != set(names):
        problems.append(f"shown {sorted(shown)}, xarray decodes {sorted(names)}")
    for k in names:
        if k not in shown:
            continue
        try:
            got = m.read(f"{k}.csv")
            size = m.stat(f"{k}.csv").st_size
        except OSError as e:
            problems.append(f"{k}.csv: {e}; log:\n" + m.log())
            continue
        if got != want[k] or size != len(want[k]):
            gl, wl = got.decode(errors="replace").splitlines(), want[k].decode().splitlines()
            diff = next(((i, g, w) for i, (g, w) in enumerate(zip(gl, wl)) if g != w),
                        (min(len(gl), len(wl)), "<end>", "<end>"))
            problems.append(f"{k}.csv line {diff[0]}: zarrfs {diff[1]!r}, xarray {diff[2]!r} "
                            f"(size {size}, want {len(want[k])})")
    problems += [f"log: {line}" for line in m.log().splitlines() if "zarrfs: error" in line]
    stopped = m.stop()  # one daemon at a time
    return problems + ([m.describe(stopped)] if stopped else [])


@pytest.fixture(autouse=True, scope="module")
def _versions():
    oracle.check_csv_versions()


@pytest.mark.parametrize("batch", range((STORES + PER_TEST - 1) // PER_TEST))
def test_random_stores(tmp_path, zf_mount, batch):
    failures = []
    for i in range(batch * PER_TEST, min(STORES, (batch + 1) * PER_TEST)):
        seed = SEED * 100003 + i
        path = str(tmp_path / f"s{i}.zarr")
        info = make_store(path, seed)
        problems = check_store(zf_mount, path, info)
        if problems:
            failures.append(f"store {i} (ZF_LABELS_SEED={SEED}, seed {seed}, v{info['fmt']}, "
                            f"consolidated {info['consolidated']}):\n  " + "\n  ".join(problems))
    assert not failures, "\n".join(failures)
