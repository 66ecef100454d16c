#!/usr/bin/env bash
# first-program.sh -- the README's first program, examples/hello-rpma.c,
# builds with warnings as errors against the library just built, as a
# user's program would (librpma.h and the shared library, nothing else),
# and its client reads the server's buffer through rpmad: across two
# rpmads and with both on one.
set -euo pipefail
top_src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
top_build=${TOP_BUILDDIR:-$top_src/_build}
RPMAD_BIN=${RPMAD_BIN:-$top_build/rpmad/rpmad}
CC=${CC:-cc}

say() { echo "first-program: $*"; }
fail() { echo "first-program: FAIL: $*" >&2; exit 1; }
# each program's bound: a hang fails the test instead of stalling make check
LIMIT=120
# shellcheck source=tests/deploy/lib.sh
. "$(dirname "$0")/lib.sh"

deploy_lib

deploy_work first

say "cc -Wall -Wextra -Werror examples/hello-rpma.c against $lib"
# shellcheck disable=SC2086
"$CC" -Wall -Wextra -Werror $san -o "$work/hello-rpma" \
	"$top_src/examples/hello-rpma.c" -I"$top_src/include" "$lib" \
	-Wl,-rpath,"$(dirname "$lib")"

for n in A B; do
	"$RPMAD_BIN" --foreground --socket "$work/$n.sock" --transport tcp \
		2>"$work/rpmad-$n.log" &
	pids+=($!)
done
for n in A B; do
	for _ in $(seq 600); do
		[ -S "$work/$n.sock" ] && break
		sleep 0.05
	done
	[ -S "$work/$n.sock" ] || fail "rpmad $n did not make its socket"
done

# run SERVER_RPMAD CLIENT_RPMAD: the server on one, the client on the other
run() {
	local s_sock=$work/$1.sock c_sock=$work/$2.sock port spid
	for try in 1 2 3 4 5; do
		port=$((40000 + ($$ * 7 + try * 13) % 20000))
		# emptied here, not by the server's redirection: the loop
		# below must not read the last run's "listening"
		: >"$work/server.out"
		RPMAD_SOCKET=$s_sock timeout "$LIMIT" "$work/hello-rpma" \
			server 127.0.0.1 "$port" >>"$work/server.out" 2>&1 &
		spid=$!
		while kill -0 "$spid" 2>/dev/null &&
				! grep -q listening "$work/server.out"; do
			sleep 0.05
		done
		grep -q listening "$work/server.out" && break
		wait "$spid" || true	# the port was taken: another one
	done
	grep -q listening "$work/server.out" || fail "the server did not listen"
	RPMAD_SOCKET=$c_sock timeout "$LIMIT" "$work/hello-rpma" client \
		127.0.0.1 "$port" >"$work/client.out" 2>&1 ||
		fail "the client failed: $(cat "$work/client.out")"
	wait "$spid" || fail "the server failed: $(cat "$work/server.out")"
	grep -qx "client: read \"hello from the server's memory\"" \
		"$work/client.out" || fail "the client read something else"
	grep -qx "server: Connection closed" "$work/server.out" ||
		fail "the server did not see the connection close"
}

say "server on rpmad A, client on rpmad B"
run A B
say "server and client on rpmad A"
run A A
say "passed"
