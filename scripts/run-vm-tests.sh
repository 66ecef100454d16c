#!/usr/bin/env bash
# run-vm-tests.sh -- the verbs transport on real RDMA: boots the Soft-RoCE VM
# (../shared/rxe-vm/run-in-rxe-vm.sh: QEMU, Debian's kernel, rxe0 and rxe1)
# and runs tests/rxe/vm-suite.sh there against a build and an install of
# this tree: the upstream examples over verbs across two rpmads and on one,
# the integration tests with --transport verbs, an application and an rpmad
# killed mid-stream, the link cut and the device removed, and native librpma
# on the other end.
#
# usage: scripts/run-vm-tests.sh [SECTION...]      (see tests/rxe/vm-suite.sh)
#
# It uses _build and _inst as scripts/run-tests.sh leaves them (BUILD and
# PREFIX override). Installs what the VM needs first (scripts/install-deps.sh
# does too). RXE_VM_TIMEOUT bounds the whole VM run (default 1200 s).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/_build}
PREFIX=${PREFIX:-$top/_inst}
RUNNER=${RXE_VM_RUNNER:-$top/../shared/rxe-vm/run-in-rxe-vm.sh}

[ -x "$BUILD/rpmad/rpmad" ] || { echo "run-vm-tests: no build in $BUILD (run scripts/run-tests.sh, or configure and make there)"; exit 2; }
[ -x "$PREFIX/sbin/rpmad" ] || { echo "run-vm-tests: nothing installed in $PREFIX (make install)"; exit 2; }
[ -x "$RUNNER" ] || { echo "run-vm-tests: $RUNNER not found"; exit 2; }

# the test programs of the rxe suite, and the interop programs built
# against this install and against Debian's native librpma
make -C "$BUILD" -s check TESTS= >/dev/null
"$top/tests/rxe/build-interop.sh" "$PREFIX" "$BUILD/tests/rxe"

# where the VM may write what outlives it (logs of failed parts)
keep=$top/_vm-results
rm -rf "$keep" && mkdir -p "$keep"
export RXE_VM_DIR=${RXE_VM_DIR:-/tmp/rxe-vm}
export RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-1200}
export RXE_VM_RW="$keep"
export RXE_SUITE_KEEP="$keep"
export RXE_VM_ENV="RXE_SUITE_KEEP ${RXE_VM_ENV:-}"
exec "$RUNNER" "$top/tests/rxe/vm-suite.sh" "$PREFIX" "$BUILD" "$@"
