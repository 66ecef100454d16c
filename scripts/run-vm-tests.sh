#!/usr/bin/env bash
# run-vm-tests.sh -- the verbs transport on real RDMA, and persistent
# memory for real: boots the Soft-RoCE VM (../shared/rxe-vm/run-in-rxe-vm.sh:
# QEMU, Debian's kernel, rxe0 and rxe1) with two emulated NVDIMMs and a
# virtio disk, each backed by a file here, and runs tests/rxe/vm-suite.sh
# there against a build and an install of this tree: the upstream examples
# over verbs across two rpmads and on one, the persistent ones on a device
# DAX, an fsdax file and a page-cache file, the integration tests with
# --transport verbs, an application and an rpmad killed mid-stream, the
# link cut and the device removed, and native librpma on the other end.
# Then it boots the VM once more for the power cut (tests/rxe/powercut.sh)
# and checks here what survived (tests/rxe/powercut-check.sh).
#
# usage: scripts/run-vm-tests.sh [SECTION...]
#   SECTION: those of tests/rxe/vm-suite.sh, and powercut (default: all)
#
# It uses _build and _inst as scripts/run-tests.sh leaves them (BUILD and
# PREFIX override). Installs what the VM needs first (scripts/install-deps.sh
# does too). RXE_VM_TIMEOUT bounds each VM run (default 1200 s).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/_build}
PREFIX=${PREFIX:-$top/_inst}
RUNNER=${RXE_VM_RUNNER:-$top/../shared/rxe-vm/run-in-rxe-vm.sh}
EXAMPLES=${EXAMPLES:-$top/../shared/conformance/rpma-0.12.0-examples}
T0=$SECONDS

[ -x "$BUILD/rpmad/rpmad" ] || { echo "run-vm-tests: no build in $BUILD (run scripts/run-tests.sh, or configure and make there)"; exit 2; }
[ -x "$PREFIX/sbin/rpmad" ] || { echo "run-vm-tests: nothing installed in $PREFIX (make install)"; exit 2; }
[ -x "$RUNNER" ] || { echo "run-vm-tests: $RUNNER not found"; exit 2; }

sections=() powercut=1
if [ $# -gt 0 ]; then
	powercut=0
	for s in "$@"; do
		if [ "$s" = powercut ]; then powercut=1; else sections+=("$s"); fi
	done
fi

# the test programs of the rxe suite, the interop programs built against
# this install and against Debian's native librpma, and the upstream
# examples built against this install (a compiler in the VM is slow)
make -C "$BUILD" -s check TESTS= >/dev/null
"$top/tests/rxe/build-interop.sh" "$PREFIX" "$BUILD/tests/rxe"
if [ -d "$EXAMPLES" ]; then
	"$top/tests/rxe/build-examples.sh" "$PREFIX" "$EXAMPLES" "$BUILD/tests/rxe/examples"
else
	echo "run-vm-tests: no upstream examples at $EXAMPLES"
	rm -rf "$BUILD/tests/rxe/examples" && mkdir -p "$BUILD/tests/rxe/examples"
fi

# where the VM may write what outlives it: logs of failed parts, the
# power cut's acknowledgements; and the files behind its NVDIMMs and disk
keep=$top/_vm-results
rm -rf "$keep" && mkdir -p "$keep/powercut"
# (in the build tree: the disk is opened O_DIRECT, which tmpfs refuses)
media=$(mktemp -d "$BUILD/vm-media.XXXXXX")
trap 'rm -rf "$media"' EXIT
fresh_media() {
	rm -f "$media"/*
	truncate -s 64M "$media/nvdimm0" "$media/nvdimm1" "$media/disk"
}
export RXE_VM_DIR=${RXE_VM_DIR:-/tmp/rxe-vm}
export RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-1200}
export RXE_VM_RW="$keep"
export RXE_SUITE_KEEP="$keep"
export RXE_VM_ENV="RXE_SUITE_KEEP ${RXE_VM_ENV:-}"
# two NVDIMMs of 64 MiB, each a file here shared with the guest's memory,
# and a disk the host does not cache (what the guest did not write to it
# is lost when its power goes)
export RXE_VM_MACHINE=pc,nvdimm=on
export RXE_VM_MEM=${RXE_VM_MEM:-2048},slots=4,maxmem=4G
export RXE_VM_MODULES="nfit nd_pmem dax_pmem device_dax virtio_blk ${RXE_VM_MODULES:-}"
export RXE_VM_QEMU_ARGS="
	-object memory-backend-file,id=nv0,share=on,mem-path=$media/nvdimm0,size=64M
	-device nvdimm,id=nvdimm0,memdev=nv0
	-object memory-backend-file,id=nv1,share=on,mem-path=$media/nvdimm1,size=64M
	-device nvdimm,id=nvdimm1,memdev=nv1
	-drive file=$media/disk,if=virtio,cache=none,format=raw
	${RXE_VM_QEMU_ARGS:-}"

r=0
if [ $# = 0 ] || [ ${#sections[@]} -gt 0 ]; then
	fresh_media
	t=$SECONDS
	"$RUNNER" "$top/tests/rxe/vm-suite.sh" "$PREFIX" "$BUILD" "${sections[@]}" || r=$?
	echo "run-vm-tests: the suite's boot took $((SECONDS - t)) s"
fi

if [ $powercut = 1 ]; then
	echo
	echo "== power cut ($(date +%T))"
	fresh_media
	t=$SECONDS
	# the guest cuts its own power: no exit status (125) is the good end,
	# and the runner's complaint about it is kept for a bad one
	set +e
	"$RUNNER" "$top/tests/rxe/powercut.sh" "$PREFIX" "$BUILD" \
		"$keep/powercut" 2> "$keep/powercut/vm.stderr"
	rc=$?
	set -e
	if [ $rc != 125 ]; then
		echo "FAIL  power cut: the VM ended with status $rc"
		tail -n 20 "$keep/powercut/vm.stderr"; r=1
	elif ! "$top/tests/rxe/powercut-check.sh" "$keep/powercut" \
			"$media/nvdimm0" "$media/disk" "$BUILD/tests/rxe/pmem_stream"; then
		r=1
	fi
	echo "run-vm-tests: the power cut's boot took $((SECONDS - t)) s"
fi
echo "run-vm-tests: $((SECONDS - T0)) s in all"
exit $r
