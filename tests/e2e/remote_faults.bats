#!/usr/bin/env bats
# remote_faults.bats - an HTTP store behind tests/net/faultproxy.py (in front
# of nginx): added latency, 503/429 bursts, connections cut mid-body,
# truncated bodies, resets, a server that ignores Range, stalled responses and
# an upstream that goes away and comes back.  Every read either succeeds with
# exactly the bytes of the local mount (after retries) or fails with EIO
# within the retry budget: never a wrong byte, never a hang (every read runs
# under `timeout`), and the daemon survives and serves again once the fault
# stops.  The proxy stops by itself after its deadline.

load remote

# Requests for chunks (not metadata): what the faults hit unless said otherwise.
CHUNKS='^(?!.*(zarr\\.json|\\.zarray|\\.zattrs|\\.zgroup|\\.zmetadata)$)'
# -o retries=/timeout_ms= of these tests, and the budget a failing read
# must stay within (seconds; generous: a read may wait for the size pass and
# a shard index before its own chunks, each with its own retries)
RF_OPTS=retries=4,timeout_ms=1500
RF_BUDGET=40

# valgrind slows the daemon 20-50 x: the retry budgets below measure time
RF_SKIP=
[[ ${ZF_VALGRIND:-0} == 0 ]] || RF_SKIP="under valgrind the retry budgets mean nothing (remote_http and remote_s3 do run there)"

setup_file() {
    [[ -z $RF_SKIP ]] || return 0
    rm_setup_file
    net_nginx "$RM_DIR/nginx" "$RM_DIR/www"
    export NGX_HTTP NGX_LOG
}

teardown_file() { rm_teardown_file; }

setup() {
    [[ -z $RF_SKIP ]] || skip "$RF_SKIP"
    # each test its own persisted index (a test that wants one says so)
    export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
}

teardown() {
    zf_teardown
    net_stop_all
}

# proxy [FAULTS_JSON]: a fault proxy for this test (120 s deadline) in front of
# nginx, with FAULTS from the start.
proxy() {
    net_proxy "$BATS_TEST_TMPDIR/proxy" "${NGX_HTTP#http://}" 120
    [[ -n ${1:-} ]] && net_proxy_set "$1"
    return 0
}

# faulted_count KIND: requests the proxy faulted with KIND so far.
faulted_count() { grep -c "fault=$1" "$PROXY_LOG" || true; }

# mount_both NAME [OPTS...]: local mount of NAME (RM_LOCAL) and the mount
# through the proxy (ZF_MNT) with -o $RF_OPTS and OPTS.
mount_both() {
    local name=$1
    shift
    rm_mount_local "$name"
    zf_mount "$PROXY_URL/bucket/$name" -o "$RF_OPTS" "$@"
}

# read_checked FILE: read RM_LOCAL/FILE and ZF_MNT/FILE; the remote read must
# be exact or fail with EIO within RF_BUDGET seconds (never a hang: a timeout
# fails the test).  RF_OK / RF_EIO count the outcomes.
read_checked() {
    local f=$1 out=$BATS_TEST_TMPDIR/read.out err=$BATS_TEST_TMPDIR/read.err t0 ms rc=0
    t0=$(date +%s%N)
    timeout -k 5 $((RF_BUDGET + 20)) cat "$ZF_MNT/$f" >"$out" 2>"$err" || rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    ((rc != 124 && rc != 137)) || fail "reading $f hung (> $((RF_BUDGET + 20)) s)"
    ((ms <= RF_BUDGET * 1000)) || fail "reading $f took $ms ms (rc $rc), over the budget"
    if ((rc == 0)); then
        cmp -s "$RM_LOCAL/$f" "$out" || fail "WRONG BYTES: $f read through the faults differs from the local mount"
        RF_OK=$((RF_OK + 1))
    else
        grep -q 'Input/output error' "$err" || fail "reading $f failed, but not with EIO: $(cat "$err")"
        RF_EIO=$((RF_EIO + 1))
    fi
    RF_MAX_MS=$((ms > ${RF_MAX_MS:-0} ? ms : ${RF_MAX_MS:-0}))
}

