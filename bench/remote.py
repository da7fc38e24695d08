"""The remote-store rows of scripts/bench (issue 15): row 15.

A 10^7-value (ZF_BENCH_REMOTE_N) timedelta64 array (bench/gen.py, zstd,
chunks of 10^6, consolidated metadata) served over an emulated network by nginx (HTTP) and
versitygw (S3, posix backend, signatures checked), read by

  zarrfs:  (a) a fresh daemon with an empty index cache: first `ls -l` of the
           array's dir (the size pass fetches every chunk); (b) another fresh
           daemon on the index (a) persisted (same XDG_CACHE_HOME), chunk cache
           empty: a cold `cat NAME.txt`, which fetches every chunk while it
           formats (issue 15's measures, as row 1's "cold cat (size known)");
           the same for ZF_BENCH_REMOTE_SMALL (m/lt: the values in 100 chunks);
  curl:    every chunk object of the array fetched with the same number of
           connections (`curl --parallel --parallel-max 16`): the download
           limit;
  zarr-python 3.1 reading the same remote array (fsspec HTTP over aiohttp;
           for S3 zarr's ObjectStore over obstore) and writing pandas text.

The network: scripts/bench makes a network namespace of its own
(ZF_BENCH_NETNS) with only `lo`, and every server and client of these rows
runs in it (`nsenter --net`: unlike `ip netns exec`, it keeps the mount
namespace, so the daemon's FUSE mount is the bench's).  Latency and rate
come from netem on that `lo` where the kernel has it (ZF_BENCH_LINK=netem);
otherwise from bench/delaylink.c, a forwarder in front of each server that
delays each direction by half the round trip and serialises it at the rate
(ZF_BENCH_LINK=delaylink).  Nothing leaves the machine: the namespace has no
other interface.

Environment (set by scripts/bench): ZF_BENCH_NETNS, ZF_BENCH_LINK,
ZF_DELAYLINK (the forwarder's binary), ZF_BENCH_REMOTE_STORE (the store
directory), ZF_BENCH_REMOTE_SMALL (its array in 100 chunks; unset: not
measured), ZF_BENCH_RTT_MS (20), ZF_BENCH_RATE_MBIT (1000),
ZF_BENCH_CONNECTIONS (16), ZF_VERSITYGW (else on PATH or ~/go/bin).
"""
import hashlib
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

NETNS = os.environ.get("ZF_BENCH_NETNS", "")
LINK = os.environ.get("ZF_BENCH_LINK", "netem")
RTT_MS = int(os.environ.get("ZF_BENCH_RTT_MS", "20"))
RATE_MBIT = int(os.environ.get("ZF_BENCH_RATE_MBIT", "1000"))
CONN = int(os.environ.get("ZF_BENCH_CONNECTIONS", "16"))
VALUES = int(os.environ.get("ZF_BENCH_REMOTE_N", "10000000"))  # elements of the array
ARRAY, GROUP = "a/lt", "a"
SMALL = os.environ.get("ZF_BENCH_REMOTE_SMALL", "")  # the same values in smaller chunks
BUCKET, PREFIX = "zfbench", "store.zarr"
START_TIMEOUT = 20  # seconds for a server to answer
LIFETIME = 7200     # the forwarders stop by themselves after this long
HTTP_PORT, S3_PORT = 8080, 7070  # inside the bench's own namespace: nothing else listens there


def ns(argv):
    """argv run inside the bench's network namespace (same mount namespace)."""
    return ["nsenter", f"--net=/run/netns/{NETNS}", "--", *argv]


def ns_run(argv, timeout=60, env=None, check=True):
    """Run argv in the namespace and wait (with a timeout); its CompletedProcess."""
    r = subprocess.run(ns(argv), capture_output=True, timeout=timeout, env=env)
    if check and r.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed ({r.returncode}): {r.stderr.decode()[-1500:]}")
    return r


