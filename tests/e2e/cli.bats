#!/usr/bin/env bats
# cli.bats - command line, namespace, read-only behaviour, signals, and the
# ordinary tools (head, tail, wc, grep, awk, dd) on mounted files.

load helpers

NS=timedelta64[ns]

# --- store builders (plain files, no Python) --------------------------------

# mk_group3 DIR: a Zarr v3 group.
mk_group3() {
    mkdir -p "$1"
    printf '{"zarr_format": 3, "node_type": "group", "attributes": {}}\n' >"$1/zarr.json"
}

# mk_int64_array3 DIR: a Zarr v3 int64 array with no chunks (all fill).
mk_int64_array3() {
    mkdir -p "$1"
    cat >"$1/zarr.json" <<'EOF'
{"zarr_format": 3, "node_type": "array", "shape": [3], "data_type": "int64",
 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}},
 "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
 "fill_value": 7, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
 "attributes": {}}
EOF
}

# mk_v2_from_fixture FIXTURE DIR [FILL]: the same data as a v3 fixture, as a v2
# array (its chunks are plain zstd frames, as v2's zstd compressor expects).
mk_v2_from_fixture() {
    local src=$ZF_FIXTURES/$1 dst=$2 fill=${3:-null} unit
    unit=$(sed -n 's/.*"unit": *"\([a-z]*\)".*/\1/p' "$src/zarr.json" | head -n 1)
    mkdir -p "$dst"
    cat >"$dst/.zarray" <<EOF
{"zarr_format": 2, "shape": [11], "chunks": [5], "dtype": "<m8[$unit]",
 "compressor": {"id": "zstd", "level": 0}, "fill_value": $fill, "order": "C",
 "filters": null, "dimension_separator": "/"}
EOF
    printf '{"_ARRAY_DIMENSIONS": ["time"]}\n' >"$dst/.zattrs"
    cp "$src/c/0" "$dst/0"
    cp "$src/c/1" "$dst/1"
    chmod u+w "$dst"/*
}

# A nested store: / (group) with top (ns array), ints (int64), a/ (group)
# with mid (ps array), a/b/ (group) with leaf (ms array).
mk_tree() {
    local s=$1
    mk_group3 "$s"
    zf_copy_fixture "$NS.zarr" "$s/top"
    mk_int64_array3 "$s/ints"
    mk_group3 "$s/a"
    zf_copy_fixture 'timedelta64[ps].zarr' "$s/a/mid"
    mk_group3 "$s/a/b"
    zf_copy_fixture 'timedelta64[ms].zarr' "$s/a/b/leaf"
}

# expect_bad_store STORE: exit 1, exactly one line on stderr, nothing mounted.
expect_bad_store() {
    local mnt
    zf_mktemp mnt
    zf_run_cli -f "$1" "$mnt"
    zf_is_mounted "$mnt" && { fusermount3 -uz "$mnt" || true; fail "a bad store was mounted"; }
    [[ $ZF_RC == 1 ]] || fail "exit status $ZF_RC, want 1; stderr: $(cat "$ZF_ERR")"
    local n
    n=$(wc -l <"$ZF_ERR")
    [[ $n == 1 && -n $(tr -d '[:space:]' <"$ZF_ERR") ]] ||
        fail "want one line on stderr, got $n:
$(cat "$ZF_ERR")"
}

# oracle_ns: oracle text of the [ns] fixture into $EXP/txt and $EXP/csv.
oracle_ns() {
    zf_mktemp EXP
    zf_oracle txt "$ZF_FIXTURES/$NS.zarr" >"$EXP/txt" || fail "oracle failed"
    zf_oracle csv "$ZF_FIXTURES/$NS.zarr" >"$EXP/csv" || fail "oracle failed"
}

# --- bad stores, options ----------------------------------------------------

@test "cli: a missing STORE fails with exit 1 and one line on stderr" {
    local d
    zf_mktemp d
    expect_bad_store "$d/does-not-exist"
}

@test "cli: an empty directory is not a store: exit 1, one line" {
    local d
    zf_mktemp d
    mkdir "$d/empty"
    expect_bad_store "$d/empty"
}

@test "cli: a regular file as STORE: exit 1, one line" {
    local d
    zf_mktemp d
    echo hello >"$d/file"
    expect_bad_store "$d/file"
}

@test "cli: a directory of unrelated files is not a store: exit 1, one line" {
    local d
    zf_mktemp d
    mkdir "$d/junk"
    echo '{"hello": 1}' >"$d/junk/data.json"
    echo text >"$d/junk/README"
    expect_bad_store "$d/junk"
}

@test "cli: a store whose root zarr.json is not JSON: exit 1, one line" {
    local d
    zf_mktemp d
    mkdir "$d/s"
    echo '{"zarr_format": 3, "node_type": ' >"$d/s/zarr.json"
    expect_bad_store "$d/s"
}

@test "cli: no arguments: non-zero exit, nothing mounted" {
    zf_run_cli
    [[ $ZF_RC != 0 && $ZF_RC != 124 ]] || fail "exit status $ZF_RC"
}

@test "cli: -h prints usage and exits 0" {
    zf_run_cli -h
    [[ $ZF_RC == 0 ]] || fail "exit status $ZF_RC; stderr: $(cat "$ZF_ERR")"
    grep -qi 'usage' "$ZF_OUT" "$ZF_ERR" || fail "no usage text: $(cat "$ZF_OUT" "$ZF_ERR")"
    grep -q 'cache_size' "$ZF_OUT" "$ZF_ERR" || fail "usage does not mention cache_size"
}

@test "cli: -V prints a version and exits 0" {
    zf_run_cli -V
    [[ $ZF_RC == 0 ]] || fail "exit status $ZF_RC; stderr: $(cat "$ZF_ERR")"
    grep -qE '[0-9]+\.[0-9]+' "$ZF_OUT" "$ZF_ERR" || fail "no version: $(cat "$ZF_OUT" "$ZF_ERR")"
    grep -qi 'zarrfs' "$ZF_OUT" "$ZF_ERR" || fail "version does not name zarrfs: $(cat "$ZF_OUT" "$ZF_ERR")"
}

@test "cli: -o cache_size with K, M, G suffixes and plain bytes mounts and reads" {
    oracle_ns
    local size
    for size in 65536 64K 1M 1G; do
        zf_mount "$ZF_FIXTURES/$NS.zarr" -o "cache_size=$size"
        zf_t cat "$ZF_MNT/$NS.txt" >"$EXP/got" || fail "cat failed with cache_size=$size"
        zf_cmp "$EXP/txt" "$EXP/got"
        zf_unmount || fail "unmount with cache_size=$size"
    done
}

# mounting with -o OPT fails: non-zero exit, nothing mounted, a message naming it
rejects_option() {
    local mnt name=${1%%=*}
    zf_mktemp mnt
    zf_run_cli -f -o "$1" "$ZF_FIXTURES/$NS.zarr" "$mnt"
    if zf_is_mounted "$mnt"; then fusermount3 -uz "$mnt" || true; fail "mounted with $1"; fi
    [[ $ZF_RC != 0 && $ZF_RC != 124 ]] || fail "exit status $ZF_RC"
    grep -q "$name" "$ZF_ERR" || fail "no message naming $name: $(cat "$ZF_ERR")"
}

@test "cli: -o cache_size=bogus is rejected (non-zero exit, nothing mounted)" {
    rejects_option cache_size=bogus
}

# the read-ahead window of the mount's bdi, in KiB (sysfs; the tests run as root)
ra_kb() {
    local dev
    dev=$(mountpoint -d "$ZF_MNT") || return 1
    cat "/sys/class/bdi/$dev/read_ahead_kb"
}

@test "cli: the mount's read-ahead window is 4 MiB, or -o read_ahead, once a file is opened" {
    [[ $(id -u) == 0 ]] || skip "setting read_ahead_kb needs root"
    oracle_ns
    local opt want
    for opt in "" 1M 64K 0; do
        if [[ -n $opt ]]; then zf_mount "$ZF_FIXTURES/$NS.zarr" -o "read_ahead=$opt"
        else zf_mount "$ZF_FIXTURES/$NS.zarr"; fi
        zf_t cat "$ZF_MNT/$NS.txt" >"$EXP/got" || fail "cat failed with read_ahead=$opt"
        zf_cmp "$EXP/txt" "$EXP/got"
        case $opt in "") want=4096 ;; 1M) want=1024 ;; 64K) want=64 ;; 0) want=128 ;; esac
        [[ $(ra_kb) == "$want" ]] || fail "read_ahead=$opt: read_ahead_kb is $(ra_kb), want $want"
        zf_unmount || fail "unmount with read_ahead=$opt"
    done
}

@test "cli: -o read_ahead=bogus is rejected (non-zero exit, nothing mounted)" {
    rejects_option read_ahead=bogus
}

@test "cli: -s (single-threaded) mounts and reads" {
    oracle_ns
    zf_mount "$ZF_FIXTURES/$NS.zarr" -s
    zf_t cat "$ZF_MNT/$NS.txt" >"$EXP/got"
    zf_cmp "$EXP/txt" "$EXP/got"
}

@test "cli: -d (debug) mounts, reads, and logs" {
    oracle_ns
    zf_mount "$ZF_FIXTURES/$NS.zarr" -d
    zf_t cat "$ZF_MNT/$NS.csv" >"$EXP/got"
    zf_cmp "$EXP/csv" "$EXP/got"
    [[ -s $ZF_LOG ]] || fail "-d wrote nothing to stderr"
}

@test "cli: the daemon can be started without -f (daemonizes) and unmounted" {
    local d pid
    zf_mktemp d
    mkdir "$d/mnt"
    ZF_VG_LOG=$d/valgrind.log
    zf_daemon_argv "$ZF_FIXTURES/$NS.zarr" "$d/mnt"
    timeout -k 5 "$ZF_EXIT_TIMEOUT" "${ZF_ARGV[@]}" </dev/null >"$d/out" 2>"$d/err" 3>&- || fail "zarrfs (no -f) exited $?: $(cat "$d/err")"
    zf_is_mounted "$d/mnt" || fail "not mounted after zarrfs returned"
    ZF_MOUNTS+=("$d/mnt") ZF_PIDS+=("") ZF_WORKS+=("$d")
    assert_equal "$(zf_t head -n 1 "$d/mnt/$NS.txt")" "365 days 00:00:00"
    fusermount3 -u "$d/mnt"
    if zf_is_mounted "$d/mnt"; then fail "still mounted after fusermount3 -u"; fi
    # the forked daemon exits once unmounted (it once hung joining a thread lost in the fork)
    local i
    for i in $(seq 100); do pgrep -f -- "$d/mnt" >/dev/null || break; sleep 0.1; done
    if pgrep -f -- "$d/mnt" >/dev/null; then
        pkill -9 -f -- "$d/mnt"
        fail "the daemonized zarrfs did not exit after unmount"
    fi
}

@test "cli: relative STORE and MOUNTPOINT work when daemonized (no -f)" {
    local d
    zf_mktemp d
    zf_copy_fixture "$NS.zarr" "$d/rel.zarr"
    mkdir "$d/mnt"
    ZF_VG_LOG=$d/valgrind.log
    zf_daemon_argv rel.zarr mnt
    (cd "$d" && timeout -k 5 "$ZF_EXIT_TIMEOUT" "${ZF_ARGV[@]}" </dev/null >"$d/out" 2>"$d/err" 3>&-) ||
        fail "zarrfs (relative paths) exited $?: $(cat "$d/err")"
    zf_is_mounted "$d/mnt" || fail "not mounted"
    ZF_MOUNTS+=("$d/mnt") ZF_PIDS+=("") ZF_WORKS+=("$d")
    run zf_ls "$d/mnt"
    assert_output "rel.csv
rel.txt"
    assert_equal "$(zf_t tail -n 1 "$d/mnt/rel.txt")" "NaT"
}

@test "cli: STORE with a trailing slash or /. names the root array the same" {
    local variant
    for variant in "$ZF_FIXTURES/$NS.zarr/" "$ZF_FIXTURES/$NS.zarr/." "$ZF_FIXTURES/$NS.zarr//"; do
        zf_mount "$variant"
        run zf_ls "$ZF_MNT"
        assert_output "$NS.csv
$NS.txt"
        zf_unmount || fail "unmount of $variant"
    done
}

# --- namespace --------------------------------------------------------------

@test "ns: readdir lists NAME.txt and NAME.csv; a missing name is ENOENT" {
    zf_mount "$ZF_FIXTURES/$NS.zarr"
    run zf_ls -a "$ZF_MNT"
    assert_success
    assert_output ".
..
$NS.csv
$NS.txt"
    run zf_t cat "$ZF_MNT/nope.txt"
    assert_failure
    assert_output --partial "No such file or directory"
    run zf_t stat "$ZF_MNT/$NS"
    assert_failure
}

@test "ns: groups are directories (0555), arrays are files (0444), other types hidden" {
    local d
    zf_mktemp d
    mk_tree "$d/tree.zarr"
    zf_mount "$d/tree.zarr"
    run zf_ls "$ZF_MNT"
    assert_success
    assert_output "a
top.csv
top.txt"
    run zf_ls "$ZF_MNT/a"
    assert_output "b
mid.csv
mid.txt"
    run zf_ls "$ZF_MNT/a/b"
    assert_output "leaf.csv
leaf.txt"
    run zf_t bash -c "cd '$ZF_MNT' && LC_ALL=C find . -printf '%y %m %p\n' | grep -v '\.info\$' | sort -k3"
    assert_success
    assert_output "d 555 .
d 555 ./a
d 555 ./a/b
f 444 ./a/b/leaf.csv
f 444 ./a/b/leaf.txt
f 444 ./a/mid.csv
f 444 ./a/mid.txt
f 444 ./top.csv
f 444 ./top.txt"
    assert_equal "$(zf_t head -n 1 "$ZF_MNT/a/mid.txt")" "-63 days +23:48:31.852580896768"
    assert_equal "$(zf_t head -n 1 "$ZF_MNT/a/b/leaf.csv")" "dim_0,leaf"
    assert_equal "$(zf_t tail -n 1 "$ZF_MNT/top.csv")" "10,NaT"
    run zf_t ls -la "$ZF_MNT/a/b"
    assert_success
    # every file (extra views too): st_size equals the bytes a read returns
    local f
    while IFS= read -r f; do
        assert_equal "$(stat -c %s "$f")" "$(zf_t cat "$f" | wc -c)"
        assert_equal "$(stat -c %a "$f")" "444"
    done < <(find "$ZF_MNT" -type f)
}

@test "ns: a root array is named after the store dir, one trailing .zarr removed" {
    local d
    zf_mktemp d
    zf_copy_fixture "$NS.zarr" "$d/plain"
    zf_copy_fixture "$NS.zarr" "$d/twice.zarr.zarr"
    zf_mount "$d/plain"
    run zf_ls "$ZF_MNT"
    assert_output "plain.csv
plain.txt"
    assert_equal "$(zf_t head -n 1 "$ZF_MNT/plain.csv")" "dim_0,plain"
    zf_mount "$d/twice.zarr.zarr"
    run zf_ls "$ZF_MNT"
    assert_output "twice.zarr.csv
twice.zarr.txt"
}

@test "ns: a v2 array (hand-made .zarray, fill null, _ARRAY_DIMENSIONS) reads like its v3 twin" {
    local d
    zf_mktemp d
    mk_v2_from_fixture "$NS.zarr" "$d/v2.zarr"
    oracle_ns
    zf_mount "$d/v2.zarr"
    zf_t cat "$ZF_MNT/v2.txt" >"$EXP/got"
    zf_cmp "$EXP/txt" "$EXP/got"
    assert_equal "$(zf_t head -n 1 "$ZF_MNT/v2.csv")" "time,v2"
    assert_equal "$(zf_t tail -n 1 "$ZF_MNT/v2.csv")" "10,NaT"
    assert_equal "$(stat -c %s "$ZF_MNT/v2.txt")" "$(wc -c <"$EXP/txt")"
}

@test "ns: v2 integer fill value shows for the missing chunk" {
    local d
    zf_mktemp d
    mk_v2_from_fixture "$NS.zarr" "$d/fill.zarr" 86400000000001
    zf_mount "$d/fill.zarr"
    assert_equal "$(zf_t tail -n 1 "$ZF_MNT/fill.txt")" "1 days 00:00:00.000000001"
}

@test "ns: a v2 group (.zgroup) of v2 arrays" {
    local d
    zf_mktemp d
    mkdir -p "$d/g2"
    echo '{"zarr_format": 2}' >"$d/g2/.zgroup"
    mk_v2_from_fixture 'timedelta64[us].zarr' "$d/g2/us"
    mkdir -p "$d/g2/sub"
    echo '{"zarr_format": 2}' >"$d/g2/sub/.zgroup"
    mk_v2_from_fixture 'timedelta64[ms].zarr' "$d/g2/sub/ms"
    zf_mount "$d/g2"
    run zf_ls "$ZF_MNT"
    assert_output "sub
us.csv
us.txt"
    run zf_ls "$ZF_MNT/sub"
    assert_output "ms.csv
ms.txt"
    assert_equal "$(zf_t head -n 1 "$ZF_MNT/sub/ms.txt")" "365 days 00:00:00"
}

@test "ns: an array with invalid metadata is left out with a log line; the rest mounts" {
    local d
    zf_mktemp d
    mk_group3 "$d/s"
    zf_copy_fixture "$NS.zarr" "$d/s/good"
    zf_copy_fixture "$NS.zarr" "$d/s/broken"
    echo '{"zarr_format": 3, "node_type": "array", "shape": [' >"$d/s/broken/zarr.json"
    zf_copy_fixture "$NS.zarr" "$d/s/badunit"
    sed -i 's/"unit": "ns"/"unit": "fortnights"/' "$d/s/badunit/zarr.json"
    zf_mount "$d/s"
    run zf_ls "$ZF_MNT"
    assert_output "good.csv
good.txt"
    assert_equal "$(zf_t head -n 1 "$ZF_MNT/good.txt")" "365 days 00:00:00"
    grep -q 'broken' "$ZF_LOG" || fail "no log line names 'broken'; log: $(cat "$ZF_LOG")"
    grep -q 'badunit' "$ZF_LOG" || fail "no log line names 'badunit'; log: $(cat "$ZF_LOG")"
}

@test "ns: a corrupt chunk gives EIO and a log line with its key; others read" {
    local d
    zf_mktemp d
    mk_group3 "$d/s"
    zf_copy_fixture "$NS.zarr" "$d/s/good"
    zf_copy_fixture "$NS.zarr" "$d/s/bad"
    printf 'garbage: not a zstd frame, not anything %064d' 0 >"$d/s/bad/c/1"
    zf_mount "$d/s"
    run zf_t cat "$ZF_MNT/bad.txt"
    assert_failure
    assert_output --partial "Input/output error"
    grep -q 'c/1' "$ZF_LOG" || fail "no log line names chunk c/1; log: $(cat "$ZF_LOG")"
    kill -0 "$ZF_PID" || fail "daemon died"
    zf_is_mounted "$ZF_MNT" || fail "unmounted"
    assert_equal "$(zf_t head -n 1 "$ZF_MNT/good.txt")" "365 days 00:00:00"
    run zf_t cat "$ZF_MNT/bad.csv"
    assert_failure
    assert_equal "$(zf_t wc -l <"$ZF_MNT/good.csv")" "12"
}

# --- read-only --------------------------------------------------------------

# expect_erofs CMD...: CMD fails and says "Read-only file system".
expect_erofs() {
    run zf_t "$@"
    assert_failure
    assert_output --partial "Read-only file system"
}

@test "ro: creating files fails with EROFS" {
    zf_mount "$ZF_FIXTURES/$NS.zarr"
    expect_erofs touch "$ZF_MNT/new"
    expect_erofs bash -c "echo x > '$ZF_MNT/new.txt'"
    expect_erofs cp /etc/hostname "$ZF_MNT/"
    [[ ! -e $ZF_MNT/new ]]
}

@test "ro: modifying a file fails with EROFS" {
    zf_mount "$ZF_FIXTURES/$NS.zarr"
    local f=$ZF_MNT/$NS.txt
    expect_erofs touch "$f"
    expect_erofs bash -c "echo x > '$f'"
    expect_erofs bash -c "echo x >> '$f'"
    expect_erofs bash -c "exec 4<>'$f'"
    expect_erofs truncate -s 0 "$f"
    expect_erofs chmod 0644 "$f"
    assert_equal "$(zf_t head -n 1 "$f")" "365 days 00:00:00"
}

@test "ro: rm, mkdir, rmdir, mv, ln fail with EROFS" {
    local d
    zf_mktemp d
    mk_tree "$d/tree.zarr"
    zf_mount "$d/tree.zarr"
    expect_erofs rm -f "$ZF_MNT/top.txt"
    expect_erofs mkdir "$ZF_MNT/newdir"
    expect_erofs rmdir "$ZF_MNT/a/b"
    expect_erofs mv "$ZF_MNT/top.txt" "$ZF_MNT/moved.txt"
    expect_erofs mv "$ZF_MNT/top.csv" "$ZF_MNT/a/"
    expect_erofs ln -s top.txt "$ZF_MNT/link"
    expect_erofs ln "$ZF_MNT/top.txt" "$ZF_MNT/hard"
    run zf_ls "$ZF_MNT"
    assert_output "a
top.csv
top.txt"
}

# --- signals ----------------------------------------------------------------

# unmounts_on SIG EXT: mount, read NAME.EXT, send SIG: the daemon unmounts
# and exits with status 0
unmounts_on() {
    zf_mount "$ZF_FIXTURES/$NS.zarr"
    zf_t cat "$ZF_MNT/$NS.$2" >/dev/null
    zf_signal_daemon "$1"
    [[ -n $ZF_STATUS ]] || fail "daemon still running ${ZF_EXIT_TIMEOUT}s after SIG$1"
    [[ $ZF_STATUS == 0 ]] || fail "exit status $ZF_STATUS after SIG$1; log: $(cat "$ZF_LOG")"
    if zf_is_mounted "$ZF_MNT"; then fail "still mounted after SIG$1"; fi
}

@test "signals: SIGTERM unmounts cleanly, exit status 0" {
    unmounts_on TERM txt
}

@test "signals: SIGINT unmounts cleanly, exit status 0" {
    unmounts_on INT csv
}

@test "signals: SIGHUP unmounts cleanly, exit status 0 (libfuse's handler, as documented)" {
    unmounts_on HUP txt
}

@test "signals: SIGTERM right after mounting, before any read" {
    zf_mount "$ZF_FIXTURES/$NS.zarr"
    zf_signal_daemon TERM
    [[ $ZF_STATUS == 0 ]] || fail "exit status '${ZF_STATUS}' after SIGTERM; log: $(cat "$ZF_LOG")"
    if zf_is_mounted "$ZF_MNT"; then fail "still mounted after SIGTERM"; fi
}

@test "signals: fusermount3 -u ends the daemon with status 0" {
    zf_mount "$ZF_FIXTURES/$NS.zarr"
    zf_t cat "$ZF_MNT/$NS.txt" >/dev/null
    fusermount3 -u "$ZF_MNT"
    zf_wait_exit "$ZF_PID" "$ZF_EXIT_TIMEOUT" || fail "daemon still running after unmount"
    ZF_PIDS[-1]=
    [[ $ZF_STATUS == 0 ]] || fail "exit status $ZF_STATUS; log: $(cat "$ZF_LOG")"
}

# --- ordinary tools -----------------------------------------------------------

@test "tools: head, tail, wc -l, grep, awk agree with the oracle text" {
    oracle_ns
    zf_mount "$ZF_FIXTURES/$NS.zarr"
    local t=$ZF_MNT/$NS.txt c=$ZF_MNT/$NS.csv
    assert_equal "$(zf_t head -n 3 "$t")" "$(head -n 3 "$EXP/txt")"
    assert_equal "$(zf_t tail -n 4 "$t")" "$(tail -n 4 "$EXP/txt")"
    assert_equal "$(zf_t tail -c 25 "$t")" "$(tail -c 25 "$EXP/txt")"
    assert_equal "$(zf_t head -c 30 "$c")" "$(head -c 30 "$EXP/csv")"
    assert_equal "$(zf_t wc -l <"$t")" "11"
    assert_equal "$(zf_t wc -l <"$c")" "12"
    assert_equal "$(zf_t wc -c <"$t")" "$(wc -c <"$EXP/txt")"
    assert_equal "$(zf_t grep -c days "$t")" "10"
    assert_equal "$(zf_t grep -n '^NaT$' "$t")" "11:NaT"
    assert_equal "$(zf_t grep -c '00:00:0[6-9]' "$t")" "4"
    assert_equal "$(zf_t awk 'NR == 2' "$t")" "14 days 00:00:00"
    assert_equal "$(zf_t awk -F, 'NR > 1 { s += $1 } END { print s }' "$c")" "55"
    assert_equal "$(zf_t awk -F, '$2 == "NaT" { print $1 }' "$c")" "10"
    assert_equal "$(zf_t awk '{ n += length($0) + 1 } END { print n }' "$t")" "$(stat -c %s "$t")"
    assert_equal "$(zf_t sort "$t" | head -n 1)" "$(sort "$EXP/txt" | head -n 1)"
}

# dd_pieces FILE BS: FILE read as consecutive dd blocks of BS bytes (one dd per
# block, with skip), concatenated.
dd_pieces() {
    local f=$1 bs=$2 size k
    size=$(stat -c %s "$f")
    for ((k = 0; k * bs < size + bs; k++)); do
        zf_t dd if="$f" bs="$bs" skip="$k" count=1 status=none || return 1
    done
}

@test "tools: dd bs=7 with skip over every block equals cat (txt and csv)" {
    oracle_ns
    zf_mount "$ZF_FIXTURES/$NS.zarr"
    local ext
    for ext in txt csv; do
        dd_pieces "$ZF_MNT/$NS.$ext" 7 >"$EXP/dd.$ext" || fail "dd failed on $NS.$ext"
        zf_t cat "$ZF_MNT/$NS.$ext" >"$EXP/cat.$ext"
        zf_cmp "$EXP/cat.$ext" "$EXP/dd.$ext"
        zf_cmp "$EXP/$ext" "$EXP/dd.$ext"
    done
}

@test "tools: dd with block sizes 1..4096 equals the oracle; reads at or past EOF are empty" {
    oracle_ns
    zf_mount "$ZF_FIXTURES/$NS.zarr"
    local f=$ZF_MNT/$NS.txt size
    size=$(stat -c %s "$f")
    for bs in 1 3 13 64 4096; do
        dd_pieces "$f" "$bs" >"$EXP/dd" || fail "dd bs=$bs failed"
        zf_cmp "$EXP/txt" "$EXP/dd"
    done
    # a read starting at or past EOF returns nothing
    assert_equal "$(zf_t dd if="$f" bs=1 skip="$size" count=10 status=none | wc -c)" "0"
    assert_equal "$(zf_t dd if="$f" bs=1 skip=$((size + 100)) count=10 status=none | wc -c)" "0"
}

@test "tools: repeated and parallel reads give the same bytes" {
    oracle_ns
    zf_mount "$ZF_FIXTURES/$NS.zarr"
    local i pids=()
    for i in 1 2 3 4 5 6 7 8; do
        zf_t cat "$ZF_MNT/$NS.csv" >"$EXP/par$i" &
        pids+=($!)
    done
    for i in "${pids[@]}"; do wait "$i" || fail "a parallel cat failed"; done
    for i in 1 2 3 4 5 6 7 8; do zf_cmp "$EXP/csv" "$EXP/par$i"; done
    zf_t cat "$ZF_MNT/$NS.csv" >"$EXP/again"
    zf_cmp "$EXP/csv" "$EXP/again"
}

@test "tools: cp out of the mount copies the exact text" {
    oracle_ns
    zf_mount "$ZF_FIXTURES/$NS.zarr"
    zf_t cp "$ZF_MNT/$NS.txt" "$EXP/copy.txt"
    zf_cmp "$EXP/txt" "$EXP/copy.txt"
    zf_t cp "$ZF_MNT/$NS.csv" "$EXP/copy.csv"
    zf_cmp "$EXP/csv" "$EXP/copy.csv"
}
