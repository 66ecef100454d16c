#!/bin/sh
# run-fuzzers.sh -- build rpmad's libFuzzer targets with clang (ASan and
# UBSan on) in a build directory of their own and run each of them for a
# bounded time, starting from the seed corpus in tests/fuzz/corpus.
#
# usage: tests/fuzz/run-fuzzers.sh [SECONDS] [TARGET...]
#   SECONDS  per target (default $FUZZ_SECONDS, else 60)
#   TARGET   request, wire_frame, wire_rx (default: all)
# environment:
#   FUZZ_BUILD_DIR  build here and keep it (default: a temporary directory,
#                   removed at the end)
#   FUZZ_OUT        where findings go (default ./fuzz-findings): crash-*,
#                   leak-*, timeout-*, oom-* files, each an input that
#                   reproduces it: $FUZZ_BUILD_DIR/tests/fuzz/fuzz_<target>
#                   FILE (or tests/fuzz/replay_<target> FILE in any build)
#   FUZZ_JOBS       make -j (default 2)
#   CC              the compiler (default clang)
#
# The seed corpus is not changed: each run fuzzes a copy, and says how
# many new inputs it found (copy them from the work directory printed if
# they are worth keeping). Exit status: 0 when no target found anything.
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-${FUZZ_SECONDS:-60}}
[ $# -gt 0 ] && shift
targets=${*:-request wire_frame wire_rx}
jobs=${FUZZ_JOBS:-2}
out=${FUZZ_OUT:-$PWD/fuzz-findings}
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ -n "${FUZZ_BUILD_DIR:-}" ]; then
	build=$FUZZ_BUILD_DIR
	mkdir -p "$build"
	keep_build=1
else
	build=$(mktemp -d "${TMPDIR:-/tmp}/rpmad-fuzz.XXXXXX")
	keep_build=0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/rpmad-fuzz-work.XXXXXX")
cleanup() {
	[ "$keep_build" = 1 ] || rm -rf "$build"
}
trap cleanup EXIT

build=$(cd "$build" && pwd)
if [ ! -f "$build/Makefile" ]; then
	echo "run-fuzzers: configuring in $build (CC=${CC:-clang} --enable-fuzzing)"
	(cd "$build" && "$src/configure" --quiet CC="${CC:-clang}" \
		--enable-fuzzing)
fi
bins=""
for t in $targets; do
	bins="$bins tests/fuzz/fuzz_$t"
done
echo "run-fuzzers: building$bins"
# shellcheck disable=SC2086
make -C "$build" -s -j"$jobs" $bins >/dev/null

found=0
for t in $targets; do
	mkdir -p "$work/$t"
	cp "$src/tests/fuzz/corpus/$t/"* "$work/$t/"
	before=$(ls "$work/$t" | wc -l)
	echo "run-fuzzers: fuzz_$t for $secs s (findings: $out/$t-*)"
	# leaks count; rpmad's own aborts and UBSan reports stop the run
	set +e
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
		"$build/tests/fuzz/fuzz_$t" -max_total_time="$secs" \
		-timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$out/$t-" \
		"$work/$t" >"$work/$t.log" 2>&1
	rc=$?
	set -e
	after=$(ls "$work/$t" | wc -l)
	grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' \
		"$work/$t.log" | sed "s/^/run-fuzzers:   /" || true
	echo "run-fuzzers:   corpus $before -> $after inputs ($work/$t)"
	if [ "$rc" -ne 0 ]; then
		echo "run-fuzzers: fuzz_$t FOUND SOMETHING (exit $rc):"
		tail -40 "$work/$t.log"
		found=1
	fi
done
echo "run-fuzzers: logs and grown corpora in $work"
exit $found
