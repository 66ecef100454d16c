#!/usr/bin/env bash
# userns-test.sh -- clients in user namespaces mapped as the container
# runtimes map them reach the host's rpmad, and nobody else (issue 36).
#
# One rpmad on the host (software transport). Two "containers", made the
# way their runtimes make them:
#   - rootless podman: an unprivileged user (uid 4242, with a subordinate
#     range in /etc/subuid and /etc/subgid) unshares a user namespace and
#     newuidmap/newgidmap map 0 to itself and 1..65536 to its range
#     (0 4242 1, 1 200000 65536): the overflow uid 65534 is mapped, to
#     200000 + 65533;
#   - systemd-nspawn --private-users=pick: root maps a 64 Ki block,
#     0 589824 65536, itself;
# the runtime's process then joins the namespace (nsenter, as root) and
# drops to the container's user. In each, as the container's root and as
# an ordinary user of it, pmem-server offers a file and pmem-client writes
# and flushes a message into it through the host's rpmad: rpmad shows as
# the overflow uid there, and proves itself (ProveIdentity).
# Then the impostors: a process of the container running as its "nobody"
# (uid 65534, the overflow uid too), and the host's own nobody (unmapped
# in the container: the overflow uid as well), each serving a socket that
# answers everything "ok" and tries to claim root of the container's
# namespace: the library refuses both, says why on stderr (no syslog
# here), and sends neither a descriptor nor a hello.
#
# The users, subordinate ranges and their /etc files exist only in a mount
# namespace of this test (copies bind-mounted over /etc/passwd, /etc/group,
# /etc/subuid, /etc/subgid). Needs root, newuidmap/newgidmap (uidmap) and
# unshare/nsenter (util-linux); exits 77 (skipped) otherwise.
set -euo pipefail
top_src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
top_build=${TOP_BUILDDIR:-$top_src/_build}
RPMAD_BIN=${RPMAD_BIN:-$top_build/rpmad/rpmad}
ROOTLESS_UID=4242	# the user running "rootless podman"
SUB_BASE=200000		# its subordinate range, 65536 ids
PICK_BASE=589824	# nspawn's pick: a 64 Ki block (0x90000)
port=$((20000 + $$ % 20000))

say() { echo "userns-test: $*"; }
fail() { echo "userns-test: FAIL: $*" >&2; exit 1; }
# shellcheck source=tests/deploy/lib.sh
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then say "skipped: needs root"; exit 77; fi
for tool in newuidmap newgidmap nsenter unshare setpriv /usr/bin/python3; do
	command -v "$tool" >/dev/null || { say "skipped: no $tool (uidmap, util-linux)"; exit 77; }
done
# the test re-runs itself in a mount namespace of its own, where its /etc
# files are
if [ -z "${USERNS_TEST_INNER:-}" ]; then
	USERNS_TEST_INNER=1 exec unshare --mount --propagation private -- "$0" "$@"
fi

deploy_lib

deploy_work userns

say "the rootless user and its subordinate ranges, in this mount namespace only"
for f in passwd group subuid subgid; do
	cp "/etc/$f" "$work/$f"
	mount --bind "$work/$f" "/etc/$f"
done
echo "rpmadct:x:$ROOTLESS_UID:$ROOTLESS_UID::/nonexistent:/bin/sh" >>/etc/passwd
echo "rpmadct:x:$ROOTLESS_UID:" >>/etc/group
echo "rpmadct:$SUB_BASE:65536" >>/etc/subuid
echo "rpmadct:$SUB_BASE:65536" >>/etc/subgid

say "building the demo programs into $work/app"
deploy_demo "$work/app"
chmod -R a+rX "$work/app"

say "starting rpmad (its socket open to every uid: the test is about who serves it)"
printf 'socket_mode = 0666\n' >"$work/rpmad.conf"
"$RPMAD_BIN" --foreground --config "$work/rpmad.conf" --socket "$work/rpmad.sock" \
	--transport tcp 2>"$work/rpmad.log" &
