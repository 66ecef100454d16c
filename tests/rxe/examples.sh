#!/usr/bin/env bash
# examples.sh -- inside the VM: the upstream librpma 0.12.0 examples
# (../shared/conformance, built on the host by build-examples.sh) between
# two rpmads or on one, with the expectations of ../shared/conformance/run.sh,
# and the persistent ones on a memory of a given kind.
#
# usage: examples.sh BIN PREFIX [EXAMPLE...]
#   BIN     build-examples.sh's OUTDIR (NN-name/{server,client})
#   PREFIX  a `make install` of this tree (its rpmad)
# Environment:
#   TRANSPORT  verbs (default) or tcp: rpmad --transport
#   ADDR       the servers' address (default 192.168.100.1)
#   ONE_DAEMON 1: servers and clients on one rpmad
#   PMEM       what the examples that take a <pmem-path> get:
#                file:DIR    a fresh 8 MiB file in DIR for each (default:
#                            the work folder)
#                fsdax:DIR   the same, DIR on a file system mounted -o dax
#                devdax:DEV  the device DAX DEV, for every one
#              When rpmad can make that memory persistent on TRANSPORT,
#              05-flush-to-persistent's server also declares direct write
#              to pmem, so that its client flushes with
#              RPMA_FLUSH_TYPE_PERSISTENT. fsdax over an RDMA device
#              without on-demand paging cannot be registered: the servers
#              must then fail rpma_mr_reg and say why (and are run alone).
#   PORT_BASE  first port (default 7600)
#   KEEP       a folder to copy the work folder to
# Last line: "N passed, M failed".
set -u
BIN=$(realpath "$1"); PREFIX=$(realpath "$2"); shift 2
TRANSPORT=${TRANSPORT:-verbs}
ADDR=${ADDR:-192.168.100.1}
PMEM=${PMEM:-}
PORT_BASE=${PORT_BASE:-7600}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rxe-examples.XXXXXX")
PASSED=0 FAILED=0 FAILED_NAMES=""
DAEMONS=()

cleanup() {
	for pid in "${DAEMONS[@]}"; do kill "$pid" 2>/dev/null; done
	if [ -n "${KEEP:-}" ]; then cp -r "$WORK" "$KEEP/" 2>/dev/null; fi
	rm -rf "$WORK"
}
trap cleanup EXIT

start_daemon() { # start_daemon NAME
	"$PREFIX/sbin/rpmad" --foreground --socket "$WORK/$1.sock" \
		--transport "$TRANSPORT" --config /dev/null --log-level info \
		> "$WORK/$1.log" 2>&1 &
	DAEMONS+=($!)
	for _ in $(seq 200); do [ -S "$WORK/$1.sock" ] && return 0; sleep 0.05; done
	echo "rpmad $1 did not start:"; tail -5 "$WORK/$1.log"; return 1
}

wait_listen() { # wait_listen PORT: a TCP socket, or an RDMA CM id listening
	for _ in $(seq 200); do
		ss -ltnH "sport = :$1" 2>/dev/null | grep -q . && return 0
		rdma resource show cm_id 2>/dev/null | grep LISTEN |
			grep -qE ":$1( |$)" && return 0
		sleep 0.05
	done
	return 1
}

expect() { local f=$1; shift; for p in "$@"; do grep -qF -- "$p" "$f" || { echo "    missing in $(basename "$f"): '$p'"; return 1; }; done; }
expect_count() { local n; n=$(grep -cF -- "$2" "$1"); [ "$n" -ge "$3" ] || { echo "    $(basename "$1"): '$2' on $n lines, wanted $3"; return 1; }; }

