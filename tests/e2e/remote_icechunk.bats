#!/usr/bin/env bats
# remote_icechunk.bats - Icechunk repositories (issue 26) served by nginx
# (https with the test's CA, http) and by an S3 server (versitygw): the spec
# 2 repositories of tests/data/icechunk/spec2 and spec 1 ones written here by
# icechunk 1.1 (tests/icechunk/gen_spec1.py), one with virtual chunks served
# by nginx; every .txt and .csv byte for byte against xarray via icechunk
# (tests/icechunk/check_mount.py); a later mount sizes without a chunk
# request; a virtual chunk whose object changed (ETag) and a server that
# stops mid-read fail with EIO and a log line, never other bytes.

load remote

SPEC2=$ZF_REPO/tests/data/icechunk/spec2

setup_file() {
    local root=${ZF_TEST_TMP:-${TMPDIR:-/tmp}}
    mkdir -p "$root"
    RM_DIR=$(mktemp -d "$root/zf-ic.XXXXXX")
    export RM_DIR
    mkdir -p "$RM_DIR/www/ic2"
    cp -a "$SPEC2/forecast.icechunk" "$RM_DIR/www/ic2/"
    net_nginx "$RM_DIR/nginx" "$RM_DIR/www" || return 1
    export NGX_HTTP NGX_HTTPS NGX_CA NGX_LOG NGX_PID
    RUST_LOG=error timeout -k 5 600 "$ZF_PYTHON" "$ZF_REPO/tests/icechunk/gen_spec1.py" \
        "$RM_DIR/www/ic1" --http "$NGX_HTTP/ic1/virt/" >"$RM_DIR/gen1.log" 2>&1 \
        || { tail -n 30 "$RM_DIR/gen1.log" >&2; return 1; }
    export S3_KEY=zfkey$RANDOM S3_SECRET=zfSecret-$RANDOM$RANDOM
    net_versitygw "$RM_DIR/vgw" "$S3_KEY" "$S3_SECRET" || return 1
    export VGW_URL VGW_LOG
    AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET AWS_REGION=us-east-1 \
        net_s3 put "$VGW_URL" icechunk "repos/forecast.icechunk" "$SPEC2/forecast.icechunk" 2>/dev/null \
        || { echo "upload failed" >&2; return 1; }
}

teardown_file() { rm_teardown_file; }

# check LABEL EXPECTED [NAME...]: the mount is that state of expected.json
# (or, with NAMEs, those arrays' files are)
check() {
    local label=$1 exp=$2
    shift 2
    zf_t "$ZF_PYTHON" "$ZF_REPO/tests/icechunk/check_mount.py" "$ZF_MNT" "$exp" "$label" "$@" \
        || fail "$label differs; log: $(cat "$ZF_LOG")"
}

# chunk_gets LOG: requests in an nginx log for chunks/ (native chunks)
chunk_gets() { grep -c '"GET [^ ]*/chunks/' "$1" || true; }

