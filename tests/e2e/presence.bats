#!/usr/bin/env bats
# presence.bats - a chunk, array or group is absent only when the store said
# so (store.h, README "When the store cannot say").  Every failure at every
# store operation, on each backend: local directories (tests/faultfs: an
# LD_PRELOAD shim failing chosen paths with EACCES or EIO, for root too), HTTP
# (nginx behind tests/net/faultproxy.py) and S3 (versitygw behind
# it): a listing, a later page of one, a stamp (HEAD), a read, a ranged read;
# for arrays of one chunk, flat, nested and sharded keys, groups, the
# coordinates of the labelled .csv, .info and the re-check.  What the store
# could not tell fails with EIO and one log line naming the key and the
# reason; everything served is the local mount's bytes; once the store
# answers again, the same mount serves every byte of the local mount.

load remote

# each array sized only when asked: an array sized ahead (-o presize) would
# persist its index, and a later case's stat of it would answer from that
# instead of meeting the fault (presize.bats has the faults of sizing ahead)
ZF_MOUNT_OPTS=(-o presize=0)

# remote mounts: failures come quickly (2 attempts, 1 s without progress)
PR_OPTS=retries=2,timeout_ms=1000
# seconds a re-check may take to show what the store says again; the tests
# that count re-checks by the clock do not run under valgrind (20-50 x slower)
PR_RECHECK=20
PR_TIMED= PR_MANY=
if [[ ${ZF_VALGRIND:-0} != 0 ]]; then
    PR_RECHECK=120
    PR_TIMED="under valgrind the re-check's pacing means nothing (the other tests run there)"
    PR_MANY="a matrix of remote mounts: under ASan, not valgrind (20-50 x slower; the local ones run)"
fi

setup_file() {
    rm_setup_file
    net_nginx "$RM_DIR/nginx" "$RM_DIR/www"
    export S3_KEY=zfkey$RANDOM S3_SECRET=zfSecret-$RANDOM$RANDOM-$(date +%N)
    net_versitygw "$RM_DIR/vgw" "$S3_KEY" "$S3_SECRET"
    local s
    for s in g3 a3 x3; do
        AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET AWS_REGION=us-east-1 \
            net_s3 put "$VGW_URL" zarr "stores/$s.zarr" "$RM_STORES/$s.zarr" 2>/dev/null \
            || { echo "upload of $s failed" >&2; return 1; }
    done
    # one fault proxy in front of each server for the whole file (each test
    # sets its faults, teardown clears them); they stop by themselves
    net_proxy "$RM_DIR/px-http" "${NGX_HTTP#http://}" 3000 || return 1
    export PX_HTTP=$PROXY_URL PX_HTTP_CTL=$PROXY_CTL PX_HTTP_LOG=$PROXY_LOG
    net_proxy "$RM_DIR/px-s3" "${VGW_URL#http://}" 3000 || return 1
    export PX_S3=$PROXY_URL PX_S3_CTL=$PROXY_CTL PX_S3_LOG=$PROXY_LOG
    export VGW_URL VGW_DATA=$RM_DIR/vgw/data/zarr/stores
}

teardown_file() { rm_teardown_file; }

setup() {
    export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
    export AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET AWS_REGION=us-east-1
    unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_CA_BUNDLE
    PR_CONF=$BATS_TEST_TMPDIR/faultfs.conf
    : >"$PR_CONF"
}

teardown() {
    zf_teardown
    PROXY_CTL=$PX_HTTP_CTL net_proxy_set '{}'
    PROXY_CTL=$PX_S3_CTL net_proxy_set '{}'
}

# ---------------------------------------------------------------- helpers

# local_faults RULES: the shim's rules (tests/faultfs/faultfs.c), one a line;
# "" clears them.  A new mtime makes the daemon read them again.
local_faults() {
    printf '%s\n' "$1" >"$PR_CONF.tmp"
    mv -f "$PR_CONF.tmp" "$PR_CONF"
    touch -d "@$(date +%s.%N)" "$PR_CONF"
}

# mount_shimmed STORE [OPTS...]: mount STORE with the shim loaded (ZF_MNT).
mount_shimmed() {
    local shim=$ZF_BUILD_DIR/zf_faultfs.so
    [[ -f $shim ]] || fail "no $shim (build first)"
    LD_PRELOAD=$shim ZF_FAULTFS_CONF=$PR_CONF ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
        zf_mount "$@"
}

