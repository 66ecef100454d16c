#!/usr/bin/env bash
# deb-test.sh -- build the Debian packages from a copy of the checkout,
# check them with lintian (--pedantic: no error, warning or pedantic tag),
# install them on this machine, start the installed /usr/sbin/rpmad the
# way rpmad.socket and rpmad.service would, reload it with the unit's
# ExecReload= as systemd runs it (with no PATH: nothing but what the
# command names and a minimal system has, no procps), check that
# pkg-config --cflags --libs works with nothing but the .pc files of
# librpmaclient-dev and its dependencies, run the README's client/server
# exchange built with plain `cc ... -lrpma` (and with pkg-config's flags)
# against the installed library (librpma.so.0 through librpma0-rpmad's
# diversion, and librpmaclient.so.1 of old), install a newer rpmad package (the same
# one with a higher version) over the running rpmad while a server
# application waits on it: its postinst upgrades rpmad in place, the
# server's session stays in the old rpmad and serves a client afterwards,
# a new client talks to the new rpmad, and the old one exits after its
# last client; write the metrics as rpmad-metrics.service does (its
# ExecStart=, its StateDirectory=); then purge the packages and check that
# nothing of them is left, the metrics file and the directories made for
# it included.
#
# Needs root (dpkg -i) and dpkg-dev, debhelper, lintian; exits 77 (skipped)
# without them. The packages never stay installed: the EXIT trap purges
# them whatever happened, because an installed librpma.so would shadow
# other builds on this machine.
#
# usage: tests/deploy/deb-test.sh [OUTDIR]   (OUTDIR keeps the .debs)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
PACKAGES="rpmad librpmaclient1 librpma0-rpmad librpmaclient-dev"
PORT=${PORT:-7311}

say() { echo "deb-test: $*"; }
# a process that runs (a zombie, not yet waited for, has ended)
alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null) && [ -n "$s" ] && [ "${s#Z}" = "$s" ]; }
fail() { echo "deb-test: FAIL: $*" >&2; exit 1; }

if [ "$(id -u)" != 0 ]; then say "skipped: needs root (dpkg -i)"; exit 77; fi
for tool in dpkg-buildpackage dh lintian setpriv python3 cc; do
	command -v "$tool" >/dev/null || { say "skipped: no $tool"; exit 77; }
done
for p in $PACKAGES librpma-dev; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed'; then
		fail "$p is installed already: this test installs and purges its own"
	fi
done
[ ! -e /run/rpmad ] || fail "/run/rpmad exists: another rpmad uses the default socket"

work=$(mktemp -d "${TMPDIR:-/tmp}/rpmad-deb.XXXXXX")
chmod 755 "$work"
outdir=${1:-}
had_group=no
getent group rpma >/dev/null && had_group=yes
had_user=no
getent passwd rpmad >/dev/null && had_user=yes
pids=()
installed=no
cleanup() {
	local rc=$?
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ "$installed" = yes ]; then
		# shellcheck disable=SC2086
		dpkg --purge $PACKAGES >"$work/purge-trap.log" 2>&1 ||
			{ cat "$work/purge-trap.log" >&2; rc=1; }
	fi
	if [ "$had_group" = no ] && getent group rpma >/dev/null; then
		groupdel rpma || rc=1
	fi
	if [ "$had_user" = no ] && getent passwd rpmad >/dev/null; then
		userdel rpmad || rc=1
		! getent group rpmad >/dev/null || groupdel rpmad || rc=1
	fi
	rm -rf /run/rpmad
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

start=$(date +%s)

say "copying the checkout (tracked and new files, as they are now)"
mkdir "$work/src"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	tar --null -T - -cf -) | tar -x -C "$work/src"

say "dpkg-buildpackage -b -uc -us"
(cd "$work/src" && nice -n 15 dpkg-buildpackage -b -uc -us -j2) \
	>"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; fail "package build"; }
built=$(date +%s)
debs=("$work"/rpmad_*.deb "$work"/librpmaclient1_*.deb "$work"/librpma0-rpmad_*.deb \
	"$work"/librpmaclient-dev_*.deb)
