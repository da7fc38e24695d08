#!/usr/bin/env bats
# remote_http.bats - stores served by nginx (issue 15): over plain HTTP (IPv4
# and IPv6), over TLS with the test's own CA (-o cafile=; a certificate from
# another CA is rejected), and as gs://bucket/prefix with -o endpoint=.  Every
# array file is compared with the local mount of the same store (names,
# st_size, every byte, random offsets, .info); a store without consolidated
# metadata is read from its root metadata; `ls` and .info fetch no chunk.

load remote

setup_file() {
    rm_setup_file --big-shard
    net_nginx "$RM_DIR/nginx" "$RM_DIR/www"
    export NGX_HTTP NGX_HTTP6 NGX_HTTPS NGX_OTHER NGX_CA NGX_LOG NGX_PID
}

teardown_file() { rm_teardown_file; }

# http_case NAME URL_BASE [OPTS...]: mount NAME locally and from URL_BASE/bucket/NAME
# (OPTS for the remote mount), compare (no listing over HTTP).
http_case() {
    local name=$1 base=$2
    shift 2
    rm_mount_local "$name"
    zf_mount "$base/bucket/$name" "$@"
    rm_compare "$RM_LOCAL" "$ZF_MNT" nolisting
}

@test "http: a consolidated v3 group (sharded, blosc, v2 keys, nested) is the local mount, byte for byte" {
    http_case g3c.zarr "$NGX_HTTP"
    ((RM_COMPARED >= 16)) || fail "only $RM_COMPARED files compared"
}

@test "http: an xarray forecast (v2, consolidated): the labelled .csv is the local mount's and xarray's to_csv" {
    http_case x2c.zarr "$NGX_HTTP"
    rm_labels_oracle "$RM_STORES/x2c.zarr" lead "$ZF_MNT/lead.csv"
}

@test "http: a consolidated v2 group over IPv6 ([::1]) is the local mount, byte for byte" {
    http_case g2c.zarr "$NGX_HTTP6"
}

@test "http: stores whose root is an array (v3 sharded, v2) need no listing; .txt is the oracle's text" {
    local exp
    zf_mktemp exp
    for a in a3 a2; do
        http_case "$a.zarr" "$NGX_HTTP"
        zf_oracle txt "$RM_STORES/$a.zarr" >"$exp/$a.txt" || fail "oracle failed"
        zf_oracle csv "$RM_STORES/$a.zarr" >"$exp/$a.csv" || fail "oracle failed"
        zf_cmp "$exp/$a.txt" "$ZF_MNT/$a.txt"
        zf_cmp "$exp/$a.csv" "$ZF_MNT/$a.csv"
        zf_unmount
    done
}

@test "https: TLS with the test's CA (-o cafile=), over HTTP/2, is the local mount, byte for byte" {
    local before h1 h2
    before=$(wc -l <"$NGX_LOG")
    http_case g3c.zarr "$NGX_HTTPS" -o "cafile=$NGX_CA"
    # nginx offers HTTP/2 on its TLS port: every request of this mount used it
    h2=$(tail -n +$((before + 1)) "$NGX_LOG" | grep -c ' HTTP/2.0" ' || true)
    h1=$(tail -n +$((before + 1)) "$NGX_LOG" | grep -c ' HTTP/1.1" ' || true)
    ((h2 > 10)) || fail "only $h2 requests over HTTP/2"
    ((h1 == 0)) || fail "$h1 requests over HTTP/1.1"
}

