"""The measurements of scripts/bench (run by it, inside the venv).

Everything is configured by environment variables that scripts/bench sets:
    ZF_BENCH_DIR     work dir holding store.zarr (kept between runs)
    ZF_BENCH_N       elements per array
    ZF_BENCH_RUNS    repetitions of each timed measurement (>= 3)
    ZF_BENCH_PEER_RUNS  repetitions of the (slow) pandas/numpy peers
    ZF_BENCH_SHM     tmpfs dir for the reference copy of the text (removed at exit)
    ZF_BIN, ZF_MINIFUSE  the two daemons
    ZF_BENCH_REPORT  where the Markdown report is written (besides stdout)
    ZF_BENCH_ROWS    all (default), local (rows 1-14 and 16), labels (row 16 only),
                     remote (row 15, bench/remote.py), icechunk (row 17,
                     bench/icbench.py), shards (row 18 only), kerchunk (row 19,
                     bench/kcbench.py) or compare (zarrfs's
                     side of rows 1, 3 and 16 for this binary and ZF_BENCH_OLD,
                     interleaved)
    ZF_BENCH_SHARD_STORE  row 18's store (bench/gen_shards.py)
    ZF_BENCH_OLD     compare: the other zarrfs binary (e.g. main's)

Every mount is a fresh daemon in the foreground (-f) on its own mount point
under the work dir; every wait has a timeout; every mount is unmounted and
every daemon reaped in `finally`, and scripts/bench sweeps again on exit.
"""
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
WORK = os.environ["ZF_BENCH_DIR"]
N = int(float(os.environ["ZF_BENCH_N"]))
RUNS = max(3, int(os.environ.get("ZF_BENCH_RUNS", "3")))
PEER_RUNS = max(1, int(os.environ.get("ZF_BENCH_PEER_RUNS", "1")))
SHM = os.environ["ZF_BENCH_SHM"]
ZARRFS = os.environ["ZF_BIN"]
MINIFUSE = os.environ["ZF_MINIFUSE"]
REPORT = os.environ.get("ZF_BENCH_REPORT")
STORE = os.path.join(WORK, "store.zarr")
MNTROOT = os.path.join(WORK, "mnt")
PIDDIR = os.path.join(WORK, "pids")
LOGDIR = os.path.join(WORK, "logs")
SLICE = 10**7
BIG_TIMEOUT = 1800  # seconds for one cat of the whole text or one peer run
MiB = 1 << 20
QUIET_WAIT = float(os.environ.get("ZF_BENCH_QUIET_WAIT", "300"))
QUIET = [None]