class Servers:
    """nginx and versitygw in the namespace (and their forwarders); stopped on exit."""

    def __init__(self, b, store):
        self.b, self.store = b, store
        self.dir = os.path.join(b.WORK, "remote-run")
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.procs = []
        self.access = secrets.token_hex(10).upper()
        self.secret = secrets.token_urlsafe(30)

    def spawn(self, name, argv, env=None):
        log = open(os.path.join(self.dir, name + ".out"), "w")
        p = subprocess.Popen(ns(argv), stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, env=env)
        log.close()
        with open(os.path.join(self.b.PIDDIR, str(p.pid)), "w") as f:
            f.write(f"{p.pid} {name}\n")
        self.procs.append((name, p))
        self.b.SERVERS.append(p.pid)  # their CPU time is the bench's, not other load
        return p

    def wait_http(self, name, p, port, path="/"):
        """Wait until something answers HTTP on 127.0.0.1:port in the namespace."""
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if p.poll() is not None:
                raise RuntimeError(f"{name} exited ({p.returncode}): "
                                   + open(os.path.join(self.dir, name + ".out")).read()[-1500:])
            r = ns_run(["curl", "-s", "-o", "/dev/null", "-m", "2", "-w", "%{http_code}",
                        f"http://127.0.0.1:{port}{path}"], check=False)
            if r.returncode == 0 and r.stdout.strip() not in (b"", b"000"):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not answer on port {port} within {START_TIMEOUT} s")
            time.sleep(0.1)

    def link(self, name, port):
        """The port clients use for a server on `port`: itself under netem, else a forwarder."""
        if LINK == "netem":
            return port
        pf = os.path.join(self.dir, name + ".port")
        p = self.spawn(name, [os.environ["ZF_DELAYLINK"], pf, str(port), str(RTT_MS // 2),
                              str(RATE_MBIT), str(LIFETIME)])
        deadline = time.monotonic() + START_TIMEOUT
        while not os.path.exists(pf):
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start")
            time.sleep(0.02)
        return int(open(pf).read())

    def start_nginx(self):
        d = os.path.join(self.dir, "nginx")
        os.makedirs(os.path.join(d, "tmp"))
        self.nginx_log = os.path.join(d, "access.log")
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""daemon off;
master_process off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    default_type application/octet-stream;
    log_format zf '"$request" $status $body_bytes_sent "$http_range" $msec $request_time';
    access_log {self.nginx_log} zf;
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    sendfile on;
    etag on;
    keepalive_requests 100000;
    keepalive_timeout 120s;
    server {{
        listen 127.0.0.1:{HTTP_PORT};
        root {os.path.dirname(self.store)};
    }}
}}
""")
        p = self.spawn("nginx", ["nginx", "-p", d, "-e", f"{d}/error.log", "-c", conf])
        self.wait_http("nginx", p, HTTP_PORT)
        self.http_port = self.link("link-http", HTTP_PORT)
        self.http_url = f"http://127.0.0.1:{self.http_port}/{os.path.basename(self.store)}"
        # the link, checked: a new connection's first request takes two round trips
        r = ns_run(["curl", "-sS", "-o", "/dev/null", "-w", "%{time_starttransfer}",
                    self.http_url + "/zarr.json"])
        self.first_request = float(r.stdout)

    def s3_env(self, port):
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("AWS_"):
                del env[k]
        env.update(AWS_ACCESS_KEY_ID=self.access, AWS_SECRET_ACCESS_KEY=self.secret,
                   AWS_REGION="us-east-1", AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}")
        return env

    def start_versitygw(self):
        gw = os.environ.get("ZF_VERSITYGW") or shutil.which("versitygw") or \
            os.path.expanduser("~/go/bin/versitygw")
        if not os.access(gw, os.X_OK):
            raise RuntimeError("no versitygw binary (go install "
                               "github.com/versity/versitygw/cmd/versitygw@v1.8.0)")
        d = os.path.join(self.dir, "versitygw")
        os.makedirs(os.path.join(d, "data"))
        os.makedirs(os.path.join(d, "meta"))
        self.s3_log = os.path.join(d, "access.log")
        env = dict(os.environ, ROOT_ACCESS_KEY_ID=self.access, ROOT_SECRET_ACCESS_KEY=self.secret)
        p = self.spawn("versitygw", [gw, "--port", f"127.0.0.1:{S3_PORT}", "--region", "us-east-1",
                                     "--quiet", "--access-log", self.s3_log, "posix",
                                     "--sidecar", os.path.join(d, "meta"), os.path.join(d, "data")],
                       env=env)
        self.wait_http("versitygw", p, S3_PORT)
        # upload straight to the server (not over the emulated link), with botocore
        ns_run([sys.executable, os.path.abspath(__file__), "s3put", BUCKET, PREFIX, self.store],
               timeout=600, env=self.s3_env(S3_PORT))
        open(self.s3_log, "w").close()  # count only the rows' requests
        self.s3_port = self.link("link-s3", S3_PORT)
        self.s3_url = f"s3://{BUCKET}/{PREFIX}"
        self.s3_env_link = self.s3_env(self.s3_port)

    def stop(self):
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=10)
            self.b.SERVERS.remove(p.pid)
            try:
                os.unlink(os.path.join(self.b.PIDDIR, str(p.pid)))
            except OSError:
                pass
        self.procs = []
        for name in ("link-http", "link-s3"):
            out = os.path.join(self.dir, name + ".out")
            if os.path.exists(out):
                self.b.log(f"bench: {name}: {open(out).read().strip()}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def count_lines(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def chunk_keys(store, array):
    """The chunk object keys of a 1-d array and their total size in bytes."""
    base = os.path.join(store, array, "c")
    keys = sorted(os.listdir(base), key=int)
    return [f"{array}/c/{k}" for k in keys], sum(os.path.getsize(os.path.join(base, k))
                                                  for k in keys)


def presign(srv, keys):
    """Presigned GET URLs (SigV4, query string) for the forwarder's port: curl needs no signing."""
    import boto3
    from botocore.config import Config
    c = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{srv.s3_port}", region_name="us-east-1",
                     aws_access_key_id=srv.access, aws_secret_access_key=srv.secret,
                     config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
    return [c.generate_presigned_url("get_object", Params={"Bucket": BUCKET,
                                                           "Key": f"{PREFIX}/{k}"},
                                     ExpiresIn=3600) for k in keys]


