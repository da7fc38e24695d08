"""Remote-store rows of scripts/bench (issue 15), run by it inside a network
namespace of its own (`ip netns exec`), as root, in the venv.

A 10^7-value array (bench/gen.py's values, chunks of 10^6, zstd, consolidated)
is served by nginx (HTTP) and by versitygw (S3, signed requests) on the
namespace's loopback, rate limited by a tbf qdisc (ZF_BENCH_RATE, default
2gbit: every byte crosses the loopback twice, server -> proxy -> client, so
the end-to-end rate is half of it, 1 Gbit/s).  This kernel has no netem qdisc, so the round trip is added by
tests/net/faultproxy.py in front of each server: every response waits
ZF_BENCH_RTT_MS (default 20) ms, as one request/response round trip would.
Measured through that path, with the same number of connections:
    first `ls -l` of a fresh mount (sizes every array: fetches its chunks)
    cold `cat NAME.txt` of a fresh mount (size pass + read)
    downloading the chunks with curl --parallel (the limit; target >= 0.8 x)
    zarr-python reading the same remote array + pandas to_csv (target >= 20 x)
    second-mount `ls -l` from the persisted index (target < 100 ms)
    requests per array, daemon peak RSS.
Environment (set by scripts/bench): ZF_BENCH_DIR, ZF_BIN, ZF_BENCH_REPORT_REMOTE,
ZF_BENCH_RUNS; ZF_BENCH_RTT_MS, ZF_BENCH_RATE, ZF_BENCH_CONNECTIONS (16).
Exit status 0 when every gating target passes, 1 otherwise, 2 on error.
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
NET = os.path.join(REPO, "tests", "net")
WORK = os.path.join(os.environ["ZF_BENCH_DIR"], "remote")
ZARRFS = os.environ["ZF_BIN"]
RUNS = max(3, int(os.environ.get("ZF_BENCH_RUNS", "3")))
RTT_MS = float(os.environ.get("ZF_BENCH_RTT_MS", "20"))
RATE = os.environ.get("ZF_BENCH_RATE", "2gbit")
CONN = int(os.environ.get("ZF_BENCH_CONNECTIONS", "16"))
REPORT = os.environ.get("ZF_BENCH_REPORT_REMOTE")
N = 10**7
KEY, SECRET = "benchkey", "benchSecret-" + os.urandom(6).hex()
TIMEOUT = 900
med = statistics.median
rows, details, gating, servers, mounts = [], [], [], [], []


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def sh(script, *args, env=None):
    """Run a bash snippet with tests/net/servers.bash loaded; its stdout."""
    r = subprocess.run(["bash", "-c", f'source "{NET}/servers.bash"; {script}', "_", *args],
                       capture_output=True, text=True, timeout=120, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"{script}: {r.stderr[-1000:]}")
    return r.stdout.split()


def start_servers():
    """nginx and versitygw, each behind a latency proxy; returns URLs."""
    env = dict(os.environ, ZF_PYTHON=sys.executable)
    http, ngx_pid = sh('net_nginx "$1" "$2" >&2 && echo "$NGX_HTTP $NGX_PID"',
                       f"{WORK}/nginx", f"{WORK}/www")
    servers.append(int(ngx_pid))
    vgw, vgw_pid = sh('net_versitygw "$1" "$2" "$3" >&2 && echo "$VGW_URL $VGW_PID"',
                      f"{WORK}/vgw", KEY, SECRET)
    servers.append(int(vgw_pid))
    s3env = dict(env, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1")
    subprocess.run([sys.executable, f"{NET}/s3util.py", "put", vgw, "bench", "r.zarr",
                    f"{WORK}/www/bucket/r.zarr"], check=True, env=s3env, timeout=600,
                   stderr=subprocess.DEVNULL)
    urls = []
    for name, up in (("px-http", http), ("px-s3", vgw)):
        url, pid = sh(f'net_proxy "$1" "$2" {TIMEOUT * 4} --latency-ms {RTT_MS} >&2 && '
                      'echo "$PROXY_URL $PROXY_PID"', f"{WORK}/{name}", up.split("//")[1])
        servers.append(int(pid))
        urls.append(url)
    return urls[0], urls[1], s3env


def gen_store():
    path = f"{WORK}/www/bucket/r.zarr"
    if os.path.exists(f"{path}/zarr.json"):
        return path
    sys.path.insert(0, HERE)
    import gen
    import zarr
    root = zarr.open_group(path, mode="w", zarr_format=3)
    gen.write(root, "lt", gen.values(N, 1))
    zarr.consolidate_metadata(path)
    return path


class Mount:
    """A fresh zarrfs -f on its own mount point; unmounted by close()."""

    def __init__(self, store, opts, env, xdg):
        self.mnt = tempfile.mkdtemp(dir=f"{WORK}/mnt")
        self.log = open(f"{self.mnt}.log", "w")
        env = dict(env, XDG_CACHE_HOME=xdg)
        argv = [ZARRFS, "-f", "-o", f"connections={CONN}", *opts, store, self.mnt]
        self.p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=self.log,
                                  stderr=subprocess.STDOUT)
        mounts.append(self)
        end = time.monotonic() + 60
        while not self.mounted():
            if self.p.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"zarrfs did not mount {store}: {open(self.log.name).read()[-800:]}")
            time.sleep(0.02)

    def mounted(self):
        with open("/proc/self/mountinfo") as f:
            return any(line.split()[4] == self.mnt for line in f)

    def hwm_mib(self):
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def close(self):
        if self.mounted():
            subprocess.run(["fusermount3", "-u", self.mnt], timeout=30)
        try:
            self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(10)
        self.log.close()
        shutil.rmtree(self.mnt, ignore_errors=True)
        mounts.remove(self)


def timed(argv, env=None):
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, timeout=TIMEOUT, env=env)
    return time.perf_counter() - t0


def requests(proxy_dir):
    with open(f"{WORK}/{proxy_dir}/requests.log") as f:
        return sum(1 for _ in f)


def row(measure, figure, reference, ratio, target, ok):
    verdict = "info" if ok is None else ("PASS" if ok else "FAIL")
    if ok is not None:
        gating.append(ok)
    rows.append(("15", measure, figure, reference, ratio, target, verdict))
    log(f"  -> {measure}: {figure} vs {reference}: {ratio} ({target}) {verdict}")


def measure(kind, store, opts, env, proxy_dir, chunk_urls, curl_args, peer):
    """The rows of one remote kind (HTTP or S3)."""
    xdg_root = tempfile.mkdtemp(dir=WORK, prefix="xdg.")
    ls_t, cat_t, reqs, hwm = [], [], [], []
    for i in range(RUNS):
        m = Mount(store, opts, env, f"{xdg_root}/ls{i}")
        ls_t.append(timed(["ls", "-l", m.mnt]))
        m.close()
        before = requests(proxy_dir)
        m = Mount(store, opts, env, f"{xdg_root}/cat{i}")
        cat_t.append(timed(["cat", f"{m.mnt}/lt.txt"]))
        reqs.append(requests(proxy_dir) - before)
        hwm.append(m.hwm_mib())
        size = os.stat(f"{m.mnt}/lt.txt").st_size
        m.close()
    # second mount: the persisted index of a first one
    m = Mount(store, opts, env, f"{xdg_root}/persist")
    timed(["ls", "-l", m.mnt])
    m.close()
    ls2 = []
    for _ in range(RUNS):
        m = Mount(store, opts, env, f"{xdg_root}/persist")
        ls2.append(timed(["ls", "-l", m.mnt]))
        m.close()
    # the limit: the same chunks with curl, same connection count
    dl = [timed(["curl", "-sS", "--no-progress-meter", "--fail", "--parallel", "--parallel-max", str(CONN), *curl_args,
                 *sum((["-o", "/dev/null", u] for u in chunk_urls), [])], env=env)
          for _ in range(RUNS)]
    r = subprocess.run([sys.executable, os.path.join(HERE, "remote_peer.py"), *peer],
                       capture_output=True, text=True, timeout=TIMEOUT * 2, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"remote_peer.py failed: {r.stderr[-1500:]}")
    pandas_t = json.loads(r.stdout)["seconds"]
    c, l, d = med(cat_t), med(ls_t), med(dl)
    row(f"{kind}: first `ls -l` of a fresh mount (sizes the 10^7-value array)", f"{l * 1000:.0f} ms",
        f"curl download of its {len(chunk_urls)} chunks {d * 1000:.0f} ms", f"{d / l:.2f} x",
        ">= 0.8 x", d / l >= 0.8)
    row(f"{kind}: cold `cat NAME.txt` (fresh mount: size pass + read, {size / 2**20:.0f} MiB of text)",
        f"{c * 1000:.0f} ms", f"curl download {d * 1000:.0f} ms", f"{d / c:.2f} x", ">= 0.8 x",
        d / c >= 0.8)
    row(f"{kind}: cold `cat NAME.txt`", f"{c * 1000:.0f} ms",
        f"zarr-python remote read + pandas to_csv {pandas_t:.2f} s", f"{pandas_t / c:.0f} x",
        ">= 20 x", pandas_t / c >= 20)
    row(f"{kind}: second-mount `ls -l` (persisted index)", f"{med(ls2) * 1000:.0f} ms", "-", "-",
        "< 100 ms", med(ls2) < 0.1)
    row(f"{kind}: requests for the cold cat", f"{med(reqs):.0f} requests",
        f"{len(chunk_urls)} chunks", "-", "-", None)
    row(f"{kind}: daemon peak RSS (VmHWM) during the cold cat", f"{max(hwm):.0f} MiB", "-", "-",
        "-", None)
    details.append(f"{kind}: ls -l {[round(t, 3) for t in ls_t]} s; cat {[round(t, 3) for t in cat_t]} s; "
                   f"curl {[round(t, 3) for t in dl]} s; second ls -l {[round(t, 4) for t in ls2]} s; "
                   f"pandas {pandas_t:.2f} s; requests {reqs}")


def report():
    out = [f"### remote stores (issue 15): 10^7 values, {RTT_MS:.0f} ms per request/response "
           f"(faultproxy), tbf {RATE} on the loopback (crossed twice), {CONN} connections\n",
           "| # | measure | zarrfs | reference | ratio | target | result |",
           "|---|---|---|---|---|---|---|"]
    out += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    out += ["", "Raw runs:"] + [f"- {d}" for d in details] + [""]
    text = "\n".join(out) + "\n"
    print(text)
    if REPORT:
        with open(REPORT, "w") as f:
            f.write(text)


def curl_config():
    """A curl config file signing requests (the secret stays out of argv)."""
    path = f"{WORK}/curl-s3.conf"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(f'aws-sigv4 = "aws:amz:us-east-1:s3"\nuser = "{KEY}:{SECRET}"\n'
                'header = "x-amz-content-sha256: UNSIGNED-PAYLOAD"\n')
    return path


def main():
    os.makedirs(f"{WORK}/mnt", exist_ok=True)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["tc", "qdisc", "replace", "dev", "lo", "root", "tbf", "rate", RATE,
                    "burst", "1mb", "latency", "100ms"], check=True)
    store = gen_store()
    http, s3, s3env = start_servers()
    chunks = sorted(os.listdir(f"{store}/lt/c"), key=int)
    env = dict(os.environ)
    measure("HTTP", f"{http}/bucket/r.zarr", [], env, "px-http",
            [f"{http}/bucket/r.zarr/lt/c/{k}" for k in chunks], [],
            ["http", f"{http}/bucket/r.zarr", "lt"])
    measure("S3", "s3://bench/r.zarr", ["-o", f"endpoint={s3}"], s3env, "px-s3",
            [f"{s3}/bench/r.zarr/lt/c/{k}" for k in chunks],
            ["-K", curl_config()],
            ["s3", "s3://bench/r.zarr", "lt", s3])
    report()
    return 0 if all(gating) else 1


def cleanup():
    for m in list(mounts):
        try:
            m.close()
        except Exception as e:
            log(f"bench: closing {m.mnt}: {e}")
    for pid in servers:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit(128 + s))
    rc = 2
    try:
        rc = main()
    except Exception as e:
        log(f"bench remote: error: {e}")
    finally:
        cleanup()
    sys.exit(rc)
