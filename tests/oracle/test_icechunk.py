"""Icechunk repositories (issue 26) against xarray reading them through icechunk.

Spec 2: the repositories of tests/data/icechunk/spec2 (icechunk 2.3, written
by tests/icechunk/gen_spec2.py); spec 1: written here by the venv's icechunk
1.1 (gen_spec1.py).  For every state (a branch, a tag, a snapshot id, a
second branch, virtual chunks) every .txt and .csv is compared byte for byte
(st_size, whole file, random preads) with xarray's text and with a mount of
a plain Zarr copy of the same keys.  Then what the issue asks of refs,
consent, faults, a branch that moves while mounted and the persisted index.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import zarrfs_bin
from test_cf import check_bytes

REPO = Path(__file__).resolve().parents[2]
SPEC2 = REPO / "tests" / "data" / "icechunk" / "spec2"
GEN1 = REPO / "tests" / "icechunk" / "gen_spec1.py"
FACTS2 = json.loads((SPEC2 / "facts.json").read_text())
CASES2 = json.loads((SPEC2 / "expected.json").read_text())["cases"]


@pytest.fixture(scope="module", autouse=True)
def own_index_cache(tmp_path_factory):
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture(scope="module")
def virt2():
    """the spec 2 virtual chunks' targets in place (an absolute path, as
    Icechunk requires: shared by concurrent runs, so written under a lock)"""
    target = Path(FACTS2["virt"])
    with open(str(target) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for f in (SPEC2 / "virt").iterdir():
            dst = target / f.name
            if not dst.exists() or dst.read_bytes() != f.read_bytes():
                target.mkdir(exist_ok=True)
                shutil.copyfile(f, dst)
            if dst.stat().st_mtime != FACTS2["virt_mtime"]:
                os.utime(dst, (FACTS2["virt_mtime"], FACTS2["virt_mtime"]))
        yield target
        fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="module")
def spec1(tmp_path_factory):
    """spec 1 repositories written now by icechunk 1.1, and their expected text"""
    out = tmp_path_factory.mktemp("spec1")
    env = dict(os.environ, RUST_LOG="error")
    r = subprocess.run([sys.executable, str(GEN1), str(out)], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return out


def mount_opts(case, extra=()):
    return ["-o", "nat="] + list(case["opts"]) + list(extra)


def check_case(m, case, plain):
    """every file of a state, and the listing: only those files"""
    want = {name + ext for name in case["files"] for ext in (".txt", ".csv", ".info")}
    got = set()
    for dirpath, _, files in os.walk(m.path()):
        rel = os.path.relpath(dirpath, m.path())
        got |= {os.path.normpath(os.path.join(rel, f)) for f in files}
    assert got == want
    for k, (name, texts) in enumerate(sorted(case["files"].items())):
        check_bytes(m, name + ".txt", texts["txt"].encode(), k)
        check_bytes(m, name + ".csv", texts["csv"].encode(), k + 1000)
        if plain is not None:  # the plain copy shows the same bytes
            assert plain.read(name + ".txt") == texts["txt"].encode()
            assert plain.read(name + ".csv") == texts["csv"].encode()


@pytest.mark.parametrize("case", CASES2, ids=[c["label"] for c in CASES2])
def test_spec2_states(zf_mount, virt2, case):
    m = zf_mount(SPEC2 / case["repo"], *mount_opts(case))
    plain = zf_mount(SPEC2 / case["plain"], "-o", "nat=")
    check_case(m, case, plain)
    name = sorted(case["files"])[0]
    info = m.read(name + ".info").decode()
    assert f"snapshot: {case['snapshot']}\n" in info
    assert "icechunk_spec: 2 (repo file; written by ic-2.3.0)" in info


def test_spec1_states(zf_mount, spec1):
    cases = json.loads((spec1 / "expected.json").read_text())["cases"]
    assert {c["label"] for c in cases} == {"v1", "main", "dev", "virtual1"}
    for case in cases:
        m = zf_mount(spec1 / case["repo"], *mount_opts(case))
        plain = zf_mount(spec1 / case["plain"], "-o", "nat=")
        check_case(m, case, plain)
        info = m.read(sorted(case["files"])[0] + ".info").decode()
        assert f"snapshot: {case['snapshot']}\n" in info and "icechunk_spec: 1 (refs/ folder" in info


def fails_to_mount(tmp_path, store, *opts):
    """zarrfs's exit status and stderr for a mount that must fail"""
    mnt = tmp_path / "mnt"
    mnt.mkdir(exist_ok=True)
    r = subprocess.run([str(zarrfs_bin()), "-f", *opts, str(store), str(mnt)], capture_output=True,
                       text=True, timeout=60)
    return r.returncode, r.stderr


