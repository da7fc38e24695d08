"""Python peers and references for scripts/bench; prints one JSON object.

    python bench/peers.py pandas  STORE ARRAY      zarr read + Series.to_csv
    python bench/peers.py numpy   STORE ARRAY      zarr read + astype(str) + '\\n'.join
    python bench/peers.py read    STORE ARRAY [R]  zarr read only (median of R runs)
    python bench/peers.py zstd1   STORE ARRAY      decode every chunk once, 1 thread
    python bench/peers.py check   STORE ARRAY TXT  TXT is the array as str(pandas.Timedelta)?
    python bench/peers.py xcsv    STORE GROUP/VAR ROWS OUT
                                   xarray open_zarr(group=GROUP, decode_timedelta=True)[VAR]
                                   .isel(first dim=slice(0, ROWS)).to_dataframe().to_csv(OUT)

STORE is a directory, or for the remote rows (pandas, numpy, read) a URL:
http(s)://... (zarr-python's fsspec store, HTTPFileSystem over aiohttp) or
s3://BUCKET/PREFIX (zarr's ObjectStore over obstore; credentials, region and
endpoint from AWS_*).  A remote store is opened as a group with its
consolidated metadata, with async.concurrency = ZF_BENCH_CONNECTIONS (16).

Times are in-process (imports excluded), output goes to /dev/null like the
zarrfs side's `cat > /dev/null`.
"""
import json
import os
import statistics
import sys
import time

import zarr


VIA = ["local"]


def open_remote(spec):
    """The zarr store object (or URL) zarr-python reads a remote STORE through."""
    zarr.config.set({"async.concurrency": int(os.environ.get("ZF_BENCH_CONNECTIONS", "16"))})
    if not spec.startswith("s3://"):
        VIA[0] = "zarr FsspecStore (HTTPFileSystem, aiohttp)"
        return spec
    from obstore.store import S3Store
    from zarr.storage import ObjectStore
    bucket, _, prefix = spec[len("s3://"):].partition("/")
    env = os.environ
    s3 = S3Store(bucket, prefix=prefix or None,
                 config={"endpoint": env["AWS_ENDPOINT_URL"],
                         "access_key_id": env["AWS_ACCESS_KEY_ID"],
                         "secret_access_key": env["AWS_SECRET_ACCESS_KEY"],
                         "region": env.get("AWS_REGION", "us-east-1"),
                         "virtual_hosted_style_request": False},
                 client_options={"allow_http": True})
    VIA[0] = "zarr ObjectStore (obstore S3Store)"
    return ObjectStore(s3, read_only=True)


def read(store, path):
    if "://" in store:
        return zarr.open_group(open_remote(store), mode="r")[path][:]
    return zarr.open_array(store, path=path, mode="r")[:]


def t_pandas(store, path):
    import pandas as pd
    t0 = time.perf_counter()
    v = read(store, path)
    t1 = time.perf_counter()
    # same content as NAME.txt: no index, no header
    pd.Series(v).to_csv(os.devnull, index=False, header=False)
    t2 = time.perf_counter()
    return {"seconds": t2 - t0, "read": t1 - t0, "n": int(v.size), "via": VIA[0]}


def t_numpy(store, path):
    t0 = time.perf_counter()
    v = read(store, path)
    t1 = time.perf_counter()
    s = v.astype(str)
    with open(os.devnull, "w") as f:
        f.write("\n".join(s.tolist()))
        f.write("\n")
    t2 = time.perf_counter()
    return {"seconds": t2 - t0, "read": t1 - t0, "n": int(v.size)}


def t_read(store, path, repeats=3):
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        v = read(store, path)
        ts.append(time.perf_counter() - t0)
        del v
    return {"seconds": statistics.median(ts), "runs": ts}


def t_zstd1(store, path):
    from numcodecs import Zstd
    a = zarr.open_array(store, path=path, mode="r")
    codec = Zstd()
    base = os.path.join(store, path, "c")
    keys = sorted(os.listdir(base), key=int)
    blobs = []
    for k in keys:
        with open(os.path.join(base, k), "rb") as f:
            blobs.append(f.read())
    t0 = time.perf_counter()
    total = 0
    for b in blobs:
        total += len(codec.decode(b))
    t = time.perf_counter() - t0
    assert total == a.size * 8, (total, a.size)
    return {"seconds": t, "chunks": len(blobs)}


def t_check(store, path, txt):
    import pandas as pd
    v = zarr.open_array(store, path=path, mode="r")[:]
    k = min(2000, v.size)
    lines = 0
    with open(txt, "rb") as f:
        while True:
            b = f.read(1 << 24)
            if not b:
                break
            lines += b.count(b"\n")
        f.seek(0)
        head = [f.readline().decode().rstrip("\n") for _ in range(k)]
        size = f.seek(0, 2)
        f.seek(max(0, size - 64 * k - 64))
        tail = f.read().decode().split("\n")[:-1][-k:]
    want_head = [str(pd.Timedelta(x)) for x in v[:k]]
    want_tail = [str(pd.Timedelta(x)) for x in v[v.size - k:]]
    bad = [(i, g, w) for i, (g, w) in enumerate(zip(head, want_head)) if g != w]
    bad += [(v.size - k + i, g, w) for i, (g, w) in enumerate(zip(tail, want_tail)) if g != w]
    ok = lines == v.size and not bad and len(head) == len(tail) == k
    return {"ok": ok, "lines": lines, "n": int(v.size), "mismatches": bad[:5]}


def t_xcsv(store, path, rows, out):
    import xarray as xr
    group, _, var = path.rpartition("/")
    t0 = time.perf_counter()
    da = xr.open_zarr(store, group=group or None, decode_timedelta=True)[var]
    da = da.isel({da.dims[0]: slice(0, int(rows))})
    t1 = time.perf_counter()
    da.to_dataframe().to_csv(out)
    t2 = time.perf_counter()
    return {"seconds": t2 - t0, "open": t1 - t0, "n": int(da.size),
            "bytes": os.path.getsize(out) if out != os.devnull else None}


def main():
    mode, store, path = sys.argv[1:4]
    extra = sys.argv[4:]
    fn = {"pandas": t_pandas, "numpy": t_numpy, "zstd1": t_zstd1,
          "read": lambda s, p: t_read(s, p, int(extra[0]) if extra else 3),
          "check": lambda s, p: t_check(s, p, extra[0]),
          "xcsv": lambda s, p: t_xcsv(s, p, extra[0], extra[1] if len(extra) > 1 else os.devnull)}[mode]
    print(json.dumps(fn(store, path)))


if __name__ == "__main__":
    main()
