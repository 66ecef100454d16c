#!/usr/bin/env bash
# vm-suite.sh -- the verbs transport on a real verbs stack: runs inside the
# Soft-RoCE VM (scripts/run-vm-tests.sh boots it), where rxe0 serves
# 192.168.100.1 on veth0 and rxe1 serves 192.168.100.2 on veth1.
#
# usage: vm-suite.sh PREFIX BUILDDIR [SECTION...]
#   PREFIX    a `make install` of this tree (rpmad, librpma.so, librpma.h)
#   BUILDDIR  the build tree whose test programs run here
#   SECTION   conformance, conformance-one, integration, failure, link,
#             interop, bench (default: all but bench)
#
# Each section prints its own lines; the last line is "N passed, M failed"
# over the sections' parts. Logs of failed parts are printed; with
# RXE_SUITE_KEEP=DIR the work folder is copied there.
set -u
PREFIX=$(realpath "$1"); BUILD=$(realpath "$2"); shift 2
HERE=$(dirname "$(realpath "$0")")
TOP=$(realpath "$HERE/../..")
CONF=$(realpath "$TOP/../shared/conformance/run.sh" 2>/dev/null || true)
SECTIONS=("$@")
# link last: a link taken down and up again is not the same for rxe
[ ${#SECTIONS[@]} -gt 0 ] || SECTIONS=(conformance conformance-one integration failure interop link)
export SERVER_ADDR=192.168.100.1 CLIENT_ADDR=192.168.100.2
export WORK=$(mktemp -d "${TMPDIR:-/tmp}/rxe-suite.XXXXXX")
PASSED=0 FAILED=0 FAILED_NAMES=""

pass() { PASSED=$((PASSED + 1)); echo "ok    $1"; }
fail() { FAILED=$((FAILED + 1)); FAILED_NAMES="$FAILED_NAMES $1"; echo "FAIL  $1"; }
section() { echo; echo "== $1 ($(date +%T))"; }

# the rxe devices must be there: nothing below means anything without them
rdma link show | grep 'rxe0.*ACTIVE' >/dev/null || { echo "no active rxe0"; echo "0 passed, 1 failed"; exit 1; }

# conformance NAME [ENV...]: the upstream examples over verbs
conformance() {
	local name=$1; shift
	section "$name"
	if [ -z "$CONF" ]; then fail "$name (no ../shared/conformance)"; return; fi
	# run.sh waits for a server with `ss`, which does not see RDMA CM
	# listeners: tests/rxe/shim/ss asks `rdma resource show cm_id` too
	env "$@" PATH="$HERE/shim:$PATH" TRANSPORT=verbs ADDR=$SERVER_ADDR \
		"$CONF" "$PREFIX" > "$WORK/$name.log" 2>&1
	local rc=$? last
	cat "$WORK/$name.log"
	last=$(tail -n 1 "$WORK/$name.log")
	if [ $rc = 0 ]; then pass "$name: $last"; else fail "$name: $last"; fi
}

# check_prog NAME PATH: one Check test program against two rpmads over verbs
check_prog() {
	local name=$1 prog=$2
	local log=$WORK/$name.log
	RPMAD_TEST_TRANSPORT=verbs RPMAD_TEST_ADDR=$SERVER_ADDR \
		RPMAD_BIN=$BUILD/rpmad/rpmad RPMACTL_BIN=$BUILD/rpmactl/rpmactl \
		TOP_SRCDIR=$TOP TOP_BUILDDIR=$BUILD CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120} \
		timeout 900 "$prog" > "$log" 2>&1
	local rc=$?
	local summary
	summary=$(grep -E '^[0-9]+%: Checks' "$log" | tail -n 1)
	if [ $rc = 0 ]; then pass "$name: $summary"
	elif [ $rc = 77 ]; then echo "skip  $name"; PASSED=$((PASSED + 1))
	else fail "$name: ${summary:-exit $rc}"; grep -E ':[FE]:' "$log" | head -20 | sed 's/^/    /'; tail -n 30 "$log" | sed 's/^/    /'; fi
}

for s in "${SECTIONS[@]}"; do
	case $s in
	conformance) conformance conformance ;;
	conformance-one) conformance conformance-one ONE_DAEMON=1 PORT_BASE=7404 ;;
	integration)
		section integration
		for t in "$BUILD"/tests/integration/it_*; do
			[ -x "$t" ] && [ -f "$t" ] || continue
			case $t in *.o|*.log|*.trs) continue ;; esac
			check_prog "$(basename "$t")" "$t"
		done ;;
	failure)
		section failure
		# an application and an rpmad killed mid-stream; rpmad
		# restarted under running applications
		check_prog fail_kill "$BUILD/tests/failure/fail_kill"
		check_prog fail_restart "$BUILD/tests/failure/fail_restart" ;;
	link)
		section "link and device"
		check_prog rxe_link "$BUILD/tests/rxe/rxe_link" ;;
	interop)
		section "interop with native librpma"
		if INTEROP_BIN=$BUILD/tests/rxe/bin "$HERE/interop.sh" "$PREFIX" \
				> "$WORK/interop.log" 2>&1; then
			pass "interop: $(tail -n 1 "$WORK/interop.log")"
		else
			cat "$WORK/interop.log"; fail "interop"
		fi ;;
	bench)
		section "bench over rxe"
		"$TOP/bench/rxe/bench-rxe.sh" "$PREFIX" "$BUILD/tests/rxe/bin" && pass bench || fail bench ;;
	*) echo "unknown section $s"; fail "$s" ;;
	esac
done

if [ -n "${RXE_SUITE_KEEP:-}" ]; then cp -r "$WORK" "$RXE_SUITE_KEEP/" 2>/dev/null; fi
echo
[ -n "$FAILED_NAMES" ] && echo "failed:$FAILED_NAMES"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
