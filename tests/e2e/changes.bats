#!/usr/bin/env bats
# changes.bats - stores that change after an array was sized (issue 23): chunks
# rewritten behind unchanged metadata over HTTP (the persisted offset index is
# discarded and rebuilt, never a permanent EIO; two stores with the same
# metadata never share one), .info telling the state of each open, and file
# times that move forward when a file's content changes (rsync -a, find
# -newer), on a local store, over HTTP (nginx) and S3 (versitygw).

load remote

setup_file() {
    rm_setup_file
    net_nginx "$RM_DIR/nginx" "$RM_DIR/www"
    export NGX_HTTP NGX_LOG
    export S3_KEY=zfkey$RANDOM S3_SECRET=zfSecret-$RANDOM$RANDOM
    net_versitygw "$RM_DIR/vgw" "$S3_KEY" "$S3_SECRET"
    export VGW_URL
    # the persisted offset indexes of this file's mounts only
    export XDG_CACHE_HOME=$RM_DIR/xdg-cache
}

teardown_file() { rm_teardown_file; }

# rewrite STORE ARRAY FACTOR: zarr-python rewrites every value of ARRAY in
# place (a[:] = ...: chunks only, its zarr.json untouched) with values of
# other text lengths, in a later second than the files it replaces (nginx's
# ETag is their mtime in seconds and their size).
rewrite() {
    sleep 1.1
    zf_t "$ZF_PYTHON" -c '
import sys, warnings, numpy as np, zarr
warnings.simplefilter("ignore")
a = zarr.open_array(sys.argv[1] + "/" + sys.argv[2], mode="r+")
v = a[:]
a[:] = (np.arange(v.size, dtype="i8").reshape(v.shape) * int(sys.argv[3]) * 10**9).astype("m8[ns]")
' "$1" "$2" "$3" || fail "rewriting $1/$2 failed"
}

# same_meta STORE: the metadata documents of STORE, with their mtimes and sizes
meta_state() {
    (cd "$1" && find . -name zarr.json -printf '%P %T@ %s\n' | LC_ALL=C sort)
}

