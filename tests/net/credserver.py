#!/usr/bin/env python3
"""credserver.py - the AWS credential sources zarrfs reads, on loopback, checking
what the real ones check, and an S3 server that accepts only what they issued.

    credserver.py ROOT [--ttl S] [--web-token T] [--container-auth A] [--sso-token T]

Prints its port on one line, then serves until its standard input closes
(--forever: until it is killed).

  STS        POST / Action=AssumeRole: SigV4 (service sts) with the source keys
             (AKSOURCE / source+Secret/1) or credentials it issued (chained roles);
             Action=AssumeRoleWithWebIdentity: unsigned, WebIdentityToken == T.
             Answers STS's XML (AssumeRoleResult/Credentials).
  IMDSv2     PUT /latest/api/token with X-aws-ec2-metadata-token-ttl-seconds (1..21600),
             then GET /latest/meta-data/iam/security-credentials/[zf-role] with
             X-aws-ec2-metadata-token (a GET without it, or a PUT with
             X-Forwarded-For, gets 401/403 as on EC2).
  container  GET /container/creds with Authorization == A.
  SSO        GET /federation/credentials?account_id=&role_name= with
             x-amz-sso_bearer_token == T (JSON roleCredentials, expiration in ms).
  S3         GET/HEAD /BUCKET/KEY and ListObjectsV2 of the files under ROOT (buckets
             "zarr", and "payer" which needs a signed x-amz-request-payer: requester),
             SigV4 checked against the credentials issued; past their expiry:
             400 ExpiredToken (HEAD: bare 400).
Every credential issued expires S seconds (--ttl, default 3600) after issue
(--enforce E: S3 treats them as expired E seconds after issue, earlier than said).
  GET /_ctl/fail/1 (or 0): credential endpoints answer 500 (or work again).
  GET /_ctl/secrets: every secret key and session token issued, one a line.
  GET /_ctl/issued: how many credentials were issued; /_ctl/s3: S3 requests served,
  /_ctl/expired: ExpiredToken answers sent.
"""
import argparse
import datetime
import hashlib
import hmac
import http.server
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse

from awsproto import BaseHandler, esc, list_page, parse_auth, s3_error, signature

SOURCE = {"AKSOURCE": ("source+Secret/1", None)}
ROLE_PREFIX = "arn:aws:iam::123456789012:role/"
LOCK = threading.Lock()
ISSUED = {}      # access key -> (secret, token, expires epoch)
BORN = {}        # access key -> when it was issued
IMDS = set()     # session tokens
STATE = {"fail": False, "issued": 0, "s3": 0, "expired": 0}
ARGS = None
OBJECTS = {}



def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def issue():
    with LOCK:
        STATE["issued"] += 1
        n = STATE["issued"]
        ak = "ASIAISSUED%06d" % n
        cred = (secrets.token_urlsafe(24), "tok-%d-%s" % (n, secrets.token_urlsafe(48)),
                int(time.time()) + ARGS.ttl)
        ISSUED[ak] = cred
        BORN[ak] = time.time()
    return ak, cred


def keys_of(ak):
    with LOCK:
        if ak in SOURCE:
            return SOURCE[ak][0], SOURCE[ak][1], None
        if ak in ISSUED:
            return ISSUED[ak]
    return None



def xml_error(code, msg, sts=False):
    if sts:
        return ('<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender'
                '</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>1</RequestId>'
                '</ErrorResponse>' % (code, esc(msg))).encode()
    return s3_error(code, msg)


