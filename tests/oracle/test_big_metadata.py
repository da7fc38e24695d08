"""Big metadata: a consolidated root zarr.json of 18+ MiB mounts; documents
over their limit are refused with a line naming the document and both sizes.

Limits (tree/walk.c): the root's documents (zarr.json, .zmetadata, which may
hold consolidated metadata) up to 1/16 of physical memory (at least 16 MiB);
every other node's document, and each node's entry inside consolidated
metadata, up to 16 MiB.

The big store is written directly as JSON (6,000 arrays with 3 KB of
attributes each, as zarr-python would consolidate them, one of them holding
data written by zarr-python), which keeps the test fast.
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest
import zarr

import oracle

warnings.filterwarnings("ignore")

N_ARRAYS = 6000
PAD = "x" * 3000
MIB = 1 << 20


def array_doc(shape, chunks, attributes=None) -> dict:
    return {
        "zarr_format": 3, "node_type": "array", "shape": list(shape),
        "data_type": {"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 1}},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "NaT", "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": attributes or {}, "dimension_names": None, "storage_transformers": [],
    }


def write_json(path, doc, mtime=None) -> None:
    with open(path, "w") as f:
        json.dump(doc, f)
    if mtime is not None:
        os.utime(path, (mtime, mtime))


@pytest.fixture(scope="module")
def big_store(tmp_path_factory):
    """18+ MiB of consolidated metadata; "data" holds values written by zarr-python"""
    store = tmp_path_factory.mktemp("big") / "big.zarr"
    root = {"zarr_format": 3, "node_type": "group", "attributes": {}}
    zarr.open_group(store=str(store), mode="w", zarr_format=3)
    data = zarr.create_array(store=str(store), name="data", shape=(100,), chunks=(30,),
                             dtype="m8[s]", compressors=None, fill_value=np.timedelta64("NaT", "s"))
    data[:] = (np.arange(100, dtype="i8") ** 3).view("m8[s]")
    with open(store / "data" / "zarr.json") as f:
        entries = {"data": dict(json.load(f), attributes={"pad": PAD})}
    old = 1_000_000_000  # every node's own document is older than the consolidated copy
    os.utime(store / "data" / "zarr.json", (old, old))
    for i in range(N_ARRAYS):
        name = f"a{i:05d}"
        (store / name).mkdir()
        write_json(store / name / "zarr.json", array_doc([3], [3]), old)
        entries[name] = array_doc([3], [3], {"pad": PAD, "i": i})
    root["consolidated_metadata"] = {"kind": "inline", "must_understand": False, "metadata": entries}
    write_json(store / "zarr.json", root)
    assert os.path.getsize(store / "zarr.json") > 18 * MIB
    return store


def test_consolidated_over_16_mib_mounts(big_store, zf_mount):
    m = zf_mount(big_store)
    names = m.listdir()
    assert len([n for n in names if n.endswith(".txt")]) == N_ARRAYS + 1
    vals, unit, scale, _ = oracle.read_array(str(big_store), "data")
    assert m.read("data.txt") == oracle.expected_txt(vals, unit, scale)
    assert m.read("a04321.txt") == b"NaT\nNaT\nNaT\n"
    assert "consolidated metadata not used" not in m.log(), m.log()


def test_node_document_over_16_mib_is_refused_by_name(tmp_path, zf_mount):
    store = tmp_path / "s.zarr"
    zarr.open_group(store=str(store), mode="w", zarr_format=3)
    for name in ("ok", "huge"):
        (store / name).mkdir()
        attrs = {"pad": "y" * (17 * MIB)} if name == "huge" else {}
        write_json(store / name / "zarr.json", array_doc([3], [3], attrs))
    size = os.path.getsize(store / "huge" / "zarr.json")
    m = zf_mount(store)
    assert m.listdir() == ["ok.csv", "ok.info", "ok.txt"]
    line = [x for x in m.log().splitlines() if "/huge: left out: zarr.json:" in x]
    assert line and f"{size} bytes" in line[0] and f"{16 * MIB} " in line[0], m.log()


def test_consolidated_entry_over_16_mib_falls_back_to_the_node(tmp_path, zf_mount):
    store = tmp_path / "s.zarr"
    zarr.open_group(store=str(store), mode="w", zarr_format=3)
    (store / "g").mkdir()
    write_json(store / "g" / "zarr.json", array_doc([2], [2]), 1_000_000_000)
    entry = array_doc([2], [2], {"pad": "z" * (17 * MIB)})
    root = {"zarr_format": 3, "node_type": "group", "attributes": {},
            "consolidated_metadata": {"kind": "inline", "must_understand": False,
                                      "metadata": {"g": entry}}}
    write_json(store / "zarr.json", root)
    m = zf_mount(store)
    assert m.read("g.txt") == b"NaT\nNaT\n"  # from g's own zarr.json
    assert "g: consolidated metadata ignored for this node: its entry is" in m.log(), m.log()
