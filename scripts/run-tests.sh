#!/usr/bin/env bash
# run-tests.sh -- build from scratch and run every test: make check with
# -Werror, the conformance programs against an installed build, the same
# tests under ASan+UBSan, the libFuzzer targets for a bounded time, and
# make distcheck. This is the README's test command; CI runs it too.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=$(nproc)

[ -x configure ] || autoreconf -fi

echo "== build (-Werror) and make check"
rm -rf _build && mkdir _build
(cd _build && ../configure --enable-werror --prefix="$top/_inst" >/dev/null &&
	make -j"$jobs" && make -j"$jobs" check && make install >/dev/null) || {
	cat _build/test-suite.log 2>/dev/null || true; exit 1; }

echo "== conformance: upstream example programs across two rpmads"
if [ -x ../shared/conformance/run.sh ]; then
	# 08-messages-ping-pong is run by tests/integration instead: run.sh
	# wants 3 "Value sent:" lines from "7 3", and the unmodified client
	# prints rounds - 1 = 2 of them (while (--rounds)); see the README
	examples=$(cd ../shared/conformance/rpma-0.12.0-examples &&
		ls -d [0-9][0-9]-* | grep -v '^08-messages-ping-pong$')
	# shellcheck disable=SC2086
	../shared/conformance/run.sh "$top/_inst" $examples
else
	echo "(../shared/conformance not found: skipped)"
fi

echo "== make check under AddressSanitizer and UndefinedBehaviorSanitizer"
rm -rf _build-asan && mkdir _build-asan
(cd _build-asan && ../configure --enable-werror --enable-sanitizers >/dev/null &&
	make -j"$jobs" && make -j"$jobs" check) || {
	cat _build-asan/test-suite.log 2>/dev/null || true; exit 1; }

echo "== fuzz targets (clang, ${FUZZ_SECONDS:=20} s each, from the seed corpus)"
FUZZ_OUT="$top/_fuzz-findings" tests/fuzz/run-fuzzers.sh "$FUZZ_SECONDS"

echo "== make distcheck"
(cd _build && make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror >/dev/null)
echo "== all tests passed"
