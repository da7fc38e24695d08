"""shard_bombs.py - hostile sharded arrays for tests/e2e/hostile_shards.bats.

    python shard_bombs.py DIR

DIR becomes a v3 store (a group) holding:

  ok               a healthy array written by zarr-python (64 values, shards of
                   32, inner chunks of 4; its expected text in DIR.expected/ok.txt)
  bomb_whole       256 x 256 values in one shard decoded whole (a transpose
                   before sharding_indexed), inner chunks of one value (bytes +
                   zstd): all 65536 index entries point at the same 4 MiB of
                   zstd skippable frames ending in a valid frame of one value
                   (5 MiB with the index)
  bomb_partial     the same, 65536 values in one shard whose inner chunks are
                   read one by one (no transpose)
  overlap_whole    the whole-shard geometry again, every entry pointing at the
                   same valid zstd frame (17 bytes holding one value)
  overlap_partial  the same, inner chunks read one by one
  past_max         1024 values, inner chunks of one value read one by one, each
                   stored as a valid frame padded with a skippable frame to 2 KiB:
                   more than zstd can make of 8 bytes
  nested_whole     a shard decoded whole (transposed, 128 x 128) of 16 x 16
                   nested shards of 8 x 8 inner chunks of one value, every
                   outer entry pointing at one nested shard whose 64 entries all
                   point at the same 64 KiB of skippable frames (ending in a
                   valid frame)
  nested_partial   4096 values in a shard of 64 nested shards of 64 inner
                   chunks, read one by one: each nested shard's entries all
                   point at one valid frame

Index codecs are plain "bytes" (no checksum: the entries are what is hostile).
"""

from __future__ import annotations

import json
import os
import struct
import sys
import warnings

import numpy as np
import zarr
from numcodecs import Zstd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
import oracle  # noqa: E402

warnings.filterwarnings("ignore")
EMPTY = 2**64 - 1


def skippable(total: int, frame: int = 8) -> bytes:
    """total bytes of zstd skippable frames of `frame` bytes each (8: no payload)."""
    one = struct.pack("<II", 0x184D2A50, frame - 8) + bytes(frame - 8)
    return one * (total // frame)


def value_frame(v: int) -> bytes:
    return Zstd(level=0).encode(struct.pack("<q", v))


def bomb(total: int) -> bytes:
    """about total bytes of 8-byte skippable frames, then a valid frame of one
    value: each decode of it goes through all of them, and succeeds."""
    f = value_frame(7)
    return skippable(total - len(f)) + f


def index(entries: list[tuple[int, int]]) -> bytes:
    return b"".join(struct.pack("<QQ", o, n) for o, n in entries)


def inner_codecs(nested: list[int] | None) -> list:
    leaf = [{"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
    if nested is None:
        return leaf
    return [sharding(nested, leaf)]


def sharding(inner: list[int], codecs: list) -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner, "codecs": codecs,
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_location": "end"}}


def array(store: str, name: str, shape: list[int], inner: list[int], shard: bytes,
          transpose: bool = False, nested: list[int] | None = None) -> None:
    """a v3 array of one shard (the whole shape) holding the given bytes."""
    codecs = [sharding(inner, inner_codecs(nested))]
    if transpose:
        codecs.insert(0, {"name": "transpose", "configuration": {"order": [1, 0]}})
    meta = {"zarr_format": 3, "node_type": "array", "shape": shape,
            "data_type": {"name": "numpy.timedelta64",
                          "configuration": {"unit": "s", "scale_factor": 1}},
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": shape}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0, "codecs": codecs, "attributes": {}}
    d = os.path.join(store, name)
    os.makedirs(os.path.join(d, "c", *(["0"] * (len(shape) - 1))), exist_ok=True)
    with open(os.path.join(d, "zarr.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(d, "c", *(["0"] * len(shape))), "wb") as f:
        f.write(shard)


def all_at(data: bytes, count: int) -> bytes:
    """data, then an index of count entries all pointing at all of it."""
    return data + index([(0, len(data))] * count)


def padded(count: int, size: int) -> bytes:
    """count valid frames, each padded with skippable frames to size bytes."""
    parts, entries = [], []
    for i in range(count):
        f = value_frame(i)
        parts.append(f + skippable(size - len(f), size - len(f)))
        entries.append((i * size, size))
    return b"".join(parts) + index(entries)


def nested_bomb(outer: int, inner: int, leaf: bytes) -> bytes:
    """a shard of `outer` entries all pointing at one nested shard of `inner`
    entries all pointing at leaf."""
    nested = all_at(leaf, inner)
    return all_at(nested, outer)


def main(store: str) -> int:
    g = zarr.open_group(store, mode="w", zarr_format=3)
    a = g.create_array("ok", shape=(64,), chunks=(4,), shards=(32,), dtype="m8[s]",
                       fill_value=np.timedelta64(0, "s"))
    a[:] = (np.arange(64, dtype="i8") * 86399 - 1000).astype("m8[s]")
    vals, unit, scale, _ = oracle.read_array(store, "ok")
    os.makedirs(store.rstrip("/") + ".expected", exist_ok=True)
    with open(os.path.join(store.rstrip("/") + ".expected", "ok.txt"), "wb") as f:
        f.write(oracle.expected_txt(vals, unit, scale))

    big = bomb(4 << 20)
    array(store, "bomb_whole", [256, 256], [1, 1], all_at(big, 65536), transpose=True)
    array(store, "bomb_partial", [65536], [1], all_at(big, 65536))
    one = value_frame(7)
    array(store, "overlap_whole", [256, 256], [1, 1], all_at(one, 65536), transpose=True)
    array(store, "overlap_partial", [65536], [1], all_at(one, 65536))
    array(store, "past_max", [1024], [1], padded(1024, 2048))
    array(store, "nested_whole", [128, 128], [8, 8], nested_bomb(256, 64, bomb(64 << 10)),
          transpose=True, nested=[1, 1])
    nested = all_at(one, 64)
    array(store, "nested_partial", [4096], [64],
          nested * 64 + index([(i * len(nested), len(nested)) for i in range(64)]), nested=[1])
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
