#!/usr/bin/env python3
"""net_server.py - the HTTP server test_net talks to (loopback, port 0).

Prints its port on one line, then serves until its standard input closes (so
it never outlives the test that started it).  Objects are generated: byte i
of an object of SIZE bytes is (i * 7 + SIZE) % 251.  Paths:
  /data/SIZE                  the object; Range honoured (206, 416)
  /norange/SIZE               the object; Range ignored (always 200)
  /fail/ID/N/CODE/SIZE        the first N requests for ID answer CODE
                              (429 with Retry-After: 1), then /data/SIZE
  /cut/ID/N/SIZE              the first N requests for ID send half the body
                              and close the connection, then /data/SIZE
  /reset/ID/N/SIZE            the same with a quarter of the body and a TCP reset
  /stall/SIZE                 headers, then nothing for 30 s
  /chunked/SIZE               the object, chunked (no Content-Length)
  /wrongrange/SIZE            206 for the range one byte later than asked
  /redirect/SIZE              302 to /data/SIZE
  /goto/SCHEME/HOST/PORT/REST 302 to SCHEME://HOST:PORT/REST (PORT "self": this
                              server's port)
anything else: 404.
"""
import functools
import http.server
import os
import re
import socket
import struct
import sys
import threading
import time

LOCK = threading.Lock()
SEEN = {}


@functools.lru_cache(maxsize=4096)
def body(size):
    return bytes((i * 7 + size) % 251 for i in range(size))


def count(ident):
    with LOCK:
        SEEN[ident] = SEEN.get(ident, 0) + 1
        return SEEN[ident]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def head_only(self):
        return self.command == "HEAD"

    def send_object(self, size, ranged=True, shift=0):
        data = body(size)
        rng = self.headers.get("Range") if ranged else None
        m = re.fullmatch(r"bytes=(\d+)-(\d+)", rng or "")
        common = [("ETag", '"s%d"' % size), ("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT")]
        if m:
            a, z = int(m.group(1)) + shift, int(m.group(2)) + shift
            if a >= size:
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            z = min(z, size - 1)
            part = data[a:z + 1]
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (a, z, size))
        else:
            part = data
            self.send_response(200)
        for k, v in common:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(part)))
        self.end_headers()
        if not self.head_only():
            self.wfile.write(part)

    def simple(self, code, extra=()):
        self.send_response(code)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        p = self.path.strip("/").split("/")
        try:
            self.route(p)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_HEAD = do_GET

    def route(self, p):
        kind, args = p[0], [a for a in p[1:]]
        if kind == "data" and len(args) == 1:
            return self.send_object(int(args[0]))
        if kind == "norange" and len(args) == 1:
            return self.send_object(int(args[0]), ranged=False)
        if kind == "wrongrange" and len(args) == 1:
            return self.send_object(int(args[0]), shift=1)
        if kind == "redirect" and len(args) == 1:
            return self.simple(302, [("Location", "/data/" + args[0])])
        if kind == "goto" and len(args) >= 4:
            port = str(self.server.server_address[1]) if args[2] == "self" else args[2]
            return self.simple(302, [("Location", "%s://%s:%s/%s" % (args[0], args[1], port, "/".join(args[3:])))])
        if kind == "fail" and len(args) == 4:
            ident, n, code, size = args[0], int(args[1]), int(args[2]), int(args[3])
            if count(ident) <= n:
                extra = [("Retry-After", "1")] if code == 429 else []
                return self.simple(code, extra)
            return self.send_object(size)
        if kind == "cut" and len(args) == 3:
            ident, n, size = args[0], int(args[1]), int(args[2])
            if count(ident) <= n:
                self.send_response(200)
                self.send_header("Content-Length", str(size))
                self.end_headers()
                self.wfile.write(body(size)[: size // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            return self.send_object(size)
        if kind == "reset" and len(args) == 3:
            ident, n, size = args[0], int(args[1]), int(args[2])
            if count(ident) <= n:  # a quarter of the body, then a TCP reset
                self.send_response(200)
                self.send_header("Content-Length", str(size))
                self.end_headers()
                self.wfile.write(body(size)[: size // 4])
                self.wfile.flush()
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
            return self.send_object(size)
        if kind == "stall" and len(args) == 1:
            self.send_response(200)
            self.send_header("Content-Length", args[0])
            self.end_headers()
            self.wfile.flush()
            time.sleep(30)
            self.close_connection = True
            return
        if kind == "chunked" and len(args) == 1:
            data = body(int(args[0]))
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(data), 1000):
                c = data[i:i + 1000]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(c), c))
            self.wfile.write(b"0\r\n\r\n")
            return
        return self.simple(404)


class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 128

    def handle_error(self, request, client_address):
        pass  # clients that stop reading early (on purpose) are no news


def main():
    srv = Server(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    sys.stdin.read()  # until the test closes its end
    os._exit(0)


if __name__ == "__main__":
    main()
