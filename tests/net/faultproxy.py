#!/usr/bin/env python3
"""faultproxy.py - an HTTP/1.1 reverse proxy on loopback that injects faults.

Clients connect to it as if it were the server (keep-alive is honoured); each
request goes to the upstream on a fresh connection and the response comes
back whole, or damaged as the current fault configuration says:

  latency_ms  N     every response waits N ms first
  fault       none | status | cut | truncate | stall | reset | norange
              status:   answer `status` (e.g. 503, 429) without asking the upstream
              cut:      headers and half the body, then an abortive close (RST)
              truncate: Content-Length promised, half the body sent, then FIN
              stall:    headers then silence for `stall_s` seconds (then close)
              reset:    close the connection without any answer (RST)
              norange:  forward without the Range header (a server that
                        answers 200 with the whole object)
  status      HTTP status for fault=status (default 503; 200 with a body: an answer
              that is not what was asked, e.g. an HTML page or broken XML)
  body        the body of a fault=status answer (default "injected STATUS"), e.g.
              an S3 error document (<Error><Code>ExpiredToken</Code>...)
  content_type  its Content-Type (default text/plain)
  retry_after value of a Retry-After header for fault=status (default none)
  match       regex on the request target (path and query: a listing's
              "continuation-token" is a later page): only matching requests
              count (default all)
  method      regex on the request method (HEAD, GET): only those count (default all)
  first N     fault the first N matching requests   } none of the three:
  every K     fault every K-th matching request     } every matching request
  prob P      fault with probability P (seeded)     }
  per_key     count first/every per request (method, path and Range) rather
              than over all requests: with first N, every object's first N
              attempts fail whatever the order of concurrent requests
  down_for S  for S seconds from when this configuration is loaded, every
              connection (new or open) is reset: the upstream path is gone,
              then it comes back
  stall_s S   how long a stall lasts (default: until the deadline)
  seed        random seed for prob (default 1)

The configuration comes from the command line (--fault, --first, ...) and,
with --control FILE, from a JSON object in FILE, re-read whenever FILE's
mtime changes (the counters restart then).  Every request is logged as one
line to --log.  The proxy stops by itself after --deadline seconds, and on
SIGTERM or SIGINT.  The port it listens on is written to --port-file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import socket
import struct
import sys
import time

MAX_HEAD = 64 * 1024
KEYS = ("latency_ms", "fault", "status", "body", "content_type", "retry_after", "match", "method",
        "first", "every", "prob", "per_key", "down_for", "stall_s", "seed")


class Faults:
    """The current fault configuration and its counters."""

    def __init__(self, base: dict, control: str | None, deadline: float):
        self.base, self.control, self.deadline = base, control, deadline
        self.mtime = None
        self.load(dict(base))

    def load(self, cfg: dict) -> None:
        self.cfg = cfg
        self.n = 0
        self.per_key: dict[str, int] = {}
        self.loaded = time.monotonic()
        self.rng = random.Random(cfg.get("seed") or 1)
        self.match = re.compile(cfg.get("match") or "")
        self.method = re.compile(cfg.get("method") or "")

    def refresh(self) -> None:
        """Re-read the control file if it changed."""
        if not self.control:
            return
        try:
            mtime = os.stat(self.control).st_mtime_ns
        except FileNotFoundError:
            return
        if mtime == self.mtime:
            return
        self.mtime = mtime
        try:
            with open(self.control) as f:
                extra = json.load(f)
        except (OSError, ValueError) as e:
            print(f"faultproxy: control file unreadable, ignored: {e}", file=sys.stderr)
            return
        cfg = dict(self.base)
        cfg.update({k: v for k, v in extra.items() if k in KEYS})
        self.load(cfg)

    def down(self) -> bool:
        """Is the upstream path down right now?"""
        d = self.cfg.get("down_for") or 0
        return d > 0 and time.monotonic() - self.loaded < d

    def pick(self, method: str, path: str, key: str) -> str:
        """The fault for one request ('none' if it is let through); key
        names the request for per_key counting."""
        fault = self.cfg.get("fault") or "none"
        if fault == "none" or not self.match.search(path) or not self.method.fullmatch(method) \
                and self.cfg.get("method"):
            return "none"
        self.n += 1
        n = self.n
        if self.cfg.get("per_key"):
            n = self.per_key[key] = self.per_key.get(key, 0) + 1
        first, every, prob = (self.cfg.get(k) for k in ("first", "every", "prob"))
        if first is None and every is None and prob is None:
            return fault
        if first is not None and n <= first:
            return fault
        if every and n % every == 0:
            return fault
        if prob is not None and self.rng.random() < prob:
            return fault
        return "none"


def abort(writer: asyncio.StreamWriter) -> None:
    """Close with RST (SO_LINGER 0)."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()