for d in "${debs[@]}"; do [ -f "$d" ] || fail "not built: $d"; done
[ -z "$outdir" ] || cp "${debs[@]}" "$outdir/"

say "lintian --pedantic (no error, warning or pedantic tag allowed)"
lintian --pedantic -I "$work"/rpmad_*.changes >"$work/lintian.log" 2>&1 || true
cat "$work/lintian.log"
if grep -q '^[EWP]: ' "$work/lintian.log"; then fail "lintian reports errors, warnings or pedantic tags"; fi

say "installing ${debs[*]##*/}"
installed=yes
dpkg -i "${debs[@]}" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "dpkg -i"; }
getent group rpma >/dev/null || fail "the package made no group rpma"
rpma_gid=$(getent group rpma | cut -d: -f3)
getent passwd rpmad >/dev/null || fail "the package made no user rpmad"
rpmad_uid=$(getent passwd rpmad | cut -d: -f3)
lib=$(dpkg -L librpmaclient1 | grep '/rpmad/librpma\.so\.0$')
[ -e "$lib" ] || fail "no rpmad/librpma.so.0 in librpmaclient1"
triplet_dir=$(dirname "$(dirname "$lib")")
[ "$(readlink -f "$triplet_dir/librpmaclient.so.1")" = "$(readlink -f "$lib")" ] ||
	fail "librpmaclient.so.1 is not rpmad's librpma.so.0"
[ "$(readlink -f "$triplet_dir/librpma.so.0")" = "$(readlink -f "$lib")" ] ||
	fail "librpma0-rpmad did not make rpmad's library the host's librpma.so.0"
[ "$(dpkg-divert --listpackage "$triplet_dir/librpma.so.0")" = librpma0-rpmad ] ||
	fail "no diversion of librpma.so.0 by librpma0-rpmad"

# The unit files say how rpmad runs: take the command and the socket's
# path, owner, group and mode from them rather than repeating them here.
unit=/lib/systemd/system/rpmad.service
sock_unit=/lib/systemd/system/rpmad.socket
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
sock=$(sed -n 's/^ListenSequentialPacket=//p' "$sock_unit")
sock_group=$(sed -n 's/^SocketGroup=//p' "$sock_unit")
sock_mode=$(sed -n 's/^SocketMode=//p' "$sock_unit")
dir_mode=$(sed -n 's/^DirectoryMode=//p' "$sock_unit")
[ "$exec_start" = "/usr/sbin/rpmad --foreground" ] || fail "ExecStart is '$exec_start'"
[ "$sock" = /run/rpmad/rpmad.sock ] || fail "the socket unit listens on '$sock'"

say "starting '$exec_start' with $sock ($sock_group, $sock_mode) as rpmad.socket passes it"
# what systemd does for rpmad.socket + rpmad.service: make the directory and
# the listening socket with the unit's owner and mode, and start the
# service with it as fd 3 (LISTEN_FDS=1, LISTEN_PID = the service's pid)
# shellcheck disable=SC2016
python3 - "$sock" "$sock_group" "$sock_mode" "$dir_mode" $exec_start \
	>"$work/rpmad-A.log" 2>&1 <<'EOF' &
import grp, os, socket, sys
path, group, mode, dmode = sys.argv[1:5]
argv = sys.argv[5:]
os.makedirs(os.path.dirname(path), mode=int(dmode, 8), exist_ok=True)
os.chmod(os.path.dirname(path), int(dmode, 8))
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(path)
os.chown(path, 0, grp.getgrnam(group).gr_gid)
os.chmod(path, int(mode, 8))
s.listen(128)
os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
env = dict(os.environ, LISTEN_FDS="1", LISTEN_PID=str(os.getpid()),
           LISTEN_FDNAMES="rpmad.socket")
os.execve(argv[0], argv, env)
EOF
pids+=($!)
/usr/sbin/rpmad --foreground --socket "$work/B.sock" >"$work/rpmad-B.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do
	[ -S "$sock" ] && [ -S "$work/B.sock" ] && /usr/bin/rpmactl status >/dev/null 2>&1 && break
	sleep 0.05
