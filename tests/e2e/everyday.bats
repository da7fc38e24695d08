#!/usr/bin/env bats
# everyday.bats - the habits of Linux users (issue 29): ownership and
# permissions, errors that say what to do, options spelled loosely.

load helpers

NS=timedelta64[ns]

# a group with one duration array, a: the store of every test (a fresh copy)
mk_store() {
    mkdir -p "$1"
    printf '{"zarr_format": 3, "node_type": "group", "attributes": {}}\n' >"$1/zarr.json"
    zf_copy_fixture "$NS.zarr" "$1/a"
}

setup() {
    zf_mktemp T
    mk_store "$T/s"
    export XDG_CACHE_HOME=$T/xdg # persisted indexes of this test only
}

# as_user USER CMD...: run CMD as USER (no supplementary groups)
as_user() {
    local u=$1; shift
    setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups "$@"
}

# other users must reach the mount point: mount under a directory of /tmp
# they may enter (the test root may be 0700); call before zf_mount
public_tmp() {
    local d
    d=$(mktemp -d /tmp/zf-everyday.XXXXXX)
    chmod 755 "$d"
    ZF_TMPS+=("$d")
    export ZF_TEST_TMP=$d
}

# ... and the mount's own work dir (0700 too), after zf_mount
open_path() {
    chmod 755 "$ZF_WORK"
}

@test "owner: with allow_other a local store's owner and read permissions carry over" {
    [[ $EUID = 0 ]] || skip "needs root (other users, allow_other)"
    chown -R nobody:nogroup "$T/s"
    chmod 700 "$T/s"
    public_tmp
    zf_mount "$T/s" -o allow_other
    open_path
    run stat -c '%U %G %A' "$ZF_MNT" "$ZF_MNT/a.txt"
    assert_output "nobody nogroup dr-x------
nobody nogroup -r--------"
    run as_user nobody cat "$ZF_MNT/a.txt"
    assert_success
    run as_user daemon cat "$ZF_MNT/a.txt"
    assert_failure
    assert_output --partial "Permission denied"
    run as_user daemon ls "$ZF_MNT"
    assert_failure
}

@test "owner: a store others may read is read by others through allow_other" {
    [[ $EUID = 0 ]] || skip "needs root (other users, allow_other)"
    chmod 755 "$T/s"
    public_tmp
    zf_mount "$T/s" -o allow_other
    open_path
    run as_user daemon cat "$ZF_MNT/a.txt"
    assert_success
    assert_output "$(cat "$ZF_MNT/a.txt")"
}

@test "owner: -o uid=, gid=, umask= set what every node shows, and the kernel enforces it" {
    [[ $EUID = 0 ]] || skip "needs root (other users, allow_other)"
    public_tmp
    zf_mount "$T/s" -o allow_other,uid=daemon,gid=12,umask=027
    open_path
    run stat -c '%u %g %a' "$ZF_MNT" "$ZF_MNT/a.csv"
    assert_output "$(id -u daemon) 12 550
$(id -u daemon) 12 440"
    run as_user daemon cat "$ZF_MNT/a.txt"
    assert_success
    run as_user nobody cat "$ZF_MNT/a.txt"
    assert_failure
}

@test "owner: -o uid=nosuchuser and umask=9 are refused with one line" {
    run "$ZF_BIN" -o uid=no-such-user-zf "$T/s" "$T"
    assert_failure 1
    assert_output "zarrfs: invalid uid (a user number or name): no-such-user-zf"
    run "$ZF_BIN" -o umask=9 "$T/s" "$T"
    assert_failure 1
    assert_output --partial "invalid umask"
}

@test "errors: after kill -9 a remount says to run fusermount3 -u" {
    zf_mount "$T/s"
    kill -KILL "$ZF_PID"
    zf_wait_exit "$ZF_PID" 10
    ZF_PIDS[-1]=
    run "$ZF_BIN" "$T/s" "$ZF_MNT"
    assert_failure 1
    assert_output "zarrfs: cannot use mountpoint $ZF_MNT: a previous mount died here; run \`fusermount3 -u $ZF_MNT\`, then mount again"
}

@test "errors: mounting on a zarrfs mount point is refused; one mount stays" {
    zf_mount "$T/s"
    run "$ZF_BIN" "$T/s" "$ZF_MNT"
    assert_failure 1
    assert_output --partial "is a zarrfs mount already"
    run grep -c " $ZF_MNT " /proc/self/mountinfo
    assert_output 1
    [[ -f $ZF_MNT/a.txt ]]
}

