# remote.bash - shared parts of the remote-store suites (remote_http.bats,
# remote_s3.bats, remote_faults.bats): the stores, written once per file by
# zarr-python (tests/net/mkstores.py), the servers (tests/net/servers.bash),
# and the comparison of a remote mount with the local mount of the same store.
#
# A file's setup_file calls rm_setup_file; its teardown_file calls
# rm_teardown_file (stops every server whose pid file is under RM_DIR).

load helpers
source "$ZF_REPO/tests/net/servers.bash"

# Chunk keys (anything that is not metadata, or the probe for an Icechunk
# repository every mount makes: repo, refs/branch.main/ref.json): counted in
# the servers' logs.
RM_META_RE='(zarr\.json|\.zarray|\.zattrs|\.zgroup|\.zmetadata|/repo|/refs/branch\.main/ref\.json)$'

# rm_setup_file [--many N]: RM_DIR (exported) with the stores under
# $RM_DIR/www/bucket/ (g3c g3 g2c g2 a3 a2 [many] .zarr).
rm_setup_file() {
    local root=${ZF_TEST_TMP:-${TMPDIR:-/tmp}}
    mkdir -p "$root"
    RM_DIR=$(mktemp -d "$root/zf-remote.XXXXXX")
    export RM_DIR RM_STORES=$RM_DIR/www/bucket
    timeout -k 5 300 "$ZF_PYTHON" "$ZF_REPO/tests/net/mkstores.py" "$RM_STORES" "$@" \
        || { echo "mkstores.py failed" >&2; return 1; }
}

# rm_teardown_file: stop the servers started under RM_DIR, remove RM_DIR.
rm_teardown_file() {
    local p pid
    [[ -n ${RM_DIR:-} && -d $RM_DIR ]] || return 0
    while IFS= read -r -d '' p; do
        pid=$(<"$p")
        [[ $pid =~ ^[0-9]+$ ]] && grep -qa "$RM_DIR" "/proc/$pid/cmdline" 2>/dev/null && net_stop "$pid"
    done < <(find "$RM_DIR" -name pid -type f -print0)
    rm -rf --one-file-system "$RM_DIR"
}

# py_server NAME SCRIPT ARGS...: start tests/net/SCRIPT (it prints its port);
# PY_PORT
py_server() {
    local dir=$RM_DIR/$1 script=$2 pid port i
    shift 2
    mkdir -p "$dir"
    "$ZF_PYTHON" "$ZF_REPO/tests/net/$script" "$@" </dev/null >"$dir/port" 2>"$dir/stderr" 3>&- &
    pid=$!
    for ((i = 0; i < 200; i++)); do
        port=$(head -n1 "$dir/port" 2>/dev/null)
        [[ -n $port ]] && break
        sleep 0.05
    done
    [[ -n $port ]] || { echo "$script did not start: $(cat "$dir/stderr")" >&2; return 1; }
    net_wait_port "$port" "$pid" || return 1
    net_track "$dir" "$pid"
    PY_PORT=$port
}

# rm_labels_oracle STORE NAME FILE: FILE is xarray's to_dataframe().to_csv()
# of array NAME of STORE, NaT written as zarrfs's default "NaT".  The
# non-dimension coordinates' columns in byte order of their names: xarray's
# order for a consolidated or S3-listed store; for a local store without
# consolidated metadata xarray follows the directory's order.
rm_labels_oracle() {
    local exp
    zf_mktemp exp
    timeout -k 5 120 "$ZF_PYTHON" -c 'import sys, warnings; warnings.simplefilter("ignore")
import xarray as xr
ds = xr.open_zarr(sys.argv[1], decode_timedelta=True)
df = ds[sys.argv[2]].to_dataframe()
df = df[sorted(c for c in df.columns if c != sys.argv[2]) + [sys.argv[2]]]
sys.stdout.write(df.to_csv(na_rep="NaT"))' "$1" "$2" >"$exp/want.csv"         || fail "xarray could not read $1"
    zf_cmp "$exp/want.csv" "$3"
}

# rm_chunk_requests LOG: how many requests in an nginx access log asked for a
# chunk (anything but metadata).
rm_chunk_requests() {
    awk '{ split($0, q, "\""); split(q[2], r, " "); print r[2] }' "$1" | grep -cvE "$RM_META_RE" || true
}

# rm_tree DIR: '%type %size %path' of every entry under DIR, sorted (sizes of
# .txt and .csv files only: stat of every array file, which runs its size pass;
# a remote store's .info has a credentials line more).
rm_tree() {
    (cd "$1" && zf_t find . -mindepth 1 \( -type f -name '*.info' -printf 'f - %P\n' \) -o \
        \( -type f -printf 'f %s %P\n' \) -o \( -type d -printf 'd - %P\n' \)) | LC_ALL=C sort
}

# rm_info FILE: FILE, an .info, without the credentials line a remote one has
rm_info() { zf_t grep -v '^credentials: ' "$1"; }

