// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_wire_rx.c -- the software transport's receive engine, fuzzed: the
 * bytes a remote peer sends on the two sockets of one connection, cut into
 * frames and handled by rpmad's real code (tcp_rx.c and everything it
 * calls: set-up frames, the target's checks and execution of operations
 * into a real registration, the initiator's handling of answers).
 *
 * Each input gets a fresh session of rpmad's core in this process with a
 * peer, a registration of two pages (a sealed memfd; its key is always
 * FUZZ_KEY and its address FUZZ_ADDR, because this harness makes
 * rpmad's random numbers a constant) and a connection whose two sockets
 * are socketpairs; the harness is the remote peer at their other ends.
 * The connection may wait for the peer's READY (passive) or ACCEPT
 * (active) or be established already, and work of its own (a read, a
 * write, a send, a flush and an atomic write) may wait for answers; two
 * receives are posted for the peer's messages.
 *
 * Input: flags (1 byte) | n (2 bytes, little-endian) | n bytes for the
 * socket of the peer's operations | the rest for the socket of its
 * answers.
 *   flags bit 0: rpmad is the active side (else passive)
 *   bit 1: still setting up (else established)
 *   bit 2: the peer closes both sockets after its bytes
 *   bits 4-7: rpmad's own work: read, write, send, flush + atomic
 * Then the loop runs (no waiting) until nothing more happens.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utlist.h>

#include "control/conn_req.h"
#include "control/mr_req.h"
#include "control/peer_req.h"
#include "control/request.h"
#include "control/session.h"
#include "core/daemon.h"
#include "core/guard.h"
#include "core/registry.h"
#include "fuzz_target.h"
#include "fuzz_wire_rx.h"
#include "log/log.h"
#include "objects/conn.h"
#include "objects/device.h"
#include "objects/mr.h"
#include "objects/peer.h"
#include "objects/qp.h"
#include "tcp/tcp.h"
#include "th_requests.h"
#include "transport/transports.h"

/* rpmad's process-wide state; main.c has it in the daemon */
struct daemon_state rpmad;

/* ------------------------------------------------ the wired transport */

/*
 * The software transport, but connect() wires the connection to the
 * harness's sockets (wire_connect): the connection is set up by rpmad's
 * requests and its transport state is tcp's own, without a handshake on
 * real sockets.
 */
static struct transport_ops wire_ops;
static struct device *wire_device;

/* what the next connect() wires up: the input's flags, the peer's ends */
static struct {
	unsigned flags;
	int *peer_end;
} wiring;

/* The transport's state of the connection, as if set up over TCP. */
static int
wire_connect(struct conn *conn, const void *pdata, uint8_t len, char *err,
		size_t errlen)
{
	(void) pdata;
	(void) len;
	(void) err;
	(void) errlen;
	struct tcp_conn *tc = tcp_conn_new(tcp_rx_rnr_expired);
	if (tc == NULL)
		abort();
	bool active = wiring.flags & FUZZ_F_ACTIVE;
	tc->conn = conn;
	conn_set_tp(conn, tc);
	tc->passive = !active;
	for (int i = 0; i < 2; i++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
				SOCK_CLOEXEC, 0, sv))
			abort();
		tcp_chan_init(&tc->chan[i], tc, sv[0], tcp_rx_ready,
				tcp_rx_tx_turn, tcp_rx_rx_turn);
		tcp_chan_pause(&tc->chan[i], false);
		wiring.peer_end[i] = sv[1];
	}
	tcp_conn_set_tenant(tc);
	/* the primary carries the active side's operations */
	tc->ini = active ? &tc->chan[0] : &tc->chan[1];
	tc->tgt = active ? &tc->chan[1] : &tc->chan[0];
	if (wiring.flags & FUZZ_F_SETUP)
		tc->state = active ? TC_HELLO : TC_ACCEPTED;
	else
		tc->state = TC_ESTABLISHED;
	return 0;
}

/* device 1, the peer's; then the software transport's own */
static int
wire_init(const struct transport_env *env)
{
	wire_ops = transport_tcp;
	wire_ops.connect = wire_connect;
	wire_device = device_add("fuzz-wire", &wire_ops, false, NULL);
	if (wire_device == NULL)
		return -ENOMEM;
	return transport_tcp_init(env);
}

static struct device *
wire_device_for(const struct sockaddr_storage *ss, socklen_t len,
		bool local)
{
	(void) ss;
	(void) len;
	(void) local;
	return wire_device;
}

