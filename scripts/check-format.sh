#!/usr/bin/env bash
# check-format.sh -- the C lines a change added or modified follow
# .clang-format and stay within 80 columns (a tab counts to the next
# multiple of 8). Only changed lines are judged: the files as they are
# predate .clang-format, and reformatting them all would collide with
# every branch in flight.
#
# usage: scripts/check-format.sh [BASE]
#
# The change is from where HEAD left BASE (their merge base) to the
# working tree: by default BASE is $FORMAT_BASE, else HEAD~1, so that on
# a clean clone (CI) it is the last commit (all of a merged branch when
# the last commit is its merge). Before sending a branch:
# scripts/check-format.sh main. New files count once added to the
# index (git add). Fix what it reports with the diff it prints (or
# `git clang-format BASE`, which takes a moved file as all new).
# Outside a git checkout (a release tarball) there is nothing to compare:
# skipped. FORMAT_WHOLE_FILES=1 holds every line of a changed file to
# 80 columns, not only the changed ones (332 lines of the tree were
# longer when this was written). Exits 0 clean, 1 on a finding, 2 when
# it cannot check.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

say() { echo "check-format: $*"; }

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	say "not a git checkout: nothing to compare, skipped"
	exit 0
fi
base=${1:-${FORMAT_BASE:-HEAD~1}}
if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
	say "no commit $base to compare with (a shallow clone? fetch at" \
		"least two commits, or set FORMAT_BASE)" >&2
	exit 2
fi
# from where the branch left BASE: what BASE gained since is not ours
base=$(git merge-base "$base" HEAD) ||
	{ say "HEAD and $base share no history" >&2; exit 2; }
short=$(git rev-parse --short "$base")
for tool in clang-format; do
	command -v "$tool" >/dev/null ||
		{ say "$tool not found: scripts/install-deps.sh" >&2; exit 2; }
done

# Renames are followed (-M): a file moved to another folder is judged
# by the lines that changed in it, not as a new file of old lines.
files=$(git diff -M --name-only --diff-filter=ACMR "$base" -- '*.c' '*.h')
if [ -z "$files" ]; then
	say "no C file changed since $short"
	exit 0
fi
say "the C lines changed since $short:" \
	"$(echo "$files" | wc -l) files"
bad=0

# 80 columns: the added lines of the diff (or all lines of the changed
# files: the diff against the empty tree), tabs expanded to 8
from=$base
[ "${FORMAT_WHOLE_FILES:-0}" = 1 ] && from=$(git hash-object -t tree /dev/null)
long=$(git diff -M -U0 --no-color "$from" -- '*.c' '*.h' | awk '
	/^\+\+\+ / { file = substr($0, 7); next }
	/^@@ / {
		split($3, a, ","); line = substr(a[1], 2) + 0; next
	}
	/^\+/ {
		s = substr($0, 2); col = 0
		for (i = 1; i <= length(s); i++) {
			if (substr(s, i, 1) == "\t")
				col += 8 - col % 8
			else
				col++
		}
		if (col > 80)
			printf "%s:%d: %d columns\n", file, line, col
		line++
	}')
if [ -n "$long" ]; then
	say "lines over 80 columns:"
	echo "$long"
	bad=1
fi

# .clang-format on the changed lines only: each file's added hunks as
# clang-format --lines ranges (git clang-format would take a moved file
# as all new)
ranges=$(git diff -M -U0 --no-color "$base" -- '*.c' '*.h' | awk '
	/^\+\+\+ \/dev\/null/ { file = ""; next }
	/^\+\+\+ / { file = substr($0, 7); next }
	/^@@ / && file != "" {
		split($3, a, ","); first = substr(a[1], 2) + 0
		n = (a[2] == "") ? 1 : a[2] + 0
		if (n > 0)
			printf "%s --lines=%d:%d\n", file, first, first + n - 1
	}')
out=""
for f in $files; do
	args=$(echo "$ranges" | awk -v f="$f" '$1 == f { print $2 }')
	[ -n "$args" ] || continue
	# shellcheck disable=SC2086
	d=$(clang-format --style=file --assume-filename="$f" $args <"$f" |
		diff -u --label "a/$f" --label "b/$f" "$f" -) || true
	[ -z "$d" ] || out="$out$d"$'\n'
done
if [ -n "$out" ]; then
	say "not as .clang-format lays them out (clang-format -i" \
		"--lines=... of these lines applies this):"
	echo "$out"
	bad=1
fi

if [ "$bad" = 0 ]; then say "clean"; fi
exit "$bad"