def parse_head(head: bytes) -> tuple[str, list[tuple[str, str]]]:
    """First line and header list of a request or response head."""
    lines = head.decode("latin-1").split("\r\n")
    headers = []
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
    return lines[0], headers


def header(headers, name: str) -> str | None:
    name = name.lower()
    return next((v for k, v in headers if k.lower() == name), None)


HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade"}


async def fetch(upstream: tuple[str, int], line: str, headers, body: bytes):
    """Send one request to the upstream on a new connection; returns
    (status line, headers, body) of its whole answer."""
    r, w = await asyncio.open_connection(*upstream)
    try:
        out = [line] + [f"{k}: {v}" for k, v in headers if k.lower() not in HOP] + ["Connection: close"]
        w.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body)
        await w.drain()
        head = await r.readuntil(b"\r\n\r\n")
        sline, rheaders = parse_head(head[:-4])
        method = line.split(" ", 1)[0]
        status = int(sline.split(" ")[1])
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            rbody = b""
        elif header(rheaders, "content-length") is not None:
            rbody = await r.readexactly(int(header(rheaders, "content-length")))
        else:  # chunked or close-delimited: read to the end (Connection: close)
            rbody = await r.read()
            if (header(rheaders, "transfer-encoding") or "").lower() == "chunked":
                rbody = dechunk(rbody)
        # the length of what is sent (a HEAD answer keeps the upstream's)
        length = header(rheaders, "content-length") if method == "HEAD" else None
        rheaders = [(k, v) for k, v in rheaders
                    if k.lower() not in HOP and k.lower() not in ("transfer-encoding", "content-length")]
        rheaders.append(("Content-Length", length if length is not None else str(len(rbody))))
        return sline, rheaders, rbody
    finally:
        w.close()


def dechunk(data: bytes) -> bytes:
    out, i = bytearray(), 0
    while True:
        j = data.index(b"\r\n", i)
        n = int(data[i:j].split(b";")[0], 16)
        if n == 0:
            return bytes(out)
        out += data[j + 2:j + 2 + n]
        i = j + 2 + n + 2