@test "https: a spec 2 repository at a branch, a tag, a snapshot id and a second branch" {
    local base=$NGX_HTTPS/ic2/forecast.icechunk snap
    zf_mount "$base" -o "cafile=$NGX_CA,nat="
    check main "$SPEC2/expected.json"
    grep -q '^repository: https://' "$ZF_MNT/lead_time.info" || fail "no repository line"
    zf_unmount
    zf_mount "$base" -o "cafile=$NGX_CA,nat=,tag=v1"
    check v1 "$SPEC2/expected.json"
    zf_unmount
    snap=$(zf_t "$ZF_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["c1"])' "$SPEC2/facts.json")
    zf_mount "$base" -o "cafile=$NGX_CA,nat=,snapshot=$snap"
    check c1 "$SPEC2/expected.json"
    zf_unmount
    zf_mount "$base" -o "cafile=$NGX_CA,nat=,branch=dev"
    check dev "$SPEC2/expected.json"
}

@test "http: a spec 1 repository, and virtual chunks nginx serves (consent given)" {
    local exp=$RM_DIR/www/ic1/expected.json
    zf_mount "$NGX_HTTP/ic1/forecast1.icechunk" -o nat=
    check main "$exp"
    zf_unmount
    zf_mount "$NGX_HTTP/ic1/web1.icechunk" -o "nat=,virtual=$NGX_HTTP/ic1/virt/"
    check web1 "$exp"
}

@test "http: an unknown branch fails the mount with one line (no listing over HTTP)" {
    local mnt
    zf_mktemp mnt
    zf_run_cli -f "$NGX_HTTP/ic1/forecast1.icechunk" "$mnt" -o branch=nope
    ((ZF_RC == 1)) || fail "status $ZF_RC: $(cat "$ZF_ERR")"
    grep -q "no branch 'nope' (this store cannot be listed to tell which exist)" "$ZF_ERR" \
        || fail "$(cat "$ZF_ERR")"
    (($(wc -l <"$ZF_ERR") == 1)) || fail "more than one line: $(cat "$ZF_ERR")"
}

@test "http: a later mount of the same snapshot sizes every file without a chunk request" {
    export XDG_CACHE_HOME=$RM_DIR/xdg-later
    local before after sizes1 sizes2
    zf_mount "$NGX_HTTPS/ic2/forecast.icechunk" -o "cafile=$NGX_CA,nat="
    sizes1=$(zf_t stat -c '%n %s' "$ZF_MNT"/*.txt "$ZF_MNT"/native/*.txt)
    zf_unmount
    before=$(chunk_gets "$NGX_LOG")
    zf_mount "$NGX_HTTPS/ic2/forecast.icechunk" -o "cafile=$NGX_CA,nat="
    sizes2=$(zf_t stat -c '%n %s' "$ZF_MNT"/*.txt "$ZF_MNT"/native/*.txt)
    after=$(chunk_gets "$NGX_LOG")
    [[ $(sed 's|.*/mnt/||' <<<"$sizes1") == $(sed 's|.*/mnt/||' <<<"$sizes2") ]] || fail "sizes differ"
    ((after == before)) || fail "$((after - before)) chunk requests to size a mount seen before"
}

@test "s3: a spec 2 repository in an S3 bucket, at main and at a tag" {
    export AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET AWS_REGION=us-east-1
    zf_mount "s3://icechunk/repos/forecast.icechunk" -o "endpoint=$VGW_URL,nat="
    check main "$SPEC2/expected.json"
    zf_unmount
    zf_mount "s3://icechunk/repos/forecast.icechunk" -o "endpoint=$VGW_URL,nat=,tag=v1"
    check v1 "$SPEC2/expected.json"
}

@test "http: a virtual chunk whose object changed (its ETag) fails with EIO and a log line" {
    local virt=$RM_DIR/www/ic1/virt
    cp -p "$virt/lead.bin" "$RM_DIR/lead.bin.orig"
    touch -d '2030-01-01' "$virt/lead.bin" # nginx's ETag is its mtime and size
    zf_mount "$NGX_HTTP/ic1/web1.icechunk" -o "nat=,virtual=$NGX_HTTP/ic1/virt/"
    run cat "$ZF_MNT/lead.txt"
    ((status != 0)) || fail "read a changed object"
    grep -q 'lead.bin: changed since the reference was written' "$ZF_LOG" || fail "no log line: $(cat "$ZF_LOG")"
    check web1 "$RM_DIR/www/ic1/expected.json" time # an unchanged object reads as before
    cp -p "$RM_DIR/lead.bin.orig" "$virt/lead.bin"
}

@test "http: a server that stops mid-read: EIO and a log line, never other bytes" {
    net_nginx "$RM_DIR/nginx2" "$RM_DIR/www" || fail "nginx did not start"
    zf_mount "$NGX_HTTP/ic2/forecast.icechunk" -o "nat=,retries=2,timeout_ms=1000"
    zf_t cat "$ZF_MNT/init_time.txt" >/dev/null || fail "first read"
    net_stop "$NGX_PID"
    run zf_t cat "$ZF_MNT/forecast_age.txt"
    ((status != 0)) || fail "read through a stopped server: $output"
    grep -qE 'ic2/forecast.icechunk.*(could not connect|refused|timed out)' "$ZF_LOG" || fail "no log line: $(cat "$ZF_LOG")"
}
