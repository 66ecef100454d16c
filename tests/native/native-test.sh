#!/usr/bin/env bash
# native-test.sh -- the binary drop-in: programs built once against native
# librpma run through rpmad, unchanged, with PREFIX's librpma.so.0 first in
# the loader's path (docs/abi.md).
#
#   1. Debian's librpma0 and librpma-dev 1.2.0 (apt-get download, dpkg -x
#      into a scratch folder: nothing is installed).
#   2. Upstream's 1.3.0 examples (../shared/conformance/rpma-1.3.0-examples)
#      built against that native librpma, run through two rpmads
#      (conformance/run.sh with NATIVE_DIR: ldd -r must show PREFIX's
#      librpma.so.0 with every version resolved).
#   3. Upstream's 0.12.0 examples built for LIBRPMA_0.12 (against PREFIX's
#      header with -DRPMA_API_0_12: the same version needs a native 0.12.0
#      build has; Debian's archive has no librpma 0.12.0 to build them
#      against), run the same way.
#   4. fio 3.33 from Debian's source (apt-get source, with APT lists of its
#      own), built with its librpma engines against native librpma 1.2:
#      the APM and GPSPM engines across two rpmads (bench/fio-librpma.sh,
#      short runs). FIO=path uses that fio instead; FIO=none skips.
#
# usage: tests/native/native-test.sh PREFIX   (make install's prefix)
# Environment: NATIVE_CACHE (keeps the download and the fio build between
# runs; default a fresh folder), PORT_BASE (7600), EXAMPLES_1X (the 1.x
# examples to run; default all five).
# Needs apt-get reaching Debian's archive, a C compiler, and for fio its
# build dependencies (libpmem-dev, libprotobuf-c-dev, librdmacm-dev);
# exits 77 (skipped) without ../shared/conformance or apt-get.
# Last line: "N passed, M failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# = 1 ] || { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
PREFIX=$(realpath "$1")
CONF=$(realpath "$top/../shared/conformance" 2>/dev/null || true)
PORT_BASE=${PORT_BASE:-7600}
EXAMPLES_1X=${EXAMPLES_1X:-01-connection 07-atomic-write \
	08srq-simple-messages-ping-pong-with-srq 12scch-receive-completion-queue \
	13-messages-ping-pong-with-srq}

say() { echo "native-test: $*"; }
[ -x "$CONF/run.sh" ] || { say "skipped: no ../shared/conformance/run.sh"; exit 77; }
command -v apt-get >/dev/null || { say "skipped: no apt-get"; exit 77; }

