#!/usr/bin/env bats
# hostile.bats - stores that try to hang or blow up the daemon: FIFOs,
# sockets and devices where files belong (nothing may block: such chunks are
# damaged, such metadata is left out), symlink loops and diamonds (each
# directory is walked once).
#
# Every command that touches the mount runs under hs_run, a watchdog: a
# command still running after HS_TIMEOUT seconds is stuck (in D state, where
# timeout(1) cannot stop it), so the FUSE connection is aborted and the daemon
# killed, which releases it, and the test fails instead of hanging the suite.
# Teardown then unmounts as usual (helpers.bash).

load helpers

HS_GEN=$ZF_REPO/tests/e2e/hostile_gen.py
if [[ ${ZF_VALGRIND:-0} != 0 ]]; then HS_TIMEOUT=${HS_TIMEOUT:-90}; else HS_TIMEOUT=${HS_TIMEOUT:-10}; fi

setup() {
    zf_mktemp HS_DIR
    HS_DIR=$(realpath "$HS_DIR")
    export XDG_CACHE_HOME=$HS_DIR/xdg-cache # persisted indexes of this test only
}

# hs_run CMD...: like bats' run (sets status and output), under the watchdog.
hs_run() {
    local out=$HS_DIR/hs_run.out pid deadline
    "$@" >"$out" 2>&1 </dev/null 3>&- &
    pid=$!
    deadline=$((SECONDS + HS_TIMEOUT))
    HS_HUNG=0
    while kill -0 "$pid" 2>/dev/null; do
        if ((SECONDS >= deadline)); then
            HS_HUNG=1
            [[ -n $ZF_MNT ]] && zf_fuse_abort "$ZF_MNT"
            [[ -n $ZF_PID ]] && kill -KILL "$ZF_PID" 2>/dev/null
            kill -KILL "$pid" 2>/dev/null
            break
        fi
        sleep 0.05
    done
    status=0
    wait "$pid" || status=$?
    output=$(cat "$out")
    ((HS_HUNG == 0)) || fail "hung for ${HS_TIMEOUT}s (connection aborted, daemon killed): $*
--- daemon log ---
$(tail -n 20 "$ZF_LOG" 2>/dev/null)"
}

# hs_store NAME [ARGS...]: a healthy store from hostile_gen.py in $HS_DIR/NAME
hs_store() {
    local name=$1; shift
    PYTHONWARNINGS=ignore zf_t "$ZF_PYTHON" "$HS_GEN" plain "$HS_DIR/$name" "$@" >/dev/null ||
        fail "hostile_gen.py plain $name failed"
}

# Checks one array view with a damaged middle chunk (chunks of 10 values):
# exact size (the damaged chunk measured as NaT), the chunks around it
# readable, reads that touch it failing with EIO.
HS_CHECK_DAMAGED='
import errno, os, sys
path, exp = sys.argv[1], open(sys.argv[2], "rb").read()
lines = exp.splitlines(keepends=True)
head, tail = b"".join(lines[:10]), b"".join(lines[20:])
size = os.stat(path).st_size
want = len(head) + 10 * len(b"NaT\n") + len(tail)
assert size == want, f"size {size}, want {want}"
fd = os.open(path, os.O_RDONLY)
assert os.pread(fd, len(head), 0) == head, "the chunk before the damaged one"
assert os.pread(fd, len(tail), size - len(tail)) == tail, "the chunk after it"
try:
    os.pread(fd, 4, len(head) + 2)
    sys.exit("a read inside the damaged chunk succeeded")
except OSError as e:
    assert e.errno == errno.EIO, e
'

# hs_expect_damaged_chunk STORE WHAT [MOUNT OPTS...]: mount STORE whose bad/c/1
# was replaced; check bad.txt as above, ok.txt in full, and a log line naming
# the chunk and WHAT it is.
hs_expect_damaged_chunk() {
    local store=$1 what=$2; shift 2
    zf_mount "$store" "$@"
    hs_run "$ZF_PYTHON" -c "$HS_CHECK_DAMAGED" "$ZF_MNT/bad.txt" "$store.expected/bad.txt"
    ((status == 0)) || fail "bad.txt: $output"
    hs_run cat "$ZF_MNT/ok.txt"
    ((status == 0)) || fail "ok.txt: $output"
    [[ $output == "$(cat "$store.expected/ok.txt")" ]] || fail "ok.txt differs"
    grep -F "bad/c/1" "$ZF_LOG" | grep -qF "$what" ||
        fail "no log line names bad/c/1 as $what; log: $(cat "$ZF_LOG")"
}

# hs_expect_left_out STORE WHAT: mount; bad.* are not listed, ok.txt reads,
# a log line names bad and WHAT.
hs_expect_left_out() {
    local store=$1 what=$2
    zf_mount "$store"
    hs_run ls "$ZF_MNT"
    ((status == 0)) || fail "ls: $output"
    [[ $output != *bad.txt* && $output == *ok.txt* ]] || fail "listing: $output"
    hs_run cat "$ZF_MNT/ok.txt"
    [[ $status == 0 && $output == "$(cat "$store.expected/ok.txt")" ]] || fail "ok.txt: $output"
    grep -F "/bad" "$ZF_LOG" | grep -qF "$what" ||
        fail "no log line names bad as $what; log: $(cat "$ZF_LOG")"
}

# --- FIFOs, sockets and devices as chunks ------------------------------------

@test "hostile: a FIFO as a chunk is a damaged chunk, not a hang" {
    hs_store s
    rm "$HS_DIR/s/bad/c/1" && mkfifo "$HS_DIR/s/bad/c/1"
    hs_expect_damaged_chunk "$HS_DIR/s" "FIFO"
}

