#!/usr/bin/env bats
# package.bats - the Debian package: cpack -G DEB builds it from the build
# directory, apt-get installs it on this machine, the installed zarrfs mounts
# the bundled store through mount(8) (mount -t fuse.zarrfs, and an fstab line
# in a temporary fstab: mount --fstab), its files read as the build's
# zarrfs-cat writes them, man zarrfs works, and the package is purged again
# so that the machine is left as it was found.
#
# Needs root, apt-get, dpkg and cpack; skipped (with the reason) otherwise,
# for sanitizer builds and under valgrind (the installed binary is the normal
# build's), and when a zarrfs is already installed.  One run at a time on a
# machine: a helper process holds an flock on /var/lib/dpkg (a directory,
# so no lock file is left behind) while the work dir exists.  If a run is
# killed with the package installed, scripts/test's sweep purges it (it
# finds $ZF_TEST_TMP/package-installed).

load helpers

STORE=$ZF_REPO/examples/lead_times.zarr

# why_skip: why this machine or build cannot run the package tests (empty if it can)
why_skip() {
    [[ $(id -u) == 0 ]] || { echo "installing a package needs root"; return; }
    local tool
    for tool in apt-get dpkg dpkg-deb dpkg-shlibdeps cpack flock mount; do
        command -v "$tool" >/dev/null || { echo "no $tool"; return; }
    done
    [[ -f $ZF_BUILD_DIR/CPackConfig.cmake ]] || { echo "no CPackConfig.cmake in $ZF_BUILD_DIR"; return; }
    if grep -qE '^ZF_(SANITIZE|TSAN):BOOL=ON' "$ZF_BUILD_DIR/CMakeCache.txt"; then
        echo "a sanitizer build is not packaged (the normal build's package is tested)"; return
    fi
    [[ ${ZF_VALGRIND:-0} == 0 ]] || { echo "under valgrind (the normal run tests the package)"; return; }
    if dpkg-query -W -f='${Status}' zarrfs 2>/dev/null | grep -q 'installed'; then
        echo "a zarrfs package is already installed; not replacing it"; return
    fi
    local p
    for p in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
        [[ -e $p/zarrfs ]] && { echo "$p/zarrfs exists outside a package; mount(8) would run it"; return; }
    done
    return 0
}

setup_file() {
    local why
    why=$(why_skip)
    if [[ -n $why ]]; then
        export PKG_SKIP=$why
        return 0
    fi
    local root=${ZF_TEST_TMP:-${TMPDIR:-/tmp}}
    mkdir -p "$root"
    PKG_DIR=$(mktemp -d "$root/zf-package.XXXXXX")
    export PKG_DIR PKG_MARK=$root/package-installed
    # one package test per machine at a time: the holder keeps the lock
    # until the work dir is gone (teardown_file, or scripts/test's sweep)
    flock -w 600 /var/lib/dpkg bash -c 'touch "$1/locked"; while [[ -d $1 ]]; do sleep 0.5; done' \
        zf-package-lock "$PKG_DIR" </dev/null >/dev/null 2>&1 3>&- &
    echo $! >"$PKG_DIR/pid"
    local i
    for i in $(seq 1200); do [[ -e $PKG_DIR/locked ]] && break; sleep 0.5; done
    [[ -e $PKG_DIR/locked ]] || { echo "# cannot lock /var/lib/dpkg within 600 s" >&3; return 1; }
    if ! timeout -k 5 300 cpack --config "$ZF_BUILD_DIR/CPackConfig.cmake" -G DEB -B "$PKG_DIR/out" \
            >"$PKG_DIR/cpack.log" 2>&1; then
        echo "# cpack failed:" >&3; sed 's/^/# /' "$PKG_DIR/cpack.log" >&3
        return 1
    fi
    local debs=("$PKG_DIR"/out/zarrfs_*.deb)
    [[ -f ${debs[0]} ]] || { echo "# cpack made no zarrfs_*.deb: $(ls "$PKG_DIR/out")" >&3; return 1; }
    export PKG_DEB=${debs[0]}
    touch "$PKG_MARK"
    if ! DEBIAN_FRONTEND=noninteractive timeout -k 5 600 apt-get install -y --no-install-recommends \
            -o DPkg::Lock::Timeout=300 "$PKG_DEB" >"$PKG_DIR/install.log" 2>&1; then
        echo "# apt-get install $PKG_DEB failed:" >&3; sed 's/^/# /' "$PKG_DIR/install.log" | tail -n 30 >&3
        return 1
    fi
}

