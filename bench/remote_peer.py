"""The Python peer of bench/remote.py: zarr-python (over obstore) reads a
remote array and writes the text pandas writes; prints {"seconds": ...}.

    python bench/remote_peer.py http URL ARRAY
    python bench/remote_peer.py s3 s3://BUCKET/PREFIX ARRAY ENDPOINT   (AWS_* credentials)
Imports are excluded from the time; output goes to /dev/null.
"""
import json
import os
import sys
import time

import pandas as pd
import zarr
from obstore.store import HTTPStore, S3Store
from zarr.storage import ObjectStore


def open_store(argv):
    if argv[0] == "http":
        return HTTPStore.from_url(argv[1], client_options={"allow_http": True})
    bucket, _, prefix = argv[1][len("s3://"):].partition("/")
    return S3Store(bucket, prefix=prefix, endpoint=argv[3], region="us-east-1",
                   access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                   secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
                   virtual_hosted_style_request=False, client_options={"allow_http": True})


def main():
    store = ObjectStore(open_store(sys.argv[1:]), read_only=True)
    t0 = time.perf_counter()
    v = zarr.open_array(store, path=sys.argv[3], mode="r")[:]
    t1 = time.perf_counter()
    pd.Series(v).to_csv(os.devnull, index=False, header=False)
    t2 = time.perf_counter()
    print(json.dumps({"seconds": t2 - t0, "read": t1 - t0, "n": int(v.size)}))


if __name__ == "__main__":
    main()
