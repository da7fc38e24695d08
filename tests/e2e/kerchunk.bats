#!/usr/bin/env bats
# kerchunk.bats - kerchunk reference sets through FUSE (issue 27 section 2),
# lean, for the sanitizer and valgrind passes (tests/oracle/test_kerchunk.py
# compares every byte with xarray): a set served by nginx reads as the local
# one; a target on another host needs -o virtual=; damaged references (a
# missing target, a short range, an unauthorised location) are EIO with a
# log line; malformed JSON and a Parquet set fail the mount with a reason.

load remote

setup_file() {
    local root=${ZF_TEST_TMP:-${TMPDIR:-/tmp}}
    mkdir -p "$root"
    RM_DIR=$(mktemp -d "$root/zf-kc.XXXXXX")
    export RM_DIR KC=$RM_DIR/www/k
    mkdir -p "$KC"
    (cd "$KC" && PYTHONWARNINGS=ignore timeout -k 5 300 "$ZF_PYTHON" - <<'EOF') || return 1
import gzip, json
import numpy as np, pandas as pd, xarray as xr
from kerchunk.hdf import SingleHdf5ToZarr
step = (np.arange(4) * 3 * 3600 * 10**9).astype("timedelta64[ns]")
time = pd.date_range("2024-01-01", periods=8, freq="h")
lead = (np.arange(32).reshape(8, 4) * 60 * 10**9).astype("timedelta64[ns]")
lead[2, 1] = np.timedelta64("NaT")
xr.Dataset({"lead": (("time", "step"), lead)}, coords={"time": time, "step": step}).to_netcdf(
    "a.nc", engine="h5netcdf",
    encoding={"lead": {"zlib": True, "chunksizes": (4, 2), "units": "minutes", "dtype": "int32",
                       "_FillValue": -1}})
r = SingleHdf5ToZarr("a.nc", inline_threshold=0).translate()
json.dump(r, open("refs.json", "w"))
open("refs.json.gz", "wb").write(gzip.compress(json.dumps(r).encode()))
refs = r["refs"]
faults = {"missing": ["gone.nc", 0, 10], "short": ["a.nc", refs["lead/0.1"][1] + 10**7, 10],
          "outside": ["/etc/hostname", 0, 1]}
for name, ref in faults.items():  # one damaged chunk each
    json.dump({"version": 1, "refs": dict(refs, **{"lead/0.1": ref})}, open(f"{name}.json", "w"))
# a GRIB set: the step coordinate inline, a duration behind the grib filter
meta = {"chunks": [4], "compressor": None, "fill_value": None, "order": "C", "shape": [4],
        "zarr_format": 2}
json.dump({"version": 1, "refs": {
    ".zgroup": '{"zarr_format":2}',
    "step/.zarray": json.dumps(dict(meta, dtype="<f8", filters=None)),
    "step/.zattrs": json.dumps({"_ARRAY_DIMENSIONS": ["step"], "units": "hours"}),
    "step/0": "base64:AAAAAAAAAAAAAAAAAAAIQAAAAAAAABhAAAAAAAAAIkA=",
    "fp/.zarray": json.dumps(dict(meta, dtype="<i8", filters=[{"id": "grib", "var": "fp"}])),
    "fp/.zattrs": json.dumps({"_ARRAY_DIMENSIONS": ["step"], "units": "hours"}),
    "fp/0": ["a.grib2", 0, 100]}}, open("grib.json", "w"))
open("malformed.json", "w").write(json.dumps(r)[:-40])
EOF
    mkdir -p "$RM_DIR/pq"
    echo '{"metadata": {".zgroup": {"zarr_format": 2}}, "record_size": 100}' >"$RM_DIR/pq/.zmetadata"
    net_nginx "$RM_DIR/nginx" "$RM_DIR/www" || return 1
    export NGX_HTTP NGX_HTTPS NGX_CA NGX_LOG NGX_PID
    # the same set with absolute targets on the https server: another origin
    sed "s|\"a.nc\"|\"$NGX_HTTPS/k/a.nc\"|g" "$KC/refs.json" >"$KC/elsewhere.json"
}

teardown_file() { rm_teardown_file; }

