#!/usr/bin/env bash
# netns-test.sh -- a container's network is the container's (issue 36):
# one rpmad on the host serves two containers, each in a network
# namespace of its own with only lo, and does their listening and
# connecting in their namespaces.
#   - both containers' servers listen on the same 127.0.0.1:PORT at once,
#     and each container's client writes into its own server's file;
#   - `rpmactl connections` and `rpmactl endpoints` show each connection
#     and endpoint with its container's namespace (net:[N], as readlink
#     of the container's /proc/PID/ns/net shows it);
#   - the host reaches neither: a client on the host finds nothing at
#     127.0.0.1:PORT, and a container cannot listen on an address of the
#     host's (not one of its own) nor connect to a host server's port;
#   - a process of a container that hands its namespace over not (as a
#     library older than rpmad would) is refused every network request.
# Needs root (network namespaces) and ip(8); exits 77 (skipped) otherwise.
set -euo pipefail
top_src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
top_build=${TOP_BUILDDIR:-$top_src/_build}
RPMAD_BIN=${RPMAD_BIN:-$top_build/rpmad/rpmad}
RPMACTL_BIN=${RPMACTL_BIN:-$top_build/rpmactl/rpmactl}
port=$((20000 + $$ % 20000))
host_port=$((port + 1))

say() { echo "netns-test: $*"; }
fail() { echo "netns-test: FAIL: $*" >&2; exit 1; }
# shellcheck source=tests/deploy/lib.sh
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then say "skipped: needs root"; exit 77; fi
for tool in ip unshare nsenter python3; do
	command -v "$tool" >/dev/null || { say "skipped: no $tool"; exit 77; }
done
deploy_lib

deploy_work netns

say "building the demo programs"
for p in pmem-server pmem-client; do
	# shellcheck disable=SC2086
	cc -O2 -Wall $san -o "$work/$p" "$top_src/examples/$p.c" -I"$top_src/examples" \
		-I"$top_src/include" "$lib" -Wl,-rpath,"$(dirname "$lib")" -libverbs
done

"$RPMAD_BIN" --foreground --socket "$work/rpmad.sock" --transport tcp \
	--log-level info 2>"$work/rpmad.log" &
pids+=($!)
for _ in $(seq 400); do [ -S "$work/rpmad.sock" ] && break; sleep 0.05; done
[ -S "$work/rpmad.sock" ] || fail "rpmad did not start"
export RPMAD_SOCKET="$work/rpmad.sock"

# container NAME: a network namespace with lo up, held by a process whose
# pid goes to ${holder[NAME]}
declare -A holder
container() {
	unshare --net -- sh -c 'ip link set lo up && exec sleep 3600' &
	holder[$1]=$!
	pids+=($!)
	for _ in $(seq 200); do
		[ "$(readlink "/proc/${holder[$1]}/ns/net")" != "$(readlink /proc/self/ns/net)" ] &&
			nsenter --target "${holder[$1]}" --net ip -o link show lo | grep -q UP && break
		sleep 0.05
	done
}
in_ct() { local ct=$1; shift; nsenter --target "${holder[$ct]}" --net -- "$@"; }

container c1
container c2
ns_c1=$(readlink "/proc/${holder[c1]}/ns/net")
ns_c2=$(readlink "/proc/${holder[c2]}/ns/net")
say "containers: c1 $ns_c1, c2 $ns_c2, the host $(readlink /proc/self/ns/net)"

say "both containers' servers listen on 127.0.0.1:$port"
for ct in c1 c2; do
	truncate -s 64K "$work/$ct.pmem"
	in_ct "$ct" "$work/pmem-server" 127.0.0.1 "$port" "$work/$ct.pmem" \
		>"$work/$ct-server.out" 2>&1 &
	pids+=($!)
	eval "spid_$ct=$!"
done
for ct in c1 c2; do
	for _ in $(seq 400); do grep -q listening "$work/$ct-server.out" && break; sleep 0.05; done
	grep -q listening "$work/$ct-server.out" || fail "$ct: the server does not listen"
done

say "rpmactl endpoints: each in its container's namespace"
"$RPMACTL_BIN" endpoints
"$RPMACTL_BIN" --json endpoints >"$work/eps.json"
python3 - "$work/eps.json" "$ns_c1" "$ns_c2" "$port" <<'EOF'
import json, sys
eps = json.load(open(sys.argv[1]))["endpoints"]
want = sorted(sys.argv[2:4])
got = sorted("net:[%d]" % e["netns"] for e in eps if e["port"] == sys.argv[4])
assert got == want, (got, want, eps)
EOF

