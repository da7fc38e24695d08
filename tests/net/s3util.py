#!/usr/bin/env python3
"""s3util.py - upload a store to an S3 server and read it back with botocore's
own SigV4 signer (an implementation independent of zarrfs's).  Credentials
from the AWS_* environment, as the AWS tools take them.

  s3util.py put ENDPOINT BUCKET PREFIX DIR   make BUCKET if needed, upload every
                                              file under DIR as PREFIX/RELPATH
  s3util.py putgz ENDPOINT BUCKET PREFIX DIR  the same, every object gzip-compressed
                                              and stored with Content-Encoding: gzip
  s3util.py get ENDPOINT BUCKET KEY           the object's bytes to stdout
  s3util.py list ENDPOINT BUCKET PREFIX       every key under PREFIX, one a line
  s3util.py etag ENDPOINT BUCKET KEY          the object's ETag
"""

from __future__ import annotations

import gzip
import os
import sys

import boto3
from botocore.config import Config


def client(endpoint: str):
    return boto3.client("s3", endpoint_url=endpoint,
                        region_name=os.environ.get("AWS_REGION", "us-east-1"),
                        config=Config(s3={"addressing_style": "path"},
                                      retries={"max_attempts": 3, "mode": "standard"}))


def put(s3, bucket: str, prefix: str, root: str, gz: bool = False) -> int:
    try:
        s3.create_bucket(Bucket=bucket)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass
    n = 0
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            key = os.path.relpath(path, root).replace(os.sep, "/")
            if prefix:
                key = prefix.rstrip("/") + "/" + key
            with open(path, "rb") as fh:
                body = fh.read()
            if gz:
                s3.put_object(Bucket=bucket, Key=key, Body=gzip.compress(body), ContentEncoding="gzip")
            else:
                s3.put_object(Bucket=bucket, Key=key, Body=body)
            n += 1
    print(f"uploaded {n} objects to s3://{bucket}/{prefix}", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, endpoint, bucket = argv[:3]
    s3 = client(endpoint)
    if cmd in ("put", "putgz") and len(argv) == 5:
        return put(s3, bucket, argv[3], argv[4], cmd == "putgz")
    if cmd == "get":
        sys.stdout.buffer.write(s3.get_object(Bucket=bucket, Key=argv[3])["Body"].read())
        return 0
    if cmd == "etag":
        print(s3.head_object(Bucket=bucket, Key=argv[3])["ETag"])
        return 0
    if cmd == "list":
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=argv[3]):
            for o in page.get("Contents", []):
                print(o["Key"])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