# px_faults HTTP|S3 JSON: the faults of one proxy from now on.
px_faults() {
    local ctl=$PX_HTTP_CTL
    [[ $1 == S3 ]] && ctl=$PX_S3_CTL
    PROXY_CTL=$ctl net_proxy_set "$2"
}

# s3_error CODE MESSAGE: an S3 error document (a fault's body; no quotes:
# it goes inside a JSON string)
s3_error() {
    printf '<Error><Code>%s</Code><Message>%s</Message></Error>' "$1" "$2"
}

# unmount_last: unmount the newest mount (the faulted one), keep the others.
unmount_last() {
    zf_unmount_one $((${#ZF_MOUNTS[@]} - 1)) || fail "unmounting $ZF_MNT failed"
}

# expect_eio MNT FILE LOGRE WHAT: stat of FILE fails with EIO (its size
# needs what the store could not tell), and so does cat, never a hang; and
# exactly one new log line of the daemon matches LOGRE (the key and the
# reason).
expect_eio() {
    local mnt=$1 f=$2 re=$3 what=$4 err=$BATS_TEST_TMPDIR/eio.err size before n
    before=$(grep -cE "$re" "$ZF_LOG" || true)
    if size=$(zf_t stat -c %s "$mnt/$f" 2>"$err"); then
        fail "$what: $f has a size ($size) although the store could not tell: $(tail -n 3 "$ZF_LOG")"
    fi
    grep -q 'Input/output error' "$err" || fail "$what: stat $f failed, but not with EIO: $(cat "$err")"
    n=$(grep -cE "$re" "$ZF_LOG" || true)
    ((n - before == 1)) || fail "$what: $((n - before)) log lines match /$re/ (want one):
$(tail -n 8 "$ZF_LOG")"
    zf_t cat "$mnt/$f" >/dev/null 2>"$err" && fail "$what: cat $f succeeded after its stat failed"
    grep -q 'Input/output error' "$err" || fail "$what: cat $f failed, but not with EIO: $(cat "$err")"
}

# expect_same LOCAL REMOTE FILES...: each file of the mount REMOTE is byte
# for byte the local mount's, with its size.
expect_same() {
    local l=$1 r=$2 f
    shift 2
    for f in "$@"; do
        if [[ $f == *.info ]]; then # a remote .info has a credentials line more
            cmp <(rm_info "$l/$f") <(rm_info "$r/$f") || fail "$f differs from the local mount"
            continue
        fi
        [[ $(zf_t stat -c %s "$r/$f") == $(stat -c %s "$l/$f") ]] \
            || fail "$f: st_size $(zf_t stat -c %s "$r/$f" 2>&1) on the mount, $(stat -c %s "$l/$f") locally"
        zf_t cmp "$l/$f" "$r/$f" || fail "$f differs from the local mount"
    done
}

# -------------------------------------------------------------- local

@test "local: a listing, a later part of one, an entry's stat, an open and a read that fail: EIO and one log line naming the key and reason, never fill values; every byte once they stop" {
    rm_mount_local g3.zarr
    local ref=$RM_LOCAL i rule file re
    # rule | file of the failing array | log line (key: reason)
    local -a cases=(
        "readdir EIO */g3.zarr/v3_plain/c|v3_plain.txt|v3_plain: cannot tell which chunks are stored: v3_plain/c: readdir: Input/output error"
        "readdir:1 EIO */g3.zarr/v3_plain/c/1|v3_plain.csv|v3_plain/c/1: readdir: Input/output error"
        "open EACCES */g3.zarr/v3_zstd/c|v3_zstd.txt|v3_zstd/c: cannot open: Permission denied"
        "stat EIO */g3.zarr/v3_keys_v2_dot/1.0|v3_keys_v2_dot.txt|v3_keys_v2_dot: 1.0: cannot stat: Input/output error"
        "open EACCES */g3.zarr/v3_shard_end/c/1|v3_shard_end.txt|v3_shard_end/c/1: .*Permission denied"
        "read EIO */g3.zarr/v3_blosc_lz4_shuffle/c/0/1|v3_blosc_lz4_shuffle.csv|v3_blosc_lz4_shuffle/c/0/1: .*Input/output error"
        "readdir EIO */g3.zarr/v3_shard_start/c|v3_shard_start.info|v3_shard_start/c: readdir: Input/output error"
        "stat EIO */g3.zarr/sub/deep/leaf/c/1|sub/deep/leaf.txt|sub/deep/leaf/c: 1: cannot stat: Input/output error"
    )
    for i in "${!cases[@]}"; do
        IFS='|' read -r rule file re <<<"${cases[$i]}"
        local_faults "$rule"
        mount_shimmed "$RM_STORES/g3.zarr"
        expect_eio "$ZF_MNT" "$file" "$re" "case $i ($rule)"
        if [[ $file != v3_zstd.* ]]; then # the rest of the store is served
            expect_same "$ref" "$ZF_MNT" v3_zstd.csv
        fi
        # the store answers again: the same mount, every byte of the array
        local_faults ""
        expect_same "$ref" "$ZF_MNT" "${file%.*}.txt" "${file%.*}.csv" "${file%.*}.info"
        unmount_last
    done
}

@test "local: a group that cannot be listed, or a child whose metadata cannot be read, is not shown empty: ls and lookups there fail with EIO; the re-check shows it all once the store answers" {
    rm_mount_local g3.zarr
    local ref=$RM_LOCAL
    local_faults "readdir EIO */g3.zarr/sub
open EACCES */g3.zarr/v3_plain/zarr.json"
    mount_shimmed "$RM_STORES/g3.zarr" -o timeout=1
    grep -qE 'g3.zarr/sub: cannot list this group: readdir: Input/output error' "$ZF_LOG" \
        || fail "no log line for sub: $(cat "$ZF_LOG")"
    grep -qE 'g3.zarr/v3_plain: cannot read its metadata: zarr.json: cannot open: Permission denied' "$ZF_LOG" \
        || fail "no log line for v3_plain: $(cat "$ZF_LOG")"
    local out=$BATS_TEST_TMPDIR/ls.out err=$BATS_TEST_TMPDIR/ls.err
    zf_t ls "$ZF_MNT/sub" >"$out" 2>"$err" && fail "ls of a group that cannot be listed succeeded: $(cat "$out")"
    grep -q 'Input/output error' "$err" || fail "ls sub: $(cat "$err")"
    zf_t stat "$ZF_MNT/sub/deep" 2>"$err" && fail "a lookup in a group that cannot be listed succeeded"
    grep -q 'Input/output error' "$err" || fail "lookup in sub: not EIO: $(cat "$err")"
    # the root: the names it knows, then EIO (ls shows them and fails)
    zf_t ls "$ZF_MNT" >"$out" 2>"$err" && fail "ls of the root succeeded although v3_plain is unknown"
    grep -qx v3_zstd.txt "$out" || fail "ls of the root shows no known name: $(cat "$out")"
    zf_t stat "$ZF_MNT/v3_plain.txt" 2>"$err" && fail "v3_plain.txt found although its metadata is unreadable"
    grep -q 'Input/output error' "$err" || fail "lookup of v3_plain.txt: not EIO (ENOENT would be a guess): $(cat "$err")"
    expect_same "$ref" "$ZF_MNT" v3_zstd.txt v3_zstd.csv
    # the store answers again: the next re-check (1 s) shows everything
    local_faults ""
    local end=$((SECONDS + PR_RECHECK))
    until zf_t ls "$ZF_MNT/sub/deep" >/dev/null 2>&1 && zf_t stat "$ZF_MNT/v3_plain.txt" >/dev/null 2>&1; do
        ((SECONDS < end)) || fail "the view did not come back: $(tail -n 5 "$ZF_LOG")"
        sleep 0.3
    done
    rm_compare "$ref" "$ZF_MNT"
}

@test "local: the coordinates of the labelled .csv and an array of one chunk that cannot be read: EIO (never index labels or fill), the .txt exact meanwhile; every byte after" {
    rm_mount_local x3.zarr
    local ref=$RM_LOCAL
    local_faults "read EIO */x3.zarr/init_time/c/2
stat EIO */x3.zarr/step/c/0"
    mount_shimmed "$RM_STORES/x3.zarr"
    expect_eio "$ZF_MNT" lead.csv "lead: coordinate init_time: .*chunk 2 cannot be read" "a coordinate's chunk"
    # the .txt needs no coordinate: sized and read exactly meanwhile
    expect_same "$ref" "$ZF_MNT" lead.txt
    grep -qx 'csv_bytes: not known yet (its labels are read when it is first read or stat-ed)' \
        "$ZF_MNT/lead.info" || fail "lead.info: $(grep bytes "$ZF_MNT/lead.info")"
    expect_eio "$ZF_MNT" step.txt "x3.zarr/step: cannot tell which chunks are stored: step/c/0: stat: Input/output error" "one chunk"
    # one chunk of a coordinate that is not a dimension's: its own values
    local_faults "stat EIO */x3.zarr/valid_time/c/0/0"
    expect_eio "$ZF_MNT" valid_time.csv "x3.zarr/valid_time: cannot tell which chunks are stored: valid_time/c/0/0: stat: Input/output error" "one chunk of a coordinate"
    local_faults ""
    expect_same "$ref" "$ZF_MNT" lead.csv step.txt step.csv step.info lead.info valid_time.csv valid_time.txt
}

@test "local: the re-check of a sized array whose chunk listing fails keeps the last view (said once, and once when it answers again)" {
    [[ -z $PR_TIMED ]] || skip "$PR_TIMED"
    rm_mount_local g3.zarr
    local ref=$RM_LOCAL
    mount_shimmed "$RM_STORES/g3.zarr" -o timeout=0.2
    expect_same "$ref" "$ZF_MNT" v3_plain.txt
    local_faults "readdir EIO */g3.zarr/v3_plain/c"
    sleep 2
    grep -q 'the store could not be re-checked' "$ZF_LOG" || fail "the failing re-check was not logged: $(cat "$ZF_LOG")"
    grep -q 'the store changed' "$ZF_LOG" && fail "a failing listing was taken for a change: $(cat "$ZF_LOG")"
    (($(grep -c 'could not be re-checked' "$ZF_LOG") == 1)) || fail "said more than once: $(cat "$ZF_LOG")"
    expect_same "$ref" "$ZF_MNT" v3_plain.txt v3_plain.csv
    local_faults ""
    sleep 1.5
    (($(grep -c 'the store answers again' "$ZF_LOG") == 1)) || fail "recovery not said once: $(cat "$ZF_LOG")"
    grep -q 'the store changed' "$ZF_LOG" && fail "the recovery was taken for a change: $(cat "$ZF_LOG")"
    rm_compare "$ref" "$ZF_MNT"
}

# ---------------------------------------------------------------- S3

@test "s3: a chunk listing that fails (503, 500, 403 InvalidAccessKeyId, 400 ExpiredToken, HTML or broken XML in a 200, a reset, a later page; nested, flat and sharded keys): EIO and one log line with the key and reason; every byte once it stops" {
    [[ -z $PR_MANY ]] || skip "$PR_MANY"
    rm_mount_local g3.zarr
    local ref=$RM_LOCAL i fault arr dir re list
    # array | its chunks' listing prefix (URL-encoded) | fault (@L@: the listing's match) | reason
    local -a cases=(
        "v3_plain|v3_plain%2Fc%2F|{\"fault\": \"status\", \"status\": 503, \"match\": \"@L@\"}|HTTP 503 after 2 attempts"
        "v3_keys_v2_dot|v3_keys_v2_dot%2F|{\"fault\": \"status\", \"status\": 500, \"match\": \"@L@\"}|HTTP 500 after 2 attempts"
        "v3_shard_end|v3_shard_end%2Fc%2F|{\"fault\": \"status\", \"status\": 403, \"content_type\": \"application/xml\", \"body\": \"$(s3_error InvalidAccessKeyId 'The AWS Access Key Id you provided does not exist')\", \"match\": \"@L@\"}|HTTP 403 InvalidAccessKeyId"
        "sub/deep/leaf|sub%2Fdeep%2Fleaf%2Fc%2F|{\"fault\": \"status\", \"status\": 400, \"content_type\": \"application/xml\", \"body\": \"$(s3_error ExpiredToken 'The provided token has expired.')\", \"match\": \"@L@\"}|HTTP 400 ExpiredToken"
        "v3_plain|v3_plain%2Fc%2F|{\"fault\": \"status\", \"status\": 200, \"content_type\": \"text/html\", \"body\": \"<html><body>Down for maintenance</body></html>\", \"match\": \"@L@\"}|not a ListObjectsV2 page"
        "v3_keys_v2_dot|v3_keys_v2_dot%2F|{\"fault\": \"status\", \"status\": 200, \"content_type\": \"application/xml\", \"body\": \"<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>stores/g3.zarr/v3_keys_v2_dot/0.0\", \"match\": \"@L@\"}|not a ListObjectsV2 page"
        "v3_shard_start|v3_shard_start%2Fc%2F|{\"fault\": \"reset\", \"match\": \"@L@\"}|v3_shard_start/c"
        "v3_plain|v3_plain%2Fc%2F|{\"fault\": \"status\", \"status\": 503, \"match\": \"@L@(?=.*continuation-token)\"}|page [0-9]+ of the listing: HTTP 503"
        "v3_keys_v2_dot|v3_keys_v2_dot%2F|{\"fault\": \"status\", \"status\": 503, \"match\": \"@L@(?=.*continuation-token)\"}|page [0-9]+ of the listing: HTTP 503"
    )
    for i in "${!cases[@]}"; do
        IFS='|' read -r arr dir fault re <<<"${cases[$i]}"
        list="(?=.*list-type=2)(?=.*prefix=stores%2Fg3.zarr%2F$dir)"
        px_faults S3 "${fault//@L@/$list}"
        ZF_S3_MAX_KEYS=2 zf_mount s3://zarr/stores/g3.zarr -o "endpoint=$PX_S3" -o "$PR_OPTS"
        expect_eio "$ZF_MNT" "$arr.txt" "${arr##*/}: cannot tell which chunks are stored: .*$re" "case $i ($arr)"
        expect_same "$ref" "$ZF_MNT" v3_zstd.txt
        px_faults S3 '{}'
        expect_same "$ref" "$ZF_MNT" "$arr.txt" "$arr.csv" "$arr.info"
        unmount_last
    done
}

@test "s3: a group whose listing fails at mount (or one page of it) is not empty but unknown; a single chunk whose HEAD fails is not absent; the coordinates of the .csv; all exact after" {
    [[ -z $PR_MANY ]] || skip "$PR_MANY"
    rm_mount_local x3.zarr
    local ref=$RM_LOCAL err=$BATS_TEST_TMPDIR/err
    # one chunk: stamped with a HEAD (405, 403, 503, a 416): never taken for absent
    local st
    for st in 405 403 503 416; do
        px_faults S3 "{\"fault\": \"status\", \"status\": $st, \"method\": \"HEAD\", \"match\": \"/step/c/0\$\"}"
        zf_mount s3://zarr/stores/x3.zarr -o "endpoint=$PX_S3" -o "$PR_OPTS"
        expect_eio "$ZF_MNT" step.txt "step: cannot tell which chunks are stored: step/c/0: HTTP $st" "HEAD $st"
        px_faults S3 '{}'
        expect_same "$ref" "$ZF_MNT" step.txt step.csv
        unmount_last
    done
    # a coordinate's chunk: the .csv fails, the .txt (which needs none) is exact
    px_faults S3 '{"fault": "status", "status": 503, "method": "GET", "match": "/init_time/c/3$"}'
    zf_mount s3://zarr/stores/x3.zarr -o "endpoint=$PX_S3" -o "$PR_OPTS"
    expect_eio "$ZF_MNT" lead.csv "lead: coordinate init_time: .*chunk 3 cannot be read" "a coordinate"
    expect_same "$ref" "$ZF_MNT" step.txt lead.txt
    px_faults S3 '{}'
    expect_same "$ref" "$ZF_MNT" lead.csv lead.txt
    unmount_last
    # the group's own listing, at mount: a later page fails
    rm_mount_local g3.zarr
    ref=$RM_LOCAL
    px_faults S3 '{"fault": "status", "status": 503, "match": "(?=.*prefix=stores%2Fg3.zarr%2F(&|$))(?=.*continuation-token)"}'
    ZF_S3_MAX_KEYS=2 zf_mount s3://zarr/stores/g3.zarr -o "endpoint=$PX_S3" -o "$PR_OPTS" -o timeout=1
    grep -qE 'g3.zarr: cannot list this group: page [0-9]+ of the listing: HTTP 503' "$ZF_LOG" \
        || fail "no log line for the root's failing page: $(cat "$ZF_LOG")"
    zf_t ls "$ZF_MNT" >/dev/null 2>"$err" && fail "ls of a root whose listing failed succeeded"
    grep -q 'Input/output error' "$err" || fail "ls: $(cat "$err")"
    zf_t stat "$ZF_MNT/v3_zstd.txt" 2>"$err" && fail "a name found in a listing that failed"
    grep -q 'Input/output error' "$err" || fail "lookup: not EIO: $(cat "$err")"
    px_faults S3 '{}'
    local end=$((SECONDS + PR_RECHECK))
    until zf_t stat "$ZF_MNT/sub/deep/leaf.txt" >/dev/null 2>&1; do
        ((SECONDS < end)) || fail "the view did not come back: $(tail -n 5 "$ZF_LOG")"
        sleep 0.3
    done
    rm_compare "$ref" "$ZF_MNT"
}

@test "s3: the re-check whose listings fail keeps the last view (said once, and once when it answers again), never 'the store changed' or fill values" {
    [[ -z $PR_TIMED ]] || skip "$PR_TIMED"
    rm_mount_local g3.zarr
    local ref=$RM_LOCAL
    zf_mount s3://zarr/stores/g3.zarr -o "endpoint=$PX_S3" -o "$PR_OPTS" -o timeout=0.5
    rm_compare "$ref" "$ZF_MNT"
    px_faults S3 '{"fault": "status", "status": 503, "match": "list-type=2"}'
    sleep 6
    grep -q 'the store could not be re-checked' "$ZF_LOG" || fail "not logged: $(tail -n 5 "$ZF_LOG")"
    (($(grep -c 'could not be re-checked' "$ZF_LOG") == 1)) || fail "said more than once: $(grep -c 'could not be re-checked' "$ZF_LOG")"
    grep -q 'the store changed' "$ZF_LOG" && fail "a failing re-check was taken for a change: $(cat "$ZF_LOG")"
    expect_same "$ref" "$ZF_MNT" v3_plain.txt sub/deep/leaf.csv v3_shard_end.txt
    px_faults S3 '{}'
    sleep 3
    (($(grep -c 'the store answers again' "$ZF_LOG") == 1)) || fail "recovery not said once: $(tail -n 5 "$ZF_LOG")"
    grep -q 'the store changed' "$ZF_LOG" && fail "recovery taken for a change"
    rm_compare "$ref" "$ZF_MNT"
}

@test "s3: a chunk present when the array was sized and deleted since is a change: EIO and a log line, never fill values at the old offsets (flat, nested, sharded by ranges)" {
    local d=$BATS_TEST_TMPDIR/del
    mkdir -p "$d"
    cp -r "$RM_STORES/g3.zarr" "$d/del.zarr"
    net_s3 put "$VGW_URL" zarr stores/del.zarr "$d/del.zarr" 2>/dev/null || fail "upload failed"
    # a cache too small to keep chunks or whole shards: every read goes to the store
    zf_mount s3://zarr/stores/del.zarr -o "endpoint=$VGW_URL" -o cache_size=1K
    local f key fd all=(v3_plain v3_keys_v2_dot v3_shard_end v3_shard_inner_gzip)
    local -A fds
    # each file sized and held open: an open file keeps its version (the
    # first change found has the view rebuilt at once, and a file opened
    # after that shows the store as it is then)
    for f in "${all[@]}"; do
        zf_t stat "$ZF_MNT/$f.txt" >/dev/null || fail "$f: stat: $(tail -n 3 "$ZF_LOG")"
        exec {fd}<"$ZF_MNT/$f.txt" || fail "cannot open $f.txt"
        fds[$f]=$fd
    done
    for key in v3_plain/c/1/1 v3_keys_v2_dot/1.1 v3_shard_end/c/1/0 v3_shard_inner_gzip/c/0/1; do
        rm "$VGW_DATA/del.zarr/$key" "$d/del.zarr/$key" || fail "cannot delete $key"
        f=${key%%/*}
        local err=$BATS_TEST_TMPDIR/cat.err
        zf_t cat <&"${fds[$f]}" >/dev/null 2>"$err" && fail "$f.txt read whole after $key was deleted: $(tail -n 3 "$ZF_LOG")"
        grep -q 'Input/output error' "$err" || fail "$f: not EIO: $(cat "$err")"
        grep -qE "${key//./\\.}: the store changed while mounted" "$ZF_LOG" || fail "no log line names $key: $(tail -n 3 "$ZF_LOG")"
    done
    for f in "${all[@]}"; do exec {fds[$f]}<&-; done
    # a new open shows the store as it is now, exactly
    local remote=$ZF_MNT end=$((SECONDS + PR_RECHECK))
    zf_mount "$d/del.zarr"
    for f in "${all[@]}"; do
        until cmp -s "$ZF_MNT/$f.txt" "$remote/$f.txt"; do
            ((SECONDS < end)) || fail "$f.txt after the deletion differs from the local store: $(tail -n 3 "$ZF_LOG")"
            sleep 0.3
        done
    done
}

# ------------------------------------------------------- HTTP

@test "http: a single chunk whose HEAD fails (405, 403, 503, 416) is not absent; a failing re-check of the consolidated metadata keeps the view (never emptied); exact after" {
    [[ -z $PR_MANY ]] || skip "$PR_MANY"
    rm_mount_local x3.zarr
    local ref=$RM_LOCAL url st
    # x3 written again with consolidated metadata (HTTP reads through it)
    cp -r "$RM_STORES/x3.zarr" "$RM_STORES/x3c.zarr"
    "$ZF_PYTHON" -c 'import sys, zarr; zarr.consolidate_metadata(sys.argv[1])' "$RM_STORES/x3c.zarr" 2>/dev/null \
        || fail "cannot consolidate"
    local -a ep
    for url in "$PX_HTTP/bucket/x3c.zarr"; do
        ep=(-o "$PR_OPTS")
        for st in 405 403 503 416; do
            px_faults HTTP "{\"fault\": \"status\", \"status\": $st, \"method\": \"HEAD\", \"match\": \"/step/c/0\$\"}"
            zf_mount "$url" "${ep[@]}"
            if [[ $st == 405 ]]; then # no HEAD here: the first byte's GET stamps it
                expect_same "$ref" "$ZF_MNT" step.txt step.csv
                grep -qE 'GET [^ ]*/step/c/0 .*range=bytes=0-0 ' "$PX_HTTP_LOG" \
                    || fail "no ranged GET stamped the chunk: $(grep step/c/0 "$PX_HTTP_LOG")"
                unmount_last
                continue
            fi
            expect_eio "$ZF_MNT" step.txt "step: cannot tell which chunks are stored: step/c/0: HTTP $st" "$url, HEAD $st"
            px_faults HTTP '{}'
            expect_same "$ref" "$ZF_MNT" step.txt step.csv
            unmount_last
        done
    done
    # the re-check: the consolidated document's HEAD and GET fail (v2's
    # .zmetadata, v3's root zarr.json)
    [[ -z $PR_TIMED ]] || skip "$PR_TIMED"
    local doc name
    for url in "$PX_HTTP/bucket/g2c.zarr" "$PX_HTTP/bucket/g3c.zarr"; do
        name=${url##*/}
        rm_mount_local "$name"
        ref=$RM_LOCAL
        ep=(-o "$PR_OPTS" -o timeout=0.5)
        zf_mount "$url" "${ep[@]}"
        rm_compare "$ref" "$ZF_MNT" nolisting
        doc='g2c\\.zarr/\\.zmetadata$'
        [[ $name == g3c.zarr ]] && doc='g3c\\.zarr/zarr\\.json$'
        px_faults HTTP "{\"fault\": \"status\", \"status\": 503, \"match\": \"$doc\"}"
        sleep 5
        grep -q 'fault=status 503' "$PX_HTTP_LOG" || fail "$url: no request was faulted"
        grep -q 'the store could not be re-checked' "$ZF_LOG" || fail "$url: not logged: $(tail -n 5 "$ZF_LOG")"
        (($(grep -c 'could not be re-checked\|invalid root metadata' "$ZF_LOG") == 1)) \
            || fail "$url: said more than once: $(tail -n 5 "$ZF_LOG")"
        grep -q 'the store changed' "$ZF_LOG" && fail "$url: the view was replaced: $(tail -n 5 "$ZF_LOG")"
        rm_compare "$ref" "$ZF_MNT" nolisting
        px_faults HTTP '{}'
        sleep 2
        (($(grep -c 'the store answers again' "$ZF_LOG") == 1)) || fail "$url: recovery not said once"
        zf_unmount
    done
}