def curl_config(srv, urls):
    """A curl config file (0600) fetching urls to /dev/null (presigned URLs stay out of argv)."""
    path = os.path.join(srv.dir, "curl.conf")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        for u in urls:
            f.write(f'url = "{u}"\noutput = "/dev/null"\n')
    return path


def download(conf, want_bytes):
    """Fetch the URLs of curl config conf, CONN at once at most; seconds; checks the bytes."""
    argv = ["curl", "-sS", "--parallel", "--parallel-max", str(CONN), "--fail",
            "-w", "%{size_download}\n", "-K", conf]
    t0 = time.perf_counter()
    r = subprocess.run(ns(argv), capture_output=True, timeout=600)
    t = time.perf_counter() - t0
    got = sum(int(x) for x in r.stdout.split())
    if r.returncode != 0 or got != want_bytes:
        raise RuntimeError(f"curl --parallel: rc {r.returncode}, {got} of {want_bytes} bytes: "
                           f"{r.stderr.decode()[-500:]}")
    return t


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 24)
            if not b:
                return h.hexdigest()
            h.update(b)


def cold_runs(b, mount, reqlog, warm, group, array, ref_sha, text_size):
    """Fresh-daemon runs of (a) the first `ls -l` of group with an empty index cache and
    (b) a cold `cat` of array's .txt by a second fresh daemon whose sizes come from the
    index (a) persisted, chunk cache empty.  Lists of times, requests and VmHWM."""
    checked = []

    def one():
        home = tempfile.mkdtemp(prefix="xdg-cold.", dir=b.SHM)
        try:
            before = count_lines(reqlog)  # the mount's own requests count too
            with mount(home) as m:
                t_ls = b.timed(["ls", "-l", m.path(group)], timeout=600)
            n_ls = count_lines(reqlog) - before
            before = count_lines(reqlog)
            with mount(home) as m:
                t_cat = b.cat(m.path(array + ".txt"))
                n_cat = count_lines(reqlog) - before
                hwm = m.hwm_kib()
                if not checked:  # the bytes, once: the same as the local mount's
                    sha = sha256_file(m.path(array + ".txt"))
                    size = os.path.getsize(m.path(array + ".txt"))
                    if sha != ref_sha or size != text_size:
                        raise RuntimeError(f"{array}.txt differs from the local mount's "
                                           f"({size} vs {text_size} bytes)")
                    checked.append(sha)
            return t_ls, t_cat, n_ls, n_cat, hwm
        finally:
            shutil.rmtree(home, ignore_errors=True)
    runs = [b.attempt(one, warm=warm) for _ in range(b.RUNS)]
    return [list(x) for x in zip(*runs)]


