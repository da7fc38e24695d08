#!/usr/bin/env bats
# bench/delaylink.c, the emulated network link of scripts/bench's remote rows
# (kernels without sch_netem): bytes pass unchanged, each direction is
# delayed, a new connection pays a handshake round trip, and the rate is
# shared by all connections.  Timing checks are lower bounds (a loaded
# machine only makes things slower), with a generous upper bound against a
# stall.

load helpers

setup() {
    T=$(mktemp -d "${ZF_TEST_TMP:-${TMPDIR:-/tmp}}/zf-link.XXXXXX")
    gcc -std=c11 -O2 -Wall -Wextra -Werror "$ZF_REPO/bench/delaylink.c" -o "$T/delaylink"
    head -c 4000000 /dev/urandom >"$T/blob"
    # an HTTP server on a port the OS picks, stopping by itself after 120 s
    python3 - "$T" >"$T/server.log" 2>&1 <<'EOF' &
import functools, http.server, os, sys, threading
d = sys.argv[1]
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=d)
http.server.ThreadingHTTPServer.allow_reuse_address = True
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
with open(os.path.join(d, "up.tmp"), "w") as f:
    f.write(str(s.server_address[1]))
os.rename(os.path.join(d, "up.tmp"), os.path.join(d, "up"))
threading.Timer(120, s.shutdown).start()
s.serve_forever()
EOF
    SRV=$!
    wait_file "$T/up"
    # 10 ms each way, 100 Mbit/s: 4 MB take >= 0.32 s on the wire
    "$T/delaylink" "$T/port" "$(<"$T/up")" 10 100 120 2>"$T/link.log" &
    LNK=$!
    wait_file "$T/port"
    URL=http://127.0.0.1:$(<"$T/port")
}

teardown() {
    kill "$LNK" "$SRV" 2>/dev/null || true
    wait "$LNK" "$SRV" 2>/dev/null || true
    rm -rf "$T"
}

# wait_file PATH: until PATH exists (10 s at most)
wait_file() {
    local i
    for ((i = 0; i < 200; i++)); do
        [[ -s $1 ]] && return 0
        sleep 0.05
    done
    echo "timed out waiting for $1" >&2
    return 1
}

# seconds A B: succeed when A >= B (floats)
at_least() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)" "$1" "$2"; }

@test "delaylink: the bytes arrive unchanged, after a handshake and a request round trip, at the rate" {
    run timeout 30 curl -sS -o "$T/got" -w '%{time_starttransfer} %{time_total}' "$URL/blob"
    assert_success
    cmp "$T/blob" "$T/got"
    read -r first total <<<"$output"
    at_least "$first" 0.040  # SYN/SYN-ACK round trip + request/response round trip
    at_least "$total" 0.36   # + 4 MB at 100 Mbit/s
    at_least 10 "$total"     # never a stall
}

@test "delaylink: connections share the rate; every request waits a round trip" {
    local t0 t1
    t0=$(date +%s.%N)
    run timeout 30 curl -sS --parallel --parallel-max 4 --fail -w '%{size_download}\n' \
        -o /dev/null "$URL/blob" -o /dev/null "$URL/blob" -o /dev/null "$URL/blob" -o /dev/null "$URL/blob"
    t1=$(date +%s.%N)
    assert_success
    [[ $(echo "$output" | awk '{ s += $1 } END { print s }') == 16000000 ]]
    at_least "$(python3 -c "print($t1 - $t0)")" 1.28  # 16 MB at 100 Mbit/s, whatever the connections
    # two requests on one connection: the second still waits a round trip
    run timeout 30 curl -sS -o /dev/null -o /dev/null -w '%{time_starttransfer}\n' "$URL/up" "$URL/up"
    assert_success
    at_least "$(sed -n 1p <<<"$output")" 0.040
    at_least "$(sed -n 2p <<<"$output")" 0.020
}

@test "delaylink: stops on SIGTERM and reports what it carried" {
    run timeout 30 curl -sS -o /dev/null "$URL/up"
    assert_success
    kill -TERM "$LNK"
    run timeout 10 tail --pid="$LNK" -f /dev/null
    assert_success
    run cat "$T/link.log"
    assert_output --regexp '^delaylink: 1 connections, [0-9]+ bytes up, [0-9]+ bytes down$'
}
