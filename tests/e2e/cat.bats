#!/usr/bin/env bats
# cat.bats - zarrfs-cat as a command: --help, its exit statuses, and the
# progress line it shows on a terminal (under script(1), which gives it a
# pty as stderr) - and never otherwise; the bytes are the same either way.

load helpers

CAT=$ZF_BUILD_DIR/zarrfs-cat
LT=$ZF_REPO/examples/lead_times.zarr

# mk_big DIR N: a v3 array of N elements of one day each (no chunk stored:
# all fill), whose .txt is 16 * N bytes
mk_big() {
    mkdir -p "$1"
    cat >"$1/zarr.json" <<EOF
{"zarr_format": 3, "node_type": "array", "shape": [$2],
 "data_type": {"name": "numpy.timedelta64", "configuration": {"unit": "ns", "scale_factor": 1}},
 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [100000]}},
 "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
 "fill_value": 86400000000000, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
 "attributes": {}}
EOF
}

# cat_status ARGS...: run zarrfs-cat ARGS; ZF_RC, stdout in $ZF_OUT, stderr in $ZF_ERR
cat_status() {
    local work
    zf_mktemp work
    ZF_OUT=$work/out ZF_ERR=$work/err ZF_RC=0
    zf_t "$CAT" "$@" </dev/null >"$ZF_OUT" 2>"$ZF_ERR" || ZF_RC=$?
}

# on_tty CMD: run the shell command CMD under script(1) (stdin, stdout and
# stderr a pty); what the terminal showed goes to $TTY_LOG
on_tty() {
    command -v script >/dev/null || skip "no script(1)"
    local work
    zf_mktemp work
    TTY_LOG=$work/typescript
    zf_t script -qefc "$1" "$TTY_LOG" </dev/null >/dev/null 2>&1 || fail "script -c '$1' failed: $(cat -v "$TTY_LOG")"
}

# progress_lines: the progress lines the terminal of the last on_tty showed
progress_lines() { tr '\r' '\n' <"$TTY_LOG" | grep '^zarrfs-cat: [0-9]'; }

@test "cat: --help shows usage, the options and the exit statuses; exit 0" {
    cat_status --help
    [[ $ZF_RC == 0 ]] || fail "exit status $ZF_RC"
    grep -q '^usage: zarrfs-cat \[options\] STORE ARRAY_PATH$' "$ZF_OUT" || fail "no usage line: $(cat "$ZF_OUT")"
    grep -q '^exit status:$' "$ZF_OUT" || fail "no exit statuses: $(cat "$ZF_OUT")"
    local want
    for want in --csv --info '-o format=FORMAT' '-o nat=TEXT' --no-progress 0 1 2; do
        grep -qF -- "    $want " "$ZF_OUT" || fail "--help does not list $want: $(cat "$ZF_OUT")"
    done
    [[ ! -s $ZF_ERR ]] || fail "stderr: $(cat "$ZF_ERR")"
}

@test "cat: exit status 0 for a whole file, 1 for store or array errors, 2 for a wrong command line" {
    local d
    zf_mktemp d
    cat_status "$LT" forecast/lead_time
    [[ $ZF_RC == 0 && -s $ZF_OUT && ! -s $ZF_ERR ]] || fail "good run: status $ZF_RC, stderr $(cat "$ZF_ERR")"
    cat_status "$d/missing" forecast/lead_time
    [[ $ZF_RC == 1 ]] || fail "missing store: status $ZF_RC"
    assert_equal "$(wc -l <"$ZF_ERR")" 1
    cat_status "$LT" no/such/array
    [[ $ZF_RC == 1 ]] || fail "missing array: status $ZF_RC"
    assert_equal "$(cat "$ZF_ERR")" "zarrfs-cat: no/such/array: no array shown at that path (an array whose metadata cannot be used is named in a line above)"
    cp -r "$LT" "$d/lt" && printf 'garbage %064d' 0 >"$d/lt/forecast/lead_time/c/1"
    cat_status "$d/lt" forecast/lead_time
    [[ $ZF_RC == 1 ]] || fail "damaged chunk: status $ZF_RC"
    grep -q '^zarrfs-cat: corrupt data at byte [0-9]*$' "$ZF_ERR" || fail "damaged chunk: $(cat "$ZF_ERR")"
    for args in "--bogus $LT x" "$LT" "$LT a b c" "$LT x -o format=fortnight" "$LT x -o"; do
        # shellcheck disable=SC2086
        cat_status $args
        [[ $ZF_RC == 2 ]] || fail "zarrfs-cat $args: status $ZF_RC, want 2"
        assert_equal "$(wc -l <"$ZF_ERR")" 1
    done
}

