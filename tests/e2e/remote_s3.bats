#!/usr/bin/env bats
# remote_s3.bats - stores in an S3 server that checks SigV4 signatures
# (versitygw, posix backend), uploaded by boto3: s3://bucket/prefix with
# credentials from AWS_* variables and from AWS_PROFILE with a credentials
# file, -o endpoint= and AWS_ENDPOINT_URL; stores without consolidated
# metadata are walked with ListObjectsV2 (an array of 1100 chunks takes more
# than one page); a wrong secret fails with a clear error and exit status 1;
# the secret is never in the log, .info, the mount table or argv.

load remote

setup_file() {
    rm_setup_file --many 1100
    export S3_KEY=zfkey$RANDOM S3_SECRET=zfSecret-$RANDOM$RANDOM-$(date +%N)
    net_versitygw "$RM_DIR/vgw" "$S3_KEY" "$S3_SECRET"
    export VGW_URL VGW_LOG
    local s
    for s in g3 g3c g2 a3 many x3; do
        AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET AWS_REGION=us-east-1 \
            net_s3 put "$VGW_URL" zarr "stores/$s.zarr" "$RM_STORES/$s.zarr" 2>/dev/null \
            || { echo "upload of $s failed" >&2; return 1; }
    done
    # the same buckets over TLS, with a certificate of the test's CA
    local url=$VGW_URL log=$VGW_LOG
    net_versitygw "$RM_DIR/vgw-tls" "$S3_KEY" "$S3_SECRET" "$RM_DIR/vgw/data" "$RM_DIR/certs"
    export VGW_TLS=$VGW_URL VGW_CA=$RM_DIR/certs/ca.pem VGW_URL=$url VGW_LOG=$log
}

teardown_file() { rm_teardown_file; }

teardown() {
    zf_teardown
    net_stop_all
}

setup() {
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_REGION \
        AWS_DEFAULT_REGION AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE AWS_CA_BUNDLE
}

# env_creds: credentials in the AWS_* variables
env_creds() {
    export AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET AWS_REGION=us-east-1
}

# s3_case NAME [OPTS...]: mount NAME locally and s3://zarr/stores/NAME (OPTS for
# the remote mount), compare with the listing's chunk counts in .info.
s3_case() {
    local name=$1
    shift
    rm_mount_local "$name"
    zf_mount "s3://zarr/stores/$name" "$@"
    rm_compare "$RM_LOCAL" "$ZF_MNT"
}

