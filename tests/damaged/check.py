#!/usr/bin/env python3
"""Check one mounted damaged store against manifest.json (see gen.py).

    python check.py OUTDIR CASE MOUNTPOINT DAEMON_LOG [ASPECT] [--pid PID]
    python check.py OUTDIR --list            names of all cases, one a line

ASPECT selects what is checked (default "main"):
  main    everything the case's kind promises, except the two below
  after   kind chunk: the first page after the damaged chunk's lines reads
          back as expected (layout.h: "all other bytes stay readable")
  logs    every line of the daemon log is one "zarrfs: ..." line of printable
          text (a name with a newline or escape sequence must not forge or
          garble log lines)

Prints every failed expectation (with what was expected and what was seen)
and exits 1 if there was any; exit 0 otherwise.  Reads go through
os.pread on a descriptor with POSIX_FADV_RANDOM, at page-aligned offsets,
so the kernel asks the daemon for exactly the pages a check names.
"""
from __future__ import annotations

import errno
import json
import os
import sys

PAGE = 4096
WINDOW = 64 * 1024


class Checker:
    def __init__(self, out: str, case: dict, mnt: str, log: str, pid: int | None):
        self.out, self.case, self.mnt, self.log_path, self.pid = out, case, mnt, log, pid
        self.failures: list[str] = []

    # -- helpers -------------------------------------------------------------
    def fail(self, msg: str) -> None:
        self.failures.append(msg)

    def log_text(self) -> str:
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "backslashreplace")

    def listing(self) -> list[bytes]:
        try:
            return sorted(os.listdir(self.mnt.encode()))
        except OSError as e:
            self.fail(f"listing the mount failed: {e} (did the daemon die?)")
            return []

    def expected(self, rel: str) -> bytes:
        with open(os.path.join(self.out, rel), "rb") as f:
            return f.read()

    def pread(self, name: str, off: int, n: int):
        """(bytes, None) or (None, errno)."""
        fd = os.open(os.path.join(self.mnt, name), os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
            out = b""
            while len(out) < n:
                try:
                    b = os.pread(fd, n - len(out), off + len(out))
                except OSError as e:
                    return None, e.errno
                if not b:
                    break
                out += b
            return out, None
        finally:
            os.close(fd)

    def read_all(self, name: str):
        size = os.stat(os.path.join(self.mnt, name)).st_size
        return self.pread(name, 0, size + 1)

    def expect_bytes(self, name: str, off: int, n: int, want: bytes, what: str) -> None:
        got, err = self.pread(name, off, n)
        if err is not None:
            self.fail(f"{name}: {what}: read of {n} bytes at {off} failed with "
                      f"{errno.errorcode.get(err, err)}, expected the bytes")
        elif got != want:
            i = next((k for k in range(min(len(got), len(want))) if got[k] != want[k]),
                     min(len(got), len(want)))
            self.fail(f"{name}: {what}: read of {n} bytes at {off} differs at +{i}: "
                      f"expected {want[max(0, i - 20):i + 40]!r}, got {got[max(0, i - 20):i + 40]!r} "
                      f"({len(got)} bytes)")

    def expect_error(self, name: str, off: int, n: int, what: str) -> None:
        got, err = self.pread(name, off, n)
        if err is None:
            self.fail(f"{name}: {what}: read of {n} bytes at {off} succeeded "
                      f"({got[:60]!r}...), expected EIO")
        elif err != errno.EIO:
            self.fail(f"{name}: {what}: read at {off} failed with "
                      f"{errno.errorcode.get(err, err)}, expected EIO")

    def expect_file(self, name: str, rel: str) -> None:
        want = self.expected(rel)
        try:
            size = os.stat(os.path.join(self.mnt, name)).st_size
        except OSError as e:
            self.fail(f"{name}: stat failed: {e}")
            return
        if size != len(want):
            self.fail(f"{name}: st_size {size}, expected {len(want)} (from {rel})")
        self.expect_bytes(name, 0, len(want) + 1, want, f"whole file vs {rel}")

    def expect_listed(self, names) -> None:
        have = self.listing()
        for n in names:
            if n.encode() not in have:
                self.fail(f"{n} is not listed (listing: {have})")

    def expect_absent(self, names) -> None:
        have = self.listing()
        for n in names:
            if n.encode() in have:
                self.fail(f"{n} is listed, expected it to be left out (listing: {have})")

    def expect_log(self, needles, what: str) -> None:
        lines = self.log_text().splitlines()
        if not any(all(s in line for s in needles) for line in lines):
            self.fail(f"no log line contains {needles} ({what}); log:\n  " +
                      "\n  ".join(lines[-20:]))

    def healthy(self) -> None:
        self.expect_listed([f for f, _ in self.case["healthy"]])
        for f, rel in self.case["healthy"]:
            self.expect_file(f, rel)

    # -- kinds -----------------------------------------------------------------
    def chunk_main(self) -> None:
        c = self.case
        self.expect_listed([v["file"] for v in c["views"].values()])
        if c.get("skip_if_root") and os.geteuid() == 0:
            # root reads a chmod 000 chunk: the array must then show its real data
            self.expect_file("bad.txt", "expected/bad.txt")
            self.healthy()
            return
        if c["expect"] == "fill":
            for v in c["views"].values():
                self.expect_file(v["file"], v["expected"])
            self.healthy()
            return
        if c["expect"] == "unknown":  # the store cannot tell the values: no size either
            for v in c["views"].values():
                try:
                    os.stat(os.path.join(self.mnt, v["file"]))
                    self.fail(f"{v['file']}: stat succeeded, expected EIO (the chunk is unreadable)")
                except OSError as e:
                    if e.errno != errno.EIO:
                        self.fail(f"{v['file']}: stat failed with {e}, expected EIO")
            self.healthy()
            self.expect_log([c["chunk_key"]], "a line naming the unreadable chunk")
            return
        for view, v in c["views"].items():
            name, want = v["file"], self.expected(v["expected"])
            try:
                size = os.stat(os.path.join(self.mnt, name)).st_size
            except OSError as e:
                self.fail(f"{name}: stat failed with {e}, expected a size")
                continue
            if size != v["size"]:
                self.fail(f"{name}: st_size {size}, expected {v['size']} (the damaged chunk "
                          f"measured as NaT lines, layout.h)")
            lo, hi = v["bad_start"], v["bad_end"]
            self.expect_bytes(name, 0, WINDOW, want[:WINDOW], "head, before the damaged chunk")
            tail = (len(want) - WINDOW) // PAGE * PAGE
            self.expect_bytes(name, tail, len(want) - tail, want[tail:], "tail, after the damaged chunk")
            mid = (lo // 2) // PAGE * PAGE  # inside chunk 0
            self.expect_bytes(name, mid, 1000, want[mid:mid + 1000], "middle of the first chunk")
            # a page wholly inside the damaged chunk's lines
            p = ((lo + hi) // 2) // PAGE * PAGE
            self.expect_error(name, p, 100, "inside the damaged chunk")
            self.expect_error(name, 0, len(want), "whole file")
        self.expect_log([c["chunk_key"]], "a line naming the damaged chunk")
        if c.get("outside_text"):
            # nothing from behind the symlink may show, whatever else happens
            for v in c["views"].values():
                data = b""
                size = os.stat(os.path.join(self.mnt, v["file"])).st_size
                for off in range(0, size, PAGE):
                    got, err = self.pread(v["file"], off, PAGE)
                    if got:
                        data += got
                if c["outside_text"].encode() in data:
                    self.fail(f"{v['file']}: shows data from outside the store "
                              f"({c['outside_text']!r}): the symlink was followed")
        if c.get("max_rss_mb") and self.pid and os.environ.get("ZF_VALGRIND", "0") in ("", "0"):
            try:
                with open(f"/proc/{self.pid}/status") as f:
                    hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
                if hwm > c["max_rss_mb"] * 1024:
                    self.fail(f"daemon peak RSS {hwm // 1024} MB > {c['max_rss_mb']} MB")
            except (OSError, StopIteration) as e:
                self.fail(f"cannot read the daemon's RSS: {e}")
        self.healthy()

    def chunk_after(self) -> None:
        c = self.case
        for v in c["views"].values():
            name, want = v["file"], self.expected(v["expected"])
            p = -(-v["bad_end"] // PAGE) * PAGE  # first page wholly after the damaged lines
            self.expect_bytes(name, p, 200, want[p:p + 200],
                              f"first page after the damaged chunk (its lines end at {v['bad_end']})")

    def meta_main(self) -> None:
        c = self.case
        have = self.listing()
        listed = [n for n in c["absent"] if n.encode() in have]
        if c["expect"] == "left_out_or_ok" and listed:
            for f, rel in c["if_listed"]:
                self.expect_file(f, rel)
        else:
            self.expect_absent(c["absent"])
            if c["log_required"]:
                self.expect_log(c["log_contains"], "a line naming the left-out array")
        self.healthy()

    def name_main(self) -> None:
        have = self.listing()
        extra = [n for n in have if not n.startswith(b"ok.")]
        if extra:
            self.fail(f"listed besides ok.*: {extra} (the unsafe name "
                      f"{bytes.fromhex(self.case['raw_name_hex'])!r} must be skipped)")
        self.expect_log(self.case["log_contains"], "a line reporting the skipped name")
        self.healthy()

    def outside_main(self) -> None:
        self.expect_absent(self.case["absent"])
        self.healthy()

    def logs(self) -> None:
        with open(self.log_path, "rb") as f:
            raw = f.read()
        for i, line in enumerate(raw.split(b"\n")[:-1] if raw.endswith(b"\n") else raw.split(b"\n")):
            bad = [b for b in line if b < 0x20 and b != 0x09 or b == 0x7F]
            if not line.startswith(b"zarrfs: ") or bad:
                self.fail(f"log line {i + 1} is not one printable 'zarrfs: ' line: {line!r}")
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            self.fail(f"log is not valid UTF-8: {e}")

    def run(self, aspect: str) -> None:
        kind = self.case["kind"]
        if aspect == "logs":
            self.logs()
        elif aspect == "after":
            if kind != "chunk":
                raise SystemExit(f"aspect 'after' is for chunk cases, not {kind}")
            self.chunk_after()
        elif aspect == "main":
            getattr(self, f"{kind}_main")()
        else:
            raise SystemExit(f"unknown aspect {aspect}")


def main(argv: list[str]) -> int:
    args = list(argv[1:])
    pid = None
    if "--pid" in args:
        i = args.index("--pid")
        pid = int(args[i + 1])
        del args[i:i + 2]
    if len(args) == 2 and args[1] == "--list":
        with open(os.path.join(args[0], "manifest.json")) as f:
            for c in json.load(f)["cases"]:
                print(c["name"])
        return 0
    if len(args) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    out, name, mnt, log = args[:4]
    aspect = args[4] if len(args) == 5 else "main"
    with open(os.path.join(out, "manifest.json")) as f:
        cases = {c["name"]: c for c in json.load(f)["cases"]}
    if name not in cases:
        print(f"check.py: no case {name!r} in the manifest", file=sys.stderr)
        return 2
    case = cases[name]
    ck = Checker(out, case, mnt, log, pid)
    ck.run(aspect)
    if ck.failures:
        print(f"case {name} ({case['kind']}, expect {case['expect']}, aspect {aspect}): "
              f"{len(ck.failures)} failed expectation(s)")
        if case.get("note"):
            print(f"  note: {case['note']}")
        for m in ck.failures:
            print("  - " + m.replace("\n", "\n    "))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