# same_files A B: every .txt and .csv of mount A equals B's
same_files() {
    local f n=0
    for f in "$1"/*.txt "$1"/*.csv; do
        zf_cmp "$f" "$2/${f##*/}"
        n=$((n + 1))
    done
    ((n >= 6)) || fail "only $n files in $1"
}

@test "a reference set over http and https (gzip) reads as the local one" {
    zf_mount "$KC/refs.json"
    local here=$ZF_MNT
    [[ $(sed -n 2p "$here/step.txt") == "0 days 03:00:00" ]] || fail "step: $(cat "$here/step.txt")"
    [[ $(sed -n 3p "$here/lead.txt") == "0 days 00:02:00" ]] || fail "lead: $(head -n 3 "$here/lead.txt")"
    zf_mount "$NGX_HTTP/k/refs.json"
    same_files "$here" "$ZF_MNT"
    zf_mount "$NGX_HTTPS/k/refs.json.gz" -o "cafile=$NGX_CA"
    same_files "$here" "$ZF_MNT"
    grep -q "^reference_set: $NGX_HTTPS/k/refs.json.gz (kerchunk version 1)" "$ZF_MNT/lead.info" \
        || fail "$(cat "$ZF_MNT/lead.info")"
}

@test "a target on another host: EIO with the container to authorise, read with -o virtual=" {
    zf_mount "$NGX_HTTP/k/elsewhere.json" -o "cafile=$NGX_CA"
    run cat "$ZF_MNT/lead.txt"
    ((status != 0)) || fail "read without consent"
    grep -q "not authorised; to read it, add -o virtual=$NGX_HTTPS/" "$ZF_LOG" || fail "$(cat "$ZF_LOG")"
    zf_unmount
    zf_mount "$KC/refs.json"
    local here=$ZF_MNT
    zf_mount "$NGX_HTTP/k/elsewhere.json" -o "cafile=$NGX_CA,virtual=$NGX_HTTPS/k/"
    same_files "$here" "$ZF_MNT"
}

@test "damaged references: a missing target, a short range, an unauthorised location are EIO with a log line" {
    local fault why
    for fault in missing short outside; do
        case $fault in
            missing) why="k/gone.nc: the object does not exist" ;;
            short) why="k/a.nc: ends at byte [0-9]*, before the 10 bytes wanted" ;;
            outside) why="file:///etc/hostname: not authorised; to read it, add -o virtual=file:///etc/" ;;
        esac
        zf_mount "$KC/$fault.json"
        run zf_t cat "$ZF_MNT/lead.txt"
        ((status != 0)) || fail "$fault: the damaged chunk read"
        grep -q "chunk .*/$fault.json/lead/0.1: input/output error: .*$why" "$ZF_LOG" \
            || fail "$fault: $(cat "$ZF_LOG")"
        zf_t cat "$ZF_MNT/time.txt" >/dev/null || fail "$fault: an undamaged array failed"
        zf_unmount
    done
}

@test "GRIB: an array behind the grib filter is left out with a log line, its inline step shown" {
    zf_mount "$KC/grib.json"
    [[ $(cat "$ZF_MNT/step.txt") == $'0 days 00:00:00\n0 days 03:00:00\n0 days 06:00:00\n0 days 09:00:00' ]] \
        || fail "step: $(cat "$ZF_MNT/step.txt")"
    [[ ! -e $ZF_MNT/fp.txt ]] || fail "fp shown"
    grep -q 'grib.json/fp: left out: unsupported filter "grib"' "$ZF_LOG" || fail "$(cat "$ZF_LOG")"
}

@test "malformed JSON and a Parquet reference set fail the mount with a reason" {
    rm_mount_attempt "$KC/malformed.json"
    ((RM_MOUNTED == 0)) || fail "mounted"
    grep -q "malformed JSON" "$ZF_LOG" || fail "$(cat "$ZF_LOG")"
    rm_mount_attempt "$RM_DIR/pq"
    ((RM_MOUNTED == 0)) || fail "mounted"
    grep -q "Parquet reference set" "$ZF_LOG" || fail "$(cat "$ZF_LOG")"
}
