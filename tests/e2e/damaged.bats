#!/usr/bin/env bats
# damaged.bats - zarrfs on damaged stores: damaged chunks, bad metadata,
# unsafe names and symlinks that leave the store.
#
# setup_file runs tests/damaged/gen.py, which writes every store correctly with
# zarr-python, damages it, and records the expected outcome of each case in
# manifest.json together with the expected bytes of the healthy data (from
# zarr-python values formatted by str(pandas.Timedelta), never from zarrfs).
# Each test mounts one store and runs tests/damaged/check.py on it; check.py
# prints every expectation that failed.  See gen.py for the outcomes:
#   chunk    listed, st_size available, reads touching the damaged chunk fail
#            with EIO, a log line names the chunk key, everything else reads
#            back right (including the healthy sibling array "ok")
#   meta     the array is left out with a log line naming it; "ok" still reads
#   name     a node whose name is unsafe as a file name is skipped, logged
#   outside  a symlink leaving the store is not followed
# As root, chmod 000 does not make a chunk unreadable: chunk_unreadable then
# checks that the real data shows instead of the EIO (see gen.py).

load helpers

setup_file() {
    zf_gen_setup DMG_ROOT zf-damaged "$ZF_REPO/tests/damaged/gen.py" corpus || return 1
    export DMG_DIR=$DMG_ROOT/corpus
    export DMG_CHECK=$ZF_REPO/tests/damaged/check.py
}

teardown_file() {
    [[ -n ${DMG_ROOT:-} && -d $DMG_ROOT ]] || return 0
    if awk -v d="$DMG_ROOT/" 'index($5, d) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
        echo "# $DMG_ROOT still has a mount under it; left in place" >&3
        return 1
    fi
    chmod -R u+rwX "$DMG_ROOT" 2>/dev/null || true
    rm -rf --one-file-system "$DMG_ROOT"
}

# dmg_check CASE [ASPECT]: mount the store of CASE and check it (check.py).
dmg_check() {
    local case=$1 aspect=${2:-main}
    [[ -d $DMG_DIR/stores/$case ]] || fail "no store for case $case (gen.py out of date?)"
    zf_mount "$DMG_DIR/stores/$case"
    run zf_t "$ZF_PYTHON" "$DMG_CHECK" "$DMG_DIR" "$case" "$ZF_MNT" "$ZF_LOG" "$aspect" --pid "$ZF_PID"
    if ((status != 0)); then
        fail "$output
--- daemon log (last 15 lines) ---
$(tail -n 15 "$ZF_LOG" | cat -v)"
    fi
}

