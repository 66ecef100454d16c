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
#
# Then two tenants on the NIC: a victim (8 B write + flush, one at a time,
# spinning or blocking) for BENCH_NB_SECONDS (3) alone and beside a writer
# of 1 MiB at QD16, and the writer alone; native processes beside native
# ones (rxe's own arbitration between queue pairs), brokered beside
# brokered (rpmad posts at once: the same arbitration, plus rpmad's).
# BENCH_RXE_PARTS: "base", "neighbours" or both (the default).
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

PARTS=${BENCH_RXE_PARTS:-base neighbours}
SECS=${BENCH_NB_SECONDS:-3}
part() { [[ " $PARTS " == *" $1 "* ]]; }
if part base; then
lat_wl=$(perftest wl ib_write_lat -s 8 -n "$ITERS" | awk '{print $5}')
lat_rd=$(perftest rd ib_read_lat -s 4096 -n "$ITERS" | awk '{print $5}')
# ib_send_lat reports half a round trip
lat_pp=$(perftest pp ib_send_lat -s 8 -n "$ITERS" | awk '{printf "%.2f", 2 * $5}')
bw1=$(perftest bw1 ib_write_bw -s 1048576 -n 200 -t 1 | awk '{print $4}')
bw16=$(perftest bw16 ib_write_bw -s 1048576 -n 400 -t 16 | awk '{print $4}')
fi

start_rpmad() {
	"$PREFIX/sbin/rpmad" --foreground --socket "$W/$1.sock" --transport verbs \
		--config "${RXE_BENCH_CONFIG:-/dev/null}" > "$W/$1.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 200); do [ -S "$W/$1.sock" ] && return; sleep 0.05; done
}
start_rpmad A; start_rpmad B

# R[kind-wait-name] holds one value per round, space-separated
declare -A R
start_server() { # start_server KIND WAIT PORT OUT: on rpmad A, until it listens ($server)
	RPMAD_SOCKET=$W/A.sock "$BIN/${1}_pair" server $A "$3" --wait "$2" \
		> "$4.server" 2>&1 &
	server=$!
	pids+=($server)
	for _ in $(seq 200); do grep -q listening "$4.server" && break; sleep 0.05; done
}
collect() { # collect KEY OUT: the client's "NAME VALUE UNIT" lines into R
	while read -r name value _; do R[$1-$name]+="$value "; done < "$2.client"
}
pair() { # pair KIND(native|brokered) WAIT PORT ROUND
	local kind=$1 wait=$2 port=$3 out=$W/$1-$2-$4
	start_server "$kind" "$wait" "$port" "$out"
	RPMAD_SOCKET=$W/B.sock timeout 600 "$BIN/${kind}_pair" client $A "$port" --wait "$wait" \
		--iters "$ITERS" > "$out.client" 2>&1
	wait "$server"
	collect "$kind-$wait" "$out"
}
# native and brokered alternate, ROUNDS times: the emulated VM's speed
# drifts with the host's load, and each row is the median of its rounds
port=7700
if part base; then
for round in $(seq "$ROUNDS"); do
	for wait in spin block; do
		for kind in native brokered; do port=$((port + 1)); pair $kind $wait $port "$round"; done
	done
done
fi

start_role() { # start_role KIND WAIT ROLE OUT: a pair in the background, $! its client
	local kind=$1 wait=$2 role=$3 out=$4
	port=$((port + 1))
	start_server "$kind" "$wait" "$port" "$out"
	RPMAD_SOCKET=$W/B.sock timeout 600 "$BIN/${kind}_pair" client $A "$port" --wait "$wait" \
		--role "$role" --seconds "$SECS" > "$out.client" 2>&1 &
}
if part neighbours; then
for round in $(seq "$ROUNDS"); do
	for kind in native brokered; do
		out=$W/nb-$kind-writer-$round
		start_role $kind block writer "$out"; wait $!; collect $kind-alone "$out"
		for wait in spin block; do
			out=$W/nb-$kind-$wait-victim-$round
			start_role $kind $wait victim "$out"; wait $!; collect $kind-$wait-alone "$out"
			wout=$W/nb-$kind-$wait-beside-writer-$round
			start_role $kind block writer "$wout"; w=$!
			out=$W/nb-$kind-$wait-beside-victim-$round
			start_role $kind $wait victim "$out"; v=$!
			wait $v; wait $w
			collect $kind-$wait-beside "$out"; collect $kind-$wait-beside "$wout"
		done
	done
done
fi
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
if part base; then
row "8 B write+flush latency" write_flush_lat_us "$lat_wl" us
row "4 KiB read latency" read_lat_us "$lat_rd" us
row "1 MiB write bw, QD1" write_bw_qd1_mbs "$bw1" MB/s
row "1 MiB write bw, QD16" write_bw_qd16_mbs "$bw16" MB/s
row "8 B send/recv ping-pong" pingpong_rt_us "$lat_pp" us
fi
if part neighbours; then
	echo
	echo "victim (8 B write + flush) beside a 1 MiB QD16 writer, ${SECS} s each, medians of $ROUNDS rounds"
	printf '%-9s %-5s %17s %17s %7s %17s %7s\n' kind wait "alone p50/p99 us" \
		"beside p50/p99 us" "p99 x" "writer MB/s b/a" "bw x"
	for kind in native brokered; do
		for wait in spin block; do
			a50=$(median <<< "${R[$kind-$wait-alone-victim_p50_us]:-}")
			a99=$(median <<< "${R[$kind-$wait-alone-victim_p99_us]:-}")
			b50=$(median <<< "${R[$kind-$wait-beside-victim_p50_us]:-}")
			b99=$(median <<< "${R[$kind-$wait-beside-victim_p99_us]:-}")
			wb=$(median <<< "${R[$kind-$wait-beside-writer_mbs]:-}")
			wa=$(median <<< "${R[$kind-alone-writer_mbs]:-}")
			printf '%-9s %-5s %17s %17s %7s %17s %7s\n' $kind $wait \
				"${a50:--}/${a99:--}" "${b50:--}/${b99:--}" "$(ratio "$b99" "$a99")" \
				"${wb:--}/${wa:--}" "$(ratio "$wb" "$wa")"
		done
	done
fi
for f in "$W"/*.client "$W"/*.log; do
	grep -qiE 'error|fail' "$f" && { echo "--- $f"; tail -5 "$f"; }
done
exit 0