run_pair() { # run_pair NAME PORT SERVER_ARGS -- CLIENT_ARGS
	local name=$1 port=$2; shift 2
	local sargs=() cargs=() side=s
	for a in "$@"; do if [ "$a" = -- ]; then side=c; elif [ $side = s ]; then sargs+=("$a"); else cargs+=("$a"); fi; done
	local bin=$BIN/${name%%#*} out=$WORK/out/$name
	RPMAD_SOCKET=$WORK/A.sock PMEM_IS_PMEM_FORCE=1 timeout 60 "$bin/server" "$ADDR" "$port" "${sargs[@]}" > "$out.server" 2>&1 &
	local spid=$!
	wait_listen "$port"
	RPMAD_SOCKET=$WORK/B.sock PMEM_IS_PMEM_FORCE=1 timeout 60 "$bin/client" "$ADDR" "$port" "${cargs[@]}" > "$out.client" 2>&1
	CLIENT_RC=$?
	wait "$spid"; SERVER_RC=$?
}

check() { # check NAME RESULT [NOTE]
	if [ "$2" = 0 ]; then PASSED=$((PASSED + 1)); echo "ok    $1${3:+ ($3)}"
	else FAILED=$((FAILED + 1)); FAILED_NAMES="$FAILED_NAMES $1"; echo "FAIL  $1${3:+ ($3)}"
		for f in "$WORK/out/$1".*; do [ -f "$f" ] && { echo "  --- $(basename "$f")"; tail -15 "$f" | sed 's/^/    /'; }; done
	fi
}

# pmem_holds PATH TEXT: the memory holds TEXT (a device DAX cannot be
# read(2), only mapped)
pmem_holds() {
	case $PMEM in
	devdax:*) python3 - "$1" "$2" <<'EOF'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 16 << 20, mmap.MAP_SHARED, mmap.PROT_READ)
sys.exit(0 if m.find(sys.argv[2].encode()) >= 0 else 1)
EOF
		;;
	*) head -c 16M "$1" | grep -qaF -- "$2" ;;
	esac
}

# pmem_for NAME: the <pmem-path> of an example
pmem_for() {
	case $PMEM in
	devdax:*) echo "${PMEM#devdax:}" ;;
	file:* | fsdax:*) local f=${PMEM#*:}/$1.$$.pmem; rm -f "$f"; truncate -s 8M "$f"; echo "$f" ;;
	*) local f=$WORK/$1.pmem; truncate -s 8M "$f"; echo "$f" ;;
	esac
}

# Whether rpmad makes the kind persistent on the transport (librpmaclient(7)).
persistable() {
	case $PMEM in
	devdax:*) return 0 ;;
	fsdax:*) [ "$TRANSPORT" = tcp ] || [ "$ODP" = 1 ] ;;
	*) [ "$TRANSPORT" = tcp ] ;;
	esac
}

# fsdax over an RDMA device that cannot page on demand: not registrable
unregistrable() {
	case $PMEM in fsdax:*) [ "$TRANSPORT" = verbs ] && [ "$ODP" != 1 ] ;; *) false ;; esac
}

