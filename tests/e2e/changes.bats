#!/usr/bin/env bats
# changes.bats - stores that change after an array was sized (issue 23): chunks
# rewritten behind unchanged metadata over HTTP (the persisted offset index is
# discarded and rebuilt, never a permanent EIO; two stores with the same
# metadata never share one), .info telling the state of each open, and file
# times that move forward when a file's content changes (rsync -a, find
# -newer), on a local store, over HTTP (nginx) and S3 (versitygw).  Then the
# smaller points of the issue: %-encoded s3:// and gs:// prefixes (spaces),
# what a TLS, 403 or 416 failure at the root says, -o cafile= checked and
# made absolute before mounting, objects stored with Content-Encoding: gzip.

load remote

setup_file() {
    rm_setup_file
    net_nginx "$RM_DIR/nginx" "$RM_DIR/www"
    export NGX_HTTP NGX_HTTPS NGX_OTHER NGX_CA NGX_LOG
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
    # its time is the newest of its metadata's and chunks' (Last-Modified:
    # whole seconds), the chunks' persisted with the index
    local want
    want=$(cd "$RM_STORES/inplace.zarr" && stat -c %Y zarr.json v3_plain/zarr.json $(find v3_plain/c -type f) | sort -n | tail -n 1)
    got=$(stat -c %Y "$ZF_MNT/v3_plain.txt")
    [[ $got == "$want" ]] || fail "mtime $got, the newest document or chunk is of $want"
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
    zf_t cat "$RM_LOCAL/v3_zstd.txt" >/dev/null || fail "cat local .txt failed" # sized too: its bytes
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

# The store of the file-time tests, and its changes (mk_times STORE WHAT):
#   create [consolidated]  lt and other (t: 10, chunks of 5) at the root, dur
#                          (s: 6) in group g, as xarray writes them
#   region                 one value of lt rewritten: to_zarr(mode="r+", region=)
#   add                    a new array, extra, in group g: to_zarr(mode="a")
#   consolidate            the root's consolidated metadata written again
MK_TIMES='
import sys, warnings, numpy as np, pandas as pd, xarray as xr, zarr
warnings.simplefilter("ignore")
root, what = sys.argv[1], sys.argv[2]
cons = len(sys.argv) > 3
h = lambda n: pd.to_timedelta(np.arange(n), "h")
if what == "create":
    xr.Dataset({"lt": ("t", h(10)), "other": ("t", h(10) * 2)}, coords={"t": np.arange(10)}).to_zarr(
        root, mode="w", consolidated=cons, encoding={"lt": {"chunks": (5,)}, "other": {"chunks": (5,)}})
    xr.Dataset({"dur": ("s", h(6))}).to_zarr(root, group="g", mode="w", consolidated=cons)
    if cons:
        zarr.consolidate_metadata(root)
elif what == "region":
    v = h(10).values.copy()
    v[6] = np.timedelta64(99, "h")
    xr.Dataset({"lt": ("t", v[5:])}).to_zarr(root, mode="r+", region={"t": slice(5, 10)},
                                            consolidated=False)
elif what == "add":
    xr.Dataset({"extra": ("s", h(6) * 3)}).to_zarr(root, group="g", mode="a", consolidated=False)
elif what == "consolidate":
    zarr.consolidate_metadata(root)
'
mk_times() {
    sleep 1.1 # a later second than what it replaces (nginx's ETags, S3's LastModified)
    zf_t "$ZF_PYTHON" -c "$MK_TIMES" "$@" || fail "mk_times $* failed"
}

# wait_for MNT TEST...: wait until `TEST` (a command) succeeds on the mount
wait_for() {
    local end=$((SECONDS + ZF_MOUNT_TIMEOUT + 5))
    until "$@" 2>/dev/null; do
        ((SECONDS < end)) || fail "the mount did not show the change ($*): $(cat "$ZF_LOG")"
        sleep 0.2
    done
}
new_value() { grep -qx '4 days 03:00:00' "$1/lt.txt"; }

# rsync_again MNT COPY: rsync -a MNT to COPY; the .txt files it copied into
# $BATS_TEST_TMPDIR/copied (one a line); COPY is then MNT
rsync_again() {
    zf_t rsync -a --out-format=%n "$1/" "$2/" >"$BATS_TEST_TMPDIR/rsync" || fail "rsync failed"
    grep '\.txt$' "$BATS_TEST_TMPDIR/rsync" | LC_ALL=C sort >"$BATS_TEST_TMPDIR/copied" || true
    diff -r "$1" "$2" >/dev/null || fail "the copy differs from the mount: $(diff -r "$1" "$2" | head)"
}

# times_case MNT COPY APPLY: MNT shows mk_times' store (-o timeout=1); APPLY
# WHAT makes the change WHAT to it (and publishes it).  rsync -a copies the
# changed file again, and only it; find -newer lists the files and the
# directory that changed
times_case() {
    local mnt=$1 copy=$2 apply=$3 newer
    zf_t rsync -a "$mnt/" "$copy/" || fail "the first rsync failed"
    sleep 1.1
    touch "$BATS_TEST_TMPDIR/ref"
    "$apply" region
    wait_for new_value "$mnt"
    rsync_again "$mnt" "$copy"
    [[ $(cat "$BATS_TEST_TMPDIR/copied") == lt.txt ]] || fail "rsync -a copied: $(cat "$BATS_TEST_TMPDIR/rsync")"
    "$apply" add
    wait_for test -e "$mnt/g/extra.txt"
    newer=$(cd "$mnt" && find . -newer "$BATS_TEST_TMPDIR/ref" ! -name '*.info' | LC_ALL=C sort | tr '\n' ' ')
    [[ $newer == *"./g "* && $newer == *"./g/extra.txt "* && $newer == *"./lt.txt "* && $newer == *"./lt.csv "* &&
        $newer != *other* && $newer != *dur* ]] || fail "find -newer: $newer"
    rsync_again "$mnt" "$copy"
    [[ $(cat "$BATS_TEST_TMPDIR/copied") == g/extra.txt ]] || fail "rsync -a copied: $(cat "$BATS_TEST_TMPDIR/rsync")"
}

@test "file times (local): rsync -a copies again the file whose value to_zarr(region=) rewrote, and only it; find -newer lists it and the group that gained an array" {
    local w
    zf_mktemp w
    TIMES_STORE=$w/s.zarr
    zf_t "$ZF_PYTHON" -c "$MK_TIMES" "$TIMES_STORE" create || fail "the store"
    zf_mount "$TIMES_STORE" -o timeout=1
    local_apply() { mk_times "$TIMES_STORE" "$1"; }
    times_case "$ZF_MNT" "$w/copy" local_apply
}

@test "file times (s3): rsync -a copies again the file whose value changed, and only it; find -newer lists it and the group that gained an array" {
    export AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET AWS_REGION=us-east-1
    local w
    zf_mktemp w
    TIMES_STORE=$w/s.zarr
    zf_t "$ZF_PYTHON" -c "$MK_TIMES" "$TIMES_STORE" create || fail "the store"
    net_s3 put "$VGW_URL" zarr stores/times.zarr "$TIMES_STORE" 2>/dev/null || fail "upload"
    zf_mount s3://zarr/stores/times.zarr -o "endpoint=$VGW_URL,timeout=1"
    # a change: made to the local copy, then its new objects uploaded
    s3_apply() {
        touch "$w/mark"
        mk_times "$TIMES_STORE" "$1"
        rm -rf "$w/up"
        mkdir "$w/up"
        (cd "$TIMES_STORE" && find . -type f -newer "$w/mark" -exec cp --parents {} "$w/up" \;)
        net_s3 put "$VGW_URL" zarr stores/times.zarr "$w/up" 2>/dev/null || fail "upload of the change"
    }
    times_case "$ZF_MNT" "$w/copy" s3_apply
}

@test "file times (http): a store rewritten and consolidated again: rsync -a copies the changed file, find -newer lists it" {
    local store=$RM_STORES/times.zarr w
    zf_mktemp w
    zf_t "$ZF_PYTHON" -c "$MK_TIMES" "$store" create consolidated || fail "the store"
    zf_mount "$NGX_HTTP/bucket/times.zarr" -o timeout=1
    zf_t rsync -a "$ZF_MNT/" "$w/copy/" || fail "the first rsync failed"
    sleep 1.1
    touch "$BATS_TEST_TMPDIR/ref"
    mk_times "$store" region
    mk_times "$store" consolidate
    wait_for new_value "$ZF_MNT"
    rsync_again "$ZF_MNT" "$w/copy"
    grep -qx lt.txt "$BATS_TEST_TMPDIR/copied" || fail "rsync -a did not copy lt.txt: $(cat "$BATS_TEST_TMPDIR/rsync")"
    (cd "$ZF_MNT" && find . -newer "$BATS_TEST_TMPDIR/ref") | grep -qx ./lt.txt || fail "find -newer misses lt.txt"
}

@test "a prefix with a space: s3:// as %20 or as itself" {
    export AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET AWS_REGION=us-east-1
    net_s3 put "$VGW_URL" zarr "my data/a3.zarr" "$RM_STORES/a3.zarr" 2>/dev/null || fail "upload"
    mkdir -p "$RM_DIR/www/bucket/my data"
    cp -r "$RM_STORES/a3.zarr" "$RM_DIR/www/bucket/my data/"
    rm_mount_local a3.zarr
    local spec
    for spec in "s3://zarr/my%20data/a3.zarr" "s3://zarr/my data/a3.zarr"; do
        zf_mount "$spec" -o "endpoint=$VGW_URL"
        zf_cmp "$RM_LOCAL/a3.txt" "$ZF_MNT/a3.txt"
    done
    zf_run_cli -f "s3://zarr/100%/a3.zarr" -o "endpoint=$VGW_URL" "$BATS_TEST_TMPDIR"
    [[ $ZF_RC == 1 ]] && grep -q '%25' "$ZF_ERR" || fail "a lone %: $ZF_RC $(cat "$ZF_ERR")"
}

@test "a root that cannot be read (TLS, HTTP 403, HTTP 416 to a whole-object GET) says: cannot read the store: REASON, on one line, exit status 1" {
    zf_run_cli -f -o "cafile=$NGX_CA" "$NGX_OTHER/bucket/g3c.zarr" "$BATS_TEST_TMPDIR"
    [[ $ZF_RC == 1 && $(wc -l <"$ZF_ERR") == 1 ]] || fail "status $ZF_RC: $(cat "$ZF_ERR")"
    grep -q "$NGX_OTHER/bucket/g3c.zarr: cannot read the store: zarr.json: .*certificate" "$ZF_ERR" \
        || fail "TLS: $(cat "$ZF_ERR")"
    net_proxy "$BATS_TEST_TMPDIR/proxy" "${NGX_HTTP#http://}" 60
    local status
    for status in 403 416; do
        net_proxy_set '{"fault": "status", "status": '$status', "match": "zarr.json|zmetadata"}'
        zf_run_cli -f "$PROXY_URL/bucket/g3c.zarr" "$BATS_TEST_TMPDIR"
        [[ $ZF_RC == 1 && $(wc -l <"$ZF_ERR") == 1 ]] || fail "$status: status $ZF_RC: $(cat "$ZF_ERR")"
        grep -q "cannot read the store: zarr.json: HTTP $status" "$ZF_ERR" || fail "$status: $(cat "$ZF_ERR")"
        ! grep -q 'invalid root metadata\|18446744073709551615' "$ZF_ERR" || fail "$(cat "$ZF_ERR")"
    done
    grep -q 'whole object' "$ZF_ERR" || fail "416: $(cat "$ZF_ERR")"
}

@test "-o cafile=: a directory is refused before mounting; a relative path works after the daemon leaves its directory" {
    local certs=${NGX_CA%/*}
    zf_run_cli -f -o "cafile=$certs" "$NGX_HTTPS/bucket/a3.zarr" "$BATS_TEST_TMPDIR"
    [[ $ZF_RC == 1 ]] && grep -q "cannot read cafile $certs: not a regular file" "$ZF_ERR" \
        || fail "a directory as cafile: status $ZF_RC: $(cat "$ZF_ERR")"
    # daemonized (no -f): libfuse makes / its directory once mounted.  (Not
    # under ThreadSanitizer, which stops a forked child that starts threads:
    # the HTTP engine's)
    if grep -q '^ZF_TSAN:BOOL=ON' "$ZF_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
        skip "a daemonized remote mount under ThreadSanitizer"
    fi
    local w
    zf_mktemp w
    mkdir "$w/mnt"
    ZF_MOUNTS+=("$w/mnt") ZF_PIDS+=("") ZF_WORKS+=("$w")
    ZF_VG_LOG=$w/valgrind.log
    zf_daemon_argv -o cafile=ca.pem "$NGX_HTTPS/bucket/a3.zarr" "$w/mnt"
    (cd "$certs" && timeout -k 5 "$ZF_EXIT_TIMEOUT" "${ZF_ARGV[@]}" </dev/null >"$w/out" 2>"$w/err" 3>&-) \
        || fail "the daemon did not start: $(cat "$w/err")"
    zf_is_mounted "$w/mnt" || fail "not mounted"
    rm_mount_local a3.zarr
    zf_cmp "$RM_LOCAL/a3.txt" "$w/mnt/a3.txt"
}

@test "objects stored with Content-Encoding: gzip are decoded when read whole (metadata, chunks); a sharded array's shards fail with a log line naming the coding" {
    export AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET AWS_REGION=us-east-1
    net_s3 putgz "$VGW_URL" zarr gz/g3.zarr "$RM_STORES/g3.zarr" 2>/dev/null || fail "upload"
    [[ $(net_s3 get "$VGW_URL" zarr gz/g3.zarr/zarr.json | head -c 2 | od -An -tx1) == " 1f 8b" ]] \
        || fail "the object is not stored gzip-compressed"
    rm_mount_local g3.zarr
    zf_mount s3://zarr/gz/g3.zarr -o "endpoint=$VGW_URL"
    local f n=0
    for f in v3_zstd v3_plain v3_blosc_lz4_shuffle v2_zstd v2_zlib; do
        [[ -e $RM_LOCAL/$f.txt ]] || continue
        zf_cmp "$RM_LOCAL/$f.txt" "$ZF_MNT/$f.txt"
        n=$((n + 1))
    done
    ((n >= 3)) || fail "only $n arrays compared: $(ls "$RM_LOCAL")"
    if zf_t cat "$ZF_MNT/v3_shard_end.txt" >/dev/null 2>&1; then fail "a gzip-encoded shard was read"; fi
    grep -q 'v3_shard_end/c/.*content coding' "$ZF_LOG" || fail "no log line names the coding: $(cat "$ZF_LOG")"
}