# read_all: read_checked every .txt/.csv of the mount.
read_all() {
    local f
    RF_OK=0 RF_EIO=0
    while read -r f; do read_checked "$f"; done < <(cd "$RM_LOCAL" && find . -type f \( -name '*.txt' -o -name '*.csv' \) -printf '%P\n' | LC_ALL=C sort)
}

# alive: the daemon still runs and the mount answers.
alive() {
    kill -0 "$ZF_PID" 2>/dev/null || fail "the daemon died: $(tail -n 20 "$ZF_LOG")"
    zf_t ls "$ZF_MNT" >/dev/null || fail "the mount does not answer"
}

# px_curl ARGS...: curl through the proxy with a timeout; "HTTP_CODE BYTES RC"
px_curl() {
    local rc=0 out
    out=$(timeout -k 2 10 curl -sS -o "$BATS_TEST_TMPDIR/px.out" -w '%{http_code} %{size_download}' "$@" 2>/dev/null) || rc=$?
    echo "$out $rc"
}

@test "faultproxy: each fault is what it says (curl through it)" {
    proxy
    local u=$PROXY_URL/bucket/a3.zarr/zarr.json size t0
    size=$(stat -c %s "$RM_STORES/a3.zarr/zarr.json")
    [[ $(px_curl "$u") == "200 $size 0" ]] || fail "plain: $(px_curl "$u")"
    cmp -s "$BATS_TEST_TMPDIR/px.out" "$RM_STORES/a3.zarr/zarr.json" || fail "plain: wrong bytes"
    [[ $(px_curl -r 10-19 "$u") == "206 10 0" ]] || fail "range: $(px_curl -r 10-19 "$u")"
    [[ $(timeout 10 curl -sSI "$u" | tr -d '\r' | awk 'tolower($1) == "content-length:" { print $2 }') == "$size" ]] \
        || fail "HEAD: $(timeout 10 curl -sSI "$u")"
    net_proxy_set '{"fault": "status", "status": 503, "first": 2}'
    [[ $(px_curl "$u") == "503 "* ]] && [[ $(px_curl "$u") == "503 "* ]] && [[ $(px_curl "$u") == "200 $size 0" ]] \
        || fail "503 for the first 2 only"
    net_proxy_set '{"fault": "status", "status": 429, "every": 2, "retry_after": 0}'
    [[ $(px_curl "$u") == "200 $size 0" && $(px_curl "$u") == "429 "* ]] || fail "429 every 2nd"
    net_proxy_set '{"fault": "cut"}'
    [[ $(px_curl "$u") == "200 $((size / 2)) 56" ]] || fail "cut: $(px_curl "$u")"
    net_proxy_set '{"fault": "truncate"}'
    [[ $(px_curl "$u") == "200 $((size / 2)) 18" ]] || fail "truncate: $(px_curl "$u")"
    net_proxy_set '{"fault": "reset"}'
    [[ $(px_curl "$u") == "000 0 56" ]] || fail "reset: $(px_curl "$u")"
    net_proxy_set '{"fault": "norange"}'
    [[ $(px_curl -r 10-19 "$u") == "200 $size 0" ]] || fail "norange: $(px_curl -r 10-19 "$u")"
    net_proxy_set '{"fault": "stall", "stall_s": 30}'
    [[ $(px_curl --max-time 1 "$u") == "200 0 28" ]] || fail "stall: $(px_curl --max-time 1 "$u")"
    net_proxy_set '{"latency_ms": 300}'
    t0=$(date +%s%N)
    [[ $(px_curl "$u") == "200 $size 0" ]] || fail "latency"
    (($(date +%s%N) - t0 >= 300000000)) || fail "no latency added"
    net_proxy_set '{"down_for": 1.5}'
    [[ $(px_curl "$u") == "000 0 "* ]] || fail "down: $(px_curl "$u")"
    sleep 1.6
    [[ $(px_curl "$u") == "200 $size 0" ]] || fail "not back after down_for"
    net_proxy_set '{"fault": "cut", "match": "c/"}'
    [[ $(px_curl "$u") == "200 $size 0" ]] || fail "match: metadata was faulted"
    kill -0 "$PROXY_PID" || fail "the proxy died"
    # bounded: a proxy stops by itself at its deadline
    net_proxy "$BATS_TEST_TMPDIR/short" "${NGX_HTTP#http://}" 1
    local end=$((SECONDS + 10))
    while kill -0 "$PROXY_PID" 2>/dev/null && ((SECONDS < end)); do sleep 0.1; done
    kill -0 "$PROXY_PID" 2>/dev/null && fail "the proxy outlived its 1 s deadline"
    true
}

