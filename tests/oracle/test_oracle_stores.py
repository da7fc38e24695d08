"""Stores written by zarr-python (v3 and v2), mounted by zarrfs, checked byte
for byte against the oracle (tests/oracle/oracle.py) applied to the values
zarr-python reads back.

Every array gets its own tests: .txt, .csv, st_size, and 200 random preads.
Stores are built once per module in a temp dir and each is mounted once.
"""

from __future__ import annotations

import errno
import json
import os
import random
import stat
from pathlib import Path

import numcodecs
import numpy as np
import pandas as pd
import pytest
import zarr
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec,
                         TransposeCodec, ZstdCodec)

import oracle
from conftest import CMD_TIMEOUT

pytestmark = pytest.mark.filterwarnings("ignore")

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
NAT = INT64_MIN


# ---------------------------------------------------------------------------
# Values

def gen_values(kind: str, shape, dtype, seed: int) -> np.ndarray:
    """int64 values for an array of shape (C order), viewed as dtype."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    unit, scale = oracle.unit_scale(dtype)
    if kind == "full" or unit not in oracle.NS_PER:
        lo, hi = INT64_MIN + 1, INT64_MAX
    else:
        hi = INT64_MAX // (oracle.NS_PER[unit] * scale)
        lo = -hi
    v = rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64)
    pick = rng.random(n)
    small = rng.integers(-1000, 1000, size=n, endpoint=True, dtype=np.int64)
    v = np.where(pick < 0.15, small, v)
    # round values: whole seconds / days in the array's unit where possible
    if unit in oracle.NS_PER and oracle.NS_PER[unit] * scale < 10**9:
        per_s = 10**9 // (oracle.NS_PER[unit] * scale) or 1
        rounded = (v // per_s // 60) * per_s * 60
        v = np.where((pick >= 0.15) & (pick < 0.3), rounded, v)
    v = np.where((pick >= 0.3) & (pick < 0.37), np.int64(0), v)
    v = np.where((pick >= 0.37) & (pick < 0.45), np.int64(NAT), v)
    if n >= 6:
        v[:6] = [0, 1, -1, hi, lo, NAT]
    return v.reshape(shape).view(np.dtype(dtype).newbyteorder("="))


# ---------------------------------------------------------------------------
# Specs: one per array.  store: store dir name; path: array path in the store
# ("" = the store's root is the array).

class Spec:
    def __init__(self, id, path, dtype, shape, chunks, fmt=3, store=None,
                 kind="pandas", fill=None, regions=None, dims=None, order=None,
                 compressor="default", sep=None, endian=None, post=None,
                 optional=False, extra=None, seed=None, values=None):
        self.id = id
        self.path = path
        self.dtype = dtype
        self.shape = tuple(shape)
        self.chunks = tuple(chunks)
        self.fmt = fmt
        self.store = store or ("v3.zarr" if fmt == 3 else "v2.zarr")
        self.kind = kind
        self.fill = fill
        self.regions = regions
        self.dims = dims
        self.order = order
        self.compressor = compressor
        self.sep = sep
        self.endian = endian
        self.post = post
        self.optional = optional
        self.extra = extra or {}
        self.values = values  # explicit int64 values (C order) instead of random ones
        # stable across runs (hash() is salted per process)
        self.seed = seed if seed is not None else sum(ord(c) * (i + 1) for i, c in enumerate(id))

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1] if self.path else oracle.root_name(self.store)

    @property
    def rel(self) -> str:
        """File path (without extension) inside the mount."""
        return self.path if self.path else self.name

    @property
    def is_shown(self) -> bool:
        return np.dtype(self.dtype).kind in "mM"  # timedelta64 and datetime64


def set_meta(key, value):
    """post hook: set a key of the array's metadata document."""
    def hook(array_dir: Path, fmt: int):
        f = array_dir / ("zarr.json" if fmt == 3 else ".zarray")
        m = json.loads(f.read_text())
        m[key] = value
        f.write_text(json.dumps(m, ensure_ascii=False))
    return hook


def set_unit(unit):
    def hook(array_dir: Path, fmt: int):
        f = array_dir / "zarr.json"
        m = json.loads(f.read_text())
        m["data_type"]["configuration"]["unit"] = unit
        f.write_text(json.dumps(m, ensure_ascii=False))
    return hook


