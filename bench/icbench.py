"""The Icechunk row of scripts/bench (issue 26): row 17.

A dynamical.org-like forecast (bench/icgen.py: lead_time, init_time,
valid_time, sharded data variables) written as an Icechunk repository and
as a plain Zarr store with the same encoding, served over the emulated link
of the remote rows (bench/remote.py's network namespace, nginx, versitygw):

  zarrfs on the repository against zarrfs on the plain Zarr store, both over
  HTTP (nginx): (a) a fresh daemon's first `ls -l` with an empty index cache
  (every shown array sized: every chunk fetched and decoded), (b) a cold
  `cat` of every .txt by a second fresh daemon whose sizes come from the
  index (a) persisted (the chunk cache empty); requests per mount; the cat
  daemon's peak RSS;
  icechunk + xarray (the venv's icechunk 1.1, which reads a repository from
  S3 but not from plain HTTP): the repository in versitygw, opened with
  xr.open_zarr(session.store, decode_timedelta=True), every duration and
  time variable loaded and written with pandas (`Series.to_csv`, the lines
  of NAME.txt), against a fresh zarrfs daemon (empty index cache) on the
  same S3 repository catting every .txt.

Environment: as bench/remote.py's; ZF_BENCH_IC_DIR (the data, made by
scripts/bench with bench/icgen.py).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import remote

SHOWN = ["expected_forecast_length", "forecast_age", "ingested_forecast_length", "init_time",
         "lead_time", "valid_time"]


def cold_runs(b, mount, reqlog, warm, sizes):
    """(a) first `ls -l` of the root, empty index cache; (b) cold cat of every .txt by a
    fresh daemon on the persisted index.  Lists of times, request counts and VmHWM."""
    def one():
        home = tempfile.mkdtemp(prefix="xdg-ic.", dir=b.SHM)
        try:
            before = remote.count_lines(reqlog)
            with mount(home) as m:
                t_ls = b.timed(["ls", "-l", m.path("")], timeout=600)
                got = {n: os.path.getsize(m.path(n + ".txt")) for n in SHOWN}
                if sizes and got != sizes:
                    raise RuntimeError(f"sizes differ from the first mount's: {got} vs {sizes}")
                sizes.update(got)
            n_ls = remote.count_lines(reqlog) - before
            before = remote.count_lines(reqlog)
            with mount(home) as m:
                t0 = time.perf_counter()
                subprocess.run(["cat"] + [m.path(n + ".txt") for n in SHOWN], check=True,
                               stdout=subprocess.DEVNULL, timeout=600)
                t_cat = time.perf_counter() - t0
                n_cat = remote.count_lines(reqlog) - before
                hwm = m.hwm_kib()
            return t_ls, t_cat, n_ls, n_cat, hwm
        finally:
            subprocess.run(["rm", "-rf", home])
    runs = [b.attempt(one, warm=warm) for _ in range(b.RUNS)]
    return [list(x) for x in zip(*runs)]


def end_to_end(b, mount, warm):
    """A fresh daemon, empty index cache: `cat` of every .txt (each first open
    sizes its array, then the text is read): what a user's first look costs."""
    def one():
        home = tempfile.mkdtemp(prefix="xdg-ic.", dir=b.SHM)
        try:
            with mount(home) as m:
                t0 = time.perf_counter()
                subprocess.run(["cat"] + [m.path(n + ".txt") for n in SHOWN], check=True,
                               stdout=subprocess.DEVNULL, timeout=1800)
                return time.perf_counter() - t0
        finally:
            subprocess.run(["rm", "-rf", home])
    return [b.attempt(one, warm=warm) for _ in range(b.RUNS)]


def peer(b, srv):
    """icechunk + xarray reading the repository from S3, writing pandas text"""
    env = dict(srv.s3_env_link, ZF_IC_BUCKET=remote.BUCKET, ZF_IC_PREFIX=remote.PREFIX,
               RUST_LOG="error")
    r = subprocess.run(remote.ns([sys.executable, os.path.abspath(__file__), "peer"]),
                       capture_output=True, timeout=b.BIG_TIMEOUT, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"icechunk peer failed: {r.stderr.decode()[-1500:]}")
    return json.loads(r.stdout.decode().strip().splitlines()[-1])


