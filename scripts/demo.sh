#!/usr/bin/env bash
# demo.sh -- the main job: build and install rpmad, start two rpmads (two
# "hosts" on loopback, software transport), and let a client write a
# message into a server's file over them: write, persistent flush, read
# back; then show the file's bytes on disk and rpmactl status on the way.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
ADDR=${ADDR:-127.0.0.1}
PORT=${PORT:-7304}
MSG=${1:-"hello from rpmad at $(date +%T)"}

scripts/install-deps.sh
[ -x configure ] || autoreconf -fi
# librpmaclient talks to an rpmad of root only, unless built to trust
# another user: the demo's rpmads run as whoever runs the demo
user_opt=()
[ "$(id -u)" = 0 ] || user_opt=(--with-rpmad-user="$(id -un)")
if [ ! -x _inst/sbin/rpmad ]; then
	echo "== building and installing into $top/_inst"
	mkdir -p _build
	(cd _build && { [ -f Makefile ] ||
		../configure --prefix="$top/_inst" "${user_opt[@]}" >/dev/null; } &&
		make -j"$(nproc)" >/dev/null && make install >/dev/null)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rpmad-demo.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

echo "== compiling the demo programs as any librpma program: cc ... -lrpma"
export PKG_CONFIG_PATH="$top/_inst/lib/pkgconfig"
for p in pmem-server pmem-client; do
	# shellcheck disable=SC2046
	cc -O2 -Wall -o "$work/$p" "examples/$p.c" -Iexamples \
		$(pkg-config --cflags --libs librpma) -Wl,-rpath,"$top/_inst/lib" -libverbs
done

# rpmactl's requests are answered for root and admin_groups only: the
# rpmads of another user let that user's group in
conf_opt=()
if [ "$(id -u)" != 0 ]; then
	echo "admin_groups = $(id -g)" >"$work/rpmad.conf"
	conf_opt=(--config "$work/rpmad.conf")
fi
echo "== starting rpmad A (server side) and rpmad B (client side)"
for n in A B; do
	_inst/sbin/rpmad --foreground --socket "$work/$n.sock" --transport tcp \
		"${conf_opt[@]}" 2>"$work/rpmad-$n.log" &
	pids+=($!)
done
for n in A B; do
	for _ in $(seq 100); do [ -S "$work/$n.sock" ] && break; sleep 0.05; done
done

truncate -s 64K "$work/pmem.file"
RPMAD_SOCKET="$work/A.sock" "$work/pmem-server" "$ADDR" "$PORT" "$work/pmem.file" \
	>"$work/server.out" 2>&1 &
spid=$!
pids+=("$spid")
for _ in $(seq 100); do grep -q listening "$work/server.out" 2>/dev/null && break; sleep 0.05; done
cat "$work/server.out"

echo "== rpmactl status of rpmad A while the server waits"
_inst/bin/rpmactl --socket "$work/A.sock" status

echo "== the client, through rpmad B (it holds the connection for a moment)"
RPMAD_SOCKET="$work/B.sock" "$work/pmem-client" "$ADDR" "$PORT" "$MSG" 1500 \
	>"$work/client.out" 2>&1 &
cpid=$!
pids+=("$cpid")
for _ in $(seq 200); do grep -q "read back" "$work/client.out" && break; sleep 0.05; done
cat "$work/client.out"
echo "== rpmactl connections of rpmad B (client side) and A (server side) while connected"
_inst/bin/rpmactl --socket "$work/B.sock" connections
_inst/bin/rpmactl --socket "$work/A.sock" connections
wait "$cpid"
wait "$spid"
cat "$work/server.out" | tail -n +2

echo "== the server's file on disk now begins with:"
head -c "${#MSG}" "$work/pmem.file"; echo
if [ "$(head -c "${#MSG}" "$work/pmem.file")" != "$MSG" ]; then
	echo "demo: the file does not hold the message" >&2
	exit 1
fi
echo "== rpmactl status of rpmad A afterwards (everything released)"
_inst/bin/rpmactl --socket "$work/A.sock" status
echo "== demo passed"