def measure(b, srv, proto, url, env, reqlog, store, ref_sha, text_size):
    """The rows of one protocol."""
    opts = ("-o", f"connections={CONN}")
    keys, chunk_bytes = chunk_keys(store, ARRAY)
    urls = presign(srv, keys) if proto == "S3" else [f"{url}/{k}" for k in keys]
    mount = lambda home=None: b.Mount("zarrfs", url, opts, cache_home=home, prefix=ns([]),
                                      env=env)
    warm = lambda: b.warm_tree(store)

    b.section()
    t_ls, t_cat, n_ls, n_cat, hwm = cold_runs(b, mount, reqlog, warm, GROUP, ARRAY, ref_sha,
                                              text_size)
    conf = curl_config(srv, urls)
    lims = [b.attempt(lambda: download(conf, chunk_bytes), warm=warm) for _ in range(b.RUNS)]
    ls, ct, lim = b.med(t_ls), b.med(t_cat), b.med(lims)
    zf = ls + ct
    b.detail(f"15.{proto}: first `ls -l {GROUP}` {b.runs_str(t_ls)}; cold cat (fresh daemon, "
             f"sizes from the persisted index) {b.runs_str(t_cat)}; "
             f"curl --parallel-max {CONN} of the {len(keys)} chunk objects ({chunk_bytes} bytes) "
             f"{b.runs_str(lims)}; requests by mount + ls {n_ls}, by mount + cat {n_cat}; "
             f"cat's VmHWM {', '.join(f'{h / 1024:.0f} MiB' for h in hwm)}")
    dl = (f"curl, {len(keys)} chunks, {CONN} connections: {b.fmt_t(lim)} "
          f"({b.fmt_rate(chunk_bytes, lim)})")
    b.row("15", f"{proto}: (a) first `ls -l`, empty index cache (the size pass fetches every "
          f"chunk), {VALUES:.0e} values", f"{b.fmt_t(ls)} ({b.fmt_rate(chunk_bytes, ls)} of chunks)",
          dl, f"{lim / ls:.2f} x", ">= 0.8 x", lim / ls >= 0.8)
    b.row("15", f"{proto}: (b) cold `cat NAME.txt` (fresh daemon, sizes from the persisted "
          f"index, chunk cache empty: every chunk fetched while formatting)",
          f"{b.fmt_t(ct)} ({b.fmt_rate(chunk_bytes, ct)} of chunks)", f"curl {b.fmt_t(lim)}",
          f"{lim / ct:.2f} x", ">= 0.8 x", lim / ct >= 0.8)
    if SMALL:
        small(b, srv, proto, url, mount, reqlog, warm, store, ref_sha, text_size)

    # zarr-python over the same link, writing pandas text
    pd_runs = []
    for _ in range(b.PEER_RUNS):
        pd_runs.append(b.attempt(lambda: b.peer("pandas", ARRAY, store=url, prefix=ns([]),
                                                env=env), retries=1, warm=warm))
    tp = b.med([p["seconds"] for p in pd_runs])
    tr = b.med([p["read"] for p in pd_runs])
    b.detail(f"15.{proto}: zarr-python read + pandas to_csv "
             f"{b.runs_str([p['seconds'] for p in pd_runs])}"
             f" (read {b.runs_str([p['read'] for p in pd_runs])}; {pd_runs[0]['via']})")
    b.row("15", f"{proto}: {VALUES:.0e} values to text, zarrfs (a) + (b) (two fresh daemons: "
          "`ls -l`, then `cat`)",
          b.fmt_t(zf), f"zarr-python read ({b.fmt_t(tr)}) + pandas `to_csv` {b.fmt_t(tp)}",
          f"{tp / zf:.0f} x", ">= 20 x", tp / zf >= 20)

    # second mount: the persisted index (fresh daemon, same XDG cache)
    b.section()
    home = tempfile.mkdtemp(prefix="xdg-persist.", dir=b.SHM)
    with mount(home) as m:
        first_ls = b.timed(["ls", "-l", m.path(GROUP)], timeout=600)
    nreq2 = []

    def second_run():
        before = count_lines(reqlog)
        with mount(home) as m:
            t = b.timed(["ls", "-l", m.path(GROUP)], timeout=600)
            nreq2.append(count_lines(reqlog) - before)
            return t
    lss = [b.attempt(second_run, warm=warm) for _ in range(b.RUNS)]
    b.detail(f"15.{proto}: second mount `ls -l {GROUP}` (same XDG_CACHE_HOME) {b.runs_str(lss)}, "
             f"requests {nreq2}; first mount {b.fmt_t(first_ls)}")
    b.row("15", f"{proto}: second mount `ls -l` from the persisted index", b.fmt_t(b.med(lss)),
          f"first mount {b.fmt_t(first_ls)}", "-", "< 100 ms", b.med(lss) < 0.100)
    b.row("15", f"{proto}: requests per array (mount + first `ls -l`; mount + cold `cat`), "
          "the cat daemon's peak RSS",
          f"{b.med(n_ls):.0f} and {b.med(n_cat):.0f} requests, {b.med(hwm) / 1024:.0f} MiB",
          f"{len(keys)} chunk objects; second mount {b.med(nreq2):.0f} requests", "-", "-", None)