done
/usr/bin/rpmactl status >"$work/status.txt" || { cat "$work/rpmad-A.log"; fail "rpmactl status"; }
# clients' files are written as rpmad's own user (the fourth Uid: fsuid)
fsuid=$(awk '/^Uid:/ { print $5 }' "/proc/${pids[0]}/status")
[ "$fsuid" = "$rpmad_uid" ] || fail "rpmad writes clients' files as uid $fsuid, not rpmad's ($rpmad_uid)"
grep -q "socket activated\|socket:.*$sock" "$work/status.txt" || { cat "$work/status.txt"; fail "status"; }
[ "$(stat -c %a:%G "$sock")" = "${sock_mode#0}:$sock_group" ] || fail "socket is $(stat -c %a:%G "$sock")"

say "reloading with the unit's ExecReload=, as systemd runs it, with no PATH"
exec_reload=$(sed -n 's/^ExecReload=//p' "$unit")
# systemd's quoting, and $$ for a $; $MAINPID is in the command's environment
python3 - "$exec_reload" "${pids[0]}" >"$work/reload.log" 2>&1 <<'EOF' || { cat "$work/reload.log"; fail "ExecReload= failed"; }
import os, shlex, subprocess, sys
argv = [a.replace("$$", "$") for a in shlex.split(sys.argv[1])]
assert argv[0].startswith("/"), f"not an absolute path: {argv[0]}"
# on a minimal system: the program's package must be essential
pkg = subprocess.run(["dpkg", "-S", argv[0]], capture_output=True, text=True)
owner = [l.split(":")[0] for l in pkg.stdout.splitlines() if not l.startswith("diversion")]
assert owner, f"{argv[0]} belongs to no package"
ess = subprocess.run(["dpkg-query", "-W", "-f=${Essential}", owner[0]],
                     capture_output=True, text=True).stdout
assert ess == "yes", f"{argv[0]} is {owner[0]}'s, which is not essential"
env = {"MAINPID": sys.argv[2], "PATH": "/nonexistent"}
sys.exit(subprocess.run(argv, env=env).returncode)
EOF
for _ in $(seq 200); do
	/usr/bin/rpmactl --json status 2>/dev/null | grep -q '"reloads": *1' && break
	sleep 0.05
done
/usr/bin/rpmactl --json status | grep -q '"reloads": *1' || { /usr/bin/rpmactl status; fail "rpmad did not reload"; }

say "pkg-config --cflags --libs with only librpmaclient-dev's .pc files (and its dependencies')"
mkdir "$work/pc"
deps=$(dpkg-query -W -f='${Depends}' librpmaclient-dev | tr ',' '\n' | sed 's/^ *//; s/[ (].*//' | grep -v '^$\|^librpmaclient1$' || true)
# shellcheck disable=SC2086
for f in $(dpkg -L librpmaclient-dev $deps 2>/dev/null | grep '\.pc$'); do cp "$f" "$work/pc/"; done
ls "$work/pc"
for pc in librpma librpmaclient; do
	PKG_CONFIG_LIBDIR="$work/pc" PKG_CONFIG_PATH="" pkg-config --cflags --libs "$pc" \
		>"$work/pc-$pc.txt" 2>&1 || { cat "$work/pc-$pc.txt"; fail "pkg-config $pc"; }
	echo "$pc: $(cat "$work/pc-$pc.txt")"
done
# shellcheck disable=SC2046
cc -O2 -Wall -Werror -o "$work/pmem-client-pc" "$top/examples/pmem-client.c" -I"$top/examples" \
	$(cat "$work/pc-librpma.txt") -libverbs || fail "cc with pkg-config's flags"

say "compiling the demo programs with plain cc ... -lrpma -libverbs"
for p in pmem-server pmem-client; do
	cc -O2 -Wall -Werror -o "$work/$p" "$top/examples/$p.c" -I"$top/examples" -lrpma -libverbs
