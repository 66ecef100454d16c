#!/usr/bin/env bash
# build-examples.sh -- on the host, before the VM boots: build the upstream
# librpma 0.12.0 examples of ../shared/conformance against PREFIX exactly
# as its run.sh builds them (cc -O2 -g, the examples' common files, -lrpma,
# -libverbs, libpmem), so that the VM (software emulated: a compiler there
# costs half a minute per program) only runs them (tests/rxe/examples.sh).
#
# usage: build-examples.sh PREFIX EXAMPLES OUTDIR
#   EXAMPLES  the folder of NN-* examples and common/
#   OUTDIR/NN-name/{server,client}
set -euo pipefail
PREFIX=$(realpath "$1"); EXAMPLES=$(realpath "$2"); OUT=$(realpath -m "$3")
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
rpma_cflags=$(pkg-config --cflags librpma)
rpma_libs=$(pkg-config --libs librpma)
libdir=$(pkg-config --variable=libdir librpma)
pmem_flags="" pmem_libs=""
if pkg-config --exists libpmem; then
	pmem_flags="-DUSE_LIBPMEM $(pkg-config --cflags libpmem)"
	pmem_libs=$(pkg-config --libs libpmem)
fi
common=$EXAMPLES/common
rm -rf "$OUT" && mkdir -p "$OUT"
for dir in "$EXAMPLES"/[0-9][0-9]-*/; do
	dir=${dir%/}
	name=$(basename "$dir")
	mkdir -p "$OUT/$name"
	extra=$(find "$dir"/ -maxdepth 1 -name '*.c' ! -name server.c ! -name client.c | sort)
	proto=""
	if ls "$dir"/*.pb-c.c >/dev/null 2>&1; then proto=$(pkg-config --cflags --libs libprotobuf-c); fi
	for role in server client; do
		# shellcheck disable=SC2086
		cc -O2 -g -o "$OUT/$name/$role" "$dir/$role.c" $extra \
			"$common/common-conn.c" "$common/common-epoll.c" -I"$common" \
			$rpma_cflags $pmem_flags $rpma_libs -Wl,-rpath,"$libdir" \
			-libverbs $pmem_libs $proto
	done
done
echo "build-examples: $(ls "$OUT" | wc -l) examples in $OUT"
