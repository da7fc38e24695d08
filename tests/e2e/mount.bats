#!/usr/bin/env bats
# mount.bats - what is accepted as MOUNTPOINT, what the mount table shows
# (source and type), and start-up errors before mounting.

load helpers

NS=timedelta64[ns]

# mk_store DIR: a v3 group holding the [ns] fixture as array "top".
mk_store() {
    mkdir -p "$1"
    printf '{"zarr_format": 3, "node_type": "group", "attributes": {}}\n' >"$1/zarr.json"
    zf_copy_fixture "$NS.zarr" "$1/top"
}

# try_start ARGS...: start `zarrfs -f ARGS` in the background (tracked, so
# teardown unmounts and reaps it) and wait until it exits or MOUNTPOINT (the
# last argument) is mounted.  Sets TRY_RC to its exit status, or to
# "mounted"; its stderr is in $TRY_ERR.
try_start() {
    local work mnt
    mnt=$(realpath -m "${!#}") # (libfuse mounts at the resolved path)
    zf_mktemp work
    TRY_ERR=$work/daemon.log
    ZF_VG_LOG=$work/valgrind.log
    zf_daemon_argv -f "$@"
    "${ZF_ARGV[@]}" </dev/null >"$TRY_ERR" 2>&1 3>&- &
    local pid=$!
    echo "$pid" >"$work/pid"
    ZF_MOUNTS+=("$mnt") ZF_PIDS+=("$pid") ZF_WORKS+=("$work")
    local deadline=$((SECONDS + ZF_MOUNT_TIMEOUT))
    TRY_RC=
    while ((SECONDS < deadline)); do
        if zf_is_mounted "$mnt"; then TRY_RC=mounted; return 0; fi
        if [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == Z ]] || ! kill -0 "$pid" 2>/dev/null; then
            zf_wait_exit "$pid" 5 || true
            TRY_RC=$ZF_STATUS
            ZF_PIDS[-1]=
            return 0
        fi
        sleep 0.05
    done
    fail "zarrfs neither mounted nor exited within ${ZF_MOUNT_TIMEOUT}s: $(cat "$TRY_ERR")"
}

# expect_one_line_exit1 WHAT: the last try_start exited 1 with one line on stderr.
expect_one_line_exit1() {
    [[ $TRY_RC != mounted ]] || fail "$1 was mounted (want exit 1)"
    [[ $TRY_RC == 1 ]] || fail "exit status $TRY_RC, want 1; stderr: $(cat "$TRY_ERR")"
    local n
    n=$(grep -cv '^==' "$TRY_ERR") # (valgrind's lines start with ==)
    [[ $n == 1 ]] || fail "want one line on stderr, got $n:
$(cat "$TRY_ERR")"
}

# mountinfo_field MNT N: field N after " - " of MNT's line (1 type, 2 source),
# as the kernel escapes it (a space is \040).
mountinfo_field() {
    awk -v m="$1" -v n="$2" '$5 == m { for (i = 7; i <= NF; i++) if ($i == "-") { print $(i + n); exit } }' \
        /proc/self/mountinfo
}

