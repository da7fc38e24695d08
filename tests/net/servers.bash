# tests/net/servers.bash - test servers on loopback for the remote-store suites:
# nginx (HTTP, TLS with the test's CA, TLS with an unrelated CA), versitygw (S3
# with signature checks, posix backend), Azurite (Azure Blob, SharedKey and SAS
# checked) and tests/net/faultproxy.py.  Source it
# (bats: `load ../net/servers`).  Every server's files (config, logs, pid, data)
# live in a directory the caller gives; each start waits for the server with a
# timeout, and net_stop_all stops whatever was started (call it in teardown).
#
# Environment: ZF_PYTHON (python with boto3, for net_s3), ZF_VERSITYGW (the
# versitygw binary; default: on PATH, else ~/go/bin, /usr/local/bin).

NET_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NET_PIDS=()        # servers started (stopped by net_stop_all)
NET_START_TIMEOUT=${NET_START_TIMEOUT:-15}

# net_free_port: print a TCP port that is free on 127.0.0.1 and ::1 right now
# (the OS picks it; a server that then fails to bind it is retried).
net_free_port() {
    python3 - <<'EOF'
import socket
for _ in range(50):
    a = socket.socket()
    a.bind(("127.0.0.1", 0))
    port = a.getsockname()[1]
    b = socket.socket(socket.AF_INET6)
    try:
        b.bind(("::1", port))
    except OSError:
        continue
    finally:
        a.close(); b.close()
    print(port)
    break
EOF
}

# net_wait_port PORT PID: wait until something listens on 127.0.0.1:PORT while
# PID lives; returns 1 on timeout or if PID died.
net_wait_port() {
    local deadline=$((SECONDS + NET_START_TIMEOUT))
    until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
        kill -0 "$2" 2>/dev/null || return 1
        ((SECONDS < deadline)) || return 1
        sleep 0.05
    done
}

# net_track DIR PID: remember a server (a file DIR/pid lets scripts/test sweep
# it if a test is killed before its teardown).
net_track() {
    echo "$2" >"$1/pid"
    NET_PIDS+=("$2")
}

