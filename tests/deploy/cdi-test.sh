#!/usr/bin/env bash
# cdi-test.sh -- the package's CDI spec (deploy/cdi/rpmad.yaml) gives a
# podman container the host's rpmad (issue 36):
#   - rootful, with runc: `podman --runtime runc run --device ...=socket`,
#     the application as uid 4242 with the socket's group added
#     (--group-add GID);
#   - rootless: an unprivileged user with a subordinate range (/etc/subuid,
#     /etc/subgid) in the socket's group runs `podman run --device
#     ...=socket`, with crun and --group-add keep-groups (where crun can
#     run here: not with a hybrid cgroup hierarchy), and with runc, which
#     cannot keep the user's groups: rpmad then opens its socket to all
#     (socket_mode 0666, after a reload) and lets in only that user
#     (allow_users, by the uid the host's kernel sees); its container's
#     user namespace is podman's default mapping (0 to the user, 1..65536
#     to the range), where rpmad shows as the overflow uid and proves
#     itself (daemon_cred.c);
# each with --network none: pmem-server and pmem-client in the container
# write a file of the container's through rpmad over the container's own
# 127.0.0.1 (rpmad listens and connects in the container's namespace).
# And without the device, the container has no socket and says so.
#
# The spec is the shipped one with two changes, so that the test neither
# needs nor disturbs the machine's /run/rpmad: its kind is
# test-PID.rpmad.io/broker and its host path this test's directory for the
# socket (mounted at /run/rpmad in the container, as the shipped spec
# does). It goes to /run/cdi for the test's duration. The image is a
# directory (--rootfs): busybox, the demo programs and their libraries.
# The rootless user, its ranges and /etc files exist only in a mount
# namespace of this test. podman's default limits exceed what this host
# lets a container have: the test's containers.conf sets them
# (CONTAINERS_CONF), with cgroupfs and a file events log where systemd
# does not run.
#
# Needs root, podman, runc, crun, newuidmap and busybox; exits 77
# (skipped) without them, and skips the rootless part (saying why) where
# rootless podman cannot run here.
set -euo pipefail
top_src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
top_build=${TOP_BUILDDIR:-$top_src/_build}
RPMAD_BIN=${RPMAD_BIN:-$top_build/rpmad/rpmad}
APP_UID=4242		# the rootful container's user
POD_UID=4244		# the rootless podman user
SOCK_GID=4245		# the socket's group
SUB_BASE=300000
port=$((20000 + $$ % 20000))
kind="test-$$.rpmad.io/broker"

say() { echo "cdi-test: $*"; }
fail() { echo "cdi-test: FAIL: $*" >&2; exit 1; }

if [ "$(id -u)" != 0 ]; then say "skipped: needs root"; exit 77; fi
for tool in podman runc crun newuidmap busybox; do
	command -v "$tool" >/dev/null || { say "skipped: no $tool"; exit 77; }
done
# the rootless user and its /etc files live in a mount namespace of ours
if [ -z "${CDI_TEST_INNER:-}" ]; then
	CDI_TEST_INNER=1 exec unshare --mount --propagation private -- "$0" "$@"
fi
lib=$(readlink -f "$top_build/.libs/librpma.so.0")
[ -f "$lib" ] || fail "build first: no $top_build/.libs/librpma.so.0"
if ldd "$lib" | grep libasan >/dev/null; then
	say "skipped: a sanitizer build (its run time would have to go into the image)"
	exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rpmad-cdi.XXXXXX")
