#!/usr/bin/env bats
# generations.bats - stores that change while mounted: the re-check runs off
# the request path, and a file opened (or looked up) before a change keeps
# answering from its own version until the kernel lets it go.

load helpers

READER_PID= HELD_FD=

teardown() {
    # a reader or an fd still holding a file would keep the mount busy
    if [[ -n $READER_PID ]]; then
        kill "$READER_PID" 2>/dev/null || true
        wait "$READER_PID" 2>/dev/null || true
    fi
    [[ -n $HELD_FD ]] && exec {HELD_FD}<&-
    zf_teardown
}

# py ARGS...: the venv's python (zarr, numpy) with a timeout.
py() { PYTHONWARNINGS=ignore zf_t "$ZF_PYTHON" "$@"; }

# mk_big STORE: a v3 group with array "big" of 200000 [s] values (.csv 4.5 MB).
mk_big() {
    py - "$1" <<'EOF' || fail "cannot make $1"
import sys, numpy as np, zarr
g = zarr.open_group(sys.argv[1], mode="w", zarr_format=3)
a = g.create_array("big", shape=(200_000,), chunks=(50_000,), dtype="m8[s]")
a[:] = (np.arange(200_000) * 37).astype("m8[s]")
EOF
}

# add_array STORE NAME: a new 3-element [h] array NAME in the root group.
add_array() {
    py - "$1" "$2" <<'EOF' || fail "cannot add $2 to $1"
import sys, numpy as np, zarr
g = zarr.open_group(sys.argv[1], mode="a")
g.create_array(sys.argv[2], shape=(3,), chunks=(3,), dtype="m8[h]")[:] = np.arange(3).astype("m8[h]")
EOF
}

# mk_many STORE G: a v3 group of G groups g0..g(G-1) of 200 small timedelta
# arrays a0..a199 each, written as plain metadata (no chunks: every value is
# the fill value).  (Groups, not one flat directory: the tree grows a
# directory's child list one element at a time.)
mk_many() {
    py - "$1" "$2" <<'EOF' || fail "cannot make $1"
import json, os, sys
root, groups = sys.argv[1], int(sys.argv[2])
group = json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}})
meta = json.dumps({"zarr_format": 3, "node_type": "array", "shape": [4],
    "data_type": {"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 1}},
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "attributes": {}})
os.makedirs(root)
with open(f"{root}/zarr.json", "w") as f:
    f.write(group)
for g in range(groups):
    os.mkdir(f"{root}/g{g}")
    with open(f"{root}/g{g}/zarr.json", "w") as f:
        f.write(group)
    for i in range(200):
        os.mkdir(f"{root}/g{g}/a{i}")
        with open(f"{root}/g{g}/a{i}/zarr.json", "w") as f:
            f.write(meta)
EOF
}

# wait_changes N: wait until the daemon has logged N swaps to a changed store.
wait_changes() {
    local deadline=$((SECONDS + 20))
    until (($(grep -c 'the store changed' "$ZF_LOG") >= $1)); do
        ((SECONDS < deadline)) || fail "the daemon saw $(grep -c 'the store changed' "$ZF_LOG") changes, want $1; log:
$(cat "$ZF_LOG")"
        sleep 0.05
    done
}

# ms: monotonic-enough milliseconds (wall clock; only differences are used).
ms() { echo $(($(date +%s%N) / 1000000)); }

# A reader that copies SRC to DST in 64 KiB reads, touching HALF when half
# way and then waiting (at most 60 s) for GO to exist before reading the rest.
PAUSED_READER='
import os, sys, time
src, dst, half, go = sys.argv[1:5]
fd = os.open(src, os.O_RDONLY)
size = os.fstat(fd).st_size
with open(dst, "wb") as out:
    done = 0
    while True:
        if done >= size // 2 and not os.path.exists(half):
            open(half, "w").close()
            deadline = time.monotonic() + 60
            while not os.path.exists(go) and time.monotonic() < deadline:
                time.sleep(0.02)
        b = os.read(fd, 65536)
        if not b:
            break
        out.write(b)
        done += len(b)
os.close(fd)
'