teardown_file() {
    [[ -n ${PKG_SKIP:-} || -z ${PKG_DIR:-} ]] && return 0
    local bad=0
    if [[ -e ${PKG_MARK:-/nonexistent} ]]; then
        if ! DEBIAN_FRONTEND=noninteractive timeout -k 5 600 apt-get purge -y -o DPkg::Lock::Timeout=300 zarrfs \
                >"$PKG_DIR/purge.log" 2>&1; then
            echo "# apt-get purge zarrfs failed:" >&3; sed 's/^/# /' "$PKG_DIR/purge.log" | tail -n 30 >&3
            bad=1
        fi
        if dpkg-query -W -f='${Status}' zarrfs 2>/dev/null | grep -q 'installed'; then
            echo "# zarrfs is still installed after the purge" >&3
            bad=1
        else
            rm -f "$PKG_MARK"
        fi
    fi
    if awk -v d="$PKG_DIR/" 'index($5, d) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
        echo "# $PKG_DIR still has a mount under it; left in place" >&3
        return 1
    fi
    rm -rf --one-file-system "$PKG_DIR" # (the lock holder sees it and exits)
    return "$bad"
}

setup() {
    [[ -z ${PKG_SKIP:-} ]] || skip "$PKG_SKIP"
}

# pkg_work: a work dir with mnt/ for one test (removed by teardown); sets W
pkg_work() {
    zf_mktemp W
    W=$(realpath "$W")
    mkdir "$W/mnt"
}

# daemon_of MNT: the pid of the zarrfs daemon serving MNT (found by its
# command line), recorded in $W/pid for scripts/test's sweep
daemon_of() {
    local p
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [[ $p == "$$" || $p == "$BASHPID" ]] && continue
        if [[ $(readlink "/proc/$p/exe" 2>/dev/null) == /usr/bin/zarrfs ]] &&
            { tr '\0' '\n' <"/proc/$p/cmdline"; } 2>/dev/null | grep -qxF "$1"; then
            echo "$p" >"$W/pid"
            echo "$p"
            return 0
        fi
    done
    return 1
}

# pkg_umount MNT PID: unmount with umount(8) and wait for the daemon to exit
pkg_umount() {
    zf_t umount "$1" || fail "umount $1 failed"
    local i
    for i in $(seq 200); do kill -0 "$2" 2>/dev/null || return 0; sleep 0.05; done
    kill -TERM "$2" 2>/dev/null
    fail "the daemon $2 did not exit after umount"
}

# expect_same MNT: the mounted files of the bundled store are what the
# build's zarrfs-cat writes (format iso)
expect_same() {
    local f got want
    for f in forecast/lead_time.txt particle_age.csv sample_offset.txt sample_offset.info; do
        got=$(zf_t cat "$1/$f") || fail "cat $1/$f failed"
        want=$("$ZF_BUILD_DIR/zarrfs-cat" "$STORE" "$f" -o format=iso) || fail "zarrfs-cat $f failed"
        [[ $got == "$want" ]] || fail "$f differs from zarrfs-cat:
$(diff <(echo "$want") <(echo "$got") | head -n 20)"
    done
}

@test "package: Depends has fuse3 and the libraries dpkg-shlibdeps found; the files are /usr/bin and man1" {
    local dep
    dep=$(dpkg-deb -f "$PKG_DEB" Depends)
    for want in fuse3 libfuse3-3 libc6 libzstd1 libblosc1 libcjson1 liblz4-1 zlib1g libbz2-1.0; do
        [[ ", $dep," == *", $want"[\ ,]* ]] || fail "Depends lacks $want: $dep"
    done
    # the description names what is shown, and where from
    local desc
    desc=$(dpkg-deb -f "$PKG_DEB" Description)
    for want in "time arrays" s3:// gs:// numpy.timedelta64 numpy.datetime64 "CF encodings"; do
        [[ $desc == *"$want"* ]] || fail "Description does not mention $want: $desc"
    done
    run dpkg -L zarrfs
    assert_success
    for want in /usr/bin/zarrfs /usr/bin/zarrfs-cat /usr/share/man/man1/zarrfs.1.gz /usr/share/man/man1/zarrfs-cat.1.gz; do
        grep -qx "$want" <<<"$output" || fail "the package has no $want: $output"
    done
}

@test "package: the installed programs run, and man zarrfs shows the installed page" {
    [[ $(zarrfs -V | head -n 1) == "zarrfs version "* ]] || fail "zarrfs -V: $(zarrfs -V)"
    zarrfs-cat --help | grep -q '^usage: zarrfs-cat' || fail "zarrfs-cat --help"
    assert_equal "$(man -w zarrfs)" /usr/share/man/man1/zarrfs.1.gz
    run env MANWIDTH=200 man zarrfs
    assert_success
    assert_output --partial "zarrfs - mount the duration and time-stamp arrays of a Zarr store as text files"
}

