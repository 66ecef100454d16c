#!/usr/bin/env bash
# build-interop.sh -- on the host, before the VM boots: unpack Debian's
# native librpma (librpma0, librpma-dev 1.2) into a private folder -- never
# installed: it owns librpma.so and librpma.h as this project does -- and
# build the interop programs and bench/rxe/rpma-pair twice, against it and
# against PREFIX.
#
# usage: build-interop.sh PREFIX OUTDIR
#   OUTDIR/native/   the unpacked packages (kept: a cache)
#   OUTDIR/bin/      {native,brokered}_{server,client,pair}, and
#                    native_srq_{server,client}: upstream's 1.3.0 example
#                    13 (a shared RQ, several clients) built against the
#                    native library, when ../shared/conformance has it
set -euo pipefail
PREFIX=$(realpath "$1"); OUT=$(realpath -m "$2")
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUT/bin"
native=$OUT/native
if [ ! -e "$native/.done" ]; then
	rm -rf "$native" "$OUT/dl" && mkdir -p "$OUT/dl"
	(cd "$OUT/dl" && { apt-get download librpma0 librpma-dev ||
		{ apt-get update -qq && apt-get download librpma0 librpma-dev; }; }) >&2
	for d in "$OUT"/dl/*.deb; do dpkg-deb -x "$d" "$native"; done
	rm -rf "$OUT/dl"
	touch "$native/.done"
fi
nlib=$(dirname "$(find "$native" -name 'librpma.so.*' | head -n 1)")
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
for role in server client pair; do
	src=$HERE/interop/interop_$role.c
	[ $role = pair ] && src=$HERE/../../bench/rxe/rpma-pair.c
	# shellcheck disable=SC2046
	cc -O2 -Wall -Wextra -Werror -o "$OUT/bin/brokered_$role" "$src" \
		$(pkg-config --cflags --libs librpma) -Wl,-rpath,"$PREFIX/lib" -libverbs
	cc -O2 -Wall -Wextra -Werror -DNATIVE_RPMA_1 -o "$OUT/bin/native_$role" "$src" \
		-I"$native/usr/include" -L"$nlib" -lrpma -Wl,-rpath,"$nlib" -libverbs
done
# upstream's example of a shared RQ (test input, as in conformance/)
ex=$HERE/../../../shared/conformance/rpma-1.3.0-examples
if [ -d "$ex/13-messages-ping-pong-with-srq" ]; then
	d=$ex/13-messages-ping-pong-with-srq c=$ex/common
	cc -O2 -o "$OUT/bin/native_srq_server" "$d/server.c" "$c/common-conn.c" \
		"$c/common-epoll.c" -I"$c" -I"$native/usr/include" -L"$nlib" -lrpma \
		-Wl,-rpath,"$nlib" -libverbs
	cc -O2 -o "$OUT/bin/native_srq_client" "$d/client.c" "$c/common-conn.c" \
		"$c/common-messages-ping-pong.c" "$c/common-utils.c" -I"$c" \
		-I"$native/usr/include" -L"$nlib" -lrpma -Wl,-rpath,"$nlib" -libverbs
else
	rm -f "$OUT/bin/native_srq_server" "$OUT/bin/native_srq_client"
fi
echo "build-interop: native librpma $(basename "$(readlink -f "$nlib/librpma.so.0")") in $native"
