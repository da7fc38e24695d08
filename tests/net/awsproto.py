"""awsproto.py - what the loopback test servers share (tests/unit/s3_server.py,
tests/net/credserver.py, authserver.py, gcsserver.py): SigV4 as the server
computes it, S3's error documents and ListObjectsV2 pages, and a quiet HTTP/1.1
handler answering whole or ranged."""
import hashlib
import hmac
import http.server
import re
import urllib.parse


def enc(s, slash):
    """URI-encode as SigV4 does ('/' kept when slash)"""
    return urllib.parse.quote(s, safe="-_.~" + ("/" if slash else ""))


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def s3_error(code, msg):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code><Message>%s</Message>'
            '<RequestId>1</RequestId></Error>' % (code, esc(msg))).encode()


def parse_auth(auth):
    """the fields of an AWS4-HMAC-SHA256 Authorization header, or None"""
    if not auth or not auth.startswith("AWS4-HMAC-SHA256 "):
        return None
    return dict(p.strip().split("=", 1) for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))


def signature(secret, method, raw_path, query, headers, parts, payload_hash):
    """the signature a request should carry: raw_path as sent, query pairs
    decoded, headers a mapping (case-insensitive get), parts parse_auth's"""
    day, region, svc, term = parts["Credential"].split("/")[1:]
    signed = parts["SignedHeaders"].split(";")
    path = enc(urllib.parse.unquote(raw_path), True)
    q = "&".join("%s=%s" % (enc(a, False), enc(b, False)) for a, b in sorted(query))
    hdrs = "".join("%s:%s\n" % (h, " ".join(headers[h].split())) for h in signed)
    creq = "\n".join([method, path, q, hdrs, ";".join(signed), payload_hash])
    scope = "/".join([day, region, svc, term])
    sts = "\n".join(["AWS4-HMAC-SHA256", headers["x-amz-date"], scope,
                     hashlib.sha256(creq.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for m in (day, region, svc, term):
        k = hmac.new(k, m.encode(), hashlib.sha256).digest()
    return hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()


def list_page(objects, bucket, q, mtime, loop=False):
    """a ListObjectsV2 page of objects (key -> bytes) for the query q (prefix,
    delimiter, max-keys, continuation-token); loop: every page is truncated
    with the same token"""
    prefix, delim = q.get("prefix", ""), q.get("delimiter", "")
    maxk = int(q.get("max-keys", "1000"))
    start = q.get("continuation-token", "")
    entries, seen = [], set()
    for k in sorted(objects):
        if not k.startswith(prefix):
            continue
        rest = k[len(prefix):]
        if delim and delim in rest:
            cp = prefix + rest.split(delim)[0] + delim
            if cp not in seen:
                seen.add(cp)
                entries.append((cp, "<CommonPrefixes><Prefix>%s</Prefix></CommonPrefixes>" % esc(cp)))
            continue
        d = objects[k]
        entries.append((k, "<Contents><Key>%s</Key><LastModified>%s</LastModified><ETag>%s</ETag>"
                           "<Size>%d</Size><StorageClass>STANDARD</StorageClass></Contents>"
                        % (esc(k), mtime, esc('"%s"' % hashlib.md5(d).hexdigest()), len(d))))
    entries = [e for e in entries if e[0] > start] if start else entries
    page, more = entries[:maxk], len(entries) > maxk
    token = page[-1][0] if more else ""
    if loop:
        more, token = True, "same-token"
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            "<Name>%s</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount><MaxKeys>%d</MaxKeys>"
            "<IsTruncated>%s</IsTruncated>%s%s</ListBucketResult>"
            % (bucket, esc(prefix), len(page), maxk, "true" if more else "false",
               "<NextContinuationToken>%s</NextContinuationToken>" % esc(token) if more else "",
               "".join(e[1] for e in page))).encode()


class BaseHandler(http.server.BaseHTTPRequestHandler):
    """quiet HTTP/1.1 with answer(): a status, a body, headers"""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, code, body, headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def answer_ranged(self, data, headers):
        """data whole (200), or the one Range bytes=a-b asked for (206)"""
        m = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
        if m and int(m.group(1)) < len(data):
            a, b = int(m.group(1)), min(int(m.group(2)), len(data) - 1)
            return self.answer(206, data[a:b + 1], list(headers) + [("Content-Range", "bytes %d-%d/%d" % (a, b, len(data)))])
        self.answer(200, data, headers)