@test "errors: a non-empty mount point gets a warning, and mounts" {
    zf_mount "$T/s"
    fusermount3 -u "$ZF_MNT"
    zf_wait_exit "$ZF_PID" "$ZF_EXIT_TIMEOUT"
    ZF_PIDS[-1]=
    touch "$ZF_MNT/hidden"
    "$ZF_BIN" "$T/s" "$ZF_MNT" 2>"$T/err"
    ZF_MOUNTS+=("$ZF_MNT") ZF_PIDS+=("") ZF_WORKS+=("$ZF_WORK")
    run cat "$T/err"
    assert_output "zarrfs: warning: mountpoint $ZF_MNT is not empty; what it holds is hidden while zarrfs is mounted there"
    [[ -f $ZF_MNT/a.txt ]]
}

@test "errors: an unknown option names the nearest one" {
    run "$ZF_BIN" -o fromat=iso "$T/s" "$T"
    assert_failure 1
    assert_output "zarrfs: unknown option: fromat=iso (did you mean format?)"
    run "$ZF_BIN" -o ro,allow_otehr "$T/s" "$T"
    assert_failure 1
    assert_output "zarrfs: unknown option: allow_otehr (did you mean allow_other?)"
    run "$ZF_BIN" -o zzzzzzzz "$T/s" "$T"
    assert_failure 1
    assert_output "zarrfs: unknown option: zzzzzzzz (zarrfs --help lists them)"
}

@test "errors: keyword values in any case, log_level=warning as warn" {
    zf_mount "$T/s" -o format=iso
    want=$(cat "$ZF_MNT/a.txt")
    zf_mount "$T/s" -o format=ISO,labels=Index,log_level=warning
    run cat "$ZF_MNT/a.txt"
    assert_output "$want"
}

@test "errors: remote-only options warn and are ignored on a local store" {
    zf_mount "$T/s" -o connections=4,region=eu-west-1,timeout_ms=500
    run cat "$ZF_LOG"
    assert_output --partial "warning: -o connections, timeout_ms, region: for remote stores only; ignored for the local store"
    [[ -f $ZF_MNT/a.txt ]]
}

@test "errors: mounting an array of a group says its coordinates live in the group" {
    zf_mount "$T/s/a"
    run cat "$ZF_LOG"
    assert_output --partial "the coordinates of its dimensions live in that group"
    assert_output --partial "mount $T/s to see them as labels"
    zf_mount "$T/s"
    run cat "$ZF_LOG"
    refute_output --partial "coordinates"
}

# wait_for PATH SECONDS: until PATH exists; 1 if it does not in time
wait_for() {
    local deadline=$((SECONDS + $2))
    until [[ -e $1 ]]; do
        ((SECONDS < deadline)) || return 1
        sleep 0.1
    done
}

@test "refresh: timeout=never shows no change until SIGUSR1, which shows it at once" {
    zf_mount "$T/s" -o timeout=never
    [[ -f $ZF_MNT/a.txt && ! -e $ZF_MNT/b.txt ]] # the kernel now holds b.txt as absent
    zf_copy_fixture "$NS.zarr" "$T/s/b"
    sleep 2.5 # more than two default timeouts
    run ls "$ZF_MNT"
    refute_output --partial b.txt
    kill -USR1 "$ZF_PID"
    wait_for "$ZF_MNT/b.txt" 10 || fail "b.txt not shown after SIGUSR1; log: $(cat "$ZF_LOG")"
    run cat "$ZF_MNT/b.txt"
    assert_output "$(cat "$ZF_MNT/a.txt")"
    kill -USR1 "$ZF_PID" # again, idle: the daemon stays
    sleep 0.3
    kill -0 "$ZF_PID"
}

@test "refresh: SIGUSR1 re-checks a mount with the default timeout too; SIGTERM still unmounts" {
    zf_mount "$T/s" -o timeout=3600
    [[ ! -e $ZF_MNT/b.txt ]]
    zf_copy_fixture "$NS.zarr" "$T/s/b"
    kill -USR1 "$ZF_PID"
    wait_for "$ZF_MNT/b.txt" 10 || fail "b.txt not shown after SIGUSR1"
    zf_signal_daemon TERM
    assert_equal "$ZF_STATUS" 0
}

# mk_many DIR N: a group holding many, an int64 array of N one-value chunks
# with a duration unit (CF)
mk_many() {
    mkdir -p "$1/many/c"
    printf '{"zarr_format": 3, "node_type": "group", "attributes": {}}\n' >"$1/zarr.json"
    cat >"$1/many/zarr.json" <<JSON
{"zarr_format": 3, "node_type": "array", "shape": [$2], "data_type": "int64",
 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
 "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
 "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
 "attributes": {"units": "seconds"}}
JSON
    local i
    for ((i = 0; i < $2; i++)); do printf '\001\000\000\000\000\000\000\000' >"$1/many/c/$i"; done
}