@test "http: chunks rewritten behind unchanged zarr.json: the open that finds it fails with EIO, the next open shows the new values, the persisted index is replaced" {
    cp -rp "$RM_STORES/g3c.zarr" "$RM_STORES/inplace.zarr"
    zf_mount "$NGX_HTTP/bucket/inplace.zarr"
    zf_t cat "$ZF_MNT/v3_plain.txt" >/dev/null || fail "the first cat failed"
    zf_unmount # its offset index is persisted
    local meta
    meta=$(meta_state "$RM_STORES/inplace.zarr")
    rewrite "$RM_STORES/inplace.zarr" v3_plain 7777
    [[ $(meta_state "$RM_STORES/inplace.zarr") == "$meta" ]] || fail "the rewrite touched a zarr.json"
    rm_mount_local inplace.zarr
    zf_mount "$NGX_HTTP/bucket/inplace.zarr"
    # the persisted index is of the old chunks: this open fails, with one log line
    if zf_t cat "$ZF_MNT/v3_plain.txt" >/dev/null 2>&1; then
        fail "the first read over the old index succeeded"
    fi
    local end=$((SECONDS + ZF_MOUNT_TIMEOUT)) got
    until zf_t cat "$ZF_MNT/v3_plain.txt" >"$BATS_TEST_TMPDIR/new.txt" 2>/dev/null; do
        ((SECONDS < end)) || fail "the mount still fails: $(cat "$ZF_LOG")"
        sleep 0.2
    done
    zf_cmp "$RM_LOCAL/v3_plain.txt" "$BATS_TEST_TMPDIR/new.txt"
    got=$(stat -c %s "$ZF_MNT/v3_plain.txt")
    [[ $got == "$(stat -c %s "$RM_LOCAL/v3_plain.txt")" ]] || fail "st_size $got"
    got=$(grep -c 'v3_plain/c/[0-9/]*: the store changed' "$ZF_LOG")
    ((got == 1)) || fail "$got log lines name a changed chunk: $(cat "$ZF_LOG")"
    zf_unmount_one $((${#ZF_MOUNTS[@]} - 1))
    # a later mount sizes from the replaced index: right at once
    zf_mount "$NGX_HTTP/bucket/inplace.zarr"
    zf_t cat "$ZF_MNT/v3_plain.txt" >"$BATS_TEST_TMPDIR/later.txt" || fail "a later mount still fails: $(cat "$ZF_LOG")"
    zf_cmp "$RM_LOCAL/v3_plain.txt" "$BATS_TEST_TMPDIR/later.txt"
    zf_cmp "$RM_LOCAL/v3_plain.csv" "$ZF_MNT/v3_plain.csv"
}

@test "http: two stores with the same metadata documents (ETags) but other chunks never share a persisted index" {
    cp -rp "$RM_STORES/g3c.zarr" "$RM_STORES/twin.zarr"
    rewrite "$RM_STORES/twin.zarr" v3_shard_inner_gzip 1234567
    [[ $(meta_state "$RM_STORES/twin.zarr") == "$(meta_state "$RM_STORES/g3c.zarr")" ]] \
        || fail "the twins' metadata differ"
    zf_mount "$NGX_HTTP/bucket/g3c.zarr"
    zf_t cat "$ZF_MNT/v3_shard_inner_gzip.txt" >/dev/null || fail "cat of g3c failed"
    zf_unmount
    rm_mount_local twin.zarr
    zf_mount "$NGX_HTTP/bucket/twin.zarr"
    zf_cmp "$RM_LOCAL/v3_shard_inner_gzip.txt" "$ZF_MNT/v3_shard_inner_gzip.txt"
    ! grep -q 'the store changed' "$ZF_LOG" || fail "$(cat "$ZF_LOG")"
}

# info_check FILE: the bytes of one open of FILE (into $BATS_TEST_TMPDIR/info)
# are as many as its st_size says
info_check() {
    zf_t cat "$1" >"$BATS_TEST_TMPDIR/info" || fail "cat $1 failed"
    local size bytes
    size=$(stat -c %s "$1") bytes=$(wc -c <"$BATS_TEST_TMPDIR/info")
    [[ $size == "$bytes" ]] || fail "$1: st_size $size, $bytes bytes read: $(cat "$BATS_TEST_TMPDIR/info")"
}

@test ".info tells the state at each open: http before and after sizing (as the local mount), local after a chunk is deleted; st_size always its length" {
    rm_mount_local g3c.zarr
    zf_mount "$NGX_HTTP/bucket/g3c.zarr"
    info_check "$ZF_MNT/v3_zstd.info"
    grep -q '^chunks_present: unknown' "$BATS_TEST_TMPDIR/info" || fail "before sizing: $(cat "$BATS_TEST_TMPDIR/info")"
    zf_t cat "$ZF_MNT/v3_zstd.txt" >/dev/null || fail "cat .txt failed"
    info_check "$ZF_MNT/v3_zstd.info"
    zf_cmp "$RM_LOCAL/v3_zstd.info" "$BATS_TEST_TMPDIR/info"
    # a local store: an array not sized yet counts its chunks at each open
    local w before after
    zf_mktemp w
    cp -r "$RM_STORES/g3.zarr" "$w/s.zarr"
    zf_mount "$w/s.zarr"
    info_check "$ZF_MNT/v3_zstd.info"
    before=$(grep '^chunks_present:' "$BATS_TEST_TMPDIR/info")
    rm "$w/s.zarr/v3_zstd/c/0/0"
    info_check "$ZF_MNT/v3_zstd.info"
    after=$(grep '^chunks_present:' "$BATS_TEST_TMPDIR/info")
    [[ $before =~ ^chunks_present:\ ([0-9]+)\ of && $after == "chunks_present: $((BASH_REMATCH[1] - 1)) of"* ]] \
        || fail "before: $before; after deleting one chunk: $after"
}