def rows(b):
    """Row 17 (b is bench/run.py's module)."""
    d = os.environ["ZF_BENCH_IC_DIR"]
    repo, plain = os.path.join(d, "repo.icechunk"), os.path.join(d, "plain.zarr")
    warm = lambda: b.warm_tree(d)
    b.warm_tree(d)
    with b.Mount("zarrfs", repo) as m:  # the bytes: the repository's and the plain store's
        ref = {n: open(m.path(n + ".txt"), "rb").read() for n in SHOWN}
    with b.Mount("zarrfs", plain) as m:
        for n in SHOWN:
            if open(m.path(n + ".txt"), "rb").read() != ref[n]:
                raise RuntimeError(f"{n}.txt: the repository and the plain store differ")
    text = sum(len(v) for v in ref.values())
    values = sum(v.count(b"\n") for v in ref.values())
    b.detail(f"17: {', '.join(f'{n}.txt {len(ref[n])} bytes' for n in SHOWN)}")
    with remote.Servers(b, repo) as srv:
        srv.start_nginx()
        opts = ("-o", f"connections={remote.CONN}")
        res = {}
        for label, url in (("Icechunk", srv.http_url),
                           ("plain Zarr", srv.http_url.replace("repo.icechunk", "plain.zarr"))):
            b.section()
            mount = lambda home, url=url: b.Mount("zarrfs", url, opts, cache_home=home,
                                                  prefix=remote.ns([]))
            sizes = {}
            res[label] = cold_runs(b, mount, srv.nginx_log, warm, sizes)
            t_ls, t_cat, n_ls, n_cat, hwm = res[label]
            b.detail(f"17.HTTP {label}: first `ls -l` {b.runs_str(t_ls)}; cold cat of the "
                     f"{len(SHOWN)} .txt {b.runs_str(t_cat)}; requests {n_ls}, {n_cat}; "
                     f"VmHWM {', '.join(f'{h / 1024:.0f} MiB' for h in hwm)}")
        ic_, pz = res["Icechunk"], res["plain Zarr"]
        for k, what in ((0, "(a) first `ls -l`, empty index cache (every shown array sized)"),
                        (1, "(b) cold `cat` of every .txt, sizes from the persisted index")):
            t, p = b.med(ic_[k]), b.med(pz[k])
            b.row("17", f"HTTP: {what}, a dynamical-like repository ({text / 1e6:.0f} MB of text)",
                  b.fmt_t(t), f"the same data as a plain Zarr store {b.fmt_t(p)}",
                  f"{p / t:.2f} x", ">= 0.9 x", p / t >= 0.9)
        b.row("17", "HTTP: requests per mount ((a) mount + `ls -l`; (b) mount + `cat`), the cat "
              "daemon's peak RSS", f"{b.med(ic_[2]):.0f} and {b.med(ic_[3]):.0f} requests, "
              f"{b.med(ic_[4]) / 1024:.0f} MiB", f"plain Zarr {b.med(pz[2]):.0f} and "
              f"{b.med(pz[3]):.0f} requests, {b.med(pz[4]) / 1024:.0f} MiB", "-", "-", None)
        srv.start_versitygw()  # uploads the repository
        b.section()
        mount = lambda home: b.Mount("zarrfs", srv.s3_url, opts, cache_home=home,
                                     prefix=remote.ns([]), env=srv.s3_env_link)
        e2e = end_to_end(b, mount, warm)
        zf = b.med(e2e)
        peers = [b.attempt(lambda: peer(b, srv), retries=1, warm=warm) for _ in range(b.PEER_RUNS)]
        tp = b.med([p["seconds"] for p in peers])
        b.detail(f"17.S3: zarrfs fresh daemon, empty index cache, `cat` of every .txt "
                 f"{b.runs_str(e2e)}; icechunk {peers[0]['icechunk']} + xarray "
                 f"{peers[0]['xarray']}: {b.runs_str([p['seconds'] for p in peers])} "
                 f"(open + load {b.runs_str([p['read'] for p in peers])})")
        b.row("17", f"S3: the repository's {values / 1e6:.0f} M durations and times to text, "
              "zarrfs fresh mount, `cat` of every .txt (each sized at its first open)",
              b.fmt_t(zf), f"icechunk + xarray + pandas `to_csv` {b.fmt_t(tp)}",
              f"{tp / zf:.0f} x", ">= 100 x", tp / zf >= 100)
    b.NOTES.append(
        "- 17: bench/icgen.py's forecast (dynamical.org's encodings: float64 `units: seconds` "
        "durations with NaN fill, int64 `seconds since 1970-01-01` times, blosc zstd, sharded "
        "data variables) as an Icechunk repository (icechunk 1.1, spec 1) and as a plain Zarr "
        "v3 store with consolidated metadata and the same chunks, over the remote rows' link; "
        "(a) and (b) as row 15's, over every shown array; ratio = plain time / repository time. "
        "The peer opens the repository in versitygw with icechunk's s3_storage and xarray "
        "(decode_timedelta=True) and writes every duration and time variable with pandas "
        "`Series.to_csv` (the lines of NAME.txt), imports excluded; zarrfs's figure is a fresh "
        "daemon with an empty index cache catting every .txt over the same link.")


def run_peer():
    """icechunk + xarray + pandas on the repository in S3: one JSON line"""
    import warnings
    warnings.simplefilter("ignore")
    import icechunk as ic
    import pandas as pd
    import xarray as xr
    env = os.environ
    t0 = time.perf_counter()
    st = ic.s3_storage(bucket=env["ZF_IC_BUCKET"], prefix=env["ZF_IC_PREFIX"],
                       endpoint_url=env["AWS_ENDPOINT_URL"], allow_http=True, region="us-east-1",
                       access_key_id=env["AWS_ACCESS_KEY_ID"],
                       secret_access_key=env["AWS_SECRET_ACCESS_KEY"], force_path_style=True)
    ds = xr.open_zarr(ic.Repository.open(st).readonly_session("main").store, consolidated=False,
                      decode_timedelta=True)
    values = {n: ds[n].values for n in SHOWN}
    t1 = time.perf_counter()
    for v in values.values():
        pd.Series(v.ravel()).to_csv(os.devnull, index=False, header=False)
    t2 = time.perf_counter()
    print(json.dumps({"seconds": t2 - t0, "read": t1 - t0, "icechunk": ic.__version__,
                      "xarray": xr.__version__}))


if __name__ == "__main__":
    if sys.argv[1:] == ["peer"]:
        run_peer()
    else:
        sys.exit("usage: icbench.py peer")
