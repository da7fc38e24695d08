#!/usr/bin/env bats
# scale.bats - the cost follows what is stored, not the chunk grid (issue 13
# item 6): a sparse array of 2^24 possible chunk keys is sized in well under
# 2 s of daemon CPU and within cache_size, nested chunk directories that do
# not exist are never listed, .info counts from the listing the size pass
# took, and a chunk that appears in a sparse array is still noticed.
# Bounds are on the daemon's CPU time (not wall time: the machine may be
# loaded), with generous slack.

load helpers

# py ARGS...: the venv's python with a timeout.
py() { PYTHONWARNINGS=ignore zf_t "$ZF_PYTHON" "$@"; }

# mk_sparse STORE N STORED [2d]: v3 array "a" of N [s] values, chunk shape [1]
# (2d: a square of side sqrt(N), chunks [1, 1], nested keys c/i/j), STORED
# chunks written directly (zarr-python would take minutes for 10^6); prints
# the exact .txt size (pandas text, one line per value).
mk_sparse() {
    py - "$@" <<'EOF' || fail "cannot make $1"
import json, math, os, sys
import numpy as np, pandas as pd
out, n, stored = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
two = len(sys.argv) > 4
side = math.isqrt(n)
shape, chunks = ([side, side], [1, 1]) if two else ([n], [1])
os.makedirs(f"{out}/a/c")
json.dump({"zarr_format": 3, "node_type": "group", "attributes": {}}, open(f"{out}/zarr.json", "w"))
json.dump({"zarr_format": 3, "node_type": "array", "shape": shape,
           "data_type": {"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 1}},
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
           "attributes": {}}, open(f"{out}/a/zarr.json", "w"))
size, step = 0, n // stored
for i in range(stored):
    k = i * step
    if two:
        os.makedirs(f"{out}/a/c/{k // side}", exist_ok=True)
        path = f"{out}/a/c/{k // side}/{k % side}"
    else:
        path = f"{out}/a/c/{k}"
    v = k * 1000 + 7
    with open(path, "wb") as f:
        f.write(np.int64(v).tobytes())
    size += len(str(pd.Timedelta(seconds=v))) + 1
print(size + (n - stored) * len(str(pd.Timedelta(0)) + "\n"))
EOF
}

# cpu_ticks PID: user + system CPU time of a process, in clock ticks
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# hwm_kib PID: the process's peak resident memory (VmHWM), KiB
hwm_kib() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }

setup() {
    [[ ${ZF_VALGRIND:-0} == 0 ]] || skip "timing bounds mean nothing under valgrind"
    TICK=$(getconf CLK_TCK)
}

@test "first stat of a 1-D array of 2^24 possible chunks, 10 stored: < 2 s CPU, memory within cache_size" {
    local w
    zf_mktemp w
    local want
    want=$(mk_sparse "$w/s.zarr" $((1 << 24)) 10)
    zf_mount "$w/s.zarr" -o no_index_cache,cache_size=64M,timeout=1000
    local t0 t1
    t0=$(cpu_ticks "$ZF_PID")
    run zf_t stat -c %s "$ZF_MNT/a.txt"
    assert_success
    assert_output "$want"
    t1=$(cpu_ticks "$ZF_PID")
    (( (t1 - t0) < 2 * TICK )) || fail "first stat took $(( (t1 - t0) * 1000 / TICK )) ms of CPU"
    run zf_t tail -n 1 "$ZF_MNT/a.txt"
    assert_output "0 days 00:00:00"
    run zf_t grep chunks_present "$ZF_MNT/a.info"
    assert_output "chunks_present: 10 of 16777216"
    local hwm
    hwm=$(hwm_kib "$ZF_PID")
    (( hwm < 64 * 1024 )) || fail "VmHWM ${hwm} KiB is above cache_size (64 MiB)"
}

