#!/usr/bin/env bats
# install.bats - the set-up a newcomer follows: README's apt-get line is the
# one list of build packages (scripts/build-packages), scripts/demo installs
# that list and nothing else, cmake names the list when a library is missing,
# and the systemd units README shows are examples/systemd's and parse.
# (That the list builds zarrfs on a fresh Debian 12 is shown in a clean
# chroot, not here: this machine has every package already.)

load helpers

LIST=$ZF_REPO/scripts/build-packages

# list_packages: the packages of scripts/build-packages, one a line
list_packages() { sed 's/#.*//' "$LIST" | tr -s ' \t' '\n' | grep .; }

# readme_apt_packages: the packages of README's `apt-get install` line (with
# its continuation lines), one a line
readme_apt_packages() {
    awk '/^apt-get install [a-z]/ { on = 1 }
         on { line = $0; more = sub(/\\$/, "", line); print line; if (!more) exit }' "$ZF_REPO/README.md" |
        tr -s ' \t' '\n' | grep . | sed '1,2d'
}

# stub_bin DIR: fake dpkg-query (nothing is installed), apt-get (appends its
# arguments to DIR/apt.log), id (root) and cmake (fails: stop after the
# deps), first on PATH
stub_bin() {
    mkdir -p "$1"
    printf '#!/bin/sh\nexit 1\n' >"$1/dpkg-query"
    printf '#!/bin/sh\necho "$*" >>"%s/apt.log"\n' "$1" >"$1/apt-get"
    printf '#!/bin/sh\necho 0\n' >"$1/id"
    printf '#!/bin/sh\necho "cmake stub: stop here" >&2\nexit 3\n' >"$1/cmake"
    chmod +x "$1"/*
}

@test "install: README's apt-get line lists exactly scripts/build-packages, in order" {
    local want got
    want=$(list_packages)
    got=$(readme_apt_packages)
    [[ -n $want ]] || fail "no packages in $LIST"
    [[ $got == "$want" ]] || fail "README's apt-get line and scripts/build-packages differ (< README, > list):
$(diff <(echo "$got") <(echo "$want"))"
    # and the list names the -dev package of every library CMakeLists.txt requires
    local dev
    for dev in libfuse3-dev libcjson-dev libzstd-dev libblosc-dev zlib1g-dev liblz4-dev liblzma-dev \
        libcurl4-openssl-dev libbz2-dev libssl-dev libexpat1-dev; do
        grep -qx -- "$dev" <<<"$want" || fail "scripts/build-packages lacks $dev"
    done
}

@test "install: scripts/demo installs the build packages and nothing else (no nginx, valgrind, clang, bats)" {
    local d
    zf_mktemp d
    stub_bin "$d/bin"
    run env PATH="$d/bin:$PATH" ZF_VENV="$d/venv" ZF_VENV_OLD="$d/venv-old" ZF_TOOLS="$d/tools" \
        timeout 60 "$ZF_REPO/scripts/demo"
    [[ $status == 3 ]] || fail "scripts/demo did not stop at the stubbed cmake (status $status): $output"
    local want
    want="update
install -y --no-install-recommends $(list_packages | tr '\n' ' ' | sed 's/ $//')"
    assert_equal "$(cat "$d/bin/apt.log")" "$want"
    [[ ! -e $d/venv && ! -e $d/tools ]] || fail "scripts/demo made a venv or installed tools"
}

@test "install: scripts/deps installs the build packages and the test packages" {
    # ZF_TOOLS names a versitygw that is up to date: scripts/deps stops at
    # the venvs, which the stubbed python3 refuses
    local d
    zf_mktemp d
    stub_bin "$d/bin"
    printf '#!/bin/sh\nexit 1\n' >"$d/bin/python3"
    chmod +x "$d/bin/python3"
    command -v versitygw >/dev/null || skip "no versitygw installed"
    run env PATH="$d/bin:$PATH" ZF_VENV="$d/venv" ZF_VENV_OLD="$d/venv-old" \
        ZF_TOOLS="$(dirname "$(command -v versitygw)")" timeout 60 "$ZF_REPO/scripts/deps"
    assert_failure
    local installed
    installed=$(sed -n 's/^install -y --no-install-recommends //p' "$d/bin/apt.log")
    [[ " $installed " == " $(list_packages | tr '\n' ' ')"* ]] ||
        fail "scripts/deps does not install the build packages first: $installed"
    local p
    for p in nginx valgrind clang bats python3-venv ca-certificates; do
        [[ " $installed " == *" $p "* ]] || fail "scripts/deps does not install $p: $installed"
    done
}

@test "install: cmake without a library stops with one message naming the build packages" {
    local d
    zf_mktemp d
    mkdir "$d/pc"
    # no .pc file where pkg-config looks: every library is missing
    run env PKG_CONFIG_LIBDIR="$d/pc" PKG_CONFIG_PATH= timeout 120 cmake -S "$ZF_REPO" -B "$d/b"
    assert_failure
    local flat
    flat=$(tr -s ' \n' ' ' <<<"$output")
    [[ $flat == *"missing: fuse3, libcjson, libzstd, blosc, zlib, liblz4, liblzma, libcurl, libcrypto, expat."* ]] ||
        fail "cmake does not list what is missing: $output"
    [[ $flat == *"apt-get install $(list_packages | tr '\n' ' ' | sed 's/ $//')"* ]] ||
        fail "cmake does not show the build packages' apt-get line: $output"
}

@test "install: README's systemd units are examples/systemd's, and systemd-analyze verify accepts them" {
    local unit shown
    for unit in mnt-lt.mount mnt-lt.automount; do
        # README: the lines after "# UNIT" up to the next "# " line or the block's end
        shown=$(awk -v u="# $unit" '$0 == u { on = 1; next } on && (/^# / || /^```/) { exit } on' "$ZF_REPO/README.md")
        [[ -n $shown ]] || fail "README does not show $unit"
        assert_equal "$shown" "$(cat "$ZF_REPO/examples/systemd/$unit")"
    done
    command -v systemd-analyze >/dev/null || skip "no systemd-analyze"
    local d
    zf_mktemp d
    cp "$ZF_REPO"/examples/systemd/mnt-lt.* "$d/"
    run systemd-analyze verify "$d/mnt-lt.mount" "$d/mnt-lt.automount"
    assert_success
    assert_output ""
}