# mangle S: S as /proc/self/mountinfo shows it (\ space tab newline as octal).
mangle() {
    local s=$1
    s=${s//\\/\\134}
    s=${s// /\\040}
    s=${s//$'\t'/\\011}
    printf '%s' "${s//$'\n'/\\012}"
}

# A preload library that makes fstatat(AT_FDCWD, $ZF_FAIL_FSTATAT, ...) fail
# with EIO, built into $1.
build_fstatat_shim() {
    local cc=${CC:-cc}
    command -v "$cc" >/dev/null || skip "no C compiler for the preload shim"
    cat >"$1/shim.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef int (*fstatat_fn)(int, const char *, struct stat *, int);

static int fail_here(int dirfd, const char *path)
{
    const char *target = getenv("ZF_FAIL_FSTATAT");
    return dirfd == AT_FDCWD && target && path && strcmp(path, target) == 0;
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    if (fail_here(dirfd, path)) {
        errno = EIO;
        return -1;
    }
    return ((fstatat_fn)dlsym(RTLD_NEXT, "fstatat"))(dirfd, path, st, flags);
}

int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
    if (fail_here(dirfd, path)) {
        errno = EIO;
        return -1;
    }
    typedef int (*fn)(int, const char *, struct stat64 *, int);
    return ((fn)dlsym(RTLD_NEXT, "fstatat64"))(dirfd, path, st, flags);
}
EOF
    "$cc" -shared -fPIC -O1 -o "$1/shim.so" "$1/shim.c" -ldl || fail "cannot build the preload shim"
}

@test "mount: a regular file as MOUNTPOINT is refused: exit 1, one line, nothing mounted" {
    zf_mktemp d
    d=$(realpath "$d")
    mk_store "$d/s.zarr"
    echo "keep me" >"$d/file"
    try_start "$d/s.zarr" "$d/file"
    expect_one_line_exit1 "a regular file"
    assert_equal "$(cat "$TRY_ERR")" "zarrfs: mountpoint is not a directory: $d/file"
    assert_equal "$(cat "$d/file")" "keep me"
}

@test "mount: a symlink to a regular file as MOUNTPOINT is refused too" {
    zf_mktemp d
    d=$(realpath "$d")
    mk_store "$d/s.zarr"
    : >"$d/file"
    ln -s file "$d/link"
    try_start "$d/s.zarr" "$d/link"
    expect_one_line_exit1 "a symlink to a regular file"
    assert_equal "$(cat "$TRY_ERR")" "zarrfs: mountpoint is not a directory: $d/file"
}

@test "mount: the mount table shows the store's absolute path as source, type fuse.zarrfs" {
    zf_mktemp d
    d=$(realpath "$d")
    mk_store "$d/s.zarr"
    cd "$d" # a relative STORE shows as its absolute path
    zf_mount s.zarr
    assert_equal "$(mountinfo_field "$ZF_MNT" 1)" "fuse.zarrfs"
    assert_equal "$(mountinfo_field "$ZF_MNT" 2)" "$d/s.zarr"
    run findmnt -n -o SOURCE,FSTYPE --mountpoint "$ZF_MNT"
    assert_output "$d/s.zarr fuse.zarrfs"
}

@test "mount: a store path with commas, spaces and backslashes is the source, escaped only by the kernel" {
    zf_mktemp d
    d=$(realpath "$d")
    local name='my store,v=2\x,ro.zarr'
    mk_store "$d/$name"
    ln -s "$name" "$d/link" # given through a symlink: the resolved path shows
    zf_mount "$d/link"
    assert_equal "$(mountinfo_field "$ZF_MNT" 1)" "fuse.zarrfs"
    assert_equal "$(mountinfo_field "$ZF_MNT" 2)" "$(mangle "$d/$name")"
    run zf_ls "$ZF_MNT"
    assert_output "top.csv
top.txt"
    # no part of the path became a mount option
    run awk -v m="$ZF_MNT" '$5 == m { print $NF }' /proc/self/mountinfo
    refute_output --partial "v=2"
    refute_output --partial "zarr"
}

@test "mount: two stores are told apart by the mount table" {
    zf_mktemp d
    d=$(realpath "$d")
    mk_store "$d/one.zarr"
    mk_store "$d/two.zarr"
    zf_mount "$d/one.zarr"
    local m1=$ZF_MNT
    zf_mount "$d/two.zarr"
    assert_equal "$(mountinfo_field "$m1" 2)" "$d/one.zarr"
    assert_equal "$(mountinfo_field "$ZF_MNT" 2)" "$d/two.zarr"
}

@test "mount: -o fsname= and -o subtype= replace the source and the type" {
    zf_mktemp d
    mk_store "$d/s.zarr"
    zf_mount "$d/s.zarr" -o fsname=my-data -o subtype=zdata
    assert_equal "$(mountinfo_field "$ZF_MNT" 1)" "fuse.zdata"
    assert_equal "$(mountinfo_field "$ZF_MNT" 2)" "my-data"
    zf_mount "$d/s.zarr" -o 'ro,fsname=a\,b'
    assert_equal "$(mountinfo_field "$ZF_MNT" 1)" "fuse.zarrfs"
    assert_equal "$(mountinfo_field "$ZF_MNT" 2)" "a,b"
}

@test "mount: a store that cannot be stat'ed after opening fails: exit 1, one line" {
    zf_mktemp d
    d=$(realpath "$d")
    mk_store "$d/s.zarr"
    mkdir "$d/mnt"
    build_fstatat_shim "$d"
    # (ASan wants to come first in the library list; the shim is harmless to it)
    LD_PRELOAD=$d/shim.so ZF_FAIL_FSTATAT=$d/s.zarr \
        ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 try_start "$d/s.zarr" "$d/mnt"
    expect_one_line_exit1 "a store without a stat"
    assert_equal "$(cat "$TRY_ERR")" "zarrfs: cannot stat store: $d/s.zarr: Input/output error"
}