@test "generations: a .csv copied across store changes is complete and byte-identical to its old version" {
    zf_mktemp w
    mk_big "$w/s.zarr"
    zf_mount "$w/s.zarr" -o timeout=0.2
    zf_t cat "$ZF_MNT/big.csv" >"$w/old.csv" || fail "cat failed"
    zf_oracle csv "$w/s.zarr" big >"$w/oracle.csv" || fail "oracle failed"
    zf_cmp "$w/oracle.csv" "$w/old.csv"
    "$ZF_PYTHON" -c "$PAUSED_READER" "$ZF_MNT/big.csv" "$w/copy.csv" "$w/half" "$w/go" \
        2>"$w/reader.err" 3>&- &
    READER_PID=$!
    local deadline=$((SECONDS + 30))
    until [[ -e $w/half ]]; do
        ((SECONDS < deadline)) || fail "the reader did not get half way"
        sleep 0.02
    done
    add_array "$w/s.zarr" other # an unrelated array appears mid-copy
    wait_changes 1
    touch "$w/s.zarr/zarr.json" # and the root metadata is touched
    wait_changes 2
    sleep 0.5 # the kernel's attributes of the open file expire (timeout 0.2)
    touch "$w/go"
    local rc=0
    wait "$READER_PID" || rc=$?
    READER_PID=
    [[ $rc == 0 ]] || fail "the copy failed (status $rc): $(cat "$w/reader.err")"
    zf_cmp "$w/old.csv" "$w/copy.csv"
    # the new view has the new array, and big.csv (unchanged data) reads the same
    run zf_ls "$ZF_MNT"
    assert_output "big.csv
big.txt
other.csv
other.txt"
    zf_t cat "$ZF_MNT/big.csv" >"$w/new.csv" || fail "cat of the new version failed"
    zf_cmp "$w/old.csv" "$w/new.csv"
}

@test "generations: a file opened before a change answers fstat and pread at EOF-1, and cat reads it whole" {
    zf_mktemp w
    mk_big "$w/s.zarr"
    zf_mount "$w/s.zarr" -o timeout=0.2
    zf_t cat "$ZF_MNT/big.txt" >"$w/old.txt" || fail "cat failed"
    local size
    size=$(stat -c %s "$w/old.txt")
    exec {HELD_FD}<"$ZF_MNT/big.txt"
    add_array "$w/s.zarr" other
    wait_changes 1
    touch "$w/s.zarr/zarr.json"
    wait_changes 2
    sleep 0.5 # past the attribute timeout: the kernel asks the daemon again
    run zf_t "$ZF_PYTHON" -c '
import os, sys
fd, size = int(sys.argv[1]), int(sys.argv[2])
st = os.fstat(fd)
assert st.st_size == size, (st.st_size, size)
print(repr(os.pread(fd, 1, size - 1)), repr(os.pread(fd, 4096, size - 1)), repr(os.pread(fd, 10, size)))
' "$HELD_FD" "$size"
    assert_success
    assert_output "b'\\n' b'\\n' b''"
    zf_t cat <&"$HELD_FD" >"$w/copy.txt" || fail "cat of the file opened before the change failed"
    exec {HELD_FD}<&-
    HELD_FD=
    zf_cmp "$w/old.txt" "$w/copy.txt"
}

@test "generations: a change is seen within a few timeouts with no request to trigger the re-check" {
    zf_mktemp w
    mk_big "$w/s.zarr"
    zf_mount "$w/s.zarr" -o timeout=0.3
    zf_ls "$ZF_MNT" >/dev/null
    add_array "$w/s.zarr" other
    wait_changes 1 # no request was made since the change
    run zf_ls "$ZF_MNT"
    assert_output "big.csv
big.txt
other.csv
other.txt"
    assert_equal "$(zf_t cat "$ZF_MNT/other.txt")" "0 days 00:00:00
0 days 01:00:00
0 days 02:00:00"
}

@test "generations: a request after the timeout does not wait for the store's re-check" {
    zf_mktemp w
    local groups=100
    [[ ${ZF_VALGRIND:-0} != 0 ]] && groups=10
    mk_many "$w/s.zarr" "$groups" # 20000 arrays: a tree build of a few hundred ms
    local t0 t1 build best=999999 r i
    t0=$(ms)
    zf_mount "$w/s.zarr" -o timeout=1
    t1=$(ms)
    build=$((t1 - t0)) # starting the daemon: one whole tree build, and the mount
    zf_t stat "$ZF_MNT/g1/a1.txt" >/dev/null || fail "stat failed"
    for i in 1 2 3; do
        sleep 1.3 # past the timeout: the kernel asks again, and the store is due a re-check
        t0=$(ms)
        zf_t stat "$ZF_MNT/g1/a1.txt" >/dev/null || fail "stat failed"
        t1=$(ms)
        r=$((t1 - t0))
        ((r < best)) && best=$r
    done
    # (relative to the build: a request that ran the re-check takes about
    # the build's time; one that does not, a small part of it)
    ((best * 4 < build)) || fail "the quickest stat after the timeout took ${best} ms; starting (one tree build) took ${build} ms"
}
