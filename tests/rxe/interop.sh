#!/usr/bin/env bash
# interop.sh -- inside the VM: a native librpma 1.2 program (in-process, on
# rxe directly) and a program brokered by rpmad work together, both ways:
#   native client  -> brokered server (rpmad A, rxe0, SERVER_ADDR), on
#     anonymous memory (no persistent flush granted: the native client
#     sees only RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY) and, where
#     RPMAD_TEST_DEVDAX names one, on a device DAX (persistent flushes)
#   brokered client (rpmad B, rxe1) -> native server (SERVER_ADDR)
# and the binary drop-in, the 1.x API through rpmad (rpma_atomic_write
# among it): the native programs themselves, built against librpma 1.2,
# run with PREFIX's librpma.so.0 first in LD_LIBRARY_PATH ("drop-in"),
# against native ones, both ways.
# Programs: tests/rxe/interop/ (built by build-interop.sh into INTEROP_BIN).
#
# usage: interop.sh PREFIX      (INTEROP_BIN and WORK from the environment)
set -u
PREFIX=$1
BIN=${INTEROP_BIN:?}
ADDR=${SERVER_ADDR:-192.168.100.1}
W=$(mktemp -d "${WORK:-/tmp}/interop.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

start_rpmad() { # start_rpmad NAME
	"$PREFIX/sbin/rpmad" --foreground --socket "$W/$1.sock" --transport verbs \
		--config /dev/null --log-level info > "$W/$1.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 200); do [ -S "$W/$1.sock" ] && return 0; sleep 0.05; done
	echo "rpmad $1 did not start"; cat "$W/$1.log"; return 1
}

wait_listen() { # the server prints "listening" once its endpoint is up
	for _ in $(seq 400); do grep -q listening "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

# prog NAME: the program's command; "drop-in:NAME" runs the native build
# NAME through PREFIX's librpma.so.0 (LD_LIBRARY_PATH goes before its
# runpath), checked with ldd first
prog() {
	case $1 in
	drop-in:*)
		local b=$BIN/${1#drop-in:}
		LD_LIBRARY_PATH=$PREFIX/lib ldd -r "$b" 2>&1 |
			grep -q "librpma.so.0 => $PREFIX/lib/librpma.so.0" ||
			{ echo "$b does not load $PREFIX/lib/librpma.so.0" >&2; echo false; return; }
		echo "env LD_LIBRARY_PATH=$PREFIX/lib $b";;
	*) echo "$BIN/$1";;
	esac
}

# run_case NAME SERVER SERVER_SOCKET CLIENT CLIENT_SOCKET PORT FLUSH [PMEM]
#   FLUSH: the deepest flush the client must find the target grants
run_case() {
	local name=$1 srv=$2 ssock=$3 cli=$4 csock=$5 port=$6 flush=$7
	shift 7
	# shellcheck disable=SC2046
	RPMAD_SOCKET=$ssock timeout 120 $(prog "$srv") "$ADDR" "$port" "$@" > "$W/$name.server" 2>&1 &
	local spid=$!
	wait_listen "$W/$name.server"
	# shellcheck disable=SC2046
	RPMAD_SOCKET=$csock timeout 120 $(prog "$cli") "$ADDR" "$port" > "$W/$name.client" 2>&1
	local crc=$?
	wait $spid; local src=$?
	grep -q "^flush: $flush$" "$W/$name.client" || crc="$crc, not 'flush: $flush'"
	if [ "$crc" = 0 ] && [ $src = 0 ]; then echo "ok    $name"; return 0; fi
	echo "FAIL  $name (client $crc, server $src)"
	for f in "$W/$name".*; do echo "  --- $(basename "$f")"; sed 's/^/    /' "$f"; done
	return 1
}

start_rpmad A || exit 1
start_rpmad B || exit 1
r=0 n=2
run_case "native client -> brokered server" brokered_server "$W/A.sock" native_client /nonexistent 7601 visibility || r=1
if [ -n "${RPMAD_TEST_DEVDAX:-}" ]; then
	n=3
	run_case "native client -> brokered server on device DAX" brokered_server "$W/A.sock" native_client /nonexistent 7603 persistent "$RPMAD_TEST_DEVDAX" || r=1
fi
# native librpma grants what its application asks, whatever the memory
run_case "brokered client -> native server" native_server /nonexistent brokered_client "$W/B.sock" 7602 persistent || r=1
# the native builds through rpmad (LIBRPMA_1.0), against native peers
n=$((n + 2))
run_case "native client -> drop-in server" drop-in:native_server "$W/A.sock" native_client /nonexistent 7604 visibility || r=1
run_case "drop-in client -> native server" native_server /nonexistent drop-in:native_client "$W/B.sock" 7605 persistent || r=1

# srq_case NAME SERVER SERVER_SOCKET CLIENT CLIENT_SOCKET PORT: upstream's
# example 13, a shared RQ serving three clients at once. Its server answers
# from the send slot of the receive slot the message came in (one each per
# client) and reposts that receive at once, with the answer's send
# unsignaled: a fourth message coming into the slot before the device has
# sent the answer rewrites it, and a client gets another client's value
# (seen once in the VM: sent 6, got 4, the answer to seed 1's 3). Each
# client waits 50 ms between its rounds, the example's own <sleep>: of any
# four messages in a row one client sent two, so a slot comes back 50 ms
# after its last use at the soonest.
srq_case() {
	local name=$1 srv=$2 ssock=$3 cli=$4 csock=$5 port=$6 seed rc=0 cpids=()
	# shellcheck disable=SC2046
	RPMAD_SOCKET=$ssock timeout 90 $(prog "$srv") "$ADDR" "$port" > "$W/$name.server" 2>&1 &
	local spid=$!
	for _ in $(seq 100); do
		rdma resource show cm_id 2>/dev/null | grep LISTEN | grep -qE ":$port( |$)" && break
		sleep 0.1
	done
	for seed in 1 5 10; do
		# shellcheck disable=SC2046
		RPMAD_SOCKET=$csock timeout 80 $(prog "$cli") "$ADDR" "$port" $seed 3 50000 \
			> "$W/$name.client.$seed" 2>&1 &
		cpids+=($!)
	done
	for p in "${cpids[@]}"; do wait "$p" || rc=1; done
	wait $spid || rc=1
	for seed in 1 5 10; do
		grep -q "value received: $((seed + 3))" "$W/$name.client.$seed" || rc=1
		grep -qF "[server] value received: $seed from the connection" "$W/$name.server" || rc=1
	done
	[ "$(grep -c '\[server\] value received:' "$W/$name.server")" = 9 ] || rc=1
	if [ $rc = 0 ]; then echo "ok    $name"; return 0; fi
	echo "FAIL  $name"
	for f in "$W/$name".*; do echo "  --- $(basename "$f")"; sed 's/^/    /' "$f"; done
	return 1
}
if [ -x "$BIN/native_srq_server" ]; then
	n=$((n + 2))
	srq_case "native clients -> drop-in shared-RQ server" drop-in:native_srq_server "$W/A.sock" \
		native_srq_client /nonexistent 7606 || r=1
	srq_case "drop-in clients -> native shared-RQ server" native_srq_server /nonexistent \
		drop-in:native_srq_client "$W/B.sock" 7607 || r=1
fi
if [ $r != 0 ]; then for d in A B; do echo "  --- rpmad $d"; tail -20 "$W/$d.log" | sed 's/^/    /'; done; fi
[ $r = 0 ] && echo "$n passed, 0 failed" || echo "failed"
exit $r