say "the host finds no server at 127.0.0.1:$port"
if "$work/pmem-client" 127.0.0.1 "$port" "from the host" >"$work/host-client.out" 2>&1; then
	fail "a client on the host reached a container's server"
fi

say "each container's client writes into its own server's file"
for ct in c1 c2; do
	msg="written in $ct at $(date +%T.%N)"
	in_ct "$ct" "$work/pmem-client" 127.0.0.1 "$port" "$msg" 3000 \
		>"$work/$ct-client.out" 2>&1 &
	cpid=$!
	pids+=("$cpid")
	# while it holds the connection: the connections and their namespaces
	for _ in $(seq 400); do
		"$RPMACTL_BIN" --json connections >"$work/conns.json" 2>/dev/null &&
			python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["connections"]; sys.exit(0 if sum(x["state"]=="established" for x in c)>=2 else 1)' \
			"$work/conns.json" && break
		sleep 0.05
	done
	"$RPMACTL_BIN" connections
	python3 - "$work/conns.json" "$(readlink "/proc/${holder[$ct]}/ns/net")" <<'EOF'
import json, sys
conns = [c for c in json.load(open(sys.argv[1]))["connections"]
         if c["state"] == "established"]
assert len(conns) == 2, conns   # the client's and its server's side
for c in conns:
    assert "net:[%d]" % c["netns"] == sys.argv[2], (c, sys.argv[2])
EOF
	wait "$cpid" || fail "$ct: the client failed"
	spid_var=spid_$ct
	wait "${!spid_var}" || fail "$ct: the server failed"
	[ "$(head -c "${#msg}" "$work/$ct.pmem")" = "$msg" ] || fail "$ct: its file does not hold its message"
done
say "each container's file holds its own container's message"

say "a container does not reach the host's network"
truncate -s 64K "$work/host.pmem"
"$work/pmem-server" 127.0.0.1 "$host_port" "$work/host.pmem" >"$work/host-server.out" 2>&1 &
hspid=$!
pids+=("$hspid")
for _ in $(seq 400); do grep -q listening "$work/host-server.out" && break; sleep 0.05; done
grep -q listening "$work/host-server.out" || fail "the host's server does not listen"
if in_ct c1 "$work/pmem-client" 127.0.0.1 "$host_port" "from c1" >"$work/c1-host.out" 2>&1; then
	fail "a container's client reached the host's server"
fi
kill "$hspid"; wait "$hspid" 2>/dev/null || true
host_addr=$(ip -4 -o addr show scope global | awk '{ sub("/.*", "", $4); print $4; exit }')
if [ -n "$host_addr" ]; then
	truncate -s 64K "$work/c1b.pmem"
	if in_ct c1 "$work/pmem-server" "$host_addr" "$port" "$work/c1b.pmem" \
		>"$work/c1-hostaddr.out" 2>&1; then
		fail "a container listened on the host's address $host_addr"
	fi
	grep -q "is not an address of this host" "$work/c1-hostaddr.out" ||
		fail "listening on the host's address: not refused as not a local address"
	say "c1 cannot listen on the host's $host_addr"
fi

say "a client of a container that hands over no namespace is refused network work"
# speaks the protocol itself: a hello, no NetNamespace, a DeviceGet
cat >"$work/old-client.py" <<'EOF'
import socket, sys
def varint(n):
    out = b""
    while True:
        b = n & 0x7f
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out
def field(num, wire, payload):
    return varint(num << 3 | wire) + payload
def msg(num, body):
    return field(num, 2, varint(len(body)) + body)
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
hello = field(1, 0, varint(1)) + msg(2, b"old-client")
s.send(field(1, 0, varint(1)) + msg(10, hello))
print("hello answered", len(s.recv(65536)))
get = msg(1, b"127.0.0.1")
s.send(field(1, 0, varint(2)) + msg(11, get))
print(s.recv(65536))
EOF
in_ct c2 python3 "$work/old-client.py" "$work/rpmad.sock" >"$work/old-client.out" 2>&1 ||
	fail "the old client failed"
cat "$work/old-client.out"
grep -q "handed over none" "$work/old-client.out" || fail "the old client was not refused"
say "passed"