S = Spec
SPECS = [
    # --- v3: shapes ---------------------------------------------------------
    S("v3-0d", "zero_d", "m8[ns]", (), (), values=[123456789012345]),
    S("v3-0d-neg", "zero_d_neg", "m8[ps]", (), (), values=[-1]),
    S("v3-0d-nat", "zero_d_nat", "m8[s]", (), (), kind="nat"),
    S("v3-1d", "one_d", "m8[ns]", (103,), (10,)),
    S("v3-2d-dims", "two_d", "m8[us]", (7, 9), (3, 4), dims=["time", "station"]),
    S("v3-3d-partdims", "three_d", "m8[ms]", (4, 5, 6), (2, 3, 4), dims=["x", None, "z"]),
    S("v3-1d-chunk-bigger", "chunk_bigger", "m8[s]", (5,), (8,)),
    S("v3-1d-one-chunk", "one_chunk", "m8[ns]", (20,), (20,)),
    S("v3-empty-1d", "empty_1d", "m8[ns]", (0,), (1,)),
    S("v3-empty-3d", "empty_3d", "m8[ns]", (2, 0, 3), (1, 1, 1)),
    S("v3-big-1d", "big_1d", "m8[ns]", (20000,), (1000,)),
    S("v3-big-2d", "big_2d", "m8[s]", (300, 200), (64, 50), dims=["row", "col"]),
    # --- v3: every unit, scale factors ----------------------------------------
    *[S(f"v3-unit-{u}", f"units/u_{u}", f"m8[{u}]", (40,), (16,))
      for u in ("W", "D", "h", "m", "s", "ms", "us", "ns")],
    *[S(f"v3-unit-{u}", f"units/u_{u}", f"m8[{u}]", (40,), (16,), kind="full")
      for u in ("ps", "fs", "as", "Y", "M")],
    S("v3-unit-generic", "units/u_generic", "m8", (40,), (16,), kind="full"),
    S("v3-unit-mu", "units/u_mu", "m8[us]", (12,), (5,), post=set_unit("\u03bcs")),
    *[S(f"v3-scale-{s}", f"scales/s_{s}", f"m8[{s}]", (40,), (16,))
      for s in ("10us", "7D", "15m", "250ms", "3600s", "1000ns")],
    S("v3-scale-3Y", "scales/s_3Y", "m8[3Y]", (20,), (7,), kind="full"),
    S("v3-scale-max", "scales/s_max", "m8[2147483647s]", (30,), (7,), kind="full"),
    S("v3-scale-10ps", "scales/s_10ps", "m8[10ps]", (30,), (7,), kind="full"),
    S("v3-full-s", "full/s", "m8[s]", (60,), (16,), kind="full"),
    S("v3-full-D", "full/D", "m8[D]", (60,), (16,), kind="full"),
    S("v3-full-W", "full/W", "m8[W]", (60,), (16,), kind="full"),
    S("v3-full-ns", "full/ns", "m8[ns]", (60,), (16,), kind="full"),
    # --- v3: missing chunks and fill values -------------------------------------
    S("v3-missing-nat", "missing/nat", "m8[ns]", (50,), (10,),
      regions=[np.s_[12:18], np.s_[41:43]]),
    S("v3-missing-int", "missing/int42", "m8[ns]", (50,), (10,), fill=42, regions=[np.s_[0:5]]),
    S("v3-missing-all-neg", "missing/all_neg", "m8[s]", (9,), (4,), fill=-1, regions=[]),
    S("v3-missing-2d", "missing/two_d", "m8[ms]", (10, 12), (3, 5), fill=86400000,
      regions=[np.s_[0:3, 0:5], np.s_[4:7, 6:12]]),
    S("v3-fill-nat-string", "missing/nat_string", "m8[us]", (20,), (6,),
      regions=[np.s_[7:9]], post=set_meta("fill_value", "NaT")),
    # --- v3: nested groups --------------------------------------------------------
    S("v3-nested-a", "a/at_a", "m8[h]", (5,), (2,)),
    S("v3-nested-ab", "a/b/at_b", "m8[m]", (6,), (4,)),
    S("v3-nested-abc", "a/b/c/deep", "m8[ns]", (3, 4), (2, 2), dims=["p", "q"]),
    # --- v3: codecs and chunk keys ----------------------------------------------------
    S("v3-codec-none", "codecs/none", "m8[ns]", (30,), (7,), compressor=None),
    S("v3-codec-zstd", "codecs/zstd", "m8[ns]", (30,), (7,), compressor=[ZstdCodec(level=5)]),
    S("v3-codec-gzip", "codecs/gzip", "m8[ns]", (30,), (7,), compressor=[GzipCodec(level=6)]),
    S("v3-codec-blosc", "codecs/blosc", "m8[ns]", (30,), (7,),
      compressor=[BloscCodec(cname="zstd", clevel=3, shuffle="shuffle")]),
    S("v3-codec-crc32c", "codecs/crc32c", "m8[ns]", (30,), (7,),
      compressor=[ZstdCodec(level=1), Crc32cCodec()]),
    S("v3-codec-big-endian", "codecs/big_endian", "m8[ns]", (30,), (7,), endian="big"),
    S("v3-key-dot", "keys/dot", "m8[s]", (5, 6), (2, 4), sep="."),
    S("v3-key-v2", "keys/v2", "m8[s]", (5, 6), (2, 4), sep="v2."),
    S("v3-key-v2-slash", "keys/v2_slash", "m8[s]", (5, 6), (2, 4), sep="v2/"),
    S("v3-4d", "four_d", "m8[us]", (2, 3, 2, 3), (1, 2, 2, 2), dims=["a", "b", "c", "d"]),
    S("v3-ones", "ones", "m8[s]", (1, 1, 1), (1, 1, 1)),
    S("v3-tiny-chunks", "tiny_chunks", "m8[ns]", (17,), (1,)),
    S("v3-big-endian-missing", "codecs/big_endian_missing", "m8[ms]", (30,), (7,), endian="big",
      fill=123, regions=[np.s_[8:12]]),
    S("v3-name-space", "names/with space", "m8[ns]", (5,), (2,)),
    S("v3-name-unicode", "names/temp\u00e9rature", "m8[s]", (5,), (2,)),
    S("v3-name-dots", "names/x.y.z", "m8[ms]", (5,), (2,)),
    S("v3-group-space", "names/grp with space/inner", "m8[ms]", (4,), (3,)),
    # valid Zarr that zarrfs may or may not support: shown correctly, or left out with a log line
    S("v3-sharded", "maybe/sharded", "m8[ns]", (40,), (4,), optional=True,
      extra={"shards": (16,)}),
    S("v3-transposed", "maybe/transposed", "m8[ns]", (5, 7), (2, 3), optional=True,
      extra={"filters": [TransposeCodec(order=(1, 0))]}),

    # --- v2 -------------------------------------------------------------------------------
    S("v2-0d", "zero_d", "m8[ns]", (), (), fmt=2, values=[-86400 * 10**9 - 1]),
    S("v2-0d-nat", "zero_d_nat", "m8[D]", (), (), fmt=2, kind="nat"),
    S("v2-1d", "one_d", "m8[ns]", (97,), (10,), fmt=2),
    S("v2-2d-dims", "two_d", "m8[us]", (7, 9), (3, 4), fmt=2, dims=["time", "station"]),
    S("v2-2d-partdims", "two_d_part", "m8[us]", (4, 3), (3, 2), fmt=2, dims=["row", None]),
    S("v2-3d", "three_d", "m8[ms]", (4, 5, 6), (2, 3, 4), fmt=2),
    S("v2-empty", "empty", "m8[ns]", (0,), (1,), fmt=2),
    S("v2-big", "big", "m8[us]", (150, 130), (40, 33), fmt=2),
    S("v2-order-F-2d", "order_f/two_d", "m8[ns]", (5, 7), (2, 3), fmt=2, order="F",
      dims=["r", "c"]),
    S("v2-order-F-3d", "order_f/three_d", "m8[s]", (3, 4, 5), (2, 2, 3), fmt=2, order="F"),
    S("v2-order-F-missing", "order_f/missing", "m8[ms]", (6, 5), (4, 2), fmt=2, order="F",
      fill=7, regions=[np.s_[0:4, 2:4]]),
    S("v2-sep-slash", "sep/slash", "m8[ns]", (6, 7), (4, 3), fmt=2, sep="/"),
    S("v2-sep-slash-3d", "sep/slash_3d", "m8[us]", (3, 4, 5), (2, 3, 2), fmt=2, sep="/"),
    S("v2-comp-none", "comp/none", "m8[ns]", (30,), (7,), fmt=2, compressor=None),
    S("v2-comp-zstd", "comp/zstd", "m8[ns]", (30,), (7,), fmt=2,
      compressor=numcodecs.Zstd(level=3)),
    S("v2-comp-blosc-lz4", "comp/blosc_lz4", "m8[ns]", (30,), (7,), fmt=2,
      compressor=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)),
    S("v2-comp-blosc-zstd-bitshuffle", "comp/blosc_zstd", "m8[ns]", (30,), (7,), fmt=2,
      compressor=numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE)),
    S("v2-comp-blosc-noshuffle", "comp/blosc_noshuffle", "m8[ns]", (30,), (7,), fmt=2,
      compressor=numcodecs.Blosc(cname="blosclz", clevel=9, shuffle=numcodecs.Blosc.NOSHUFFLE)),
    S("v2-comp-zlib", "comp/zlib", "m8[ns]", (30,), (7,), fmt=2, compressor=numcodecs.Zlib(level=6)),
    S("v2-comp-gzip", "comp/gzip", "m8[ns]", (30,), (7,), fmt=2, compressor=numcodecs.GZip(level=6)),
    S("v2-comp-bz2", "comp/bz2", "m8[ns]", (30,), (7,), fmt=2, compressor=numcodecs.BZ2(level=9)),
    S("v2-comp-lz4", "comp/lz4", "m8[ns]", (30,), (7,), fmt=2, compressor=numcodecs.LZ4()),
    S("v2-big-endian", "comp/big_endian", ">m8[us]", (30,), (7,), fmt=2),
    S("v2-big-endian-none", "comp/big_endian_none", ">m8[ns]", (30,), (7,), fmt=2,
      compressor=None),
    S("v2-fill-null", "fill/null", "m8[ns]", (30,), (7,), fmt=2, fill=5,
      regions=[np.s_[3:9]], post=set_meta("fill_value", None)),
    S("v2-fill-nat-string", "fill/nat_string", "m8[ns]", (30,), (7,), fmt=2, fill=5,
      regions=[np.s_[20:23]], post=set_meta("fill_value", "NaT")),
    S("v2-fill-int", "fill/int", "m8[D]", (30,), (7,), fmt=2, fill=-3, regions=[np.s_[0:2]]),
    S("v2-fill-nat-int", "fill/nat_int", "m8[h]", (30,), (7,), fmt=2, regions=[np.s_[14:15]]),
    *[S(f"v2-unit-{u}", f"units/u_{u}", f"m8[{u}]", (25,), (10,), fmt=2,
        kind="full" if u in ("ps", "fs", "as", "Y", "M") else "pandas")
      for u in ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as")],
    S("v2-unit-generic", "units/u_generic", "m8", (25,), (10,), fmt=2, kind="full"),
    S("v2-scale-10us", "scales/s_10us", "m8[10us]", (25,), (10,), fmt=2),
    S("v2-scale-7D", "scales/s_7D", "m8[7D]", (25,), (10,), fmt=2),
    S("v2-scale-15m", "scales/s_15m", "m8[15m]", (25,), (10,), fmt=2),
    S("v2-nested", "g1/g2/deep", "m8[ns]", (4, 4), (3, 3), fmt=2),
    S("v2-big-endian-missing", "comp/big_endian_missing", ">m8[s]", (30,), (7,), fmt=2,
      fill=-77, regions=[np.s_[0:3], np.s_[25:30]]),
    S("v2-tiny-chunks", "tiny_chunks", "m8[us]", (4, 5), (1, 1), fmt=2, sep="/"),

    # --- stores whose root is an array ------------------------------------------------------
    S("root-v3", "", "m8[10us]", (23,), (5,), store="td root3.zarr", dims=["when"]),
    S("root-v2", "", "m8[ms]", (4, 6), (3, 4), fmt=2, store="root2.zarr",
      dims=["y", "x"], order="F"),
]

