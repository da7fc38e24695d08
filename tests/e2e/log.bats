#!/usr/bin/env bats
# log.bats - where zarrfs's log lines go and what they look like: stderr in
# the foreground, -o log=FILE (a regular file only, opened before
# daemonizing), syslog when daemonized (checked in a private mount
# namespace with its own /dev/log), -o log_level, the level in each line,
# libfuse's messages as whole lines, one line per damaged chunk.

load helpers

NS=timedelta64[ns]

# mk_bad_store DIR: a v3 group with a good array and one whose chunk c/1 is garbage.
mk_bad_store() {
    mkdir -p "$1"
    printf '{"zarr_format": 3, "node_type": "group", "attributes": {}}\n' >"$1/zarr.json"
    zf_copy_fixture "$NS.zarr" "$1/good"
    zf_copy_fixture "$NS.zarr" "$1/bad"
    printf 'garbage: not a zstd frame, not anything %064d' 0 >"$1/bad/c/1"
}

# read_bad MNT: read the damaged array's files several times (each read fails)
read_bad() {
    local i
    for i in 1 2 3; do
        zf_t cat "$1/bad.txt" >/dev/null 2>&1 && fail "a read of bad.txt succeeded"
        zf_t cat "$1/bad.csv" >/dev/null 2>&1 && fail "a read of bad.csv succeeded"
    done
    return 0
}

# FILE_LINE: a line of a log file: local time with milliseconds and zone, pid, level
FILE_LINE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}[+-][0-9]{4} zarrfs\[[0-9]+\]: (error|warning|info|debug): '

@test "log: in the foreground a damaged chunk is one 'zarrfs: warning:' line on stderr, however often it is read" {
    local d
    zf_mktemp d
    mk_bad_store "$d/s"
    zf_mount "$d/s"
    read_bad "$ZF_MNT"
    assert_equal "$(zf_t head -n 1 "$ZF_MNT/good.txt")" "365 days 00:00:00"
    local lines
    lines=$(grep -v '^==' "$ZF_LOG")
    assert_equal "$(grep -c 'bad/c/1' <<<"$lines")" 1
    [[ $(grep 'bad/c/1' <<<"$lines") == "zarrfs: warning: chunk $d/s/bad/c/1: corrupt data"* ]] ||
        fail "not a warning line: $lines"
    # the default level (warn) shows no info lines
    if grep -q 'info:' <<<"$lines"; then fail "info lines at the default level: $lines"; fi
}

@test "log: -o log=FILE appends timestamped lines with the level; nothing reaches stderr once mounted" {
    local d
    zf_mktemp d
    mk_bad_store "$d/s"
    echo "an older line" >"$d/zarrfs.log"
    zf_mount "$d/s" -o "log=$d/zarrfs.log,log_level=info"
    read_bad "$ZF_MNT"
    zf_unmount || fail "unmount"
    local log=$d/zarrfs.log
    assert_equal "$(head -n 1 "$log")" "an older line"
    tail -n +2 "$log" | grep -vE "$FILE_LINE" && fail "lines not in the log file format:
$(cat "$log")"
    assert_equal "$(grep -c 'warning: chunk .*/bad/c/1: corrupt data' "$log")" 1
    grep -qE "info: $d/s mounted at $ZF_MNT \(read-only\)$" "$log" || fail "no mount line: $(cat "$log")"
    grep -qE "info: $ZF_MNT unmounted$" "$log" || fail "no unmount line: $(cat "$log")"
    if grep -v '^==' "$ZF_LOG" | grep -q .; then fail "lines went to stderr too: $(cat "$ZF_LOG")"; fi
}

