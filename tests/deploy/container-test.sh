#!/usr/bin/env bash
# container-test.sh -- a librpma application in an unprivileged container
# reaches remote memory through nothing but rpmad's socket.
#
# Two rpmads on the host: A serves a server process on a "remote host" (a
# network namespace of its own, REMOTE_ADDR on one end of a veth pair), B
# is the container's "host rpmad". The container is made with unshare(1),
# the way rootless engines make one:
#   - its file system is an overlay over the host's / (the image), with the
#     application copied into the upper layer, a /dev holding only null,
#     zero, random and urandom (no /dev/infiniband), a tmpfs /run holding
#     only B's socket, bind-mounted at /run/rpmad/rpmad.sock;
#   - the application runs as uid 4242 (not root, on the host or inside)
#     with B's socket group as a supplementary group, no capabilities (none
#     permitted, effective or ambient, no_new_privs: no CAP_IPC_LOCK), ulimit -l 0, in its own user,
#     mount, PID and network namespaces; the network namespace, made by the
#     "engine" as a CNI plugin makes one, has lo and the other end of the
#     veth pair (CONTAINER_ADDR), and nothing else: B does the container's
#     listening and connecting in it (rpmad.conf(5), network_namespace).
# In it, pmem-client writes, flushes (persistent) and reads back a file that
# pmem-server on the remote host offers through A; then pmem-server in the
# container offers a file in the container's own overlay (/data) and a
# client on the remote host writes it through A. While it waits, `rpmactl
# clients` of B must show it with its host pid (not its pid inside) and
# uid 4242, and `rpmactl endpoints` its endpoint in the container's
# network namespace.
#
# Needs root (the overlay and the bind mount are made by the "engine") and
# unshare with --map-current-user; exits 77 (skipped) otherwise.
set -euo pipefail
top_src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
top_build=${TOP_BUILDDIR:-$top_src/_build}
RPMAD_BIN=${RPMAD_BIN:-$top_build/rpmad/rpmad}
RPMACTL_BIN=${RPMACTL_BIN:-$top_build/rpmactl/rpmactl}
CUID=4242		# the container's user, on the host and inside
SOCK_GID=4243		# B's socket group: a number, as --group-add passes it
port_a=$((20000 + $$ % 20000))
port_c=$((port_a + 1))
# the veth pair between the remote host's namespace and the container's:
# namespaces this test makes, nothing outside them
REMOTE_ADDR=10.78.0.1
CONTAINER_ADDR=10.78.0.2

say() { echo "container-test: $*"; }
fail() { echo "container-test: FAIL: $*" >&2; exit 1; }
# shellcheck source=tests/deploy/lib.sh
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then say "skipped: needs root (overlay, bind mount)"; exit 77; fi
unshare --help 2>&1 | grep -- --map-current-user >/dev/null || { say "skipped: unshare too old"; exit 77; }
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	{ say "skipped: no overlay file system"; exit 77; }
deploy_lib

deploy_work container 'upper/data/*.out'

say "building the demo programs (cc ... -lrpma) into the image's /app"
deploy_demo "$work/app"
cat >"$work/app/inside.sh" <<'EOF'
#!/bin/sh
# what runs in the container, as its unprivileged user
set -eu
ulimit -l 0
echo "inside: uid $(id -u), pid $$, memlock $(ulimit -l)"
[ "$(id -u)" = "$CUID" ] || { echo "inside: not uid $CUID"; exit 1; }
[ "$(ulimit -l)" = 0 ] || { echo "inside: memlock is not 0"; exit 1; }
# no capability now and none to gain (no_new_privs: no setuid, no file
# capabilities); the bounding set of a new user namespace is full, but it
# only bounds what could be gained
for set in CapInh CapPrm CapEff CapAmb; do
	grep -q "^$set:[[:space:]]*0000000000000000$" /proc/self/status ||
		{ echo "inside: capabilities left"; grep Cap /proc/self/status; exit 1; }
done
grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/self/status || { echo "inside: no no_new_privs"; exit 1; }
[ ! -e /dev/infiniband ] || { echo "inside: /dev/infiniband exists"; exit 1; }
links=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\n' ' ')
[ "$links" = "ctr0 lo " ] || { echo "inside: network devices: $links"; exit 1; }
[ -S /run/rpmad/rpmad.sock ] && [ "$(ls -A /run/rpmad)" = rpmad.sock ] ||
	{ echo "inside: /run/rpmad:"; ls -lA /run/rpmad; exit 1; }