A, B_, S = "a/lt", "b/lt2", ("s/lt_1e7" if N > SLICE else "a/lt")
CF_I64, CF_F64 = "c/lt_i64", "f/lt_f64"  # issue 14's CF rows (bench/gen.py)
SLICE_N = min(N, SLICE)
# row 16: bench/gen.py's group x, a 2-D dataset written by xarray (init_time x step)
X = "x/lead"
X_STEP = min(1000, N)
X_N = (N // X_STEP) * X_STEP
X_SLICE_ROWS = max(1, min(SLICE, N // 10) // X_STEP)  # init_time rows of xarray's slice
X_SLICE_N = X_SLICE_ROWS * X_STEP


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ mounts

class Mount:
    """A daemon serving `source` at a fresh mount point, foreground."""
    live = []
    seq = 0

    def __init__(self, kind, source, opts=(), one_core=False, cache_home=None, prefix=(),
                 env=None):
        Mount.seq += 1
        self.mnt = os.path.join(MNTROOT, f"m{Mount.seq}")
        os.makedirs(self.mnt, exist_ok=True)
        binary = {"zarrfs": ZARRFS, "old": os.environ.get("ZF_BENCH_OLD", "")}.get(kind, MINIFUSE)
        # prefix: e.g. nsenter into the remote rows' network namespace (it execs:
        # the pid stays the daemon's)
        argv = list(prefix) + ([shutil.which("taskset"), "-c", "0"] if one_core else []) + \
            [binary, "-f", *opts, source, self.mnt]
        env = dict(env or os.environ)
        # a fresh index cache per mount unless one is given: if zarrfs comes
        # to persist size indexes under XDG_CACHE_HOME, "cold" stays cold
        # (in tmpfs: other people's disk traffic must not stall the index write)
        self.cache_home = cache_home or tempfile.mkdtemp(prefix="xdg.", dir=SHM)
        env["XDG_CACHE_HOME"] = self.cache_home
        self.log = os.path.join(LOGDIR, f"{kind}-{Mount.seq}.log")
        self.logf = open(self.log, "w")
        self.proc = subprocess.Popen(argv, stdout=self.logf, stderr=subprocess.STDOUT,
                                     env=env, stdin=subprocess.DEVNULL)
        self.pid = self.proc.pid
        with open(os.path.join(PIDDIR, str(self.pid)), "w") as f:
            f.write(f"{self.pid} {self.mnt}\n")
        Mount.live.append(self)
        deadline = time.monotonic() + 30
        while not is_mounted(self.mnt):
            if self.proc.poll() is not None:
                self.close()
                raise RuntimeError(f"{kind} exited before mounting; see {self.log}:\n"
                                   + open(self.log).read()[-2000:])
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"{kind} did not mount within 30 s; see {self.log}")
            time.sleep(0.01)
        if kind == "minifuse":
            set_read_ahead(self.mnt, READ_AHEAD_KB)

    def path(self, rel):
        return os.path.join(self.mnt, rel)

    def cpu(self):
        """CPU seconds (user + system, every thread) the daemon used so far"""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def hwm_kib(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return -1

    def close(self):
        if self not in Mount.live:
            return
        if is_mounted(self.mnt):
            subprocess.run(["fusermount3", "-u", self.mnt], timeout=30,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            log(f"bench: daemon {self.pid} did not exit after unmount; killing it")
            subprocess.run(["fusermount3", "-uz", self.mnt], timeout=30,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.proc.kill()
            self.proc.wait(timeout=30)
        if is_mounted(self.mnt):
            subprocess.run(["fusermount3", "-uz", self.mnt], timeout=30)
        self.logf.close()
        Mount.live.remove(self)
        try:
            os.unlink(os.path.join(PIDDIR, str(self.pid)))
            os.rmdir(self.mnt)
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# zarrfs sets its mount's read-ahead window to 4 MiB (fs/readahead.c); the
# reference gets the same, so that both are read with equal requests
READ_AHEAD_KB = 4096


def set_read_ahead(mnt, kb):
    st = os.stat(mnt)  # waits for the daemon's INIT reply, which resets the window
    path = f"/sys/class/bdi/{os.major(st.st_dev)}:{os.minor(st.st_dev)}/read_ahead_kb"
    with open(path, "w") as f:
        f.write(f"{kb}\n")


def is_mounted(mnt):
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == mnt for line in f)


def close_all():
    for m in list(Mount.live):
        try:
            m.close()
        except Exception as e:  # keep closing the others
            log(f"bench: closing {m.mnt}: {e}")


# ------------------------------------------------------------------ timing

def timed(argv, timeout=BIG_TIMEOUT, stdout=subprocess.DEVNULL):
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, timeout=timeout)
    t = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{argv} failed ({r.returncode}): {r.stderr.decode()[-500:]}")
    return t


def cat(path):
    return timed(["cat", path])


def stat(path):
    return timed(["stat", "-c", "%s", path], timeout=600)


def hyperfine(cmds, runs=5, warmup=1):
    out = os.path.join(WORK, "hyperfine.json")
    subprocess.run(["hyperfine", "-N", "--style", "none", "--warmup", str(warmup),
                    "--runs", str(runs), "--export-json", out, *cmds],
                   check=True, timeout=BIG_TIMEOUT, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return [r["median"] for r in json.load(f)["results"]]


def peer(mode, *args, timeout=BIG_TIMEOUT, store=STORE, prefix=(), env=None):
    r = subprocess.run([*prefix, sys.executable, os.path.join(HERE, "peers.py"), mode, store, *args],
                       capture_output=True, timeout=timeout, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"peers.py {mode} failed: {r.stderr.decode()[-2000:]}")
    return json.loads(r.stdout)


med = statistics.median


# ------------------------------------------------------------------ other load
# The machine may be shared (other builds, tests, fuzzers).  Each section
# records the share of the machine's CPU time used by anything other than this
# benchmark and its children (daemons, cat, peers: all waited for), from
# /proc/stat, so a noisy figure can be recognised as such.

def cpu_jiffies():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return sum(v) - v[3] - v[4], sum(v)


SERVERS = []  # pids of the bench's long-lived children (bench/remote.py's servers)


def own_cpu():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system + servers_cpu()


def servers_cpu():
    """CPU seconds used so far by the bench's servers (not yet waited for)."""
    total = 0
    for pid in SERVERS:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / os.sysconf("SC_CLK_TCK")


class Load:
    def __init__(self):
        self.busy, self.total = cpu_jiffies()
        self.own = own_cpu()

    def foreign(self):
        busy, total = cpu_jiffies()
        hz = os.sysconf("SC_CLK_TCK")
        if total <= self.total:
            return 0.0
        other = (busy - self.busy) / hz - (own_cpu() - self.own)
        return max(0.0, other / ((total - self.total) / hz))


def wait_quiet(limit):
    """Wait (at most limit seconds) until the machine is nearly idle."""
    deadline = time.monotonic() + limit
    while True:
        ld = Load()
        time.sleep(2)
        f = ld.foreign()
        if f < 0.10 or time.monotonic() > deadline:
            return f
        log(f"bench: machine busy ({f:.0%} of CPU used by others); waiting for quiet")


def fmt_t(s):
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def fmt_rate(bytes_, s):
    return f"{bytes_ / s / MiB:.0f} MiB/s"


def runs_str(ts):
    return ", ".join(fmt_t(t) for t in ts)


# ------------------------------------------------------------------ the bench

rows = []      # (no, measure, figure, reference, ratio, target, verdict, other load)
details = []   # raw runs, for the report
gating = []    # verdicts that decide the exit status
CORE = []      # the stage breakdown, for the report
NOTES = []     # notes added by other row modules (bench/remote.py)
ROWS = os.environ.get("ZF_BENCH_ROWS", "all")


SECTION = [None, []]   # Load at the section's start; other load of its accepted attempts
BUSY = float(os.environ.get("ZF_BENCH_BUSY", "0.15"))


def section():
    SECTION[0] = Load()
    SECTION[1] = []


def attempt(fn, retries=3, warm=None):
    """fn(), run again (after waiting for quiet) while others used > BUSY of the CPU."""
    for i in range(retries + 1):
        (warm or warm_store)()  # the page cache may have been reclaimed meanwhile
        ld = Load()
        r = fn()
        f = ld.foreign()
        if f <= BUSY or i == retries:
            SECTION[1].append(f)
            return r
        log(f"bench: {f:.0%} of the CPU went to other processes during that run; again")
        wait_quiet(120)


def row(no, measure, figure, reference, ratio, target, ok, gate=True):
    if SECTION[1]:
        load = f"{med(SECTION[1]):.0%} (max {max(SECTION[1]):.0%})"
    else:
        load = f"{SECTION[0].foreign():.0%}" if SECTION[0] else "?"
    if ok is None:
        verdict, gate = "info", False
    elif gate:
        verdict = "PASS" if ok else "FAIL"
    else:
        verdict = ("pass" if ok else "fail") + " (info)"
    rows.append((no, measure, figure, reference, ratio, target, verdict, load))
    if gate:
        gating.append(ok)
    log(f"  -> {no} {measure}: {figure} vs {reference}: {ratio} ({target}) {verdict}; other load {load}")


def detail(s):
    details.append(s)
    log("  " + s)


def warm_store():
    warm_tree(STORE)


def warm_tree(root):
    """Read every file under root (into the page cache)."""
    for d, _, files in os.walk(root):
        for f in files:
            with open(os.path.join(d, f), "rb") as fh:
                while fh.read(1 << 24):
                    pass


def main():
    for d in (MNTROOT, PIDDIR, LOGDIR, SHM):
        os.makedirs(d, exist_ok=True)
    if ROWS not in ("all", "local", "labels", "remote", "icechunk", "shards", "kerchunk",
                    "compare"):
        raise RuntimeError(f"ZF_BENCH_ROWS={ROWS}: all, local, labels, remote, icechunk, "
                           "shards, kerchunk or compare")
    log(f"bench: N={N}, runs={RUNS}, store {STORE}, rows {ROWS}")
    if ROWS not in ("remote", "icechunk", "shards", "kerchunk"):
        warm_store()  # "store files in page cache"
    QUIET[0] = wait_quiet(QUIET_WAIT)
    log(f"bench: CPU used by others before starting: {QUIET[0]:.0%}")
    if ROWS in ("all", "local"):
        local_rows()
    if ROWS in ("all", "local", "labels"):
        labels_rows()
    if ROWS in ("all", "remote"):
        import remote  # bench/ is the script's directory
        remote.rows(sys.modules[__name__])
    if ROWS in ("all", "icechunk"):
        import icbench
        icbench.rows(sys.modules[__name__])
    if ROWS in ("all", "shards"):
        shard_rows()
    if ROWS in ("all", "kerchunk"):
        import kcbench
        kcbench.rows(sys.modules[__name__])
    if ROWS == "compare":
        compare_rows()
    report()
    return 0 if all(gating) else 1


def local_rows():
    """Rows 1-14: the local store."""

    # --- reference bytes: the zarrfs text, once, into tmpfs; check it
    ref = os.path.join(SHM, "lt.txt")
    ref2 = os.path.join(SHM, "lt2.txt")  # the second reader's bytes, for row 8's minifuse pair
    with Mount("zarrfs", STORE) as m:
        with open(ref, "wb") as f:
            timed(["cat", m.path(A + ".txt")], stdout=f)
        with open(ref2, "wb") as f:
            timed(["cat", m.path(B_ + ".txt")], stdout=f)
        size = os.path.getsize(ref)
        slice_size = os.path.getsize(m.path(S + ".txt"))
        size2 = os.path.getsize(m.path(B_ + ".txt"))
    chk = peer("check", A, ref)
    log(f"bench: {A}.txt is {size} bytes; check against pandas: {chk}")
    if not chk["ok"]:
        raise RuntimeError(f"zarrfs text of {A} does not match str(pandas.Timedelta): {chk}")
    detail(f"text: {A}.txt {size} bytes ({size / N:.2f} bytes/line), {B_}.txt {size2} bytes, "
           f"{S}.txt {slice_size} bytes")

    # --- 1. cold sequential read (and 2. warm re-read on the first mount)
    section()
    res = {}
    warm = []
    for mode, opts in (("mt", ()), ("s", ("-s",))):
        runs = []
        for r in range(max(RUNS, 5)):  # minifuse's short runs are the noisiest figure
            def one_run():
                with Mount("zarrfs", STORE, opts) as m:
                    zs = stat(m.path(A + ".txt"))
                    zc = cat(m.path(A + ".txt"))
                    if mode == "mt" and not warm:
                        warm.extend(hyperfine(["cat " + m.path(A + ".txt"), "cat " + ref]))
                with Mount("minifuse", ref, opts) as m:
                    stat(m.path("lt.txt"))
                    mc = cat(m.path("lt.txt"))
                return zs, zc, mc
            runs.append(attempt(one_run))
        zs, zc, mc = (list(x) for x in zip(*runs))
        res[mode] = (zs, zc, mc)
        detail(f"1.{mode}: zarrfs first stat {runs_str(zs)}; zarrfs cat {runs_str(zc)}; "
               f"minifuse cat {runs_str(mc)}")
    cached = " (all chunks still cached from the size pass: no decoding)" \
        if N * 8 <= 256 * MiB else ""
    for mode, label, gate in (("mt", "multi-threaded", True), ("s", "-s", False)):
        zs, zc, mc = res[mode]
        ratio = med(mc) / med(zc)
        row("1", f"cold sequential `cat NAME.txt`, {label} (size known; first stat "
            f"{fmt_t(med(zs))}){cached}",
            fmt_rate(size, med(zc)), f"minifuse {fmt_rate(size, med(mc))}",
            f"{ratio:.2f} x", ">= 0.5 x", ratio >= 0.5, gate)
    zs, zc, mc = res["mt"]
    row("1", "cold `stat` + `cat` end to end, multi-threaded", fmt_rate(size, med(zs) + med(zc)),
        f"minifuse {fmt_rate(size, med(mc))}", f"{med(mc) / (med(zs) + med(zc)):.2f} x", "-", None)

    wz, wr = warm
    detail(f"2: warm cat via zarrfs {fmt_t(wz)}, from tmpfs {fmt_t(wr)} (hyperfine medians of 5)")
    row("2", "warm re-read, same mount", fmt_rate(size, wz), f"tmpfs {fmt_rate(size, wr)}",
        f"{wr / wz:.2f} x", ">= 0.9 x", wr / wz >= 0.9)

    # --- 14. CF-encoded arrays (as xarray writes them) beside the native one,
    # interleaved in the same runs: cold stat + cat of each on a fresh mount
    section()
    def cf_run():
        out = []
        for path in (A, CF_I64, CF_F64):
            with Mount("zarrfs", STORE) as m:
                stat(m.path(path + ".txt"))
                out.append(cat(m.path(path + ".txt")))
        return tuple(out)
    nat_c, i64_c, f64_c = (list(x) for x in zip(*[attempt(cf_run) for _ in range(RUNS)]))
    with Mount("zarrfs", STORE) as m:
        i64_size = os.path.getsize(m.path(CF_I64 + ".txt"))
        f64_size = os.path.getsize(m.path(CF_F64 + ".txt"))
    detail(f"14: cold cat (size known) native {A} {runs_str(nat_c)}; CF int64 {CF_I64} "
           f"{runs_str(i64_c)} ({i64_size} bytes); CF float64 {CF_F64} {runs_str(f64_c)} "
           f"({f64_size} bytes)")
    nat_rate = size / med(nat_c)
    for label, path, sz, runs in (("CF int64 ns (`units`, `dtype`)", CF_I64, i64_size, i64_c),
                                  ("CF float64 seconds, NaN fill", CF_F64, f64_size, f64_c)):
        rate = sz / med(runs)
        row("14", f"cold `cat NAME.txt` of a {label} array, size known", fmt_rate(sz, med(runs)),
            f"native `{A}` {fmt_rate(size, med(nat_c))}", f"{rate / nat_rate:.2f} x", ">= 0.9 x",
            rate / nat_rate >= 0.9)

    # --- 3. peers on the 10^7 slice
    section()
    def slice_run():
        with Mount("zarrfs", STORE) as m:
            t = stat(m.path(S + ".txt"))
            return t + cat(m.path(S + ".txt"))
    zsl = [attempt(slice_run) for _ in range(RUNS)]
    extrap = (med(res["mt"][0]) + med(res["mt"][1])) * SLICE_N / N
    detail(f"3: zarrfs stat+cat of {S}.txt (fresh mounts) {runs_str(zsl)}; "
           f"extrapolated from the full array {fmt_t(extrap)}")
    pd_runs = [attempt(lambda: peer("pandas", S), retries=1) for _ in range(PEER_RUNS)]
    np_runs = [attempt(lambda: peer("numpy", S), retries=1) for _ in range(PEER_RUNS)]
    tp = med([p["seconds"] for p in pd_runs])
    tn = med([p["seconds"] for p in np_runs])
    detail(f"3: pandas {runs_str([p['seconds'] for p in pd_runs])} "
           f"(zarr read {runs_str([p['read'] for p in pd_runs])}); "
           f"numpy {runs_str([p['seconds'] for p in np_runs])} "
           f"(zarr read {runs_str([p['read'] for p in np_runs])})")
    tz = med(zsl)
    where = (f"separate 10^7-element array `{S}` (first 10^7 of `{A}`), measured"
             if S != A else f"the whole {SLICE_N:.0e}-element array, measured")
    row("3", f"{SLICE_N:.0e} values to text: zarrfs fresh mount `stat`+`cat` ({where})",
        fmt_t(tz), f"pandas `to_csv` {fmt_t(tp)}", f"{tp / tz:.0f} x", ">= 100 x", tp / tz >= 100)
    row("3", f"{SLICE_N:.0e} values to text: zarrfs (as above)", fmt_t(tz),
        f"numpy `astype(str)` {fmt_t(tn)}", f"{tn / tz:.0f} x", ">= 20 x", tn / tz >= 20)

    # --- 4. first stat, 1 core vs 2 cores; 6. tail once sized
    section()
    tails_warm = []
    def stat_run():
        with Mount("zarrfs", STORE, one_core=True) as m:
            one = stat(m.path(A + ".txt"))
        with Mount("zarrfs", STORE) as m:
            two = stat(m.path(A + ".txt"))
            tail = timed(["tail", "-n", "1", m.path(A + ".txt")], timeout=600)
            if not tails_warm:
                tails_warm.extend(hyperfine(["tail -n 1 " + m.path(A + ".txt")], runs=20, warmup=2))
        return one, two, tail
    one, two, tails = (list(x) for x in zip(*[attempt(stat_run) for _ in range(RUNS)]))
    zr = attempt(lambda: peer("read", A, str(RUNS)))
    z1 = attempt(lambda: peer("zstd1", A))
    detail(f"4: first stat on 1 core {runs_str(one)}; on 2 cores {runs_str(two)}; "
           f"zarr-python read {runs_str(zr['runs'])}; zstd decode of every chunk, 1 thread "
           f"{fmt_t(z1['seconds'])}")
    row("4", "first `stat` (size pass), 2 cores", fmt_t(med(two)),
        f"1 core (taskset -c 0) {fmt_t(med(one))}", f"{med(one) / med(two):.2f} x",
        ">= 1.5 x", med(one) / med(two) >= 1.5)
    row("4", "first `stat` (size pass), 2 cores", fmt_t(med(two)),
        f"zarr-python read {fmt_t(zr['seconds'])} (1-thread zstd alone {fmt_t(z1['seconds'])})",
        f"{zr['seconds'] / med(two):.2f} x", ">= 1 x (no slower)", med(two) <= zr["seconds"])
    detail(f"6: first `tail -n 1` after the size pass {runs_str(tails)}; warm "
           f"{fmt_t(tails_warm[0])} (hyperfine median of 20)")
    row("6", "`tail -n 1 NAME.txt`, size known, fresh page cache", fmt_t(med(tails)),
        f"warm {fmt_t(tails_warm[0])}", "-", "< 20 ms", med(tails) < 0.020)

    # --- 5. second mount ls -l (persisted index)
    section()
    home = tempfile.mkdtemp(prefix="xdg-persist.", dir=SHM)
    with Mount("zarrfs", STORE, cache_home=home) as m:
        first_ls = timed(["ls", "-l", m.path("a")], timeout=600)
    def ls_run():
        with Mount("zarrfs", STORE, cache_home=home) as m:
            return timed(["ls", "-l", m.path("a")], timeout=600)
    lss = [attempt(ls_run) for _ in range(RUNS)]
    detail(f"5: first mount `ls -l a/` {fmt_t(first_ls)}; later mounts (same XDG_CACHE_HOME) "
           f"{runs_str(lss)}")
    row("5", "second mount `ls -l` of the array's dir", fmt_t(med(lss)),
        f"first mount {fmt_t(first_ls)}", "-", "< 50 ms", med(lss) < 0.050)

    # --- 7. peak RSS with cache_size=64M
    section()
    def rss_run():
        with Mount("zarrfs", STORE, ("-o", "cache_size=64M")) as m:
            stat(m.path(A + ".txt"))
            h_stat = m.hwm_kib()
            cat(m.path(A + ".txt"))
            return h_stat, m.hwm_kib()
    h_stat, h_cat = attempt(rss_run)
    detail(f"7: VmHWM after the size pass {h_stat / 1024:.1f} MiB, after the cat {h_cat / 1024:.1f} MiB")
    row("7", "daemon peak RSS (VmHWM), `-o cache_size=64M`, stat + whole cat",
        f"{h_cat / 1024:.1f} MiB", f"after size pass {h_stat / 1024:.1f} MiB", "-",
        "<= 96 MiB", h_cat <= 96 * 1024)

    # --- 8. two readers, two arrays (paired with one reader, same conditions),
    # and the same pair of readers on minifuse (one instance per file): what
    # two readers gain on this machine when serving costs nothing
    section()
    def concurrent_cats(paths):
        t0 = time.perf_counter()
        ps = [subprocess.Popen(["cat", p], stdout=subprocess.DEVNULL) for p in paths]
        for p in ps:
            if p.wait(timeout=BIG_TIMEOUT) != 0:
                raise RuntimeError("cat failed in a two-reader run")
        return time.perf_counter() - t0

    def readers_run():
        with Mount("zarrfs", STORE) as m:
            stat(m.path(A + ".txt"))
            single = cat(m.path(A + ".txt"))
        with Mount("zarrfs", STORE) as m:
            stat(m.path(A + ".txt"))
            stat(m.path(B_ + ".txt"))
            both = concurrent_cats([m.path(A + ".txt"), m.path(B_ + ".txt")])
        with Mount("minifuse", ref) as m:
            mf_single = cat(m.path("lt.txt"))
        with Mount("minifuse", ref) as m1, Mount("minifuse", ref2) as m2:
            mf_both = concurrent_cats([m1.path("lt.txt"), m2.path("lt2.txt")])
        return single, both, mf_single, mf_both
    singles, aggs, mf_singles, mf_aggs = (list(x) for x in zip(*[attempt(readers_run)
                                                                for _ in range(RUNS)]))
    one_rate = size / med(singles)
    agg_rate = (size + size2) / med(aggs)
    mf_one = size / med(mf_singles)
    mf_agg = (size + size2) / med(mf_aggs)
    detail(f"8: one cat of {A} {runs_str(singles)}; two concurrent cats ({A}, {B_}) wall "
           f"{runs_str(aggs)}; minifuse: one cat {runs_str(mf_singles)}, two concurrent cats "
           f"(one minifuse per file) {runs_str(mf_aggs)}")
    row("8", "two readers, two arrays, aggregate", f"{agg_rate / MiB:.0f} MiB/s",
        f"one reader {one_rate / MiB:.0f} MiB/s", f"{agg_rate / one_rate:.2f} x",
        ">= 1.6 x", agg_rate / one_rate >= 1.6)
    row("8", "two readers on minifuse (no decoding, no formatting): this machine's ceiling",
        f"{mf_agg / MiB:.0f} MiB/s", f"one reader {mf_one / MiB:.0f} MiB/s",
        f"{mf_agg / mf_one:.2f} x", "-", None)

    # --- diagnostic: the core's stages, no FUSE (bench/corebench.c)
    cb = os.environ.get("ZF_COREBENCH")
    if cb and os.access(cb, os.X_OK):
        section()
        r = subprocess.run([cb, STORE, S, "3"], capture_output=True, text=True, timeout=BIG_TIMEOUT)
        CORE.append(f"`corebench {S}` (other load {SECTION[0].foreign():.0%}):")
        CORE.append("```")
        CORE.extend((r.stdout + r.stderr).rstrip().splitlines())
        CORE.append("```")
        log("\n".join(CORE))


def same_prefix(path, want):
    """Is the file `want` (all of it) the start of `path`, and does a line follow?"""
    with open(path, "rb") as a, open(want, "rb") as b:
        while True:
            y = b.read(1 << 24)
            if not y:
                break
            if a.read(len(y)) != y:
                return False
        return True


def back_memory(nbytes):
    """Touch (and free) nbytes of memory, untimed, before a cold cat of a
    large file: on a VM whose kernel reports free pages to the host
    (virtio-balloon free page reporting, as here) memory freed a few seconds
    ago is unbacked, and the page cache of the next big file pays a host
    fault per page (a run after one that freed less memory took 1.5-2.4 x as
    long).  Done before every mount of a row, so both files start alike."""
    with open("/proc/meminfo") as f:
        avail = next(int(l.split()[1]) * 1024 for l in f if l.startswith("MemAvailable:"))
    n = min(int(nbytes), int(avail * 0.8))
    subprocess.run([sys.executable, "-c",
                    f"b = bytearray({n}); b[::4096] = bytes(len(range(0, {n}, 4096)))"],
                   check=True, timeout=BIG_TIMEOUT)


def labels_rows():
    """Row 16: the labelled CSV (issue 17) of a 2-D array xarray wrote."""
    lab_opts, idx_opts = ("-o", "nat="), ("-o", "labels=index,nat=")
    section()
    sizes = {}
    def labels_run(r=[0]):
        r[0] += 1
        out = {}
        order = (("coords", lab_opts), ("index", idx_opts))
        for kind, opts in (order if r[0] % 2 else order[::-1]):  # alternate who goes first
            back_memory(X_N * 60)  # more than the labelled file's page cache
            with Mount("zarrfs", STORE, opts) as m:
                p = m.path(X + ".csv")
                st = stat(p)
                out[kind] = (st, cat(p))
                sizes[kind] = os.path.getsize(p)
        return out["coords"] + out["index"]
    runs = [attempt(labels_run) for _ in range(RUNS)]
    ls, lc, is_, ic = (list(x) for x in zip(*runs))
    lsz, isz = sizes["coords"], sizes["index"]
    lab_rate, idx_rate = lsz / med(lc), isz / med(ic)
    detail(f"16: {X}.csv ({X_N // X_STEP} x {X_STEP}, {X_N} values), `-o nat=`: labelled "
           f"{lsz} bytes ({lsz / X_N:.2f} bytes/line), first stat {runs_str(ls)}, cat "
           f"{runs_str(lc)}; `-o labels=index` {isz} bytes ({isz / X_N:.2f} bytes/line), "
           f"first stat {runs_str(is_)}, cat {runs_str(ic)}; per value (cat): labelled "
           f"{X_N / med(lc) / 1e6:.1f} M values/s, index {X_N / med(ic) / 1e6:.1f} M values/s "
           f"({med(ic) / med(lc):.2f} x)")
    row("16", f"cold `cat NAME.csv` with coordinate labels (`init_time,step,lead`, "
        f"{X_N:.0e} values, 2-D, `-o nat=`), size known",
        fmt_rate(lsz, med(lc)), f"`-o labels=index` {fmt_rate(isz, med(ic))}",
        f"{lab_rate / idx_rate:.2f} x", ">= 0.8 x", lab_rate / idx_rate >= 0.8)

    # xarray on the first X_SLICE_ROWS init times; its file is checked (untimed)
    # against the start of zarrfs's labelled file
    section()
    out = os.path.join(SHM, "x-slice.csv")
    xr_runs = [attempt(lambda: peer("xcsv", X, str(X_SLICE_ROWS), out), retries=1)
               for _ in range(PEER_RUNS)]
    with Mount("zarrfs", STORE, lab_opts) as m:
        same = same_prefix(m.path(X + ".csv"), out)
    xsz = os.path.getsize(out)
    os.unlink(out)
    tx = med([p["seconds"] for p in xr_runs])
    zrate = X_N / (med(ls) + med(lc))
    xrate = X_SLICE_N / tx
    detail(f"16: xarray open_zarr + isel(init_time=slice(0, {X_SLICE_ROWS})) + to_dataframe() + "
           f"to_csv (tmpfs file), {X_SLICE_N} values, {xsz} bytes: "
           f"{runs_str([p['seconds'] for p in xr_runs])} "
           f"(open + isel {runs_str([p['open'] for p in xr_runs])}) = {xrate:,.0f} values/s; "
           f"zarrfs labelled first stat + cat of all {X_N} values {fmt_t(med(ls) + med(lc))} = "
           f"{zrate:,.0f} values/s; xarray's file {'is' if same else 'is NOT'} byte-identical "
           f"to the start of zarrfs's")
    if not same:
        raise RuntimeError(f"xarray's CSV of the slice is not the start of zarrfs's {X}.csv")
    row("16", f"values/s to labelled CSV: zarrfs fresh mount `stat`+`cat` of all {X_N:.0e} "
        f"values", f"{zrate / 1e6:.1f} M values/s",
        f"xarray `to_dataframe().to_csv()` of {X_SLICE_N:.0e} {xrate / 1e6:.3f} M values/s",
        f"{zrate / xrate:.0f} x", ">= 100 x", zrate / xrate >= 100)


def compare_rows():
    """zarrfs's own figures of rows 1, 3 and 16, for this binary and the one
    in ZF_BENCH_OLD, in the same runs: each run measures both, taking turns
    to go first; the row gives the medians, the ratio and each one's spread."""
    old = os.environ.get("ZF_BENCH_OLD", "")
    if not os.access(old, os.X_OK):
        raise RuntimeError("ZF_BENCH_ROWS=compare needs ZF_BENCH_OLD, the other zarrfs binary")
    measures = {
        "1": ("cold `cat NAME.txt` after the first `stat` (size known)", A + ".txt", (), "cat"),
        "3": (f"fresh mount `stat`+`cat` of {S}.txt", S + ".txt", (), "both"),
        "16": (f"cold `cat NAME.csv` labelled (`{X}`, `-o nat=`), size known", X + ".csv",
               ("-o", "nat="), "cat"),
    }
    times = {(no, kind): [] for no in measures for kind in ("zarrfs", "old")}
    cpus = {(no, kind): [] for no in measures for kind in ("zarrfs", "old")}
    sizes = {}
    for r in range(max(RUNS, 5)):
        for no, (_, rel, opts, what) in measures.items():
            section()
            def one_run(no=no, rel=rel, opts=opts, what=what):
                out = {}
                order = ("zarrfs", "old") if r % 2 == 0 else ("old", "zarrfs")
                for kind in order:
                    if no == "16":
                        back_memory(X_N * 60)
                    with Mount(kind, STORE, opts) as m:
                        c0 = m.cpu()
                        st = stat(m.path(rel))
                        c1 = m.cpu()
                        c = cat(m.path(rel))
                        c2 = m.cpu()
                        sizes[(no, kind)] = os.path.getsize(m.path(rel))
                    out[kind] = (c, c2 - c1) if what == "cat" else (st + c, c2 - c0)
                return out
            got = attempt(one_run)
            for kind, (t, cpu) in got.items():
                times[(no, kind)].append(t)
                cpus[(no, kind)].append(cpu)
    for no, (label, rel, _, _) in measures.items():
        new, before = times[(no, "zarrfs")], times[(no, "old")]
        if sizes[(no, "zarrfs")] != sizes[(no, "old")]:
            raise RuntimeError(f"row {no}: {rel} is {sizes[(no, 'zarrfs')]} bytes, the old "
                               f"binary's {sizes[(no, 'old')]}")
        cn, co = cpus[(no, "zarrfs")], cpus[(no, "old")]
        detail(f"{no} (compare): {rel}, {sizes[(no, 'zarrfs')]} bytes; wall: this binary "
               f"{runs_str(new)}; old ({old}) {runs_str(before)}; the daemon's CPU time "
               f"(user + system): this binary {runs_str(cn)}, old {runs_str(co)}")
        ratio = med(before) / med(new)
        row(no, f"{label}: this binary vs the old one (spread {fmt_t(min(new))}-"
            f"{fmt_t(max(new))} vs {fmt_t(min(before))}-{fmt_t(max(before))})",
            fmt_t(med(new)), f"old {fmt_t(med(before))}", f"{ratio:.2f} x",
            ">= 0.95 x (no slower)", ratio >= 0.95)
        row(no, f"the daemon's CPU time (user + system) for the same (spread {fmt_t(min(cn))}-"
            f"{fmt_t(max(cn))} vs {fmt_t(min(co))}-{fmt_t(max(co))})", fmt_t(med(cn)),
            f"old {fmt_t(med(co))}", f"{med(co) / med(cn):.2f} x", "-", None)


def shard_rows():
    """Row 18 (issue 24): sizing a sharded array costs what its stored bytes
    do: bench/gen_shards.py's store, each array's first `stat` on a fresh
    daemon, the four arrays in turn in every run."""
    store = os.environ["ZF_BENCH_SHARD_STORE"]
    names = ("sh/lt", "un/lt", "one/lt", "q/lt")
    section()

    def run():
        out = []
        for name in names:
            with Mount("zarrfs", store) as m:
                out.append(stat(m.path(name + ".txt")))
        return out
    sh, un, one, q = (list(x) for x in zip(*[attempt(run, warm=lambda: warm_tree(store))
                                             for _ in range(RUNS)]))
    detail(f"18: first stat of sh/lt (one shard of 2^16 inner chunks of 64) {runs_str(sh)}; "
           f"un/lt (2^16 chunks of 64) {runs_str(un)}; one/lt (one chunk of 2^22) "
           f"{runs_str(one)}; q/lt (one shard of 2^14 inner chunks of 64) {runs_str(q)}")
    what = "first `stat` (size pass) of a zarr-python array of 2^22 values in one shard of 2^16 " \
           "inner chunks (of 64 values)"
    row("18", what, fmt_t(med(sh)), f"the same data unsharded (2^16 chunks of 64) {fmt_t(med(un))}",
        f"{med(sh) / med(un):.2f} x", "<= 1.5 x", med(sh) / med(un) <= 1.5)
    row("18", what, fmt_t(med(sh)), f"the same data in one chunk {fmt_t(med(one))}",
        f"{med(sh) / med(one):.2f} x", "-", None)
    row("18", "sizing against the inner chunks per shard: 2^16 (sh/lt) against 2^14 (q/lt, the "
        "first 2^20 values)", fmt_t(med(sh)), f"2^14 inner chunks {fmt_t(med(q))}",
        f"{med(sh) / med(q):.2f} x", "4 x is linear", None)


def machine():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) / 1024 / 1024
    rev = os.environ.get("ZF_BENCH_REV") or subprocess.run(
        ["git", "-C", REPO, "describe", "--always", "--dirty"], capture_output=True,
        text=True).stdout.strip()
    import numpy, pandas, zarr
    return (f"- machine: {os.cpu_count()} CPUs (nproc {subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()}), "
            f"{model}, {mem:.0f} GiB RAM, Linux {platform.release()}\n"
            f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}\n"
            f"- zarrfs: {rev}; libfuse {subprocess.run(['pkg-config', '--modversion', 'fuse3'], capture_output=True, text=True).stdout.strip()}; "
            f"Python peers: zarr {zarr.__version__}, numpy {numpy.__version__}, pandas {pandas.__version__}\n")


def report():
    out = []
    if ROWS == "remote":
        out.append("### zarrfs benchmark, remote stores only (ZF_BENCH_ROWS=remote)\n")
    elif ROWS == "icechunk":
        out.append("### zarrfs benchmark, Icechunk repositories only (ZF_BENCH_ROWS=icechunk)\n")
    elif ROWS == "shards":
        out.append("### zarrfs benchmark, sharded arrays only (ZF_BENCH_ROWS=shards)\n")
    elif ROWS == "kerchunk":
        out.append("### zarrfs benchmark, kerchunk reference sets only (ZF_BENCH_ROWS=kerchunk)\n")
    else:
        out.append(f"### zarrfs benchmark, N = {N:.0e} ({N} elements per array)\n")
    out.append(machine())
    if ROWS == "icechunk":
        out.append(f"Data: bench/icgen.py's forecast (row 17's note). Figures are medians of "
                   f"{RUNS} runs (peers: {PEER_RUNS}); output to /dev/null everywhere.\n")
    elif ROWS == "shards":
        out.append(f"Data: bench/gen_shards.py's store (note 18), in the page cache. Figures "
                   f"are medians of {RUNS} runs.\n")
    elif ROWS == "kerchunk":
        out.append(f"Data: bench/kcgen.py's reference set (note 19), in the page cache. Figures "
                   f"are medians of {RUNS} runs (peers: {PEER_RUNS}).\n")
    elif ROWS == "remote":
        out.append(f"Data: bench/gen.py's store with 10^7 values per array, consolidated "
                   f"(timedelta64[ns], chunks of 10^6, bytes + zstd), in the servers' page "
                   f"cache. Figures are medians of {RUNS} runs (peers: {PEER_RUNS}); output to "
                   f"/dev/null everywhere.\n")
    else:
        out.append(f"Data: timedelta64[ns], chunks of 10^6, zarr-python default codecs (bytes + zstd "
                   f"level 0); lead times 0..30 days, half with ns jitter, 1 % NaT. Store files "
                   f"in the page cache; every \"cold\" figure is a fresh daemon (`-f`, default "
                   f"multi-threaded unless noted). Figures are medians of {RUNS} runs (row 1: "
                   f"{max(RUNS, 5)}; peers: {PEER_RUNS}); output to /dev/null everywhere.\n")
    out.append("| # | measure | zarrfs | reference | ratio | target | result | other load |")
    out.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        out.append("| " + " | ".join(str(x) for x in r) + " |")
    out.append("")
    out.append("Notes:")
    if ROWS in ("all", "local"):
        local_notes(out)
    if ROWS in ("all", "local", "labels"):
        out.append(f"- 16: `{X}` is bench/gen.py's group `x`, written by xarray "
                   f"`Dataset.to_zarr(zarr_format=3)`: {X_N // X_STEP} init times (6-hourly, CF "
                   f"int64 `hours since 2020-01-01`) x {X_STEP} hourly steps (timedelta64 "
                   f"coordinate), whole-hour lead times 0..30 days, 1 % NaT, chunks "
                   f"(1000, 1000). Both mounts use `-o nat=` (NaT as pandas writes it); the two "
                   f"mounts alternate order run by run. The xarray peer is `open_zarr(STORE, "
                   f"group=\"x\", decode_timedelta=True)[\"lead\"].isel(init_time=slice(0, "
                   f"{X_SLICE_ROWS})).to_dataframe().to_csv(tmpfs file)` (imports excluded); its "
                   f"file is compared (untimed) with the start of zarrfs's labelled file.")
    if ROWS in ("all", "shards"):
        out.append("- 18: bench/gen_shards.py's store: 2^22 values of the same lead times "
                   "(timedelta64[ns]) written by zarr-python as one shard of 2^16 inner chunks "
                   "of 64 values (its sharding defaults: inner bytes + zstd, index bytes + "
                   "crc32c), as 2^16 chunks of 64 without sharding, as one chunk, and their "
                   "first 2^20 as one shard of 2^14 inner chunks; each figure is a fresh "
                   "daemon's first `stat` of the array's .txt (the size pass), files in the "
                   "page cache, XDG_CACHE_HOME empty.")
    if ROWS in ("all", "kerchunk"):
        out.append("- 19: bench/kcgen.py: two NetCDF4 files written by xarray (h5netcdf) of "
                   "ZF_BENCH_KC_N/2 lead times each (int64 seconds, 1 % NaT, chunks of 10^6, "
                   "shuffle + zlib), combined by kerchunk's MultiZarrToZarr into one JSON "
                   "reference set; zarrfs is a fresh daemon (empty index cache); the peer is "
                   "xarray opening `reference://` through fsspec, loading `lead` and writing "
                   "it with pandas `Series.to_csv(na_rep=\"NaT\")` (tmpfs file, imports excluded), "
                   "checked byte for byte against zarrfs's lead.txt.")
    if ROWS == "compare":
        out.append(f"- compare: zarrfs's own side of rows 1, 3 and 16 (no peers), for this build "
                   f"and the binary ZF_BENCH_OLD, both Release builds; each of {max(RUNS, 5)} "
                   f"runs mounts a fresh daemon of each binary in turn (who goes first "
                   f"alternates run by run); medians, with each binary's fastest and slowest "
                   f"run. Row 1: the cat after a timed first `stat`; row 3: `stat` + `cat`; "
                   f"row 16: the cat after a timed first `stat`, memory touched first as row 16 "
                   f"does. The CPU rows add up the daemon's user and system time over the same "
                   f"span (/proc/PID/stat, every thread): the figure least moved by other "
                   f"load.")
    out.extend(NOTES)
    out.append("- other load: share of the machine's CPU time used by processes other than the "
               "benchmark (from /proc/stat), median and max over the runs behind the row; the "
               "store is re-read into the page cache before every run; a run during which it "
               f"exceeded {BUSY:.0%} was repeated (up to 3 times; peers once) "
               f"after waiting for quiet. Before starting: {QUIET[0]:.0%} (waited up to "
               f"{QUIET_WAIT:.0f} s for < 10 %). Figures taken under load are pessimistic for "
               "zarrfs and minifuse alike, but flatter zarrfs against the Python peers only if "
               "the peers ran under more load.")
    out.append("")
    out.append("Raw runs:")
    for d in details:
        out.append(f"- {d}")
    out.append("")
    if CORE:
        out.append("Core stages without FUSE, 1 thread unless noted (diagnostic, no target):")
        out.extend(CORE)
        out.append("")
    overall = "all gating targets PASS" if all(gating) else \
        f"{gating.count(False)} of {len(gating)} gating targets FAIL"
    out.append(f"Result: {overall}.")
    text = "\n".join(out) + "\n"
    print(text)
    if REPORT:
        with open(REPORT, "w") as f:
            f.write(text)


def local_notes(out):
    """The notes on rows 1-14."""
    out.append("- 1: the cat starts after a timed `stat` (the size pass), so it measures "
               "decode + format + FUSE; minifuse (bench/minifuse.c) serves the identical bytes "
               "from memory with the same libfuse options and the same kernel read-ahead window "
               f"({READ_AHEAD_KB // 1024} MiB, which zarrfs sets on its own mount). The -s row is "
               "informational.")
    out.append("- 3: pandas is `Series(values).to_csv(f, index=False, header=False)` (the same "
               "lines as NAME.txt); numpy is `'\\n'.join(values.astype(str))` (text like "
               "`123 nanoseconds`); both include the zarr-python read, exclude imports.")
    out.append("- 4: 2-core and 1-core are fresh daemons (1 core: `taskset -c 0 zarrfs`).")
    out.append("- 8: the second row runs the same two readers on two minifuse instances (one per "
               "file, serving from memory), in the same runs: what a second reader gains on this "
               "machine when serving costs nothing.")
    out.append("- 5: each mount gets its own XDG_CACHE_HOME (in tmpfs) so no cold figure reuses "
               "a persisted index; row 5 shares one across mounts.")


def on_signal(signum, frame):
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    rc = 2
    try:
        rc = main()
    except Exception as e:
        log(f"bench: error: {e}")
        rc = 2
    finally:
        close_all()
    sys.exit(rc)