def test_unknown_refs_list_what_exists(tmp_path, spec1):
    rc, err = fails_to_mount(tmp_path, SPEC2 / "forecast.icechunk", "-o", "branch=nope")
    assert rc == 1 and err.count("\n") == 1, err
    assert "no branch 'nope'; branches: dev, main; tags: v1, v3" in err
    rc, err = fails_to_mount(tmp_path, SPEC2 / "forecast.icechunk", "-o", "tag=tmp")
    assert rc == 1 and "tag 'tmp' was deleted" in err, err
    rc, err = fails_to_mount(tmp_path, spec1 / "forecast1.icechunk", "-o", "tag=gone")
    assert rc == 1 and "tag 'gone' was deleted" in err, err
    rc, err = fails_to_mount(tmp_path, spec1 / "forecast1.icechunk", "-o", "tag=nope")
    assert rc == 1 and "no tag 'nope'; branches: dev, main; tags: v1\n" in err, err
    rc, err = fails_to_mount(tmp_path, SPEC2 / "forecast.icechunk", "-o", "snapshot=" + "0" * 20)
    assert rc == 1 and "does not exist" in err, err
    rc, err = fails_to_mount(tmp_path, SPEC2 / "forecast.icechunk", "-o", "tag=v1,branch=dev")
    assert rc == 1 and "at most one" in err, err
    rc, err = fails_to_mount(tmp_path, SPEC2 / "plain" / "v1.zarr", "-o", "branch=main")
    assert rc == 1 and "Icechunk repositories only" in err, err


def expect_eio(m, rel):
    with pytest.raises(OSError) as e:
        m.read(rel)
    assert e.value.errno == errno.EIO, e.value


def test_virtual_needs_consent(zf_mount, virt2):
    case = next(c for c in CASES2 if c["label"] == "virtual")
    m = zf_mount(SPEC2 / case["repo"], "-o", "nat=")  # no -o virtual=
    assert sorted(m.listdir()) == sorted(n + e for n in case["files"] for e in (".txt", ".csv", ".info"))
    for name in case["files"]:
        expect_eio(m, name + ".txt")
    info = m.read("many.info").decode()
    assert "virtual_locations: file:///tmp/zarrfs-ic2-virtual/ (not authorised: " \
           "-o virtual=file:///tmp/zarrfs-ic2-virtual/)" in info, info
    lines = [x for x in m.log().splitlines() if "not authorised" in x]
    assert len(lines) == len(case["files"]), lines  # one per array, whatever its chunks
    assert all("add -o virtual=file:///tmp/zarrfs-ic2-virtual/" in x for x in lines)
    # a prefix that does not cover them is no consent either
    m2 = zf_mount(SPEC2 / case["repo"], "-o", "virtual=file:///tmp/zarrfs-ic2-virtual-no/")
    expect_eio(m2, "lead.txt")


# ----------------------------------------------------------------- faults

def state_of(label, cases=CASES2):
    return next(c for c in cases if c["label"] == label)