def small(b, srv, proto, url, mount, reqlog, warm, store, ref_sha, text_size):
    """The extra layout: the same values in many smaller chunks, (a) and (b) as above."""
    keys, chunk_bytes = chunk_keys(store, SMALL)
    urls = presign(srv, keys) if proto == "S3" else [f"{url}/{k}" for k in keys]
    group = SMALL.split("/")[0]
    b.section()
    t_ls, t_cat, n_ls, n_cat, _ = cold_runs(b, mount, reqlog, warm, group, SMALL, ref_sha,
                                            text_size)
    conf = curl_config(srv, urls)
    lims = [b.attempt(lambda: download(conf, chunk_bytes), warm=warm) for _ in range(b.RUNS)]
    ls, ct, lim = b.med(t_ls), b.med(t_cat), b.med(lims)
    b.detail(f"15.{proto} ({len(keys)} chunks): first `ls -l {group}` {b.runs_str(t_ls)}; "
             f"cold cat {b.runs_str(t_cat)}; curl --parallel-max {CONN} of the {len(keys)} chunk "
             f"objects ({chunk_bytes} bytes) {b.runs_str(lims)}; requests by mount + ls {n_ls}, "
             f"by mount + cat {n_cat}")
    b.row("15", f"{proto}, {len(keys)} chunks of {VALUES // len(keys):.0e}: (a) first `ls -l`",
          b.fmt_t(ls), f"curl, {len(keys)} chunks: {b.fmt_t(lim)}", f"{lim / ls:.2f} x",
          "-", None)
    b.row("15", f"{proto}, {len(keys)} chunks of {VALUES // len(keys):.0e}: (b) cold `cat`",
          b.fmt_t(ct), f"curl {b.fmt_t(lim)}", f"{lim / ct:.2f} x", "-", None)