done
loaded=$(ldd "$work/pmem-client" | sed -n 's/^.*librpma\.so\.0 => \([^ ]*\) .*$/\1/p')
[ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$lib")" ] ||
	{ ldd "$work/pmem-client"; fail "pmem-client does not load $lib"; }

say "a user outside group rpma is refused by the socket's mode"
truncate -s 64K "$work/pmem.file"
chown 65534:65534 "$work/pmem.file"
if setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$work/pmem-server" 127.0.0.1 "$PORT" "$work/pmem.file" >"$work/refused.out" 2>&1; then
	fail "the server ran without the group rpma"
fi

say "the server as uid 65534 in group rpma (gid $rpma_gid) on the default socket"
setpriv --reuid=65534 --regid=65534 --groups="$rpma_gid" \
	"$work/pmem-server" 127.0.0.1 "$PORT" "$work/pmem.file" >"$work/server.out" 2>&1 &
spid=$!
pids+=("$spid")
for _ in $(seq 200); do grep -q listening "$work/server.out" && break; sleep 0.05; done
grep -q listening "$work/server.out" || { cat "$work/server.out"; fail "server"; }
/usr/bin/rpmactl clients | grep '^ *[0-9]\+ \+65534 .*pmem-server' >/dev/null ||
	{ /usr/bin/rpmactl clients; fail "rpmactl clients does not show the server"; }

msg="written through the installed packages"
RPMAD_SOCKET="$work/B.sock" "$work/pmem-client" 127.0.0.1 "$PORT" "$msg" \
	>"$work/client.out" 2>&1 || { cat "$work/client.out"; fail "client"; }