@test "damaged: every case of the manifest has a test here" {
    run "$ZF_PYTHON" "$DMG_CHECK" "$DMG_DIR" --list
    assert_success
    local missing=() c
    for c in $output; do
        grep -qE "dmg_check $c( |\$)" "$BATS_TEST_FILENAME" || missing+=("$c")
    done
    ((${#missing[@]} == 0)) || fail "cases without a test: ${missing[*]}"
}

# --- damaged chunks ------------------------------------------------------------

@test "damaged chunk: chunk_truncated" {
    dmg_check chunk_truncated
}

@test "damaged chunk: chunk_garbage" {
    dmg_check chunk_garbage
}

@test "damaged chunk: chunk_empty" {
    dmg_check chunk_empty
}

@test "damaged chunk: chunk_short" {
    dmg_check chunk_short
}

@test "damaged chunk: chunk_long" {
    dmg_check chunk_long
}

@test "damaged chunk: chunk_bomb" {
    dmg_check chunk_bomb
}

@test "damaged chunk: chunk_bomb_fcs" {
    dmg_check chunk_bomb_fcs
}

@test "damaged chunk: chunk_directory" {
    dmg_check chunk_directory
}

@test "damaged chunk: chunk_dangling_symlink" {
    dmg_check chunk_dangling_symlink
}

@test "damaged chunk: chunk_unreadable" {
    dmg_check chunk_unreadable
}

@test "damaged chunk: chunk_outside_symlink" {
    dmg_check chunk_outside_symlink
}

@test "damaged chunk: chunk_crc_mismatch" {
    dmg_check chunk_crc_mismatch
}

@test "damaged chunk: chunk_raw_wrong_size" {
    dmg_check chunk_raw_wrong_size
}

@test "damaged chunk: chunk_raw_truncated" {
    dmg_check chunk_raw_truncated
}

@test "damaged chunk: v2_chunk_truncated" {
    dmg_check v2_chunk_truncated
}

@test "damaged chunk: v2_chunk_garbage" {
    dmg_check v2_chunk_garbage
}

# layout.h: a damaged chunk makes the reads that touch it fail, "all other bytes
# stay readable" -- including the lines right after it, which share an offset
# block (4096 elements) with the damaged chunk's last lines.
@test "damaged chunk: the page right after the damaged chunk reads back (v3)" {
    dmg_check chunk_garbage after
}

@test "damaged chunk: the page right after the damaged chunk reads back (v2)" {
    dmg_check v2_chunk_truncated after
}

# --- bad metadata --------------------------------------------------------------

@test "bad metadata: meta_invalid_json" {
    dmg_check meta_invalid_json
}

@test "bad metadata: meta_not_object" {
    dmg_check meta_not_object
}

@test "bad metadata: meta_binary" {
    dmg_check meta_binary
}

@test "bad metadata: meta_type_shape" {
    dmg_check meta_type_shape
}

@test "bad metadata: meta_type_zarr_format" {
    dmg_check meta_type_zarr_format
}

@test "bad metadata: meta_type_codecs" {
    dmg_check meta_type_codecs
}

@test "bad metadata: meta_type_chunk_shape" {
    dmg_check meta_type_chunk_shape
}

@test "bad metadata: meta_type_dimension_names" {
    dmg_check meta_type_dimension_names
}

@test "bad metadata: meta_type_unit" {
    dmg_check meta_type_unit
}

@test "bad metadata: meta_missing_shape" {
    dmg_check meta_missing_shape
}

@test "bad metadata: meta_missing_data_type" {
    dmg_check meta_missing_data_type
}

@test "bad metadata: meta_missing_chunk_grid" {
    dmg_check meta_missing_chunk_grid
}

@test "bad metadata: meta_missing_chunk_key_encoding" {
    dmg_check meta_missing_chunk_key_encoding
}

@test "bad metadata: meta_missing_fill_value" {
    dmg_check meta_missing_fill_value
}

@test "bad metadata: meta_missing_codecs" {
    dmg_check meta_missing_codecs
}

@test "bad metadata: meta_missing_zarr_format" {
    dmg_check meta_missing_zarr_format
}

@test "bad metadata: meta_missing_node_type" {
    dmg_check meta_missing_node_type
}

@test "bad metadata: meta_missing_unit" {
    dmg_check meta_missing_unit
}

@test "bad metadata: meta_negative_shape" {
    dmg_check meta_negative_shape
}

@test "bad metadata: meta_shape_overflow" {
    dmg_check meta_shape_overflow
}

@test "bad metadata: meta_shape_2p64" {
    dmg_check meta_shape_2p64
}

@test "bad metadata: meta_group_invalid" {
    dmg_check meta_group_invalid
}

@test "bad metadata: meta_huge_chunk" {
    dmg_check meta_huge_chunk
}

@test "bad metadata: meta_zero_chunk" {
    dmg_check meta_zero_chunk
}

@test "bad metadata: meta_rank_chunk" {
    dmg_check meta_rank_chunk
}

@test "bad metadata: meta_rank_dimension_names" {
    dmg_check meta_rank_dimension_names
}

@test "bad metadata: meta_rank_shape" {
    dmg_check meta_rank_shape
}

@test "bad metadata: meta_unknown_unit" {
    dmg_check meta_unknown_unit
}

@test "bad metadata: meta_scale_0" {
    dmg_check meta_scale_0
}

@test "bad metadata: meta_scale_2p31" {
    dmg_check meta_scale_2p31
}

@test "bad metadata: meta_scale_float" {
    dmg_check meta_scale_float
}

@test "bad metadata: meta_extra_config" {
    dmg_check meta_extra_config
}

@test "bad metadata: meta_fill_float" {
    dmg_check meta_fill_float
}

@test "bad metadata: meta_fill_nat_lower" {
    dmg_check meta_fill_nat_lower
}

@test "bad metadata: meta_fill_2p63" {
    dmg_check meta_fill_2p63
}

@test "bad metadata: meta_fill_bool" {
    dmg_check meta_fill_bool
}

@test "bad metadata: meta_unknown_codec" {
    dmg_check meta_unknown_codec
}

@test "bad metadata: meta_codec_order" {
    dmg_check meta_codec_order
}

@test "bad metadata: meta_unknown_dtype" {
    dmg_check meta_unknown_dtype
}

@test "bad metadata: meta_unknown_key_key_encoding" {
    dmg_check meta_unknown_key_key_encoding
}

@test "bad metadata: meta_must_understand" {
    dmg_check meta_must_understand
}

@test "bad metadata: meta_deeply_nested" {
    dmg_check meta_deeply_nested
}

@test "bad metadata: meta_20mb" {
    dmg_check meta_20mb
}

@test "bad metadata: v2_meta_invalid_json" {
    dmg_check v2_meta_invalid_json
}

@test "bad metadata: v2_meta_bad_dtype_unit" {
    dmg_check v2_meta_bad_dtype_unit
}

@test "bad metadata: v2_meta_shape_chunks_rank" {
    dmg_check v2_meta_shape_chunks_rank
}

@test "bad metadata: v2_meta_zero_chunk" {
    dmg_check v2_meta_zero_chunk
}

@test "bad metadata: v2_meta_filters" {
    dmg_check v2_meta_filters
}

@test "bad metadata: v2_meta_unknown_compressor" {
    dmg_check v2_meta_unknown_compressor
}

@test "bad metadata: v2_meta_fill_float" {
    dmg_check v2_meta_fill_float
}

@test "bad metadata: v2_meta_bad_zattrs" {
    dmg_check v2_meta_bad_zattrs
}

@test "bad metadata: v2_meta_zattrs_rank" {
    dmg_check v2_meta_zattrs_rank
}

# --- unsafe names ----------------------------------------------------------------

@test "unsafe name: name_newline is skipped" {
    dmg_check name_newline
}

@test "unsafe name: name_control is skipped" {
    dmg_check name_control
}

@test "unsafe name: name_escape is skipped" {
    dmg_check name_escape
}

@test "unsafe name: name_invalid_utf8 is skipped" {
    dmg_check name_invalid_utf8
}

@test "unsafe name: name_overlong_utf8 is skipped" {
    dmg_check name_overlong_utf8
}

@test "unsafe name: name_del is skipped" {
    dmg_check name_del
}

@test "unsafe name: name_newline leaves the log printable" {
    dmg_check name_newline logs
}

@test "unsafe name: name_control leaves the log printable" {
    dmg_check name_control logs
}

@test "unsafe name: name_escape leaves the log printable" {
    dmg_check name_escape logs
}

@test "unsafe name: name_invalid_utf8 leaves the log printable" {
    dmg_check name_invalid_utf8 logs
}

@test "unsafe name: name_overlong_utf8 leaves the log printable" {
    dmg_check name_overlong_utf8 logs
}

@test "unsafe name: name_del leaves the log printable" {
    dmg_check name_del logs
}

# --- symlinks leaving the store ------------------------------------------------

@test "outside symlink: outside_dir_symlink is not followed" {
    dmg_check outside_dir_symlink
}

@test "outside symlink: outside_meta_symlink is not followed" {
    dmg_check outside_meta_symlink
}
