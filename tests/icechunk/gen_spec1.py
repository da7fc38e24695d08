#!/usr/bin/env python3
"""gen_spec1.py - spec 1 Icechunk repositories written at test time by the
test venv's icechunk 1.1 (Python 3.11), and what zarrfs must show for them
(expected.json, facts.json, plain/*.zarr: as gen_spec2.py writes them).

    gen_spec1.py OUTDIR [--http URL]

OUTDIR/forecast1.icechunk: the forecast of icdata.py, three commits on main,
a branch `dev`, a tag `v1` and a deleted tag `gone` (refs/tag.gone/ has a
tombstone).  OUTDIR/virtual1.icechunk: virtual chunks in OUTDIR/virt by
file:// URL, one with the ETag icechunk's local store gives the file, one
with a last-modified check.  With --http URL (where a server serves
OUTDIR/virt, e.g. http://127.0.0.1:PORT/spec1/virt/), OUTDIR/web1.icechunk:
the same chunks at URL, one with the ETag the server sends.  Icechunk 1.1
drops a URL's port from a virtual location (2.x keeps it), so web1's are
written with a placeholder of the same length instead of ":PORT" and its
manifests and config.yaml patched; its expected text is virtual1's (the
same bytes)."""

from __future__ import annotations

import datetime
import os
import re
import shutil
import sys
import urllib.request
import warnings

import numpy as np
import zarr
import zstandard
import icechunk as ic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import icoracle  # noqa: E402
from icdata import encoding, forecast, native, state, v_array  # noqa: E402

T0 = 1735689600  # the virtual targets' mtime (2025-01-01), and a last-modified check

warnings.simplefilter("ignore")


def gen_forecast(outdir, cases):
    path = os.path.join(outdir, "forecast1.icechunk")
    shutil.rmtree(path, ignore_errors=True)
    repo = ic.Repository.create(ic.local_filesystem_storage(path),
                                config=ic.RepositoryConfig(inline_chunk_threshold_bytes=100))
    s = repo.writable_session("main")
    forecast("2025-01-01", 4, 11).to_zarr(s.store, mode="w", consolidated=False, encoding=encoding())
    native(s.store, 12, 9)
    c1 = s.commit("spec 1: initial")
    repo.create_tag("v1", c1)
    state(repo.readonly_session(tag="v1"), "v1", "forecast1.icechunk", ["-o", "tag=v1"], outdir, cases)
    s = repo.writable_session("main")
    forecast("2025-01-03", 2, 13).to_zarr(s.store, append_dim="init_time", consolidated=False,
                                          safe_chunks=False)
    c2 = s.commit("spec 1: appended")
    repo.create_tag("gone", c2)
    repo.delete_tag("gone")
    state(repo.readonly_session(branch="main"), "main", "forecast1.icechunk", [], outdir, cases)
    repo.create_branch("dev", c1)
    s = repo.writable_session("dev")
    zarr.open_group(s.store, mode="a")["ingested_forecast_length"][0] = np.nan
    s.commit("spec 1: dev")
    state(repo.readonly_session(branch="dev"), "dev", "forecast1.icechunk", ["-o", "branch=dev"],
          outdir, cases)
    return {"c1": c1, "c2": c2}


def targets(outdir):
    d = os.path.join(outdir, "virt")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "lead.bin"), "wb") as f:
        f.write(b"HEADER--" + (np.arange(12, dtype="<i8") * 6).tobytes())  # hours
    with open(os.path.join(d, "time.bin"), "wb") as f:
        f.write((1735689600 + np.arange(6, dtype="<i8") * 3600).tobytes())
    for name in os.listdir(d):
        os.utime(os.path.join(d, name), (T0, T0))
    return d


