#!/usr/bin/env bats
# hostile_shards.bats - sharded arrays built to make the daemon decode the same
# stored bytes again and again (tests/e2e/shard_bombs.py writes them): index
# entries that all point at the same 4 MiB of zstd skippable frames, entries
# that overlap, entries larger than any encoding of their inner chunk, nested
# shards doing both.  Each is damage: its reads fail with EIO, one log line
# names the shard key and the reason, and the daemon answers within a few
# seconds (before these checks one `stat` of the first cost about 26 minutes
# of CPU, in D state).
#
# Every command that touches the mount runs under sb_within: one still
# running after SB_LIMIT seconds is stuck (a FUSE reader in D state cannot
# be killed), so the connection is aborted and the daemon killed, which
# releases it, and the test fails instead of hanging the suite.

load helpers

if [[ ${ZF_VALGRIND:-0} != 0 ]]; then
    SB_LIMIT=${SB_LIMIT:-120}
else
    SB_LIMIT=${SB_LIMIT:-15}
fi

setup_file() {
    local root=${ZF_TEST_TMP:-${TMPDIR:-/tmp}}
    mkdir -p "$root"
    SB_ROOT=$(mktemp -d "$root/zf-shardbombs.XXXXXX")
    export SB_ROOT SB_STORE=$SB_ROOT/bombs
    export XDG_CACHE_HOME=$SB_ROOT/xdg-cache # persisted indexes of this file only
    if ! PYTHONWARNINGS=ignore timeout -k 5 300 "$ZF_PYTHON" "$ZF_REPO/tests/e2e/shard_bombs.py" \
            "$SB_STORE" >"$SB_ROOT/gen.log" 2>&1; then
        echo "# tests/e2e/shard_bombs.py failed ($ZF_PYTHON):" >&3
        sed 's/^/# /' "$SB_ROOT/gen.log" >&3
        return 1
    fi
}

teardown_file() {
    [[ -n ${SB_ROOT:-} && -d $SB_ROOT ]] || return 0
    if awk -v d="$SB_ROOT/" 'index($5, d) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
        echo "# $SB_ROOT still has a mount under it; left in place" >&3
        return 1
    fi
    rm -rf --one-file-system "$SB_ROOT"
}

# sb_within CMD...: run CMD (status and output as bats' run) with its stdin
# closed; if it is still running after SB_LIMIT seconds, abort the FUSE
# connection, kill the daemon and fail.
sb_within() {
    local out=$SB_ROOT/within.$BATS_TEST_NUMBER pid start=$SECONDS
    "$@" >"$out" 2>&1 </dev/null 3>&- &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        if ((SECONDS - start >= SB_LIMIT)); then
            zf_fuse_abort "$ZF_MNT"
            kill -KILL "$ZF_PID" "$pid" 2>/dev/null
            wait "$pid"
            fail "still running after ${SB_LIMIT}s (connection aborted, daemon killed): $*
--- daemon log ---
$(tail -n 5 "$ZF_LOG" | cut -c 1-300)"
        fi
        sleep 0.05
    done
    status=0
    wait "$pid" || status=$?
    output=$(cat "$out")
}

# sb_damaged NAME REASON: NAME.txt has a size (its chunks measured as NaT),
# reading it fails with EIO, a log line names NAME's shard and REASON, and
# at most a few lines name it (one per shard, however many inner chunks)
sb_damaged() {
    local name=$1 reason=$2 lines
    sb_within stat -c %s "$ZF_MNT/$name.txt"
    ((status == 0)) || fail "stat $name.txt: $output"
    sb_within cat "$ZF_MNT/$name.txt"
    ((status != 0)) && [[ $output == *"Input/output error"* ]] ||
        fail "cat $name.txt: status $status, want EIO: $(head -c 300 <<<"$output")"
    grep -F "$SB_STORE/$name/c/0" "$ZF_LOG" | grep -qF "$reason" ||
        fail "no log line names $name/c/0 and \"$reason\"; log: $(head -n 5 "$ZF_LOG" | cut -c 1-300)"
    lines=$(grep -cF "/$name/c/" "$ZF_LOG")
    ((lines <= 3)) || fail "$lines log lines name $name's shard, want one (at most 3)"
}

@test "shard bombs: entries all pointing at 4 MiB of skippable frames, shard decoded whole: EIO at once" {
    zf_mount "$SB_STORE"
    sb_damaged bomb_whole "more than any encoding of an inner chunk"
}

@test "shard bombs: the same with inner chunks read one by one: the index is read and refused once" {
    zf_mount "$SB_STORE"
    sb_damaged bomb_partial "more than any encoding of an inner chunk"
}

@test "shard bombs: overlapping index entries (each a valid frame) are damage, whole or by inner chunk" {
    zf_mount "$SB_STORE"
    sb_damaged overlap_whole "entries overlap"
    sb_damaged overlap_partial "entries overlap"
}

@test "shard bombs: an entry larger than zstd can make of its inner chunk is damage" {
    zf_mount "$SB_STORE"
    sb_damaged past_max "2048 bytes, more than any encoding of an inner chunk"
}

@test "shard bombs: nested shards whose entries overlap, outer or inner, are damage" {
    zf_mount "$SB_STORE"
    sb_damaged nested_whole "entries overlap"
    sb_damaged nested_partial "entries overlap"
}

@test "shard bombs: while every bomb is read at once, a healthy sharded array reads back exactly" {
    zf_mount "$SB_STORE"
    local name pids=()
    for name in bomb_whole bomb_partial overlap_whole overlap_partial past_max nested_whole \
        nested_partial; do
        cat "$ZF_MNT/$name.txt" >/dev/null 2>&1 </dev/null 3>&- &
        pids+=($!)
    done
    sb_within cat "$ZF_MNT/ok.txt"
    ((status == 0)) || fail "ok.txt: $output"
    [[ $output == "$(cat "$SB_STORE.expected/ok.txt")" ]] || fail "ok.txt differs from the oracle"
    local start=$SECONDS pid
    for pid in "${pids[@]}"; do # the bomb readers end too, within the bound
        while kill -0 "$pid" 2>/dev/null && ((SECONDS - start < SB_LIMIT)); do sleep 0.05; done
    done
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    if ((alive)); then
        zf_fuse_abort "$ZF_MNT"
        kill -KILL "$ZF_PID" "${pids[@]}" 2>/dev/null
        fail "a bomb's reader was still running after ${SB_LIMIT}s"
    fi
    wait "${pids[@]}" || true
}
