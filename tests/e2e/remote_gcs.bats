#!/usr/bin/env bats
# remote_gcs.bats - gs:// stores against tests/net/gcsserver.py on loopback: the
# JSON API (objects.list paged, with empty pages as GCS may send them; alt=media,
# ranged), behind tokens its own OAuth endpoint issues for a JWT it verifies
# against the test key's public half, or for a refresh token, or from its
# metadata server.  Application Default Credentials in Google's order; tokens
# that live 20 s refreshed ahead of their expiry, and fetched again when the
# server refuses one (401); requester pays (userProject);
# anonymous only when no credentials exist.  Every .txt/.csv byte for byte as
# the local mount of the same store; no secret in the log (debug), .info, the
# mount table or argv.

load remote

setup_file() {
    rm_setup_file || return 1
    local k=$RM_DIR/keys
    mkdir -p "$k"
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$k/sa.pem" 2>/dev/null || return 1
    openssl pkey -in "$k/sa.pem" -pubout -out "$k/sa.pub" 2>/dev/null || return 1
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$k/other.pem" 2>/dev/null || return 1
    export SA_EMAIL=zf-reader@zf-project.iam.gserviceaccount.com
    export CLIENT_SECRET=cs-$RANDOM$RANDOM-secret REFRESH=rt-$RANDOM$RANDOM-secret
    py_server gcs gcsserver.py "$RM_STORES" --pubkey "$k/sa.pub" --email "$SA_EMAIL" --ttl 20 \
        --client "zf-client:$CLIENT_SECRET:$REFRESH" --page-gaps || return 1
    export GCS_URL=http://127.0.0.1:$PY_PORT KEYS=$k
    # a service account key file, and one whose private key the server does not know
    local pem
    for pem in sa other; do
        "$ZF_PYTHON" -c 'import json, sys
print(json.dumps({"type": "service_account", "project_id": "zf-project", "private_key_id": "k1",
                  "private_key": open(sys.argv[1]).read(), "client_email": sys.argv[2],
                  "client_id": "1", "token_uri": sys.argv[3] + "/token"}))' \
            "$k/$pem.pem" "$SA_EMAIL" "$GCS_URL" >"$k/$pem.json" || return 1
    done
    mkdir -p "$k/gcloud"
    printf '{"type": "authorized_user", "client_id": "zf-client", "client_secret": "%s", "refresh_token": "%s", "token_uri": "%s/token"}\n' \
        "$CLIENT_SECRET" "$REFRESH" "$GCS_URL" >"$k/gcloud/application_default_credentials.json"
}

teardown_file() { rm_teardown_file; }

teardown() { zf_teardown; }

setup() {
    unset GOOGLE_APPLICATION_CREDENTIALS GCE_METADATA_HOST ZF_GCS_MAX_RESULTS
    export CLOUDSDK_CONFIG=$BATS_TEST_TMPDIR/no-gcloud
}

ctl() { curl -sf "$GCS_URL/_ctl/$1"; }

# no_gcs_secret: no private key, client secret, refresh token or access token
# issued is in the log, the .info files, the mount table or argv
no_gcs_secret() {
    local s n=0
    rm_no_secret "$CLIENT_SECRET" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info
    rm_no_secret "$REFRESH" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info
    rm_no_secret "$(sed -n 2p "$KEYS/sa.pem")" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info
    while IFS= read -r s; do
        rm_no_secret "$s" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info
        n=$((n + 1))
    done < <(ctl secrets)
    ((n > 0)) || fail "the server issued no token"
}