fs=$(stat -f -c %T /data)
[ "$fs" = overlayfs ] || { echo "inside: /data is $fs"; exit 1; }

echo "inside: client -> the remote host's server through the bind-mounted socket"
/app/pmem-client "$REMOTE_ADDR" "$PORT_A" "$MSG_A"

echo "inside: server with a pmem file in the overlay"
truncate -s 64K /data/pmem.file
/app/pmem-server "$CONTAINER_ADDR" "$PORT_C" /data/pmem.file >/data/server.out 2>&1 &
spid=$!
echo "inside: server pid $spid" >/data/server.pid
wait "$spid"
cat /data/server.out
EOF
chmod 755 "$work/app/inside.sh"

say "the remote host's and the container's network namespaces, a veth pair between"
command -v ip >/dev/null || { say "skipped: no ip (iproute2)"; exit 77; }
declare -A holder
for n in remote container; do
	unshare --net -- sleep 3600 &
	holder[$n]=$!
	pids+=($!)
	for _ in $(seq 200); do
		[ "$(readlink "/proc/${holder[$n]}/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.05
	done
done
in_net() { local n=$1; shift; nsenter --target "${holder[$n]}" --net -- "$@"; }
in_remote() { in_net remote "$@"; }
in_net remote ip link add rem0 type veth peer name ctr0 netns "/proc/${holder[container]}/ns/net"
in_net remote ip addr add "$REMOTE_ADDR/24" dev rem0
in_net container ip addr add "$CONTAINER_ADDR/24" dev ctr0
for n in remote container; do
	in_net "$n" ip link set lo up
	in_net "$n" ip link set "$([ "$n" = remote ] && echo rem0 || echo ctr0)" up
done

say "starting rpmad A (the remote host's server) and B (the container's host rpmad)"
printf 'socket_group = %s\nsocket_mode = 0660\n' "$SOCK_GID" >"$work/B.conf"
"$RPMAD_BIN" --foreground --socket "$work/A.sock" --transport tcp 2>"$work/rpmad-A.log" &
pids+=($!)
"$RPMAD_BIN" --foreground --config "$work/B.conf" --socket "$work/B.sock" \
	--transport tcp 2>"$work/rpmad-B.log" &
pids+=($!)
# the socket node comes first (mode 0600), its group and mode a moment later
for _ in $(seq 400); do
	[ -S "$work/A.sock" ] && [ -S "$work/B.sock" ] &&
		[ "$(stat -c %a:%g "$work/B.sock")" = "660:$SOCK_GID" ] && break
	sleep 0.05
done
[ "$(stat -c %a:%g "$work/B.sock")" = "660:$SOCK_GID" ] || fail "B's socket is $(stat -c %a:%g "$work/B.sock")"

msg_a="from the container at $(date +%T)"
msg_c="into the container's overlay at $(date +%T)"
truncate -s 64K "$work/host.pmem"
RPMAD_SOCKET="$work/A.sock" in_remote "$work/app/pmem-server" "$REMOTE_ADDR" "$port_a" "$work/host.pmem" \
	>"$work/host-server.out" 2>&1 &
hspid=$!
pids+=("$hspid")
for _ in $(seq 400); do grep -q listening "$work/host-server.out" && break; sleep 0.05; done
grep -q listening "$work/host-server.out" || fail "the host server does not listen"

say "starting the container"
mkdir -p "$work/upper" "$work/ovl" "$work/root"
export work CUID SOCK_GID
export PORT_A=$port_a PORT_C=$port_c MSG_A="$msg_a" REMOTE_ADDR CONTAINER_ADDR
export CNET=/proc/${holder[container]}/ns/net
# The engine's part, as root in a mount namespace of its own: the overlay,
# /dev, /run with the socket, a /proc for the container's own to cover;
# then pivot_root into it, join the network namespace made for it, drop to
# the user and make the user, mount and PID namespaces
# (--map-current-user: uid 4242 is 4242 inside).
# shellcheck disable=SC2016
nsenter --net="$CNET" -- unshare --mount --propagation private -- bash -euc '
r=$work/root
mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper,workdir=$work/ovl" "$r"
mount -t tmpfs -o mode=755 tmpfs "$r/dev"
for n in null zero random urandom; do
	touch "$r/dev/$n"; mount --bind "/dev/$n" "$r/dev/$n"
done
mount -t tmpfs -o mode=755 tmpfs "$r/run"
mkdir "$r/run/rpmad"; touch "$r/run/rpmad/rpmad.sock"
mount --bind "$work/B.sock" "$r/run/rpmad/rpmad.sock"
mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
mount -t proc proc "$r/proc"
mkdir -p "$r/app" "$r/data" "$r/.oldroot"
cp -a "$work/app/." "$r/app/"
chown "$CUID:$CUID" "$r/data"
cd "$r"
pivot_root . .oldroot
exec chroot . /bin/sh -c "umount -l /.oldroot && rmdir /.oldroot && exec setpriv \
	--reuid=$CUID --regid=$CUID --groups=$SOCK_GID \
	--bounding-set=-all --inh-caps=-all --no-new-privs \
	unshare --map-current-user --mount --pid --fork --kill-child \
		--mount-proc /usr/bin/env -i PATH=/usr/bin:/bin CUID=$CUID \
		PORT_A=$PORT_A PORT_C=$PORT_C MSG_A=\"$MSG_A\" REMOTE_ADDR=$REMOTE_ADDR \
		CONTAINER_ADDR=$CONTAINER_ADDR /app/inside.sh"
' >"$work/container.out" 2>&1 &
cpid=$!
pids+=("$cpid")

for _ in $(seq 600); do
	grep -q listening "$work/upper/data/server.out" 2>/dev/null && break
	kill -0 "$cpid" 2>/dev/null || break
	sleep 0.05
done
grep -q listening "$work/upper/data/server.out" 2>/dev/null ||
	{ cat "$work/container.out"; fail "the container's server does not listen"; }
wait "$hspid" || fail "the host server failed"
[ "$(head -c "${#msg_a}" "$work/host.pmem")" = "$msg_a" ] ||
	fail "the host's file does not hold what the container wrote"
say "the container wrote, flushed and read the host server's file"

say "rpmactl clients of B shows the container's server with its host pid and uid"
"$RPMACTL_BIN" --socket "$work/B.sock" clients
"$RPMACTL_BIN" --socket "$work/B.sock" --json clients >"$work/clients.json"
"$RPMACTL_BIN" --socket "$work/B.sock" --json mrs >"$work/mrs.json"
inner=$(sed -n 's/^inside: server pid //p' "$work/upper/data/server.pid")
python3 - "$work/clients.json" "$CUID" "$inner" "$work/mrs.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
uid, inner = int(sys.argv[2]), int(sys.argv[3])
mrs = json.load(open(sys.argv[4]))["mrs"]
mine = [c for c in doc["clients"] if c["command"] == "pmem-server"]
assert len(mine) == 1, doc
c = mine[0]
assert c["uid"] == uid, c
pid = c["pid"]
# the host's /proc: NSpid lists the pid in every namespace, outermost first
status = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status"))
nspid = [int(x) for x in status["NSpid"].split()]
assert nspid[0] == pid and nspid[-1] == inner and len(nspid) == 2, nspid
assert int(status["Uid"].split()[0]) == uid, status["Uid"]
# the overlay's file is registered as itself (by descriptor), not copied
backing = [m["backing"] for m in mrs if m["pid"] == pid]
assert backing == ["/data/pmem.file"], mrs
print(f"container-test: pid {pid} on the host is pid {inner} in the container, uid {uid}")
EOF
"$RPMACTL_BIN" --socket "$work/B.sock" endpoints
"$RPMACTL_BIN" --socket "$work/B.sock" --json endpoints >"$work/eps.json"
python3 - "$work/eps.json" "$(readlink "$CNET")" <<'EOF'
import json, sys
eps = json.load(open(sys.argv[1]))["endpoints"]
assert len(eps) == 1 and "net:[%d]" % eps[0]["netns"] == sys.argv[2], eps
print("container-test: its endpoint listens in the container's", sys.argv[2])
EOF

say "a client on the remote host writes the container's pmem file through A"
RPMAD_SOCKET="$work/A.sock" in_remote "$work/app/pmem-client" "$CONTAINER_ADDR" "$port_c" "$msg_c" \
	>"$work/host-client.out" 2>&1 || fail "the host client failed"
wait "$cpid" || { cat "$work/container.out"; fail "the container failed"; }
cat "$work/container.out"
[ "$(head -c "${#msg_c}" "$work/upper/data/pmem.file")" = "$msg_c" ] ||
	fail "the overlay's file does not hold the message"
say "passed"