@test "refresh: an idle mount re-checks metadata every timeout, chunk stamps far less often" {
    command -v strace >/dev/null || skip "strace is not installed"
    mk_many "$T/big" 300
    zf_mount "$T/big" -o timeout=0.2
    run wc -l "$ZF_MNT/many.txt" # sized: its chunks' stamps are now watched
    assert_output "300 $ZF_MNT/many.txt"
    timeout -s INT 3 strace -f -qq -o "$T/trace" -e trace=newfstatat,statx -p "$ZF_PID" || true
    local checks chunks
    # (grep -c exits 1 when it counts 0: no chunk stat in the window is within the bound)
    checks=$(grep -c '"many"' "$T/trace" || true) # one stat of the array's directory per re-check
    chunks=$(grep -cE '\(-?[0-9]+, "[0-9]+",' "$T/trace" || true)
    echo "# $checks re-checks, $chunks stats of chunks" >&3
    ((checks >= 4)) || fail "only $checks re-checks in 3 s with timeout=0.2"
    # every 10 timeouts at most: two passes over the 300 chunks in 3 s (was one per re-check)
    ((chunks <= 600)) || fail "$chunks stats of chunks in $checks re-checks"
}

@test "refresh: while a file is open, its chunks are re-checked every timeout" {
    mk_many "$T/big" 20
    zf_mount "$T/big" -o timeout=0.5
    run wc -l "$ZF_MNT/many.txt"
    assert_output "20 $ZF_MNT/many.txt"
    sleep 1 # past the first re-check, which compares chunks (the next idle one: 5 s on)
    local fd seen=0 deadline=$((SECONDS + 3))
    exec {fd}<"$ZF_MNT/many.txt"
    printf '\002\000\000\000\000\000\000\000' >"$T/big/many/c/3.tmp" # a chunk rewritten
    mv "$T/big/many/c/3.tmp" "$T/big/many/c/3"
    while ((SECONDS < deadline)); do # within the 10 timeouts of an idle mount
        grep -q "the store changed" "$ZF_LOG" && { seen=1; break; }
        sleep 0.1
    done
    exec {fd}<&-
    ((seen)) || fail "no re-check saw the chunk while its file was open; log: $(cat "$ZF_LOG")"
}

@test "zarrfs-cat: takes every view option of the mount from the same table, and says which are not its" {
    local cat=$ZF_BUILD_DIR/zarrfs-cat
    run "$cat" --help
    for want in '-o cf=' '-o labels=' '-o cache_size=' '-o format=' '-o nat='; do
        assert_output --partial "    $want"
    done
    refute_output --partial "-o timeout="
    zf_mount "$T/s" -o format=iso,labels=index,cf=dtype
    run "$cat" -o format=ISO,labels=index,cf=dtype,cache_size=1M "$T/s" a --csv
    assert_success
    assert_output "$(cat "$ZF_MNT/a.csv")"
    run "$cat" -o fromat=iso "$T/s" a
    assert_failure 2
    assert_output "zarrfs-cat: unknown option: fromat (did you mean format?)"
    run "$cat" -o timeout=3 "$T/s" a
    assert_failure 2
    assert_output "zarrfs-cat: -o timeout applies to a mount only"
    run "$cat" -o connections=4 "$T/s" a
    assert_success
    assert_line --index 0 "zarrfs-cat: warning: -o connections: for remote stores only; ignored for the local store $T/s"
}

@test "zarrfs-cat: a store that cannot be reached fails with the one line that says why" {
    run "$ZF_BUILD_DIR/zarrfs-cat" -o retries=1 https://127.0.0.1:1/x a
    assert_failure 1
    assert_output "zarrfs: error: https://127.0.0.1:1/x: cannot read the store: zarr.json: could not connect after 1 attempt"
}

@test "errors: a server that refuses connections fails a mount (https, s3) at once with one line, with the default retries" {
    local spec t0 ms
    for spec in https://127.0.0.1:1/x "s3://bkt/x -o endpoint=http://127.0.0.1:1 -o anonymous"; do
        t0=$(date +%s%N)
        # shellcheck disable=SC2086 # (the spec's options are words)
        zf_run_cli -f $spec "$BATS_TEST_TMPDIR"
        ms=$((($(date +%s%N) - t0) / 1000000))
        [[ $ZF_RC == 1 && $(wc -l <"$ZF_ERR") == 1 ]] || fail "$spec: status $ZF_RC: $(cat "$ZF_ERR")"
        grep -q 'could not connect after 1 attempt' "$ZF_ERR" || fail "$spec: $(cat "$ZF_ERR")"
        ((ms < 5000)) || fail "$spec: failed after $ms ms"
    done
}