wait "$spid" || { cat "$work/server.out"; fail "server exit status"; }
[ "$(head -c "${#msg}" "$work/pmem.file")" = "$msg" ] || fail "the file does not hold the message"
cat "$work/client.out"

say "a newer rpmad package over the running rpmad, a server application waiting on it"
old_pid=${pids[0]}
setpriv --reuid=65534 --regid=65534 --groups="$rpma_gid" \
	"$work/pmem-server" 127.0.0.1 "$PORT" "$work/pmem.file" >"$work/server2.out" 2>&1 &
spid=$!
pids+=("$spid")
for _ in $(seq 200); do grep -q listening "$work/server2.out" && break; sleep 0.05; done
grep -q listening "$work/server2.out" || { cat "$work/server2.out"; fail "server"; }
version=$(dpkg-deb -f "$work"/rpmad_*.deb Version)
mkdir "$work/next"
dpkg-deb -R "$work"/rpmad_*.deb "$work/next/pkg"
sed -i "s/^Version: .*/Version: $version+next/" "$work/next/pkg/DEBIAN/control"
dpkg-deb -b "$work/next/pkg" "$work/next/rpmad_next.deb" >/dev/null
dpkg -i "$work/next/rpmad_next.deb" >"$work/upgrade.log" 2>&1 ||
	{ cat "$work/upgrade.log"; fail "dpkg -i of the newer rpmad"; }
cat "$work/upgrade.log"
[ "$(dpkg-query -W -f='${Version}' rpmad)" = "$version+next" ] || fail "the newer rpmad is not installed"
/usr/bin/rpmactl status >"$work/status2.txt" || fail "rpmactl status after the upgrade"
new_pid=$(sed -n 's/^pid: *//p' "$work/status2.txt")
# the new rpmad is the old one's child, not this shell's: stopped by its pid
[ -z "$new_pid" ] || pids+=("$new_pid")
[ -n "$new_pid" ] && [ "$new_pid" != "$old_pid" ] || { cat "$work/status2.txt"; fail "no new rpmad serves the socket"; }
grep -q "^draining: *pid $old_pid" "$work/status2.txt" || { cat "$work/status2.txt"; fail "the new rpmad does not name the old one"; }
alive "$old_pid" || fail "the old rpmad (pid $old_pid) did not stay for its client"
# the waiting server's session is in the old rpmad: it still serves
msg="written across a package upgrade"
RPMAD_SOCKET="$work/B.sock" "$work/pmem-client" 127.0.0.1 "$PORT" "$msg" \
	>"$work/client2.out" 2>&1 || { cat "$work/client2.out"; fail "client after the upgrade"; }
wait "$spid" || { cat "$work/server2.out"; fail "server exit status after the upgrade"; }
[ "$(head -c "${#msg}" "$work/pmem.file")" = "$msg" ] || fail "the file does not hold the second message"
# its last client gone, the old rpmad exits
for _ in $(seq 200); do alive "$old_pid" || break; sleep 0.05; done
! alive "$old_pid" || fail "the old rpmad (pid $old_pid) did not exit after its last client"

say "the metrics, as rpmad-metrics.service writes them (its ExecStart=, its StateDirectory=)"
munit=/lib/systemd/system/rpmad-metrics.service
metrics_dir=$(sed -n 's/^Environment=RPMAD_METRICS_DIR=//p' "$munit")
state=/var/lib/$(sed -n 's/^StateDirectory=//p' "$munit")
[ "$state" = "$metrics_dir" ] || fail "StateDirectory= is not the metrics directory"
made=""
d=$state
while [ ! -e "$d" ]; do made="$d $made"; d=${d%/*}; done
mkdir -p "$state"
chmod "$(sed -n 's/^StateDirectoryMode=//p' "$munit")" "$state"
python3 - "$munit" "$metrics_dir" >"$work/metrics.log" 2>&1 <<'EOF' || { cat "$work/metrics.log"; fail "rpmad-metrics' ExecStart= failed"; }
import os, re, shlex, subprocess, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
line = re.search(r"^ExecStart=(.*)$", text, re.M).group(1)
argv = [a.replace("$$", "$") for a in shlex.split(line)]
env = dict(os.environ, RPMAD_METRICS_DIR=sys.argv[2])
sys.exit(subprocess.run(argv, env=env).returncode)
EOF
grep -q '^rpmad_up 1' "$metrics_dir/rpmad.prom" || { cat "$metrics_dir/rpmad.prom"; fail "no metrics written"; }

say "stopping rpmad (SIGTERM) and purging"
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
# the upgraded rpmad is no child of this shell: wait for it by its pid
for p in "${pids[@]}"; do
	for _ in $(seq 200); do alive "$p" || break; sleep 0.05; done
done
pids=()
# everything the packages own, before they go
# shellcheck disable=SC2086
dpkg -L $PACKAGES | sort -u >"$work/owned.txt"
# shellcheck disable=SC2086
dpkg --purge $PACKAGES >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; fail "purge"; }
installed=no
left=""
while read -r f; do
	[ -n "$f" ] || continue
	# shared directories (/usr, /usr/share/man/man3 ...) stay, of course
	if [ -e "$f" ] && [ ! -d "$f" ]; then left="$left $f"; fi
	case $f in /etc/rpmad|/usr/share/doc/rpmad|/usr/share/doc/librpmaclient*)
		[ ! -e "$f" ] || left="$left $f";;
	esac
done <"$work/owned.txt"
for f in /run/rpmad /etc/rpmad /var/lib/systemd/deb-systemd-helper-enabled/rpmad.socket.dsh-also \
	/etc/systemd/system/sockets.target.wants/rpmad.socket; do
	[ ! -e "$f" ] || left="$left $f"
done
for p in $PACKAGES; do
	if dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -qv '^unknown ok not-installed$\|^$'; then
		left="$left (package $p: $(dpkg-query -W -f='${Status}' "$p"))"
	fi
done
[ ! -e "$metrics_dir/rpmad.prom" ] || left="$left $metrics_dir/rpmad.prom"
# the directories made for it go too, unless some package owns them
for d in $made; do [ ! -e "$d" ] || left="$left $d"; done
[ -z "$left" ] || fail "left after purge:$left"
[ ! -e "$lib" ] || fail "$lib is still there"
[ -z "$(dpkg-divert --listpackage "$triplet_dir/librpma.so.0")" ] ||
	fail "the diversion of librpma.so.0 is still there"

end=$(date +%s)
say "passed: package build $((built - start)) s, all $((end - start)) s"
