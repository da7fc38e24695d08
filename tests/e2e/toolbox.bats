#!/usr/bin/env bats
# toolbox.bats - zarrfs as a Linux tool: --help and the man pages list the
# same views and options (with defaults), -V names zarrfs first, write
# options are refused, mount(8)/fstab options are accepted, the man pages
# render cleanly, and cmake --install puts a working `man zarrfs` in a prefix.

load helpers

NS=timedelta64[ns]
MAN_DIR=$ZF_BUILD_DIR/doc

# help_rows: zarrfs --help ($ZF_OUT) with each option row on one line
# (continuation lines joined), rows only: "SPELLING<TAB>DESCRIPTION".
help_rows() {
    awk '
        /^    [^ ]/ { if (row != "") print row; sub(/^    /, ""); s = $0
                      i = index(s, "  "); if (i) row = substr(s, 1, i - 1) "\t" substr(s, i)
                      else row = s "\t"; gsub(/\t +/, "\t", row); next }
        /^                          [^ ]/ { sub(/^ +/, ""); row = row (row ~ /\t$/ ? "" : " ") $0; next }
        { if (row != "") print row; row = "" }
        END { if (row != "") print row }' "$1"
}

# man_tags PAGE SECTION: the tags of the tagged paragraphs (.TP) in SECTION
# of the man page source PAGE (roff), as plain text, one per line.
man_tags() {
    awk -v sect="$2" '
        /^\.SH / { s = $0; sub(/^\.SH +/, "", s); gsub(/"/, "", s); insect = (s == sect); next }
        insect && prev == ".TP" { print }
        { prev = $0 }' "$1" | sed -E 's/\\f[BIR]//g; s/\\-/-/g; s/\\&//g'
}

@test "toolbox: --help lists the three views and every zarrfs option with its default" {
    zf_run_cli --help
    [[ $ZF_RC == 0 ]] || fail "exit status $ZF_RC: $(cat "$ZF_ERR")"
    local rows want
    rows=$(help_rows "$ZF_OUT")
    for want in NAME.txt NAME.csv NAME.info; do
        grep -q "^$want	." <<<"$rows" || fail "--help has no row for $want:
$rows"
    done
    # each option with its default, as documented in the README
    while IFS='|' read -r spelling def; do
        grep -qF -- "$spelling	" <<<"$rows" || fail "--help has no row for $spelling:
$rows"
        grep -F -- "$spelling	" <<<"$rows" | grep -qF -- "(default: $def)" ||
            fail "--help row of $spelling does not give the default $def: $(grep -F -- "$spelling	" <<<"$rows")"
    done <<'EOF'
-o format=FORMAT|pandas
-o nat=TEXT|NaT
-o cache_size=BYTES|256M
-o read_ahead=BYTES|4M
-o timeout=SECONDS|1, 60 for a remote store
-o follow_symlinks|off
-o connections=N|16
-o retries=N|8
-o timeout_ms=MS|10000
-o cafile=FILE|the system's
-o endpoint=URL|AWS, storage.googleapis.com, or ACCOUNT.blob.core.windows.net
-o region=NAME|AWS_REGION, else us-east-1
-o anonymous|off
-o no_index_cache|off
-o log=FILE|stderr with -f, else syslog
-o log_level=LEVEL|warn
-f|off
-d|off
-s|off
-o max_threads=N|10
-o ro|on
EOF
    # no line is wider than 80 columns but libfuse's own
    local wide
    wide=$(sed '/^FUSE options:/,$d' "$ZF_OUT" | awk 'length($0) > 79')
    [[ -z $wide ]] || fail "--help lines wider than 79 columns:
$wide"
}

@test "toolbox: --help and the man pages name every kind of store and array, and the signals" {
    zf_run_cli --help
    local want
    for want in "s3://BUCKET/PREFIX" "gs://BUCKET/PREFIX" "https://" "numpy.timedelta64" \
        "numpy.datetime64" "CF time" "SIGHUP"; do
        grep -qF -- "$want" "$ZF_OUT" || fail "--help does not mention $want: $(cat "$ZF_OUT")"
    done
    run env MANWIDTH=200 man -l "$MAN_DIR/zarrfs.1"
    assert_success
    assert_output --partial "zarrfs - mount the duration and time-stamp arrays of a Zarr store as text files"
    assert_output --partial "SIGINT, SIGTERM and SIGHUP unmount"
    assert_output --partial "for a CF-encoded array, the decoded count"
    run env MANWIDTH=200 man -l "$MAN_DIR/zarrfs-cat.1"
    assert_success
    assert_output --partial "for one file of the duration or time-stamp array"
    assert_output --partial "(its label columns, then its value)"
    assert_output --partial "standard error gets the warnings"
}

@test "toolbox: the man page lists exactly the views and options of --help" {
    zf_run_cli --help
    local from_help from_man
    from_help=$(help_rows "$ZF_OUT" | cut -f1 | sed '/^NAME\./!{/^-/!d}' | LC_ALL=C sort)
    from_man=$( { man_tags "$MAN_DIR/zarrfs.1" "DESCRIPTION"; man_tags "$MAN_DIR/zarrfs.1" "OPTIONS"; } |
        LC_ALL=C sort)
    [[ -n $from_man ]] || fail "no tagged paragraphs found in zarrfs(1)"
    # libfuse's own options are listed by --help only (under "FUSE options:")
    from_help=$(comm -23 <(echo "$from_help") <(sed -n '/^FUSE options:/,$p' "$ZF_OUT" |
        sed -nE 's/^    (-o [a-z_]+).*/\1/p' | LC_ALL=C sort))
    [[ $from_help == "$from_man" ]] || fail "--help and zarrfs(1) differ (< help, > man):
$(diff <(echo "$from_help") <(echo "$from_man"))"
}

@test "toolbox: zarrfs-cat --help and zarrfs-cat(1) list the same options and exit statuses" {
    local out
    out=$(zf_t "$ZF_BUILD_DIR/zarrfs-cat" --help) || fail "zarrfs-cat --help failed"
    local from_help from_man
    from_help=$(help_rows <(echo "$out") | cut -f1 | LC_ALL=C sort)
    from_man=$( { man_tags "$MAN_DIR/zarrfs-cat.1" "OPTIONS"; man_tags "$MAN_DIR/zarrfs-cat.1" "EXIT STATUS"; } |
        LC_ALL=C sort)
    [[ -n $from_man && $from_help == "$from_man" ]] || fail "zarrfs-cat --help and zarrfs-cat(1) differ (< help, > man):
$(diff <(echo "$from_help") <(echo "$from_man"))"
    for want in --csv --info '-o format=FORMAT' '-o nat=TEXT' --no-progress 0 1 2; do
        grep -qx -- "$want" <<<"$from_help" || fail "zarrfs-cat --help lacks $want"
    done
}

@test "toolbox: -V prints zarrfs's own version on the first line" {
    zf_run_cli -V
    [[ $ZF_RC == 0 ]] || fail "exit status $ZF_RC"
    [[ $(head -n 1 "$ZF_OUT") =~ ^zarrfs\ version\ [0-9]+\.[0-9]+\.[0-9]+$ ]] ||
        fail "first line is not zarrfs's version:
$(cat "$ZF_OUT")"
    grep -q 'fusermount3 version' "$ZF_OUT" || fail "no libfuse version after it: $(cat "$ZF_OUT")"
}

# refused OPTS: zarrfs -f -o OPTS STORE MNT exits 1 with one line naming the
# first write option, and mounts nothing
refused() {
    local mnt
    zf_mktemp mnt
    zf_run_cli -f -o "$1" "$ZF_FIXTURES/$NS.zarr" "$mnt"
    if zf_is_mounted "$mnt"; then fusermount3 -uz "$mnt" || true; fail "mounted with -o $1"; fi
    [[ $ZF_RC == 1 ]] || fail "-o $1: exit status $ZF_RC, want 1; stderr: $(cat "$ZF_ERR")"
    local n
    n=$(grep -cv '^==' "$ZF_ERR")
    [[ $n == 1 ]] || fail "-o $1: want one line on stderr, got $n: $(cat "$ZF_ERR")"
    grep -q "read-only" "$ZF_ERR" || fail "-o $1: the line does not say why: $(cat "$ZF_ERR")"
}

@test "toolbox: -o rw and other write options are refused: exit 1, one line, nothing mounted" {
    refused rw
    refused rw,dev,suid          # what mount(8) passes without -o ro
    refused format=iso,rw
    refused writeback_cache
}

@test "toolbox: options of mount(8) and fstab lines are accepted and ignored" {
    zf_mount "$ZF_FIXTURES/$NS.zarr" \
        -o ro,dev,suid,noexec,nosuid,nodev,noauto,auto,nofail,user,nouser,users,_netdev,defaults \
        -o x-systemd.automount,x-systemd.device-timeout=10,comment=hello,format=iso
    assert_equal "$(zf_t head -n 1 "$ZF_MNT/$NS.txt")" "P365D"
    if grep -v '^==' "$ZF_LOG" | grep -q .; then fail "zarrfs logged: $(cat "$ZF_LOG")"; fi
}

@test "toolbox: the man pages render without warnings (man --warnings) and lexgrog reads their NAME" {
    command -v man >/dev/null && command -v lexgrog >/dev/null || skip "man-db is not installed"
    local page err out
    for page in zarrfs zarrfs-cat; do
        for f in "$MAN_DIR/$page.1" "$MAN_DIR/$page.1.gz"; do
            [[ -f $f ]] || fail "$f was not built"
            err=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$f" 2>&1 >/dev/null)
            [[ -z $err ]] || fail "man --warnings -l $f:
$err"
            out=$(lexgrog "$f") || fail "lexgrog $f failed: $out"
            [[ $out == *": \"$page - "* ]] || fail "lexgrog $f: $out"
        done
    done
    # every line fits 80 columns
    out=$(MANWIDTH=80 man -l "$MAN_DIR/zarrfs.1" 2>/dev/null | awk 'length($0) > 80')
    [[ -z $out ]] || fail "zarrfs(1) lines wider than 80 columns:
$out"
}

@test "toolbox: cmake --install into a prefix: both programs, and man zarrfs works with MANPATH" {
    command -v man >/dev/null || skip "man-db is not installed"
    local d
    zf_mktemp d
    zf_t cmake --install "$ZF_BUILD_DIR" --prefix "$d/prefix" >"$d/install.log" 2>&1 ||
        fail "cmake --install failed: $(cat "$d/install.log")"
    [[ -x $d/prefix/bin/zarrfs && -x $d/prefix/bin/zarrfs-cat ]] || fail "programs not installed: $(cat "$d/install.log")"
    [[ -f $d/prefix/share/man/man1/zarrfs.1.gz && -f $d/prefix/share/man/man1/zarrfs-cat.1.gz ]] ||
        fail "man pages not installed: $(cat "$d/install.log")"
    assert_equal "$(MANPATH=$d/prefix/share/man man -w zarrfs)" "$d/prefix/share/man/man1/zarrfs.1.gz"
    run env MANPATH="$d/prefix/share/man" MANWIDTH=80 man zarrfs-cat
    assert_success
    assert_output --partial "zarrfs-cat - write the text zarrfs shows"
    run env MANPATH="$d/prefix/share/man" MANWIDTH=80 man zarrfs
    assert_success
    assert_output --partial "mount -t fuse.zarrfs"
    [[ $("$d/prefix/bin/zarrfs" -V | head -n 1) == "zarrfs version "* ]] || fail "the installed zarrfs does not run"
}
