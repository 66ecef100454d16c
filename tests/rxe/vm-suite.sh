#!/usr/bin/env bash
# vm-suite.sh -- the verbs transport on a real verbs stack: runs inside the
# Soft-RoCE VM (scripts/run-vm-tests.sh boots it), where rxe0 serves
# 192.168.100.1 on veth0 and rxe1 serves 192.168.100.2 on veth1, with two
# emulated NVDIMMs and a virtio disk (tests/rxe/pmem-setup.sh makes them a
# device DAX, an fsdax file system and an ext4 of the page cache).
#
# usage: vm-suite.sh PREFIX BUILDDIR [SECTION...]
#   PREFIX    a `make install` of this tree (rpmad, librpma.so, librpma.h)
#   BUILDDIR  the build tree whose test programs run here; the upstream
#             examples built against PREFIX are in BUILDDIR/tests/rxe/examples
#             (build-examples.sh), the interop programs in .../bin
#   SECTION   conformance     the upstream examples across two rpmads
#             conformance-one ... with servers and clients on one rpmad
#             pmem            the examples that take a <pmem-path> on a device
#                             DAX, an fsdax file and a page-cache file, over
#                             verbs on two rpmads and on one, and over tcp;
#                             it_persist (every kind of memory) over tcp
#             integration     the integration tests over verbs (clients one
#                             after another and servers side by side: it_serve;
#                             every kind of memory: it_persist)
#             native-1x       upstream's 1.3.0 examples built against native
#                             librpma 1.2 (build-interop.sh's unpacking) and
#                             run through PREFIX's librpma.so.0 over verbs
#                             (the binary drop-in: docs/abi.md)
#             failure, interop, link, bench (not by default)
#             (default: all but bench; the power cut has a boot of its own,
#             see run-vm-tests.sh)
#
# Each section prints its own lines; the last line is "N passed, M failed"
# over the sections' parts. Logs of failed parts are printed; with
# RXE_SUITE_KEEP=DIR the work folder is copied there.
set -u
PREFIX=$(realpath "$1"); BUILD=$(realpath "$2"); shift 2
HERE=$(dirname "$(realpath "$0")")
TOP=$(realpath "$HERE/../..")
EXAMPLES_BIN=$BUILD/tests/rxe/examples
SECTIONS=("$@")
# link last: a link taken down and up again is not the same for rxe
[ ${#SECTIONS[@]} -gt 0 ] || SECTIONS=(conformance conformance-one native-1x pmem integration failure interop link)
export SERVER_ADDR=192.168.100.1 CLIENT_ADDR=192.168.100.2
export WORK=$(mktemp -d "${TMPDIR:-/tmp}/rxe-suite.XXXXXX")
PASSED=0 FAILED=0 FAILED_NAMES=""

pass() { PASSED=$((PASSED + 1)); echo "ok    $1"; }
fail() { FAILED=$((FAILED + 1)); FAILED_NAMES="$FAILED_NAMES $1"; echo "FAIL  $1"; }
section() { echo; echo "== $1 ($(date +%T))"; }

# the rxe devices must be there: nothing below means anything without them
rdma link show | grep 'rxe0.*ACTIVE' >/dev/null || { echo "no active rxe0"; echo "0 passed, 1 failed"; exit 1; }

# the persistent memory and the disk, for every section: the tests take
# them from RPMAD_TEST_DEVDAX, RPMAD_TEST_FSDAX_DIR and RPMAD_TEST_FILE_DIR
DEVDAX="" FSDAX_DIR="" DISK_DIR=""
if layout=$("$HERE/pmem-setup.sh" 2> "$WORK/pmem-setup.log"); then
	eval "$layout"
	export RPMAD_TEST_DEVDAX=$DEVDAX RPMAD_TEST_FSDAX_DIR=$FSDAX_DIR
	export RPMAD_TEST_FILE_DIR=$DISK_DIR
else
	echo "no persistent memory in this VM:"; sed 's/^/    /' "$WORK/pmem-setup.log"
fi

# examples NAME [VAR=VALUE...] [-- EXAMPLE...]: the upstream examples
# (examples.sh; all of them unless named)
examples() {
	local name=$1; shift
	local vars=() names=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	names=("$@")
	local log=$WORK/${name//[ ,]/_}.log
	# over verbs the servers listen on RDMA CM ids: tests/rxe/shim/ss
	# finds those too
	env "${vars[@]}" PATH="$HERE/shim:$PATH" ADDR=$SERVER_ADDR \
		"$HERE/examples.sh" "$EXAMPLES_BIN" "$PREFIX" "${names[@]}" \
		> "$log" 2>&1
	local rc=$? last
	if [ $rc = 0 ]; then sed -n '/^ok /p' "$log" | sed 's/^ok    /      /'; else cat "$log"; fi
	last=$(tail -n 1 "$log")
	if [ $rc = 0 ]; then pass "$name: $last"; else fail "$name: $last"; fi
}

# native_1x: conformance/run.sh builds the 1.x examples here against the
# native library (the compiler in the VM is slow: five examples, minutes)
native_1x() {
	local conf=$TOP/../shared/conformance native=$BUILD/tests/rxe/native
	local log=$WORK/native-1x.log
	if [ ! -x "$conf/run.sh" ] || [ ! -d "$conf/rpma-1.3.0-examples" ] ||
			[ ! -d "$native" ]; then
		fail "native-1x (no ../shared/conformance 1.x examples or native librpma)"
		return
	fi
	TRANSPORT=verbs ADDR=$SERVER_ADDR PORT_BASE=7504 NATIVE_DIR=$native \
		EXAMPLES=$conf/rpma-1.3.0-examples "$conf/run.sh" "$PREFIX" \
		> "$log" 2>&1
	local rc=$? last
	if [ $rc = 0 ]; then sed -n '/^ok /p' "$log" | sed 's/^ok    /      /'; else cat "$log"; fi
	last=$(tail -n 1 "$log")
	if [ $rc = 0 ]; then pass "native-1x: $last"; else fail "native-1x: $last"; fi
}

# check_prog NAME PATH [TRANSPORT]: one Check test program against two
# rpmads (over verbs unless TRANSPORT says otherwise)
check_prog() {
	local name=$1 prog=$2 transport=${3:-verbs}
	local log=$WORK/$name.log
	RPMAD_TEST_TRANSPORT=$transport RPMAD_TEST_ADDR=$SERVER_ADDR \
		RPMAD_BIN=$BUILD/rpmad/rpmad RPMACTL_BIN=$BUILD/rpmactl/rpmactl \
		TOP_SRCDIR=$TOP TOP_BUILDDIR=$BUILD CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120} \
		timeout 900 "$prog" > "$log" 2>&1
	local rc=$?
	local summary
	summary=$(grep -E '^[0-9]+%: Checks' "$log" | tail -n 1)
	grep -h "skipped" "$log" | sed 's/^/      /'
	if [ $rc = 0 ]; then pass "$name: $summary"
	elif [ $rc = 77 ]; then echo "skip  $name"; PASSED=$((PASSED + 1))
	else fail "$name: ${summary:-exit $rc}"; grep -E ':[FE]:' "$log" | head -20 | sed 's/^/    /'; tail -n 30 "$log" | sed 's/^/    /'; fi
}

# pmem: the persistent examples on every kind, where rpmad can take it
pmem() {
	if [ -z "$DEVDAX" ]; then fail "pmem (no persistent memory)"; return; fi
	local list=(03-read-to-persistent 04-write-to-persistent 05-flush-to-persistent 09-flush-to-persistent-GPSPM)
	local have=() e
	for e in "${list[@]}"; do [ -d "$EXAMPLES_BIN/$e" ] && have+=("$e"); done
	local kinds=("devdax:$DEVDAX" "fsdax:$FSDAX_DIR" "file:$DISK_DIR") k port=7800
	for k in "${kinds[@]}"; do
		examples "${k%%:*}, verbs, two rpmads" TRANSPORT=verbs PMEM="$k" PORT_BASE=$port -- "${have[@]}"
		examples "${k%%:*}, verbs, one rpmad" TRANSPORT=verbs ONE_DAEMON=1 PMEM="$k" PORT_BASE=$((port + 20)) -- "${have[@]}"
		examples "${k%%:*}, tcp, two rpmads" TRANSPORT=tcp PMEM="$k" PORT_BASE=$((port + 40)) -- "${have[@]}"
		port=$((port + 60))
	done
	check_prog "it_persist over tcp" "$BUILD/tests/integration/it_persist" tcp
}

for s in "${SECTIONS[@]}"; do
	case $s in
	conformance) section "upstream examples across two rpmads"; examples conformance TRANSPORT=verbs PORT_BASE=7204 ;;
	conformance-one) section "upstream examples on one rpmad"; examples conformance-one TRANSPORT=verbs ONE_DAEMON=1 PORT_BASE=7404 ;;
	native-1x) section "native librpma 1.2 builds of the 1.x examples, through rpmad"; native_1x ;;
	pmem) section "persistent memory: device DAX, fsdax, page cache"; pmem ;;
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
		# restarted under running applications (a device handle
		# outliving it); rpmad stopped during and between calls
		check_prog fail_kill "$BUILD/tests/failure/fail_kill"
		check_prog fail_restart "$BUILD/tests/failure/fail_restart"
		check_prog fail_stall "$BUILD/tests/failure/fail_stall" ;;
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