@test "package: mount -t fuse.zarrfs STORE MNT -o ro,format=iso mounts, reads as zarrfs-cat, umount ends it" {
    pkg_work
    zf_t mount -t fuse.zarrfs "$STORE" "$W/mnt" -o ro,format=iso,no_index_cache \
        >"$W/mount.log" 2>&1 3>&- ||
        fail "mount failed: $(cat "$W/mount.log")"
    local pid
    pid=$(daemon_of "$W/mnt") || fail "no daemon serves $W/mnt"
    ZF_MOUNTS+=("$W/mnt") ZF_PIDS+=("") ZF_WORKS+=("$W")
    assert_equal "$(findmnt -n -o FSTYPE "$W/mnt")" fuse.zarrfs
    [[ $(findmnt -n -o OPTIONS "$W/mnt") == ro,* ]] || fail "findmnt: $(findmnt "$W/mnt")"
    expect_same "$W/mnt"
    pkg_umount "$W/mnt" "$pid"
    [[ ! -s $W/mount.log ]] || fail "mount said: $(cat "$W/mount.log")"
}

@test "package: mount -t fuse.zarrfs without ro is refused with one line from zarrfs" {
    pkg_work
    run zf_t mount -t fuse.zarrfs "$STORE" "$W/mnt" -o format=iso,no_index_cache 3>&-
    if zf_is_mounted "$W/mnt"; then umount "$W/mnt" || umount -l "$W/mnt"; fail "mounted read-write"; fi
    assert_failure
    assert_output --partial "zarrfs: -o rw: zarrfs is read-only (mount with -o ro)"
}

@test "package: an fstab line (ro,noauto,nofail,user,_netdev,x-*) in a temporary fstab mounts with mount --fstab" {
    pkg_work
    printf '# zarrfs test fstab\n%s %s fuse.zarrfs ro,noauto,nofail,user,_netdev,x-systemd.automount,format=iso,no_index_cache 0 0\n' \
        "$STORE" "$W/mnt" >"$W/fstab"
    zf_t mount --fstab "$W/fstab" "$W/mnt" >"$W/mount.log" 2>&1 3>&- || fail "mount --fstab failed: $(cat "$W/mount.log")"
    local pid
    pid=$(daemon_of "$W/mnt") || fail "no daemon serves $W/mnt"
    ZF_MOUNTS+=("$W/mnt") ZF_PIDS+=("") ZF_WORKS+=("$W")
    # user became noexec,nosuid,nodev; all the others were dropped on the way
    [[ $(findmnt -n -o OPTIONS "$W/mnt") == ro,nosuid,nodev,noexec,* ]] || fail "findmnt: $(findmnt "$W/mnt")"
    expect_same "$W/mnt"
    pkg_umount "$W/mnt" "$pid"
    # and by the source, as `mount STORE` would find it
    zf_t mount --fstab "$W/fstab" "$STORE" >"$W/mount2.log" 2>&1 3>&- || fail "mount --fstab STORE failed: $(cat "$W/mount2.log")"
    pid=$(daemon_of "$W/mnt") || fail "no daemon serves $W/mnt"
    expect_same "$W/mnt"
    pkg_umount "$W/mnt" "$pid"
}

@test "package: the systemd example's mount unit (Type=, Options=) mounts through mount(8)" {
    # what the unit makes systemd run: mount -t TYPE WHAT WHERE -o OPTIONS,
    # with the bundled store and a work dir for WHAT and WHERE
    local unit=$ZF_REPO/examples/systemd/mnt-lt.mount type opts
    type=$(sed -n 's/^Type=//p' "$unit")
    opts=$(sed -n 's/^Options=//p' "$unit")
    [[ $type == fuse.zarrfs && -n $opts ]] || fail "no Type=fuse.zarrfs or no Options= in $unit"
    pkg_work
    zf_t mount -t "$type" "$STORE" "$W/mnt" -o "$opts,no_index_cache" >"$W/mount.log" 2>&1 3>&- ||
        fail "mount -t $type -o $opts failed: $(cat "$W/mount.log")"
    local pid
    pid=$(daemon_of "$W/mnt") || fail "no daemon serves $W/mnt"
    ZF_MOUNTS+=("$W/mnt") ZF_PIDS+=("") ZF_WORKS+=("$W")
    expect_same "$W/mnt"
    pkg_umount "$W/mnt" "$pid"
}

@test "package: /usr/share/doc/zarrfs/copyright is the licence in Debian's machine-readable format" {
    local f=/usr/share/doc/zarrfs/copyright
    dpkg -L zarrfs | grep -qx "$f" || fail "the package has no $f: $(dpkg -L zarrfs)"
    cmp -s "$f" "$ZF_REPO/doc/copyright" || fail "$f is not doc/copyright"
    assert_equal "$(head -n 1 "$f")" "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
    # one Files: * paragraph under Apache-2.0, whose text Debian ships
    grep -qx 'Files: \*' "$f" || fail "no 'Files: *' paragraph: $(cat "$f")"
    assert_equal "$(grep -c '^License: Apache-2.0$' "$f")" 2
    [[ -f /usr/share/common-licenses/Apache-2.0 ]] || fail "no /usr/share/common-licenses/Apache-2.0"
    cmp -s /usr/share/common-licenses/Apache-2.0 "$ZF_REPO/LICENSE" || fail "LICENSE is not the Apache License 2.0 text"
}
