#!/usr/bin/env bats
# untrusted.bats - what comes from outside cannot hurt the daemon or its host
# (issue 24): the persisted index and its directory, text lengths past
# 2^62 bytes, names and log lines with C1 controls or bidi overrides, and
# options with signs, control characters or secrets.  (Redirects: test_net
# and remote_http.bats.)

load helpers

# the tests count the indexes saved: one per array stat-ed, none sized ahead
ZF_MOUNT_OPTS=(-o presize=0)

UT_GEN=$ZF_REPO/tests/e2e/hostile_gen.py

setup_file() {
    local root=${ZF_TEST_TMP:-${TMPDIR:-/tmp}}
    mkdir -p "$root"
    UT_STORES=$(mktemp -d "$root/zf-untrusted.XXXXXX")
    export UT_STORES
    PYTHONWARNINGS=ignore timeout -k 5 300 "$ZF_PYTHON" "$UT_GEN" plain "$UT_STORES/s" >/dev/null
    PYTHONWARNINGS=ignore timeout -k 5 300 "$ZF_PYTHON" "$UT_GEN" longlabels "$UT_STORES/ll" >/dev/null
}

teardown_file() {
    [[ -n ${UT_STORES:-} ]] && rm -rf --one-file-system "$UT_STORES"
}

setup() {
    zf_mktemp UT_DIR
    UT_DIR=$(realpath "$UT_DIR")
    export XDG_CACHE_HOME=$UT_DIR/xdg # this test's persisted indexes
}

# ut_size_ok: mount the plain store, stat ok.txt (sizes it: an index is
# saved if the cache directory may be used), read it, unmount
ut_size_ok() {
    zf_mount "$UT_STORES/s" "$@"
    zf_t stat -c %s "$ZF_MNT/ok.txt" >/dev/null || fail "stat ok.txt: $(cat "$ZF_LOG")"
    [[ $(zf_t cat "$ZF_MNT/ok.txt") == "$(cat "$UT_STORES/s.expected/ok.txt")" ]] || fail "ok.txt differs"
    zf_unmount || fail "unmount"
}

# ut_indexes DIR: how many index files DIR holds
ut_indexes() {
    find "$1" -maxdepth 1 -name '*.idx' 2>/dev/null | wc -l
}

# ut_refused: the last mount logged that the cache directory is not used
ut_refused() {
    grep -q "index cache directory .* is not used: .*$1" "$ZF_LOG" ||
        fail "no log line refusing the cache directory ($1): $(cat "$ZF_LOG")"
}

# --- the persisted index ------------------------------------------------------

@test "untrusted: an index whose .csv offsets lie below the header is discarded with a log line" {
    zf_mount "$UT_STORES/s"
    zf_t cat "$ZF_MNT/ok.csv" >"$UT_DIR/want.csv" || fail "cat ok.csv"
    zf_unmount || fail "unmount"
    (($(ut_indexes "$XDG_CACHE_HOME/zarrfs") == 1)) || fail "no index saved"
    # the .csv's offsets moved to a 4-byte header: before issue 24 a read wrote
    # past the reply buffer (AddressSanitizer: heap-buffer-overflow in
    # emit_csv_lines)
    local idx
    idx=$(find "$XDG_CACHE_HOME/zarrfs" -name '*.idx')
    cp "$idx" "$UT_DIR/genuine.idx"
    zf_t "$ZF_PYTHON" - "$idx" "$(head -n 1 "$UT_DIR/want.csv" | wc -c)" <<'EOF' || fail "could not patch the index"
import struct, sys
path, header = sys.argv[1], int(sys.argv[2])
b = bytearray(open(path, "rb").read())
n = struct.unpack_from("<Q", b, 24)[0]
for i in range(n):
    at = 32 + 8 * n + 8 * i
    struct.pack_into("<Q", b, at, struct.unpack_from("<Q", b, at)[0] - (header - 4))
open(path, "wb").write(b)
EOF
    zf_mount "$UT_STORES/s"
    zf_t cat "$ZF_MNT/ok.csv" >"$UT_DIR/got.csv" || fail "cat ok.csv after the damage"
    zf_cmp "$UT_DIR/want.csv" "$UT_DIR/got.csv"
    grep -q "/ok: the persisted offset index does not fit the array (the .csv text starts at byte 4" "$ZF_LOG" ||
        fail "no log line: $(cat "$ZF_LOG")"
    zf_unmount || fail "unmount"
    cmp -s "$idx" "$UT_DIR/genuine.idx" || fail "the damaged index was not replaced by a fresh one"
}

