#!/usr/bin/env bats
# icechunk.bats - local Icechunk repositories through FUSE (issue 26), for
# the sanitizer and valgrind passes (the oracle suite, tests/oracle/
# test_icechunk.py, covers every state and fault): a spec 2 repository's
# states, a spec 1 branch that moves while mounted (the notifier swaps in
# the new snapshot; an open file keeps its version; a tag mount stays), and
# virtual chunks without consent.

load helpers

SPEC2=$ZF_REPO/tests/data/icechunk/spec2

setup_file() {
    local root=${ZF_TEST_TMP:-${TMPDIR:-/tmp}}
    mkdir -p "$root"
    IC_DIR=$(mktemp -d "$root/zf-icl.XXXXXX")
    export IC_DIR
    RUST_LOG=error timeout -k 5 600 "$ZF_PYTHON" "$ZF_REPO/tests/icechunk/gen_spec1.py" "$IC_DIR/s1" \
        >"$IC_DIR/gen1.log" 2>&1 || { tail -n 30 "$IC_DIR/gen1.log" >&2; return 1; }
}

teardown_file() { rm -rf --one-file-system "${IC_DIR:?}"; }

# check LABEL EXPECTED: the mount is that state of expected.json
check() {
    zf_t "$ZF_PYTHON" "$ZF_REPO/tests/icechunk/check_mount.py" "$ZF_MNT" "$2" "$1" \
        || fail "$1 differs; log: $(cat "$ZF_LOG")"
}

@test "a local spec 2 repository: main, a tag and a second branch" {
    zf_mount "$SPEC2/forecast.icechunk" -o nat=
    check main "$SPEC2/expected.json"
    zf_unmount
    zf_mount "$SPEC2/forecast.icechunk" -o nat=,tag=v1
    check v1 "$SPEC2/expected.json"
    zf_unmount
    zf_mount "$SPEC2/forecast.icechunk" -o nat=,branch=dev
    check dev "$SPEC2/expected.json"
}

@test "a branch that moves while mounted is followed; an open file and a tag keep theirs" {
    local repo=$IC_DIR/s1/forecast1.icechunk before after
    zf_mount "$repo" -o nat=,timeout=0.2
    local mnt=$ZF_MNT log=$ZF_LOG
    zf_mount "$repo" -o nat=,timeout=0.2,tag=v1
    local tagmnt=$ZF_MNT
    before=$(zf_t cat "$mnt/init_time.txt") || fail "first read"
    exec 5<"$mnt/init_time.txt"
    RUST_LOG=error zf_t "$ZF_PYTHON" -c 'import os, sys, warnings; warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[2])
import icechunk as ic
from icdata import forecast
repo = ic.Repository.open(ic.local_filesystem_storage(sys.argv[1]))
s = repo.writable_session("main")
forecast("2025-01-04", 1, 99).to_zarr(s.store, append_dim="init_time", consolidated=False, safe_chunks=False)
s.commit("one more"); sys.stdout.flush(); os._exit(0)' "$repo" "$ZF_REPO/tests/icechunk" >/dev/null 2>&1 \
        || fail "the commit failed"
    local deadline=$((SECONDS + 30))
    while after=$(zf_t cat "$mnt/init_time.txt") && [[ $after == "$before" ]]; do
        ((SECONDS < deadline)) || fail "the mount did not follow the branch; log: $(cat "$log")"
        sleep 0.2
    done
    (($(wc -l <<<"$after") == $(wc -l <<<"$before") + 1)) || fail "not one more line: $after"
    [[ $after == "$before"* ]] || fail "the earlier lines changed"
    [[ $(cat <&5) == "$before" ]] || fail "the open file did not keep its version"
    exec 5<&-
    check v1 "$IC_DIR/s1/expected.json" init_time
    [[ $(zf_t cat "$tagmnt/init_time.txt") != "$after" ]] || fail "the tag mount moved"
}

@test "virtual chunks without consent: EIO, one log line per array, .info names the container" {
    zf_mount "$IC_DIR/s1/virtual1.icechunk" -o nat=
    run cat "$ZF_MNT/lead.txt"
    ((status != 0)) || fail "read without consent"
    run cat "$ZF_MNT/time.txt"
    ((status != 0)) || fail "read without consent"
    (($(grep -c 'not authorised; to read it, add -o virtual=file://' "$ZF_LOG") == 2)) \
        || fail "not one line per array: $(cat "$ZF_LOG")"
    grep -q "virtual_locations: file://$IC_DIR/s1/virt/ (not authorised" "$ZF_MNT/lead.info" \
        || fail "$(cat "$ZF_MNT/lead.info")"
    zf_unmount
    zf_mount "$IC_DIR/s1/virtual1.icechunk" -o "nat=,virtual=file://$IC_DIR/s1/virt/"
    check virtual1 "$IC_DIR/s1/expected.json"
}