@test "log: -o log_level drops the lines below it (error, warn, info, debug)" {
    local d level
    zf_mktemp d
    mk_bad_store "$d/s"
    for level in error warn info debug; do
        zf_mount "$d/s" -o "log=$d/$level.log,log_level=$level"
        read_bad "$ZF_MNT"
        zf_unmount || fail "unmount at $level"
    done
    # error: no warning; warn: the warning, no info; info: both, no debug
    if grep -q 'warning:' "$d/error.log"; then fail "log_level=error logged a warning: $(cat "$d/error.log")"; fi
    grep -q 'warning: chunk' "$d/warn.log" || fail "log_level=warn has no warning: $(cat "$d/warn.log")"
    if grep -q 'info:' "$d/warn.log"; then fail "log_level=warn logged info: $(cat "$d/warn.log")"; fi
    grep -q 'warning: chunk' "$d/info.log" && grep -q 'info: ' "$d/info.log" ||
        fail "log_level=info lacks a warning or info line: $(cat "$d/info.log")"
    if grep -q 'debug:' "$d/info.log"; then fail "log_level=info logged debug: $(cat "$d/info.log")"; fi
    if [[ $(id -u) == 0 ]]; then # (the read-ahead window is set, and said at debug, as root)
        grep -q 'debug: read-ahead window of' "$d/debug.log" || fail "log_level=debug has no debug line: $(cat "$d/debug.log")"
    fi
    grep -q 'warning: chunk' "$d/debug.log" || fail "log_level=debug lost the warning"
}

@test "log: an unknown log_level is refused: exit 1, one line" {
    local mnt
    zf_mktemp mnt
    zf_run_cli -f -o log_level=loud "$ZF_FIXTURES/$NS.zarr" "$mnt"
    if zf_is_mounted "$mnt"; then fusermount3 -uz "$mnt" || true; fail "mounted"; fi
    [[ $ZF_RC == 1 ]] || fail "exit status $ZF_RC"
    assert_equal "$(grep -v '^==' "$ZF_ERR")" "zarrfs: unknown log_level (error, warn, info, debug): loud"
}

# refuse_log PATH: zarrfs -f -o log=PATH exits 1 at once with one line, mounting nothing
refuse_log() {
    local mnt
    zf_mktemp mnt
    SECONDS=0
    zf_run_cli -f -o "log=$1" "$ZF_FIXTURES/$NS.zarr" "$mnt"
    if zf_is_mounted "$mnt"; then fusermount3 -uz "$mnt" || true; fail "mounted with log=$1"; fi
    [[ $ZF_RC == 1 ]] || fail "log=$1: exit status $ZF_RC, want 1: $(cat "$ZF_ERR")"
    ((SECONDS < 10)) || fail "log=$1: took ${SECONDS}s (blocked on opening it?)"
    assert_equal "$(grep -v '^==' "$ZF_ERR")" "zarrfs: log file is not a regular file: $1"
}

@test "log: a FIFO (with or without a reader), a directory or a device as log file is refused" {
    local d
    zf_mktemp d
    mkfifo "$d/fifo"
    refuse_log "$d/fifo"
    # with a reader, opening would succeed and writes could block: still refused
    sleep 30 <>"$d/fifo" 3>&- &
    local reader=$!
    refuse_log "$d/fifo"
    kill "$reader"
    wait "$reader" 2>/dev/null || true
    refuse_log "$d"
    refuse_log /dev/null
}

@test "log: a log file that cannot be opened: exit 1, one line naming it and why" {
    local d mnt
    zf_mktemp d
    zf_mktemp mnt
    zf_run_cli -f -o "log=$d/no/such/dir/x.log" "$ZF_FIXTURES/$NS.zarr" "$mnt"
    [[ $ZF_RC == 1 ]] || fail "exit status $ZF_RC"
    assert_equal "$(grep -v '^==' "$ZF_ERR")" "zarrfs: cannot open log file: $d/no/such/dir/x.log: No such file or directory"
}

