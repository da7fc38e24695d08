#!/usr/bin/env python3
"""gen_spec2.py - the spec 2 Icechunk repositories of the tests, and what
zarrfs must show for them: every duration and time-stamp array's .txt and
.csv as xarray reads it through icechunk, plus a plain Zarr v3 copy of each
state for a second comparison.

Needs Python >= 3.12 with icechunk 2.3, xarray, zarr and dask (Debian 13:
see tests/icechunk/README.md).  Usage:

    gen_spec2.py OUTDIR          (the tests read tests/data/icechunk/spec2)

Writes OUTDIR/forecast.icechunk (a dynamical.org-like forecast: float64
`units: seconds` durations with `dtype: timedelta64[us]` and NaN fill,
int64 `seconds since 1970-01-01` times, blosc/zstd, a sharded duration,
native timedelta64/datetime64 arrays, manifests split by extents; three
commits on main, a branch `dev`, tags `v1` and `v3`, a deleted tag `tmp`),
OUTDIR/virtual.icechunk (virtual chunks in VIRT, by absolute file:// URL
and by vcc://NAME/PATH, with a last-modified check, and 40
one-value chunks whose locations the writer compresses: from 20 a manifest), OUTDIR/virt (the
virtual chunks' target files: the tests copy them to VIRT while they run),
OUTDIR/plain/*.zarr, and OUTDIR/expected.json."""

from __future__ import annotations

import datetime
import os
import shutil
import sys
import warnings

import numpy as np
import pandas as pd
import xarray as xr
import zarr
import icechunk as ic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import icoracle  # noqa: E402
from icdata import encoding, forecast, native, state, v_array  # noqa: E402

VIRT = "/tmp/zarrfs-ic2-virtual"
T0 = 1735689600  # 2025-01-01: the virtual targets' mtime, and time.bin's last-modified check

warnings.simplefilter("ignore")


def gen_forecast(outdir, cases):
    path = os.path.join(outdir, "forecast.icechunk")
    shutil.rmtree(path, ignore_errors=True)
    split = ic.ManifestSplittingConfig.from_dict(
        {ic.ManifestSplitCondition.name_matches("forecast_age|valid_time"):
         {ic.ManifestSplitDimCondition.DimensionName("init_time"): 2}})
    cfg = ic.RepositoryConfig(inline_chunk_threshold_bytes=100,
                              manifest=ic.ManifestConfig(splitting=split))
    repo = ic.Repository.create(ic.local_filesystem_storage(path), config=cfg)
    s = repo.writable_session("main")
    forecast("2025-01-01", 4, 1).to_zarr(s.store, mode="w", consolidated=False, encoding=encoding())
    native(s.store, 2, 10)
    c1 = s.commit("initial forecast: 4 init times")
    repo.create_tag("v1", c1)
    state(repo.readonly_session(tag="v1"), "v1", "forecast.icechunk", ["-o", "tag=v1"], outdir, cases)
    state(repo.readonly_session(snapshot_id=c1), "c1", "forecast.icechunk",
          ["-o", "snapshot=" + c1], outdir, cases)

    s = repo.writable_session("main")
    forecast("2025-01-03", 2, 3).to_zarr(s.store, append_dim="init_time", consolidated=False,
                                         safe_chunks=False)
    c2 = s.commit("append two init times")
    repo.create_tag("tmp", c2)
    repo.delete_tag("tmp")

    s = repo.writable_session("main")
    z = zarr.open_group(s.store, mode="a")
    ing = z["ingested_forecast_length"]
    ing[1:3] = [np.nan, 12 * 3600.0]
    z["native/td"][0:2] = np.array([1, -1], dtype="timedelta64[s]")
    c3 = s.commit("fix the ingested lengths\nsecond line")
    repo.create_tag("v3", c3)
    state(repo.readonly_session(branch="main"), "main", "forecast.icechunk", [], outdir, cases)

    repo.create_branch("dev", c1)
    s = repo.writable_session("dev")
    z = zarr.open_group(s.store, mode="a")
    z["expected_forecast_length"][0] = 9 * 3600.0
    s.commit("dev: a shorter first forecast")
    state(repo.readonly_session(branch="dev"), "dev", "forecast.icechunk", ["-o", "branch=dev"],
          outdir, cases)
    return {"branches": sorted(repo.list_branches()), "tags": sorted(repo.list_tags()),
            "c1": c1, "c2": c2, "c3": c3}


