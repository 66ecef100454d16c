#!/usr/bin/env bash
# powercut.sh -- inside the VM (booted for it alone by run-vm-tests.sh):
# clients stream writes, each made persistent by a flush, into
#   a) the device DAX of an NVDIMM backed by a host file, over the verbs
#      transport (rxe1 -> rxe0: the NIC writes, its flush is a read)
#   b) the same device DAX over the software transport (the target rpmad
#      flushes the CPU caches: libpmem2)
#   c) a file of an ext4 on a virtio disk the host does not cache, over
#      the software transport (the target rpmad writes the page cache
#      back: msync)
# and note every acknowledged record in OUT (a host folder, written
# through at once). Once each stream has acknowledged some, the power goes
# (sysrq b: no sync, no shutdown); the VM then ends without an exit
# status, and powercut-check.sh reads what survived from the host.
#
# usage: powercut.sh PREFIX BUILD OUT
set -u
PREFIX=$(realpath "$1"); BUILD=$(realpath "$2"); OUT=$3
HERE=$(dirname "$(realpath "$0")")
STREAM=$BUILD/tests/rxe/pmem_stream
ADDR=192.168.100.1
# each stream's room: 16 MiB, 4096 records
LEN=$((16 << 20))
W=$(mktemp -d "${TMPDIR:-/tmp}/powercut.XXXXXX")
export PATH=$HERE/shim:$PATH

fail() { echo "powercut: $*"; for f in "$W"/*.log "$W"/*.out; do [ -f "$f" ] && { echo "  --- $(basename "$f")"; tail -15 "$f" | sed 's/^/    /'; }; done; exit 1; }

layout=$("$HERE/pmem-setup.sh") || fail "no persistent memory"
eval "$layout"
{ echo "$layout"; echo "A_OFFSET=0"; echo "B_OFFSET=$LEN"; echo "C_FILE=/stream.dat"; } > "$OUT/layout"

start_rpmad() { # NAME TRANSPORT
	"$PREFIX/sbin/rpmad" --foreground --socket "$W/$1.sock" --transport "$2" \
		--config /dev/null --log-level info > "$W/$1.log" 2>&1 &
	for _ in $(seq 200); do [ -S "$W/$1.sock" ] && return 0; sleep 0.05; done
	fail "rpmad $1 did not start"
}
wait_listen() {
	for _ in $(seq 200); do
		ss -ltnH "sport = :$1" 2>/dev/null | grep -q . && return 0
		sleep 0.05
	done
	fail "nothing listens at port $1"
}
serve() { # NAME RPMAD PORT PMEM OFFSET
	RPMAD_SOCKET=$W/$2.sock "$STREAM" serve "$ADDR" "$3" "$4" "$5" "$LEN" > "$W/$1.out" 2>&1 &
	wait_listen "$3"
}
stream() { # NAME RPMAD PORT
	: > "$OUT/$1.log"
	RPMAD_SOCKET=$W/$2.sock "$STREAM" stream "$ADDR" "$3" "$OUT/$1.log" >> "$W/$1.out" 2>&1 &
}

start_rpmad A verbs; start_rpmad B verbs
start_rpmad C tcp; start_rpmad D tcp
serve a A 7701 "$DEVDAX" 0
serve b C 7702 "$DEVDAX" "$LEN"
serve c C 7703 "$DISK_DIR/stream.dat" 0
stream a B 7701; stream b D 7702; stream c D 7703

# the cut comes while every stream is going on
for _ in $(seq 1200); do
	n=0
	for s in a b c; do [ "$(wc -l < "$OUT/$s.log")" -ge 200 ] && n=$((n + 1)); done
	[ $n = 3 ] && break
	sleep 0.1
done
[ $n = 3 ] || fail "the streams did not get going"
echo "powercut: cutting the power after $(wc -l < "$OUT/a.log"), $(wc -l < "$OUT/b.log") and $(wc -l < "$OUT/c.log") acknowledged records"
echo b > /proc/sysrq-trigger
sleep 10
fail "the power did not go"
