"""Consolidated metadata (v3 inline in the root zarr.json, v2 .zmetadata).

zarrfs takes each node's metadata from the consolidated document instead of
reading the node's own file, unless that file is newer than the document (the
node changed after consolidation); nodes on disk but absent from it still
appear, nodes in it whose directory is gone do not, and an unusable
consolidated document or entry falls back to the nodes' own metadata with a
log line.  Expected values come from zarr-python (each array read through its
own metadata, before the store is altered).
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
import zarr

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

import oracle

FILL = 2**53 + 1  # not representable as a double: must be read exactly
T0 = 1_700_000_000  # mtime given to the consolidated document


def make_array(group, name, n, seed):
    a = group.create_array(name, shape=(n,), chunks=(4,), dtype="m8[ns]",
                           fill_value=np.timedelta64(FILL, "ns"),
                           dimension_names=["lead"] if group.metadata.zarr_format == 3 else None)
    if group.metadata.zarr_format == 2:
        a.attrs["_ARRAY_DIMENSIONS"] = ["lead"]
    rng = np.random.default_rng(seed)
    vals = rng.integers(-10**15, 10**15, size=n - 2)
    vals[1] = np.iinfo(np.int64).min  # NaT
    a[: n - 2] = vals.astype("m8[ns]")  # the last chunk stays missing: FILL
    return a


def own_doc(fmt):
    return "zarr.json" if fmt == 3 else ".zarray"


def cons_path(store, fmt):
    return store / ("zarr.json" if fmt == 3 else ".zmetadata")


def cons_entries(doc, fmt):
    """The dict of node documents inside a loaded consolidated document."""
    return doc["consolidated_metadata"]["metadata"] if fmt == 3 else doc["metadata"]


def entry_key(path, fmt):
    return path if fmt == 3 else f"{path}/.zarray"


def set_mtimes(store, fmt, newer=()):
    """Every metadata file older than the consolidated document, except the
    nodes in `newer`, whose own document is made newer."""
    for dirpath, _, files in os.walk(store):
        for f in files:
            if f in ("zarr.json", ".zarray", ".zattrs", ".zgroup"):
                os.utime(os.path.join(dirpath, f), (T0 - 100, T0 - 100))
    for path in newer:
        os.utime(store / path / own_doc(fmt), (T0 + 100, T0 + 100))
    os.utime(cons_path(store, fmt), (T0, T0))


def expected_of(store, path):
    vals, unit, scale, dims = oracle.read_array(str(store), path)
    name = path.rsplit("/", 1)[-1]
    return (oracle.expected_txt(vals, unit, scale),
            oracle.expected_csv(vals, name, dims, unit, scale))


def check(m, path, exp):
    txt, csv = exp
    assert m.read(f"{path}.txt") == txt, path
    assert m.stat(f"{path}.txt").st_size == len(txt), path
    assert m.read(f"{path}.csv") == csv, path


@pytest.fixture(params=[3, 2], ids=["v3", "v2"])
def altered_store(request, tmp_path):
    """A consolidated store, then altered the ways a real store drifts."""
    fmt = request.param
    store = tmp_path / f"cons{fmt}.zarr"
    root = zarr.open_group(str(store), mode="w", zarr_format=fmt)
    g = root.create_group("g")
    for i, name in enumerate(["keep", "only_cons", "stale_own", "resized", "removed", "bad_entry"]):
        make_array(g, name, 10, seed=i)
    zarr.consolidate_metadata(str(store))
    exp = {f"g/{n}": expected_of(store, f"g/{n}")
           for n in ["keep", "only_cons", "stale_own", "bad_entry"]}

    # only_cons: its own metadata is gone (its chunks remain)
    (store / "g/only_cons" / own_doc(fmt)).unlink()
    if fmt == 2:
        (store / "g/only_cons/.zattrs").unlink()
    # stale_own: its own document says something else but is older than the consolidated copy
    doc = json.loads((store / "g/stale_own" / own_doc(fmt)).read_text())
    doc["shape"] = [3]
    (store / "g/stale_own" / own_doc(fmt)).write_text(json.dumps(doc))
    # resized after consolidation: its own, newer document is authoritative
    zarr.open_array(str(store), path="g/resized", mode="r+").resize((13,))
    exp["g/resized"] = expected_of(store, "g/resized")
    # added after consolidation; removed after consolidation
    make_array(zarr.open_group(str(store), path="g", mode="r+", use_consolidated=False), "added", 9, 7)
    exp["g/added"] = expected_of(store, "g/added")
    shutil.rmtree(store / "g/removed")
    # bad_entry: the consolidated copy is invalid, its own document is fine
    cdoc = json.loads(cons_path(store, fmt).read_text())
    entry = cons_entries(cdoc, fmt)[entry_key("g/bad_entry", fmt)]
    if fmt == 3:
        entry["data_type"]["configuration"]["unit"] = "fortnight"
    else:
        entry["dtype"] = "<m8[fortnight]"
    cons_path(store, fmt).write_text(json.dumps(cdoc))
    set_mtimes(store, fmt, newer=["g/resized", "g/added"])
    return fmt, store, exp


def test_consolidated_store_as_it_drifts(altered_store, zf_mount):
    fmt, store, exp = altered_store
    m = zf_mount(store)
    names = {n[:-4] for n in m.listdir("g") if n.endswith(".txt")}
    assert names == {"keep", "only_cons", "stale_own", "resized", "added", "bad_entry"}, names
    for path, e in exp.items():
        check(m, path, e)
    # the consolidated shape was used for stale_own (its own file says 3)
    assert "shape: [10]" in m.read("g/stale_own.info").decode()
    assert str(FILL) in m.read("g/only_cons.info").decode()
    assert "g/bad_entry: consolidated metadata ignored for this node" in m.log(), m.log()
    assert "fortnight" in m.log()


def test_unmodified_consolidated_store_matches_zarr_python(tmp_path, zf_mount):
    for fmt in (3, 2):
        store = tmp_path / f"plain{fmt}.zarr"
        root = zarr.open_group(str(store), mode="w", zarr_format=fmt)
        sub = root.create_group("a").create_group("b")
        make_array(root, "top", 11, 1)
        make_array(sub, "deep", 7, 2)
        zarr.consolidate_metadata(str(store))
        m = zf_mount(store)
        check(m, "top", expected_of(store, "top"))
        check(m, "a/b/deep", expected_of(store, "a/b/deep"))
        assert "consolidated" not in m.log(), m.log()


def test_nested_inline_metadata_v3(tmp_path, zf_mount):
    """A group entry carrying its children's metadata (paths relative to it)."""
    store = tmp_path / "nested.zarr"
    root = zarr.open_group(str(store), mode="w", zarr_format=3)
    make_array(root.create_group("g"), "arr", 10, 3)
    exp = expected_of(store, "g/arr")
    arr_doc = json.loads((store / "g/arr/zarr.json").read_text())
    rdoc = json.loads((store / "zarr.json").read_text())
    rdoc["consolidated_metadata"] = {"kind": "inline", "must_understand": False, "metadata": {
        "g": {"zarr_format": 3, "node_type": "group", "attributes": {},
              "consolidated_metadata": {"kind": "inline", "must_understand": False,
                                        "metadata": {"arr": arr_doc}}}}}
    (store / "zarr.json").write_text(json.dumps(rdoc))
    (store / "g/arr/zarr.json").unlink()
    m = zf_mount(store)
    check(m, "g/arr", exp)