@test "faults: 150 ms latency on every response: every file exact" {
    proxy '{"latency_ms": 150}'
    mount_both g3c.zarr
    rm_compare "$RM_LOCAL" "$ZF_MNT" nolisting
}

@test "faults: 503 on the first 2 attempts of every chunk request: retried, every file exact" {
    proxy "{\"fault\": \"status\", \"status\": 503, \"first\": 2, \"per_key\": true, \"match\": \"$CHUNKS\"}"
    mount_both g3c.zarr
    rm_compare "$RM_LOCAL" "$ZF_MNT" nolisting
    (($(faulted_count 'status 503') >= 2 * 8)) || fail "only $(faulted_count 'status 503') 503s sent"
}

@test "faults: 429 with Retry-After on the first 3 attempts of every chunk request: every file exact" {
    proxy "{\"fault\": \"status\", \"status\": 429, \"retry_after\": 0, \"first\": 3, \"per_key\": true, \"match\": \"$CHUNKS\"}"
    mount_both g2c.zarr
    rm_compare "$RM_LOCAL" "$ZF_MNT" nolisting
    (($(faulted_count 'status 429') > 3)) || fail "only $(faulted_count 'status 429') 429s sent"
}

@test "faults: connections cut mid-body (RST) on the first 2 attempts of every chunk request: every file exact" {
    proxy "{\"fault\": \"cut\", \"first\": 2, \"per_key\": true, \"match\": \"$CHUNKS\"}"
    mount_both g3c.zarr
    rm_compare "$RM_LOCAL" "$ZF_MNT" nolisting
    (($(faulted_count cut) > 3)) || fail "only $(faulted_count cut) cuts"
}

@test "faults: truncated bodies (Content-Length promised, half sent) on the first 2 attempts of every chunk request: every file exact" {
    proxy "{\"fault\": \"truncate\", \"first\": 2, \"per_key\": true, \"match\": \"$CHUNKS\"}"
    mount_both a3.zarr
    rm_compare "$RM_LOCAL" "$ZF_MNT" nolisting
    (($(faulted_count truncate) > 3)) || fail "only $(faulted_count truncate) truncations"
}

@test "faults: connections reset before any answer on the first attempt of every request (metadata too): every file exact" {
    proxy '{"fault": "reset", "first": 1, "per_key": true}'
    mount_both g2c.zarr
    rm_compare "$RM_LOCAL" "$ZF_MNT" nolisting
    (($(faulted_count reset) > 3)) || fail "only $(faulted_count reset) resets"
}

@test "faults: a server that ignores Range (200 with the whole object): every file exact" {
    proxy '{"fault": "norange"}'
    # a small cache: shards are read by ranges rather than whole
    mount_both a3.zarr -o cache_size=1M
    rm_compare "$RM_LOCAL" "$ZF_MNT" nolisting
    grep -q 'range=bytes=.*fault=norange status=200' "$PROXY_LOG" || fail "no ranged request was answered with 200"
}

