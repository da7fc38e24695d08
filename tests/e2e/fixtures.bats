#!/usr/bin/env bats
# fixtures.bats - the six zarr-python 3.1 stores in tests/data/zarr-python-3.1,
# mounted one at a time, checked against the Python oracle and against values
# worked out by hand from the fixtures' README.

load helpers

# Text of the 11 values written (README): 8760 h, 2 W, 3 D, 4 h, 5 m, 6 s,
# 7000 ms, 8000000 us, 9000000000 ns, 0, NaT (element 10: missing chunk c/2).
COMMON_TAIL='14 days 00:00:00
3 days 00:00:00
0 days 04:00:00
0 days 00:05:00
0 days 00:00:06
0 days 00:00:07
0 days 00:00:08
0 days 00:00:09
0 days 00:00:00
NaT'
# 8760 h = 365 days.  In [ps], 8760 h wrapped to -5357488147419103232 ps
# = -5357488.147419103232 s; floor to days: -63 days (-5443200 s), remainder
# 85711.852580896768 s = 23 h 48 min 31 s + 0.852580896768 s (a ps part, so 12
# fraction digits).
FIRST_DEFAULT='365 days 00:00:00'
FIRST_PS='-63 days +23:48:31.852580896768'

# fx_mount STORE_DIR: mount a fixture; sets NAME, TXT, CSV.
fx_mount() {
    FX=$ZF_FIXTURES/$1
    [[ -d $FX ]] || fail "fixture store missing: $FX"
    zf_mount "$FX"
    NAME=${1%.zarr}
    TXT=$ZF_MNT/$NAME.txt
    CSV=$ZF_MNT/$NAME.csv
}

# fx_expected: oracle text for the mounted fixture into $EXP/txt and $EXP/csv.
fx_expected() {
    zf_mktemp EXP
    zf_oracle txt "$FX" >"$EXP/txt" || fail "oracle failed on $FX"
    zf_oracle csv "$FX" >"$EXP/csv" || fail "oracle failed on $FX"
    [[ $(wc -l <"$EXP/txt") == 11 ]] || fail "oracle gave $(wc -l <"$EXP/txt") lines for $FX"
}

check_listing() {
    fx_mount "$1"
    run zf_ls "$ZF_MNT"
    assert_success
    assert_output "$NAME.csv
$NAME.txt"
    assert_equal "$(stat -c '%F %a' "$ZF_MNT")" "directory 555"
    assert_equal "$(stat -c '%F %a' "$TXT")" "regular file 444"
    assert_equal "$(stat -c '%F %a' "$CSV")" "regular file 444"
}

check_txt() {
    fx_mount "$1"
    fx_expected
    zf_t cat "$TXT" >"$EXP/got" || fail "cat $TXT failed"
    zf_cmp "$EXP/txt" "$EXP/got"
}

check_sizes() {
    fx_mount "$1"
    fx_expected
    local f
    for f in "$TXT" "$CSV"; do
        zf_t cat "$f" >"$EXP/got" || fail "cat $f failed"
        assert_equal "$(stat -c %s "$f")" "$(wc -c <"$EXP/got")"
    done
    assert_equal "$(stat -c %s "$TXT")" "$(wc -c <"$EXP/txt")"
    assert_equal "$(stat -c %s "$CSV")" "$(wc -c <"$EXP/csv")"
}

check_csv() {
    fx_mount "$1"
    fx_expected
    zf_t cat "$CSV" >"$EXP/got" || fail "cat $CSV failed"
    assert_equal "$(head -n 1 "$EXP/got")" "dim_0,$NAME"
    zf_cmp "$EXP/csv" "$EXP/got"
}

# check_literal STORE FIRST_LINE: the whole .txt and .csv against hand-made text.
check_literal() {
    fx_mount "$1"
    local want="$2
$COMMON_TAIL" got
    got=$(zf_t cat "$TXT"; echo x)
    assert_equal "${got%x}" "$want
"
    local i=0 line csv_want="dim_0,$NAME"
    while IFS= read -r line; do
        csv_want+=$'\n'"$i,$line"
        i=$((i + 1))
    done <<<"$want"
    got=$(zf_t cat "$CSV"; echo x)
    assert_equal "${got%x}" "$csv_want
"
}

@test "timedelta64[ns]: directory lists timedelta64[ns].txt and timedelta64[ns].csv, modes 0444 / 0555" {
    check_listing 'timedelta64[ns].zarr'
}

@test "timedelta64[ns]: .txt equals the oracle byte for byte" {
    check_txt 'timedelta64[ns].zarr'
}

@test "timedelta64[ns]: st_size of .txt and .csv equals the bytes read" {
    check_sizes 'timedelta64[ns].zarr'
}

@test "timedelta64[ns]: .csv has header dim_0,timedelta64[ns] and equals the oracle" {
    check_csv 'timedelta64[ns].zarr'
}

@test "timedelta64[ns]: .txt and .csv equal the values worked out by hand" {
    check_literal 'timedelta64[ns].zarr' "$FIRST_DEFAULT"
}

@test "timedelta64[us]: directory lists timedelta64[us].txt and timedelta64[us].csv, modes 0444 / 0555" {
    check_listing 'timedelta64[us].zarr'
}

