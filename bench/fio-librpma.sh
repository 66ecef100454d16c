#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# fio-librpma.sh -- fio's librpma engines, unmodified, against two rpmads on
# loopback: the server job on one, the client job on the other, as the
# issue that asked for busy polling measured them.
#
#   FIO=path/to/fio RPMAD_BIN=rpmad/rpmad LIBDIR=prefix/lib \
#       bench/fio-librpma.sh [apm|gpspm JOBS DEPTH SECONDS]
#
# FIO is a fio built with its librpma engines against this library
# (docs/benchmarks.md, "fio's librpma engines"); LIBDIR holds
# librpmaclient.so.1. Without arguments it runs the four cases of that
# table. Prints one line per case: IOPS and mean completion latency.
#
# SERVER_MEM=shm puts the server's memory in a file in /dev/shm instead
# of fio's "malloc" (shared memory, which rpmad maps itself; fio's libpmem
# is told to take it as pmem); CLIENT_IOMEM=TYPE gives the client's I/O
# buffers fio's --iomem=TYPE (mmapshared: shared memory, nothing staged).
set -euo pipefail

FIO=${FIO:?set FIO to a fio built with the librpma engines}
RPMAD_BIN=${RPMAD_BIN:-rpmad}
# paths stay right after the cd below
case $FIO in */*) FIO=$(realpath "$FIO") ;; esac
case $RPMAD_BIN in */*) RPMAD_BIN=$(realpath "$RPMAD_BIN") ;; esac
if [ -n "${LIBDIR:-}" ]; then
	LIBDIR=$(realpath "$LIBDIR")
	export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
PORT=${PORT:-7420}

work=$(mktemp -d /tmp/fio-librpma.XXXXXX)
shm_file=
# fio lays out a file named as the server's "malloc" workspace: here
cd "$work"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
	[ -z "$shm_file" ] || rm -f "$shm_file"
}
trap cleanup EXIT

case ${SERVER_MEM:-malloc} in
malloc) ;;
shm)
	shm_file=/dev/shm/fio-librpma.$$
	truncate -s 100MiB "$shm_file"
	# fio maps a server file with libpmem, which takes only pmem unless
	export PMEM_IS_PMEM_FORCE=1
	;;
*) echo "SERVER_MEM is malloc or shm" >&2; exit 2 ;;
esac

for d in A B; do
	"$RPMAD_BIN" --foreground --socket "$work/$d.sock" --transport tcp \
		> "$work/$d.log" 2>&1 &
	pids+=($!)
done
for _ in $(seq 100); do
	[ -S "$work/A.sock" ] && [ -S "$work/B.sock" ] && break
	sleep 0.1
done

# one case: engine, jobs, queue depth, seconds
run_case() {
	local eng=$1 jobs=$2 depth=$3 secs=$4 port=$PORT
	PORT=$((PORT + jobs))
	local srv=(--name=server --ioengine=librpma_${eng}_server
		--create_serialize=0 --kb_base=1000 --serverip=127.0.0.1
		--port=$port --thread --direct_write_to_pmem=0 --numjobs=$jobs
		--size=100MiB --filename=${shm_file:-malloc})
	# the GPSPM server answers each flush request; it spins, as fio's
	# example job does
	[ "$eng" = gpspm ] && srv+=(--busy_wait_polling=1 --iodepth=$depth)
	RPMAD_SOCKET=$work/A.sock timeout $((secs + 60)) "$FIO" "${srv[@]}" \
		> "$work/server.out" 2>&1 &
	local server=$!
	sleep 1
	local rc=0
	RPMAD_SOCKET=$work/B.sock timeout $((secs + 60)) "$FIO" \
		--name=client --ioengine=librpma_${eng}_client \
		--create_serialize=0 --serverip=127.0.0.1 --port=$port \
		--thread --numjobs=$jobs --group_reporting=1 --sync=0 \
		--iodepth=$depth --iodepth_batch_submit=1 --rw=write \
		--blocksize=4KiB --time_based --runtime=${secs}s \
		--ramp_time=2s ${CLIENT_IOMEM:+--iomem=$CLIENT_IOMEM} \
		> "$work/client.out" 2>&1 || rc=$?
	wait "$server" 2>/dev/null || true
	if [ $rc != 0 ]; then
		echo "fio $eng jobs=$jobs depth=$depth: failed ($rc)"
		tail -n 5 "$work/client.out"
		return 1
	fi
	local iops lat
	iops=$(grep -o 'IOPS=[^,]*' "$work/client.out" | head -n 1)
	lat=$(grep -E '^ +clat \(' "$work/client.out" | head -n 1 |
		sed -E 's/.*clat \(([a-z]+)\).*avg= *([0-9.]+).*/\2 \1/')
	printf 'fio %-6s 4 KiB writes, %d job(s), QD%-3d %s, mean clat %s\n' \
		"$eng" "$jobs" "$depth" "$iops" "$lat"
}

if [ $# -eq 4 ]; then
	run_case "$@"
else
	run_case apm 1 16 10
	run_case apm 2 16 10
	run_case gpspm 1 1 10
	run_case gpspm 2 4 10
fi