@test "faults: 503 for good on one array: its reads fail with EIO within the budget, one log line names the key and status; the rest is exact; served again after" {
    proxy '{"fault": "status", "status": 503, "match": "/v3_zstd/c/"}'
    mount_both g3c.zarr
    read_all
    ((RF_EIO >= 1)) || fail "no read failed ($RF_OK exact): the fault did not bite"
    ((RF_OK >= 14)) || fail "only $RF_OK exact reads: the fault on one array spread to others"
    local f
    for f in v3_zstd.txt v3_zstd.csv; do
        timeout 60 cat "$ZF_MNT/$f" >/dev/null 2>&1 && fail "$f was read although all its chunks fail"
    done
    grep -qE 'v3_zstd/c/[0-9/]+: .*HTTP 503 after [0-9]+ attempts' "$ZF_LOG" || fail "no log line names a v3_zstd chunk key and the 503: $(tail -n 20 "$ZF_LOG")"
    alive
    # the server recovers: the same mount reads the array exactly
    net_proxy_set '{}'
    RF_OK=0 RF_EIO=0
    read_checked v3_zstd.txt
    read_checked v3_zstd.csv
    ((RF_OK == 2)) || fail "after the fault stopped: $RF_EIO reads still fail"
    echo "# slowest failing read: ${RF_MAX_MS} ms" >&3
}

@test "faults: 503 for good on a sharded array: one log line per shard key, with the status and attempts" {
    proxy '{"fault": "status", "status": 503, "match": "/v3_shard_inner_gzip/c/"}'
    mount_both g3c.zarr
    RF_OK=0 RF_EIO=0
    read_checked v3_shard_inner_gzip.txt
    read_checked v3_shard_inner_gzip.csv
    ((RF_EIO == 2)) || fail "a read succeeded although every shard answers 503"
    local lines
    lines=$(grep 'v3_shard_inner_gzip/c/' "$ZF_LOG") || fail "no log line names a shard: $(tail -n 5 "$ZF_LOG")"
    # every line gives the store's reason, not a bare "input/output error"
    grep -vE 'HTTP 503 after [0-9]+ attempts' <<<"$lines" && fail "a log line lost the reason (above)"
    # each shard key once, however many inner chunks and readers failed with it
    local dup
    dup=$(grep -oE 'v3_shard_inner_gzip/c/[0-9/]+' <<<"$lines" | sort | uniq -d)
    [[ -z $dup ]] || fail "logged more than once: $dup"
    alive
}

@test "faults: 503 for good on a sharded array read by ranges (small cache): the log line gives the shard's HEAD reason, not a bare input/output error" {
    proxy '{"fault": "status", "status": 503, "match": "/v3_shard_inner_gzip/c/"}'
    # a small cache: no whole-shard reads; a shard's size and version come from a HEAD (its stamp)
    mount_both g3c.zarr -o cache_size=1M
    RF_OK=0 RF_EIO=0
    read_checked v3_shard_inner_gzip.txt
    ((RF_EIO == 1)) || fail "the read succeeded although every shard answers 503"
    grep -q 'HEAD [^ ]*v3_shard_inner_gzip/c/' "$PROXY_LOG" || fail "no HEAD of a shard: $(grep -m 3 v3_shard_inner_gzip/c/ "$PROXY_LOG")"
    local lines
    lines=$(grep 'v3_shard_inner_gzip/c/' "$ZF_LOG") || fail "no log line names a shard: $(tail -n 5 "$ZF_LOG")"
    grep -vE 'HTTP 503 after [0-9]+ attempts' <<<"$lines" && fail "a log line lost the reason (above)"
    alive
}

@test "faults: 503 for good after a first mount persisted the sizes: EIO, and the log line says HTTP 503" {
    proxy
    mount_both g3c.zarr
    read_checked v3_zstd.txt
    zf_unmount
    net_proxy_set '{"fault": "status", "status": 503, "match": "/v3_zstd/c/"}'
    mount_both g3c.zarr
    RF_OK=0 RF_EIO=0
    read_checked v3_zstd.txt
    ((RF_EIO == 1)) || fail "the read succeeded although every chunk answers 503"
    grep -qE 'v3_zstd/c/[0-9/]+: .*HTTP 503 after [0-9]+ attempts' "$ZF_LOG" \
        || fail "no log line names the chunk key and the 503: $(sort "$ZF_LOG" | uniq -c | tail -n 5)"
    alive
    net_proxy_set '{}'
    RF_OK=0 RF_EIO=0
    read_checked v3_zstd.txt
    ((RF_OK == 1)) || fail "after the fault stopped, the read still fails: $(tail -n 3 "$ZF_LOG")"
}