@test "first stat of a nested 2-D array of 2^24 possible chunks, 10 stored: < 2 s CPU" {
    local w
    zf_mktemp w
    local want
    want=$(mk_sparse "$w/s.zarr" $((1 << 24)) 10 2d)
    zf_mount "$w/s.zarr" -o no_index_cache,cache_size=64M,timeout=1000
    local t0 t1
    t0=$(cpu_ticks "$ZF_PID")
    run zf_t stat -c %s "$ZF_MNT/a.txt"
    assert_success
    # each line of a 2-D array's .txt is still one value
    assert_output "$want"
    t1=$(cpu_ticks "$ZF_PID")
    (( (t1 - t0) < 2 * TICK )) || fail "first stat took $(( (t1 - t0) * 1000 / TICK )) ms of CPU"
    run zf_t grep chunks_present "$ZF_MNT/a.info"
    assert_output "chunks_present: 10 of 16777216"
    (( $(hwm_kib "$ZF_PID") < 64 * 1024 )) || fail "VmHWM above cache_size"
}

@test ".info after the size pass counts from its listing, not by listing again" {
    local w
    zf_mktemp w
    mk_sparse "$w/s.zarr" 100000 100000 >/dev/null
    zf_mount "$w/s.zarr" -o no_index_cache,timeout=1000
    run zf_t stat -c %s "$ZF_MNT/a.txt"
    assert_success
    local t0 t1
    t0=$(cpu_ticks "$ZF_PID")
    run zf_t grep chunks_present "$ZF_MNT/a.info"
    assert_output "chunks_present: 100000 of 100000"
    t1=$(cpu_ticks "$ZF_PID")
    # listing 10^5 chunks again takes ~0.25 s of CPU; the count itself ~0
    (( (t1 - t0) * 1000 / TICK < 60 )) || fail ".info took $(( (t1 - t0) * 1000 / TICK )) ms of CPU"
}

@test "a chunk appearing in a sparse array is noticed; tail after idle stays fast" {
    local w
    zf_mktemp w
    local want
    want=$(mk_sparse "$w/s.zarr" $((1 << 20)) 10)
    zf_mount "$w/s.zarr" -o no_index_cache,timeout=0.3
    run zf_t stat -c %s "$ZF_MNT/a.txt"
    assert_output "$want"
    sleep 1 # idle past the timeout: the re-check runs in the background
    local t0 t1
    t0=$(cpu_ticks "$ZF_PID")
    run zf_t tail -n 1 "$ZF_MNT/a.txt"
    assert_output "0 days 00:00:00"
    t1=$(cpu_ticks "$ZF_PID")
    (( (t1 - t0) * 1000 / TICK < 500 )) || fail "tail after idle took $(( (t1 - t0) * 1000 / TICK )) ms of CPU"
    # the last element's chunk appears: 1 day (86400 s) instead of 0
    "$ZF_PYTHON" -c 'import sys, numpy as np; open(sys.argv[1], "wb").write(np.int64(86400).tobytes())' \
        "$w/s.zarr/a/c/$(((1 << 20) - 1))"
    local deadline=$((SECONDS + 15)) last=
    while ((SECONDS < deadline)); do
        last=$(zf_t tail -n 1 "$ZF_MNT/a.txt" 2>/dev/null) || true
        [[ $last == "1 days 00:00:00" ]] && break
        sleep 0.2
    done
    [[ $last == "1 days 00:00:00" ]] || fail "the new chunk was not noticed: last line '$last'"
    run zf_t stat -c %s "$ZF_MNT/a.txt"
    assert_output "$want" # "1 days 00:00:00" is as long as "0 days 00:00:00"
}

@test ".info before any stat counts 10^5 chunks from directory entries, not a stat each" {
    if ldd "$ZF_BIN" 2>/dev/null | grep -qE 'lib(a|t)san'; then
        skip "timing bounds mean nothing under a sanitizer"
    fi
    local w
    zf_mktemp w
    mk_sparse "$w/s.zarr" 100000 100000 >/dev/null
    zf_mount "$w/s.zarr" -o no_index_cache,timeout=1000
    local t0 t1
    t0=$(cpu_ticks "$ZF_PID")
    run zf_t grep chunks_present "$ZF_MNT/a.info"
    assert_output "chunks_present: 100000 of 100000"
    t1=$(cpu_ticks "$ZF_PID")
    # a stat per chunk took ~0.25 s of CPU for 10^5 chunks; the entries' types
    # take 60-90 ms on a 2-CPU machine while other suites run (100 ms, the old
    # bound, was met once in a full run): 150 ms still tells the two apart
    (( (t1 - t0) * 1000 / TICK < 150 )) || fail ".info took $(( (t1 - t0) * 1000 / TICK )) ms of CPU"
}