def virtual_targets(outdir):
    """the files virtual chunks point into: raw little-endian int64 values"""
    d = os.path.join(outdir, "virt")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    lead = (np.arange(12, dtype="<i8") * 3)              # hours
    hdr = b"HEADER--"                                   # the values start at byte 8
    with open(os.path.join(d, "lead.bin"), "wb") as f:
        f.write(hdr + lead.tobytes())
    t = (1735689600 + np.arange(6, dtype="<i8") * 86400)  # seconds since 1970
    with open(os.path.join(d, "time.bin"), "wb") as f:
        f.write(t.tobytes())
    many = (np.arange(40, dtype="<i8") * 60)           # minutes: 40 one-value chunks
    with open(os.path.join(d, "many.bin"), "wb") as f:
        f.write(many.tobytes())
    for name in os.listdir(d):  # the tests give their copies the same time
        os.utime(os.path.join(d, name), (T0, T0))
    if os.path.realpath(VIRT) != os.path.realpath(d):
        shutil.rmtree(VIRT, ignore_errors=True)
        shutil.copytree(d, VIRT)


def gen_virtual(outdir, cases):
    virtual_targets(outdir)
    path = os.path.join(outdir, "virtual.icechunk")
    shutil.rmtree(path, ignore_errors=True)
    cont = ic.VirtualChunkContainer("file://" + VIRT + "/", ic.local_filesystem_store(VIRT), name="local")
    comp = ic.ManifestVirtualChunkLocationCompressionConfig(min_num_chunks=20)
    cfg = ic.RepositoryConfig(virtual_chunk_containers={"file://" + VIRT + "/": cont},
                              manifest=ic.ManifestConfig(virtual_chunk_location_compression=comp))
    auth = {"file://" + VIRT + "/": ic.credentials.LocalFileSystemAccess}
    repo = ic.Repository.create(ic.local_filesystem_storage(path), config=cfg,
                                authorize_virtual_chunk_access=auth)
    s = repo.writable_session("main")
    g = zarr.open_group(s.store, mode="w")
    v_array(g, "lead", 12, 4, {"units": "hours", "dtype": "timedelta64[ns]"}, ["step"])
    v_array(g, "time", 6, 2, {"units": "seconds since 1970-01-01"}, ["day"])
    v_array(g, "many", 40, 1, {"units": "minutes", "dtype": "timedelta64[ns]"}, ["k"])
    lead = VIRT + "/lead.bin"
    for i in range(3):
        s.store.set_virtual_ref(f"lead/c/{i}", "file://" + lead, offset=8 + 32 * i, length=32)
    mtime = datetime.datetime.fromtimestamp(T0, tz=datetime.timezone.utc)
    for i in range(3):
        s.store.set_virtual_ref(f"time/c/{i}", "vcc://local/time.bin", offset=16 * i, length=16,
                                checksum=mtime if i == 0 else None)
    for i in range(40):
        s.store.set_virtual_ref(f"many/c/{i}", "file://" + VIRT + "/many.bin", offset=8 * i,
                                length=8)
    s.commit("virtual chunks")
    state(repo.readonly_session(branch="main"), "virtual", "virtual.icechunk",
          ["-o", "virtual=file://" + VIRT + "/"], outdir, cases)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    outdir = os.path.abspath(argv[1])
    os.makedirs(outdir, exist_ok=True)
    cases = []
    facts = gen_forecast(outdir, cases)
    gen_virtual(outdir, cases)
    icoracle.write_expected(os.path.join(outdir, "expected.json"), cases)
    icoracle.write_facts(os.path.join(outdir, "facts.json"),
                         dict(facts, icechunk=ic.__version__, xarray=xr.__version__,
                              zarr=zarr.__version__, virt=VIRT, virt_mtime=T0))


if __name__ == "__main__":
    main(sys.argv)
