#!/usr/bin/env bash
# bench-rxe.sh -- inside the Soft-RoCE VM: rpmad-brokered librpma beside
# native librpma and beside perftest, in one boot, over rxe1 -> rxe0.
#
# usage: bench-rxe.sh PREFIX BIN     (BIN: build-interop.sh's OUTDIR/bin)
#
# Rows: 8 B write + flush latency (the deepest flush the target grants;
# on RDMA a visibility and a persistent one are the same read after the
# write; perftest floor: ib_write_lat 8 B), 4 KiB read latency (ib_read_lat), 1 MiB write bandwidth at QD1 and
# QD16 (ib_write_bw, tx-depth 1 and 16), 8 B send/receive round trip to a
# server that answers each message (ib_send_lat, doubled). The VM is emulated, so only the
# ratios mean something: brokered/native (goal: latency <= 1.5x, bandwidth
# >= 0.8x) and each to the perftest floor. Clients spin on rpma_cq_get_wc
# (`spin`) or wait in rpma_cq_wait (`block`); both are shown. Native and
# brokered runs alternate BENCH_ROUNDS times (3); each row is the median.
set -u
PREFIX=$1 BIN=$2
A=192.168.100.1
ITERS=${BENCH_ITERS:-300}
ROUNDS=${BENCH_ROUNDS:-3}
W=$(mktemp -d "${TMPDIR:-/tmp}/bench-rxe.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done' EXIT

perf_field() { # perf_field FILE: the column t_typical (latency) or BW average
	awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ {v=$0} END {print v}' "$1"
}
perftest() { # perftest NAME TOOL ARGS... -> the result line
	"$2" -R -d rxe0 "${@:3}" > "$W/$1.server" 2>&1 &
	local s=$!
	sleep 1
	"$2" -R -d rxe1 "${@:3}" $A > "$W/$1.client" 2>&1
	wait $s
	perf_field "$W/$1.client"
}

lat_wl=$(perftest wl ib_write_lat -s 8 -n "$ITERS" | awk '{print $5}')
lat_rd=$(perftest rd ib_read_lat -s 4096 -n "$ITERS" | awk '{print $5}')
# ib_send_lat reports half a round trip
lat_pp=$(perftest pp ib_send_lat -s 8 -n "$ITERS" | awk '{printf "%.2f", 2 * $5}')
bw1=$(perftest bw1 ib_write_bw -s 1048576 -n 200 -t 1 | awk '{print $4}')
bw16=$(perftest bw16 ib_write_bw -s 1048576 -n 400 -t 16 | awk '{print $4}')

start_rpmad() {
	"$PREFIX/sbin/rpmad" --foreground --socket "$W/$1.sock" --transport verbs \
		--config "${RXE_BENCH_CONFIG:-/dev/null}" > "$W/$1.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 200); do [ -S "$W/$1.sock" ] && return; sleep 0.05; done
}
start_rpmad A; start_rpmad B

# R[kind-wait-name] holds one value per round, space-separated
declare -A R
pair() { # pair KIND(native|brokered) WAIT PORT ROUND
	local kind=$1 wait=$2 port=$3 out=$W/$1-$2-$4 s
	RPMAD_SOCKET=$W/A.sock "$BIN/${kind}_pair" server $A "$port" --wait "$wait" \
		> "$out.server" 2>&1 &
	s=$!
	for _ in $(seq 200); do grep -q listening "$out.server" && break; sleep 0.05; done
	RPMAD_SOCKET=$W/B.sock timeout 600 "$BIN/${kind}_pair" client $A "$port" --wait "$wait" \
		--iters "$ITERS" > "$out.client" 2>&1
	wait $s
	while read -r name value _; do R[$kind-$wait-$name]+="$value "; done < "$out.client"
}
# native and brokered alternate, ROUNDS times: the emulated VM's speed
# drifts with the host's load, and each row is the median of its rounds
port=7700
for round in $(seq "$ROUNDS"); do
	for wait in spin block; do
		for kind in native brokered; do port=$((port + 1)); pair $kind $wait $port "$round"; done
	done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {if (NR) print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }
printf '%-26s %-5s %9s %9s %9s %10s %10s\n' measurement wait floor native brokered brk/native brk/floor
row() { # row LABEL KEY FLOOR UNIT
	for wait in spin block; do
		local n b
		n=$(median <<< "${R[native-$wait-$2]:-}") b=$(median <<< "${R[brokered-$wait-$2]:-}")
		printf '%-26s %-5s %9s %9s %9s %10s %10s\n' "$1 ($4)" $wait "$3" "${n:--}" "${b:--}" \
			"$(ratio "$b" "$n")" "$(ratio "$b" "$3")"
	done
}
row "8 B write+flush latency" write_flush_lat_us "$lat_wl" us
row "4 KiB read latency" read_lat_us "$lat_rd" us
row "1 MiB write bw, QD1" write_bw_qd1_mbs "$bw1" MB/s
row "1 MiB write bw, QD16" write_bw_qd16_mbs "$bw16" MB/s
row "8 B send/recv ping-pong" pingpong_rt_us "$lat_pp" us
for f in "$W"/*.client "$W"/*.log; do
	grep -qiE 'error|fail' "$f" && { echo "--- $f"; tail -5 "$f"; }
done
exit 0