def each_file_right_or_eio(m, case):
    """every file reads as expected or fails with EIO, never other bytes (a
    .csv whose label coordinate cannot be read fails too: never index
    labels); the names of those that failed"""
    failed = set()
    for name, texts in sorted(case["files"].items()):
        for ext in ("txt", "csv"):
            try:
                got = m.read(f"{name}.{ext}")
            except OSError as e:
                assert e.errno == errno.EIO, e
                failed.add(name)
                continue
            assert got == texts[ext].encode(), f"{name}.{ext}: wrong bytes"
    return failed


def test_damaged_manifest_fails_what_it_holds(tmp_path, zf_mount):
    case = state_of("main")
    src = SPEC2 / case["repo"]
    manifests = sorted(p.name for p in (src / "manifests").iterdir())
    affected = set()
    for k, name in enumerate(manifests):
        repo = tmp_path / f"r{k}"
        shutil.copytree(src, repo)
        path = repo / "manifests" / name
        with open(path, "r+b") as f:
            f.truncate(path.stat().st_size // 2)
        m = zf_mount(repo, *mount_opts(case))
        failed = each_file_right_or_eio(m, case)
        assert len(failed) < len(case["files"])  # the rest stays readable
        if failed:
            assert f"manifests/{name}" in m.log(), m.log()
        affected |= failed
    assert len(affected) >= 5, affected  # every native array lives in one of them


def test_damaged_snapshot_and_missing_snapshot(tmp_path, zf_mount):
    main = state_of("main")
    repo = tmp_path / "r"
    shutil.copytree(SPEC2 / main["repo"], repo)
    snap = repo / "snapshots" / main["snapshot"]
    data = bytearray(snap.read_bytes())
    for i in range(60, len(data), 97):  # the zstd payload, after the 39-byte header
        data[i] ^= 0x5A
    snap.write_bytes(bytes(data))
    rc, err = fails_to_mount(tmp_path, repo)
    assert rc == 1 and err.count("\n") == 1 and f"snapshots/{main['snapshot']}" in err, err
    v1 = state_of("v1")  # another snapshot of the repository still mounts
    check_case(zf_mount(repo, *mount_opts(v1)), v1, None)
    snap.unlink()  # the repo file names a snapshot that does not exist
    rc, err = fails_to_mount(tmp_path, repo)
    assert rc == 1 and f"snapshot {main['snapshot']} does not exist" in err, err


def test_missing_and_short_chunk_files(tmp_path, zf_mount):
    case = state_of("v1")
    repo = tmp_path / "r"
    shutil.copytree(SPEC2 / case["repo"], repo)
    chunks = sorted((repo / "chunks").iterdir())
    chunks[0].unlink()
    with open(chunks[1], "r+b") as f:
        f.truncate(1)
    m = zf_mount(repo, *mount_opts(case))
    failed = each_file_right_or_eio(m, case)
    assert failed and len(failed) < len(case["files"])
    assert f"chunk file chunks/{chunks[0].name} does not exist" in m.log(), m.log()


@pytest.fixture
def spec1_scratch(tmp_path):
    """spec 1 repositories this test may damage or commit to"""
    out = tmp_path / "s1"
    r = subprocess.run([sys.executable, str(GEN1), str(out)], capture_output=True, text=True,
                       env=dict(os.environ, RUST_LOG="error"), timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return out


def test_virtual_faults(spec1_scratch, zf_mount):
    out = spec1_scratch
    cases = json.loads((out / "expected.json").read_text())["cases"]
    case = state_of("virtual1", cases)
    opts = mount_opts(case)
    virt = out / "virt"
    check_case(zf_mount(out / case["repo"], *opts), case, None)
    # lead/c/1 carries the file's ETag: a rewrite changes it
    lead = virt / "lead.bin"
    os.utime(lead, (case_time := 1735689600 + 7, case_time))
    m = zf_mount(out / case["repo"], *opts)
    try:  # sized from the persisted index, chunk 0 is right; or all of it fails
        assert m.preads("lead.txt", [(0, 10)])[0] == case["files"]["lead"]["txt"].encode()[:10]
    except OSError as e:  # (a coordinate whose values cannot be read fails its views)
        assert e.errno == errno.EIO, e
    expect_eio(m, "lead.txt")
    assert m.read("time.txt") == case["files"]["time"]["txt"].encode()  # time.bin is untouched
    assert "changed since the reference was written" in m.log(), m.log()
    # time/c/0 must not be newer than its last-modified check
    os.utime(virt / "time.bin", None)
    m = zf_mount(out / case["repo"], *opts)
    expect_eio(m, "time.txt")
    assert "modified after the time the reference has" in m.log(), m.log()
    # a missing object, and one shorter than the range
    lead.unlink()
    m = zf_mount(out / case["repo"], *opts)
    expect_eio(m, "lead.txt")
    assert "lead.bin" in m.log() and "does not exist" in m.log(), m.log()
    (virt / "time.bin").write_bytes(b"short")
    m = zf_mount(out / case["repo"], *opts)
    expect_eio(m, "time.txt")


# ----------------------------------------------------------------- refs that move

COMMIT = """
import os, sys, warnings, numpy as np, pandas as pd, xarray as xr, icechunk as ic
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[2])
from icdata import forecast
repo = ic.Repository.open(ic.local_filesystem_storage(sys.argv[1]))
s = repo.writable_session("main")
forecast("2025-01-04", 1, 99).to_zarr(s.store, append_dim="init_time", consolidated=False,
                                      safe_chunks=False)
print(s.commit("spec 1: one more"), flush=True)
os._exit(0)
"""


def test_branch_moves_while_mounted(spec1_scratch, zf_mount):
    repo = spec1_scratch / "forecast1.icechunk"
    cases = json.loads((spec1_scratch / "expected.json").read_text())["cases"]
    main, v1 = state_of("main", cases), state_of("v1", cases)
    m = zf_mount(repo, "-o", "nat=,timeout=0.2")
    tag = zf_mount(repo, "-o", "nat=,timeout=0.2,tag=v1")
    before = main["files"]["init_time"]["txt"].encode()
    assert m.read("init_time.txt") == before
    fd = os.open(m.path("init_time.txt"), os.O_RDONLY)
    try:
        r = subprocess.run([sys.executable, "-c", COMMIT, str(repo), str(GEN1.parent)],
                           capture_output=True, text=True, env=dict(os.environ, RUST_LOG="error"),
                           timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        new_id = r.stdout.strip().splitlines()[-1]
        deadline = time.monotonic() + 20
        while m.read("init_time.txt") == before:
            assert time.monotonic() < deadline, "the mount did not follow the branch"
            time.sleep(0.1)
        after = m.read("init_time.txt")
        assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1
        assert f"snapshot: {new_id}\n" in m.read("init_time.info").decode()
        assert os.pread(fd, len(before) + 10, 0) == before  # an open file keeps its version
    finally:
        os.close(fd)
    assert tag.read("init_time.txt") == v1["files"]["init_time"]["txt"].encode()
    assert "changed" not in tag.log()


def test_later_mount_sizes_without_chunk_reads(spec1_scratch, zf_mount):
    repo = spec1_scratch / "forecast1.icechunk"
    main = state_of("main", json.loads((spec1_scratch / "expected.json").read_text())["cases"])
    m = zf_mount(repo, "-o", "nat=")
    sizes = {n: m.stat(n + ".txt").st_size for n in main["files"]}
    assert sizes == {n: len(t["txt"].encode()) for n, t in main["files"].items()}
    native = [n for n in main["files"] if " 0 native" not in m.read(n + ".info").decode()]
    assert native
    shutil.move(str(repo / "chunks"), str(spec1_scratch / "chunks.away"))
    m2 = zf_mount(repo, "-o", "nat=")  # the persisted index: sizes, no chunk read
    assert {n: m2.stat(n + ".txt").st_size for n in main["files"]} == sizes
    for n in native:  # their chunk files are gone: read, they fail
        expect_eio(m2, n + ".txt")