@test "log: daemonized with a relative -o log=FILE, lines go to FILE in the starting directory" {
    local d
    zf_mktemp d
    mk_bad_store "$d/s"
    mkdir "$d/mnt"
    ZF_VG_LOG=$d/valgrind.log
    zf_daemon_argv -o log=rel.log,log_level=info s mnt
    (cd "$d" && timeout -k 5 "$ZF_EXIT_TIMEOUT" "${ZF_ARGV[@]}" </dev/null >"$d/out" 2>"$d/err" 3>&-) ||
        fail "zarrfs exited $?: $(cat "$d/err")"
    zf_is_mounted "$d/mnt" || fail "not mounted"
    ZF_MOUNTS+=("$d/mnt") ZF_PIDS+=("") ZF_WORKS+=("$d")
    read_bad "$d/mnt"
    fusermount3 -u "$d/mnt"
    local i
    for i in $(seq 100); do grep -q 'unmounted' "$d/rel.log" 2>/dev/null && break; sleep 0.1; done
    grep -q 'warning: chunk .*bad/c/1' "$d/rel.log" || fail "no chunk line in rel.log: $(cat "$d/rel.log" 2>&1)"
    grep -q 'info: .*mounted at' "$d/rel.log" || fail "no mount line in rel.log: $(cat "$d/rel.log")"
    # nothing was written on stderr once daemonized, and the start-up had nothing to say
    if grep -v '^==' "$d/err" | grep -q .; then fail "stderr: $(cat "$d/err")"; fi
}

@test "log: libfuse's messages are whole lines with a level (an option's bad value)" {
    local mnt
    zf_mktemp mnt
    zf_run_cli -f -o max_read=abc "$ZF_FIXTURES/$NS.zarr" "$mnt"
    [[ $ZF_RC == 1 ]] || fail "exit status $ZF_RC"
    assert_equal "$(grep -v '^==' "$ZF_ERR")" "zarrfs: error: fuse: invalid parameter in option \`max_read=abc'"
}

@test "log: -d logs libfuse's requests as 'zarrfs: debug:' lines" {
    zf_mount "$ZF_FIXTURES/$NS.zarr" -d
    zf_t cat "$ZF_MNT/$NS.txt" >/dev/null
    zf_unmount || fail "unmount"
    grep -q '^zarrfs: debug: unique: [0-9]*, opcode: READ' "$ZF_LOG" || fail "no READ request logged: $(head -n 20 "$ZF_LOG")"
    local other
    other=$(grep -v '^==' "$ZF_LOG" | grep -vE '^zarrfs: (error|warning|info|debug): ' | head -n 5)
    [[ -z $other ]] || fail "lines that are not log lines: $other"
}

@test "log: daemonized, lines go to syslog (LOG_DAEMON, ident zarrfs, level as priority)" {
    [[ $(id -u) == 0 ]] || skip "a private mount namespace with its own /dev needs root"
    command -v unshare >/dev/null || skip "no unshare(1)"
    local d
    zf_mktemp d
    mk_bad_store "$d/s"
    mkdir "$d/mnt"
    ZF_VG_LOG=$d/valgrind.log
    zf_daemon_argv -o log_level=info "$d/s" "$d/mnt"
    # (a daemon left behind is stopped by scripts/test's sweep through $d/pid)
    timeout -k 5 120 unshare --mount --propagation private -- \
        bash "$BATS_TEST_DIRNAME/private_syslog.sh" "$d" "$ZF_PYTHON" "${ZF_ARGV[@]}" \
        </dev/null >"$d/ns.out" 2>&1 3>&- || fail "private_syslog.sh failed ($?):
$(cat "$d/ns.out")"
    local got=$d/syslog.txt pid
    [[ -s $got ]] || fail "nothing reached /dev/log: $(cat "$d/ns.out")"
    pid=$(cat "$d/pid")
    # <30> = LOG_DAEMON (3 << 3) | LOG_INFO (6); <28> = LOG_DAEMON | LOG_WARNING (4)
    grep -qE "^<30>.* zarrfs\[$pid\]: info: $d/s mounted at $d/mnt \(read-only\)$" "$got" ||
        fail "no mount line from the daemon (pid $pid): $(cat "$got")"
    grep -qE "^<28>.* zarrfs\[$pid\]: warning: chunk $d/s/bad/c/1: corrupt data" "$got" ||
        fail "no chunk warning from the daemon: $(cat "$got")"
    grep -qE "^<30>.* zarrfs\[$pid\]: info: $d/mnt unmounted$" "$got" || fail "no unmount line: $(cat "$got")"
    assert_equal "$(grep -c 'bad/c/1' "$got")" 1
    # stderr of the start-up got nothing (no start-up problems) and nothing is left mounted
    if grep -v '^==' "$d/ns.out" | grep -q .; then fail "output: $(cat "$d/ns.out")"; fi
}
