#!/usr/bin/env bats
# remote_azure.bats - az:// (and abfs://) stores against Azurite, Microsoft's
# emulator of Azure Blob Storage, which checks SharedKey and SAS signatures:
# the account key (AZURE_STORAGE_KEY), a connection string, a SAS token, and
# anonymous access to a public container; a wrong key fails the mount with
# Azure's error code.  Listings paged with markers; every .txt/.csv byte for
# byte as the local mount of the same store; no key or SAS token in the log
# (debug), .info, the mount table or argv.

load remote

# Microsoft's published key of Azurite's development account
DEV_KEY=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==

azutil() { AZ_KEY=$DEV_KEY timeout -k 5 120 "$ZF_PYTHON" "$ZF_REPO/tests/net/azutil.py" "$AZ_URL" devstoreaccount1 "$@"; }

setup_file() {
    rm_setup_file || return 1
    net_azurite "$RM_DIR/azurite" || return 1
    export AZ_URL
    azutil container zarr && azutil container public --public || return 1
    azutil upload zarr "$RM_STORES" && azutil upload public "$RM_STORES" || return 1
    SAS=$(azutil sas rl) || return 1
    export SAS
}

teardown_file() { rm_teardown_file; }

teardown() { zf_teardown; }

setup() {
    local v
    for v in $(env | sed -n 's/^\(AZURE_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
    unset ZF_AZ_MAX_RESULTS
}

# no_az_secret: neither the key nor the SAS token's signature is in the log,
# the .info files, the mount table or argv
no_az_secret() {
    rm_no_secret "$DEV_KEY" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info
    rm_no_secret "${DEV_KEY:10:30}" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info
    rm_no_secret "${SAS##*sig=}" "$ZF_PID" "$ZF_LOG" "$ZF_MNT"/*.info
}

@test "azure: shared key (AZURE_STORAGE_KEY), listed page by page with markers, byte for byte as local; a wrong key fails with Azure's code" {
    export AZURE_STORAGE_ACCOUNT_NAME=devstoreaccount1 AZURE_STORAGE_KEY=$DEV_KEY ZF_AZ_MAX_RESULTS=2
    rm_mount_local g3.zarr
    zf_mount az://zarr/g3.zarr -o "endpoint=$AZ_URL" -o log_level=debug
    rm_compare "$RM_LOCAL" "$ZF_MNT"
    grep -q 'credentials: from shared key (AZURE_STORAGE_KEY)' "$ZF_LOG" || fail "the log does not name the source: $(grep -i credential "$ZF_LOG")"
    grep -qx 'credentials: shared key (AZURE_STORAGE_KEY)' "$ZF_MNT/v3_plain.info" || fail ".info: $(cat "$ZF_MNT/v3_plain.info")"
    if grep -E ': (error|warning):' "$ZF_LOG" >&2; then fail "errors in the log"; fi
    no_az_secret
    AZURE_STORAGE_KEY=${DEV_KEY:0:20}AAAA${DEV_KEY:24} rm_mount_attempt az://zarr/g3.zarr -o "endpoint=$AZ_URL"
    ((RM_MOUNTED == 0)) || fail "a wrong key mounted"
    grep -q 'HTTP 403 AuthorizationFailure' "$ZF_LOG" || fail "no Azure error code: $(cat "$ZF_LOG")"
}

@test "azure: a connection string (abfs://) and a SAS token (AZURE_STORAGE_SAS_TOKEN); neither in any log line" {
    export AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$DEV_KEY;BlobEndpoint=$AZ_URL;"
    rm_mount_local g2.zarr
    zf_mount abfs://zarr/g2.zarr -o log_level=debug
    rm_compare "$RM_LOCAL" "$ZF_MNT"
    grep -q 'credentials: from shared key (AZURE_STORAGE_CONNECTION_STRING)' "$ZF_LOG" || fail "the log does not name the source"
    no_az_secret
    unset AZURE_STORAGE_CONNECTION_STRING
    rm_mount_local g3c.zarr
    AZURE_STORAGE_SAS_TOKEN="?$SAS" zf_mount az://zarr/g3c.zarr -o account=devstoreaccount1 -o "endpoint=$AZ_URL" -o log_level=debug
    rm_compare "$RM_LOCAL" "$ZF_MNT"
    grep -q 'credentials: from SAS token (AZURE_STORAGE_SAS_TOKEN)' "$ZF_LOG" || fail "the log does not name the source"
    no_az_secret
}

@test "azure: anonymous: a public container mounts, a private one is refused with Azure's code; no account: a clear error" {
    rm_mount_local a3.zarr
    zf_mount az://public/a3.zarr -o account=devstoreaccount1 -o "endpoint=$AZ_URL" -o log_level=info
    rm_compare "$RM_LOCAL" "$ZF_MNT"
    grep -q 'credentials: none (anonymous)' "$ZF_LOG" || fail "the log does not say anonymous: $(cat "$ZF_LOG")"
    rm_mount_attempt az://zarr/a3.zarr -o account=devstoreaccount1 -o "endpoint=$AZ_URL"
    ((RM_MOUNTED == 0)) || fail "a private container mounted anonymously"
    grep -qE 'HTTP (401|403|404) [A-Za-z]+' "$ZF_LOG" || fail "no Azure error code: $(cat "$ZF_LOG")"
    zf_run_cli -f az://zarr/a3.zarr "$BATS_TEST_TMPDIR"
    ((ZF_RC == 1)) && grep -q 'no Azure storage account' "$ZF_ERR" || fail "no account: $ZF_RC $(cat "$ZF_ERR")"
}