@test "https: a certificate from another CA is rejected with a clear error and exit status 1" {
    local before
    before=$(wc -l <"$NGX_LOG")
    zf_run_cli -f -o "cafile=$NGX_CA" "$NGX_OTHER/bucket/g3c.zarr" "$BATS_TEST_TMPDIR"
    [[ $ZF_RC == 1 ]] || fail "exit status $ZF_RC (want 1): $(cat "$ZF_ERR")"
    grep -qiE 'certificate|verif|SSL|TLS' "$ZF_ERR" || fail "the error does not say why: $(cat "$ZF_ERR")"
    [[ $(wc -l <"$ZF_ERR") -le 5 ]] || fail "not a short error: $(cat "$ZF_ERR")"
    # without -o cafile= the system's CA bundle does not know the test's CA either
    zf_run_cli -f "$NGX_HTTPS/bucket/g3c.zarr" "$BATS_TEST_TMPDIR"
    [[ $ZF_RC == 1 ]] || fail "exit status $ZF_RC without cafile (want 1): $(cat "$ZF_ERR")"
    grep -qiE 'certificate|verif|SSL|TLS' "$ZF_ERR" || fail "the error does not say why: $(cat "$ZF_ERR")"
    # no request got through on the rejected connection
    [[ $(tail -n +$((before + 1)) "$NGX_LOG" | grep -c 'g3c.zarr') == 0 ]] || fail "a request was served on an unverified connection"
}

