#!/usr/bin/env python3
"""Generate a corpus of damaged Zarr stores and the outcomes zarrfs must show.

    python gen.py OUTDIR          (python with zarr>=3.1, numpy, pandas)

Every store is first written correctly by zarr-python, then damaged on disk.
Each store is a v3 group (or v2 group for the v2 cases) holding a healthy
array "ok" next to the damaged node, so every case also checks that damage
stays contained.  Written under OUTDIR:

    manifest.json      the cases and their expected outcomes (format below)
    stores/CASE/       one store per case
    expected/          expected bytes of the healthy views, from an oracle
                       independent of zarrfs: zarr-python reads the values,
                       str(pandas.Timedelta) formats them
    outside/           targets of the symlinks that leave their store

manifest.json: {"version": 1, "cases": [CASE...], ...} where CASE has
    name, store (relative to OUTDIR), kind, expect, note, and per kind:

  kind "chunk": chunk CHUNK_KEY of array "bad" is damaged.
      expect "eio": bad.txt and bad.csv are listed and have an st_size; every
          read touching the damaged chunk's lines fails with EIO; the daemon
          logs a line containing CHUNK_KEY; bytes outside the damaged chunk
          read back as expected (views "txt"/"csv": expected file, size and the
          byte range [bad_start, bad_end) of the damaged chunk's lines; the
          expected files show the damaged chunk as NaT lines because layout.h
          specifies that sizes measure a damaged chunk as NaT);
      expect "fill": the chunk reads as the fill value (no error);
      skip_if_root: true when root can read the chunk anyway (chmod 000);
      max_rss_mb: the daemon's peak RSS must stay below this (bombs);
      outside_text: text that must not appear (data behind an outside symlink).
  kind "meta": the metadata of array "bad" is damaged.
      expect "left_out": bad.* are not listed, and (if log_required) a log line
          contains every string of log_contains;
      expect "left_out_or_ok": either left out as above, or listed with exactly
          the expected text (valid but extreme metadata).
  kind "name": a healthy array sits in a directory whose name is unsafe as a
      file name (newline, control characters, invalid UTF-8); expect
      "skipped": nothing but ok.* is listed, a log line contains "not safe"
      and every log line is free of raw control characters.
  kind "outside": a symlink in the store points outside it; expect
      "not_followed": the names in "absent" are not listed.
All cases also check the healthy sibling: "healthy" lists [file, expected]
pairs that must read back exactly.

Tests run as root in CI: chmod 000 does not stop root, so the "chunk
unreadable by permission" case is marked skip_if_root and its EIO assertion
is skipped when uid == 0 (everything else about the store is still checked).
"""
from __future__ import annotations

import json
import os
import shutil
import struct
import sys
import warnings

import numpy as np
import pandas as pd
import zarr

warnings.filterwarnings("ignore")

NAT = np.iinfo(np.int64).min
UNIT = "ms"

# the damaged-chunk array: 3 chunks of 20000 elements; chunk 1 is damaged.
BIG_N, BIG_CHUNK = 60000, 20000
# the healthy sibling and the small arrays of the metadata cases
OK_N, OK_CHUNK = 1000, 300