def local_etag(path):
    """the ETag icechunk's local store gives a file: inode, mtime (us), size, in hex"""
    st = os.stat(path)
    return "%x-%x-%x" % (st.st_ino, st.st_mtime_ns // 1000, st.st_size)


def http_etag(url):
    with urllib.request.urlopen(urllib.request.Request(url, method="HEAD")) as r:
        return r.headers["ETag"]


def port_placeholder(url):
    """url with ":PORT" written as "/" and as many "w" (the same length), and
    the two byte strings to swap back"""
    m = re.match(r"(https?://[^/:]+):(\d+)(/.*)", url)
    if not m:
        return url, None
    host, port, rest = m.groups()
    fake = f"{host}/{'w' * len(port)}{rest}"
    return fake, (f"{host}/{'w' * len(port)}".encode(), f"{host}:{port}".encode())


def patch_ports(path, swap):
    """put the ports back into a repository's manifests and config.yaml"""
    old, new = swap
    for f in [os.path.join(path, "config.yaml")] + [
            os.path.join(path, "manifests", m) for m in os.listdir(os.path.join(path, "manifests"))]:
        raw = open(f, "rb").read()
        if f.endswith(".yaml"):
            open(f, "wb").write(raw.replace(old, new))
            continue
        body = zstandard.ZstdDecompressor().decompressobj().decompress(raw[39:])
        if old in body:
            body = body.replace(old, new)
            open(f, "wb").write(raw[:39] + zstandard.ZstdCompressor().compress(body))


def gen_virtual(outdir, cases, name, prefix, store, etag, reads):
    """a repository whose chunks are in files at prefix (file:// or http://);
    reads: icechunk 1.1 can read it back for its expected text (else it is
    the previous state's: the same bytes)"""
    path = os.path.join(outdir, name)
    shutil.rmtree(path, ignore_errors=True)
    real, (prefix, swap) = prefix, port_placeholder(prefix)
    cfg = ic.RepositoryConfig(virtual_chunk_containers={prefix: ic.VirtualChunkContainer(prefix, store)})
    auth = ic.containers_credentials({prefix: None})
    repo = ic.Repository.create(ic.local_filesystem_storage(path), config=cfg,
                                authorize_virtual_chunk_access=auth)
    s = repo.writable_session("main")
    g = zarr.open_group(s.store, mode="w")
    v_array(g, "lead", 12, 4, {"units": "hours", "dtype": "timedelta64[ns]"}, ["step"])
    v_array(g, "time", 6, 3, {"units": "seconds since 1970-01-01"}, ["hour"])
    for i in range(3):
        s.store.set_virtual_ref(f"lead/c/{i}", prefix + "lead.bin", offset=8 + 32 * i, length=32,
                                checksum=etag(real + "lead.bin") if i == 1 else None)
    when = datetime.datetime.fromtimestamp(T0, tz=datetime.timezone.utc)
    for i in range(2):
        s.store.set_virtual_ref(f"time/c/{i}", prefix + "time.bin", offset=24 * i, length=24,
                                checksum=when if i == 0 else None)
    s.commit("spec 1: virtual")
    if swap:
        patch_ports(path, swap)
    if reads:
        state(repo.readonly_session(branch="main"), name.split(".")[0], name,
              ["-o", "virtual=" + prefix], outdir, cases)
    else:  # the same bytes as another state's: its expected text
        base = dict(cases[-1], label=name.split(".")[0], repo=name, opts=["-o", "virtual=" + real])
        base["snapshot"] = repo.lookup_branch("main")
        cases.append(base)


def main(argv):
    args = argv[1:]
    http = None
    if "--http" in args:
        i = args.index("--http")
        http = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    outdir = os.path.abspath(args[0])
    os.makedirs(outdir, exist_ok=True)
    cases = []
    facts = gen_forecast(outdir, cases)
    d = targets(outdir)
    gen_virtual(outdir, cases, "virtual1.icechunk", "file://" + d + "/",
                ic.local_filesystem_store(d), lambda url: local_etag(url[7:]), True)
    if http:
        gen_virtual(outdir, cases, "web1.icechunk", http, ic.http_store(), http_etag, False)
    icoracle.write_expected(os.path.join(outdir, "expected.json"), cases)
    icoracle.write_facts(os.path.join(outdir, "facts.json"),
                         dict(facts, icechunk=ic.__version__, virt=d, virt_mtime=T0))


if __name__ == "__main__":
    main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # icechunk's runtime can abort while the interpreter tears down
