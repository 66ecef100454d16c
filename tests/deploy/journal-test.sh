#!/usr/bin/env bash
# journal-test.sh -- under systemd, rpmad logs to the journal with fields
# that name the client and the connection, so that
# `journalctl -u rpmad RPMAD_CLIENT_UID=4242` finds a user's lines.
#
# How: a real systemd-journald runs in a mount namespace of the test's own
# (tmpfs on /run and /var/log: its sockets and its journal file are the
# test's, the host's journal is untouched). rpmad runs as the unit would
# run it: stderr connected to a stream and JOURNAL_STREAM naming that
# stream's device and inode (here a file; systemd uses journald's stream
# socket). A server (uid 4242) and a client (root) of the demo talk through
# it; then `journalctl --file` on the journal file selects the lines by
# RPMAD_CLIENT_UID and the test checks their fields.
#
# Needs root (mount namespace) and systemd-journald, journalctl; exits 77
# (skipped) otherwise.
set -euo pipefail
top_src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
top_build=${TOP_BUILDDIR:-$top_src/_build}
RPMAD_BIN=${RPMAD_BIN:-$top_build/rpmad/rpmad}
JOURNALD=${JOURNALD:-/lib/systemd/systemd-journald}
CUID=4242
port=$((20000 + $$ % 20000))

say() { echo "journal-test: $*"; }
fail() { echo "journal-test: FAIL: $*" >&2; exit 1; }
# shellcheck source=tests/deploy/lib.sh
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then say "skipped: needs root (mount namespace)"; exit 77; fi
[ -x "$JOURNALD" ] || { say "skipped: no $JOURNALD"; exit 77; }
command -v journalctl >/dev/null || { say "skipped: no journalctl"; exit 77; }
deploy_lib

deploy_work journal '*.json'

for p in pmem-server pmem-client; do
	# shellcheck disable=SC2086
	cc $san -O2 -Wall -o "$work/$p" "$top_src/examples/$p.c" -I"$top_src/examples" \
		-I"$top_src/include" "$lib" -Wl,-rpath,"$(dirname "$lib")" -libverbs
done
truncate -s 64K "$work/pmem.file"
chown "$CUID:$CUID" "$work/pmem.file"
printf 'socket_mode = 0666\nlog_level = info\n' >"$work/rpmad.conf"

export work RPMAD_BIN JOURNALD CUID port
# everything below runs in the test's own mount namespace; whatever it
# starts, it stops (the namespace goes with its last process)
# shellcheck disable=SC2016
unshare --mount --propagation private -- bash -euc '
mount -t tmpfs -o mode=755 tmpfs /run
mount -t tmpfs -o mode=755 tmpfs /var/log
mkdir -p /run/systemd/journal
"$JOURNALD" >"$work/journald.log" 2>&1 &
jpid=$!
pids="$jpid"
trap "kill \$pids 2>/dev/null || true; wait 2>/dev/null || true" EXIT
for _ in $(seq 200); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
[ -S /run/systemd/journal/socket ] || { echo "journald did not start"; exit 1; }

# stderr is "the journal stream": JOURNAL_STREAM names its device:inode
: >"$work/rpmad-stderr.log"
stream=$(stat -c %d:%i "$work/rpmad-stderr.log")
JOURNAL_STREAM=$stream "$RPMAD_BIN" --foreground --config "$work/rpmad.conf" \
	--socket "$work/r.sock" --transport tcp 2>>"$work/rpmad-stderr.log" &
rpid=$!
pids="$pids $rpid"
for _ in $(seq 200); do [ -S "$work/r.sock" ] && break; sleep 0.05; done

export RPMAD_SOCKET="$work/r.sock"
setpriv --reuid="$CUID" --regid="$CUID" --clear-groups \
	"$work/pmem-server" 127.0.0.1 "$port" "$work/pmem.file" >"$work/server.out" 2>&1 &
spid=$!
pids="$pids $spid"
for _ in $(seq 200); do grep -q listening "$work/server.out" && break; sleep 0.05; done
"$work/pmem-client" 127.0.0.1 "$port" "into the journal test" >"$work/client.out" 2>&1
wait "$spid"
echo "$spid" >"$work/server.pid"
kill "$rpid"; wait "$rpid" || true
kill "$jpid"; wait "$jpid" || true
f=$(find /run/log/journal -name system.journal | head -1)
[ -n "$f" ] || { echo "no journal file"; exit 1; }
journalctl --file "$f" -o json RPMAD_CLIENT_UID="$CUID" >"$work/uid.json"
journalctl --file "$f" -o json SYSLOG_IDENTIFIER=rpmad >"$work/all.json"
' >"$work/ns.log" 2>&1 || { cat "$work/ns.log"; fail "the namespace part"; }

[ ! -s "$work/rpmad-stderr.log" ] || fail "rpmad wrote to stderr instead of the journal"
spid=$(cat "$work/server.pid")
python3 - "$work/uid.json" "$work/all.json" "$CUID" "$spid" <<'EOF'
import json, sys
def entries(path):
    return [json.loads(l) for l in open(path) if l.strip()]
mine, every = entries(sys.argv[1]), entries(sys.argv[2])
uid, pid = sys.argv[3], sys.argv[4]
assert mine, "no line with RPMAD_CLIENT_UID=%s" % uid
for e in mine:
    assert e["RPMAD_CLIENT_UID"] == uid and e["RPMAD_CLIENT_PID"] == pid, e
    assert e["RPMAD_CLIENT_COMM"] == "pmem-server", e
    assert e["SYSLOG_IDENTIFIER"] == "rpmad", e
msgs = [e["MESSAGE"] for e in mine]
def one(pred, what):
    hits = [e for e in mine if pred(e)]
    assert hits, "no line %s among %s" % (what, msgs)
    return hits[0]
one(lambda e: "connected" in e["MESSAGE"] and e["PRIORITY"] == "6",
    "of the server connecting (info)")
one(lambda e: "listening at 127.0.0.1" in e["MESSAGE"], "of its endpoint")
est = one(lambda e: "established" in e["MESSAGE"], "of its connection")
assert est["RPMAD_PEER_ADDRESS"].startswith("127.0.0.1:"), est
assert est["RPMAD_LOCAL_ADDRESS"].startswith("127.0.0.1:"), est
assert int(est["RPMAD_CONN"]) > 0, est
one(lambda e: "ended" in e["MESSAGE"], "of its session ending")
# the client's lines (root) are not selected, but they are there
roots = [e for e in every if e.get("RPMAD_CLIENT_UID") == "0"
         and e.get("RPMAD_CLIENT_COMM") == "pmem-client"]
assert roots, "no line of the client (uid 0)"
# lines about rpmad itself carry no client
plain = [e for e in every if "ready on" in e["MESSAGE"]]
assert plain and "RPMAD_CLIENT_UID" not in plain[0], plain
print("journal-test: %d lines of uid %s, %d in all:" % (len(mine), uid, len(every)))
for e in mine:
    print("  RPMAD_CONN=%-8s RPMAD_PEER_ADDRESS=%-16s %s" % (
        e.get("RPMAD_CONN", "-"), e.get("RPMAD_PEER_ADDRESS", "-"), e["MESSAGE"]))
EOF
say "passed"