# Arrays of other data types: never shown.
HIDDEN = [
    S("v3-int64", "ints", "int64", (5,), (5,)),
    S("v3-float64", "floats", "float64", (5,), (5,)),
    S("v3-nested-int", "a/b/ints_b", "int64", (5,), (5,)),
    S("v2-int64", "ints", "int64", (5,), (5,), fmt=2),
    S("v2-bool", "bools", "bool", (5,), (5,), fmt=2),
]
# Time stamps: shown as text (tests/oracle/test_datetime.py has the details).
DATES = [
    S("v3-datetime64", "dates", "M8[ns]", (5,), (5,)),
    S("v2-datetime64", "dates", "M8[ns]", (5,), (5,), fmt=2),
]
# Explicit empty groups.
EMPTY_GROUPS = {"v3.zarr": ["empty_group"], "v2.zarr": ["empty_group2"]}

SPEC_BY_ID = {s.id: s for s in SPECS}
REQUIRED = [s for s in SPECS if not s.optional]
OPTIONAL = [s for s in SPECS if s.optional]
assert len(SPEC_BY_ID) == len(SPECS)


# ---------------------------------------------------------------------------
# Building stores

def build(spec: Spec, root: Path) -> None:
    store = root / spec.store
    kw = dict(shape=spec.shape, dtype=np.dtype(spec.dtype), zarr_format=spec.fmt, **spec.extra)
    if spec.shape:
        kw["chunks"] = spec.chunks
    if spec.fill is not None:
        kw["fill_value"] = spec.fill
    if spec.compressor != "default":
        kw["compressors"] = spec.compressor
    if spec.order:
        kw["order"] = spec.order
    if spec.endian:
        kw["serializer"] = BytesCodec(endian=spec.endian)
    if spec.sep:
        if spec.sep.startswith("v2"):
            kw["chunk_key_encoding"] = {"name": "v2", "separator": spec.sep[2:]}
        elif spec.fmt == 3:
            kw["chunk_key_encoding"] = {"name": "default", "separator": spec.sep}
        else:
            kw["chunk_key_encoding"] = {"name": "v2", "separator": spec.sep}
    if spec.dims is not None:
        if spec.fmt == 3:
            kw["dimension_names"] = spec.dims
        else:
            kw["attributes"] = {"_ARRAY_DIMENSIONS": spec.dims}
    if spec.path:
        g = zarr.open_group(str(store), mode="a", zarr_format=spec.fmt)
        parent = spec.path.rpartition("/")[0]
        if parent:
            g.require_group(parent)
        kw.pop("zarr_format")
        arr = g.create_array(name=spec.path, **kw)
    else:
        arr = zarr.create_array(store=str(store), **kw)
    if np.dtype(spec.dtype).kind == "m":
        native = np.dtype(spec.dtype).newbyteorder("=")
        if spec.values is not None:
            data = np.array(spec.values, dtype=np.int64).reshape(spec.shape).view(native)
        elif spec.kind == "nat":
            data = np.full(spec.shape, NAT, dtype=np.int64).view(native)
        else:
            data = gen_values(spec.kind, spec.shape, spec.dtype, spec.seed)
    else:
        data = np.arange(int(np.prod(spec.shape)), dtype="i8").reshape(spec.shape).astype(spec.dtype)
    if spec.regions is None:
        arr[...] = data
    else:
        for r in spec.regions:
            arr[r] = data[r]
    if spec.post:
        spec.post(store / spec.path if spec.path else store, spec.fmt)


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("stores")
    for store, groups in EMPTY_GROUPS.items():
        fmt = 3 if store == "v3.zarr" else 2
        g = zarr.open_group(str(root / store), mode="a", zarr_format=fmt)
        for name in groups:
            g.require_group(name)
    for spec in SPECS + HIDDEN + DATES:
        build(spec, root)
    return root