if [ -n "${NATIVE_CACHE:-}" ]; then
	work=$(realpath -m "$NATIVE_CACHE"); mkdir -p "$work"; keep=1
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/rpmad-native.XXXXXX"); keep=0
fi
cleanup() { [ "$keep" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT

PASSED=0 FAILED=0 FAILED_NAMES=""
result() { # result NAME RC
	if [ "$2" = 0 ]; then PASSED=$((PASSED + 1)); say "PASS $1"
	else FAILED=$((FAILED + 1)); FAILED_NAMES="$FAILED_NAMES $1"; say "FAIL $1"; fi
}

# APT with lists and cache of its own: no change to the machine's sources
apt_private() {
	mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial"
	# shellcheck disable=SC1091
	. /etc/os-release
	echo "deb-src http://deb.debian.org/debian ${VERSION_CODENAME:-bookworm} main" \
		>"$work/apt/sources.list"
	APT_OPTS=(-o Dir::Etc::SourceList="$work/apt/sources.list"
		-o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$work/apt/lists"
		-o Dir::Cache="$work/apt/cache")
}

say "1. Debian's native librpma (librpma0, librpma-dev)"
native=$work/native
if [ ! -f "$native/usr/include/librpma.h" ]; then
	mkdir -p "$work/debs" "$native"
	(cd "$work/debs" && apt-get download librpma0 librpma-dev) >"$work/download.log" 2>&1 ||
		{ cat "$work/download.log"; say "cannot download librpma0/librpma-dev"; }
	for d in "$work"/debs/*.deb; do [ -f "$d" ] && dpkg -x "$d" "$native"; done
fi
if [ -f "$native/usr/include/librpma.h" ]; then
	say "native librpma: $(find "$native" -name librpma.so.0 | head -1) ($(objdump -T \
		"$(find "$native" -name librpma.so.0 | head -1)" | grep -o 'LIBRPMA_[0-9.]*' | sort -u | tr '\n' ' '))"
	result native-librpma 0
else
	result native-librpma 1
fi

say "2. upstream 1.3.0 examples built against native librpma 1.2: $EXAMPLES_1X"
# shellcheck disable=SC2086
PORT_BASE=$PORT_BASE NATIVE_DIR=$native EXAMPLES=$CONF/rpma-1.3.0-examples \
	"$CONF/run.sh" "$PREFIX" $EXAMPLES_1X >"$work/examples-1x.log" 2>&1
rc=$?
tail -n 3 "$work/examples-1x.log"
[ $rc = 0 ] || cat "$work/examples-1x.log"
result examples-1.x-native-1.2 $rc

say "3. upstream 0.12.0 examples built for LIBRPMA_0.12"
KEEP=1 PORT_BASE=$((PORT_BASE + 40)) NATIVE_DIR=$PREFIX EXTRA_CFLAGS=-DRPMA_API_0_12 \
	"$CONF/run.sh" "$PREFIX" >"$work/examples-0.12.log" 2>&1
rc=$?
# the binaries it built: each must ask for LIBRPMA_0.12 and nothing else
kept=$(sed -n 's/^work folder kept: //p' "$work/examples-0.12.log" | tail -n 1)
bins=0
if [ -d "$kept" ]; then
	while read -r b; do
		vers=$(objdump -T "$b" | grep -o 'LIBRPMA_[0-9.]*' | sort -u | tr '\n' ' ')
		[ -n "$vers" ] || continue
		bins=$((bins + 1))
		[ "$vers" = "LIBRPMA_0.12 " ] || { say "$b needs $vers"; rc=1; }
	done < <(find "$kept" -type f -perm -u+x)
	rm -rf "$kept"
fi
[ "$bins" -gt 0 ] || { say "no binary of the run to check"; rc=1; }
say "$bins binaries need LIBRPMA_0.12 only"
tail -n 3 "$work/examples-0.12.log"
[ $rc = 0 ] || cat "$work/examples-0.12.log"
result examples-0.12 $rc

say "4. fio 3.33 (Debian's source) built against native librpma 1.2"
FIO=${FIO:-}
if [ "$FIO" = none ]; then
	say "FIO=none: skipped"
else
	if [ -z "$FIO" ]; then
		FIO=$work/fio-3.33/fio
		if [ ! -x "$FIO" ]; then
			apt_private
			(cd "$work" && apt-get "${APT_OPTS[@]}" update &&
				apt-get "${APT_OPTS[@]}" source --download-only fio &&
				tar xzf fio_3.33.orig.tar.gz) >"$work/fio-src.log" 2>&1 ||
				{ tail -n 5 "$work/fio-src.log"; say "no fio source"; }
			lib=$(dirname "$(find "$native" -name librpma.so.0 | head -1)")
			# without libpmem2: fio 3.33's GPSPM server crashes with it
			# (README, "fio's librpma engines")
			(cd "$work/fio-3.33" && export LDFLAGS=-L$lib &&
				./configure --extra-cflags="-I$native/usr/include" &&
				grep -q CONFIG_LIBRPMA_APM config-host.mak &&
				sed -i /CONFIG_LIBPMEM2_INSTALLED/d config-host.mak config-host.h &&
				nice -n 10 make -j"$(nproc)") >"$work/fio-build.log" 2>&1 ||
				{ tail -n 20 "$work/fio-build.log"; say "fio build failed"; }
		fi
	fi
	rc=1
	if [ -x "$FIO" ]; then
		libdir=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --variable=libdir librpma 2>/dev/null || echo "$PREFIX/lib")
		loads=$(LD_LIBRARY_PATH=$libdir ldd -r "$FIO" 2>&1)
		if ! grep -q "librpma.so.0 => $libdir/librpma.so.0" <<<"$loads" ||
				grep -q 'version\|undefined symbol' <<<"$loads"; then
			grep 'librpma\|version\|undefined' <<<"$loads"
			say "fio does not load $libdir/librpma.so.0 with every version"
		elif ! grep -q 'LIBRPMA_1.0' <<<"$(objdump -T "$FIO")"; then
			say "$FIO was not built against native librpma 1.x"
		else
			rc=0
			for c in "apm 1 16 3" "gpspm 1 1 3"; do
				# shellcheck disable=SC2086
				PORT=$((PORT_BASE + 80)) FIO=$FIO RPMAD_BIN=$PREFIX/sbin/rpmad \
					LIBDIR=$libdir "$top/bench/fio-librpma.sh" $c || rc=1
			done
		fi
	fi
	result fio-native-1.2 $rc
fi

[ -z "$FAILED_NAMES" ] || say "failed:$FAILED_NAMES"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