@test "http: ls and .info fetch no chunk and say chunks_present: unknown; a read does fetch" {
    zf_mount "$NGX_HTTP/bucket/g3c.zarr"
    local before after d f n=0
    before=$(rm_chunk_requests "$NGX_LOG")
    for d in "" sub sub/deep; do
        zf_t ls -1f "$ZF_MNT/$d" >/dev/null || fail "ls $d failed"
    done
    for f in "$ZF_MNT"/*.info "$ZF_MNT"/sub/deep/*.info; do
        zf_t cat "$f" >"$BATS_TEST_TMPDIR/info" || fail "cat $f failed"
        grep -qE '^chunks_present: unknown( |$)' "$BATS_TEST_TMPDIR/info" || fail "$f: $(cat "$BATS_TEST_TMPDIR/info")"
        n=$((n + 1))
    done
    ((n == 8)) || fail "$n .info files, expected 8"
    after=$(rm_chunk_requests "$NGX_LOG")
    ((after == before)) || fail "ls and .info fetched $((after - before)) chunks:
$(tail -n $((after - before)) "$NGX_LOG")"
    zf_t cat "$ZF_MNT/v3_plain.txt" >/dev/null || fail "cat failed"
    after=$(rm_chunk_requests "$NGX_LOG")
    ((after > before)) || fail "reading v3_plain.txt fetched no chunk: the request count is wrong"
}

@test "http: a cold stat + cat + csv fetches each stored object once (v2 chunks, v3 shards)" {
    local a objects before after
    for a in a2 a3; do
        objects=$(cd "$RM_STORES/$a.zarr" && find . -type f ! -name zarr.json ! -name '.z*' | wc -l)
        ((objects >= 5)) || fail "$a: only $objects objects"
        before=$(rm_chunk_requests "$NGX_LOG")
        zf_mount "$NGX_HTTP/bucket/$a.zarr"
        zf_t cat "$ZF_MNT/$a.txt" "$ZF_MNT/$a.csv" >/dev/null || fail "cat failed"
        after=$(rm_chunk_requests "$NGX_LOG")
        (( after - before == objects )) || fail "$a: $((after - before)) chunk requests for $objects objects:
$(tail -n $((after - before)) "$NGX_LOG")"
        zf_unmount
    done
}

@test "http: a shard over 8 MiB is read by spans of neighbouring inner chunks, not one GET each" {
    local before after inner
    # shard c/0: 34 inner chunks of 256 KiB (8.5 MiB with its index), c/1: 2
    inner=$(cd "$RM_STORES/bigshard.zarr" && stat -c %s c/0 c/1 | awk '{ n += int($1 / 262144) } END { print n }')
    ((inner == 36)) || fail "bigshard.zarr holds $inner inner chunks, expected 36"
    before=$(rm_chunk_requests "$NGX_LOG")
    zf_mount "$NGX_HTTP/bucket/bigshard.zarr"
    zf_t cat "$ZF_MNT/bigshard.txt" >/dev/null || fail "cat failed"
    after=$(rm_chunk_requests "$NGX_LOG")
    # per shard a HEAD, a whole-shard GET (refused past 8 MiB), its index; c/0's
    # inner chunks in two spans (8 MiB, then the rest): about 2 + 3 per shard,
    # not one GET per inner chunk
    echo "bigshard: $((after - before)) chunk requests for $inner inner chunks" >&3
    ((after - before <= 10)) || fail "$((after - before)) chunk requests for $inner inner chunks:
$(tail -n $((after - before)) "$NGX_LOG")"
    zf_unmount
    http_case bigshard.zarr "$NGX_HTTP"
}

@test "http: a store rewritten while mounted (-o timeout=1): the re-check by ETag shows the new array" {
    cp -r "$RM_STORES/g3c.zarr" "$RM_STORES/chg.zarr"
    zf_mount "$NGX_HTTP/bucket/chg.zarr" -o timeout=1
    local remote=$ZF_MNT old
    old=$(zf_t cat "$remote/v3_plain.txt" | wc -l)
    [[ $old == 851 ]] || fail "v3_plain.txt has $old lines before the change"
    # nginx's ETag is the file's mtime in seconds and its size (and the new
    # document may have the old size): rewrite it in a later second
    sleep 1.1
    # zarr-python grows the array by 3 rows of new values and consolidates again
    zf_t "$ZF_PYTHON" -c '
import sys, warnings, numpy as np, zarr
warnings.simplefilter("ignore")
a = zarr.open_array(sys.argv[1] + "/v3_plain", mode="r+")
a.resize((40, 23))
a[37:] = (np.arange(69, dtype="i8").reshape(3, 23) * 10**9).astype("m8[ns]")
zarr.consolidate_metadata(sys.argv[1])' "$RM_STORES/chg.zarr" || fail "rewriting the store failed"
    rm_mount_local chg.zarr
    local end=$((SECONDS + ZF_MOUNT_TIMEOUT + 5)) n # 20 s, 95 s under valgrind
    until n=$(zf_t cat "$remote/v3_plain.txt" | wc -l) && [[ $n == 920 ]]; do
        ((SECONDS < end)) || fail "the mount still shows $n lines (want 920)"
        sleep 0.5
    done
    zf_cmp "$RM_LOCAL/v3_plain.txt" "$remote/v3_plain.txt"
    zf_cmp "$RM_LOCAL/v3_plain.csv" "$remote/v3_plain.csv"
    zf_cmp "$RM_LOCAL/v3_zstd.txt" "$remote/v3_zstd.txt"
}

@test "http: memory stays within -o cache_size=16M plus the engine's own while 4x10^6 values (32 MiB decoded) are sized and read" {
    if [[ ${ZF_VALGRIND:-0} != 0 ]] || ldd "$ZF_BIN" 2>/dev/null | grep -qE 'lib(a|t)san'; then
        skip "resident memory means nothing under valgrind or a sanitizer"
    fi
    zf_t "$ZF_PYTHON" -c '
import sys, warnings, numpy as np, zarr
warnings.simplefilter("ignore")
v = (np.random.default_rng(5).integers(0, 10**15, 4 * 10**6)).astype("m8[ns]")
a = zarr.create_array(sys.argv[1], shape=v.shape, chunks=(100000,), dtype=v.dtype, overwrite=True)
a[...] = v' "$RM_STORES/big.zarr" || fail "writing big.zarr failed"
    rm_mount_local big.zarr
    zf_mount "$NGX_HTTP/bucket/big.zarr" -o cache_size=16M
    zf_t cmp "$RM_LOCAL/big.txt" "$ZF_MNT/big.txt" || fail "big.txt differs"
    local hwm
    hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$ZF_PID/status")
    echo "# daemon VmHWM after sizing and reading 32 MiB of values with cache_size=16M: $((hwm / 1024)) MiB" >&3
    ((hwm < (16 + 48) * 1024)) || fail "VmHWM $((hwm / 1024)) MiB: above cache_size (16 MiB) + 48 MiB"
}

@test "http: a group without consolidated metadata: the error says consolidation is needed" {
    rm_mount_attempt "$NGX_HTTP/bucket/g3.zarr"
    grep -qi 'consolidat' "$ZF_LOG" || fail "no word on consolidated metadata (mounted: $RM_MOUNTED): $(cat "$ZF_LOG")"
    if ((RM_MOUNTED)); then
        ls "$ZF_MNT" >/dev/null || fail "ls of the mount failed"
        kill -0 "$ZF_PID" || fail "the daemon died"
    else
        [[ $ZF_STATUS == 1 ]] || fail "exit status $ZF_STATUS"
    fi
}

@test "http: a store that is not there fails with exit status 1 and a clear error" {
    zf_run_cli -f "$NGX_HTTP/bucket/nothing.zarr" "$BATS_TEST_TMPDIR"
    [[ $ZF_RC == 1 ]] || fail "exit status $ZF_RC (want 1): $(cat "$ZF_ERR")"
    grep -qiE '404|not found|no such|not a Zarr store' "$ZF_ERR" || fail "unclear error: $(cat "$ZF_ERR")"
    [[ $(wc -l <"$ZF_ERR") == 1 ]] || fail "not one line: $(cat "$ZF_ERR")"
}

@test "zarrfs-cat: an http:// STORE gives the same bytes as the local store (txt, csv)" {
    local cat=$ZF_BUILD_DIR/zarrfs-cat d a
    zf_mktemp d
    for a in a3 a2; do
        zf_t "$cat" "$RM_STORES/$a.zarr" "$a" >"$d/local.txt" || fail "local zarrfs-cat failed"
        zf_t "$cat" "$NGX_HTTP/bucket/$a.zarr" "$a" >"$d/remote.txt" 2>"$d/err" || fail "zarrfs-cat of the URL failed: $(cat "$d/err")"
        zf_cmp "$d/local.txt" "$d/remote.txt"
        zf_t "$cat" --csv "$NGX_HTTP/bucket/$a.zarr" "$a" >"$d/remote.csv" || fail "zarrfs-cat --csv failed"
        zf_t "$cat" --csv "$RM_STORES/$a.zarr" "$a" >"$d/local.csv" || fail "local zarrfs-cat --csv failed"
        zf_cmp "$d/local.csv" "$d/remote.csv"
    done
    zf_t "$cat" "$NGX_HTTP/bucket/g3c.zarr" sub/deep/leaf >"$d/remote.txt" || fail "zarrfs-cat of a nested array failed"
    zf_t "$cat" "$RM_STORES/g3c.zarr" sub/deep/leaf >"$d/local.txt" || fail "local zarrfs-cat failed"
    zf_cmp "$d/local.txt" "$d/remote.txt"
}

@test "http: redirects to another host, or from https to http, are refused with a log line; nothing is asked there" {
    local before f port
    port=${NGX_HTTP##*:}
    before=$(wc -l <"$NGX_LOG")
    zf_mount "$NGX_HTTP/cross/bucket/g2c.zarr"
    f=$(cd "$ZF_MNT" && find . -name '*.txt' | LC_ALL=C sort | head -n 1)
    [[ -n $f ]] || fail "no array shown: $(cat "$ZF_LOG")"
    run zf_t cat "$ZF_MNT/$f"
    [[ $status != 0 && $output == *"Input/output error"* ]] || fail "$f read through a redirect to another host"
    grep -qF "a redirect to http://[::1]:$port refused" "$ZF_LOG" || fail "no log line: $(cat "$ZF_LOG")"
    [[ $(tail -n +$((before + 1)) "$NGX_LOG" | grep -c '^::1 ') == 0 ]] || fail "a request went to [::1]"
    zf_unmount || fail "unmount"
    before=$(wc -l <"$NGX_LOG")
    zf_mount "$NGX_HTTPS/down/bucket/g2c.zarr" -o "cafile=$NGX_CA"
    run zf_t cat "$ZF_MNT/$f"
    [[ $status != 0 ]] || fail "$f read through a redirect from https to http"
    grep -qF "a redirect to http://127.0.0.1:$port refused" "$ZF_LOG" || fail "no log line: $(cat "$ZF_LOG")"
    [[ $(tail -n +$((before + 1)) "$NGX_LOG" | grep -c '"GET /bucket/g2c.zarr/') == 0 ]] ||
        fail "a request went to the plain http server"
}

@test "http: a redirect from http to https on the same host is followed" {
    rm_mount_local g2c.zarr
    zf_mount "$NGX_HTTP/up/bucket/g2c.zarr" -o "cafile=$NGX_CA"
    rm_compare "$RM_LOCAL" "$ZF_MNT" nolisting
}
