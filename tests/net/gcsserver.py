#!/usr/bin/env python3
"""gcsserver.py - Google Cloud Storage and the token sources zarrfs reads, on
loopback, checking what the real ones check.

    gcsserver.py ROOT --pubkey PEM --email ADDR [--ttl S] [--client ID:SECRET:REFRESH]
                 [--page-gaps]

Prints its port on one line, then serves until killed.

  OAuth      POST /token, form-encoded: grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer
             with an assertion: a JWT signed RS256 by the private half of PEM, iss ADDR,
             aud https://oauth2.googleapis.com/token (what Google's libraries send,
             whatever the key's token_uri), a devstorage scope, iat within 5 min of now,
             exp - iat <= 3600; or grant_type=refresh_token with client_id,
             client_secret and refresh_token of --client.  Refusals: 400
             {"error": "invalid_grant", ...} as Google's endpoint answers.
  metadata   GET /computeMetadata/v1/instance/service-accounts/default/{token,email}
             with Metadata-Flavor: Google (403 without, as a real one).
  JSON API   GET /storage/v1/b/BUCKET/o (objects.list: prefix, delimiter, maxResults,
             pageToken; --page-gaps: every other page comes empty, with a token, as
             GCS may send), GET /storage/v1/b/BUCKET/o/OBJECT (the object resource,
             or its bytes with alt=media, whole or one Range, with x-goog-generation).
             Buckets: "zarr" (a token needed), "public" (anyone), "payer" (a token and
             userProject=zf-billing).  The objects are the files under ROOT.
             A token is valid for S seconds (--ttl, default 3600) after issue: then
             401 as GCS answers an expired one.
  GET /_ctl/revoke: every token issued so far is refused from now on (401, as for a
  revoked or expired one).
  GET /_ctl/secrets: every access token issued, one a line; /_ctl/issued: how many;
  /_ctl/expired: requests refused for an expired token; /_ctl/fail/1 (or 0): the
  token sources answer 500 (or work again).
"""
import argparse
import base64
import email.utils
import hashlib
import http.server
import json
import os
import re
import secrets
import threading
import time
import urllib.parse

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

from awsproto import BaseHandler

GOOGLE_AUD = "https://oauth2.googleapis.com/token"
LOCK = threading.Lock()
TOKENS = {}      # access token -> expiry (epoch s)
ISSUED = []      # every access token issued (revoked ones too)
STATE = {"issued": 0, "expired": 0, "fail": False}
OBJECTS = {}     # name -> (bytes, generation)
MTIME = 1796119200  # 2026-12-01T10:00:00Z
ARGS = None
PUBKEY = None


def b64url_dec(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t))


def issue():
    tok = "ya29.zf-%s" % secrets.token_urlsafe(40)
    with LOCK:
        STATE["issued"] += 1
        TOKENS[tok] = time.time() + ARGS.ttl
        ISSUED.append(tok)
    return json.dumps({"access_token": tok, "expires_in": ARGS.ttl, "token_type": "Bearer"}).encode()


def jwt_ok(assertion):
    """why the assertion is refused, or None"""
    try:
        h, c, s = assertion.split(".")
        head, claims = json.loads(b64url_dec(h)), json.loads(b64url_dec(c))
        PUBKEY.verify(b64url_dec(s), (h + "." + c).encode(), padding.PKCS1v15(), hashes.SHA256())
    except Exception:  # noqa: BLE001 - any failure is a refusal
        return "Invalid JWT Signature."
    now = time.time()
    if head.get("alg") != "RS256" or head.get("typ") != "JWT":
        return "Invalid JWT header."
    if claims.get("aud") != GOOGLE_AUD or claims.get("iss") != ARGS.email:
        return "Invalid JWT: aud or iss."
    if "devstorage" not in claims.get("scope", ""):
        return "Invalid JWT: scope."
    if abs(claims.get("iat", 0) - now) > 300 or not 0 < claims.get("exp", 0) - claims["iat"] <= 3600:
        return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe."
    return None


def meta_resource(name):
    data, gen = OBJECTS[name]
    return {"kind": "storage#object", "name": name, "size": str(len(data)), "generation": str(gen),
            "metageneration": "1", "updated": rfc3339(MTIME), "md5Hash":
            base64.b64encode(hashlib.md5(data).digest()).decode(), "etag": "CK%dEAE=" % gen}


