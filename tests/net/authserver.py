#!/usr/bin/env python3
"""authserver.py - an https server of the files under ROOT that wants credentials
(loopback, port chosen by the OS; prints it on one line, serves until killed).

    authserver.py ROOT CERT KEY --bearer-file F     Authorization: Bearer <F's content now>
    authserver.py ROOT CERT KEY --basic USER:PASS   Authorization: Basic (RFC 7617)

GET (whole or one Range bytes=a-b) and HEAD, with ETag and Last-Modified; 401
with WWW-Authenticate otherwise.  GET /_ctl/denied answers how many requests
were refused (no credentials needed).
"""
import argparse
import base64
import email.utils
import http.server
import os
import ssl
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from awsproto import BaseHandler  # noqa: E402

ARGS = None
DENIED = [0]
LOCK = threading.Lock()


class Handler(BaseHandler):
    def authorized(self):
        got = self.headers.get("Authorization", "")
        if ARGS.bearer_file:
            with open(ARGS.bearer_file) as f:
                return got == "Bearer " + f.read().strip()
        return got == "Basic " + base64.b64encode(ARGS.basic.encode()).decode()

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        if self.path == "/_ctl/denied":
            return self.answer(200, str(DENIED[0]).encode())
        if not self.authorized():
            with LOCK:
                DENIED[0] += 1
            scheme = "Bearer" if ARGS.bearer_file else 'Basic realm="zf"'
            return self.answer(401, b"unauthorized", [("WWW-Authenticate", scheme)])
        rel = os.path.normpath(self.path.split("?")[0].lstrip("/"))
        full = os.path.join(ARGS.root, rel)
        if rel.startswith("..") or not os.path.isfile(full):
            return self.answer(404, b"not found")
        with open(full, "rb") as f:
            data = f.read()
        st = os.stat(full)  # as nginx: ETag "mtime-size", Last-Modified the file's
        hdrs = [("ETag", '"%x-%x"' % (int(st.st_mtime), st.st_size)),
                ("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True)),
                ("Accept-Ranges", "bytes")]
        self.answer_ranged(data, hdrs)


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("root")
    p.add_argument("cert")
    p.add_argument("key")
    p.add_argument("--bearer-file")
    p.add_argument("--basic")
    ARGS = p.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(ARGS.cert, ARGS.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
