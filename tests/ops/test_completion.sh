#!/usr/bin/env bash
# test_completion.sh -- the bash completion of rpmactl: commands, options,
# socket paths, and the pids of rpmad's clients after `evict`, asked from
# the rpmad that --socket names. Completion is driven as bash does it
# (COMP_WORDS, COMP_CWORD, then the function `complete` registered).
set -euo pipefail
top_src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
top_build=${TOP_BUILDDIR:-$top_src/_build}
RPMAD_BIN=${RPMAD_BIN:-$top_build/rpmad/rpmad}
RPMACTL_BIN=${RPMACTL_BIN:-$top_build/rpmactl/rpmactl}

fail() { echo "test_completion: FAIL: $*" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/rpmad-completion.XXXXXX")
pids=()
cleanup() {
	local rc=$?
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT

# shellcheck source=../../completion/rpmactl.bash
source "$top_src/completion/rpmactl.bash"
fn=$(complete -p rpmactl | sed -n 's/^complete -F \([^ ]*\) rpmactl$/\1/p')
[ -n "$fn" ] || fail "no completion function registered for rpmactl"

# complete WORD... : the last word is the one being completed
complete_words() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	"$fn" rpmactl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

expect() {
	local want=$1; shift
	local got
	got=$(complete_words "$@")
	[ "$got" = "$want" ] || fail "completing '$*': got '$got', want '$want'"
}

expect "clients connections endpoints evict metrics mrs stats status upgrade" rpmactl ""
expect "stats status" rpmactl st
expect "metrics mrs" rpmactl --json m
expect "--json" rpmactl --j
expect "--socket" rpmactl --s
expect "" rpmactl --timeout ""
expect "" rpmactl status ""
touch "$work/a.sock"
expect "$work/a.sock" rpmactl --socket "$work/a."

# evict: the pids of the clients of the rpmad named by --socket
"$RPMAD_BIN" --foreground --socket "$work/r.sock" --transport tcp 2>"$work/rpmad.log" &
pids+=($!)
for _ in $(seq 200); do [ -S "$work/r.sock" ] && break; sleep 0.05; done
# it holds its registration until its stdin ends: a fifo the test keeps open
mkfifo "$work/peer.in"
RPMAD_SOCKET="$work/r.sock" "$top_build/tests/ops/ops_peer" many 127.0.0.1 1 \
	<"$work/peer.in" >"$work/peer.out" 2>&1 &
ppid=$!
exec 3>"$work/peer.in"
pids+=("$ppid")
for _ in $(seq 200); do
	grep -q ready "$work/peer.out" 2>/dev/null && break
	sleep 0.05
done
grep -q "ready many pid=$ppid" "$work/peer.out" || fail "ops_peer: $(cat "$work/peer.out")"
PATH="$(dirname "$RPMACTL_BIN"):$PATH"
expect "$ppid" rpmactl --socket "$work/r.sock" evict ""
expect "$ppid" rpmactl "--socket=$work/r.sock" evict "${ppid:0:1}"
expect "" rpmactl --socket "$work/r.sock" evict "$ppid" ""
# no rpmad there: nothing, quietly
expect "" rpmactl --socket "$work/none.sock" evict ""
echo "test_completion: passed"
