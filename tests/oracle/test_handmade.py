"""Hand-made v3 stores for what zarr-python does not write.

zstd frames without a content size (as TensorStore writes them), bare-string
codec names, "must_understand": false fields, and unknown codecs or fields
(the array is left out with a log line naming it; its siblings still read).
"""

from __future__ import annotations

import json
import struct

import numpy as np
import zstandard

import oracle

VALUES = [0, 1, -1, 86_400_000_000_000, 123_456_789, -(2**63), 2**63 - 1, 5_000_000_000]


def meta(codecs, shape=(8,), chunks=(4,), extra=None, fill="NaT"):
    m = {"zarr_format": 3, "node_type": "array", "shape": list(shape),
         "data_type": {"name": "numpy.timedelta64", "configuration": {"unit": "ns", "scale_factor": 1}},
         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
         "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
         "fill_value": fill, "codecs": codecs, "attributes": {}}
    m.update(extra or {})
    return m


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def write_array(root, name, m, encode):
    d = root / name
    (d / "c").mkdir(parents=True)
    (d / "zarr.json").write_text(json.dumps(m))
    n = m["chunks"] if "chunks" in m else m["chunk_grid"]["configuration"]["chunk_shape"][0]
    for k in range(len(VALUES) // n):
        raw = struct.pack(f"<{n}q", *VALUES[k * n:(k + 1) * n])
        (d / "c" / str(k)).write_bytes(encode(raw))


def make_store(root):
    root.mkdir()
    (root / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group"}))
    le = {"name": "bytes", "configuration": {"endian": "little"}}
    no_size = zstandard.ZstdCompressor(level=3, write_content_size=False)
    write_array(root, "zstd_no_size", meta([le, {"name": "zstd", "configuration": {"level": 3, "checksum": False}}]),
                no_size.compress)
    write_array(root, "zstd_checksum_no_size", meta([le, "zstd"]),
                zstandard.ZstdCompressor(write_content_size=False, write_checksum=True).compress)
    write_array(root, "bare_crc32c", meta([le, "crc32c"]),
                lambda raw: raw + struct.pack("<I", crc32c(raw)))
    write_array(root, "must_understand_false",
                meta([dict(le, must_understand=False)],
                     extra={"my_extension": {"must_understand": False, "anything": [1, 2]}}),
                lambda raw: raw)
    write_array(root, "unknown_codec", meta([le, {"name": "made_up_codec"}]), lambda raw: raw)
    write_array(root, "unknown_field", meta([le], extra={"my_extension": {"value": 1}}), lambda raw: raw)
    write_array(root, "unknown_field_must", meta([le], extra={"my_extension": {"must_understand": True}}),
                lambda raw: raw)


def expected():
    return oracle.expected_txt(np.array(VALUES, dtype="i8").view("m8[ns]"))


def test_handmade_stores(tmp_path, zf_mount):
    store = tmp_path / "hand.zarr"
    make_store(store)
    m = zf_mount(store)
    names = m.listdir()
    for name in ["zstd_no_size", "zstd_checksum_no_size", "bare_crc32c", "must_understand_false"]:
        assert f"{name}.txt" in names
        assert m.read(f"{name}.txt") == expected(), name
        assert m.stat(f"{name}.txt").st_size == len(expected())
    for name in ["unknown_codec", "unknown_field", "unknown_field_must"]:
        assert f"{name}.txt" not in names, name
        assert f"hand.zarr/{name}" in m.log() or name in m.log(), m.log()
    assert "made_up_codec" in m.log()


def test_crc32c_mismatch_is_eio(tmp_path, zf_mount):
    store = tmp_path / "crc.zarr"
    make_store(store)
    chunk = store / "bare_crc32c" / "c" / "1"
    data = bytearray(chunk.read_bytes())
    data[3] ^= 0xFF
    chunk.write_bytes(bytes(data))
    m = zf_mount(store)
    exp = expected()
    first_line_end = exp.index(b"\n", 0) + 1
    assert m.preads("bare_crc32c.txt", [(0, first_line_end)]) == [exp[:first_line_end]]
    try:
        m.read("bare_crc32c.txt")
    except OSError as e:
        assert e.errno == 5
    else:
        raise AssertionError("reading a chunk with a bad crc32c did not fail")
    assert "crc32c" in m.log() and "c/1" in m.log()
    assert m.read("zstd_no_size.txt") == exp
