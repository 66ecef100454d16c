#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-transport.sh -- a transport sees rpmad through
# rpmad/transport/transport.h alone. Every file under rpmad/tcp/ and
# rpmad/verbs/ may include that header, headers of its own folder, of
# common/ and include/, and the system's; an include of any other part of
# rpmad (objects/conn.h, core/daemon.h, ../x.h, ...) stops the build
# (Makefile.am runs this before it links a transport's library).
#
# usage: check-transport.sh TOP_SRCDIR

top=${1:?usage: check-transport.sh TOP_SRCDIR}
status=0

for dir in tcp verbs; do
	for f in "$top/rpmad/$dir"/*.[ch]; do
		# every include, "quoted" or <angled>, with its line number
		grep -n '^[[:space:]]*#[[:space:]]*include' "$f" |
		sed -n 's/^\([0-9]*\):[^"<]*["<]\([^">]*\)[">].*/\1 \2/p' |
		while read -r line inc; do
			case $inc in
			transport/transport.h|"$dir"/*.h)
				[ -f "$top/rpmad/$inc" ] && continue ;;
			*/*)
				# a system header by path; never one of rpmad's
				[ -e "$top/rpmad/$inc" ] || case $inc in
					*..*) ;;
					*) continue ;;
				esac ;;
			*.pb-c.h)
				# the control protocol is control/'s
				;;
			*)
				[ -f "$top/common/$inc" ] && continue
				[ -f "$top/include/$inc" ] && continue
				# a system header by bare name
				[ -e "$top/rpmad/$inc" ] ||
					[ -e "$top/rpmad/$dir/$inc" ] || continue ;;
			esac
			echo "${f#"$top"/}:$line: includes $inc: a transport" \
				"sees rpmad through transport/transport.h alone"
			# the pipeline's subshell: its exit status says it
			exit 1
		done || status=1
	done
done
exit $status
