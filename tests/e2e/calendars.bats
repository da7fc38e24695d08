#!/usr/bin/env bats
# calendars.bats - CF time stamps in other calendars (issue 27): a noleap
# climate axis and a standard-calendar scenario axis past 2262 (cftime
# objects for every value), mounted and read by several readers at once
# right after mounting (so that sizing, the switch to cftime objects, the
# labels of the .csv and a .info run concurrently: the TSan and valgrind
# passes run this file), every byte against xarray with cftime
# (calendars_gen.py).

load helpers

setup_file() {
    zf_gen_setup CAL_ROOT zf-calendars "$ZF_REPO/tests/e2e/calendars_gen.py"
}

teardown_file() {
    [[ -n ${CAL_ROOT:-} && -d $CAL_ROOT ]] && rm -rf "$CAL_ROOT"
}

@test "calendars: noleap and a standard axis past 2262, read concurrently, as xarray with cftime" {
    # fresh mounts, each with an empty index cache: the interleavings differ
    # from one to the next (scen's size pass and valid.csv's labels both
    # switch scen to cftime objects, whichever meets a value first)
    local f round rounds=4 pids
    [[ ${ZF_VALGRIND:-0} == 0 ]] || rounds=2
    for ((round = 0; round < rounds; round++)); do
        XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg.$round zf_mount "$CAL_ROOT/store.zarr"
        pids=()
        for f in valid.csv tas_time.csv scen.txt valid.txt time.txt tas_time.txt; do
            zf_t cat "$ZF_MNT/$f" >"$CAL_ROOT/got.$f" &
            pids+=($!)
        done
        zf_t cat "$ZF_MNT/scen.info" >/dev/null & # built while scen may switch to cftime objects
        pids+=($!)
        for f in "${pids[@]}"; do wait "$f" || fail "round $round: a reader failed; log: $(cat "$ZF_LOG")"; done
        for f in valid.csv tas_time.csv scen.txt valid.txt time.txt tas_time.txt; do
            cmp "$CAL_ROOT/got.$f" "$CAL_ROOT/$f" ||
                fail "round $round: $f differs from xarray's: $(diff "$CAL_ROOT/got.$f" "$CAL_ROOT/$f" | head -n 6)
log: $(cat "$ZF_LOG")"
            assert_equal "$(stat -c %s "$ZF_MNT/$f")" "$(stat -c %s "$CAL_ROOT/$f")"
        done
    done
    grep -q '^calendar: noleap (cftime.DatetimeNoLeap objects' "$ZF_MNT/tas_time.info" ||
        fail "$(cat "$ZF_MNT/tas_time.info")"
    run head -c 40 "$ZF_MNT/scen.txt"
    assert_output "1850-01-01 00:00:00
1850-01-31 00:00:00"
    [[ ! -s $ZF_LOG ]] || fail "log: $(cat "$ZF_LOG")"
}

@test "calendars: a second mount (the persisted index of the cftime decoding) gives the same bytes" {
    zf_mount "$CAL_ROOT/store.zarr"
    zf_t cat "$ZF_MNT/scen.txt" >/dev/null
    zf_unmount
    zf_mount "$CAL_ROOT/store.zarr"
    zf_t cat "$ZF_MNT/scen.txt" | cmp - "$CAL_ROOT/scen.txt" || fail "scen.txt differs"
    zf_t "$ZF_BUILD_DIR/zarrfs-cat" "$CAL_ROOT/store.zarr" scen -o format=raw | tail -n 1 |
        grep -qx '14230080000000000' || fail "raw: microseconds since 1850-01-01"
}