static const struct transport_entry wire_entry = {
	.name = "tcp",
	.ops = &wire_ops,
	.fallback = true,
	.device_noun = "software device",
	.init = wire_init,
	.fini = transport_tcp_fini,
	.device_for = wire_device_for,
	.pending = transport_tcp_pending,
};

/* rpmad's transport table, here the wired software transport alone */
const struct transport_entry *const transport_table[] = {
	&wire_entry,
	NULL,
};

/*
 * rpmad's random numbers (keys, ids, tokens), made constant here: the
 * registration's key is FUZZ_KEY in every input, so that inputs can name
 * it. (Calls from this program bind to this definition.)
 */
ssize_t
getrandom(void *buf, size_t len, unsigned int flags)
{
	(void) flags;
	memset(buf, FUZZ_RANDOM_BYTE, len);
	return (ssize_t)len;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	memset(&rpmad, 0, sizeof(rpmad));
	config_defaults(&rpmad.cfg);
	strcpy(rpmad.cfg.transport, "tcp");
	log_max_level = getenv("FUZZ_LOG") ? LOG_DEBUG : -1;
	(void) signal(SIGPIPE, SIG_IGN);
	if (guard_init())
		abort();
	rpmad.loop = loop_new();
	if (rpmad.loop == NULL)
		abort();
	rpmad.start_ns = loop_now_ns();
	registry_init();
	conn_init();
	char why[512];
	if (transports_configure(&rpmad.cfg, why, sizeof(why)) ||
			transports_init(rpmad.loop, "tcp"))
		abort();
	return 0;
}

/* --------------------------------------------- rpmad's objects, directly */

typedef void handler_fn(struct req_ctx *rc);

/* Runs one handler; aborts when it fails (the set-up must work). */
static void
call(struct session *s, handler_fn *fn, Rpmad__Request *req, int *fds,
		unsigned nfds, struct req_ctx *rc)
{
	memset(rc, 0, sizeof(*rc));
	rc->client = session_client(s);
	rc->req = req;
	rc->fds = fds;
	rc->nfds = nfds;
	rpmad__response__init(&rc->resp);
	fn(rc);
	if (rc->resp.error) {
		(void) fprintf(stderr, "fuzz_wire_rx: set-up failed: %s\n",
				rc->errmsg);
		abort();
	}
	ctl_close_fds(rc->fds, rc->nfds);
	ctl_close_fds(rc->out_fds, rc->n_out_fds);
}

static struct session *
session_open(void)
{
	struct session *s = session_new_own(-1, "fuzz", false, true);
	if (s == NULL)
		abort();
	return s;
}

/* A peer, a registration of FUZZ_LEN bytes, a connection request. */
static struct conn *
objects(struct session *s, uint64_t *conn_id)
{
	struct req_ctx rc;
	struct th_req q;
	call(s, peer_handle_new,
			th_req_id(&q, RPMAD__REQUEST__BODY_PEER_NEW, 1), NULL,
			0, &rc);
	uint64_t peer = rc.peer.peer_id;

	int fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, FUZZ_LEN) ||
			fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW))
		abort();
	/* usage: everything, so that the peer reaches every path */
	call(s, mr_handle_reg,
			th_req_mr_reg(&q, peer, FUZZ_ADDR, FUZZ_LEN, 0xff), &fd,
			1, &rc);
	if (rc.mr.key != FUZZ_KEY)
		abort();

	th_req_conn_req_new(&q, peer, "127.0.0.1", "9");
	q.cfg.sq_size = q.cfg.rq_size = q.cfg.cq_size = 8;
	call(s, conn_handle_req_new, &q.req, NULL, 0, &rc);
	*conn_id = rc.qp.conn_id;
	return (struct conn *)registry_find(rc.qp.conn_id, OBJ_CONN,
			&session_client(s)->owner);
}

