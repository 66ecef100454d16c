#!/bin/sh
# install-deps.sh -- install every Debian package rpmad needs to build, test
# and run its conformance suite, what the Soft-RoCE VM of
# scripts/run-vm-tests.sh needs (QEMU, busybox, the rdma-core user space,
# perftest, ndctl and e2fsprogs for its persistent memory and disk; the
# VM's kernel comes from Debian's archive when it first boots), what
# builds its own Debian packages (tests/deploy/deb-test.sh), the
# benchmark's floors (libfabric-bin: fi_pingpong), the FUSE file
# system of the tests (libfuse3-dev, fuse3), clang-format for
# scripts/check-format.sh, and the container runtimes and tools of
# tests/deploy (podman with runc and crun, newuidmap, PyYAML for the
# manifests' check).
# Idempotent: installed packages are skipped.
set -eu

PACKAGES="
	autoconf automake libtool pkg-config make gcc
	libibverbs-dev librdmacm-dev libpmem2-dev libpmem-dev
	libsystemd-dev libudev-dev libprotobuf-c-dev protobuf-c-compiler libssl-dev
	check uthash-dev libbsd-dev liburing-dev libjemalloc2 libfuse3-dev fuse3
	iproute2 python3 procps groff-base systemd e2fsprogs ndctl
	clang clang-format
	qemu-system-x86 busybox-static kmod xz-utils binutils
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
	python3-prometheus-client bash-completion libcap2-bin
	debhelper dpkg-dev lintian
	libfabric-bin
	podman runc crun uidmap python3-yaml
"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "install-deps: everything is installed"
	exit 0
fi

SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "install-deps: installing$missing"
$SUDO apt-get update -q
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