class Handler(BaseHandler):

    def body(self):
        n = int(self.headers.get("Content-Length", "0"))
        return self.rfile.read(n) if n else b""

    def check_sigv4(self, raw_path, query, payload, service):
        """(access key, None) if signed right, else (None, (status, code))"""
        parts = parse_auth(self.headers.get("Authorization"))
        if not parts:
            return None, (403, "AccessDenied")
        ak, svc = parts["Credential"].split("/")[0], parts["Credential"].split("/")[3]
        if svc != service:
            return None, (403, "SignatureDoesNotMatch")
        k = keys_of(ak)
        if k is None:
            return None, (403, "InvalidAccessKeyId")
        secret, token, expires = k
        signed = parts["SignedHeaders"].split(";")
        need = {"host", "x-amz-date"} | ({"x-amz-security-token"} if token else set())
        if not need <= set(signed):
            return None, (403, "AccessDenied")
        if token and self.headers.get("x-amz-security-token") != token:
            return None, (403, "InvalidToken")
        amz = self.headers["x-amz-date"]
        when = datetime.datetime.strptime(amz, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
        if abs((datetime.datetime.now(datetime.timezone.utc) - when).total_seconds()) > 900:
            return None, (403, "RequestTimeTooSkewed")
        phash = hashlib.sha256(payload).hexdigest()
        if service == "s3":
            if self.headers.get("x-amz-content-sha256") != phash:
                return None, (403, "XAmzContentSHA256Mismatch")
        want = signature(secret, self.command, raw_path, query, self.headers, parts, phash)
        if not hmac.compare_digest(want, parts["Signature"]):
            return None, (403, "SignatureDoesNotMatch")
        old = ARGS.enforce and time.time() - BORN.get(ak, time.time()) >= ARGS.enforce
        if (expires is not None and time.time() >= expires) or old:
            with LOCK:
                STATE["expired"] += 1
            return None, (400, "ExpiredToken")
        return ak, None

    # ---- control, IMDS, container, SSO ----------------------------------------
    def creds_json(self, names):
        ak, (secret, token, exp) = issue()
        return json.dumps({names[0]: ak, names[1]: secret, names[2]: token, names[3]: iso(exp),
                           "Code": "Success", "Type": "AWS-HMAC"}).encode()

    def do_PUT(self):
        self.body()
        if self.path != "/latest/api/token":
            return self.answer(404, b"")
        if STATE["fail"]:
            return self.answer(500, b"")
        ttl = self.headers.get("X-aws-ec2-metadata-token-ttl-seconds", "")
        if "X-Forwarded-For" in self.headers:
            return self.answer(403, b"")
        if not ttl.isdigit() or not 1 <= int(ttl) <= 21600:
            return self.answer(400, b"")
        tok = secrets.token_urlsafe(32)
        with LOCK:
            IMDS.add(tok)
        self.answer(200, tok.encode(), [("X-aws-ec2-metadata-token-ttl-seconds", ttl)])

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        raw, _, qs = self.path.partition("?")
        query = urllib.parse.parse_qsl(qs, keep_blank_values=True)
        if raw.startswith("/_ctl/"):
            what = raw[len("/_ctl/"):]
            if what.startswith("fail/"):
                STATE["fail"] = what.endswith("1")
                return self.answer(200, b"ok")
            if what == "secrets":
                with LOCK:
                    lines = [x for c in ISSUED.values() for x in c[:2]]
                return self.answer(200, "".join(x + "\n" for x in lines).encode())
            return self.answer(200, str(STATE[what]).encode())
        if raw.startswith("/latest/"):
            return self.imds(raw)
        if raw == "/container/creds":
            if STATE["fail"]:
                return self.answer(500, b"")
            if self.headers.get("Authorization") != ARGS.container_auth:
                return self.answer(401, b'{"message": "unauthorized"}')
            return self.answer(200, self.creds_json(["AccessKeyId", "SecretAccessKey", "Token",
                                                     "Expiration"]))
        if raw == "/federation/credentials":
            q = dict(query)
            if STATE["fail"]:
                return self.answer(500, b"")
            if self.headers.get("x-amz-sso_bearer_token") != ARGS.sso_token:
                return self.answer(401, b'{"message": "Session token not found or invalid"}')
            if q.get("account_id") != "123456789012" or q.get("role_name") != "zf-reader":
                return self.answer(403, b'{"message": "No access"}')
            ak, (secret, token, exp) = issue()
            return self.answer(200, json.dumps({"roleCredentials": {
                "accessKeyId": ak, "secretAccessKey": secret, "sessionToken": token,
                "expiration": exp * 1000}}).encode())
        return self.s3(raw, query)

    def imds(self, raw):
        if STATE["fail"]:
            return self.answer(500, b"")
        with LOCK:
            ok = self.headers.get("X-aws-ec2-metadata-token") in IMDS
        if not ok:
            return self.answer(401, b"")
        base = "/latest/meta-data/iam/security-credentials/"
        if raw == base:
            return self.answer(200, b"zf-role")
        if raw == base + "zf-role":
            return self.answer(200, self.creds_json(["AccessKeyId", "SecretAccessKey", "Token",
                                                     "Expiration"]))
        return self.answer(404, b"")

    # ---- STS ------------------------------------------------------------------
    def do_POST(self):
        payload = self.body()
        form = dict(urllib.parse.parse_qsl(payload.decode(), keep_blank_values=True))
        action = form.get("Action")
        if STATE["fail"]:
            return self.answer(500, xml_error("InternalFailure", "down", True))
        if form.get("Version") != "2011-06-15" or not form.get("RoleArn", "").startswith(ROLE_PREFIX) \
                or not form.get("RoleSessionName"):
            return self.answer(400, xml_error("ValidationError", "bad request", True))
        if action == "AssumeRole":
            raw = self.path.partition("?")[0]
            ak, bad = self.check_sigv4(raw, [], payload, "sts")
            if bad:
                return self.answer(bad[0], xml_error(bad[1], "refused", True))
        elif action == "AssumeRoleWithWebIdentity":
            if "Authorization" in self.headers:
                return self.answer(400, xml_error("InvalidAction", "signed web identity", True))
            if form.get("WebIdentityToken") != ARGS.web_token:
                return self.answer(400, xml_error("InvalidIdentityToken", "token rejected", True))
        else:
            return self.answer(400, xml_error("InvalidAction", "no such action", True))
        ak, (secret, token, exp) = issue()
        body = ('<%sResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><%sResult>'
                '<Credentials><AccessKeyId>%s</AccessKeyId><SecretAccessKey>%s</SecretAccessKey>'
                '<SessionToken>%s</SessionToken><Expiration>%s</Expiration></Credentials>'
                '<AssumedRoleUser><Arn>%s</Arn><AssumedRoleId>AROA:%s</AssumedRoleId></AssumedRoleUser>'
                '</%sResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></%sResponse>'
                % (action, action, ak, esc(secret), esc(token), iso(exp)[:-1] + ".123Z",
                   esc(form["RoleArn"]), esc(form["RoleSessionName"]), action, action))
        self.answer(200, body.encode(), [("Content-Type", "text/xml")])

    # ---- S3 -------------------------------------------------------------------
    def s3(self, raw, query):
        with LOCK:
            STATE["s3"] += 1
        bucket, _, key = raw[1:].partition("/")
        key = urllib.parse.unquote(key)
        ak, bad = self.check_sigv4(raw, query, b"", "s3")
        if bad:
            return self.answer(bad[0], xml_error(bad[1], "refused: " + bad[1]))
        if bucket == "payer" and ("x-amz-request-payer" not in
                               self.headers.get("Authorization", "").split("SignedHeaders=")[1].split(",")[0].split(";")
                               or self.headers.get("x-amz-request-payer") != "requester"):
            return self.answer(403, xml_error("AccessDenied", "requester pays bucket"))
        if bucket not in ("zarr", "payer"):
            return self.answer(404, xml_error("NoSuchBucket", "no such bucket"))
        if not key:
            return self.list(bucket, dict(query))
        if key not in OBJECTS:
            return self.answer(404, xml_error("NoSuchKey", "no such key"))
        data = OBJECTS[key]
        self.answer(200, data, [("ETag", '"%s"' % hashlib.md5(data).hexdigest()),
                                ("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT")])

    def list(self, bucket, q):
        body = list_page(OBJECTS, bucket, q, "2026-12-01T10:00:00.000Z")
        self.answer(200, body, [("Content-Type", "application/xml")])


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("root")
    p.add_argument("--ttl", type=int, default=3600)
    p.add_argument("--web-token", default="web-identity-token")
    p.add_argument("--container-auth", default="container-auth")
    p.add_argument("--sso-token", default="sso-access-token")
    p.add_argument("--forever", action="store_true", help="serve until killed, not until stdin closes")
    p.add_argument("--enforce", type=float, default=0,
                   help="S3 refuses credentials this many seconds after issue (ExpiredToken), "
                        "whatever expiry they were given")
    ARGS = p.parse_args()
    for d, _, files in os.walk(ARGS.root):
        for f in files:
            full = os.path.join(d, f)
            with open(full, "rb") as fh:
                OBJECTS[os.path.relpath(full, ARGS.root)] = fh.read()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    if ARGS.forever:
        srv.serve_forever()
        return
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    sys.stdin.read()
    srv.shutdown()


if __name__ == "__main__":
    main()
