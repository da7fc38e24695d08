"""Row 19 of scripts/bench (issue 27): a kerchunk reference set over
NetCDF4 files (bench/kcgen.py: two files of N/2 durations each, combined by
MultiZarrToZarr), files in the page cache.

  zarrfs: a fresh daemon (empty index cache) `stat` + `cat` of
  lead.txt (every value; the size pass reads every chunk);
  xarray + kerchunk: `xr.open_dataset("reference://", engine="zarr", ...)`
  through fsspec's reference file system, the variable loaded and written
  with pandas (`Series.to_csv` without index or header, `na_rep="NaT"`:
  the lines of lead.txt), into a tmpfs file, checked (untimed) to be byte for
  byte zarrfs's file.  Imports are excluded.

Environment: ZF_BENCH_KC_DIR (the data, made by scripts/bench).
"""
import json
import os
import subprocess
import sys
import time


def rows(b):
    d = os.environ["ZF_BENCH_KC_DIR"]
    refs = os.path.join(d, "refs.json")
    b.section()
    sizes = []

    def one():
        with b.Mount("zarrfs", refs) as m:
            p = m.path("lead.txt")
            st = b.stat(p)
            sizes.append(os.path.getsize(p))
            return st, b.cat(p)
    runs = [b.attempt(one, warm=lambda: b.warm_tree(d)) for _ in range(b.RUNS)]
    zs, zc = (list(x) for x in zip(*runs))
    out = os.path.join(b.SHM, "kc-lead.txt")
    peers = []
    for _ in range(b.PEER_RUNS):
        r = subprocess.run([sys.executable, __file__, "peer", d, out], capture_output=True,
                           timeout=b.BIG_TIMEOUT)
        if r.returncode != 0:
            raise RuntimeError(f"kcbench.py peer failed: {r.stderr.decode()[-2000:]}")
        peers.append(json.loads(r.stdout))
    with b.Mount("zarrfs", refs) as m:
        same = b.same_prefix(m.path("lead.txt"), out) and \
            os.path.getsize(out) == os.path.getsize(m.path("lead.txt"))
    os.unlink(out)
    if not same:
        raise RuntimeError("xarray's text of the reference set is not zarrfs's lead.txt")
    n = peers[0]["values"]
    tz = b.med([s + c for s, c in zip(zs, zc)])
    tx = b.med([p["seconds"] for p in peers])
    b.detail(f"19: lead.txt of {n} values, {sizes[0]} bytes: zarrfs first stat "
             f"{b.runs_str(zs)}, cat {b.runs_str(zc)}; xarray + kerchunk (fsspec reference://) "
             f"{b.runs_str([p['seconds'] for p in peers])} (open + load "
             f"{b.runs_str([p['read'] for p in peers])}); the texts are byte-identical")
    b.row("19", f"kerchunk reference set over 2 NetCDF4 files ({n:.0e} durations): fresh "
          f"mount `stat` + `cat` of NAME.txt", b.fmt_t(tz),
          f"xarray + kerchunk + pandas writing the same text {b.fmt_t(tx)}", f"{tx / tz:.0f} x",
          ">= 100 x", tx / tz >= 100)


def run_peer(d, out):
    """xarray through fsspec's reference file system, pandas writing the text"""
    import warnings
    warnings.simplefilter("ignore")
    import pandas as pd
    import xarray as xr
    os.chdir(d)  # fsspec resolves relative targets against the working directory
    t0 = time.perf_counter()
    ds = xr.open_dataset("reference://", engine="zarr", decode_timedelta=True,
                         backend_kwargs={"storage_options": {"fo": "refs.json"},
                                         "consolidated": False})
    v = ds["lead"].values
    t1 = time.perf_counter()
    pd.Series(v).to_csv(out, index=False, header=False, na_rep="NaT")
    t2 = time.perf_counter()
    print(json.dumps({"seconds": t2 - t0, "read": t1 - t0, "values": int(v.size)}))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "peer":
        run_peer(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: kcbench.py peer DIR OUT")
