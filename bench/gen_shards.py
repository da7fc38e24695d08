"""Generate the sharded benchmark store (row 17) with zarr-python.

    python bench/gen_shards.py STORE

The same 2^22 timedelta64[ns] values (bench/gen.py's lead times, seed 4)
written four ways, each array alone in its group:
    sh/lt    one shard of 2^16 inner chunks of 64 values (zarr-python's
             sharding defaults: inner bytes + zstd, index bytes + crc32c)
    un/lt    the same data unsharded: 2^16 chunks of 64 values (bytes + zstd)
    one/lt   one chunk of 2^22 values (bytes + zstd)
and the first 2^20 of them as
    q/lt     one shard of 2^14 inner chunks of 64 values (how sizing scales
             with the inner chunks of a shard: a quarter of sh/lt's)
"""
import os
import sys
import time

import zarr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import values  # noqa: E402

N, INNER = 1 << 22, 64


def main():
    store = sys.argv[1]
    t0 = time.perf_counter()
    root = zarr.open_group(store, mode="w", zarr_format=3)
    d = values(N, 4)
    for group, n, chunks, shards in (("sh", N, INNER, N), ("un", N, INNER, None),
                                     ("one", N, N, None), ("q", N // 4, INNER, N // 4)):
        root.create_group(group)
        a = root.create_array(f"{group}/lt", shape=(n,), chunks=(chunks,), shards=shards,
                              dtype=d.dtype)
        a[:] = d[:n]
    print(f"gen_shards: {N} values four ways, {time.perf_counter() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