/* Work of rpmad's own client, written into the shared rings. */
static void
post_work(struct conn *conn, unsigned mask)
{
	struct qp *qp = conn_qp(conn);
	uint32_t tail = atomic_load(&qp->hdr->sq.tail);
	struct qp_sqe e = {
		.flags = QP_SQE_SIGNALED, .laddr = FUZZ_ADDR, .lkey = FUZZ_KEY,
		.length = FUZZ_OP_LEN, .raddr = FUZZ_REMOTE_ADDR,
		.rkey = FUZZ_REMOTE_KEY,
	};
	static const uint8_t ops[] = { QP_OP_READ, QP_OP_WRITE, QP_OP_SEND,
		QP_OP_FLUSH, QP_OP_ATOMIC_WRITE };
	for (unsigned i = 0; i < sizeof(ops); i++) {
		if (!(mask & (1u << (i < 4 ? i : 3))))
			continue;
		e.opcode = ops[i];
		e.wr_id = i + 1;
		e.length = ops[i] == QP_OP_ATOMIC_WRITE ? 8 : FUZZ_OP_LEN;
		*qp_sq_slot(qp->region, &qp->layout, tail++) = e;
	}
	atomic_store(&qp->hdr->sq.tail, tail);

	/* two receives for the peer's messages, in the second page */
	uint32_t rtail = atomic_load(&qp->hdr->rq.tail);
	for (int i = 0; i < 2; i++) {
		struct qp_rqe r = { .wr_id = 100 + (uint64_t)i,
				.laddr = FUZZ_ADDR + FUZZ_LEN / 2 +
					(uint64_t)i * FUZZ_RECV_LEN,
				.lkey = FUZZ_KEY, .length = FUZZ_RECV_LEN };
		*qp_rq_slot(qp->region, &qp->layout, rtail++) = r;
	}
	atomic_store(&qp->hdr->rq.tail, rtail);
}

/*
 * The connection connects (wire_connect makes its transport state) and,
 * unless the input wants it still setting up, is established.
 */
static void
wire_up(struct session *s, struct conn *conn, uint64_t conn_id,
		unsigned flags, int peer_end[2])
{
	struct req_ctx rc;
	struct th_req q;
	wiring.flags = flags;
	wiring.peer_end = peer_end;
	call(s, conn_handle_req_connect, th_req_connect(&q, conn_id, NULL, 0),
			NULL, 0, &rc);
	if (!(flags & FUZZ_F_SETUP))
		conn_established(conn, NULL, 0, false);
}

/* ------------------------------------------------------------ one input */

struct stream {
	int fd;
	const uint8_t *p;
	size_t left;
	bool closed;
};

static bool
feed(struct stream *st, bool close_after)
{
	bool moved = false;
	while (st->left > 0) {
		ssize_t n = send(st->fd, st->p, st->left, MSG_NOSIGNAL |
				MSG_DONTWAIT);
		if (n <= 0)
			break;
		st->p += n;
		st->left -= (size_t)n;
		moved = true;
	}
	if (st->left == 0 && close_after && !st->closed) {
		(void) shutdown(st->fd, SHUT_WR);
		st->closed = true;
		moved = true;
	}
	return moved;
}

/* What rpmad sends to the peer: read and dropped. */
static bool
drain(int fd)
{
	uint8_t buf[65536];
	bool moved = false;
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		moved = true;
	return moved;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	unsigned flags = data[0];
	size_t n_ops = (size_t)data[1] | (size_t)data[2] << 8;
	if (n_ops > size - 3)
		n_ops = size - 3;

	struct session *s = session_open();
	uint64_t conn_id;
	struct conn *conn = objects(s, &conn_id);
	int peer_end[2];
	wire_up(s, conn, conn_id, flags, peer_end);
	post_work(conn, flags >> 4);

	/* the peer's operations come on rpmad's target socket */
	bool active = flags & FUZZ_F_ACTIVE;
	struct stream ops = { .fd = peer_end[active ? 1 : 0], .p = data + 3,
			.left = n_ops };
	struct stream answers = { .fd = peer_end[active ? 0 : 1],
			.p = data + 3 + n_ops, .left = size - 3 - n_ops };
	bool close_after = flags & FUZZ_F_CLOSE;

	/*
	 * Until nothing moves (bounded: every round consumes input). While
	 * setting up, a real peer says nothing on the secondary socket.
	 */
	struct stream *secondary = active ? &ops : &answers;
	for (int idle = 0, round = 0; idle < 5 && round < 10000; round++) {
		struct conn_info info;
		conn_describe(conn, &info);
		bool up = info.state != CONN_CONNECTING;
		bool moved = false;
		if (up || secondary != &ops)
			moved |= feed(&ops, close_after);
		if (up || secondary != &answers)
			moved |= feed(&answers, close_after);
		(void) loop_run_once(rpmad.loop, 0);
		moved |= drain(peer_end[0]);
		moved |= drain(peer_end[1]);
		idle = moved ? 0 : idle + 1;
	}

	session_destroy(s);
	(void) loop_run_once(rpmad.loop, 0);
	(void) close(peer_end[0]);
	(void) close(peer_end[1]);
	return 0;
}