# net_stop PID: stop one server we started (TERM, then KILL after 5 s).
net_stop() {
    local pid=$1 i
    [[ -n $pid ]] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# net_stop_all: stop every server this test started.
net_stop_all() {
    local pid
    for pid in "${NET_PIDS[@]}"; do net_stop "$pid"; done
    NET_PIDS=()
}

# net_certs DIR: the test's CA and certificates in DIR (see certs.sh).
net_certs() {
    [[ -f $1/server.pem ]] || "$NET_DIR/certs.sh" "$1" || return 1
}

# net_nginx DIR ROOT: serve ROOT with nginx; its config, logs and temp paths
# in DIR (created).  Sets
#   NGX_HTTP   http://127.0.0.1:PORT        (also on [::1]:PORT: NGX_HTTP6)
#   NGX_HTTPS  https://127.0.0.1:PORT       certificate from DIR/certs/ca.pem (NGX_CA)
#   NGX_OTHER  https://127.0.0.1:PORT       certificate from an unrelated CA
#   NGX_LOG    the access log: '"METHOD URI PROTO" STATUS BYTES "RANGE"' per line
#   NGX_PID
# Static files come with Range support, ETag and Last-Modified (nginx's defaults).
# Redirects: NGX_HTTP/cross/KEY sends every key but metadata to http://[::1]
# (another host, the same files), NGX_HTTP/up/KEY to NGX_HTTPS/KEY,
# NGX_HTTPS/down/KEY every key but metadata to NGX_HTTP/KEY.
net_nginx() {
    local dir=$1 root=$2 try p1 p2 p3
    mkdir -p "$dir/tmp" "$dir/certs"
    net_certs "$dir/certs" || return 1
    NGX_CA=$dir/certs/ca.pem NGX_LOG=$dir/access.log
    for try in 1 2 3 4 5; do
        p1=$(net_free_port) p2=$(net_free_port) p3=$(net_free_port)
        cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 512; }
http {
    types { application/json json; text/plain txt; }
    default_type application/octet-stream;
    log_format zf '\$remote_addr "\$request" \$status \$body_bytes_sent "\$http_range"';
    access_log $dir/access.log zf;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    sendfile on;
    etag on;
    keepalive_requests 100000;
    keepalive_timeout 60s;
    server {
        listen 127.0.0.1:$p1;
        listen [::1]:$p1;
        root $root;
        # redirects (issue 24): /cross/ sends chunks to another host (the
        # same server as [::1]), /up/ everything to https on the same host
        location ~ ^/cross/(.*(zarr\.json|\.z[a-z]+))\$ { rewrite ^/cross/(.*)\$ /\$1 break; }
        location ~ ^/cross/(.*)\$ { return 302 http://[::1]:$p1/\$1; }
        location ~ ^/up/(.*)\$ { return 302 https://127.0.0.1:$p2/\$1; }
    }
    server {
        listen 127.0.0.1:$p2 ssl http2;
        listen [::1]:$p2 ssl http2;
        ssl_certificate $dir/certs/server.pem;
        ssl_certificate_key $dir/certs/server.key;
        root $root;
        # /down/ sends chunks from https to http on the same host
        location ~ ^/down/(.*(zarr\.json|\.z[a-z]+))\$ { rewrite ^/down/(.*)\$ /\$1 break; }
        location ~ ^/down/(.*)\$ { return 302 http://127.0.0.1:$p1/\$1; }
    }
    server {
        listen 127.0.0.1:$p3 ssl;
        ssl_certificate $dir/certs/other.pem;
        ssl_certificate_key $dir/certs/other.key;
        root $root;
    }
}
EOF
        nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" </dev/null >>"$dir/stderr" 2>&1 3>&- &
        NGX_PID=$!
        if net_wait_port "$p1" "$NGX_PID" && net_wait_port "$p2" "$NGX_PID" && net_wait_port "$p3" "$NGX_PID"; then
            net_track "$dir" "$NGX_PID"
            NGX_HTTP=http://127.0.0.1:$p1 NGX_HTTP6=http://[::1]:$p1
            NGX_HTTPS=https://127.0.0.1:$p2 NGX_OTHER=https://127.0.0.1:$p3
            return 0
        fi
        net_stop "$NGX_PID"
    done
    echo "nginx did not start: $(tail -n 5 "$dir/error.log" "$dir/stderr" 2>/dev/null)" >&2
    return 1
}

# net_versitygw_bin: print the versitygw binary's path.
net_versitygw_bin() {
    local b
    for b in "${ZF_VERSITYGW:-}" "$(command -v versitygw)" "$HOME/go/bin/versitygw" \
        /usr/local/bin/versitygw; do
        [[ -n $b && -x $b ]] && { echo "$b"; return 0; }
    done
    return 1
}

# net_versitygw DIR ACCESS SECRET [DATA CERTDIR]: an S3 server (versitygw, posix
# backend, region us-east-1) with root credentials ACCESS / SECRET; its data in
# DATA (default DIR/data: another server's DATA serves the same buckets).  With
# CERTDIR (see net_certs) it speaks TLS with CERTDIR/server.pem.  Sets VGW_URL
# (http[s]://127.0.0.1:PORT), VGW_PID, VGW_LOG (access log).
net_versitygw() {
    local dir=$1 bin try port data=${4:-$1/data} meta tls=() scheme=http
    bin=$(net_versitygw_bin) || { echo "no versitygw binary (scripts/deps installs it)" >&2; return 1; }
    # metadata beside the data (versitygw refuses a sidecar whose path starts with the data's)
    meta=${data%/*}/meta.${data##*/}
    mkdir -p "$dir" "$data" "$meta"
    if [[ -n ${5:-} ]]; then
        net_certs "$5" || return 1
        tls=(--cert "$5/server.pem" --key "$5/server.key") scheme=https
    fi
    VGW_LOG=$dir/access.log
    for try in 1 2 3 4 5; do
        port=$(net_free_port)
        # credentials through the environment, not argv
        ROOT_ACCESS_KEY_ID=$2 ROOT_SECRET_ACCESS_KEY=$3 \
            "$bin" --port "127.0.0.1:$port" --region us-east-1 --quiet --access-log "$VGW_LOG" "${tls[@]}" \
            posix --sidecar "$meta" "$data" </dev/null >>"$dir/stderr" 2>&1 3>&- &
        VGW_PID=$!
        if net_wait_port "$port" "$VGW_PID"; then
            net_track "$dir" "$VGW_PID"
            VGW_URL=$scheme://127.0.0.1:$port
            return 0
        fi
        net_stop "$VGW_PID"
    done
    echo "versitygw did not start: $(tail -n 5 "$dir/stderr")" >&2
    return 1
}

# net_s3 ARGS...: tests/net/s3util.py (credentials from the AWS_* environment).
net_s3() { timeout -k 5 120 "${ZF_PYTHON:-python3}" "$NET_DIR/s3util.py" "$@"; }

# net_proxy DIR UPSTREAM_HOSTPORT DEADLINE [FAULT OPTIONS...]: start faultproxy.py
# in front of UPSTREAM; its control file is DIR/control.json (write a JSON object
# there to change the faults), its request log DIR/requests.log.  Sets
# PROXY_URL (http://127.0.0.1:PORT), PROXY_PID, PROXY_CTL, PROXY_LOG.
net_proxy() {
    local dir=$1 up=$2 deadline=$3
    shift 3
    mkdir -p "$dir"
    PROXY_CTL=$dir/control.json PROXY_LOG=$dir/requests.log
    rm -f "$dir/port"
    "${ZF_PYTHON:-python3}" "$NET_DIR/faultproxy.py" --upstream "$up" --deadline "$deadline" \
        --port-file "$dir/port" --control "$PROXY_CTL" --log "$PROXY_LOG" "$@" \
        </dev/null >>"$dir/stderr" 2>&1 3>&- &
    PROXY_PID=$!
    local end=$((SECONDS + NET_START_TIMEOUT))
    until [[ -s $dir/port ]]; do
        kill -0 "$PROXY_PID" 2>/dev/null && ((SECONDS < end)) || {
            echo "faultproxy did not start: $(cat "$dir/stderr")" >&2
            net_stop "$PROXY_PID"
            return 1
        }
        sleep 0.05
    done
    net_track "$dir" "$PROXY_PID"
    PROXY_URL=http://127.0.0.1:$(<"$dir/port")
}

# net_proxy_set JSON: change the proxy's faults (atomically; counters restart).
net_proxy_set() {
    printf '%s\n' "$1" >"$PROXY_CTL.tmp"
    mv -f "$PROXY_CTL.tmp" "$PROXY_CTL"
    # mtime granularity: make sure the next request sees a new mtime
    touch -d "@$(date +%s.%N)" "$PROXY_CTL"
}

# net_azurite_bin: print the Azurite blob server's path (scripts/deps installs
# it with npm into /usr/local/lib/azurite; ZF_AZURITE elsewhere).
net_azurite_bin() {
    local b
    for b in "${ZF_AZURITE:-}" /usr/local/lib/azurite/node_modules/.bin/azurite-blob; do
        [[ -n $b && -x $b ]] && { echo "$b"; return 0; }
    done
    return 1
}

# net_azurite DIR: Azure Blob Storage's emulator (Azurite) on loopback, its data
# in DIR; account devstoreaccount1 with Microsoft's
# published key.  Sets AZ_URL (path style: http://127.0.0.1:PORT/devstoreaccount1),
# AZ_PID.
net_azurite() {
    local dir=$1 bin try port
    bin=$(net_azurite_bin) || { echo "no azurite (scripts/deps installs it)" >&2; return 1; }
    mkdir -p "$dir"
    for try in 1 2 3 4 5; do
        port=$(net_free_port)
        "$bin" --blobHost 127.0.0.1 --blobPort "$port" --location "$dir/data" \
            --skipApiVersionCheck --disableProductStyleUrl --disableTelemetry \
            </dev/null >>"$dir/stderr" 2>&1 3>&- &
        AZ_PID=$!
        if NET_START_TIMEOUT=60 net_wait_port "$port" "$AZ_PID"; then
            net_track "$dir" "$AZ_PID"
            AZ_URL=http://127.0.0.1:$port/devstoreaccount1
            return 0
        fi
        net_stop "$AZ_PID"
    done
    echo "azurite did not start: $(tail -n 5 "$dir/stderr")" >&2
    return 1
}
