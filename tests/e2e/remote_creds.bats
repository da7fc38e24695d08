#!/usr/bin/env bats
# remote_creds.bats - S3 mounts with temporary credentials from loopback
# servers that check what the real ones check (tests/net/credserver.py: IMDSv2,
# container credentials, STS web identity; an S3 accepting only what they
# issued): credentials that live 20 s serve a mount that reads for 45 s without
# a failure, refreshed ahead of their expiry (no request ever sent expired);
# a refresh endpoint that fails leaves the last credentials in use until they
# expire, then reads fail with EIO and a log line naming the source; requester
# pays; https stores behind a bearer token (-o bearer_token_file=, read again
# when it changes) or basic authentication from ~/.netrc (tests/net/authserver.py);
# no secret in the log (debug), .info, the mount table or argv.

load remote

# cred_server NAME ARGS...: credserver.py over the stores; CRED_URL
cred_server() {
    local name=$1
    shift
    py_server "$name" credserver.py "$RM_STORES" --forever "$@" || return 1
    CRED_URL=http://127.0.0.1:$PY_PORT
}

ctl() { curl -sf "$1/_ctl/$2"; }

setup_file() {
    rm_setup_file
    cred_server short --ttl 20 || return 1
    export SHORT_URL=$CRED_URL
    export WEB_TOKEN=wt-$RANDOM$RANDOM-secret
    cred_server long --web-token "$WEB_TOKEN" || return 1
    export LONG_URL=$CRED_URL
    net_certs "$RM_DIR/certs" || return 1
    export AUTH_CA=$RM_DIR/certs/ca.pem TOKEN_FILE=$RM_DIR/token BASIC_PASS=pw-$RANDOM$RANDOM-secret
    printf 'tk-%s-secret\n' "$RANDOM$RANDOM" >"$TOKEN_FILE"
    py_server bearer authserver.py "$RM_STORES" "$RM_DIR/certs/server.pem" "$RM_DIR/certs/server.key" \
        --bearer-file "$TOKEN_FILE" || return 1
    export BEARER_URL=https://127.0.0.1:$PY_PORT
    py_server basic authserver.py "$RM_STORES" "$RM_DIR/certs/server.pem" "$RM_DIR/certs/server.key" \
        --basic "zfuser:$BASIC_PASS" || return 1
    export BASIC_URL=https://127.0.0.1:$PY_PORT
}