@test "faults: stalled responses (headers, then silence): EIO within the budget, never a hang; served again after" {
    proxy "{\"fault\": \"stall\", \"match\": \"/v3_plain/c/\"}"
    mount_both g3c.zarr
    RF_OK=0 RF_EIO=0
    read_checked v3_plain.txt
    ((RF_EIO == 1)) || fail "a read of stalled chunks succeeded"
    read_checked v3_zstd.txt
    ((RF_OK == 1)) || fail "another array could not be read during the stall"
    alive
    net_proxy_set '{}'
    RF_OK=0 RF_EIO=0
    read_checked v3_plain.txt
    ((RF_OK == 1)) || fail "after the stall stopped, the read still fails"
    echo "# stalled read failed after ${RF_MAX_MS} ms" >&3
}

@test "faults: the upstream goes away for 4 s and comes back: exact or EIO meanwhile, exact after; the daemon survives" {
    proxy
    mount_both g3c.zarr
    net_proxy_set '{"down_for": 4}'
    local end=$((SECONDS + 4))
    read_all
    ((SECONDS >= end)) || sleep $((end - SECONDS))
    alive
    read_all
    ((RF_EIO == 0)) || fail "$RF_EIO reads still fail after the upstream came back"
    ((RF_OK >= 16)) || fail "only $RF_OK files read"
}

@test "faults: the upstream goes away for 4 s, three times: no read waits longer than the retry budget (6 x timeout_ms = 9 s) plus 2 s" {
    # libcurl's PIPEWAIT once parked every new transfer behind a connection
    # the outage had reset: no socket for a minute, reads waiting ~60 s
    proxy
    mount_both g3c.zarr
    local round budget=$RF_BUDGET
    RF_BUDGET=11
    for round in 1 2 3; do
        net_proxy_set "{\"down_for\": 4, \"seed\": $round}"
        local end=$((SECONDS + 4))
        read_all
        ((SECONDS >= end)) || sleep $((end - SECONDS))
        # the cache keeps what was read: a fresh generation's reads go to the server again
        zf_unmount
        XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg-$round mount_both g3c.zarr
    done
    alive
    read_all
    ((RF_EIO == 0)) || fail "$RF_EIO reads still fail after the upstream came back"
    RF_BUDGET=$budget
    echo "# slowest read around the outages: ${RF_MAX_MS} ms" >&3
}

@test "faults: random cuts, truncations and 503s (30 % each in turn) across a whole v2 store: never a wrong byte, all served once they stop" {
    proxy
    local kind total_ok=0 total_eio=0
    for kind in cut truncate status; do
        net_proxy_set "{\"fault\": \"$kind\", \"prob\": 0.3, \"seed\": 7, \"status\": 503}"
        # a fresh mount each time (nothing cached), without the persisted index
        XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg-$kind mount_both g2c.zarr -o retries=6
        read_all
        total_ok=$((total_ok + RF_OK)) total_eio=$((total_eio + RF_EIO))
        alive
        # the faults stop: the same mount serves every file exactly
        net_proxy_set '{}'
        read_all
        ((RF_EIO == 0)) || fail "$kind: $RF_EIO reads still fail once the faults stopped"
    done
    echo "# $total_ok exact reads, $total_eio EIO" >&3
    ((total_ok > 0)) || fail "nothing was read"
}