@pytest.fixture(scope="module")
def mount_of(stores, zf_mounter_module):
    """mount_of(store_name) -> Mount, each store mounted once per module."""
    cache = {}

    def get(store_name: str):
        if store_name not in cache:
            cache[store_name] = zf_mounter_module(stores / store_name)
        return cache[store_name]
    return get


_expected: dict[str, tuple[bytes, bytes]] = {}


def expected(spec: Spec, stores: Path) -> tuple[bytes, bytes]:
    """(txt, csv) the oracle expects, from the values zarr-python reads back."""
    if spec.id not in _expected:
        values, unit, scale, dims = oracle.read_array(stores / spec.store, spec.path or None)
        assert values.shape == spec.shape
        _expected[spec.id] = (oracle.expected_txt(values, unit, scale),
                              oracle.expected_csv(values, spec.name, dims, unit, scale))
    return _expected[spec.id]


def ids(specs):
    return [s.id for s in specs]


# ---------------------------------------------------------------------------
# Per-array checks

@pytest.mark.parametrize("spec", REQUIRED, ids=ids(REQUIRED))
def test_txt(spec, stores, mount_of):
    m = mount_of(spec.store)
    want, _ = expected(spec, stores)
    got = m.read(spec.rel + ".txt")
    assert got == want, first_diff(want, got)


