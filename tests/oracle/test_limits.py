"""Limits at their boundaries, and the line that says what a mount shows.

- Arrays of exactly 2^56 elements are shown (README: "at most 2^56"), with
  every shape value read exactly (a JSON double holds integers only up to
  2^53); one element more is left out with a log line.
- Names of 251..255 bytes (valid on every Linux file system): a group keeps
  its name; an array's files must fit NAME_MAX with ".info", so they are
  named by a stem: the first bytes of the name (whole UTF-8 characters),
  "~" and 8 hex digits of a hash of the whole name.  The CSV header and
  .info keep the whole name.
- At mount, one line says how many arrays were found and how many shown.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import zarr

import oracle

warnings.filterwarnings("ignore")

E56 = 2**56


def array_doc(shape, chunks, dtype=None) -> dict:
    return {
        "zarr_format": 3, "node_type": "array", "shape": list(shape),
        "data_type": dtype or {"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 1}},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "NaT" if dtype is None else 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {},
    }


def write_node(store, path: str, doc: dict) -> None:
    d = store / path
    d.mkdir(parents=True, exist_ok=True)
    (d / "zarr.json").write_text(json.dumps(doc))


def group(store) -> None:
    zarr.open_group(store=str(store), mode="w", zarr_format=3)


def info(m, name: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in m.read(f"{name}.info").decode().splitlines())


def test_shape_of_exactly_2_56_elements(tmp_path, zf_mount):
    store = tmp_path / "s.zarr"
    group(store)
    write_node(store, "max", array_doc([E56], [2**20]))
    write_node(store, "exact", array_doc([E56 - 1], [2**20]))  # not a double: must be read exactly
    write_node(store, "square", array_doc([2**28, 2**28], [2**14, 2**14]))
    write_node(store, "over", array_doc([E56 + 1], [2**20]))
    write_node(store, "square_over", array_doc([2**28, 2**28 + 1], [2**14, 2**14]))
    m = zf_mount(store)
    names = m.listdir()  # listing only: sizing 2^56 elements would take forever
    assert [n for n in names if n.endswith(".info")] == ["exact.info", "max.info", "square.info"]
    assert info(m, "max")["shape"] == f"[{E56}]" and info(m, "max")["elements"] == str(E56)
    assert info(m, "exact")["shape"] == f"[{E56 - 1}]"
    assert info(m, "square")["elements"] == str(E56)
    lines = m.log().splitlines()
    for name in ("over", "square_over"):
        assert any(f"/{name}: left out:" in x and "2^56" in x for x in lines), lines


def long_names() -> list[str]:
    names = ["n" * k for k in (250, 251, 254, 255)]
    names.append("\u00e9" * 127)        # 254 bytes of 2-byte characters: a cut must not split one
    names.append("d" * 240 + "\u20ac" * 5)  # 255 bytes, a 3-byte character across the cut
    return names


def test_names_of_251_to_255_bytes(tmp_path, zf_mount):
    store = tmp_path / "s.zarr"
    group(store)
    want = {}
    names = long_names()
    for i, name in enumerate(names):
        a = zarr.create_array(store=str(store), name=name, shape=(3,), chunks=(3,), dtype="m8[s]",
                              fill_value=np.timedelta64("NaT", "s"))
        a[:] = np.array([i, 60 * i, 3600 * i], dtype="i8").view("m8[s]")
        want[name] = oracle.expected_txt(a[:])
    zarr.open_group(store=str(store), path="g" * 255, mode="w")
    zarr.create_array(store=str(store), name="g" * 255 + "/inner", shape=(2,), chunks=(2,),
                      dtype="m8[s]", fill_value=np.timedelta64("NaT", "s"))
    m = zf_mount(store)
    listing = m.listdir()
    assert "g" * 255 in listing, "a group keeps a 255-byte name"
    assert m.listdir("g" * 255) == ["inner.csv", "inner.info", "inner.txt"]
    stem_of = {info(m, f[:-5])["name"]: f[:-5] for f in listing if f.endswith(".info")}
    assert sorted(stem_of) == sorted(names)
    for name in names:
        stem, raw = stem_of[name], name.encode()
        if len(raw) <= 250:
            assert stem == name
        else:
            cut = raw[:241].decode("utf-8", errors="ignore")  # whole characters only
            assert re.fullmatch(re.escape(cut) + r"~[0-9a-f]{8}", stem), (name, stem)
        for ext in ("txt", "csv", "info"):
            assert len(f"{stem}.{ext}".encode()) <= 255
            assert f"{stem}.{ext}" in listing, (stem, ext)
        assert m.read(f"{stem}.txt") == want[name]
        assert m.read(f"{stem}.csv").split(b"\n", 1)[0] == f"dim_0,{name}".encode()
    assert len(listing) == 3 * len(names) + 1
    log = m.log()
    assert log.count("its files are") == sum(len(n.encode()) > 250 for n in names), log
    assert "not safe" not in log, log
    # the same stems on every mount
    assert zf_mount(store).listdir() == listing


def test_mount_says_what_it_shows(tmp_path, zf_mount):
    store = tmp_path / "s.zarr"
    group(store)
    for name in ("ints", "floats"):
        zarr.create_array(store=str(store), name=name, shape=(4,), chunks=(4,), dtype="i8")
    write_node(store, "broken", {"zarr_format": 3, "node_type": "array", "shape": "nope"})
    m = zf_mount(store)
    assert m.listdir() == []
    assert "zarrfs: warning: 2 arrays found, 0 shown (2 of other data types); 1 nodes left out for their " \
        "metadata\n" in m.log(), m.log()
