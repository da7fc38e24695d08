#!/usr/bin/env python3
"""s3_server.py - a small S3 server for test_s3 (loopback, port 0) that checks
every request's SigV4 signature with its own implementation (hashlib, hmac).

Prints its port on one line, then serves until its standard input closes.
Path style only: /BUCKET/KEY and /BUCKET?list-type=2&... (ListObjectsV2 with
prefix, delimiter, max-keys, continuation-token).  Credentials:
  AKTEST / secret/Test+key=1         any bucket
  AKTOKEN / tokensecret + x-amz-security-token "tok/en+1" (signed)
  no Authorization header           bucket "public" only
Buckets:
  bkt      objects below (listing pages as asked)
  public   the same objects, anonymous access allowed
  loop     every listing page is truncated with the same token
  deny     ListObjectsV2 answers 403 AccessDenied; objects readable
  denyall  everything answers 403 AccessDenied
Errors are S3 error documents (Code, Message).  GET /_pages answers how many
ListObjectsV2 requests were served (unsigned).
"""
import datetime
import hashlib
import hmac
import http.server
import os
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "net"))
from awsproto import BaseHandler, list_page, parse_auth, s3_error, signature  # noqa: E402

KEYS = {"AKTEST": ("secret/Test+key=1", None), "AKTOKEN": ("tokensecret", "tok/en+1")}
EMPTY = hashlib.sha256(b"").hexdigest()
OBJECTS = {"st/zarr.json": b'{"zarr_format": 3, "node_type": "group"}',
           "st/a/zarr.json": b'{"zarr_format": 3, "node_type": "array"}',
           "st/b/sp ace+plus%&=.txt": b"odd name",
           "st/b/\u00e9t\u00e9": "unicode".encode(),
           "st/b/../up": b"dot-dot", "st/b/./here": b"dot", "st/b//twice": b"slashes"}
for i in range(25):
    OBJECTS["st/a/c/%d" % i] = bytes((i * 7 + j) % 251 for j in range(100 + i))
MTIME = "2026-12-01T10:00:00.250Z"
LOCK = threading.Lock()
PAGES = [0]



def etag(data):
    return '"%s"' % hashlib.md5(data).hexdigest()




class Handler(BaseHandler):

    def fail(self, status, code, msg):
        self.answer(status, s3_error(code, msg), [("Content-Type", "application/xml")])

    def check_signature(self, raw_path, query):
        """None if the request is signed right (or anonymous), else (status, code)"""
        auth = self.headers.get("Authorization")
        if auth is None:
            return "anonymous"
        parts = parse_auth(auth)
        ak = parts["Credential"].split("/")[0]
        if ak not in KEYS:
            return (403, "InvalidAccessKeyId")
        secret, token = KEYS[ak]
        signed = parts["SignedHeaders"].split(";")
        need = {"host", "x-amz-date", "x-amz-content-sha256"} | ({"x-amz-security-token"} if token else set())
        if not need <= set(signed) or self.headers.get("x-amz-content-sha256") != EMPTY:
            return (403, "AccessDenied")
        if token and self.headers.get("x-amz-security-token") != token:
            return (403, "InvalidToken")
        amz = self.headers["x-amz-date"]
        when = datetime.datetime.strptime(amz, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
        if abs((datetime.datetime.now(datetime.timezone.utc) - when).total_seconds()) > 900:
            return (403, "RequestTimeTooSkewed")
        want = signature(secret, self.command, raw_path, query, self.headers, parts, EMPTY)
        if not hmac.compare_digest(want, parts["Signature"]):
            return (403, "SignatureDoesNotMatch")
        return None

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        raw, _, qs = self.path.partition("?")
        query = urllib.parse.parse_qsl(qs, keep_blank_values=True)
        if raw == "/_pages":
            return self.answer(200, str(PAGES[0]).encode())
        bucket, _, key = raw[1:].partition("/")
        key = urllib.parse.unquote(key)
        bad = self.check_signature(raw, query)
        if bad == "anonymous":
            if bucket != "public":
                return self.fail(403, "AccessDenied", "Access Denied")
        elif bad:
            return self.fail(bad[0], bad[1], "refused: " + bad[1])
        if bucket == "denyall" or (bucket == "deny" and not key):
            return self.fail(403, "AccessDenied", "Access Denied")
        if bucket not in ("bkt", "public", "loop", "deny"):
            return self.fail(404, "NoSuchBucket", "The specified bucket does not exist")
        if not key:
            return self.list(bucket, dict(query))
        if key not in OBJECTS:
            return self.fail(404, "NoSuchKey", "The specified key does not exist.")
        data = OBJECTS[key]
        self.answer(200, data, [("ETag", etag(data)), ("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT")])

    def list(self, bucket, q):
        with LOCK:
            PAGES[0] += 1
        body = list_page(OBJECTS, bucket, q, MTIME, loop=bucket == "loop")
        self.answer(200, body, [("Content-Type", "application/xml")])


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    sys.stdin.read()
    srv.shutdown()


if __name__ == "__main__":
    main()