@test "hostile: a symlink to a FIFO inside the store is a damaged chunk" {
    hs_store s
    mkfifo "$HS_DIR/s/fifo"
    ln -sf ../../fifo "$HS_DIR/s/bad/c/1"
    hs_expect_damaged_chunk "$HS_DIR/s" "FIFO"
}

@test "hostile: a FIFO outside the store with -o follow_symlinks is a damaged chunk" {
    hs_store s
    mkfifo "$HS_DIR/outside-fifo"
    ln -sf "$HS_DIR/outside-fifo" "$HS_DIR/s/bad/c/1"
    hs_expect_damaged_chunk "$HS_DIR/s" "FIFO" -o follow_symlinks
}

@test "hostile: a socket as a chunk is a damaged chunk" {
    hs_store s
    rm "$HS_DIR/s/bad/c/1"
    "$ZF_PYTHON" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
        "$HS_DIR/s/bad/c/1"
    hs_expect_damaged_chunk "$HS_DIR/s" "socket"
}

@test "hostile: /dev/null via a symlink with -o follow_symlinks is a damaged chunk" {
    hs_store s
    ln -sf /dev/null "$HS_DIR/s/bad/c/1"
    hs_expect_damaged_chunk "$HS_DIR/s" "character device" -o follow_symlinks
}

@test "hostile: a device node as a chunk is a damaged chunk, never opened" {
    ((EUID == 0)) || skip "mknod needs root"
    hs_store s
    rm "$HS_DIR/s/bad/c/1" && mknod "$HS_DIR/s/bad/c/1" c 1 5 # /dev/zero
    hs_expect_damaged_chunk "$HS_DIR/s" "character device"
}

# --- FIFOs as metadata --------------------------------------------------------

@test "hostile: a FIFO as an array's zarr.json: left out with a log line" {
    hs_store s
    rm "$HS_DIR/s/bad/zarr.json" && mkfifo "$HS_DIR/s/bad/zarr.json"
    hs_expect_left_out "$HS_DIR/s" "FIFO"
}

@test "hostile: a FIFO as a v2 .zarray: left out with a log line" {
    hs_store s --v2
    rm "$HS_DIR/s/bad/.zarray" && mkfifo "$HS_DIR/s/bad/.zarray"
    hs_expect_left_out "$HS_DIR/s" "FIFO"
}

@test "hostile: a FIFO as a v2 .zattrs: left out with a log line" {
    hs_store s --v2
    rm -f "$HS_DIR/s/bad/.zattrs" && mkfifo "$HS_DIR/s/bad/.zattrs"
    hs_expect_left_out "$HS_DIR/s" "FIFO"
}

@test "hostile: a FIFO as .zmetadata: consolidated metadata not used, the arrays show" {
    hs_store s --v2 --consolidated
    rm "$HS_DIR/s/.zmetadata" && mkfifo "$HS_DIR/s/.zmetadata"
    zf_mount "$HS_DIR/s"
    hs_run cat "$ZF_MNT/bad.txt"
    [[ $status == 0 && $output == "$(cat "$HS_DIR/s.expected/bad.txt")" ]] || fail "bad.txt: $output"
    grep -F "consolidated metadata not used" "$ZF_LOG" | grep -F ".zmetadata" | grep -qF "FIFO" ||
        fail "no log line says why .zmetadata is not used; log: $(cat "$ZF_LOG")"
}

@test "hostile: a FIFO as the root zarr.json: exit 1 at once, one line naming it" {
    hs_store s --consolidated
    rm "$HS_DIR/s/zarr.json" && mkfifo "$HS_DIR/s/zarr.json"
    mkdir "$HS_DIR/mnt"
    zf_daemon_argv -f "$HS_DIR/s" "$HS_DIR/mnt"
    hs_run timeout -k 5 "$HS_TIMEOUT" "${ZF_ARGV[@]}"
    zf_is_mounted "$HS_DIR/mnt" && { fusermount3 -uz "$HS_DIR/mnt"; fail "mounted"; }
    [[ $status == 1 ]] || fail "exit status $status (124: it hung); output: $output"
    [[ $(wc -l <<<"$output") == 1 && $output == *zarr.json* && $output == *FIFO* ]] ||
        fail "want one line naming zarr.json as a FIFO: $output"
}

@test "hostile: a FIFO as the store itself: exit 1 at once" {
    mkfifo "$HS_DIR/fifo-store"
    mkdir "$HS_DIR/mnt"
    zf_daemon_argv -f "$HS_DIR/fifo-store" "$HS_DIR/mnt"
    hs_run timeout -k 5 "$HS_TIMEOUT" "${ZF_ARGV[@]}"
    [[ $status == 1 ]] || fail "exit status $status (124: it hung); output: $output"
}

@test "hostile: a FIFO as a persisted index file is ignored; the index is recomputed" {
    hs_store s
    zf_mount "$HS_DIR/s"
    hs_run stat -c %s "$ZF_MNT/ok.txt"
    ((status == 0)) || fail "stat: $output"
    zf_unmount || fail "unmount"
    local idx n=0
    for idx in "$XDG_CACHE_HOME"/zarrfs/*.idx; do
        [[ -f $idx ]] || continue
        rm "$idx" && mkfifo "$idx" && n=$((n + 1))
    done
    ((n > 0)) || fail "no index was saved in $XDG_CACHE_HOME/zarrfs"
    zf_mount "$HS_DIR/s"
    hs_run cat "$ZF_MNT/ok.txt"
    [[ $status == 0 && $output == "$(cat "$HS_DIR/s.expected/ok.txt")" ]] || fail "ok.txt: $output"
}