pids+=($!)
for _ in $(seq 400); do
	[ -S "$work/rpmad.sock" ] && [ "$(stat -c %a "$work/rpmad.sock")" = 666 ] && break
	sleep 0.05
done
[ "$(stat -c %a "$work/rpmad.sock")" = 666 ] || fail "no socket"

# holder UID CMD...: a process that unshares a user namespace (as UID) and
# waits; its pid goes to $holder
holder() {
	local as=$1
	setpriv --reuid="$as" --regid="$as" --clear-groups \
		unshare --user -- sleep 3600 &
	holder=$!
	pids+=("$holder")
	for _ in $(seq 200); do
		[ "$(readlink "/proc/$holder/ns/user")" != "$(readlink /proc/self/ns/user)" ] && break
		sleep 0.05
	done
}

say "rootless podman's mapping: newuidmap/newgidmap as uid $ROOTLESS_UID"
holder "$ROOTLESS_UID"
rootless=$holder
setpriv --reuid="$ROOTLESS_UID" --regid="$ROOTLESS_UID" --clear-groups \
	newuidmap "$rootless" 0 "$ROOTLESS_UID" 1 1 "$SUB_BASE" 65536
setpriv --reuid="$ROOTLESS_UID" --regid="$ROOTLESS_UID" --clear-groups \
	newgidmap "$rootless" 0 "$ROOTLESS_UID" 1 1 "$SUB_BASE" 65536
echo "$rootless: $(tr -s ' \n' ' ' <"/proc/$rootless/uid_map")"

say "systemd-nspawn --private-users=pick's mapping, written by root"
holder 0
pick=$holder
echo "0 $PICK_BASE 65536" >"/proc/$pick/uid_map"
echo "0 $PICK_BASE 65536" >"/proc/$pick/gid_map"
echo "$pick: $(tr -s ' \n' ' ' <"/proc/$pick/uid_map")"

# inside HOLDER UID CMD...: CMD in HOLDER's user namespace as its UID (the
# runtime joins it as root of the namespace, then drops to the user)
inside() {
	local ns=$1 as=$2
	shift 2
	nsenter --target "$ns" --user -- setpriv --reuid="$as" --regid="$as" \
		--clear-groups /usr/bin/env -i PATH=/usr/bin:/bin \
		${RPMAD_SOCKET:+RPMAD_SOCKET=$RPMAD_SOCKET} "$@"
}