def values(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.integers(-(10**10), 10**10, size=n, dtype=np.int64)
    v[::997] = NAT
    v[1::1009] = 0
    v[2::1013] = rng.integers(-(10**4), 10**4, size=len(v[2::1013]))
    return v.astype(f"m8[{UNIT}]")


def td_text(x) -> str:
    """The oracle: str(pandas.Timedelta) of one value."""
    return str(pd.Timedelta(x))


def lines_of(arr: np.ndarray) -> list[str]:
    return [td_text(x) for x in arr]


def txt_bytes(lines: list[str]) -> bytes:
    return "".join(s + "\n" for s in lines).encode()


def csv_bytes(lines: list[str], name: str) -> bytes:
    out = [f"dim_0,{name}"] + [f"{i},{s}" for i, s in enumerate(lines)]
    return "".join(s + "\n" for s in out).encode()


def write(path: str, data: bytes | str) -> None:
    if isinstance(data, str):
        data = data.encode()
    with open(path, "wb") as f:
        f.write(data)


def read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


# ---------------------------------------------------------------------------
# templates written by zarr-python


def make_array(store: str, path: str, data: np.ndarray, chunks: int, zarr_format: int = 3,
               compressors="auto", serializer="auto", filters="auto") -> None:
    kw = {}
    if zarr_format == 3:
        kw["serializer"] = serializer
        kw["filters"] = filters
    a = zarr.create_array(store=store, name=path or None, shape=data.shape, chunks=(chunks,),
                          dtype=data.dtype, compressors=compressors, zarr_format=zarr_format,
                          fill_value=None if zarr_format == 2 else np.timedelta64("NaT", UNIT),
                          **kw)
    a[:] = data


def make_group(store: str, zarr_format: int = 3) -> None:
    zarr.open_group(store=store, mode="w", zarr_format=zarr_format)


def check_roundtrip(store: str, path: str, data: np.ndarray) -> None:
    got = zarr.open_array(store=store, path=path, mode="r")[...]
    assert np.array_equal(got.view("i8"), data.view("i8")), f"{store}/{path}: zarr-python round trip"


class Gen:
    def __init__(self, out: str):
        self.out = os.path.abspath(out)
        self.cases: list[dict] = []
        self.tmpl = os.path.join(self.out, "templates")
        for d in ("stores", "expected", "outside", "templates"):
            os.makedirs(os.path.join(self.out, d), exist_ok=True)
        self.ok = values(OK_N, 1)
        self.big = values(BIG_N, 2)
        self.small = values(OK_N, 3)
        self.other = values(BIG_CHUNK, 4)  # data behind the outside chunk symlink
        self.expected()
        self.templates()

    # -- oracle output -------------------------------------------------------
    def expected(self) -> None:
        e = os.path.join(self.out, "expected")
        ok = lines_of(self.ok)
        write(f"{e}/ok.txt", txt_bytes(ok))
        write(f"{e}/ok.csv", csv_bytes(ok, "ok"))
        small = lines_of(self.small)
        write(f"{e}/small.txt", txt_bytes(small))
        write(f"{e}/small.csv", csv_bytes(small, "bad"))
        write(f"{e}/small_nat.txt", txt_bytes(["NaT"] * OK_N))
        write(f"{e}/small_nat.csv", csv_bytes(["NaT"] * OK_N, "bad"))
        big = lines_of(self.big)
        lo, hi = BIG_CHUNK, 2 * BIG_CHUNK
        nat = big[:lo] + ["NaT"] * (hi - lo) + big[hi:]
        txt, csv = txt_bytes(nat), csv_bytes(nat, "bad")
        write(f"{e}/bad.nat.txt", txt)
        write(f"{e}/bad.nat.csv", csv)
        write(f"{e}/bad.txt", txt_bytes(big))  # as zarr-python reads the undamaged array
        # byte ranges of the damaged chunk's lines
        self.txt_range = (len(txt_bytes(nat[:lo])), len(txt_bytes(nat[:hi])))
        head = len(f"dim_0,bad\n".encode())
        self.csv_range = (head + sum(len(f"{i},{s}\n".encode()) for i, s in enumerate(nat[:lo])),
                          head + sum(len(f"{i},{s}\n".encode()) for i, s in enumerate(nat[:hi])))
        self.txt_size, self.csv_size = len(txt), len(csv)
        # text that would only appear if the outside chunk were followed
        self.outside_text = td_text(self.other[5])

    def templates(self) -> None:
        t = self.tmpl
        from zarr.codecs import BytesCodec, Crc32cCodec, ZstdCodec
        import numcodecs

        # v3: group + ok (zstd) + bad big (zstd), bytes-only, crc32c variants
        for name, kw in [
            ("v3_zstd", {}),
            ("v3_raw", {"compressors": None}),
            ("v3_crc", {"compressors": [Crc32cCodec()]}),
        ]:
            s = f"{t}/{name}"
            make_group(s)
            make_array(s, "ok", self.ok, OK_CHUNK)
            make_array(s, "bad", self.big, BIG_CHUNK, **kw)
            check_roundtrip(s, "bad", self.big)
        s = f"{t}/v3_meta"
        make_group(s)
        make_array(s, "ok", self.ok, OK_CHUNK)
        make_array(s, "bad", self.small, OK_CHUNK)
        s = f"{t}/v2_zlib"
        make_group(s, 2)
        make_array(s, "ok", self.ok, OK_CHUNK, zarr_format=2)
        make_array(s, "bad", self.big, BIG_CHUNK, zarr_format=2, compressors=numcodecs.Zlib(level=1))
        check_roundtrip(s, "bad", self.big)
        s = f"{t}/v2_meta"
        make_group(s, 2)
        make_array(s, "ok", self.ok, OK_CHUNK, zarr_format=2)
        make_array(s, "bad", self.small, OK_CHUNK, zarr_format=2)
        # the array an outside symlink points to, and a chunk of other values
        s = f"{self.out}/outside/arr"
        make_array(s, "", self.ok, OK_CHUNK)
        s = f"{t}/v3_other"
        make_array(s, "", self.other, BIG_CHUNK)
        shutil.copy(f"{s}/c/0", f"{self.out}/outside/chunk")

    # -- case helpers ----------------------------------------------------------
    def new_store(self, case: str, template: str) -> str:
        dst = os.path.join(self.out, "stores", case)
        shutil.copytree(os.path.join(self.tmpl, template), dst, symlinks=True)
        return dst

    def healthy(self) -> list[list[str]]:
        return [["ok.txt", "expected/ok.txt"], ["ok.csv", "expected/ok.csv"]]

    def add(self, case: dict) -> None:
        case.setdefault("healthy", self.healthy())
        case.setdefault("note", "")
        self.cases.append(case)

    def chunk_case(self, name: str, template: str, damage, note: str = "", expect: str = "eio",
                   v2: bool = False, **extra) -> None:
        store = self.new_store(name, template)
        key = "bad/1" if v2 else "bad/c/1"
        damage(os.path.join(store, key), store)
        self.add({
            "name": name, "store": f"stores/{name}", "kind": "chunk", "expect": expect,
            "chunk_key": key, "note": note,
            "views": {
                "txt": {"file": "bad.txt", "expected": "expected/bad.nat.txt", "size": self.txt_size,
                        "bad_start": self.txt_range[0], "bad_end": self.txt_range[1]},
                "csv": {"file": "bad.csv", "expected": "expected/bad.nat.csv", "size": self.csv_size,
                        "bad_start": self.csv_range[0], "bad_end": self.csv_range[1]},
            },
            **extra,
        })

    def meta_case(self, name: str, damage, expect: str = "left_out", v2: bool = False,
                  log_required: bool = True, note: str = "", if_listed: str = "small") -> None:
        store = self.new_store(name, "v2_meta" if v2 else "v3_meta")
        damage(os.path.join(store, "bad"))
        case = {"name": name, "store": f"stores/{name}", "kind": "meta", "expect": expect,
                "absent": ["bad.txt", "bad.csv"], "log_contains": ["/bad"],
                "log_required": log_required, "note": note}
        if expect == "left_out_or_ok":
            case["if_listed"] = [["bad.txt", f"expected/{if_listed}.txt"],
                                 ["bad.csv", f"expected/{if_listed}.csv"]]
        self.add(case)

    # -- the cases ---------------------------------------------------------------
    def chunk_cases(self) -> None:
        def truncate(p, s):
            d = read(p)
            write(p, d[: len(d) // 2])

        def garbage(p, s):
            n = len(read(p))
            write(p, np.random.default_rng(5).integers(0, 256, n, dtype=np.uint8).tobytes())

        def empty(p, s):
            write(p, b"")

        def zstd_of(arr):
            import numcodecs
            return bytes(numcodecs.Zstd(level=1).encode(np.ascontiguousarray(arr).view("<i8").tobytes()))

        def short(p, s):  # a valid zstd frame of half a chunk
            write(p, zstd_of(self.big[BIG_CHUNK: BIG_CHUNK + BIG_CHUNK // 2]))

        def long(p, s):  # a valid zstd frame of one element more than a chunk
            write(p, zstd_of(self.big[BIG_CHUNK: 2 * BIG_CHUNK + 1]))

        def bomb(p, s):  # 1 GiB of zeros in 32 KiB, no content size in the header
            write(p, zstd_rle_frame(1 << 30, None))

        def bomb_fcs(p, s):  # a frame declaring 2^40 bytes of content
            write(p, zstd_rle_frame(1 << 30, 1 << 40))

        def directory(p, s):
            os.remove(p)
            os.mkdir(p)
            write(os.path.join(p, "0"), b"not a chunk")

        def dangling(p, s):
            os.remove(p)
            os.symlink("no-such-chunk", p)

        def unreadable(p, s):
            os.chmod(p, 0)

        def outside(p, s):
            os.remove(p)
            os.symlink(os.path.relpath(os.path.join(self.out, "outside", "chunk"), os.path.dirname(p)), p)

        def flip(p, s):  # one bit of the payload: the CRC32C no longer matches
            d = bytearray(read(p))
            d[100] ^= 0x10
            write(p, bytes(d))

        def extra_bytes(p, s):
            write(p, read(p) + b"\0" * 8)

        self.chunk_case("chunk_truncated", "v3_zstd", truncate, "zstd chunk cut in half")
        self.chunk_case("chunk_garbage", "v3_zstd", garbage, "random bytes of the same length")
        self.chunk_case("chunk_empty", "v3_zstd", empty, "0-byte chunk file")
        self.chunk_case("chunk_short", "v3_zstd", short, "valid zstd decoding to half the chunk size")
        self.chunk_case("chunk_long", "v3_zstd", long, "valid zstd decoding to one element more")
        self.chunk_case("chunk_bomb", "v3_zstd", bomb,
                        "32 KiB zstd frame (RLE blocks, no content size) expanding to 1 GiB",
                        max_rss_mb=400)
        self.chunk_case("chunk_bomb_fcs", "v3_zstd", bomb_fcs,
                        "zstd frame whose header declares 2^40 bytes", max_rss_mb=400)
        self.chunk_case("chunk_directory", "v3_zstd", directory, "the chunk key is a directory")
        self.chunk_case("chunk_dangling_symlink", "v3_zstd", dangling,
                        "the chunk is a symlink to nothing: it exists in the listing but cannot "
                        "be read, so it is damage, not a missing chunk (zarr-python shows the "
                        "fill value; expect \"fill\" would check that policy instead)")
        self.chunk_case("chunk_unreadable", "v3_zstd", unreadable,
                        "chmod 000: not damage but a store that cannot tell the chunk's values, "
                        "so its size is unknown: stat fails with EIO (store.h); root reads it "
                        "anyway, so the assertion is skipped as root (tests/e2e/presence.bats "
                        "makes reads fail for root too)",
                        expect="unknown", skip_if_root=True)
        self.chunk_case("chunk_outside_symlink", "v3_zstd", outside,
                        "the chunk is a symlink to a valid chunk outside the store: it must not be "
                        "followed (store.h: refused); refusing is treated as damage",
                        outside_text=self.outside_text)
        self.chunk_case("chunk_crc_mismatch", "v3_crc", flip, "bytes+crc32c, one payload bit flipped")
        self.chunk_case("chunk_raw_wrong_size", "v3_raw", extra_bytes,
                        "uncompressed chunk with 8 extra bytes")
        self.chunk_case("chunk_raw_truncated", "v3_raw", truncate, "uncompressed chunk cut in half")
        self.chunk_case("v2_chunk_truncated", "v2_zlib", truncate, "v2 zlib chunk cut in half", v2=True)
        self.chunk_case("v2_chunk_garbage", "v2_zlib", garbage, "v2 zlib chunk of random bytes", v2=True)

    def meta_cases(self) -> None:
        def edit(fn, doc="zarr.json"):
            def damage(d):
                p = os.path.join(d, doc)
                m = json.loads(read(p))
                fn(m)
                write(p, json.dumps(m, indent=2))
            return damage

        def text(fn, doc="zarr.json"):
            def damage(d):
                p = os.path.join(d, doc)
                old = read(p).decode()
                new = fn(old)
                assert new != old, f"{p}: the text edit did not apply"
                write(p, new)
            return damage

        def td(m):
            return m["data_type"]["configuration"]

        def setk(key, value):
            def f(m):
                m[key] = value
            return f

        def delk(key):
            def f(m):
                del m[key]
            return f

        mc = self.meta_case
        mc("meta_invalid_json", text(lambda s: s[: len(s) // 2]))
        mc("meta_not_object", text(lambda s: "[" + s + "]"))
        mc("meta_binary", lambda d: write(os.path.join(d, "zarr.json"), b"\xff\xfe\x00garbage\x00"))
        mc("meta_type_shape", edit(setk("shape", "1000")))
        mc("meta_type_zarr_format", edit(setk("zarr_format", "3")))
        mc("meta_type_codecs", edit(setk("codecs", {"name": "bytes"})))
        mc("meta_type_chunk_shape", edit(lambda m: m["chunk_grid"]["configuration"].update(chunk_shape=[300.5])))
        mc("meta_type_dimension_names", edit(setk("dimension_names", "x")))
        mc("meta_type_unit", edit(lambda m: td(m).update(unit=3)))
        for key in ("shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs",
                    "zarr_format", "node_type"):
            mc(f"meta_missing_{key}", edit(delk(key)))
        mc("meta_missing_unit", edit(lambda m: td(m).pop("unit")))
        mc("meta_negative_shape", edit(setk("shape", [-1000])))
        mc("meta_shape_overflow", edit(lambda m: (m.update(shape=[2**32, 2**32, 2**32], dimension_names=None),
                                                  m["chunk_grid"]["configuration"].update(chunk_shape=[1, 1, 1]))))
        mc("meta_shape_2p64", text(lambda s: s.replace('"shape": [\n    1000\n  ]', '"shape": [18446744073709551616]')))
        def huge_chunk(d):
            edit(lambda m: m["chunk_grid"]["configuration"].update(chunk_shape=[2**40]))(d)
            shutil.rmtree(os.path.join(d, "c"))  # no chunk: every value is the fill value

        mc("meta_huge_chunk", huge_chunk, expect="left_out_or_ok", if_listed="small_nat",
           note="chunk_shape [2^40] for a shape of [1000] is valid Zarr (zarr-python reads it: "
                "all NaT); zarrfs may refuse it with a log line, or show 1000 NaT lines, but "
                "must not list a file it cannot stat or read")
        mc("meta_zero_chunk", edit(lambda m: m["chunk_grid"]["configuration"].update(chunk_shape=[0])))
        mc("meta_rank_chunk", edit(lambda m: m["chunk_grid"]["configuration"].update(chunk_shape=[300, 1])))
        mc("meta_rank_dimension_names", edit(setk("dimension_names", ["a", "b"])))
        mc("meta_rank_shape", edit(setk("shape", [1000, 1])))
        mc("meta_unknown_unit", edit(lambda m: td(m).update(unit="fortnight")))
        mc("meta_scale_0", edit(lambda m: td(m).update(scale_factor=0)))
        mc("meta_scale_2p31", edit(lambda m: td(m).update(scale_factor=2**31)))
        mc("meta_scale_float", edit(lambda m: td(m).update(scale_factor=1.5)))
        mc("meta_extra_config", edit(lambda m: td(m).update(extra=1)))
        mc("meta_fill_float", edit(setk("fill_value", 1.5)))
        mc("meta_fill_nat_lower", edit(setk("fill_value", "nat")))
        mc("meta_fill_2p63", text(lambda s: s.replace('"fill_value": -9223372036854775808',
                                                      '"fill_value": 9223372036854775808')))
        mc("meta_fill_bool", edit(setk("fill_value", True)))
        mc("meta_unknown_codec", edit(lambda m: m["codecs"].append({"name": "lzma", "configuration": {}})))
        mc("meta_codec_order", edit(lambda m: m["codecs"].reverse()))
        mc("meta_unknown_dtype", edit(setk("data_type", {"name": "numpy.timedelta65",
                                                        "configuration": {"unit": "ms", "scale_factor": 1}})),
           log_required=False,
           note="an unknown data type is just another data type: zarrfs shows only timedelta64 "
                "arrays, so no log line is required")
        mc("meta_unknown_key_key_encoding", edit(setk("chunk_key_encoding", {"name": "hashed"})))
        mc("meta_must_understand", edit(setk("new_feature", {"must_understand": True})))
        mc("meta_deeply_nested", text(lambda s: s.replace('"attributes": {}',
                                                          '"attributes": {"deep": ' + "[" * 100000 + "]" * 100000 + "}")),
           expect="left_out_or_ok",
           note="100000 nested arrays in the attributes: valid JSON, but no parser should recurse "
                "that deep; leaving the array out (with a log line) is fine, crashing is not")
        mc("meta_20mb", text(lambda s: s.replace('"attributes": {}',
                                                 '"attributes": {"blob": "' + "x" * (20 << 20) + '"}')),
           expect="left_out_or_ok",
           note="a 20 MiB zarr.json (valid): refusing documents over a size bound is fine")
        # a damaged group hides its subtree (zarr-python cannot open it either)
        store = self.new_store("meta_group_invalid", "v3_meta")
        shutil.rmtree(os.path.join(store, "bad"))
        zarr.open_group(store=store, path="g", mode="w")
        make_array(store, "g/inner", self.small, OK_CHUNK)
        p = os.path.join(store, "g", "zarr.json")
        write(p, read(p)[:-5])
        self.add({"name": "meta_group_invalid", "store": "stores/meta_group_invalid", "kind": "meta",
                  "expect": "left_out", "absent": ["g"], "log_contains": ["/g"], "log_required": True,
                  "note": "group g (holding array g/inner) has a truncated zarr.json"})
        # v2
        mc("v2_meta_invalid_json", text(lambda s: s[:-3], ".zarray"), v2=True)
        mc("v2_meta_bad_dtype_unit", edit(setk("dtype", "<m8[fortnight]"), ".zarray"), v2=True)
        mc("v2_meta_shape_chunks_rank", edit(setk("chunks", [300, 2]), ".zarray"), v2=True)
        mc("v2_meta_zero_chunk", edit(setk("chunks", [0]), ".zarray"), v2=True)
        mc("v2_meta_filters", edit(setk("filters", [{"id": "delta", "dtype": "<m8[ms]"}]), ".zarray"), v2=True)
        mc("v2_meta_unknown_compressor", edit(setk("compressor", {"id": "zfpy", "mode": 4}), ".zarray"), v2=True)
        mc("v2_meta_fill_float", edit(setk("fill_value", 0.5), ".zarray"), v2=True)
        mc("v2_meta_bad_zattrs", lambda d: write(os.path.join(d, ".zattrs"), b'{"_ARRAY_DIMENSIONS": ['),
           v2=True)
        mc("v2_meta_zattrs_rank", lambda d: write(os.path.join(d, ".zattrs"),
                                                  b'{"_ARRAY_DIMENSIONS": ["a", "b"]}'), v2=True)

    def name_cases(self) -> None:
        for case, raw in [
            ("name_newline", b"bad\nname"),
            ("name_control", b"bad\x01name"),
            ("name_escape", b"bad\x1b[31mred"),
            ("name_invalid_utf8", b"bad\xffname"),
            ("name_overlong_utf8", b"bad\xc0\xafname"),
            ("name_del", b"bad\x7fname"),
        ]:
            store = self.new_store(case, "v3_meta")
            os.rename(os.path.join(store, "bad").encode(), os.path.join(store.encode(), raw))
            self.add({"name": case, "store": f"stores/{case}", "kind": "name", "expect": "skipped",
                      "raw_name_hex": raw.hex(), "log_contains": ["not safe"],
                      "note": "a valid array in a directory whose name is unsafe as a file name"})

    def outside_cases(self) -> None:
        store = self.new_store("outside_dir_symlink", "v3_meta")
        shutil.rmtree(os.path.join(store, "bad"))
        os.symlink(os.path.relpath(os.path.join(self.out, "outside", "arr"), store),
                   os.path.join(store, "escape"))
        os.symlink("/", os.path.join(store, "root"))
        os.symlink("..", os.path.join(store, "up"))
        self.add({"name": "outside_dir_symlink", "store": "stores/outside_dir_symlink", "kind": "outside",
                  "expect": "not_followed",
                  "absent": ["escape.txt", "escape.csv", "escape", "root", "up"],
                  "note": "symlinks to an array outside the store, to / and to .. are not followed"})
        store = self.new_store("outside_meta_symlink", "v3_meta")
        os.remove(os.path.join(store, "bad", "zarr.json"))
        os.symlink(os.path.relpath(os.path.join(self.out, "outside", "arr", "zarr.json"),
                                   os.path.join(store, "bad")),
                   os.path.join(store, "bad", "zarr.json"))
        self.add({"name": "outside_meta_symlink", "store": "stores/outside_meta_symlink", "kind": "outside",
                  "expect": "not_followed", "absent": ["bad.txt", "bad.csv"],
                  "note": "bad/zarr.json is a symlink to metadata outside the store"})

    def run(self) -> None:
        self.chunk_cases()
        self.meta_cases()
        self.name_cases()
        self.outside_cases()
        shutil.rmtree(self.tmpl)
        manifest = {
            "version": 1,
            "generator": "tests/damaged/gen.py",
            "zarr": zarr.__version__, "numpy": np.__version__, "pandas": pd.__version__,
            "oracle": "zarr-python values, str(pandas.Timedelta)",
            "cases": self.cases,
        }
        write(os.path.join(self.out, "manifest.json"), json.dumps(manifest, indent=1))


def zstd_rle_frame(total: int, content_size: int | None) -> bytes:
    """A zstd frame of RLE blocks (128 KiB of zeros each) decoding to `total`
    bytes, with or without a frame content size (which may lie) in its header."""
    out = bytearray(struct.pack("<I", 0xFD2FB528))
    if content_size is None:
        out += bytes([0x00, 7 << 3])  # no content size, window 2^17
    else:
        out += bytes([0xC0, 7 << 3]) + struct.pack("<Q", content_size)
    left = total
    while left:
        n = min(left, 1 << 17)
        left -= n
        out += struct.pack("<I", (1 if left == 0 else 0) | (1 << 1) | (n << 3))[:3] + b"\0"
    return bytes(out)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = argv[1]
    if os.path.exists(out) and os.listdir(out):
        print(f"gen.py: {out} exists and is not empty", file=sys.stderr)
        return 2
    Gen(out).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