chmod 755 "$work"
spec=/run/cdi/rpmad-test-$$.yaml
made_cdi=no
pids=()
cleanup() {
	local rc=$?
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -d "$work/home" ]; then
		# the rootless user's containers and storage
		as_pod podman system reset --force >/dev/null 2>&1 || true
	fi
	rm -f "$spec"
	[ "$made_cdi" = no ] || rmdir /run/cdi 2>/dev/null || true
	if [ "$rc" != 0 ]; then
		for f in "$work"/*.log "$work"/*.out; do
			[ -f "$f" ] && { echo "--- $f"; cat "$f"; }
		done
	fi
	rm -rf "$work" 2>/dev/null || true
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

say "the image: busybox, the demo programs and their libraries in $work/rootfs"
root=$work/rootfs
mkdir -p "$root"/{bin,etc,tmp,proc,dev,sys,run,app,data}
chmod 1777 "$root/tmp" "$root/data"
cp "$(command -v busybox)" "$root/bin/busybox"
for t in sh cat head truncate sleep grep ls id; do ln -s busybox "$root/bin/$t"; done
printf 'root:x:0:0::/:/bin/sh\napp:x:%s:%s::/:/bin/sh\n' "$APP_UID" "$APP_UID" >"$root/etc/passwd"
printf 'root:x:0:\napp:x:%s:\n' "$APP_UID" >"$root/etc/group"
for p in pmem-server pmem-client; do
	cc -O2 -Wall -o "$root/app/$p" "$top_src/examples/$p.c" -I"$top_src/examples" \
		-I"$top_src/include" "$lib" -libverbs
done
# the library where the dynamic linker looks by default
mkdir -p "$root/usr/lib"
cp "$lib" "$root/usr/lib/librpma.so.0"
for f in "$root/app/pmem-server" "$root/app/pmem-client" "$lib"; do
	ldd "$f" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }'
done | sort -u | while read -r l; do
	[ "${l##*/}" = librpma.so.0 ] || mkdir -p "$root$(dirname "$l")"
	case $l in */librpma.so.0) ;; *) cp -L "$l" "$root$l" ;; esac