# rm_compare LOCAL REMOTE [nolisting]: the remote mount shows what the local
# mount of the same store shows: the same names and st_size, every .txt/.csv
# byte for byte, reads at random offsets, and the same .info (with
# `nolisting`: the remote .info's chunks_present may say `unknown`; the
# remote's credentials line is left out).
rm_compare() {
    local l=$1 r=$2 mode=${3:-} f n=0 size off cnt i
    local lt rt
    lt=$(rm_tree "$l") || fail "find on the local mount failed"
    rt=$(rm_tree "$r") || fail "find on the remote mount failed"
    [[ -n $lt ]] || fail "the local mount is empty"
    [[ $lt == "$rt" ]] || fail "tree and sizes differ (local < > remote):
$(diff <(echo "$lt") <(echo "$rt") | head -n 30)"
    while read -r f; do
        zf_t cmp "$l/$f" "$r/$f" || fail "$f differs from the local mount"
        n=$((n + 1))
    done < <(cd "$l" && find . -type f \( -name '*.txt' -o -name '*.csv' \) -printf '%P\n' | LC_ALL=C sort)
    ((n > 0)) || fail "no .txt/.csv compared"
    # reads at random offsets (dd skip/count), a few files
    RANDOM=$((0x5eed))
    while read -r f; do
        size=$(stat -c %s "$l/$f")
        for ((i = 0; i < 6; i++)); do
            off=$(((RANDOM * 32768 + RANDOM) % (size + 16))) cnt=$((RANDOM % 3000 + 1))
            cmp <(zf_t dd if="$l/$f" iflag=skip_bytes,count_bytes skip="$off" count="$cnt" bs=4096 status=none) \
                <(zf_t dd if="$r/$f" iflag=skip_bytes,count_bytes skip="$off" count="$cnt" bs=4096 status=none) \
                || fail "$f: $cnt bytes at $off differ"
        done
    done < <(cd "$l" && find . -type f -name '*.txt' -printf '%P\n' | LC_ALL=C sort | head -n 4)
    while read -r f; do
        if [[ $mode == nolisting ]]; then
            # no listing: unknown, or what the reads so far have seen (all of
            # them here: every file was read)
            grep -qE '^chunks_present: unknown' "$r/$f" || diff <(grep '^chunks_present:' "$l/$f") \
                <(grep '^chunks_present:' "$r/$f") || fail "$f: chunks_present neither unknown nor as local: $(cat "$r/$f")"
            diff <(rm_info "$l/$f" | grep -v '^chunks_present:') <(rm_info "$r/$f" | grep -v '^chunks_present:') \
                || fail "$f differs from the local mount (beyond chunks_present)"
        else
            cmp <(rm_info "$l/$f") <(rm_info "$r/$f") || fail "$f differs: $(diff "$l/$f" "$r/$f")"
        fi
    done < <(cd "$l" && find . -type f -name '*.info' -printf '%P\n')
    RM_COMPARED=$n
}

# rm_mount_local NAME: mount the local store $RM_STORES/NAME; RM_LOCAL gets
# the mountpoint (the remote mount comes after and is ZF_MNT).
rm_mount_local() {
    zf_mount "$RM_STORES/$1"
    RM_LOCAL=$ZF_MNT
}

# rm_mount_attempt STORE OPTS...: start `zarrfs -f OPTS STORE MNT` and wait
# until it either mounts (RM_MOUNTED=1) or exits (RM_MOUNTED=0, ZF_STATUS);
# the log is $ZF_LOG.  For stores that may rightly fail to mount.
rm_mount_attempt() {
    local store=$1 work deadline
    shift
    zf_mktemp work
    work=$(realpath "$work")
    mkdir "$work/mnt"
    ZF_WORK=$work ZF_MNT=$work/mnt ZF_LOG=$work/daemon.log ZF_VG_LOG=$work/valgrind.log
    zf_daemon_argv -f "$@" "$store" "$ZF_MNT"
    "${ZF_ARGV[@]}" </dev/null >"$ZF_LOG" 2>&1 3>&- &
    ZF_PID=$!
    echo "$ZF_PID" >"$work/pid"
    ZF_MOUNTS+=("$ZF_MNT") ZF_PIDS+=("$ZF_PID") ZF_WORKS+=("$work")
    deadline=$((SECONDS + ZF_MOUNT_TIMEOUT))
    RM_MOUNTED=0
    while ((SECONDS < deadline)); do
        zf_is_mounted "$ZF_MNT" && { RM_MOUNTED=1; return 0; }
        if ! kill -0 "$ZF_PID" 2>/dev/null; then
            zf_wait_exit "$ZF_PID" 5 || true
            ZF_PIDS[-1]=
            return 0
        fi
        sleep 0.05
    done
    fail "zarrfs neither mounted $store nor exited within ${ZF_MOUNT_TIMEOUT}s: $(cat "$ZF_LOG")"
}

# rm_no_secret SECRET PID FILES...: SECRET appears in none of FILES, nor in
# findmnt's output, nor in /proc/PID/cmdline.
rm_no_secret() {
    local s=$1 pid=$2 f
    shift 2
    for f in "$@"; do
        [[ -e $f ]] || continue
        if grep -rqaF -- "$s" "$f"; then fail "the secret appears in $f"; fi
    done
    if findmnt -rn 2>/dev/null | grep -qF -- "$s"; then fail "the secret appears in findmnt's output"; fi
    if grep -qaF -- "$s" /proc/self/mountinfo; then fail "the secret appears in the mount table"; fi
    if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$s"; then
        fail "the secret appears in the daemon's command line"
    fi
}