@test "untrusted: a missing cache directory is made 0700, parents too" {
    ut_size_ok
    [[ $(stat -c %a "$XDG_CACHE_HOME") == 700 && $(stat -c %a "$XDG_CACHE_HOME/zarrfs") == 700 ]] ||
        fail "modes $(stat -c %a "$XDG_CACHE_HOME") $(stat -c %a "$XDG_CACHE_HOME/zarrfs")"
    (($(ut_indexes "$XDG_CACHE_HOME/zarrfs") == 1)) || fail "no index saved"
}

@test "untrusted: a cache directory writable by others is not used (one log line)" {
    mkdir -p "$XDG_CACHE_HOME/zarrfs" && chmod 0777 "$XDG_CACHE_HOME/zarrfs"
    ut_size_ok
    ut_refused "owned by another user or writable by others"
    (($(ut_indexes "$XDG_CACHE_HOME/zarrfs") == 0)) || fail "an index was saved in a world-writable directory"
    [[ $(grep -c 'index cache directory' "$ZF_LOG") == 1 ]] || fail "not one line: $(cat "$ZF_LOG")"
}

@test "untrusted: a cache directory of another user, or under a parent writable by others, is not used" {
    mkdir -p "$XDG_CACHE_HOME/zarrfs" && chown nobody "$XDG_CACHE_HOME/zarrfs"
    ut_size_ok
    ut_refused "owned by another user"
    (($(ut_indexes "$XDG_CACHE_HOME/zarrfs") == 0)) || fail "an index was saved in another user's directory"
    chown 0 "$XDG_CACHE_HOME/zarrfs" && chmod 0777 "$XDG_CACHE_HOME" # a parent others may write
    ut_size_ok
    ut_refused "xdg is owned by another user or writable by others"
    (($(ut_indexes "$XDG_CACHE_HOME/zarrfs") == 0)) || fail "an index was saved under a world-writable parent"
    chmod 1777 "$XDG_CACHE_HOME" # sticky, as /tmp: others cannot replace what is ours
    ut_size_ok
    (($(ut_indexes "$XDG_CACHE_HOME/zarrfs") == 1)) || fail "not used under a sticky parent: $(cat "$ZF_LOG")"
}

@test "untrusted: a symlink to the cache directory is followed only when we own it" {
    mkdir -p "$XDG_CACHE_HOME" "$UT_DIR/real"
    chmod 0700 "$UT_DIR/real"
    ln -s "$UT_DIR/real" "$XDG_CACHE_HOME/zarrfs"
    chown -h nobody "$XDG_CACHE_HOME/zarrfs"
    ut_size_ok
    ut_refused "zarrfs is a symlink owned by another user"
    (($(ut_indexes "$UT_DIR/real") == 0)) || fail "an index was saved through another user's symlink"
    chown -h 0 "$XDG_CACHE_HOME/zarrfs"
    ut_size_ok
    (($(ut_indexes "$UT_DIR/real") == 1)) || fail "not saved through our own symlink: $(cat "$ZF_LOG")"
}

# --- text lengths -------------------------------------------------------------

@test "untrusted: a .csv that would pass 2^64 bytes is left out with a log line; reads of the .txt's end return at once" {
    zf_mount "$UT_STORES/ll"
    # 2^56 NaT lines of 4 bytes
    [[ $(zf_t stat -c %s "$ZF_MNT/v.txt") == 288230376151711744 ]] || fail "v.txt: $(cat "$ZF_LOG")"
    run zf_t stat -c %s "$ZF_MNT/v.csv"
    [[ $status != 0 && $output == *"No such file"* ]] || fail "v.csv is shown (size $output)"
    grep -q '/ll/v: v.csv would be 2^62 bytes or more; left out' "$ZF_LOG" || fail "no log line: $(cat "$ZF_LOG")"
    # the end of a 2^36-line offset block of absent chunks: passed over by
    # arithmetic (before issue 24 a read there measured line by line for minutes)
    SECONDS=0
    [[ $(timeout 20 tail -c 12 "$ZF_MNT/v.txt") == $'NaT\nNaT\nNaT' ]] || fail "the end of v.txt"
    [[ $(timeout 20 dd if="$ZF_MNT/v.txt" bs=8 skip=$((2**54 + 3)) count=1 status=none) == $'NaT\nNaT' ]] ||
        fail "the middle of v.txt"
    [[ ${ZF_VALGRIND:-0} != 0 ]] || ((SECONDS < 10)) || fail "reads took ${SECONDS}s"
}

