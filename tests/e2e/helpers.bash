# helpers.bash - shared setup for the zarrfs end-to-end tests.
#
# Load with `load helpers` from a .bats file, and call `zf_teardown` from its
# teardown() (the default teardown below does that).
#
# Environment:
#   ZF_BUILD_DIR   build directory holding the zarrfs binary (default: build,
#                  relative to the repository root)
#   ZF_BIN         the binary (default: $ZF_BUILD_DIR/zarrfs)
#   ZF_PYTHON      python with zarr-python (default: $REPO/.venv/bin/python)
#   ZF_VALGRIND=1  run the daemon under valgrind; errors fail the test
#   ZF_TEST_TMP    where temporary dirs and mountpoints go (default: $TMPDIR or /tmp)
#   ZF_MOUNT_TIMEOUT, ZF_EXIT_TIMEOUT, ZF_CMD_TIMEOUT  seconds (15 / 15 / 30;
#                  larger under valgrind)

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

ZF_REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
ZF_BUILD_DIR=${ZF_BUILD_DIR:-build}
[[ $ZF_BUILD_DIR = /* ]] || ZF_BUILD_DIR=$ZF_REPO/$ZF_BUILD_DIR
ZF_BIN=${ZF_BIN:-$ZF_BUILD_DIR/zarrfs}
if [[ -z ${ZF_PYTHON:-} ]]; then
    if [[ -x $ZF_REPO/.venv/bin/python ]]; then ZF_PYTHON=$ZF_REPO/.venv/bin/python
    else ZF_PYTHON=python3; fi
fi
ZF_ORACLE=$ZF_REPO/tests/oracle/oracle.py
ZF_FIXTURES=$ZF_REPO/tests/data/zarr-python-3.1
if [[ ${ZF_VALGRIND:-0} != 0 ]]; then
    ZF_MOUNT_TIMEOUT=${ZF_MOUNT_TIMEOUT:-90}
    ZF_EXIT_TIMEOUT=${ZF_EXIT_TIMEOUT:-90}
    ZF_CMD_TIMEOUT=${ZF_CMD_TIMEOUT:-120}
else
    ZF_MOUNT_TIMEOUT=${ZF_MOUNT_TIMEOUT:-15}
    ZF_EXIT_TIMEOUT=${ZF_EXIT_TIMEOUT:-15}
    ZF_CMD_TIMEOUT=${ZF_CMD_TIMEOUT:-30}
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# State of the mounts made by this test (parallel arrays).
ZF_MOUNTS=()   # mountpoints
ZF_PIDS=()     # daemon pids
ZF_WORKS=()    # work dirs (hold mnt/, daemon.log, valgrind.log)
ZF_TMPS=()     # other temp dirs to remove
# The most recent mount:
ZF_MNT= ZF_PID= ZF_LOG= ZF_WORK=

# zf_tmpdir: make a temp dir (removed in teardown); prints its path.
# Call as `d=$(zf_tmpdir)` is NOT tracked; use `zf_mktemp VAR` instead.
zf_mktemp() {
    local -n _out=$1
    local root=${ZF_TEST_TMP:-${TMPDIR:-/tmp}}
    mkdir -p "$root"
    _out=$(mktemp -d "$root/zf-e2e.XXXXXX")
    ZF_TMPS+=("$_out")
}

# zf_daemon_argv ARGS...: fill the array ZF_ARGV with the command that runs the
# daemon with ARGS.  THE single place that knows about valgrind; valgrind's
# report goes to $ZF_VG_LOG (set by the caller) so stderr stays the daemon's.
zf_daemon_argv() {
    # A shell's background job starts with SIGINT ignored, and libfuse only
    # handles signals that are at their default: reset INT so it reaches zarrfs.
    ZF_ARGV=(env --default-signal=INT)
    if [[ ${ZF_VALGRIND:-0} != 0 ]]; then
        ZF_ARGV+=(valgrind --error-exitcode=99 --leak-check=full
                 --errors-for-leak-kinds=definite
                 "--log-file=${ZF_VG_LOG:-/dev/null}")
    fi
    ZF_ARGV+=("$ZF_BIN" "${ZF_MOUNT_OPTS[@]}" "$@")
}

# ZF_MOUNT_OPTS: options (an array) every daemon of a test file gets before
# its own, e.g. (-o presize=0) where the tests count on each array being
# sized only when asked
ZF_MOUNT_OPTS=()

# zf_is_mounted DIR: is DIR a mountpoint right now?  Reads mountinfo only, so
# it never blocks on a hung FUSE daemon (unlike stat/mountpoint).
zf_is_mounted() {
    awk -v m="$1" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo
}

# zf_wait_exit PID TIMEOUT: wait for our child PID to exit; sets ZF_STATUS to
# its exit status, or returns 1 (ZF_STATUS empty) if it is still running.
zf_wait_exit() {
    local pid=$1 timeout=$2 deadline
    ZF_STATUS=
    deadline=$((SECONDS + timeout))
    while kill -0 "$pid" 2>/dev/null; do
        # a zombie child still answers kill -0: check its state
        if [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == Z ]]; then break; fi
        ((SECONDS < deadline)) || return 1
        sleep 0.05
    done
    wait "$pid" 2>/dev/null && ZF_STATUS=0 || ZF_STATUS=$?
    return 0
}

# zf_mount STORE [OPTS...]: mount STORE with `zarrfs -f OPTS STORE MNT` in the
# background; sets ZF_MNT, ZF_PID, ZF_LOG, ZF_WORK.  Fails (with the daemon's
# log) if the daemon exits or the mount does not appear within the timeout.
zf_mount() {
    local store=$1; shift
    local work
    zf_mktemp work
    work=$(realpath "$work")
    mkdir "$work/mnt"
    ZF_WORK=$work ZF_MNT=$work/mnt ZF_LOG=$work/daemon.log
    ZF_VG_LOG=$work/valgrind.log
    [[ -x $ZF_BIN ]] || fail "zarrfs binary not found: $ZF_BIN (build first)"
    zf_daemon_argv -f "$@" "$store" "$ZF_MNT"
    # fd 3 is bats' own: a background child must not hold it.
    "${ZF_ARGV[@]}" </dev/null >"$ZF_LOG" 2>&1 3>&- &
    ZF_PID=$!
    echo "$ZF_PID" >"$work/pid"
    ZF_MOUNTS+=("$ZF_MNT") ZF_PIDS+=("$ZF_PID") ZF_WORKS+=("$work")
    local deadline=$((SECONDS + ZF_MOUNT_TIMEOUT))
    until zf_is_mounted "$ZF_MNT"; do
        if ! kill -0 "$ZF_PID" 2>/dev/null; then
            zf_wait_exit "$ZF_PID" 1 || true
            ZF_PIDS[-1]=
            fail "zarrfs exited (status ${ZF_STATUS:-?}) before mounting $store; log:
$(cat "$ZF_LOG")$(zf_vg_report "$work")"
        fi
        if ((SECONDS >= deadline)); then
            fail "zarrfs did not mount $store within ${ZF_MOUNT_TIMEOUT}s; log:
$(cat "$ZF_LOG")"
        fi
        sleep 0.05
    done
}

# zf_signal_daemon SIG: send SIG to the latest daemon and wait for it to exit;
# ZF_STATUS gets its exit status (empty if it did not exit in time).  The
# daemon is then no longer tracked (teardown still unmounts if needed).
zf_signal_daemon() {
    local last=$((${#ZF_PIDS[@]} - 1))
    kill "-$1" "$ZF_PID"
    if zf_wait_exit "$ZF_PID" "$ZF_EXIT_TIMEOUT"; then
        ZF_PIDS[$last]=
    fi
}

# zf_vg_report WORK: valgrind's report for a mount (empty without valgrind).
zf_vg_report() {
    if [[ ${ZF_VALGRIND:-0} != 0 && -s $1/valgrind.log ]]; then
        printf '\n--- valgrind ---\n'; cat "$1/valgrind.log"
    fi
}

# zf_fuse_abort MNT: abort the FUSE connection behind MNT (last resort for a
# hung daemon; makes every pending request fail).  Needs fusectl mounted on
# /sys/fs/fuse/connections; a no-op otherwise (killing the daemon also works).
zf_fuse_abort() {
    local dev minor
    dev=$(awk -v m="$1" '$5 == m { print $3; exit }' /proc/self/mountinfo)
    [[ -n $dev ]] || return 0
    minor=${dev#*:}
    [[ -w /sys/fs/fuse/connections/$minor/abort ]] && echo 1 >"/sys/fs/fuse/connections/$minor/abort" 2>/dev/null
    return 0
}

# zf_unmount_one INDEX: unmount one mount and reap its daemon.  Returns 1 if
# anything was wrong: the daemon had to be killed, exited non-zero, or
# valgrind / a sanitizer reported errors.  Never stops half way.
zf_unmount_one() {
    local i=$1 mnt=${ZF_MOUNTS[$1]} pid=${ZF_PIDS[$1]} work=${ZF_WORKS[$1]} bad=0 why=
    [[ -n $mnt ]] || return 0
    if zf_is_mounted "$mnt"; then
        timeout 10 fusermount3 -u "$mnt" 2>/dev/null || {
            sleep 0.2
            timeout 10 fusermount3 -u "$mnt" 2>/dev/null || {
                bad=1 why+="unmount failed (busy or hung): aborted, lazily unmounted; "
                zf_fuse_abort "$mnt"
                [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null
                timeout 10 fusermount3 -uz "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
            }
        }
    fi
    if [[ -n $pid ]]; then
        if zf_wait_exit "$pid" "$ZF_EXIT_TIMEOUT"; then
            if [[ $ZF_STATUS != 0 ]]; then
                bad=1 why+="daemon exit status $ZF_STATUS; "
            fi
        else
            bad=1 why+="daemon still running ${ZF_EXIT_TIMEOUT}s after unmount, killed; "
            kill -TERM "$pid" 2>/dev/null || true
            zf_wait_exit "$pid" 5 || { kill -KILL "$pid" 2>/dev/null || true; zf_wait_exit "$pid" 5 || true; }
        fi
    fi
    if [[ -f $work/daemon.log ]] && grep -qE 'ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:' "$work/daemon.log"; then
        bad=1 why+="sanitizer report in log; "
    fi
    if ((bad)); then
        {
            echo "# zarrfs teardown of $mnt: $why"
            sed 's/^/# log: /' "$work/daemon.log" 2>/dev/null | tail -n 60
            zf_vg_report "$work" | sed 's/^/# /' | tail -n 80
        } >&2
    fi
    ZF_MOUNTS[$i]= ZF_PIDS[$i]=
    return "$bad"
}

# zf_unmount: unmount everything this test mounted.
zf_unmount() {
    local i bad=0
    for i in "${!ZF_MOUNTS[@]}"; do
        zf_unmount_one "$i" || bad=1
    done
    return "$bad"
}

# zf_teardown: unmount everything, then remove temp dirs (never a mounted one).
zf_teardown() {
    local bad=0 d m
    zf_unmount || bad=1
    for d in "${ZF_TMPS[@]}"; do
        [[ -d $d ]] || continue
        local mounted=0
        while read -r m; do
            [[ $m == "$d"/* ]] && { mounted=1; timeout 10 fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; }
        done < <(awk '{print $5}' /proc/self/mountinfo)
        ((mounted)) && bad=1
        rm -rf --one-file-system "$d" 2>/dev/null || true
    done
    ZF_TMPS=()
    return "$bad"
}

teardown() { zf_teardown; }

# Views besides NAME.txt / NAME.csv that zarrfs may show for an array (the
# contract requires only those two; zarrfs also has NAME.info).  Listings
# drop NAME.EXT for these EXT when NAME.txt is listed too.
ZF_EXTRA_VIEWS=${ZF_EXTRA_VIEWS:-info}

# zf_ls [-a] DIR: `ls` of DIR (C locale, one per line) minus the extra views.
zf_ls() {
    local opt=
    [[ $1 == -a ]] && { opt=-a; shift; }
    zf_t env LC_ALL=C ls -1 $opt "$1" | awk -v exts="$ZF_EXTRA_VIEWS" '
        BEGIN { n = split(exts, e, " ") }
        { line[NR] = $0; seen[$0] = 1 }
        END {
            for (i = 1; i <= NR; i++) {
                name = line[i]; drop = 0
                for (k = 1; k <= n; k++) {
                    suf = "." e[k]
                    if (length(name) > length(suf) && substr(name, length(name) - length(suf) + 1) == suf &&
                        (substr(name, 1, length(name) - length(suf)) ".txt") in seen) drop = 1
                }
                if (!drop) print name
            }
        }'
    return "${PIPESTATUS[0]}"
}

# zf_t CMD...: run CMD with a timeout (so a hung daemon cannot hang the suite).
zf_t() { timeout -k 5 "$ZF_CMD_TIMEOUT" "$@"; }

# zf_oracle ARGS...: run the Python oracle (see tests/oracle/oracle.py).
zf_oracle() { PYTHONWARNINGS=ignore zf_t "$ZF_PYTHON" "$ZF_ORACLE" "$@"; }

# zf_cmp EXPECTED_FILE ACTUAL_FILE: byte-for-byte compare, showing a diff on failure.
zf_cmp() {
    if ! cmp -s "$1" "$2"; then
        fail "files differ: expected $1 vs actual $2
$(diff <(head -c 4000 "$1") <(head -c 4000 "$2") | head -n 40)
expected size $(wc -c <"$1"), actual size $(wc -c <"$2")"
    fi
}

# zf_run_cli ARGS...: run the daemon (through the launcher) with a timeout,
# stdout to $ZF_OUT, stderr to $ZF_ERR (files), status in ZF_RC.
zf_run_cli() {
    local work
    zf_mktemp work
    ZF_OUT=$work/stdout ZF_ERR=$work/stderr ZF_VG_LOG=$work/valgrind.log
    zf_daemon_argv "$@"
    ZF_RC=0
    timeout -k 5 "$ZF_EXIT_TIMEOUT" "${ZF_ARGV[@]}" </dev/null >"$ZF_OUT" 2>"$ZF_ERR" 3>&- || ZF_RC=$?
    if [[ ${ZF_VALGRIND:-0} != 0 && $ZF_RC == 99 ]]; then
        fail "valgrind reported errors running zarrfs $*:$(zf_vg_report "$work")"
    fi
}

# zf_copy_fixture NAME DEST: copy a fixture store of $ZF_FIXTURES (writable copy).
zf_copy_fixture() {
    cp -r "$ZF_FIXTURES/$1" "$2"
    chmod -R u+w "$2"
}

# zf_gen_setup VAR PREFIX SCRIPT [SUB]: for a file's setup_file: a new temp
# dir PREFIX.XXXXXX, exported as VAR (persisted indexes kept in it), where
# ZF_PYTHON SCRIPT writes its stores (into the dir, or its subdirectory SUB);
# on failure the script's output is shown and the status is 1
zf_gen_setup() {
    local -n _dir=$1
    local root=${ZF_TEST_TMP:-${TMPDIR:-/tmp}}
    mkdir -p "$root"
    _dir=$(mktemp -d "$root/$2.XXXXXX")
    export "${!_dir}"
    export XDG_CACHE_HOME=$_dir/xdg-cache
    if ! PYTHONWARNINGS=ignore timeout -k 5 600 "$ZF_PYTHON" "$3" "$_dir${4:+/$4}" \
            >"$_dir/gen.log" 2>&1; then
        echo "# $3 failed ($ZF_PYTHON):" >&3
        sed 's/^/# /' "$_dir/gen.log" >&3
        return 1
    fi
}
