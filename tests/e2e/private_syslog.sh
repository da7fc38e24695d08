#!/usr/bin/env bash
# private_syslog.sh DIR PYTHON CMD... - run a daemonizing zarrfs command in a
# private mount namespace (call through `unshare --mount --propagation
# private`) whose /dev is a fresh tmpfs with the usual devices and a syslog
# socket at /dev/log, so that nothing of the machine's own /dev or syslog is
# touched.  CMD mounts DIR/s at DIR/mnt; then DIR/mnt/bad.txt is read (it
# fails), DIR/mnt/good.txt too, DIR/mnt is unmounted, and the daemon must
# exit.  Every datagram received on /dev/log goes to DIR/syslog.txt, one per
# line; the daemon's pid to DIR/pid.  Exit status 0 when all of that worked.
set -uo pipefail
dir=$1 python=$2
shift 2

die() { echo "private_syslog.sh: $*" >&2; exit 1; }
[[ $(awk '$5 == "/" { print $0 }' /proc/self/mountinfo) != *shared:* ]] ||
    die "the root mount is shared here: run me through unshare --mount --propagation private"

# /dev: a tmpfs of our own, with the nodes zarrfs, libfuse and the tools use
mount -t tmpfs -o mode=0755,size=1m zf-private-dev /dev || die "cannot mount a tmpfs on /dev"
mknod -m 0666 /dev/null c 1 3 && mknod -m 0666 /dev/zero c 1 5 &&
    mknod -m 0666 /dev/random c 1 8 && mknod -m 0666 /dev/urandom c 1 9 &&
    mknod -m 0666 /dev/fuse c 10 229 || die "mknod failed"
ln -s /proc/self/fd /dev/fd && ln -s fd/0 /dev/stdin && ln -s fd/1 /dev/stdout && ln -s fd/2 /dev/stderr

# the syslog socket: a datagram listener until DIR/stop appears
"$python" - "$dir/syslog.txt" "$dir/ready" "$dir/stop" <<'PY' &
import os, socket, sys
out, ready, stop = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
s.settimeout(0.1)
with open(out, "ab", buffering=0) as f:
    open(ready, "w").close()
    while not os.path.exists(stop):
        try:
            f.write(s.recv(65536).rstrip(b"\n") + b"\n")
        except socket.timeout:
            pass
PY
listener=$!
daemon=
cleanup() {
    if awk -v m="$dir/mnt" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo; then
        umount -l "$dir/mnt" 2>/dev/null
    fi
    [[ -n $daemon ]] && kill -KILL "$daemon" 2>/dev/null
    touch "$dir/stop"
    wait "$listener" 2>/dev/null
}
trap cleanup EXIT
for _ in $(seq 100); do [[ -e $dir/ready ]] && break; sleep 0.05; done
[[ -S /dev/log ]] || die "the syslog listener did not start"

"$@" </dev/null || die "zarrfs exited $?"

# the daemon: a process other than us and our ancestors naming DIR/mnt
ancestors=" $$ "
p=$$
while [[ $p != 0 && $p != 1 ]]; do
    p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null) || break
    [[ -n $p ]] || break
    ancestors+="$p "
done
for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [[ $ancestors == *" $p "* || $p == "$listener" ]] && continue
    { tr '\0' '\n' <"/proc/$p/cmdline"; } 2>/dev/null | grep -qxF "$dir/mnt" && { daemon=$p; break; }
done
[[ -n $daemon ]] || die "no daemon found after mounting"
echo "$daemon" >"$dir/pid"

cat "$dir/mnt/bad.txt" >/dev/null 2>&1 && die "reading bad.txt succeeded"
head -n 1 "$dir/mnt/good.txt" >/dev/null || die "reading good.txt failed"
umount "$dir/mnt" || die "umount failed"
for _ in $(seq 300); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.05; done
kill -0 "$daemon" 2>/dev/null && die "the daemon did not exit after umount"
daemon=
sleep 0.3 # (the listener drains what is queued)
exit 0