# persistent NAME PORT: a server on the pmem, its client, then again: the
# second run sees the first one's data, and the memory holds it
persistent() {
	local name=$1 port=$2 pm o=$WORK/out/$1 r=0 on=()
	pm=$(pmem_for "$name")
	if unregistrable; then
		RPMAD_SOCKET=$WORK/A.sock PMEM_IS_PMEM_FORCE=1 timeout 60 "$BIN/$name/server" "$ADDR" "$port" "$pm" > "$o.server" 2>&1
		[ $? != 0 ] || { echo "    the server registered fsdax memory on a device without on-demand paging"; r=1; }
		expect "$o.server" "on-demand paging" "devdax" || r=1
		check "$name" $r "fsdax refused: no on-demand paging"
		rm -f "$pm"
		return
	fi
	if [ "$name" = 05-flush-to-persistent ] && persistable; then on=(on); fi
	run_pair "$name" "$port" "$pm" "${on[@]}" --
	[ $CLIENT_RC = 0 ] && [ $SERVER_RC = 0 ] || r=1
	expect "$o.server" "New value: Hello world!" || r=1
	if [ ${#on[@]} -gt 0 ]; then expect "$o.client" "RPMA_FLUSH_TYPE_PERSISTENT is supported" || r=1; fi
	pmem_holds "$pm" "Hello world!" || { echo "    the memory does not hold the data"; r=1; }
	run_pair "$name#2" $((port + 100)) "$pm" "${on[@]}" --
	[ $CLIENT_RC = 0 ] && [ $SERVER_RC = 0 ] || r=1
	expect "$WORK/out/$name#2.server" "Old value: Hello world!" "New value: Hello world!" || r=1
	check "$name" $r
	# the small file systems of the VM take a few of these at a time
	case $PMEM in file:* | fsdax:*) rm -f "$pm" ;; esac
}

mkdir -p "$WORK/out"
start_daemon A || { echo "0 passed, 1 failed"; exit 1; }
if [ "${ONE_DAEMON:-0}" = 1 ]; then ln -s "$WORK/A.sock" "$WORK/B.sock"
else start_daemon B || { echo "0 passed, 1 failed"; exit 1; }; fi
# whether the servers' RDMA device pages on demand (rpmad says so at start)
ODP=0
grep -q "on-demand paging" "$WORK/A.log" && ODP=1

if [ $# -gt 0 ]; then LIST=("$@"); else mapfile -t LIST < <(cd "$BIN" && ls -d [0-9][0-9]-* | sort); fi
port=$PORT_BASE
for name in "${LIST[@]}"; do
	port=$((port + 1))
	o=$WORK/out/$name
	[ -x "$BIN/$name/server" ] || { echo "    $name was not built"; check "$name" 1; continue; }
	case $name in
	01-connection)
		run_pair "$name" $port --
		r=0; [ $CLIENT_RC = 0 ] && [ $SERVER_RC = 0 ] || r=1
		expect "$o.client" "Received a message: Hello client!" || r=1
		expect "$o.server" "Received a message: Hello server!" || r=1
		check "$name" $r ;;
	02-read-to-volatile)
		run_pair "$name" $port --
		r=0; [ $CLIENT_RC = 0 ] && [ $SERVER_RC = 0 ] || r=1
		expect "$o.client" "Read a message: Hello client!" || r=1
		check "$name" $r ;;
	03-read-to-persistent | 04-write-to-persistent | 05-flush-to-persistent | 09-flush-to-persistent-GPSPM)
		persistent "$name" $port ;;
	06-multiple-connections)
		RPMAD_SOCKET=$WORK/A.sock timeout 60 "$BIN/$name/server" "$ADDR" $port > "$o.server" 2>&1 &
		spid=$!; wait_listen $port; r=0
		for seed in 8 9 11 12; do
			RPMAD_SOCKET=$WORK/B.sock timeout 30 "$BIN/$name/client" "$ADDR" $port $seed > "$o.client.$seed" 2>&1 || r=1
			expect "$o.client.$seed" "My names is:" || r=1
		done
		wait $spid || r=1 # the server ends by itself 15 s after its last event
		expect "$o.server" "Today I have got in touch with:" || r=1
		expect_count "$o.server" "- " 4 || r=1
		check "$name" $r ;;
	07-atomic-write)
		run_pair "$name" $port -- "1st_word" "2nd_word" "3rd_word"
		r=0; [ $CLIENT_RC = 0 ] && [ $SERVER_RC = 0 ] || r=1
		expect "$o.client" "used value:" || r=1
		check "$name" $r ;;
	08-messages-ping-pong | 12-receive-completion-queue)
		# the client loops "while (--rounds)": 4 rounds exchange 3 values
		run_pair "$name" $port -- 7 4
		r=0; [ $CLIENT_RC = 0 ] && [ $SERVER_RC = 0 ] || r=1
		expect "$o.client" "Value received: 8" "Value received: 9" "Value received: 10" || r=1
		expect "$o.server" "Value received: 7" "Value received: 8" "Value received: 9" || r=1
		check "$name" $r ;;
	10-send-with-imm)
		run_pair "$name" $port -- 1234 "1st_word"
		r=0; [ $CLIENT_RC = 0 ] && [ $SERVER_RC = 0 ] || r=1
		expect "$o.server" "Received value '1st_word' with immediate data '1234'" || r=1
		check "$name" $r ;;
	11-write-with-imm)
		run_pair "$name" $port -- 1234
		r=0; [ $CLIENT_RC = 0 ] && [ $SERVER_RC = 0 ] || r=1
		expect "$o.server" "1234" || r=1
		check "$name" $r ;;
	*)
		run_pair "$name" $port --
		r=0; [ $CLIENT_RC = 0 ] && [ $SERVER_RC = 0 ] || r=1
		check "$name" $r ;;
	esac
done

for i in "${!DAEMONS[@]}"; do
	if ! kill -0 "${DAEMONS[$i]}" 2>/dev/null; then
		echo "FAIL  an rpmad died during the run; its log:"
		tail -20 "$WORK/$([ "$i" = 0 ] && echo A || echo B).log" | sed 's/^/    /'
		FAILED=$((FAILED + 1)); FAILED_NAMES="$FAILED_NAMES rpmad"
	fi
done
if [ "$FAILED" != 0 ]; then
	for d in A B; do [ -f "$WORK/$d.log" ] && { echo "  --- rpmad $d"; tail -15 "$WORK/$d.log" | sed 's/^/    /'; }; done
fi
[ -n "$FAILED_NAMES" ] && echo "failed:$FAILED_NAMES"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