# no_issued_secret URL: no secret key or session token the server at URL
# issued is in the log, the .info files, the mount table or argv
no_issued_secret() {
    local s n=0
    while IFS= read -r s; do
        rm_no_secret "$s" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info "$ZF_MNT"/sub/*.info
        n=$((n + 1))
    done < <(ctl "$1" secrets)
    ((n > 0)) || fail "the server issued no secret"
}

teardown_file() { rm_teardown_file; }

teardown() { zf_teardown; }

setup() {
    local v
    for v in $(env | sed -n 's/^\(AWS_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
    export AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_CONFIG_FILE=/nonexistent AWS_REGION=us-east-1
}

@test "creds: IMDSv2 credentials living 20 s serve a mount reading for 45 s; refreshed ahead, none sent expired; no secret in the debug log" {
    export AWS_EC2_METADATA_SERVICE_ENDPOINT=$SHORT_URL
    rm_mount_local g3.zarr
    local issued0 t0 f n=0
    issued0=$(ctl "$SHORT_URL" issued)
    zf_mount s3://zarr/g3.zarr -o "endpoint=$SHORT_URL" -o log_level=debug -o timeout=1
    t0=$SECONDS
    # the re-check lists and stamps the store every second; the files are read
    # one after another, each for the first time (so from the store)
    while ((SECONDS - t0 < 45)); do
        for f in "$ZF_MNT"/*.info "$ZF_MNT"/sub/*.info; do
            [[ -f $f ]] && { zf_t cat "$f" >/dev/null || fail "reading $f failed at $((SECONDS - t0)) s: $(tail -n 5 "$ZF_LOG")"; }
        done
        n=$((n + 1))
        sleep 1
    done
    rm_compare "$RM_LOCAL" "$ZF_MNT"
    (($(ctl "$SHORT_URL" issued) - issued0 >= 3)) || fail "only $(($(ctl "$SHORT_URL" issued) - issued0)) credentials issued in 45 s"
    [[ $(ctl "$SHORT_URL" expired) == 0 ]] || fail "$(ctl "$SHORT_URL" expired) requests were sent with expired credentials"
    (($(grep -c 'credentials: refreshed from instance metadata (role zf-role)' "$ZF_LOG") >= 2)) \
        || fail "the log shows no refreshes: $(grep -i credential "$ZF_LOG")"
    grep -qx 'credentials: instance metadata (role zf-role)' "$ZF_MNT/v3_plain.info" \
        || fail ".info does not name the source: $(cat "$ZF_MNT/v3_plain.info")"
    if grep -E ': (error|warning):' "$ZF_LOG" >&2; then fail "errors in the log"; fi
    no_issued_secret "$SHORT_URL"
}

@test "creds: a failing refresh keeps the last container credentials until they expire, then EIO and a log line naming the source" {
    export AWS_CONTAINER_CREDENTIALS_FULL_URI=$SHORT_URL/container/creds AWS_CONTAINER_AUTHORIZATION_TOKEN=container-auth
    # a tiny chunk cache: the late read must fetch its chunks again
    local t0=$SECONDS out
    zf_mount s3://zarr/g3.zarr -o "endpoint=$SHORT_URL" -o log_level=info -o cache_size=4K
    ctl "$SHORT_URL" fail/1 >/dev/null
    ((SECONDS - t0 < 12)) || { ctl "$SHORT_URL" fail/0 >/dev/null; skip "mounting took $((SECONDS - t0)) s: too slow for credentials of 20 s"; }
    zf_t stat "$ZF_MNT"/v3_zstd.txt >/dev/null || fail "stat failed"
    # the refresh ahead of the expiry (about 15 s after issue) fails while they are
    # still valid: a warning, and they stay in use
    until grep -q 'the current ones serve for' "$ZF_LOG" || ((SECONDS - t0 > 60)); do sleep 0.2; done
    grep -q 'credentials: refresh from container credentials failed: .*the current ones serve for' "$ZF_LOG" \
        || { ctl "$SHORT_URL" fail/0 >/dev/null; fail "no warning while the credentials were still valid: $(cat "$ZF_LOG")"; }
    zf_t cat "$ZF_MNT"/v3_plain.info >/dev/null \
        || { ctl "$SHORT_URL" fail/0 >/dev/null; fail "a read after the failed refresh, before the expiry, failed"; }
    # once they expire: an error line, and reads fail
    until grep -q 'reads fail until a refresh succeeds' "$ZF_LOG" || ((SECONDS - t0 > 90)); do sleep 0.2; done
    out=$(zf_t cat "$ZF_MNT"/v3_zstd.txt 2>&1) && { ctl "$SHORT_URL" fail/0 >/dev/null; fail "a read succeeded with expired credentials"; }
    ctl "$SHORT_URL" fail/0 >/dev/null
    [[ $out == *"Input/output error"* ]] || fail "not EIO: $out"
    grep -q 'credentials: refresh from container credentials failed: container credentials: HTTP 500' "$ZF_LOG" \
        || fail "no log line naming the source and reason: $(cat "$ZF_LOG")"
    grep -q 'expired and cannot be refreshed' "$ZF_LOG" || fail "the failed read's line does not say why: $(cat "$ZF_LOG")"
    zf_t cat "$ZF_MNT"/v3_zstd.txt >/dev/null || fail "reads do not recover once the source answers again"
}

@test "creds: web identity (STS AssumeRoleWithWebIdentity) and requester pays; a bucket that needs it refuses without; no token anywhere" {
    export AWS_WEB_IDENTITY_TOKEN_FILE=$BATS_TEST_TMPDIR/token AWS_ROLE_ARN=arn:aws:iam::123456789012:role/zf
    export AWS_ENDPOINT_URL_STS=$LONG_URL
    printf '%s\n' "$WEB_TOKEN" >"$AWS_WEB_IDENTITY_TOKEN_FILE"
    rm_mount_attempt s3://payer/g3.zarr -o "endpoint=$LONG_URL"
    ((RM_MOUNTED == 0)) || fail "a requester-pays bucket mounted without -o requester_pays"
    grep -q 'AccessDenied' "$ZF_LOG" || fail "no AccessDenied: $(cat "$ZF_LOG")"
    rm_mount_local g3.zarr
    zf_mount s3://payer/g3.zarr -o "endpoint=$LONG_URL" -o requester_pays -o log_level=debug
    rm_compare "$RM_LOCAL" "$ZF_MNT"
    rm_no_secret "$WEB_TOKEN" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info
    no_issued_secret "$LONG_URL"
    printf 'not-the-token\n' >"$AWS_WEB_IDENTITY_TOKEN_FILE"
    rm_mount_attempt s3://payer/g3.zarr -o "endpoint=$LONG_URL" -o requester_pays
    ((RM_MOUNTED == 0)) || fail "a wrong web identity token mounted"
    grep -q 'web identity.*InvalidIdentityToken' "$ZF_LOG" || fail "no reason naming the source: $(cat "$ZF_LOG")"
    rm_no_secret not-the-token "$ZF_PID" "$ZF_LOG"
}

@test "https: -o bearer_token_file= sends the file's token, read again when it changes; plain http refused; no token anywhere" {
    local old new
    old=$(<"$TOKEN_FILE")
    rm_mount_local g3c.zarr
    # the mount reads the metadata with the first token; then the server and the
    # file change token at once: the reads after it send the new one
    zf_mount "$BEARER_URL/g3c.zarr" -o "cafile=$AUTH_CA" -o "bearer_token_file=$TOKEN_FILE" -o log_level=debug
    new=tk-$RANDOM$RANDOM-rotated
    printf '%s\n' "$new" >"$TOKEN_FILE.new" && mv "$TOKEN_FILE.new" "$TOKEN_FILE"
    rm_compare "$RM_LOCAL" "$ZF_MNT"
    grep -qx "credentials: bearer token (file $TOKEN_FILE)" "$ZF_MNT"/v3_plain.info || fail ".info: $(cat "$ZF_MNT"/v3_plain.info)"
    rm_no_secret "$old" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info
    rm_no_secret "$new" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info
    printf '%s\n' "$old" >"$TOKEN_FILE"
    rm_mount_attempt "$BEARER_URL/g3c.zarr" -o "cafile=$AUTH_CA"
    ((RM_MOUNTED == 0)) || fail "mounted without the token"
    grep -q 'HTTP 401' "$ZF_LOG" || fail "not HTTP 401: $(cat "$ZF_LOG")"
    zf_run_cli -f -o "bearer_token_file=$TOKEN_FILE" "http://127.0.0.1:1/g3c.zarr" "$BATS_TEST_TMPDIR"
    ((ZF_RC == 1)) && grep -q 'https:// stores only' "$ZF_ERR" || fail "plain http with a token: $ZF_RC $(cat "$ZF_ERR")"
}

@test "https: basic authentication from ~/.netrc for the store's host; without it 401" {
    local home
    zf_mktemp home
    printf 'machine 127.0.0.1\nlogin zfuser\npassword %s\n' "$BASIC_PASS" >"$home/.netrc"
    chmod 600 "$home/.netrc"
    rm_mount_local g3c.zarr
    HOME=$home zf_mount "$BASIC_URL/g3c.zarr" -o "cafile=$AUTH_CA" -o log_level=debug
    rm_compare "$RM_LOCAL" "$ZF_MNT"
    rm_no_secret "$BASIC_PASS" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info
    zf_mktemp home
    HOME=$home rm_mount_attempt "$BASIC_URL/g3c.zarr" -o "cafile=$AUTH_CA"
    ((RM_MOUNTED == 0)) || fail "mounted without .netrc"
    grep -q 'HTTP 401' "$ZF_LOG" || fail "not HTTP 401: $(cat "$ZF_LOG")"
}
