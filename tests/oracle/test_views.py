"""Text options, the info view and zarrfs-cat, end to end.

- -o format=F and -o nat=TEXT: every .txt and .csv equals the exact integer
  reference of tests/golden/gen_duration.py (itself checked there against
  pandas, numpy, Decimal and isodate), st_size is exact and random reads match.
- zarrfs-cat writes exactly the bytes the mount shows, for every view.
- NAME.info names the facts of the array as zarr-python wrote them.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "golden"))
import gen_duration  # noqa: E402  (the exact reference formatter)

from conftest import build_dir  # noqa: E402

FORMATS = ["pandas", "iso", "numpy", "seconds", "raw"]
NATS = ["NaT", "", "n/a, \"missing\""]
ARRAYS = {  # name: (dtype, shape, chunks)
    "ns": ("m8[ns]", (9, 7), (4, 3)),
    "us10": ("m8[10us]", (23,), (5,)),
    "days7": ("m8[7D]", (6,), (4,)),
    "months": ("m8[M]", (5,), (2,)),
    "generic": ("m8", (4,), (3,)),
}


def csv_field(text):
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\r\n') else text


def unit_scale(dtype):
    unit, scale = np.datetime_data(np.dtype(dtype))
    return unit, int(scale)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("views") / "views.zarr"
    g = zarr.open_group(str(path), mode="w", zarr_format=3)
    rng = np.random.default_rng(5)
    values = {}
    for name, (dtype, shape, chunks) in ARRAYS.items():
        ints = rng.integers(-10**12, 10**12, size=shape, dtype=np.int64)
        ints.flat[::5] = np.iinfo(np.int64).min  # NaT
        ints.flat[1] = 0
        a = g.create_array(name, shape=shape, chunks=chunks, dtype=dtype,
                           fill_value=np.timedelta64("NaT"),
                           dimension_names=[f"d{k}" for k in range(len(shape))])
        a[...] = ints.view(dtype)
        values[name] = (ints, dtype)
    return path, values


def expected(ints, dtype, fmt, nat, name, csv):
    unit, scale = unit_scale(dtype)
    texts = [nat if v == gen_duration.NAT else gen_duration.reference(fmt, unit, scale, int(v))
             for v in ints.ravel()]
    if not csv:
        return "".join(t + "\n" for t in texts).encode()
    header = ",".join([f"d{k}" for k in range(ints.ndim)] + [name]) + "\n"
    lines = [",".join([str(i) for i in idx] + [csv_field(t) if t == nat else t]) + "\n"
             for idx, t in zip(np.ndindex(ints.shape), texts)]
    return (header + "".join(lines)).encode()


def opts(fmt, nat):
    return "format=" + fmt + ",nat=" + nat.replace("\\", "\\\\").replace(",", "\\,")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("nat", NATS, ids=["NaT", "empty", "quoted"])
def test_format_and_nat(store, fmt, nat, zf_mount):
    path, values = store
    m = zf_mount(path, "-o", opts(fmt, nat))
    rnd = random.Random(f"{fmt}{nat}")
    for name, (ints, dtype) in values.items():
        for ext in ("txt", "csv"):
            exp = expected(ints, dtype, fmt, nat, name, ext == "csv")
            fname = f"{name}.{ext}"
            assert m.stat(fname).st_size == len(exp), fname
            assert m.read(fname) == exp, fname
            ranges = [(rnd.randrange(0, len(exp) + 2), rnd.randrange(1, 90)) for _ in range(25)]
            for (off, n), got in zip(ranges, m.preads(fname, ranges)):
                assert got == exp[off:off + n], (fname, off, n)


@pytest.mark.parametrize("fmt", ["pandas", "iso"])
def test_zarrfs_cat_matches_mount(store, fmt, zf_mount):
    path, values = store
    nat = "-"
    m = zf_mount(path, "-o", opts(fmt, nat))
    tool = build_dir() / "zarrfs-cat"
    for name in values:
        for flag, ext in (([], "txt"), (["--csv"], "csv"), (["--info"], "info")):
            out = subprocess.run([str(tool), str(path), name, *flag, "-o", opts(fmt, nat)],
                                 capture_output=True, timeout=60)
            assert out.returncode == 0, out.stderr
            assert out.stdout == m.read(f"{name}.{ext}"), (name, ext)


def test_zarrfs_cat_errors(store):
    path, _ = store
    tool = build_dir() / "zarrfs-cat"
    bad = subprocess.run([str(tool), str(path), "no_such_array"], capture_output=True, timeout=60)
    assert bad.returncode != 0 and b"no_such_array" in bad.stderr
    bad = subprocess.run([str(tool), str(path / "nope"), "ns"], capture_output=True, timeout=60)
    assert bad.returncode != 0 and bad.stderr


def test_info_view(store, zf_mount):
    path, values = store
    m = zf_mount(path)
    info = m.read("ns.info").decode()
    fields = dict(line.split(": ", 1) for line in info.splitlines())
    a = zarr.open_array(str(path / "ns"))
    assert fields["shape"] == "[9, 7]" and fields["chunk_shape"] == "[4, 3]"
    assert fields["data_type"] == "numpy.timedelta64[ns]"
    assert fields["unit"] == "ns" and fields["scale_factor"] == "1"
    assert fields["fill_value"].startswith("-9223372036854775808") and "NaT" in fields["fill_value"]
    assert fields["dimension_names"] == "d0, d1"
    assert "zstd" in fields["codecs"] and "bytes(little)" in fields["codecs"]
    present = sum(1 for _ in (path / "ns" / "c").rglob("*") if _.is_file())
    assert fields["chunks_present"] == f"{present} of 9"
    assert fields["store_path"] == "ns"
    assert fields["elements"] == str(a.size)
    assert m.stat("ns.info").st_size == len(info.encode())
    scaled = dict(line.split(": ", 1) for line in m.read("us10.info").decode().splitlines())
    assert scaled["data_type"] == "numpy.timedelta64[10us]" and scaled["scale_factor"] == "10"
