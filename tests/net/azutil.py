#!/usr/bin/env python3
"""azutil.py - set up Azure Blob test data on an emulator (Azurite), with requests
signed with SharedKey as Microsoft documents it (written apart from zarrfs's
signer: Azurite checks both).  The account key comes from $AZ_KEY (never argv).

    azutil.py ENDPOINT ACCOUNT container NAME [--public]   create a container
    azutil.py ENDPOINT ACCOUNT upload NAME DIR              every file under DIR as a blob
    azutil.py ENDPOINT ACCOUNT sas [PERMS]                  print an account SAS token (blob
                                                            service, read and list by default)

ENDPOINT is path style: http://127.0.0.1:PORT/ACCOUNT.
"""
import base64
import email.utils
import hashlib
import hmac
import os
import sys
import urllib.parse
import urllib.request

VERSION = "2021-08-06"


def sign(key, sts):
    return base64.b64encode(hmac.new(base64.b64decode(key), sts.encode(), hashlib.sha256).digest()).decode()


def request(endpoint, account, method, path, query=None, body=b"", headers=None):
    query = query or {}
    headers = dict(headers or {})
    if method == "PUT":  # urllib would add its own (form) type to a body
        headers.setdefault("Content-Type", "application/octet-stream")
    headers["x-ms-date"] = email.utils.formatdate(usegmt=True)
    headers["x-ms-version"] = VERSION
    url_path = urllib.parse.urlsplit(endpoint).path + urllib.parse.quote(path)
    canon_headers = "".join("%s:%s\n" % (k, headers[k]) for k in sorted(h.lower() for h in headers)
                            if k.startswith("x-ms-"))
    canon_res = "/%s%s" % (account, url_path) + "".join("\n%s:%s" % (k, query[k]) for k in sorted(query))
    sts = "\n".join([method, "", "", str(len(body)) if body else "", "",
                     headers.get("Content-Type", ""), "", "", "", "", "", ""]) + "\n" + canon_headers + canon_res
    headers["Authorization"] = "SharedKey %s:%s" % (account, sign(os.environ["AZ_KEY"], sts))
    url = endpoint.rstrip("/") + urllib.parse.quote(path)
    if query:
        url += "?" + urllib.parse.urlencode(query)
    req = urllib.request.Request(url, data=body if method == "PUT" else None, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status


def main():
    endpoint, account, cmd = sys.argv[1:4]
    args = sys.argv[4:]
    if cmd == "container":
        hdrs = {"x-ms-blob-public-access": "container"} if "--public" in args else {}
        request(endpoint, account, "PUT", "/" + args[0], {"restype": "container"}, headers=hdrs)
    elif cmd == "upload":
        for d, _, files in os.walk(args[1]):
            for f in files:
                full = os.path.join(d, f)
                with open(full, "rb") as fh:
                    data = fh.read()
                name = os.path.relpath(full, args[1])
                request(endpoint, account, "PUT", "/%s/%s" % (args[0], name), body=data,
                        headers={"x-ms-blob-type": "BlockBlob", "Content-Type": "application/octet-stream"})
    elif cmd == "sas":
        perms = args[0] if args else "rl"
        v = {"sv": "2019-12-12", "ss": "b", "srt": "sco", "sp": perms, "se": "2099-01-01T00:00:00Z",
             "spr": "https,http"}
        sts = "\n".join([account, v["sp"], v["ss"], v["srt"], "", v["se"], "", v["spr"], v["sv"], ""])
        v["sig"] = sign(os.environ["AZ_KEY"], sts)
        print(urllib.parse.urlencode(v))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
