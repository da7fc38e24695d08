"""zf_coordtext_load against pandas: the text of every coordinate label that is
not a time type, as `xr.open_zarr(STORE, decode_timedelta=True)[NAME]
.to_dataframe().to_csv()` writes it.

Stores are written by xarray (v2 and v3) with float32/float64, every integer
width, bools, strings (object, fixed UTF-32, bytes), NaN and infinities, CF
masks and packing, missing chunks, a dimension coordinate, a 2-D coordinate
with partial edge chunks and a sharded one.  tests/unit/coordtext_dump.c
prints what zf_coordtext_load yields; the expected CSV is rebuilt from it and
compared with pandas' whole document.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from conftest import build_dir

warnings.filterwarnings("ignore")

N = 7  # elements along x (chunks of 3: the last one partial)
FLOATS = [0.1, np.nan, 1e-05, 1e16, -0.0, np.inf, -np.inf]
FLOATS32 = [0.1, np.nan, 1234567.0, 1e-04, 3.4e38, 123456.0, -2.5]
STRINGS = ["a,b", 'q"', "é", "line\nbreak", "", " lead", "cr\r"]


def dump(store: Path, name: str) -> tuple[list[str], list[str]]:
    """The dimension names and element texts zf_coordtext_load gives."""
    exe = build_dir() / "coordtext_dump"
    r = subprocess.run([str(exe), str(store), name], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    out = r.stdout
    head, _, rest = out.partition(b"\n")
    ndim, n, *dims = head.decode().split(" ")
    texts = []
    for _ in range(int(n)):
        ln, _, rest = rest.partition(b":")
        texts.append(rest[: int(ln)].decode())
        rest = rest[int(ln) + 1 :]
    assert rest == b""
    return dims, texts


def expected_csv(path: Path, ds: xr.Dataset, coord: str, dims: list[str], texts: list[str]) -> str:
    """The CSV pandas would write if each label were the loaded text (the
    other index columns: their loaded labels, or positions)."""
    index_dims = list(ds["d"].dims)
    labels = {d: dump(path, d)[1] if d in ds.coords else None for d in index_dims if d != coord}
    lines = [",".join(index_dims + ([] if coord in index_dims else [coord]))]
    shape = [ds.sizes[d] for d in index_dims]
    cshape = [ds.sizes[d] for d in dims]
    for idx in np.ndindex(*shape):
        at = dict(zip(index_dims, idx))
        flat = int(np.ravel_multi_index([at[d] for d in dims], cshape)) if cshape else 0
        fields = [texts[flat] if d == coord else labels[d][at[d]] if labels[d] else str(at[d])
                  for d in index_dims]
        if coord not in index_dims:
            fields.append(texts[flat])
        lines.append(",".join(fields))
    return "\n".join(lines) + "\n"


def check(path: Path, ds: xr.Dataset, coord: str) -> None:
    o = xr.open_zarr(path, decode_timedelta=True)
    frame = o["d"].to_dataframe()
    want = frame[[]] if coord in o["d"].dims else frame[[coord]]
    dims, texts = dump(path, coord)
    assert dims == list(o[coord].dims)
    assert expected_csv(path, o, coord, dims, texts) == want.to_csv()


def drop_chunk(path: Path, fmt: int, name: str, key: str) -> None:
    os.remove(path / name / (f"c/{key}" if fmt == 3 else key))


COORDS = {
    "f64": (np.array(FLOATS), {}),
    "f32": (np.array(FLOATS32, dtype="f4"), {}),
    "i1": (np.array([-128, 127, 0, -1, 5, 6, 7], dtype="i1"), {}),
    "i2": (np.array([-32768, 32767, 0, -1, 5, 6, 7], dtype="i2"), {}),
    "i4": (np.array([-(2**31), 2**31 - 1, 0, -1, 5, 6, 7], dtype="i4"), {}),
    "i8": (np.array([-(2**63), 2**63 - 1, 0, -1, 5, 6, 7], dtype="i8"), {}),
    "u1": (np.array([0, 255, 1, 2, 3, 4, 5], dtype="u1"), {}),
    "u2": (np.array([0, 65535, 1, 2, 3, 4, 5], dtype="u2"), {}),
    "u4": (np.array([0, 2**32 - 1, 1, 2, 3, 4, 5], dtype="u4"), {}),
    "u8": (np.array([0, 2**64 - 1, 1, 2, 3, 4, 5], dtype="u8"), {}),
    "b": (np.array([True, False, True, True, False, False, True]), {}),
    "s": (np.array(STRINGS, dtype=object), {}),
    "U": (np.array(STRINGS, dtype="<U11"), {}),
    "S": (np.array([b"ab", b"a'", b'a"', b"\x00\n\xff\\", b"", b"a,b", b"x\x00"], dtype="S4"), {}),
    "imask": (np.array([5, 6, 5, 7, 8, 9, 10], dtype="i4"), {"_FillValue": 5}),
    "i2mask": (np.array([5, 6, 5, 7, 8, 9, 10], dtype="i2"), {"_FillValue": 5}),
    "fmask": (np.array([1.5, 2.5, np.nan, 7, 8, 9, 2.5], dtype="f4"), {"_FillValue": 2.5}),
    "packed": (np.array([1.5, 2.5, np.nan, 7, 0.1, 3.3, -4.0]),
               {"dtype": "i2", "scale_factor": 0.1, "add_offset": 1.0, "_FillValue": -1}),
    "missing": (np.array([1.5, 2.5, -3.0, 7, 0.1, 3.3, -4.0]), {"_FillValue": -3.0}),
}


def dataset() -> xr.Dataset:
    d = np.arange(N, dtype="i8").astype("timedelta64[s]")
    coords = {k: ("x", v) for k, (v, _) in COORDS.items()}
    return xr.Dataset({"d": ("x", d)}, coords=coords)


@pytest.mark.parametrize("fmt", [2, 3])
def test_coordinates(tmp_path: Path, fmt: int) -> None:
    path = tmp_path / f"s{fmt}.zarr"
    enc = {k: {"chunks": (3,), **e} for k, (_, e) in COORDS.items()}
    dataset().to_zarr(path, zarr_format=fmt, consolidated=False, encoding=enc)
    for name in COORDS:
        check(path, dataset(), name)
    for name in ("f64", "f32", "i4", "u8", "b", "s", "U", "S", "imask", "packed", "missing"):
        drop_chunk(path, fmt, name, "1")  # read as the fill value, then masked
    for name in COORDS:
        check(path, dataset(), name)


@pytest.mark.parametrize("fmt", [2, 3])
def test_dimension_and_2d(tmp_path: Path, fmt: int) -> None:
    path = tmp_path / f"g{fmt}.zarr"
    d = np.arange(15, dtype="i8").reshape(5, 3).astype("timedelta64[ms]")
    ds = xr.Dataset({"d": (("lat", "y"), d)},
                    coords={"lat": ("lat", np.array([0.5, -90.0, 1e-7, 45.25, 3.0])),
                            "grid": (("lat", "y"), np.linspace(-1, 1, 15).reshape(5, 3).astype("f4")),
                            "name": (("y",), np.array(["u", "v,w", "x"], dtype=object))})
    ds.to_zarr(path, zarr_format=fmt, consolidated=False,
               encoding={"grid": {"chunks": (2, 2)}, "lat": {"chunks": (2,)}})
    for name in ("lat", "grid", "name"):
        check(path, ds, name)


def test_sharded(tmp_path: Path) -> None:
    path = tmp_path / "sh.zarr"
    ds = dataset()
    ds.to_zarr(path, zarr_format=3, consolidated=False,
               encoding={"f64": {"chunks": (2,), "shards": (4,)}, "i2": {"chunks": (2,), "shards": (4,)}})
    for name in ("f64", "i2"):
        check(path, ds, name)


def test_time_type_unsupported(tmp_path: Path) -> None:
    path = tmp_path / "t.zarr"
    dataset().to_zarr(path, zarr_format=3, consolidated=False)
    r = subprocess.run([str(build_dir() / "coordtext_dump"), str(path), "d"], capture_output=True,
                       timeout=60)
    assert r.returncode == 1 and b"unsupported" in r.stderr.lower(), r.stderr


def test_v2_fill_values(tmp_path: Path) -> None:
    """v2 fill values written by zarr-python: xarray masks elements equal to
    them (a bool fill value of false hides every False); missing chunks read
    as them."""
    import zarr

    path = tmp_path / "f2.zarr"
    g = zarr.open_group(path, mode="w", zarr_format=2)
    dims = {"_ARRAY_DIMENSIONS": ["x"]}
    d = g.create_array("d", shape=(4,), dtype="m8[s]", chunks=(2,), fill_value=None, attributes=dims)
    d[:] = np.arange(4).astype("m8[s]")
    arrays = {"b": (bool, False, [True, False]), "s": (str, "", ["", "q,"]),
              "u": ("<U3", "", ["", 'q"']), "i": ("i2", 3, [3, -4]), "f": ("f8", 0.5, [0.5, 0.25])}
    for name, (dtype, fill, first) in arrays.items():
        a = g.create_array(name, shape=(4,), dtype=dtype, chunks=(2,), fill_value=fill, attributes=dims)
        a[:2] = first
    o = xr.open_zarr(path, decode_timedelta=True).set_coords(list(arrays))
    for name in arrays:
        _, texts = dump(path, name)
        want = o["d"].to_dataframe()[[name]].to_csv()
        assert expected_csv(path, o, name, ["x"], texts) == want


@pytest.mark.parametrize("fmt", [2, 3])
def test_byte_orders(tmp_path: Path, fmt: int) -> None:
    """Big-endian numbers and UTF-32 (4-byte characters too)."""
    path = tmp_path / f"be{fmt}.zarr"
    ds = xr.Dataset({"d": ("x", np.arange(3).astype("timedelta64[s]"))},
                    coords={"bf": ("x", np.array([0.1, -2.5e-7, np.nan], dtype=">f4")),
                            "bi": ("x", np.array([-(2**62), 1, 2], dtype=">i8")),
                            "bu": ("x", np.array(["\U0001F600,", "ü", "zz"], dtype=">U2"))})
    ds.to_zarr(path, zarr_format=fmt, consolidated=False)
    for name in ("bf", "bi", "bu"):
        check(path, ds, name)