# exchange HOLDER UID NAME: pmem-server and pmem-client in the namespace
# as UID, through the host's rpmad
exchange() {
	local ns=$1 as=$2 name=$3
	local dir="$work/$name" msg="written in $name at $(date +%T.%N)"
	mkdir -p "$dir"
	truncate -s 64K "$dir/pmem.file"
	# the container's uid as the host sees it owns the file
	local host_uid
	host_uid=$(awk -v u="$as" '$1 <= u && u < $1 + $3 { print $2 + u - $1 }' "/proc/$ns/uid_map")
	chown "$host_uid:$host_uid" "$dir" "$dir/pmem.file"
	port=$((port + 1))
	RPMAD_SOCKET="$work/rpmad.sock" inside "$ns" "$as" "$work/app/pmem-server" \
		127.0.0.1 "$port" "$dir/pmem.file" >"$work/$name-server.out" 2>&1 &
	local spid=$!
	pids+=("$spid")
	for _ in $(seq 400); do
		grep -q listening "$work/$name-server.out" && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	grep -q listening "$work/$name-server.out" || fail "$name: the server does not listen"
	RPMAD_SOCKET="$work/rpmad.sock" inside "$ns" "$as" "$work/app/pmem-client" \
		127.0.0.1 "$port" "$msg" >"$work/$name-client.out" 2>&1 ||
		fail "$name: the client failed"
	wait "$spid" || fail "$name: the server failed"
	[ "$(head -c "${#msg}" "$dir/pmem.file")" = "$msg" ] ||
		fail "$name: the file does not hold the message"
	say "$name (host uid $host_uid): written and flushed through the host's rpmad"
}

exchange "$rootless" 0 rootless-root
exchange "$rootless" 1000 rootless-user
exchange "$pick" 0 pick-root
exchange "$pick" 1000 pick-user
grep -q "cannot prove" "$work/rpmad.log" && fail "rpmad could not prove itself"

# an impostor: answers every packet "ok" (Response{ok}), first trying to
# claim uid 0 with it as rpmad does; it writes down what it was sent
cat >"$work/impostor.py" <<'EOF'
import os, socket, struct, sys
path, report = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(path)
os.chmod(path, 0o666)
s.listen(4)
print("listening", flush=True)
c, _ = s.accept()
log = []
while True:
    data, anc, flags, _ = c.recvmsg(65536, socket.CMSG_SPACE(4 * 32))
    if not data:
        break
    fds = sum(len(d) // 4 for lvl, typ, d in anc if typ == socket.SCM_RIGHTS)
    log.append("packet %d bytes, %d descriptors" % (len(data), fds))
    ok = b"\x4a\x00"   # Response { ok: Empty }, id 0
    try:
        cred = struct.pack("iII", os.getpid(), 0, os.getgid())
        c.sendmsg([ok], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, cred)])
        log.append("claimed uid 0")
    except OSError as e:
        log.append("cannot claim uid 0: %s" % e.strerror)
        c.sendmsg([ok])
open(report, "w").write("\n".join(log) + "\n")
EOF

# impostor NAME HOLDER|host UID: the impostor as UID (in the namespace, or
# on the host), a client of the rootless container as its uid 1000 sent to
# it
impostor() {
	local name=$1 where=$2 as=$3
	local sock="$work/imp/$name.sock" report="$work/imp/$name.report"
	mkdir -p -m 1777 "$work/imp"
	if [ "$where" = host ]; then
		setpriv --reuid="$as" --regid="$as" --clear-groups \
			/usr/bin/python3 "$work/impostor.py" "$sock" "$report" \
			>"$work/$name.out" 2>&1 &
	else
		inside "$where" "$as" /usr/bin/python3 "$work/impostor.py" "$sock" \
			"$report" >"$work/$name.out" 2>&1 &
	fi
	local ipid=$!
	pids+=("$ipid")
	for _ in $(seq 200); do grep -q listening "$work/$name.out" && break; sleep 0.05; done
	grep -q listening "$work/$name.out" || fail "$name: the impostor does not listen"
	truncate -s 64K "$work/$name.file"
	chown "$((SUB_BASE + 999)):$((SUB_BASE + 999))" "$work/$name.file"
	if RPMAD_SOCKET="$sock" inside "$rootless" 1000 "$work/app/pmem-server" \
		127.0.0.1 "$((port + 100))" "$work/$name.file" >"$work/$name-client.out" 2>&1; then
		fail "$name: the client used the impostor"
	fi
	wait "$ipid" || fail "$name: the impostor failed"
	cat "$work/$name-client.out"
	grep -q "refusing $sock: .*asked to prove it is rpmad, it could not claim root" "$work/$name-client.out" ||
		fail "$name: the refusal is not on stderr"
	grep -q "CDI device" "$work/$name-client.out" || fail "$name: the refusal says not what to do"
	# one packet (the question) and nothing with it: no hello, no descriptor
	[ "$(grep -c '^packet' "$report")" = 1 ] && grep -q '^packet .*, 0 descriptors$' "$report" ||
		{ cat "$report"; fail "$name: the client sent more than its question"; }
	grep -q '^cannot claim uid 0' "$report" || { cat "$report"; fail "$name: the impostor could claim uid 0"; }
	say "$name: refused ($(grep -c . "$report") lines of its report, no descriptor)"
}

impostor nobody-inside "$rootless" 65534
impostor nobody-host host 65534
say "passed"