def rows(b):
    """Row 15: HTTP and S3 (b is bench/run.py's module)."""
    store = os.environ["ZF_BENCH_REMOTE_STORE"]
    if not NETNS:
        raise RuntimeError("ZF_BENCH_NETNS is not set (scripts/bench makes the namespace)")
    b.warm_tree(store)
    # the reference: the local mount's text of the same array
    with b.Mount("zarrfs", store) as m:
        ref_sha = sha256_file(m.path(ARRAY + ".txt"))
        text_size = os.path.getsize(m.path(ARRAY + ".txt"))
    link = (f"netem on the namespace's lo: delay {RTT_MS // 2} ms, rate {RATE_MBIT} Mbit/s"
            if LINK == "netem" else
            f"bench/delaylink: {RTT_MS // 2} ms each way, {RATE_MBIT} Mbit/s per direction, "
            "a new connection's first request after one round trip (the kernel has no sch_netem)")
    b.detail(f"15: network namespace {NETNS}, loopback only; {link}; {CONN} connections; "
             f"{ARRAY}.txt {text_size} bytes")
    b.NOTES.append(f"- 15: remote stores over an emulated link of {RTT_MS} ms round trip at "
                   f"{RATE_MBIT} Mbit/s ({link}), in a network namespace of the bench's own "
                   f"(loopback only). (a) is a fresh daemon's first `ls -l` with an empty index "
                   f"cache, (b) a cold `cat` by a second fresh daemon whose sizes come from the "
                   f"index (a) persisted, chunk cache empty (`-o connections={CONN}`); the limit is curl fetching every chunk "
                   f"object of the array with at most {CONN} transfers at once (HTTP/1.1, one "
                   f"connection each), ratio = limit time / zarrfs time (the throughput ratio "
                   f"over the same chunk bytes; zarrfs also fetches the root metadata). The "
                   f"peer is zarr-python with async.concurrency={CONN} (HTTP: fsspec over "
                   f"aiohttp; S3: zarr's ObjectStore over obstore) reading the array and "
                   f"writing it with pandas `to_csv`. Requests: lines in nginx's or "
                   f"versitygw's access log. The .txt bytes are checked once against the "
                   f"local mount's.")
    with Servers(b, store) as srv:
        srv.start_nginx()
        b.detail(f"15: link check: curl's first request on a new connection "
                 f"{b.fmt_t(srv.first_request)} (two round trips: {2 * RTT_MS} ms)")
        for proto in ("HTTP", "S3"):
            try:
                if proto == "HTTP":
                    measure(b, srv, proto, srv.http_url, None, srv.nginx_log, store, ref_sha,
                            text_size)
                else:
                    srv.start_versitygw()
                    measure(b, srv, proto, srv.s3_url, srv.s3_env_link, srv.s3_log, store,
                            ref_sha, text_size)
            except (RuntimeError, subprocess.SubprocessError) as e:
                b.close_all()
                b.log(f"bench: {proto} rows: {e}")
                why = str(e).splitlines()[0][:200].replace("|", "/")
                b.row("15", f"{proto}: not measured: {why}",
                      "-", "-", "-", "-", False)


def s3put(bucket, prefix, root):
    """Upload every file under root to bucket/prefix (credentials and endpoint from AWS_*)."""
    import boto3
    from botocore.config import Config
    c = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1",
                     config=Config(s3={"addressing_style": "path"}))
    c.create_bucket(Bucket=bucket)
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            key = prefix + "/" + os.path.relpath(p, root).replace(os.sep, "/")
            with open(p, "rb") as fh:
                c.put_object(Bucket=bucket, Key=key, Body=fh.read())


if __name__ == "__main__":
    if sys.argv[1:2] == ["s3put"] and len(sys.argv) == 5:
        s3put(*sys.argv[2:])
    else:
        sys.exit("usage: remote.py s3put BUCKET PREFIX DIR")