class Proxy:
    def __init__(self, args, faults: Faults):
        self.upstream = (args.upstream.rsplit(":", 1)[0].strip("[]"), int(args.upstream.rsplit(":", 1)[1]))
        self.faults = faults
        self.log = open(args.log, "a", buffering=1) if args.log else None
        self.count = 0
        self.writers: set[asyncio.StreamWriter] = set()
        self.t0 = time.monotonic()

    def note(self, msg: str) -> None:
        if self.log:
            self.log.write(f"t={time.monotonic() - self.t0:.3f} {msg}\n")

    async def client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.add(writer)
        try:
            while True:
                self.faults.refresh()
                if self.faults.down():
                    self.note("down: connection reset")
                    abort(writer)
                    return
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                if not await self.one(reader, writer, head):
                    return
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            pass
        finally:
            self.writers.discard(writer)
            if not writer.transport.is_closing():
                writer.close()

    async def one(self, reader, writer, head: bytes) -> bool:
        """Serve one request; False when the connection is done."""
        line, headers = parse_head(head[:-4])
        parts = line.split(" ")
        path = parts[1] if len(parts) > 1 else ""
        blen = int(header(headers, "content-length") or 0)
        body = await reader.readexactly(blen) if blen else b""
        self.faults.refresh()
        if self.faults.down():
            self.note(f"down: {line} reset")
            abort(writer)
            return False
        cfg = self.faults.cfg
        rng = header(headers, "range") or "-"
        fault = self.faults.pick(parts[0], path, f"{parts[0]} {path} {rng}")
        self.count += 1
        n = self.count
        if cfg.get("latency_ms"):
            await asyncio.sleep(cfg["latency_ms"] / 1000)
        if fault == "reset":
            self.note(f"n={n} {line} range={rng} fault=reset")
            abort(writer)
            return False
        if fault == "status":
            code = int(cfg.get("status") or 503)
            msg = (cfg["body"] if cfg.get("body") is not None else f"injected {code}\n").encode()
            ctype = cfg.get("content_type") or "text/plain"
            extra = f"Retry-After: {cfg['retry_after']}\r\n" if cfg.get("retry_after") is not None else ""
            # a HEAD answer has no body, but says how long the GET's would be
            payload = b"" if parts[0] == "HEAD" else msg
            writer.write(f"HTTP/1.1 {code} Injected\r\nContent-Type: {ctype}\r\n{extra}"
                         f"Content-Length: {len(msg)}\r\n\r\n".encode() + payload)
            await writer.drain()
            self.note(f"n={n} {line} range={rng} fault=status {code}")
            return True
        if fault == "norange":
            headers = [(k, v) for k, v in headers if k.lower() != "range"]
        try:
            sline, rheaders, rbody = await fetch(self.upstream, line, headers, body)
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            msg = f"upstream: {e}\n".encode()
            writer.write(f"HTTP/1.1 502 Bad Gateway\r\nContent-Length: {len(msg)}\r\n\r\n".encode() + msg)
            await writer.drain()
            self.note(f"n={n} {line} range={rng} upstream error {e!r}")
            return True
        rhead = ("\r\n".join([sline] + [f"{k}: {v}" for k, v in rheaders]) + "\r\n\r\n").encode("latin-1")
        status = sline.split(" ")[1]
        self.note(f"n={n} {line} range={rng} fault={fault} status={status} len={len(rbody)}")
        if fault in ("cut", "truncate"):
            writer.write(rhead + rbody[:len(rbody) // 2])
            await writer.drain()
            if fault == "cut":
                abort(writer)
            else:
                writer.close()
            return False
        if fault == "stall":
            writer.write(rhead)
            await writer.drain()
            stall = cfg.get("stall_s")
            end = self.faults.deadline if stall is None else time.monotonic() + stall
            while time.monotonic() < end:
                if reader.at_eof():
                    break
                try:  # wake when the client closes
                    if await asyncio.wait_for(reader.read(1), min(0.5, max(0.01, end - time.monotonic()))) == b"":
                        break
                except asyncio.TimeoutError:
                    pass
            abort(writer)
            return False
        writer.write(rhead + rbody)
        await writer.drain()
        return True


async def main_async(args, faults: Faults) -> int:
    proxy = Proxy(args, faults)
    server = await asyncio.start_server(proxy.client, args.listen, 0, limit=MAX_HEAD)
    port = server.sockets[0].getsockname()[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    else:
        print(port, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await asyncio.wait_for(stop.wait(), max(0.0, faults.deadline - time.monotonic()))
    except asyncio.TimeoutError:
        print("faultproxy: deadline reached, stopping", file=sys.stderr)
    server.close()
    for w in list(proxy.writers):
        abort(w)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--upstream", required=True, help="HOST:PORT of the server behind the proxy")
    p.add_argument("--listen", default="127.0.0.1")
    p.add_argument("--port-file", help="write the port here (else print it)")
    p.add_argument("--deadline", type=float, required=True, help="stop after this many seconds")
    p.add_argument("--control", help="JSON file with the fault configuration, re-read when it changes")
    p.add_argument("--log", help="one line per request is appended here")
    p.add_argument("--latency-ms", type=float)
    p.add_argument("--fault", choices=["none", "status", "cut", "truncate", "stall", "reset", "norange"])
    p.add_argument("--status", type=int)
    p.add_argument("--body")
    p.add_argument("--content-type")
    p.add_argument("--retry-after")
    p.add_argument("--match")
    p.add_argument("--method")
    p.add_argument("--first", type=int)
    p.add_argument("--every", type=int)
    p.add_argument("--prob", type=float)
    p.add_argument("--per-key", action="store_true", default=None)
    p.add_argument("--down-for", type=float)
    p.add_argument("--stall-s", type=float)
    p.add_argument("--seed", type=int)
    args = p.parse_args()
    base = {k: getattr(args, k) for k in KEYS if getattr(args, k) is not None}
    faults = Faults(base, args.control, time.monotonic() + args.deadline)
    return asyncio.run(main_async(args, faults))


if __name__ == "__main__":
    sys.exit(main())