# --- names and log lines ----------------------------------------------------

@test "untrusted: names with C1 controls or bidi overrides are skipped; the log shows them as \\xNN" {
    cp -r "$UT_STORES/s" "$UT_DIR/s"
    mv "$UT_DIR/s/ok" "$UT_DIR/s/ok"$'\xc2\x85\xc2\x9b'
    mv "$UT_DIR/s/bad" "$UT_DIR/s/b"$'\xe2\x80\xae'"da"
    zf_mount "$UT_DIR/s"
    run zf_t ls "$ZF_MNT"
    [[ $status == 0 && -z $output ]] || fail "listed: $output"
    grep -qF 's/ok\xc2\x85\xc2\x9b: name is not safe as a file name; skipped' "$ZF_LOG" ||
        fail "no log line for the C1 name: $(cat "$ZF_LOG")"
    grep -qF 's/b\xe2\x80\xaeda: name is not safe' "$ZF_LOG" || fail "no log line for the bidi name: $(cat "$ZF_LOG")"
    ! LC_ALL=C grep -qP '\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]' "$ZF_LOG" ||
        fail "the log holds raw C1 or bidi characters"
}

# --- options ------------------------------------------------------------------

# ut_refuses MESSAGE ARGS...: the daemon exits 1 with MESSAGE on stderr, mounting nothing
ut_refuses() {
    local want=$1 mnt
    shift
    zf_mktemp mnt
    zf_run_cli -f "$@" "$UT_STORES/s" "$mnt"
    if zf_is_mounted "$mnt"; then fusermount3 -uz "$mnt" || true; fail "mounted with $*"; fi
    [[ $ZF_RC == 1 ]] || fail "$*: exit status $ZF_RC: $(cat "$ZF_ERR")"
    grep -qF "$want" "$ZF_ERR" || fail "$*: want '$want': $(cat "$ZF_ERR")"
}

@test "untrusted: signed sizes and counts are refused (cache_size=-5 is not 16 EiB)" {
    ut_refuses "invalid cache_size: -5" -o cache_size=-5
    ut_refuses "invalid cache_size: +5M" -o cache_size=+5M
    ut_refuses "invalid cache_size:  5M" -o "cache_size= 5M"
    ut_refuses "invalid read_ahead: -1" -o read_ahead=-1
    ut_refuses "invalid connections" -o connections=-1
}

@test "untrusted: nat= with a newline, a C1 control or a bidi override is refused (zarrfs, zarrfs-cat)" {
    ut_refuses "nat text holds a control character" -o nat=$'a\nb'
    ut_refuses "nat text holds a control character" -o nat=$'\xc2\x85'
    ut_refuses "nat text holds a control character" -o nat=$'\xe2\x80\xae'
    run zf_t "$ZF_BUILD_DIR/zarrfs-cat" "$UT_STORES/s" ok -o nat=$'a\nb'
    [[ $status == 2 && $output == *"nat text holds a control character"* ]] || fail "zarrfs-cat: $status $output"
}

@test "untrusted: -o log= is never followed through a symlink" {
    touch "$UT_DIR/real.log"
    ln -s "$UT_DIR/real.log" "$UT_DIR/link.log"
    ut_refuses "log file is a symlink (not followed): $UT_DIR/link.log" -o "log=$UT_DIR/link.log"
    [[ ! -s $UT_DIR/real.log ]] || fail "written through the symlink"
}

@test "untrusted: an endpoint with a password is refused without showing it" {
    local mnt
    zf_mktemp mnt
    zf_run_cli -f -o "endpoint=http://user:hun/ter2@127.0.0.1:9" gs://bucket/x "$mnt"
    [[ $ZF_RC == 1 ]] || fail "exit status $ZF_RC: $(cat "$ZF_ERR")"
    ! grep -q "ter2" "$ZF_ERR" || fail "the password is shown: $(cat "$ZF_ERR")"
    AWS_ENDPOINT_URL="ftp://user:hunter2@h" AWS_ACCESS_KEY_ID=a AWS_SECRET_ACCESS_KEY=b \
        zf_run_cli -f s3://bucket/x "$mnt"
    [[ $ZF_RC == 1 ]] || fail "exit status $ZF_RC: $(cat "$ZF_ERR")"
    ! grep -q "hunter2" "$ZF_ERR" || fail "the password is shown: $(cat "$ZF_ERR")"
}