@test "info: other attributes one line each (escaped), line counts and sizes, a CF fill value explained" {
    "$ZF_PYTHON" - "$T/s" <<'PY'
import json, os, sys
s = sys.argv[1]
p = s + "/a/zarr.json"
d = json.load(open(p))
d["attributes"] = {"long_name": "lead\u0007 time\u202e", "standard_name": "forecast_period",
                   "description": "back\\slash", "valid_range": [0, 5], "units": "days",
                   "_FillValue": "x", "coordinates": "z"}
json.dump(d, open(p, "w"))
os.makedirs(s + "/h")
json.dump({"zarr_format": 3, "node_type": "array", "shape": [3], "data_type": "int32",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": -1, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
           "attributes": {"units": "hours", "long_name": "step"}}, open(s + "/h/zarr.json", "w"))
PY
    zf_mount "$T/s"
    run grep -E '^(attribute |txt_|csv_lines|bytes)' "$ZF_MNT/a.info"
    assert_output 'attribute long_name: lead\x07 time\xe2\x80\xae
attribute standard_name: forecast_period
attribute description: back\\slash
attribute valid_range: [0,5]
attribute units: days
txt_lines: 11
csv_lines: 12 (a header, then one per element)
bytes: not known yet (counted when a text file of the array is first read or stat-ed; see again after that)'
    local txt csv
    txt=$(stat -c %s "$ZF_MNT/a.txt") csv=$(stat -c %s "$ZF_MNT/a.csv")
    run grep -E '^(txt|csv)_bytes' "$ZF_MNT/a.info"
    assert_output "txt_bytes: $txt
csv_bytes: $csv"
    run grep -E '^(fill_value|attribute)' "$ZF_MNT/h.info"
    assert_output "fill_value: -1 (as stored: what the elements of chunks never written hold)
fill_value_decoded: -1 days +23:00:00 (what those elements show, after the CF attributes)
attribute long_name: step"
}

# indexes: how many offset indexes the cache holds
indexes() {
    find "$XDG_CACHE_HOME/zarrfs" -name '*.idx' | wc -l
}

# read_all NAME...: read NAME.txt of the mount, one after the other
read_all() {
    local n
    for n in "$@"; do
        cat "$ZF_MNT/$n.txt" >/dev/null || fail "cat $n.txt"
        sleep 0.05 # each index its own time
    done
}

@test "index cache: bounded by -o index_cache_size, the least recently used removed first" {
    local n
    for n in b c d; do zf_copy_fixture "$NS.zarr" "$T/s/$n"; done
    ZF_MOUNT_OPTS=(-o presize=0) # the arrays read, none sized ahead
    zf_mount "$T/s"
    read_all a b c # 64 bytes each
    zf_unmount || fail "unmount"
    assert_equal "$(indexes)" 3
    zf_mount "$T/s" -o index_cache_size=130
    read_all a d # a loaded (used now), d saved: b then c, the least recently used, go
    zf_unmount || fail "unmount"
    assert_equal "$(indexes)" 2
    zf_mount "$T/s"
    read_all a # kept: loaded, nothing saved
    assert_equal "$(indexes)" 2
    read_all b # removed: sized again, saved
    assert_equal "$(indexes)" 3
}

@test "zarrfs-cat: --list shows what a mount shows and what it leaves out; a path not shown says why" {
    local cat=$ZF_BUILD_DIR/zarrfs-cat
    mkdir -p "$T/s/g/f"
    printf '{"zarr_format": 3, "node_type": "group", "attributes": {}}\n' >"$T/s/g/zarr.json"
    cat >"$T/s/g/f/zarr.json" <<'JSON'
{"zarr_format": 3, "node_type": "array", "shape": [3], "data_type": "float32",
 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}},
 "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
 "fill_value": 0.0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
 "attributes": {}}
JSON
    run "$cat" --list "$T/s"
    assert_success
    assert_output "a	duration (native)	[11]	a.txt a.csv a.info
g/f	not shown: not a duration or time stamp (or hidden by -o cf=)"
    run "$cat" "$T/s" g/f.csv
    assert_failure 1
    assert_output "zarrfs-cat: g/f.csv: an array, but not a duration or time stamp (or hidden by -o cf=): not shown"
    run "$cat" "$T/s" g
    assert_failure 1
    assert_output "zarrfs-cat: g: a group, not an array (zarrfs-cat --list STORE lists its arrays)"
    run "$cat" "$T/s" nope
    assert_failure 1
    assert_output --partial "zarrfs-cat: nope: no array shown at that path"
}
