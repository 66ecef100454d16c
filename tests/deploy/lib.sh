# shellcheck shell=bash disable=SC2034,SC2154
# lib.sh -- what the deploy tests share (sourced after they define
# top_src, top_build and fail): the library just built with the flags
# its programs need, the demo programs built against it, and a work
# directory of the test's own with its cleanup.

# deploy_lib -- lib: the librpma.so.0 just built; san: what a program
# linked against a sanitizer build's library needs (its run time first).
# grep reads all of ldd's output, or pipefail would see ldd's SIGPIPE.
deploy_lib() {
	lib=$(readlink -f "$top_build/.libs/librpma.so.0")
	[ -f "$lib" ] || fail "build first: no $top_build/.libs/librpma.so.0"
	san=""
	if ldd "$lib" | grep libasan >/dev/null; then
		san="-fsanitize=address,undefined"
	fi
}

# deploy_demo DIR -- after deploy_lib: examples/pmem-server and
# pmem-client built against lib into DIR, with a copy of lib they load
# from beside them ($ORIGIN), as an image's /app holds them
deploy_demo() {
	local p
	mkdir -p "$1"
	for p in pmem-server pmem-client; do
		# $san: flags, split; $ORIGIN: for the loader, not the shell
		# shellcheck disable=SC2086,SC2016
		cc -O2 -Wall $san -o "$1/$p" "$top_src/examples/$p.c" -I"$top_src/examples" \
			-I"$top_src/include" "$lib" -Wl,-rpath,'$ORIGIN' -libverbs
	done
	cp "$lib" "$1/librpma.so.0"
}

# deploy_work NAME [PATTERN...] -- work: a new directory (mode 755);
# pids: the processes the cleanup kills. When the test fails, the
# cleanup shows work's *.log, *.out and the PATTERNs (relative to work).
deploy_work() {
	work=$(mktemp -d "${TMPDIR:-/tmp}/rpmad-$1.XXXXXX")
	chmod 755 "$work"
	pids=()
	shift
	deploy_show=('*.log' '*.out' "$@")
	trap deploy_cleanup EXIT
	trap 'exit 1' INT TERM
}

deploy_cleanup() {
	local rc=$? p f g
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ "$rc" != 0 ]; then
		for g in "${deploy_show[@]}"; do
			# shellcheck disable=SC2086
			for f in "$work"/$g; do
				[ -f "$f" ] && { echo "--- $f"; cat "$f"; }
			done
		done
	fi
	rm -rf "$work"
	exit "$rc"
}
