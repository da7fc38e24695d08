"""Shared pytest fixtures for the oracle tests: mounting zarrfs.

Rules (the same as tests/e2e/helpers.bash): the daemon runs in the foreground
(-f) as a child; mounting waits with a timeout and fails with the daemon's log
if it exits first; teardown always unmounts (fusermount3 -u, then -uz and a
FUSE connection abort), waits for the daemon with a timeout, kills it as a
last resort, and fails if the daemon exited non-zero or valgrind / a
sanitizer reported errors.

Environment: ZF_BUILD_DIR (default build), ZF_BIN, ZF_VALGRIND, ZF_TEST_TMP,
ZF_MOUNT_TIMEOUT / ZF_EXIT_TIMEOUT / ZF_CMD_TIMEOUT (seconds).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracle  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _timeout(name: str, default: float, valgrind_default: float) -> float:
    v = os.environ.get(name)
    if v:
        return float(v)
    return valgrind_default if oracle.valgrind_on() else default


MOUNT_TIMEOUT = _timeout("ZF_MOUNT_TIMEOUT", 15, 90)
EXIT_TIMEOUT = _timeout("ZF_EXIT_TIMEOUT", 15, 90)
CMD_TIMEOUT = _timeout("ZF_CMD_TIMEOUT", 30, 120)

os.environ.setdefault("ASAN_OPTIONS", "detect_leaks=1")
os.environ.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")


def build_dir() -> Path:
    d = Path(os.environ.get("ZF_BUILD_DIR", "build"))
    return d if d.is_absolute() else REPO / d


def zarrfs_bin() -> Path:
    b = os.environ.get("ZF_BIN")
    return Path(b) if b else build_dir() / "zarrfs"


def tmp_root() -> str:
    root = os.environ.get("ZF_TEST_TMP") or tempfile.gettempdir()
    os.makedirs(root, exist_ok=True)
    return root


def _unescape(s: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as \ooo
    out, i = [], 0
    while i < len(s):
        esc = s[i + 1:i + 4]
        if s[i] == "\\" and len(esc) == 3 and esc.isdigit():
            out.append(chr(int(s[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def mount_entry(path) -> list[str] | None:
    """The /proc/self/mountinfo fields of the mount at path, or None.  Never
    touches the mount itself (a hung daemon cannot block this)."""
    path = str(path)
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if len(fields) > 4 and _unescape(fields[4]) == path:
                return fields
    return None


def is_mounted(path) -> bool:
    return mount_entry(path) is not None


def fuse_abort(path) -> None:
    """Abort the FUSE connection behind path: pending requests fail.  Needs
    fusectl mounted on /sys/fs/fuse/connections (a no-op otherwise)."""
    e = mount_entry(path)
    if not e:
        return
    minor = e[2].split(":")[1]
    with contextlib.suppress(OSError):
        with open(f"/sys/fs/fuse/connections/{minor}/abort", "w") as f:
            f.write("1")


def _default_signals():
    # libfuse only handles signals that are at their default disposition.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _run(cmd) -> int:
    """Run a helper command with a timeout; its exit status (-1 on timeout)."""
    try:
        return subprocess.run(cmd, capture_output=True, timeout=EXIT_TIMEOUT).returncode
    except (subprocess.TimeoutExpired, OSError):
        return -1


class MountError(Exception):
    pass


class Mount:
    """One running zarrfs daemon and its mountpoint."""

    def __init__(self, store, opts=()):
        self.store = str(store)
        self.opts = list(opts)
        self.work = Path(tempfile.mkdtemp(prefix="zf-oracle.", dir=tmp_root())).resolve()
        self.mnt = self.work / "mnt"
        self.mnt.mkdir()
        self.log_path = self.work / "daemon.log"
        self.proc: subprocess.Popen | None = None
        self.timed_out = False

    # -- lifecycle ----------------------------------------------------------
    def start(self) -> "Mount":
        binary = zarrfs_bin()
        if not binary.exists():
            raise MountError(f"zarrfs binary not found: {binary} (build first)")
        cmd = oracle.daemon_cmd(str(binary), ["-f", *self.opts, self.store, str(self.mnt)],
                                str(self.work))
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, close_fds=True,
                                         preexec_fn=_default_signals)
        (self.work / "pid").write_text(str(self.proc.pid))
        deadline = time.monotonic() + MOUNT_TIMEOUT
        while not is_mounted(self.mnt):
            rc = self.proc.poll()
            if rc is not None:
                raise MountError(f"zarrfs exited with status {rc} before mounting "
                                 f"{self.store}; log:\n{self.log()}{self.vg_report()}")
            if time.monotonic() > deadline:
                self.stop()
                raise MountError(f"zarrfs did not mount {self.store} within "
                                 f"{MOUNT_TIMEOUT}s; log:\n{self.log()}")
            time.sleep(0.05)
        return self

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def vg_report(self) -> str:
        p = self.work / "valgrind.log"
        if oracle.valgrind_on() and p.exists():
            return "\n--- valgrind ---\n" + p.read_text(errors="replace")
        return ""

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and is_mounted(self.mnt)

    def stop(self) -> list[str]:
        """Unmount and reap the daemon; returns a list of problems (empty if clean)."""
        problems: list[str] = []
        if is_mounted(self.mnt):
            r = _run(["fusermount3", "-u", str(self.mnt)])
            if r != 0:
                time.sleep(0.2)
                r = _run(["fusermount3", "-u", str(self.mnt)])
            if r != 0:
                problems.append("unmount failed (busy or hung); aborted and lazily unmounted")
                fuse_abort(self.mnt)
                if self.proc is not None and self.proc.poll() is None:
                    self.proc.kill()
                if _run(["fusermount3", "-uz", str(self.mnt)]) != 0:
                    _run(["umount", "-l", str(self.mnt)])
        if self.proc is not None:
            try:
                rc = self.proc.wait(timeout=EXIT_TIMEOUT)
                if rc != 0:
                    problems.append(f"daemon exit status {rc}")
            except subprocess.TimeoutExpired:
                problems.append(f"daemon still running {EXIT_TIMEOUT}s after unmount; killed")
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
            self.proc = None
        log = self.log()
        if any(m in log for m in oracle.SANITIZER_MARKERS):
            problems.append("sanitizer report in the daemon log")
        if self.timed_out:
            problems.append("a filesystem operation timed out (connection aborted)")
        if not problems and not is_mounted(self.mnt):
            shutil.rmtree(self.work, ignore_errors=True)
        return problems

    def describe(self, problems) -> str:
        return (f"zarrfs on {self.store}: {'; '.join(problems)}\nlog (tail):\n"
                + "\n".join(self.log().splitlines()[-60:]) + self.vg_report()[-8000:])

    # -- guarded access -------------------------------------------------------
    @contextlib.contextmanager
    def guard(self, timeout: float = CMD_TIMEOUT):
        """Abort the FUSE connection if the body takes longer than timeout, so a
        hung daemon makes the test fail instead of hanging the suite."""
        fired = threading.Event()

        def fire():
            fired.set()
            self.timed_out = True
            fuse_abort(self.mnt)  # works where fusectl is mounted
            # Killing the daemon closes /dev/fuse: blocked requests then fail
            # (ENOTCONN) everywhere, fusectl or not.
            if self.proc is not None and self.proc.poll() is None:
                self.proc.kill()

        t = threading.Timer(timeout, fire)
        t.daemon = True
        t.start()
        try:
            yield
        except OSError:
            if fired.is_set():
                raise AssertionError(f"operation on {self.mnt} hung for {timeout}s; "
                                     f"connection aborted; log:\n{self.log()}")
            raise
        finally:
            t.cancel()
        if fired.is_set():
            raise AssertionError(f"operation on {self.mnt} took over {timeout}s")

    def path(self, rel: str = "") -> Path:
        return self.mnt / rel if rel else self.mnt

    def read(self, rel: str) -> bytes:
        with self.guard():
            with open(self.path(rel), "rb") as f:
                return f.read()

    def stat(self, rel: str = "") -> os.stat_result:
        with self.guard():
            return os.stat(self.path(rel))

    def listdir(self, rel: str = "") -> list[str]:
        with self.guard():
            return sorted(os.listdir(self.path(rel)))

    def preads(self, rel: str, ranges) -> list[bytes]:
        """os.pread for each (offset, length) on one fd."""
        with self.guard():
            fd = os.open(self.path(rel), os.O_RDONLY)
            try:
                return [os.pread(fd, n, off) for off, n in ranges]
            finally:
                os.close(fd)


class Mounter:
    """Makes mounts and tears all of them down."""

    def __init__(self):
        self.mounts: list[Mount] = []

    def __call__(self, store, *opts) -> Mount:
        m = Mount(store, opts)
        self.mounts.append(m)
        try:
            m.start()
        except MountError as e:
            m.stop()
            self.mounts.remove(m)
            pytest.fail(str(e), pytrace=False)
        return m

    def close(self) -> list[str]:
        reports = []
        for m in self.mounts:
            problems = m.stop()
            if problems:
                reports.append(m.describe(problems))
        self.mounts.clear()
        return reports


@pytest.fixture(scope="module")
def zf_mounter_module():
    """Module-scoped factory: mount(store, *opts) -> Mount, unmounted at the
    end of the module."""
    mounter = Mounter()
    yield mounter
    reports = mounter.close()
    if reports:
        pytest.fail("\n\n".join(reports), pytrace=False)


@pytest.fixture
def zf_mount():
    """Function-scoped factory: mount(store, *opts) -> Mount, unmounted after
    the test."""
    mounter = Mounter()
    yield mounter
    reports = mounter.close()
    if reports:
        pytest.fail("\n\n".join(reports), pytrace=False)