# slow_store NAME N: a root array of N values in one-value chunks (no
# compression) under RM_STORES: a read of a few KiB of its text needs
# hundreds of chunks, one request each.
slow_store() {
    "$ZF_PYTHON" - "$RM_STORES/$1" "$2" <<'PY' || fail "cannot write $1"
import sys, warnings
import numpy as np, zarr
warnings.filterwarnings("ignore")
n = int(sys.argv[2])
a = zarr.create_array(sys.argv[1], shape=(n,), chunks=(1,), dtype="m8[s]", compressors=None,
                      fill_value=np.timedelta64(0, "s"), dimension_names=["step"], overwrite=True)
a[...] = np.arange(n, dtype="i8").astype("m8[s]") * 3600
PY
}

@test "faults: a read that needs many chunks from a slow server fails with EIO within one retry budget (6 x timeout_ms = 6 s), not one per chunk; one log line names the key and the spent budget" {
    slow_store slow.zarr 600
    proxy
    local opts=retries=4,timeout_ms=1000 f
    # the first mount sizes the array and persists the sizes; the second sizes
    # it from them, so its chunks are fetched by the read below, not before
    zf_mount "$PROXY_URL/bucket/slow.zarr" -o "$opts"
    f=$(cd "$ZF_MNT" && ls *.txt) || fail "no .txt: $(ls "$ZF_MNT")"
    zf_t stat "$ZF_MNT/$f" >/dev/null || fail "stat: $(tail -n 5 "$ZF_LOG")"
    zf_unmount
    zf_mount "$PROXY_URL/bucket/slow.zarr" -o "$opts"
    zf_t stat "$ZF_MNT/$f" >/dev/null || fail "stat after remount: $(tail -n 5 "$ZF_LOG")"
    # each chunk now takes 0.7 s: below the 1 s without progress that fails an
    # attempt, so each store call succeeds well within its own budget
    net_proxy_set "{\"latency_ms\": 700, \"match\": \"$CHUNKS\"}"
    local before t0 ms rc=0 err=$BATS_TEST_TMPDIR/dd.err
    before=$(wc -l <"$PROXY_LOG")
    t0=$(date +%s%N)
    # one read request of 8 KiB (O_DIRECT: no read-ahead), some 500 chunks
    timeout -k 5 60 dd if="$ZF_MNT/$f" of=/dev/null bs=8192 count=1 iflag=direct 2>"$err" || rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    echo "# the read failed after $ms ms (rc $rc)" >&3
    ((rc != 124 && rc != 137)) || fail "the read hung"
    ((rc != 0)) || fail "the read succeeded: $(tail -n 3 "$ZF_LOG")"
    grep -q 'Input/output error' "$err" || fail "not EIO: $(cat "$err")"
    ((ms >= 5000)) || fail "failed after $ms ms, before the budget was spent: $(tail -n 3 "$ZF_LOG")"
    ((ms <= 6000 + 2000)) || fail "took $ms ms: more than the 6 s budget and 2 s slack"
    local chunks
    chunks=$(tail -n +"$((before + 1))" "$PROXY_LOG" | grep -cvE "$RM_META_RE" || true)
    ((chunks >= 3)) || fail "the read asked for $chunks chunks: several calls were not needed"
    local lines
    lines=$(grep "request's time budget was spent" "$ZF_LOG") || fail "no log line says the budget was spent: $(tail -n 5 "$ZF_LOG")"
    echo "# $lines" >&3
    (($(wc -l <<<"$lines") == 1)) || fail "more than one line: $lines"
    grep -qE 'slow\.zarr/c/[0-9]+: ' <<<"$lines" || fail "the line names no chunk key: $lines"
    alive
    # the server is fast again: the same mount reads the file exactly
    net_proxy_set '{}'
    local remote=$ZF_MNT
    rm_mount_local slow.zarr
    timeout -k 5 60 cat "$remote/$f" >"$BATS_TEST_TMPDIR/slow.txt" || fail "the read after the latency failed"
    cmp -s "$RM_LOCAL/$f" "$BATS_TEST_TMPDIR/slow.txt" || fail "WRONG BYTES after the latency"
}
