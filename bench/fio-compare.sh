#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# fio-compare.sh -- fio's librpma engines (bench/fio-librpma.sh) against
# several installed builds side by side: the runs alternate between them,
# round after round, so that what else the host does falls on all alike;
# prints each run's IOPS, then each build's median and its ratio to the
# first build's, and each other build's ratios to the first within each
# round with their median (what to read on a noisy host).
#
#   FIO=path/to/fio bench/fio-compare.sh [-r ROUNDS] [-s SECONDS] \
#       [-c ENGINE:JOBS:DEPTH]... NAME=PREFIX[,VAR=VALUE...]...
#
# PREFIX is an installed build (PREFIX/sbin/rpmad, PREFIX/lib); VAR=VALUE
# go into fio-librpma.sh's environment and so both fio processes'
# (RPMA_LANDING=0, RPMA_STAGING=0: the library's switches,
# librpmaclient(7); SERVER_MEM=shm, CLIENT_IOMEM=mmapshared: where the
# memory is, fio-librpma.sh). Cases default to apm:1:16 and
# apm:2:16. Example, a baseline against this tree's build with and without
# the landing thread:
#
#   FIO=... bench/fio-compare.sh -r 5 base=/opt/rpmad-236 new=_inst \
#       new-nolanding=_inst,RPMA_LANDING=0
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
rounds=3
secs=5
cases=()
while getopts r:s:c: o; do
	case $o in
	r) rounds=$OPTARG ;;
	s) secs=$OPTARG ;;
	c) cases+=("$OPTARG") ;;
	*) sed -n '4,23p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '4,23p' "$0" >&2; exit 2; }
[ ${#cases[@]} -gt 0 ] || cases=(apm:1:16 apm:2:16)

names=()
declare -A prefix envs
for side in "$@"; do
	name=${side%%=*}
	rest=${side#*=}
	names+=("$name")
	prefix[$name]=${rest%%,*}
	envs[$name]=""
	[ "$rest" = "${prefix[$name]}" ] || envs[$name]=${rest#*,}
	[ -x "${prefix[$name]}/sbin/rpmad" ] ||
		{ echo "no ${prefix[$name]}/sbin/rpmad" >&2; exit 2; }
done

# One run: its IOPS as a number (k and M expanded), or "failed" with the
# reason fio-librpma.sh gave on stderr: a failure is a finding, not a
# missing number.
run_one() {
	local name=$1 eng=$2 jobs=$3 depth=$4 out
	local -a env=()
	IFS=, read -r -a env <<< "${envs[$name]}"
	if ! out=$(env "${env[@]}" RPMAD_BIN="${prefix[$name]}/sbin/rpmad" \
		LIBDIR="${prefix[$name]}/lib" \
		"$here/fio-librpma.sh" "$eng" "$jobs" "$depth" "$secs" 2>&1); then
		sed "s/^/  $name: /" <<< "$out" >&2
		echo failed
		return
	fi
	echo "$out" | sed -nE 's/.*IOPS=([0-9.]+)([kM]?).*/\1 \2/p' |
		awk '{ m = $2 == "k" ? 1e3 : $2 == "M" ? 1e6 : 1;
		       printf "%d\n", $1 * m }'
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print 0; exit }
		print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

for c in "${cases[@]}"; do
	IFS=: read -r eng jobs depth <<< "$c"
	declare -A got=() at=()
	for ((r = 1; r <= rounds; r++)); do
		for name in "${names[@]}"; do
			iops=$(run_one "$name" "$eng" "$jobs" "$depth")
			printf 'fio %s %s job(s) QD%s round %d %-16s %s\n' \
				"$eng" "$jobs" "$depth" "$r" "$name" "$iops"
			[ "$iops" = failed ] || got[$name]+="$iops "
			at[$name:$r]=$iops
		done
	done
	first=""
	for name in "${names[@]}"; do
		m=$(tr ' ' '\n' <<< "${got[$name]:-}" | { grep . || true; } | median)
		n=$(wc -w <<< "${got[$name]:-}")
		[ "$n" = "$rounds" ] ||
			echo "== $name: $((rounds - n)) of $rounds runs failed"
		[ -n "$first" ] || first=$m
		ratio=$(awk -v a="$m" -v b="$first" \
			'BEGIN { printf "%.2f", b ? a / b : 0 }')
		printf '== fio %s %s job(s) QD%s %-16s median %8d IOPS  %sx %s\n' \
			"$eng" "$jobs" "$depth" "$name" "$m" "$ratio" \
			"${names[0]}"
	done
	# The host's noise moves every build of a round alike: the ratios
	# within each round, and their median, say more than the medians'.
	for name in "${names[@]:1}"; do
		ratios=""
		for ((r = 1; r <= rounds; r++)); do
			a=${at[$name:$r]} b=${at[${names[0]}:$r]}
			[ "$a" = failed ] || [ "$b" = failed ] || [ "$b" = 0 ] ||
				ratios+="$(awk -v a="$a" -v b="$b" \
					'BEGIN { printf "%.2f", a / b }') "
		done
		[ -n "$ratios" ] || continue
		printf '== fio %s %s job(s) QD%s %-16s per round %s: median %sx %s\n' \
			"$eng" "$jobs" "$depth" "$name" "${ratios% }" \
			"$(tr ' ' '\n' <<< "$ratios" | { grep . || true; } | median)" \
			"${names[0]}"
	done
	unset got at
done