@test "s3: a v3 group without consolidated metadata (ListObjectsV2), AWS_* credentials, -o endpoint=; no secret in the debug log, .info, mount table, argv" {
    env_creds
    s3_case g3.zarr -o "endpoint=$VGW_URL" -o log_level=debug
    ((RM_COMPARED >= 16)) || fail "only $RM_COMPARED files compared"
    grep -q 's3_ListObjectsV2' "$VGW_LOG" || fail "no ListObjectsV2 request in the server's log"
    rm_no_secret "$S3_SECRET" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info "$ZF_MNT"/sub/deep/*.info
}

@test "s3: a consolidated v3 group with AWS_PROFILE and a credentials file, AWS_ENDPOINT_URL, -o region=" {
    local home
    zf_mktemp home
    mkdir "$home/.aws"
    printf '[default]\naws_access_key_id = nobody\naws_secret_access_key = wrong\n\n[zftest]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
        "$S3_KEY" "$S3_SECRET" >"$home/.aws/credentials"
    printf '[profile zftest]\nregion = us-east-1\n' >"$home/.aws/config"
    HOME=$home AWS_PROFILE=zftest AWS_ENDPOINT_URL=$VGW_URL s3_case g3c.zarr -o region=us-east-1
    rm_no_secret "$S3_SECRET" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info
}

@test "s3: a v2 group without consolidated metadata (ListObjectsV2) is the local mount, byte for byte" {
    env_creds
    s3_case g2.zarr -o "endpoint=$VGW_URL"
}

@test "s3: an xarray forecast (v3, listed): the labelled .csv is the local mount's and xarray's to_csv" {
    env_creds
    s3_case x3.zarr -o "endpoint=$VGW_URL"
    rm_labels_oracle "$RM_STORES/x3.zarr" lead "$ZF_MNT/lead.csv"
}

@test "s3: a store whose root is a sharded v3 array; .txt is the oracle's text" {
    env_creds
    s3_case a3.zarr -o "endpoint=$VGW_URL"
    zf_oracle txt "$RM_STORES/a3.zarr" >"$BATS_TEST_TMPDIR/a3.txt" || fail "oracle failed"
    zf_cmp "$BATS_TEST_TMPDIR/a3.txt" "$ZF_MNT/a3.txt"
}

@test "s3: ListObjectsV2 paging: an array of 1100 chunks (more than one page of 1000) is counted and read whole" {
    env_creds
    local before
    before=$(grep -c 's3_ListObjectsV2' "$VGW_LOG" || true)
    s3_case many.zarr -o "endpoint=$VGW_URL"
    local stored
    stored=$(find "$RM_STORES/many.zarr/steps/c" -type f | wc -l) # zarr-python skips the chunk of fill values
    ((stored > 1000)) || fail "only $stored chunks stored: one page would do"
    grep -qx "chunks_present: $stored of 1100" "$ZF_MNT/steps.info" || fail "$(cat "$ZF_MNT/steps.info")"
    local pages
    pages=$(($(grep -c 's3_ListObjectsV2' "$VGW_LOG") - before))
    ((pages >= 2)) || fail "$pages ListObjectsV2 requests: the listing was not paged"
    [[ $(wc -l <"$ZF_MNT/steps.txt") == 1100 ]] || fail "steps.txt has $(wc -l <"$ZF_MNT/steps.txt") lines"
}

@test "s3 over TLS: the test's CA by -o cafile= and by AWS_CA_BUNDLE; without it the certificate is refused" {
    env_creds
    s3_case g3c.zarr -o "endpoint=$VGW_TLS" -o "cafile=$VGW_CA"
    zf_unmount
    AWS_CA_BUNDLE=$VGW_CA zf_mount s3://zarr/stores/a3.zarr -o "endpoint=$VGW_TLS"
    zf_oracle txt "$RM_STORES/a3.zarr" >"$BATS_TEST_TMPDIR/a3.txt" || fail "oracle failed"
    zf_cmp "$BATS_TEST_TMPDIR/a3.txt" "$ZF_MNT/a3.txt"
    zf_run_cli -f -o "endpoint=$VGW_TLS" s3://zarr/stores/a3.zarr "$BATS_TEST_TMPDIR"
    [[ $ZF_RC == 1 ]] || fail "exit status $ZF_RC without the CA (want 1): $(cat "$ZF_ERR")"
    grep -qiE 'certificate|verif|SSL|TLS' "$ZF_ERR" || fail "the error does not say why: $(cat "$ZF_ERR")"
}

@test "s3: 403 on one array's metadata (through a proxy) leaves that array out with a log line; the rest is exact" {
    env_creds
    net_proxy "$BATS_TEST_TMPDIR/proxy" "${VGW_URL#http://}" 120
    net_proxy_set '{"fault": "status", "status": 403, "match": "/v3_zstd/zarr\\.json$"}'
    rm_mount_local g3.zarr
    zf_mount s3://zarr/stores/g3.zarr -o "endpoint=$PROXY_URL"
    grep -q 'fault=status 403' "$PROXY_LOG" || fail "the 403 was never sent"
    [[ ! -e $ZF_MNT/v3_zstd.txt ]] || fail "v3_zstd is shown although its metadata answered 403"
    grep -E 'v3_zstd' "$ZF_LOG" | grep -q '403' || fail "no log line names v3_zstd and the 403: $(cat "$ZF_LOG")"
    local f n=0
    for f in "$RM_LOCAL"/*.txt "$RM_LOCAL"/sub/deep/*.txt; do
        f=${f#"$RM_LOCAL"/}
        [[ $f == v3_zstd.txt ]] && continue
        zf_t cmp "$RM_LOCAL/$f" "$ZF_MNT/$f" || fail "$f differs"
        n=$((n + 1))
    done
    ((n == 7)) || fail "$n arrays compared, expected 7"
}

@test "s3: while the chunk listings stall (through a proxy), ls and every array's .info answer at once: .info lists nothing; once sized, it counts" {
    env_creds
    net_proxy "$BATS_TEST_TMPDIR/proxy" "${VGW_URL#http://}" 300
    zf_mount s3://zarr/stores/g3.zarr -o "endpoint=$PROXY_URL" -o timeout_ms=3000
    net_proxy_set '{"fault": "stall", "match": "list-type=2"}'
    env --default-signal=INT stat "$ZF_MNT/v3_zstd.txt" >/dev/null 2>&1 &
    local pass=$! f t0 ms n=0
    sleep 1
    kill -0 "$pass" 2>/dev/null || fail "the stat of v3_zstd.txt returned: its listing did not stall"
    t0=$(date +%s%N)
    zf_t ls "$ZF_MNT" "$ZF_MNT/sub/deep" >/dev/null || fail "ls failed"
    for f in "$ZF_MNT"/*.info "$ZF_MNT"/sub/deep/*.info; do
        zf_t cat "$f" >"$BATS_TEST_TMPDIR/info" || fail "cat $f failed"
        grep -qE '^chunks_present: unknown \([0-9]+ expected; counted once the array is sized\)$' \
            "$BATS_TEST_TMPDIR/info" || fail "$f: $(cat "$BATS_TEST_TMPDIR/info")"
        n=$((n + 1))
    done
    ms=$((($(date +%s%N) - t0) / 1000000))
    echo "# ls and $n .info files took $ms ms while the listings stalled" >&3
    ((n == 8)) || fail "$n .info files, expected 8"
    ((ms <= 3000)) || fail "ls and the .info files took $ms ms while the listings stalled"
    kill -INT "$pass" 2>/dev/null || true
    wait "$pass" || true
    net_proxy_set '{}'
    rm_mount_local g3.zarr
    zf_t stat "$ZF_MNT/v3_plain.txt" >/dev/null || fail "stat once the stall is over: $(tail -n 3 "$ZF_LOG")"
    grep -qx "$(grep '^chunks_present:' "$RM_LOCAL/v3_plain.info")" "$ZF_MNT/v3_plain.info" \
        || fail "once sized: $(grep chunks_present "$RM_LOCAL/v3_plain.info" "$ZF_MNT/v3_plain.info")"
}

@test "s3: an array rewritten in the bucket while mounted (-o timeout=1): the re-check shows the new array" {
    env_creds
    cp -r "$RM_STORES/g3.zarr" "$RM_STORES/chg.zarr"
    net_s3 put "$VGW_URL" zarr stores/chg.zarr "$RM_STORES/chg.zarr" 2>/dev/null || fail "upload failed"
    zf_mount s3://zarr/stores/chg.zarr -o "endpoint=$VGW_URL" -o timeout=1
    local remote=$ZF_MNT n end
    n=$(zf_t cat "$remote/v3_plain.txt" | wc -l)
    [[ $n == 851 ]] || fail "v3_plain.txt has $n lines before the change"
    # zarr-python grows the array by 3 rows of new values; the changed objects are uploaded again
    zf_t "$ZF_PYTHON" -c '
import sys, warnings, numpy as np, zarr
warnings.simplefilter("ignore")
a = zarr.open_array(sys.argv[1] + "/v3_plain", mode="r+")
a.resize((40, 23))
a[37:] = (np.arange(69, dtype="i8").reshape(3, 23) * 10**9).astype("m8[ns]")' "$RM_STORES/chg.zarr" || fail "rewriting the store failed"
    net_s3 put "$VGW_URL" zarr stores/chg.zarr/v3_plain "$RM_STORES/chg.zarr/v3_plain" 2>/dev/null || fail "upload failed"
    rm_mount_local chg.zarr
    end=$((SECONDS + ZF_MOUNT_TIMEOUT + 5))
    until n=$(zf_t cat "$remote/v3_plain.txt" | wc -l) && [[ $n == 920 ]]; do
        ((SECONDS < end)) || fail "the mount still shows $n lines (want 920)"
        sleep 0.5
    done
    zf_cmp "$RM_LOCAL/v3_plain.txt" "$remote/v3_plain.txt"
    zf_cmp "$RM_LOCAL/v3_plain.csv" "$remote/v3_plain.csv"
    grep -qx "$(grep '^chunks_present:' "$RM_LOCAL/v3_plain.info")" "$remote/v3_plain.info" \
        || fail "chunks_present differs: $(grep chunks_present "$RM_LOCAL/v3_plain.info" "$remote/v3_plain.info")"
}

@test "s3: a wrong secret fails with a clear error and exit status 1, and the secret is not shown" {
    export AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=wrongSecret-$RANDOM$RANDOM AWS_REGION=us-east-1
    zf_run_cli -f -o "endpoint=$VGW_URL" s3://zarr/stores/g3.zarr "$BATS_TEST_TMPDIR"
    [[ $ZF_RC == 1 ]] || fail "exit status $ZF_RC (want 1): $(cat "$ZF_ERR")"
    grep -qiE '403|signature|denied|forbidden|credential' "$ZF_ERR" || fail "unclear error: $(cat "$ZF_ERR")"
    [[ $(wc -l <"$ZF_ERR") -le 5 ]] || fail "not a short error: $(cat "$ZF_ERR")"
    grep -qF -- "$AWS_SECRET_ACCESS_KEY" "$ZF_ERR" "$ZF_OUT" && fail "the secret is in the error"
    grep -qF -- "$S3_SECRET" "$ZF_ERR" "$ZF_OUT" && fail "the right secret is in the error"
    true
}

@test "s3: no credentials at all: anonymous access is refused with a clear error and exit status 1" {
    local home
    zf_mktemp home
    HOME=$home zf_run_cli -f -o "endpoint=$VGW_URL" -o anonymous s3://zarr/stores/g3.zarr "$BATS_TEST_TMPDIR"
    [[ $ZF_RC == 1 ]] || fail "exit status $ZF_RC (want 1): $(cat "$ZF_ERR")"
    grep -qiE '403|denied|forbidden|credential|anonymous' "$ZF_ERR" || fail "unclear error: $(cat "$ZF_ERR")"
}

@test "zarrfs-cat: an s3:// STORE gives the same bytes as the local store" {
    env_creds
    export AWS_ENDPOINT_URL=$VGW_URL
    local cat=$ZF_BUILD_DIR/zarrfs-cat d
    zf_mktemp d
    zf_t "$cat" "$RM_STORES/a3.zarr" a3 >"$d/local.txt" || fail "local zarrfs-cat failed"
    zf_t "$cat" s3://zarr/stores/a3.zarr a3 >"$d/remote.txt" 2>"$d/err" || fail "zarrfs-cat s3:// failed: $(cat "$d/err")"
    zf_cmp "$d/local.txt" "$d/remote.txt"
    zf_t "$cat" --csv "$RM_STORES/g3.zarr" sub/deep/leaf >"$d/local.csv" || fail "local zarrfs-cat failed"
    zf_t "$cat" --csv s3://zarr/stores/g3.zarr sub/deep/leaf >"$d/remote.csv" 2>"$d/err" || fail "zarrfs-cat s3:// failed: $(cat "$d/err")"
    zf_cmp "$d/local.csv" "$d/remote.csv"
    grep -qF -- "$S3_SECRET" "$d/err" && fail "the secret is on stderr"
    true
}