@test "timedelta64[us]: .txt equals the oracle byte for byte" {
    check_txt 'timedelta64[us].zarr'
}

@test "timedelta64[us]: st_size of .txt and .csv equals the bytes read" {
    check_sizes 'timedelta64[us].zarr'
}

@test "timedelta64[us]: .csv has header dim_0,timedelta64[us] and equals the oracle" {
    check_csv 'timedelta64[us].zarr'
}

@test "timedelta64[us]: .txt and .csv equal the values worked out by hand" {
    check_literal 'timedelta64[us].zarr' "$FIRST_DEFAULT"
}

@test "timedelta64[10us]: directory lists timedelta64[10us].txt and timedelta64[10us].csv, modes 0444 / 0555" {
    check_listing 'timedelta64[10us].zarr'
}

@test "timedelta64[10us]: .txt equals the oracle byte for byte" {
    check_txt 'timedelta64[10us].zarr'
}

@test "timedelta64[10us]: st_size of .txt and .csv equals the bytes read" {
    check_sizes 'timedelta64[10us].zarr'
}

@test "timedelta64[10us]: .csv has header dim_0,timedelta64[10us] and equals the oracle" {
    check_csv 'timedelta64[10us].zarr'
}

@test "timedelta64[10us]: .txt and .csv equal the values worked out by hand" {
    check_literal 'timedelta64[10us].zarr' "$FIRST_DEFAULT"
}

@test "timedelta64[ms]: directory lists timedelta64[ms].txt and timedelta64[ms].csv, modes 0444 / 0555" {
    check_listing 'timedelta64[ms].zarr'
}

@test "timedelta64[ms]: .txt equals the oracle byte for byte" {
    check_txt 'timedelta64[ms].zarr'
}

@test "timedelta64[ms]: st_size of .txt and .csv equals the bytes read" {
    check_sizes 'timedelta64[ms].zarr'
}

@test "timedelta64[ms]: .csv has header dim_0,timedelta64[ms] and equals the oracle" {
    check_csv 'timedelta64[ms].zarr'
}

@test "timedelta64[ms]: .txt and .csv equal the values worked out by hand" {
    check_literal 'timedelta64[ms].zarr' "$FIRST_DEFAULT"
}

@test "timedelta64[10ms]: directory lists timedelta64[10ms].txt and timedelta64[10ms].csv, modes 0444 / 0555" {
    check_listing 'timedelta64[10ms].zarr'
}

@test "timedelta64[10ms]: .txt equals the oracle byte for byte" {
    check_txt 'timedelta64[10ms].zarr'
}

@test "timedelta64[10ms]: st_size of .txt and .csv equals the bytes read" {
    check_sizes 'timedelta64[10ms].zarr'
}

@test "timedelta64[10ms]: .csv has header dim_0,timedelta64[10ms] and equals the oracle" {
    check_csv 'timedelta64[10ms].zarr'
}

@test "timedelta64[10ms]: .txt and .csv equal the values worked out by hand" {
    check_literal 'timedelta64[10ms].zarr' "$FIRST_DEFAULT"
}

@test "timedelta64[ps]: directory lists timedelta64[ps].txt and timedelta64[ps].csv, modes 0444 / 0555" {
    check_listing 'timedelta64[ps].zarr'
}

@test "timedelta64[ps]: .txt equals the oracle byte for byte" {
    check_txt 'timedelta64[ps].zarr'
}

@test "timedelta64[ps]: st_size of .txt and .csv equals the bytes read" {
    check_sizes 'timedelta64[ps].zarr'
}

@test "timedelta64[ps]: .csv has header dim_0,timedelta64[ps] and equals the oracle" {
    check_csv 'timedelta64[ps].zarr'
}

@test "timedelta64[ps]: .txt and .csv equal the values worked out by hand" {
    check_literal 'timedelta64[ps].zarr' "$FIRST_PS"
}

@test "timedelta64[ns]: spot lines (1: 365 days, 11: NaT) via sed/awk" {
    fx_mount 'timedelta64[ns].zarr'
    assert_equal "$(zf_t sed -n 1p "$TXT")" "365 days 00:00:00"
    assert_equal "$(zf_t sed -n 11p "$TXT")" "NaT"
    assert_equal "$(zf_t awk 'END { print NR }' "$TXT")" "11"
    assert_equal "$(zf_t sed -n 12p "$CSV")" "10,NaT"
    assert_equal "$(zf_t sed -n 2p "$CSV")" "0,365 days 00:00:00"
}

@test "timedelta64[ps]: line 1 is the wrapped value, by hand and by the oracle" {
    run zf_oracle value -5357488147419103232 ps
    assert_success
    assert_output "$FIRST_PS"
    fx_mount 'timedelta64[ps].zarr'
    assert_equal "$(zf_t head -n 1 "$TXT")" "$FIRST_PS"
    assert_equal "$(zf_t sed -n 2p "$CSV")" "0,$FIRST_PS"
}

@test "the oracle reads the six fixtures and passes its self-test" {
    run zf_oracle selftest
    assert_success
    local s
    for s in "$ZF_FIXTURES"/*.zarr; do
        run zf_oracle txt "$s"
        assert_success
        [[ ${#lines[@]} == 11 ]] || fail "oracle: ${#lines[@]} lines for $s"
        assert_line --index 10 "NaT"
    done
}