class Handler(BaseHandler):
    def json_answer(self, code, obj, headers=()):
        self.answer(code, json.dumps(obj).encode(), [("Content-Type", "application/json")] + list(headers))

    def api_error(self, code, msg):
        self.json_answer(code, {"error": {"code": code, "message": msg, "errors": [{"message": msg}]}})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        form = dict(urllib.parse.parse_qsl(self.rfile.read(n).decode(), keep_blank_values=True))
        if self.path != "/token":
            return self.answer(404, b"")
        if STATE["fail"]:
            return self.answer(500, b"")
        if self.headers.get("Content-Type") != "application/x-www-form-urlencoded":
            return self.json_answer(400, {"error": "invalid_request"})
        grant = form.get("grant_type")
        if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            why = jwt_ok(form.get("assertion", ""))
        elif grant == "refresh_token":
            want = dict(zip(["client_id", "client_secret", "refresh_token"], ARGS.client.split(":")))
            why = None if all(form.get(k) == v for k, v in want.items()) else "Bad Request"
        else:
            why = "unsupported grant"
        if why:
            return self.json_answer(400, {"error": "invalid_grant", "error_description": why})
        self.answer(200, issue(), [("Content-Type", "application/json")])

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        raw, _, qs = self.path.partition("?")
        q = dict(urllib.parse.parse_qsl(qs, keep_blank_values=True))
        if raw.startswith("/_ctl/"):
            what = raw[len("/_ctl/"):]
            if what.startswith("fail/"):
                STATE["fail"] = what.endswith("1")
                return self.answer(200, b"ok")
            if what == "secrets":
                with LOCK:
                    return self.answer(200, "".join(t + "\n" for t in ISSUED).encode())
            if what == "revoke":
                with LOCK:
                    TOKENS.clear()
                return self.answer(200, b"ok")
            return self.answer(200, str(STATE[what]).encode())
        if raw.startswith("/computeMetadata/v1/instance/service-accounts/default/"):
            return self.metadata(raw.rsplit("/", 1)[1])
        m = re.fullmatch(r"/storage/v1/b/([^/]+)/o(?:/([^/]+))?", raw)
        if not m:
            return self.api_error(404, "Not Found")
        bucket, obj = urllib.parse.unquote(m.group(1)), m.group(2)
        why = self.refused(bucket, q)
        if why:
            return self.api_error(*why)
        if obj is None:
            return self.listing(bucket, q)
        name = urllib.parse.unquote(obj)
        if name not in OBJECTS:
            return self.api_error(404, "No such object: %s/%s" % (bucket, name))
        if q.get("alt") == "media":
            return self.media(name)
        self.json_answer(200, meta_resource(name))

    def metadata(self, leaf):
        if STATE["fail"]:
            return self.answer(500, b"")
        if self.headers.get("Metadata-Flavor") != "Google":
            return self.answer(403, b"Missing Metadata-Flavor:Google header.")
        if leaf == "token":
            return self.answer(200, issue(), [("Content-Type", "application/json"), ("Metadata-Flavor", "Google")])
        if leaf == "email":
            return self.answer(200, ARGS.email.encode(), [("Metadata-Flavor", "Google")])
        self.answer(404, b"")

    def refused(self, bucket, q):
        """(status, message) of a request GCS would refuse, or None"""
        if bucket not in ("zarr", "public", "payer"):
            return 404, "The specified bucket does not exist."
        auth = self.headers.get("Authorization", "")
        if bucket == "public" and not auth:
            return None
        if not auth.startswith("Bearer "):
            return 401, "Anonymous caller does not have storage.objects.list access to the Google Cloud Storage bucket."
        with LOCK:
            exp = TOKENS.get(auth[7:])
            if exp is not None and time.time() >= exp:
                STATE["expired"] += 1
        if exp is None or time.time() >= exp:
            return 401, "Invalid Credentials"
        if bucket == "payer" and q.get("userProject") != "zf-billing":
            return 400, "Bucket is a requester pays bucket but no user project provided."
        return None

    def listing(self, bucket, q):
        prefix, delim = q.get("prefix", ""), q.get("delimiter", "")
        maxr = max(1, min(1000, int(q.get("maxResults", "1000"))))
        token = q.get("pageToken", "")
        gap = token.startswith("gap:")
        if ARGS.page_gaps and token and not gap:  # an empty page first, then this one
            return self.json_answer(200, {"kind": "storage#objects", "nextPageToken": "gap:" + token})
        start = token[4:] if gap else token
        entries, seen = [], set()
        for name in sorted(OBJECTS):
            if not name.startswith(prefix):
                continue
            rest = name[len(prefix):]
            if delim and delim in rest:
                p = prefix + rest.split(delim)[0] + delim
                if p not in seen:
                    seen.add(p)
                    entries.append((p, True))
                continue
            entries.append((name, False))
        entries = [e for e in entries if e[0] > start] if start else entries
        page, more = entries[:maxr], len(entries) > maxr
        out = {"kind": "storage#objects"}
        if more:
            out["nextPageToken"] = page[-1][0]
        prefixes = [n for n, is_p in page if is_p]
        items = [meta_resource(n) for n, is_p in page if not is_p]
        if prefixes:
            out["prefixes"] = prefixes
        if items:
            out["items"] = items
        self.json_answer(200, out)

    def media(self, name):
        data, gen = OBJECTS[name]
        hdrs = [("x-goog-generation", str(gen)), ("x-goog-metageneration", "1"),
                ("ETag", '"CK%dEAE="' % gen), ("Last-Modified", email.utils.formatdate(MTIME, usegmt=True))]
        self.answer_ranged(data, hdrs)


def main():
    global ARGS, PUBKEY
    p = argparse.ArgumentParser()
    p.add_argument("root")
    p.add_argument("--pubkey", required=True)
    p.add_argument("--email", required=True)
    p.add_argument("--ttl", type=int, default=3600)
    p.add_argument("--client", default="zf-client:zf-client-secret:zf-refresh")
    p.add_argument("--page-gaps", action="store_true")
    ARGS = p.parse_args()
    with open(ARGS.pubkey, "rb") as f:
        PUBKEY = serialization.load_pem_public_key(f.read())
    gen = 1700000000000000
    for d, _, files in os.walk(ARGS.root):
        for f in sorted(files):
            full = os.path.join(d, f)
            with open(full, "rb") as fh:
                gen += 1
                OBJECTS[os.path.relpath(full, ARGS.root)] = (fh.read(), gen)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