@test "gcs: a service account key (GOOGLE_APPLICATION_CREDENTIALS): listed page by page (empty pages too), byte for byte as local; tokens of 20 s refreshed ahead, a revoked one (401) fetched anew; no secret anywhere" {
    export GOOGLE_APPLICATION_CREDENTIALS=$KEYS/sa.json ZF_GCS_MAX_RESULTS=2
    rm_mount_local g3.zarr
    local issued0 t0 f revoked=0
    issued0=$(ctl issued)
    zf_mount gs://zarr/g3.zarr -o "endpoint=$GCS_URL" -o log_level=debug -o timeout=1
    t0=$SECONDS
    rm_compare "$RM_LOCAL" "$ZF_MNT"
    grep -q "credentials: from service account $SA_EMAIL (GOOGLE_APPLICATION_CREDENTIALS)" "$ZF_LOG" \
        || fail "the log does not name the source: $(grep -i credential "$ZF_LOG")"
    grep -qx "credentials: service account $SA_EMAIL (GOOGLE_APPLICATION_CREDENTIALS)" "$ZF_MNT/v3_plain.info" \
        || fail ".info does not name the source: $(cat "$ZF_MNT/v3_plain.info")"
    # the re-check lists the store every second; the token is fetched again
    # ahead; once the server revokes the tokens (after 8 s), a 401 fetches a new
    # one and the request is tried again
    while ((SECONDS - t0 < 22)); do
        for f in "$ZF_MNT"/*.info; do zf_t cat "$f" >/dev/null || fail "reading $f failed at $((SECONDS - t0)) s"; done
        ((SECONDS - t0 >= 8 && !revoked)) && { ctl revoke >/dev/null; revoked=1; }
        sleep 1
    done
    grep -q "credentials from service account $SA_EMAIL (GOOGLE_APPLICATION_CREDENTIALS) were rejected as expired; fetching new ones" "$ZF_LOG" \
        || fail "no refresh after the revocation: $(grep -i credential "$ZF_LOG")"
    (($(ctl issued) - issued0 >= 2)) || fail "no token refreshed in 22 s"
    grep -q "credentials: refreshed from service account $SA_EMAIL" "$ZF_LOG" || fail "no refresh in the log"
    [[ $(ctl expired) == 0 ]] || fail "$(ctl expired) requests were sent with an expired token"
    if grep -E ': (error|warning):' "$ZF_LOG" >&2; then fail "errors in the log"; fi
    no_gcs_secret
}

@test "gcs: gcloud's authorized user file (CLOUDSDK_CONFIG) and -o requester_pays=PROJECT (userProject); a requester-pays bucket refuses without" {
    export CLOUDSDK_CONFIG=$KEYS/gcloud
    rm_mount_attempt gs://payer/g3c.zarr -o "endpoint=$GCS_URL"
    ((RM_MOUNTED == 0)) || fail "a requester-pays bucket mounted without -o requester_pays"
    grep -q 'requester pays' "$ZF_LOG" || fail "no reason: $(cat "$ZF_LOG")"
    rm_mount_local g3c.zarr
    zf_mount gs://payer/g3c.zarr -o "endpoint=$GCS_URL" -o requester_pays=zf-billing -o log_level=debug
    rm_compare "$RM_LOCAL" "$ZF_MNT"
    grep -q "credentials: from authorized user (gcloud's application default credentials)" "$ZF_LOG" \
        || fail "the log does not name the source: $(grep -i credential "$ZF_LOG")"
    no_gcs_secret
}

@test "gcs: the metadata server (GCE_METADATA_HOST) names its service account; GOOGLE_APPLICATION_CREDENTIALS comes first" {
    export GCE_METADATA_HOST=${GCS_URL#http://} CLOUDSDK_CONFIG=$KEYS/gcloud
    GOOGLE_APPLICATION_CREDENTIALS=$KEYS/sa.json zf_mount gs://zarr/a3.zarr -o "endpoint=$GCS_URL" -o log_level=info
    grep -q "credentials: from service account $SA_EMAIL (GOOGLE_APPLICATION_CREDENTIALS)" "$ZF_LOG" \
        || fail "GOOGLE_APPLICATION_CREDENTIALS did not win: $(grep -i credential "$ZF_LOG")"
    export CLOUDSDK_CONFIG=$BATS_TEST_TMPDIR/no-gcloud
    rm_mount_local g2.zarr
    zf_mount gs://zarr/g2.zarr -o "endpoint=$GCS_URL" -o log_level=debug
    rm_compare "$RM_LOCAL" "$ZF_MNT"
    grep -q "credentials: from metadata server (service account $SA_EMAIL)" "$ZF_LOG" \
        || fail "the log does not name the source: $(grep -i credential "$ZF_LOG")"
    grep -qx "credentials: metadata server (service account $SA_EMAIL)" "$ZF_MNT/v2_zstd.info" \
        || fail ".info does not name the source: $(cat "$ZF_MNT/v2_zstd.info")"
    no_gcs_secret
}

@test "gcs: no credentials: anonymous, a public bucket mounts, a private one fails with 401 and why; -o anonymous reads no key; a key the endpoint refuses fails naming it" {
    rm_mount_local g3c.zarr
    zf_mount gs://public/g3c.zarr -o "endpoint=$GCS_URL" -o log_level=info
    rm_compare "$RM_LOCAL" "$ZF_MNT"
    grep -q 'credentials: none (anonymous: no Google credentials found)' "$ZF_LOG" || fail "the log does not say anonymous: $(cat "$ZF_LOG")"
    grep -qx 'credentials: none (anonymous)' "$ZF_MNT/v3_plain.info" || fail ".info: $(cat "$ZF_MNT/v3_plain.info")"
    rm_mount_attempt gs://zarr/g3c.zarr -o "endpoint=$GCS_URL"
    ((RM_MOUNTED == 0)) || fail "a private bucket mounted anonymously"
    grep -q 'HTTP 401.*Anonymous caller' "$ZF_LOG" || fail "no reason: $(cat "$ZF_LOG")"
    GOOGLE_APPLICATION_CREDENTIALS=/nonexistent/key.json zf_mount gs://public/g3c.zarr -o "endpoint=$GCS_URL" -o anonymous
    GOOGLE_APPLICATION_CREDENTIALS=$KEYS/other.json rm_mount_attempt gs://zarr/g3c.zarr -o "endpoint=$GCS_URL"
    ((RM_MOUNTED == 0)) || fail "a key the endpoint refuses mounted"
    grep -q "credentials from service account $SA_EMAIL (GOOGLE_APPLICATION_CREDENTIALS): token endpoint: HTTP 400 invalid_grant: Invalid JWT Signature" "$ZF_LOG" \
        || fail "no reason naming the source: $(cat "$ZF_LOG")"
    rm_no_secret "$(sed -n 2p "$KEYS/other.pem")" "$ZF_PID" "$ZF_LOG"
    GOOGLE_APPLICATION_CREDENTIALS=$BATS_TEST_TMPDIR/none.json rm_mount_attempt gs://public/g3c.zarr -o "endpoint=$GCS_URL"
    ((RM_MOUNTED == 0)) && grep -q 'GOOGLE_APPLICATION_CREDENTIALS .* does not exist' "$ZF_LOG" \
        || fail "a missing GOOGLE_APPLICATION_CREDENTIALS file did not fail the mount: $(cat "$ZF_LOG")"
}