@test "cat: warnings go to stderr as zarrfs logs them; the file is still whole, exit 0 (as zarrfs-cat(1) says)" {
    local d
    zf_mktemp d
    cp -r "$LT" "$d/lt" && echo '{' >"$d/lt/sample_offset/zarr.json"
    cat_status "$LT" particle_age.csv
    cp "$ZF_OUT" "$d/want"
    cat_status "$d/lt" particle_age.csv
    [[ $ZF_RC == 0 ]] || fail "status $ZF_RC: $(cat "$ZF_ERR")"
    cmp -s "$ZF_OUT" "$d/want" || fail "the output differs from the undamaged store's"
    grep -qF "zarrfs: warning: $d/lt/sample_offset: left out: invalid JSON" "$ZF_ERR" ||
        fail "no warning for the left-out array: $(cat "$ZF_ERR")"
}

@test "cat: on a terminal, a large output shows a progress line on stderr, then clears it; same bytes" {
    local d
    zf_mktemp d
    mk_big "$d/big" 1000000 # 16 MB of text
    # the reader waits before reading, so writing takes longer than one redraw
    on_tty "'$CAT' '$d/big' big | { sleep 1; cat >'$d/tty.out'; }"
    local shown
    shown=$(progress_lines) || fail "no progress line on the terminal: $(cat -v "$TTY_LOG")"
    grep -qE '^zarrfs-cat: [0-9.]+ (B|KiB|MiB) of 15\.3 MiB \([0-9]+%\), [0-9.]+ (B|KiB|MiB|GiB)/s, [0-9]+:[0-9]{2} left *$' <<<"$shown" ||
        fail "not a progress line: $shown"
    # drawn at once, then at most 4 times a second (writing took about 1 s)
    (($(wc -l <<<"$shown") <= 6)) || fail "redrawn too often: $shown"
    # cleared: the last thing written is a carriage return after blanks
    local tail_bytes
    local last
    last=$(sed -n '/zarrfs-cat: [0-9]/,$p' "$TTY_LOG" | sed '/^Script done/,$d' | tr -d '\n' | awk -F'\r' '{ print $NF "|" $(NF - 1) }')
    [[ $last =~ ^\|\ +$ ]] ||
        fail "the progress line was not cleared at the end (blanks then a carriage return): $(cat -v "$TTY_LOG")"
    "$CAT" "$d/big" big >"$d/plain.out" 2>"$d/plain.err" || fail "zarrfs-cat failed"
    zf_cmp "$d/plain.out" "$d/tty.out"
    assert_equal "$(wc -c <"$d/plain.out")" 16000000
}

@test "cat: no progress line when stderr is not a terminal, with --no-progress, or for a small output" {
    local d
    zf_mktemp d
    mk_big "$d/big" 1000000
    "$CAT" "$d/big" big 2>"$d/err" | { sleep 1; cat >"$d/out"; }
    [[ ! -s $d/err ]] || fail "stderr (not a terminal) got: $(cat -v "$d/err")"
    on_tty "'$CAT' --no-progress '$d/big' big | { sleep 1; cat >/dev/null; }"
    if progress_lines; then fail "--no-progress showed: $(cat -v "$TTY_LOG")"; fi
    mk_big "$d/small" 100000 # 1.6 MB
    on_tty "'$CAT' '$d/small' small | { sleep 1; cat >/dev/null; }"
    if progress_lines; then fail "a small output showed: $(cat -v "$TTY_LOG")"; fi
    # stdout on the terminal too (4.8 MB, over the 4 MiB bound): no line drawn over the text
    mk_big "$d/mid" 300000
    on_tty "'$CAT' '$d/mid' mid"
    grep -q '1 days 00:00:00' "$TTY_LOG" || fail "the text did not reach the terminal"
    if progress_lines; then fail "progress over text on the terminal: $(cat -v "$TTY_LOG")"; fi
}
