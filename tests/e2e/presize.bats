#!/usr/bin/env bats
# presize.bats - when a request sizes a file whose array is not sized yet,
# the other arrays of its directory are sized in the background (-o
# presize, fs/presize.c): their .info tells their sizes without anyone
# asking, within the budget, once per directory, never in another
# directory, and not at all with presize=0.  The remote side (a stalled
# background pass and the unmount) is in remote_budgets.bats.

load helpers

LT=$ZF_REPO/examples/lead_times.zarr
# runs/: init_time (3 values, 24 bytes), lead (12, 96), step (4, 32), valid_time (12, 96)

setup() {
    zf_mktemp T
    export XDG_CACHE_HOME=$T/xdg # persisted indexes of this test only
}

# sized NAME: NAME.info says its .txt's size (its array is sized)
sized() { grep -q '^txt_bytes: ' "$ZF_MNT/$1.info"; }

# wait_sized NAME...: each of NAME is sized within 20 s (without a stat of it)
wait_sized() {
    local n deadline=$((SECONDS + 20))
    for n in "$@"; do
        until sized "$n"; do
            ((SECONDS < deadline)) || fail "$n was not sized ahead: $(cat "$ZF_MNT/$n.info")"
            sleep 0.1
        done
    done
}

@test "presize: a stat of runs/step.txt sizes runs' other arrays in the background, exactly as their own stat does" {
    zf_mount "$LT"
    for n in init_time lead valid_time step; do
        ! sized "runs/$n" || fail "runs/$n is sized before any request: $(cat "$ZF_MNT/runs/$n.info")"
    done
    zf_t stat "$ZF_MNT/runs/step.txt" >/dev/null
    wait_sized runs/init_time runs/lead runs/valid_time
    ! sized particle_age || fail "an array of another directory was sized: $(cat "$ZF_MNT/particle_age.info")"
    ! sized sample_offset || fail "an array of another directory was sized"
    local n want
    for n in init_time lead valid_time; do
        want=$(zf_t cat "$ZF_MNT/runs/$n.txt" | wc -c)
        [[ $(stat -c %s "$ZF_MNT/runs/$n.txt") == "$want" ]] || fail "runs/$n.txt: size $(stat -c %s "$ZF_MNT/runs/$n.txt"), text $want bytes"
        grep -qx "txt_bytes: $want" "$ZF_MNT/runs/$n.info" || fail "runs/$n.info: $(cat "$ZF_MNT/runs/$n.info")"
    done
    [[ ! -s $ZF_LOG ]] || fail "log lines: $(cat "$ZF_LOG")"
}

@test "presize: a first read (no stat) sizes the directory's other arrays too" {
    zf_mount "$LT"
    zf_t dd if="$ZF_MNT/runs/lead.txt" of=/dev/null bs=4k count=1 status=none
    wait_sized runs/init_time runs/step runs/valid_time
}

@test "presize: -o presize=0 sizes each array only when asked" {
    zf_mount "$LT" -o presize=0
    zf_t stat "$ZF_MNT/runs/step.txt" >/dev/null
    sleep 1
    local n
    for n in init_time lead valid_time; do
        ! sized "runs/$n" || fail "runs/$n was sized with presize=0"
    done
}

@test "presize: only the arrays whose values fit the budget, in name order: presize=100 sizes init_time (24 bytes), not lead or valid_time (96 each: 76 left)" {
    zf_mount "$LT" -o presize=100
    zf_t stat "$ZF_MNT/runs/step.txt" >/dev/null
    wait_sized runs/init_time
    sleep 1
    ! sized runs/lead || fail "runs/lead was sized beyond the budget"
    ! sized runs/valid_time || fail "runs/valid_time was sized beyond the budget"
    zf_t stat "$ZF_MNT/runs/lead.txt" >/dev/null # not sized ahead a second time in runs/
    sleep 1
    ! sized runs/valid_time || fail "runs/ was sized ahead twice"
}

# faults FILE: the rules of tests/faultfs from now on (FILE: none)
faults() {
    printf '%s\n' "$1" >"$T/faultfs.conf.tmp"
    mv -f "$T/faultfs.conf.tmp" "$T/faultfs.conf"
    touch -d "@$(date +%s.%N)" "$T/faultfs.conf"
}

@test "presize: an array sized ahead whose chunk cannot be read says nothing and keeps nothing; its own stat fails with EIO and one log line; once readable, it is exact" {
    cp -r "$LT" "$T/lt.zarr"
    local shim=$ZF_BUILD_DIR/zf_faultfs.so n=0 deadline=$((SECONDS + 20))
    [[ -f $shim ]] || fail "no $shim (build first)"
    faults "read EIO */lt.zarr/runs/lead/c/0/0"
    LD_PRELOAD=$shim ZF_FAULTFS_CONF=$T/faultfs.conf \
        ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 zf_mount "$T/lt.zarr"
    zf_t stat "$ZF_MNT/runs/step.txt" >/dev/null
    wait_sized runs/init_time runs/valid_time # (their passes started with lead's)
    sleep 0.5
    ! sized runs/lead || fail "runs/lead sized though its chunk cannot be read"
    [[ ! -s $ZF_LOG ]] || fail "a pass for no one logged: $(cat "$ZF_LOG")"
    ! zf_t stat "$ZF_MNT/runs/lead.txt" 2>"$T/err" || fail "runs/lead.txt has a size"
    grep -q 'Input/output error' "$T/err" || fail "not EIO: $(cat "$T/err")"
    n=$(grep -c 'runs/lead/c/0/0' "$ZF_LOG")
    [[ $n == 1 ]] || fail "$n log lines name the chunk (want 1): $(cat "$ZF_LOG")"
    faults ""
    local want
    want=$(zf_t cat "$ZF_MNT/runs/lead.txt" | wc -c)
    [[ $want -gt 0 && $(stat -c %s "$ZF_MNT/runs/lead.txt") == "$want" ]] \
        || fail "runs/lead.txt: size $(stat -c %s "$ZF_MNT/runs/lead.txt"), text $want bytes"
    zf_t cmp "$ZF_MNT/runs/lead.txt" <(zf_t "$ZF_BUILD_DIR/zarrfs-cat" "$LT" runs/lead) \
        || fail "runs/lead.txt differs from zarrfs-cat's"
}

@test "presize: an invalid value is refused with a one-line error" {
    mkdir "$T/mnt"
    zf_run_cli -f -o presize=lots "$LT" "$T/mnt"
    [[ $ZF_RC == 1 ]] || fail "status $ZF_RC: $(cat "$ZF_ERR")"
    [[ $(wc -l <"$ZF_ERR") == 1 ]] && grep -q "invalid presize" "$ZF_ERR" || fail "$(cat "$ZF_ERR")"
}
