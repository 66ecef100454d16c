#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-objects.sh -- the objects know nothing of the control protocol.
# control/ decodes a request, calls the typed calls of objects/ and builds
# the answer. No file under rpmad/objects/ may include the protocol's
# generated header (*.pb-c.h), a header of rpmad/ or common/ that brings
# it in however deep (clients/reply.h), or a header of control/; nor name
# one of the protocol's types or functions (Rpmad__*, rpmad__*,
# RPMAD__*). Makefile.am runs this before it links the objects' library.
#
# usage: check-objects.sh TOP_SRCDIR

top=${1:?usage: check-objects.sh TOP_SRCDIR}
status=0

# includes FILE -- the "quoted" includes of a file, one a line
includes() {
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' \
		"$1"
}

# the headers that bring the protocol in: found again until none is new
carriers=' '
while :; do
	more=
	for h in "$top"/rpmad/*/*.h "$top"/common/*.h; do
		name=${h#"$top"/rpmad/}
		[ "$name" = "$h" ] && name=${h#"$top"/common/}
		case $carriers in *" $name "*) continue ;; esac
		for inc in $(includes "$h"); do
			case $inc in
			*.pb-c.h) ;;
			*) case $carriers in *" $inc "*) ;; *) continue ;; esac ;;
			esac
			carriers="$carriers$name "
			more=1
			break
		done
	done
	[ -n "$more" ] || break
done

for f in "$top"/rpmad/objects/*.[ch]; do
	# every include with its line number
	grep -n '^[[:space:]]*#[[:space:]]*include' "$f" |
	sed -n 's/^\([0-9]*\):[^"<]*["<]\([^">]*\)[">].*/\1 \2/p' |
	while read -r line inc; do
		why=
		case $inc in
		*.pb-c.h|control/*|*/control/*) ;;
		*) case $carriers in
			*" $inc "*) why=" (it brings in the protocol's header)" ;;
			*) continue ;;
			esac ;;
		esac
		echo "${f#"$top"/}:$line: includes $inc$why: the objects" \
			"know nothing of the control protocol (control/" \
			"speaks it)"
		# the pipeline's subshell: its exit status says it
		exit 1
	done || status=1

	# a name of the protocol's, with its line number
	if grep -n 'Rpmad__\|rpmad__\|RPMAD__' "$f" |
			sed 's/^\([0-9]*\):.*\([Rr][Pp][Mm][Aa][Dd]__[A-Za-z0-9_]*\).*/\1 \2/' |
			while read -r line name; do
				echo "${f#"$top"/}:$line: names $name: the" \
					"objects know nothing of the control" \
					"protocol (control/ speaks it)"
			done | grep .; then
		status=1
	fi
done
exit $status