def consolidated_store(tmp_path, name, fmt, seed):
    """A store with one array g/arr, consolidated: (store, expected, document path)."""
    store = tmp_path / f"{name}{fmt}.zarr"
    root = zarr.open_group(str(store), mode="w", zarr_format=fmt)
    make_array(root.create_group("g"), "arr", 10, seed)
    zarr.consolidate_metadata(str(store))
    return store, expected_of(store, "g/arr"), cons_path(store, fmt)


@pytest.mark.parametrize("fmt,damage", [
    (3, lambda d: d["consolidated_metadata"].update(kind="remote")),
    (3, lambda d: d["consolidated_metadata"].pop("metadata")),
    (2, lambda d: d.update(zarr_consolidated_format=2)),
    (2, None),
], ids=["v3-kind", "v3-no-metadata", "v2-version", "v2-not-json"])
def test_unusable_consolidated_metadata_falls_back(tmp_path, zf_mount, fmt, damage):
    store, exp, path = consolidated_store(tmp_path, "bad", fmt, 4)
    if damage is None:
        path.write_text(path.read_text()[:40])
    else:
        doc = json.loads(path.read_text())
        damage(doc)
        path.write_text(json.dumps(doc))
    m = zf_mount(store)
    check(m, "g/arr", exp)
    assert "consolidated metadata not used" in m.log(), m.log()


@pytest.mark.parametrize("fmt", [3, 2], ids=["v3", "v2"])
def test_keys_with_a_leading_slash(tmp_path, zf_mount, fmt):
    """Another writer may spell the node paths "/g/arr": the same nodes."""
    store, exp, path = consolidated_store(tmp_path, "slash", fmt, 5)
    doc = json.loads(path.read_text())
    entries = cons_entries(doc, fmt)
    for key in list(entries):
        entries["/" + key] = entries.pop(key)
    path.write_text(json.dumps(doc))
    (store / "g/arr" / own_doc(fmt)).unlink()  # only the consolidated copy describes it
    if fmt == 2:
        (store / "g/arr/.zattrs").unlink()
    m = zf_mount(store)
    check(m, "g/arr", exp)
