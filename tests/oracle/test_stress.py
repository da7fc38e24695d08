"""Load, signals and changing stores (the reliability issue).

- 16 threads read random ranges of several arrays for ZF_STRESS_SECONDS (30 by
  default): every byte must match the oracle text, no read may fail, and the
  daemon's RSS must stay flat after warm-up.
- SIGTERM while reads are in flight: the daemon exits 0 and leaves no mount.
- A store rewritten under open files: no read returns a mix of old and new
  text; after the timeout the view shows the new values.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time

import numpy as np
import pytest
import zarr

import oracle
from conftest import is_mounted

SECONDS = float(os.environ.get("ZF_STRESS_SECONDS", "30"))


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def make_store(path, seed=7):
    rng = np.random.default_rng(seed)
    g = zarr.open_group(str(path), mode="w", zarr_format=3)
    arrays = {}
    a = g.create_array("lead", shape=(300_000,), chunks=(20_000,), dtype="m8[ns]")
    v = rng.integers(-10**15, 10**15, size=a.shape).astype("m8[ns]")
    v[::97] = np.timedelta64("NaT")
    a[:] = v
    arrays["lead"] = a
    b = g.create_array("grid", shape=(300, 400), chunks=(64, 96), dtype="m8[ms]",
                       dimension_names=["y", "x"])
    b[:] = rng.integers(-10**11, 10**11, size=b.shape).astype("m8[ms]")
    arrays["grid"] = b
    c = g.create_array("sharded", shape=(100_000,), chunks=(1000,), shards=(10_000,),
                       dtype="m8[s]")
    c[:60_000] = rng.integers(-10**9, 10**9, size=60_000).astype("m8[s]")
    arrays["sharded"] = c
    expected = {}
    for name, arr in arrays.items():
        vals = arr[...]
        expected[f"{name}.txt"] = oracle.expected_txt(vals)
        expected[f"{name}.csv"] = oracle.expected_csv(vals, name, arr.metadata.dimension_names)
    return expected


@pytest.fixture(scope="module", autouse=True)
def private_index_cache(tmp_path_factory):
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


def test_sixteen_readers_random_ranges(tmp_path, zf_mount):
    expected = make_store(tmp_path / "s.zarr")
    m = zf_mount(tmp_path / "s.zarr", "-o", "cache_size=8M")
    names = sorted(expected)
    for n in names:  # sizes are exact before any reading
        assert m.stat(n).st_size == len(expected[n])
    errors: list[str] = []
    reads = [0]
    lock = threading.Lock()
    stop = time.monotonic() + SECONDS
    samples: list[tuple[float, int]] = []

    def reader(seed):
        rnd = random.Random(seed)
        fds = {n: os.open(m.path(n), os.O_RDONLY) for n in names}
        try:
            while time.monotonic() < stop and not errors:
                n = rnd.choice(names)
                exp = expected[n]
                off = rnd.randrange(0, len(exp) + 10)
                ln = rnd.choice([1, 17, 4096, 65536, 200_000, rnd.randrange(1, 300_000)])
                try:
                    got = os.pread(fds[n], ln, off)
                except OSError as e:
                    with lock:
                        errors.append(f"{n} pread({ln}, {off}): {e}")
                    return
                if got != exp[off:off + ln]:
                    with lock:
                        errors.append(f"{n} pread({ln}, {off}) returned wrong bytes")
                    return
                with lock:
                    reads[0] += 1
        finally:
            for fd in fds.values():
                os.close(fd)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(16)]
    with m.guard(SECONDS + 60):
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            samples.append((time.monotonic(), rss_kib(m.proc.pid)))
            time.sleep(0.5)
        for t in threads:
            t.join()
    assert not errors, errors[:5]
    assert reads[0] > 1000, f"only {reads[0]} reads in {SECONDS}s"
    # RSS flat: after the first quarter, growth stays under 16 MiB
    warm = [r for t, r in samples if t > samples[0][0] + SECONDS / 4]
    assert warm and max(warm) - warm[0] < 16 * 1024, f"RSS grew: {warm[0]} -> {max(warm)} KiB"
    assert m.alive()


def test_sigterm_with_reads_in_flight(tmp_path, zf_mount):
    expected = make_store(tmp_path / "s.zarr", seed=11)
    m = zf_mount(tmp_path / "s.zarr", "-o", "cache_size=4M")
    done = threading.Event()
    outcomes: list[str] = []

    def reader(seed):
        rnd = random.Random(seed)
        try:
            fd = os.open(m.path("lead.txt"), os.O_RDONLY)
        except OSError as e:
            outcomes.append(f"open: {e.errno}")
            return
        try:
            while not done.is_set():
                off = rnd.randrange(0, len(expected["lead.txt"]))
                got = os.pread(fd, 131072, off)
                if got != expected["lead.txt"][off:off + 131072]:
                    outcomes.append("wrong bytes")
                    return
        except OSError as e:
            outcomes.append(f"error {e.errno}")  # ENOTCONN etc. once unmounted
        finally:
            try:
                os.close(fd)
            except OSError:
                pass  # the connection is gone

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    m.proc.send_signal(signal.SIGTERM)
    rc = m.proc.wait(timeout=20)
    done.set()
    for t in threads:
        t.join(timeout=20)
    assert rc == 0, m.log()
    assert not is_mounted(m.mnt)
    assert "wrong bytes" not in outcomes
    m.proc = None  # already reaped; teardown only cleans up


def test_store_rewritten_under_open_files(tmp_path, zf_mount):
    store = tmp_path / "s.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=3)
    a = g.create_array("a", shape=(50_000,), chunks=(5_000,), dtype="m8[s]")
    old_vals = np.arange(50_000).astype("m8[s]")
    a[:] = old_vals
    old = oracle.expected_txt(a[...])
    m = zf_mount(store, "-o", "timeout=0.5", "-o", "cache_size=1M")
    assert m.read("a.txt") == old
    fd = os.open(m.path("a.txt"), os.O_RDONLY)
    try:
        a[:] = (np.arange(50_000) * 7919).astype("m8[s]")
        new = oracle.expected_txt(a[...])
        assert new != old
        # the open file: each read is old text or fails; never a mix
        for off in range(0, len(old), 50_000):
            try:
                got = os.pread(fd, 50_000, off)
            except OSError as e:
                assert e.errno == 5  # EIO: the chunk changed under the open file
                continue
            assert got == old[off:off + 50_000] or got == new[off:off + 50_000], off
        time.sleep(1.0)
        assert m.read("a.txt") == new  # a new open after the timeout sees the new store
        assert m.stat("a.txt").st_size == len(new)
        g.create_array("b", shape=(3,), chunks=(3,), dtype="m8[h]")[:] = np.arange(3).astype("m8[h]")
        time.sleep(1.0)
        assert "b.txt" in m.listdir()
        assert m.read("b.txt") == b"0 days 00:00:00\n0 days 01:00:00\n0 days 02:00:00\n"
    finally:
        os.close(fd)
    assert m.alive()