@pytest.mark.parametrize("spec", REQUIRED, ids=ids(REQUIRED))
def test_csv(spec, stores, mount_of):
    m = mount_of(spec.store)
    _, want = expected(spec, stores)
    got = m.read(spec.rel + ".csv")
    assert got == want, first_diff(want, got)


@pytest.mark.parametrize("spec", REQUIRED, ids=ids(REQUIRED))
def test_size_and_mode(spec, stores, mount_of):
    m = mount_of(spec.store)
    want_txt, want_csv = expected(spec, stores)
    for ext, want in ((".txt", want_txt), (".csv", want_csv)):
        st = m.stat(spec.rel + ext)
        assert stat.S_ISREG(st.st_mode), ext
        assert stat.S_IMODE(st.st_mode) == 0o444, oct(st.st_mode)
        got = m.read(spec.rel + ext)
        assert st.st_size == len(got), f"{ext}: st_size {st.st_size}, read {len(got)} bytes"
        assert st.st_size == len(want), f"{ext}: st_size {st.st_size}, expected {len(want)}"
    # extra views (NAME.info): regular, 0444, st_size exact
    parent, _, name = spec.rel.rpartition("/")
    for entry in m.listdir(parent):
        base, _, ext = entry.rpartition(".")
        if base == name and ext in oracle.EXTRA_VIEWS:
            st = m.stat(f"{parent}/{entry}" if parent else entry)
            assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o444
            assert st.st_size == len(m.read(f"{parent}/{entry}" if parent else entry))


def random_ranges(text: bytes, spec: Spec, seed: int, n: int = 200, header: int = 0):
    """(offset, length) pairs: short and long, at line starts, across chunk
    boundaries, crossing EOF and wholly past it."""
    rng = random.Random(seed)
    size = len(text)
    line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == 0x0A]
    # line index of elements that start a chunk along some dimension
    bounds = []
    if spec.shape and size:
        for k, idx in enumerate(np.ndindex(*spec.shape)):
            if any(i % c == 0 and i for i, c in zip(idx, spec.chunks)) and k + header < len(line_starts):
                bounds.append(line_starts[k + header])
            if len(bounds) > 2000:
                break
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.2:
            off, ln = rng.randint(0, size), rng.randint(1, 40)
        elif r < 0.35:
            off, ln = rng.choice(line_starts) + rng.randint(-2, 2), rng.randint(1, 80)
        elif r < 0.5 and bounds:
            off, ln = rng.choice(bounds) - rng.randint(0, 40), rng.randint(1, 120)
        elif r < 0.65:
            off, ln = rng.randint(0, size), rng.randint(1, 5000)
        elif r < 0.75:
            off, ln = rng.randint(0, size), rng.randint(1, max(1, size))
        elif r < 0.85:
            off, ln = max(0, size - rng.randint(0, 60)), rng.randint(1, 200)
        elif r < 0.92:
            off, ln = size + rng.randint(0, 5000), rng.randint(1, 100)
        else:
            off, ln = rng.choice([0, 4095, 4096, 4097, 65536, 131071, 131072]), rng.randint(1, 140000)
        out.append((max(0, off), ln))
    return out


@pytest.mark.parametrize("spec", REQUIRED, ids=ids(REQUIRED))
@pytest.mark.parametrize("ext", [".txt", ".csv"])
def test_random_preads(spec, ext, stores, mount_of):
    m = mount_of(spec.store)
    want_txt, want_csv = expected(spec, stores)
    want = want_txt if ext == ".txt" else want_csv
    ranges = random_ranges(want, spec, seed=spec.seed + len(ext),
                           header=1 if ext == ".csv" else 0)
    got = m.preads(spec.rel + ext, ranges)
    for (off, ln), g in zip(ranges, got):
        assert g == want[off:off + ln], (
            f"pread(off={off}, len={ln}) of {len(want)}-byte file: "
            f"got {g[:120]!r}, want {want[off:off + ln][:120]!r}")


# ---------------------------------------------------------------------------
# Namespace

def expected_listing(store: str) -> dict[str, set[str] | None]:
    """dir (relative, "" = root) -> expected entries; optional arrays are
    handled by the caller."""
    dirs: dict[str, set[str]] = {"": set()}

    def add_dir(d):
        parts = d.split("/") if d else []
        for i in range(len(parts)):
            parent = "/".join(parts[:i])
            dirs.setdefault(parent, set()).add(parts[i])
            dirs.setdefault("/".join(parts[:i + 1]), set())

    for g in EMPTY_GROUPS.get(store, []):
        add_dir(g)
    for s in SPECS + HIDDEN + DATES:
        if s.store != store or not s.path:
            continue
        parent, _, name = s.path.rpartition("/")
        add_dir(parent)
        if s.is_shown and not s.optional:
            dirs[parent] |= {name + ".txt", name + ".csv"}
    return dirs