done
cat >"$root/app/run.sh" <<'EOF'
#!/bin/sh
# in the container: a server and a client over the container's 127.0.0.1
set -eu
echo "inside: uid $(id -u), socket $(ls /run/rpmad), uid_map: $(cat /proc/self/uid_map | tr -s ' \n' ' ')"
truncate -s 64K /data/pmem.$(id -u).$$
: >/tmp/server.$(id -u).$$
/app/pmem-server 127.0.0.1 "$1" /data/pmem.$(id -u).$$ >/tmp/server.$(id -u).$$ 2>&1 &
for i in $(seq 200); do grep -q listening /tmp/server.$(id -u).$$ && break; sleep 0.05; done
cat /tmp/server.$(id -u).$$
/app/pmem-client 127.0.0.1 "$1" "$2"
wait
head -c ${#2} /data/pmem.$(id -u).$$; echo
EOF
chmod 755 "$root/app/run.sh"
chmod -R a+rX "$root"

say "rpmad with its socket in $work/run/rpmad (0660, group $SOCK_GID)"
mkdir -p "$work/run/rpmad"
chmod 755 "$work/run" "$work/run/rpmad"
printf 'socket_group = %s\nsocket_mode = 0660\n' "$SOCK_GID" >"$work/rpmad.conf"
"$RPMAD_BIN" --foreground --config "$work/rpmad.conf" --socket "$work/run/rpmad/rpmad.sock" \
	--transport tcp 2>"$work/rpmad.log" &
pids+=($!)
for _ in $(seq 400); do
	[ "$(stat -c %a:%g "$work/run/rpmad/rpmad.sock" 2>/dev/null)" = "660:$SOCK_GID" ] && break
	sleep 0.05
done
[ "$(stat -c %a:%g "$work/run/rpmad/rpmad.sock")" = "660:$SOCK_GID" ] || fail "no socket"

say "the shipped spec, its kind and host path the test's, in $spec"
[ -d /run/cdi ] || made_cdi=yes
mkdir -p /run/cdi
sed -e "s|^kind: rpmad.io/broker$|kind: $kind|" \
	-e "s|hostPath: /run/rpmad$|hostPath: $work/run/rpmad|" \
	"$top_src/deploy/cdi/rpmad.yaml" >"$spec"
[ "$(grep -c "$kind\|$work/run/rpmad" "$spec")" = 2 ] || { cat "$spec"; fail "the spec changed shape"; }

# limits a container may have here (podman's defaults exceed them)
cat >"$work/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
export CONTAINERS_CONF=$work/containers.conf

# check NAME MSG: the container's output holds the message written through
# rpmad and read back from the container's file
check() {
	grep -q "^client: wrote and persisted" "$work/$1.out" && grep -qx "$2" "$work/$1.out" ||
		fail "$1: the message did not go through rpmad"
	say "$1: written, flushed and read back through the host's rpmad"
}

say "rootful, runc: --device $kind=socket, uid $APP_UID with --group-add $SOCK_GID"
msg="rootful runc at $(date +%T.%N)"
podman --runtime runc run --rm --network none --device "$kind=socket" \
	--user "$APP_UID:$APP_UID" --group-add "$SOCK_GID" --rootfs "$root" \
	/app/run.sh "$port" "$msg" >"$work/rootful.out" 2>&1 || fail "rootful: the container failed"
cat "$work/rootful.out"
check rootful "$msg"

say "rootful without the device: no socket, and the library says where it looked"
if podman --runtime runc run --rm --network none --rootfs "$root" /bin/sh -c \
	"truncate -s 64K /tmp/f && exec /app/pmem-server 127.0.0.1 $port /tmp/f" \
	>"$work/nodevice.out" 2>&1; then
	fail "a container without the device reached rpmad"
fi
grep -q "cannot reach rpmad at /run/rpmad/rpmad.sock" "$work/nodevice.out" ||
	fail "no word of the socket on stderr"

say "rootless: user $POD_UID, subordinate range $SUB_BASE+65536, in group $SOCK_GID"
for f in passwd group subuid subgid; do
	cp "/etc/$f" "$work/$f"
	mount --bind "$work/$f" "/etc/$f"
done
mkdir -p "$work/home" "$work/xdg"
chown "$POD_UID:$POD_UID" "$work/home" "$work/xdg"
chmod 700 "$work/xdg"
echo "rpmadpod:x:$POD_UID:$POD_UID::$work/home:/bin/sh" >>/etc/passwd
echo "rpmadpod:x:$POD_UID:" >>/etc/group
echo "rpmadsock:x:$SOCK_GID:rpmadpod" >>/etc/group
echo "rpmadpod:$SUB_BASE:65536" >>/etc/subuid
echo "rpmadpod:$SUB_BASE:65536" >>/etc/subgid
cp "$work/containers.conf" "$work/home/containers.conf"
# a host without a unified cgroup hierarchy (cgroup v1 or hybrid): crun
# gives rootless containers no cgroup of their own then
crun_cg=()
[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || crun_cg=(--cgroups disabled)
chown "$POD_UID:$POD_UID" "$work/home/containers.conf"
as_pod() {
	setpriv --reuid="$POD_UID" --regid="$POD_UID" --init-groups \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$work/home" USER=rpmadpod \
		XDG_RUNTIME_DIR="$work/xdg" CONTAINERS_CONF="$work/home/containers.conf" "$@"
}
if ! as_pod podman --runtime runc run --rm --network none --rootfs "$root" /bin/id \
	>"$work/rootless-probe.out" 2>&1; then
	cat "$work/rootless-probe.out"
	say "rootless podman cannot run here: that part is skipped"
	say "passed (rootful only)"
	exit 0
fi

# rootless NAME RUNTIME OPTION...: the pair in a rootless container
rootless() {
	local name=$1 runtime=$2
	shift 2
	msg="$name at $(date +%T.%N)"
	as_pod podman --runtime "$runtime" run --rm --network none --device "$kind=socket" \
		"$@" --rootfs "$root" /app/run.sh "$port" "$msg" >"$work/$name.out" 2>&1 ||
		fail "$name: the container failed"
	cat "$work/$name.out"
	grep -Eq "uid_map: +0 $POD_UID 1 1 $SUB_BASE 65536" "$work/$name.out" ||
		fail "$name: not podman's default mapping"
	check "$name" "$msg"
}

say "rootless, crun: the user's groups kept (--group-add keep-groups), the socket 0660"
if as_pod podman --runtime crun run --rm --network none "${crun_cg[@]}" --rootfs "$root" /bin/id \
	>"$work/crun-probe.out" 2>&1; then
	rootless rootless-crun crun --group-add keep-groups "${crun_cg[@]}"
else
	say "skipped: rootless crun cannot run here: $(grep -v level=warning "$work/crun-probe.out" | head -1)"
fi

say "rootless, runc: keep-groups is crun's; the socket 0666 and rpmad's allow_users instead"
printf 'socket_mode = 0666\nallow_users = %s\n' "$POD_UID" >"$work/rpmad.conf"
kill -HUP "${pids[0]}"
for _ in $(seq 400); do
	[ "$(stat -c %a "$work/run/rpmad/rpmad.sock")" = 666 ] && break
	sleep 0.05
done
[ "$(stat -c %a "$work/run/rpmad/rpmad.sock")" = 666 ] || fail "the reload did not open the socket"
rootless rootless-runc runc
say "passed"
