#!/usr/bin/env bash
# run-tests.sh -- the full tier: check the format of the C lines the last
# commit changed (scripts/check-format.sh), build from scratch and run
# every test: make check with -Werror, the conformance programs against an
# installed build, programs built against native librpma
# (tests/native/native-test.sh), the verbs transport on Soft-RoCE in a VM
# (scripts/run-vm-tests.sh), the Debian packages
# (tests/deploy/deb-test.sh), the same tests under ASan+UBSan, the
# libFuzzer targets for a bounded time, and make distcheck. This is the
# README's test command; CI runs it too. SKIP_FORMAT=1, SKIP_VM=1 and
# SKIP_DEB=1 leave steps out; tests/README.md has the quick tier.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=$(nproc)

# first, and cheap: a change that breaks the format fails in seconds
echo "== format of the changed C lines (scripts/check-format.sh)"
if [ "${SKIP_FORMAT:-0}" = 1 ]; then
	echo "(SKIP_FORMAT=1: skipped)"
else
	scripts/check-format.sh
fi

[ -x configure ] || autoreconf -fi

# after a failed make check: the suite's log, then, last (where a short
# tail of CI's output still shows it), which tests failed and Check's
# lines for the failed checks
show_failures() {
	local log
	for log in "$@"; do
		[ -f "$log" ] || continue
		cat "$log"
		echo "== failed in $log:"
		grep -E '^(FAIL|ERROR|XPASS):' "$log" || true
		grep -E ':[FE]:' "$log" | cut -c1-300 | tail -n 20 || true
	done
}

# librpmaclient talks to an rpmad of root only, unless built to trust
# another user: the tests' rpmads run as whoever runs the tests
user_opt=()
[ "$(id -u)" = 0 ] || user_opt=(--with-rpmad-user="$(id -un)")

echo "== build (-Werror) and make check"
rm -rf _build && mkdir _build
(cd _build && ../configure --enable-werror --prefix="$top/_inst" "${user_opt[@]}" >/dev/null &&
	make -j"$jobs" && make -j"$jobs" check && make install >/dev/null) || {
	show_failures _build/test-suite.log; exit 1; }

echo "== conformance: upstream example programs across two rpmads"
if [ -x ../shared/conformance/run.sh ]; then
	../shared/conformance/run.sh "$top/_inst"
	echo "-- and with server and client on one rpmad"
	ONE_DAEMON=1 PORT_BASE=7404 ../shared/conformance/run.sh "$top/_inst"
else
	echo "(../shared/conformance not found: skipped)"
fi

echo "== binary drop-in: programs built against native librpma, through rpmad"
# Debian's librpma 1.2 (apt-get download) with upstream's 1.3.0 examples
# and fio 3.33 (Debian's source) built against it, 0.12 builds of the
# 0.12.0 examples (docs/abi.md); a few minutes, most of them fio's build
tests/native/native-test.sh "$top/_inst"

echo "== the verbs transport on real RDMA: Soft-RoCE in a VM"
# conformance over verbs (two rpmads and one), the integration tests with
# --transport verbs, kills, a cut link, native librpma on the other end
# (scripts/run-vm-tests.sh; SKIP_VM=1 leaves it out)
if [ "${SKIP_VM:-0}" = 1 ]; then
	echo "(SKIP_VM=1: skipped)"
elif [ -x ../shared/rxe-vm/run-in-rxe-vm.sh ]; then
	scripts/run-vm-tests.sh
else
	echo "(../shared/rxe-vm not found: skipped)"
fi

echo "== the Debian packages: build, install, serve the demo, purge"
# root only (dpkg -i); about a minute. SKIP_DEB=1 leaves it out.
if [ "${SKIP_DEB:-0}" = 1 ] || [ "$(id -u)" != 0 ]; then
	echo "(skipped: SKIP_DEB=1 or not root)"
else
	tests/deploy/deb-test.sh
fi

echo "== make check under AddressSanitizer and UndefinedBehaviorSanitizer"
rm -rf _build-asan && mkdir _build-asan
(cd _build-asan && ../configure --enable-werror --enable-sanitizers "${user_opt[@]}" >/dev/null &&
	make -j"$jobs" && make -j"$jobs" check) || {
	show_failures _build-asan/test-suite.log; exit 1; }

echo "== fuzz targets (clang, ${FUZZ_SECONDS:=20} s each, from the seed corpus)"
FUZZ_OUT="$top/_fuzz-findings" tests/fuzz/run-fuzzers.sh "$FUZZ_SECONDS"

echo "== make distcheck"
# (its build is deep inside _build, and removed only once it passed)
(cd _build && make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror \
	>distcheck.log 2>&1) || {
	tail -n 40 _build/distcheck.log
	show_failures _build/*/_build/sub/test-suite.log; exit 1; }
echo "== all tests passed"