LISTINGS = [(st, d) for st in ("v3.zarr", "v2.zarr") for d in sorted(expected_listing(st))]


@pytest.mark.parametrize("store,rel", LISTINGS, ids=[f"{s}:/{d}" for s, d in LISTINGS])
def test_listing(store, rel, mount_of):
    m = mount_of(store)
    want = expected_listing(store)[rel]
    got = oracle.strip_extra_views(m.listdir(rel))
    optional = {s.path.rpartition("/")[2] for s in OPTIONAL
                if s.store == store and s.path.rpartition("/")[0] == rel}
    for name in optional:  # either both files or neither
        pair = {name + ".txt", name + ".csv"}
        assert (pair & got) in (set(), pair), f"{name}: {sorted(pair & got)}"
        got -= pair
    assert got == want
    st = m.stat(rel)
    assert stat.S_ISDIR(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o555, oct(st.st_mode)


@pytest.mark.parametrize("store", ["td root3.zarr", "root2.zarr"])
def test_root_array_listing(store, mount_of):
    m = mount_of(store)
    name = oracle.root_name(store)
    assert oracle.strip_extra_views(m.listdir()) == {name + ".csv", name + ".txt"}


@pytest.mark.parametrize("spec", HIDDEN, ids=ids(HIDDEN))
def test_other_types_hidden(spec, mount_of):
    m = mount_of(spec.store)
    parent, _, name = spec.path.rpartition("/")
    entries = m.listdir(parent)
    assert not [e for e in entries if e == name or e.startswith(name + ".")], entries
    for suffix in ("", ".txt", ".csv"):
        with pytest.raises(FileNotFoundError):
            m.stat(spec.path + suffix)


@pytest.mark.parametrize("spec", DATES, ids=ids(DATES))
def test_dates_shown(spec, stores, mount_of):
    """datetime64 arrays are shown: str(pandas.Timestamp(v)) per line"""
    m = mount_of(spec.store)
    values = zarr.open_array(str(stores / spec.store), path=spec.path, mode="r")[...]
    want = "".join(("NaT" if np.isnat(v) else str(pd.Timestamp(v))) + "\n"
                   for v in values.ravel()).encode()
    assert m.read(spec.rel + ".txt") == want
    assert m.stat(spec.rel + ".txt").st_size == len(want)


@pytest.mark.parametrize("spec", OPTIONAL, ids=ids(OPTIONAL))
def test_maybe_supported(spec, stores, mount_of):
    """Valid Zarr that zarrfs may not support: correct if shown, else logged."""
    m = mount_of(spec.store)
    parent, _, name = spec.path.rpartition("/")
    if name + ".txt" in m.listdir(parent):
        want_txt, want_csv = expected(spec, stores)
        assert m.read(spec.rel + ".txt") == want_txt
        assert m.read(spec.rel + ".csv") == want_csv
        assert m.stat(spec.rel + ".txt").st_size == len(want_txt)
    else:
        assert name in m.log(), f"{name} left out without a log line; log:\n{m.log()}"


def test_missing_chunks_really_missing(stores):
    """The missing-chunk specs do leave chunks unwritten (else they test nothing)."""
    for sid in ("v3-missing-nat", "v3-missing-int", "v3-missing-all-neg", "v2-fill-null"):
        spec = SPEC_BY_ID[sid]
        d = stores / spec.store / spec.path
        n_chunks = int(np.prod([-(-s // c) for s, c in zip(spec.shape, spec.chunks)]))
        files = [p for p in d.rglob("*") if p.is_file() and not p.name.startswith(".")
                 and p.name != "zarr.json"]
        assert len(files) < n_chunks, (sid, len(files), n_chunks)


# ---------------------------------------------------------------------------
# A tiny chunk cache must not change any byte.

CACHE_SPECS = [SPEC_BY_ID[i] for i in ("v3-big-1d", "v3-big-2d", "v3-2d-dims", "v3-missing-2d",
                                       "v3-codec-blosc", "v3-full-s")]


@pytest.fixture(scope="module")
def small_cache_mount(stores, zf_mounter_module):
    return zf_mounter_module(stores / "v3.zarr", "-o", "cache_size=16K")


@pytest.mark.parametrize("spec", CACHE_SPECS, ids=ids(CACHE_SPECS))
def test_small_cache(spec, stores, small_cache_mount):
    m = small_cache_mount
    want_txt, want_csv = expected(spec, stores)
    assert m.read(spec.rel + ".txt") == want_txt
    assert m.read(spec.rel + ".csv") == want_csv
    ranges = random_ranges(want_txt, spec, seed=7)
    for (off, ln), g in zip(ranges, m.preads(spec.rel + ".txt", ranges)):
        assert g == want_txt[off:off + ln], (off, ln)


# ---------------------------------------------------------------------------
# Broken metadata and corrupt chunks

def _break_scale(p: Path, fmt: int):
    f = p / "zarr.json"
    m = json.loads(f.read_text())
    m["data_type"]["configuration"]["scale_factor"] = 0
    f.write_text(json.dumps(m))


BROKEN_GOOD = S("broken-good", "good", "m8[ns]", (40,), (10,), store="broken.zarr")
BROKEN_GOOD2 = S("broken-good-v2", "good_v2", "m8[ns]", (40,), (10,), fmt=2,
                 store="broken2.zarr")
# name -> (store, fmt, how to break its metadata)
BAD_META = {
    "bad_json": ("broken.zarr", 3,
                 lambda p, fmt: (p / "zarr.json").write_text('{"zarr_format": 3, "shape": [')),
    "bad_unit": ("broken.zarr", 3, set_unit("fortnight")),
    "bad_scale": ("broken.zarr", 3, lambda p, fmt: _break_scale(p, fmt)),
    "bad_fill": ("broken.zarr", 3, set_meta("fill_value", "soon")),
    "bad_shape": ("broken.zarr", 3, set_meta("shape", [-4])),
    "bad_codec": ("broken.zarr", 3, set_meta("codecs", [{"name": "no-such-codec"}])),
    "bad_json_v2": ("broken2.zarr", 2, lambda p, fmt: (p / ".zarray").write_text("{not json")),
    "bad_dtype_v2": ("broken2.zarr", 2, set_meta("dtype", "<m8[fortnight]")),
    "bad_compressor_v2": ("broken2.zarr", 2, set_meta("compressor", {"id": "no-such-codec"})),
}
# name -> (store, fmt, chunk key relative to the array, compressor)
CORRUPT = {
    "corrupt_zstd": ("broken.zarr", 3, "c/1", "default"),
    "corrupt_none": ("broken.zarr", 3, "c/2", None),
    "corrupt_v2_zstd": ("broken2.zarr", 2, "1", "default"),
    "corrupt_v2_blosc": ("broken2.zarr", 2, "2", numcodecs.Blosc(cname="lz4")),
    "corrupt_v2_none": ("broken2.zarr", 2, "0", None),
}


@pytest.fixture(scope="module")
def broken(tmp_path_factory, zf_mounter_module):
    root = tmp_path_factory.mktemp("broken")
    build(BROKEN_GOOD, root)
    build(BROKEN_GOOD2, root)
    for name, (store, fmt, hook) in BAD_META.items():
        build(S(f"x-{name}", name, "m8[ns]", (40,), (10,), fmt=fmt, store=store), root)
        hook(root / store / name, fmt)
    for name, (store, fmt, key, comp) in CORRUPT.items():
        build(S(f"x-{name}", name, "m8[ns]", (40,), (10,), fmt=fmt, store=store,
                compressor=comp), root)
        chunk = root / store / name / key
        assert chunk.is_file(), chunk
        if comp is None:
            chunk.write_bytes(chunk.read_bytes()[:13])  # wrong size for an uncompressed chunk
        else:
            chunk.write_bytes(b"\x28\xb5\x2f\xfd garbage, not a valid frame " * 3)
    mounts = {s: zf_mounter_module(root / s) for s in ("broken.zarr", "broken2.zarr")}
    return root, mounts


@pytest.mark.parametrize("store", ["broken.zarr", "broken2.zarr"])
def test_broken_listing(store, broken):
    root, mounts = broken
    want = set()
    for name, (s, *_rest) in CORRUPT.items():
        if s == store:
            want |= {name + ".txt", name + ".csv"}
    want |= {"good.txt", "good.csv"} if store == "broken.zarr" else {"good_v2.txt", "good_v2.csv"}
    assert oracle.strip_extra_views(mounts[store].listdir()) == want


@pytest.mark.parametrize("name", sorted(BAD_META))
def test_bad_metadata_logged(name, broken):
    root, mounts = broken
    store = BAD_META[name][0]
    log = mounts[store].log()
    assert any(name in line for line in log.splitlines()), f"no log line names {name}:\n{log}"


@pytest.mark.parametrize("spec", [BROKEN_GOOD, BROKEN_GOOD2], ids=["v3", "v2"])
def test_broken_store_good_array(spec, broken):
    root, mounts = broken
    m = mounts[spec.store]
    want_txt, want_csv = expected(spec, root)
    assert m.read(spec.rel + ".txt") == want_txt
    assert m.read(spec.rel + ".csv") == want_csv


@pytest.mark.parametrize("name", sorted(CORRUPT))
@pytest.mark.parametrize("ext", [".txt", ".csv"])
def test_corrupt_chunk_eio(name, ext, broken):
    root, mounts = broken
    store, fmt, key, _ = CORRUPT[name]
    m = mounts[store]
    with pytest.raises(OSError) as e:
        m.read(name + ext)
    assert e.value.errno == errno.EIO, e.value
    assert m.alive(), "daemon died or unmounted after a corrupt chunk"
    # the log names the chunk: a line with the array name and the chunk key
    lines = [ln for ln in m.log().splitlines() if name in ln and key in ln]
    assert lines, f"no log line names {name} chunk {key}:\n{m.log()}"
    # other arrays still read
    good = BROKEN_GOOD if store == "broken.zarr" else BROKEN_GOOD2
    assert m.read(good.rel + ".txt") == expected(good, root)[0]


def first_diff(want: bytes, got: bytes) -> str:
    n = min(len(want), len(got))
    i = next((k for k in range(n) if want[k] != got[k]), n)
    line = want.count(b"\n", 0, i) + 1
    return (f"differ at byte {i} (line {line}); sizes want {len(want)}, got {len(got)}\n"
            f"want: {want[max(0, i - 60):i + 60]!r}\ngot:  {got[max(0, i - 60):i + 60]!r}")


# ---------------------------------------------------------------------------
# Rewriting a store between mounts: the new mount shows the new data (no
# stale sizes or offsets from any index kept between mounts).

@pytest.mark.parametrize("compressor", [None, "default"], ids=["raw", "zstd"])
def test_remount_after_rewrite(compressor, tmp_path, zf_mount):
    spec = S(f"rw-{compressor}", "", "m8[ns]", (50,), (10,), store="rw.zarr",
             compressor=compressor, values=list(range(50)))
    build(spec, tmp_path)
    store = tmp_path / "rw.zarr"

    def want():
        values, unit, scale, dims = oracle.read_array(store)
        return (oracle.expected_txt(values, unit, scale),
                oracle.expected_csv(values, "rw", dims, unit, scale))

    m = zf_mount(store)
    assert (m.read("rw.txt"), m.read("rw.csv")) == want()
    assert m.stat("rw.txt").st_size == len(want()[0])
    assert not m.stop()
    # same shape and chunk sizes on disk (raw), longer text per value
    arr = zarr.open_array(str(store), mode="r+")
    arr[:] = np.arange(50, dtype=np.int64).view("m8[ns]") * 86_400_000_000_123
    m2 = zf_mount(store)
    txt, csv = want()
    assert m2.stat("rw.txt").st_size == len(txt)
    assert m2.read("rw.txt") == txt
    assert m2.read("rw.csv") == csv


# ---------------------------------------------------------------------------
# Other ways of reading: mmap, lseek, many threads at once.

MMAP_SPECS = [SPEC_BY_ID[i] for i in ("v3-big-1d", "v3-2d-dims", "v2-order-F-2d", "v3-0d",
                                      "v3-empty-1d", "v2-comp-blosc-lz4")]


@pytest.mark.parametrize("spec", MMAP_SPECS, ids=ids(MMAP_SPECS))
def test_mmap_and_lseek(spec, stores, mount_of):
    import mmap
    m = mount_of(spec.store)
    want_txt, want_csv = expected(spec, stores)
    for ext, want in ((".txt", want_txt), (".csv", want_csv)):
        with m.guard():
            fd = os.open(m.path(spec.rel + ext), os.O_RDONLY)
            try:
                assert os.lseek(fd, 0, os.SEEK_END) == len(want)
                if want:
                    with mmap.mmap(fd, 0, prot=mmap.PROT_READ) as mm:
                        assert len(mm) == len(want)
                        assert mm[:] == want
                        assert mm[len(want) // 2:] == want[len(want) // 2:]
                os.lseek(fd, len(want) // 3, os.SEEK_SET)
                assert os.read(fd, 1 << 20) == want[len(want) // 3:][:1 << 20]
            finally:
                os.close(fd)


def test_concurrent_reads(stores, mount_of):
    """Many threads reading random ranges of several arrays at once (through
    one mount, so through the daemon's shared chunk cache)."""
    import threading
    chosen = [SPEC_BY_ID[i] for i in ("v3-big-1d", "v3-big-2d", "v3-1d", "v3-3d-partdims",
                                       "v3-missing-2d", "v3-codec-gzip")]
    m = mount_of("v3.zarr")
    wants = {s.id: expected(s, stores) for s in chosen}
    errors = []

    def worker(k):
        rng = random.Random(k)
        try:
            for _ in range(40):
                s = rng.choice(chosen)
                ext = rng.choice([".txt", ".csv"])
                want = wants[s.id][0 if ext == ".txt" else 1]
                ranges = random_ranges(want, s, seed=rng.randrange(10**9), n=10)
                fd = os.open(m.path(s.rel + ext), os.O_RDONLY)
                try:
                    for off, ln in ranges:
                        got = os.pread(fd, ln, off)
                        if got != want[off:off + ln]:
                            errors.append(f"{s.id}{ext} off={off} len={ln}")
                finally:
                    os.close(fd)
        except Exception as e:  # noqa: BLE001 - report any failure
            errors.append(f"thread {k}: {e!r}")

    with m.guard(timeout=max(120.0, CMD_TIMEOUT)):
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors[:10]
    assert m.alive()


@pytest.mark.parametrize("store", ["v3.zarr", "v2.zarr"])
def test_stat_before_any_read(store, stores, zf_mount):
    """On a fresh mount, st_size of every file is exact before anything was read."""
    m = zf_mount(stores / store)
    specs = [s for s in REQUIRED if s.store == store]
    sizes = {(s.id, ext): m.stat(s.rel + ext).st_size for s in specs for ext in (".txt", ".csv")}
    bad = []
    for s in specs:
        want_txt, want_csv = expected(s, stores)
        for ext, want in ((".txt", want_txt), (".csv", want_csv)):
            if sizes[(s.id, ext)] != len(want):
                bad.append(f"{s.rel}{ext}: st_size {sizes[(s.id, ext)]}, want {len(want)}")
    assert not bad, bad
