// SPDX-License-Identifier: BSD-3-Clause
/*
 * harness.c -- rpmad's core in the test process (see harness.h)
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <utlist.h>

#include "control/conn_req.h"
#include "control/device_req.h"
#include "control/ep_req.h"
#include "control/mr_req.h"
#include "control/peer_req.h"
#include "control/session.h"
#include "core/daemon.h"
#include "core/guard.h"
#include "core/registry.h"
#include "fake_rdma.h"
#include "harness.h"
#include "librpma.h"
#include "log/log.h"
#include "log/remote_log.h"
#include "objects/device.h"
#include "objects/ep.h"
#include "objects/mr.h"
#include "objects/peer.h"
#include "tcp/tcp.h"
#include "th_requests.h"
#include "transport/transports.h"
#include "verbs/verbs.h"

/* rpmad's process-wide state; main.c has it in the daemon */
struct daemon_state rpmad;

void
h_setup(void)
{
	memset(&rpmad, 0, sizeof(rpmad));
	config_defaults(&rpmad.cfg);
	strcpy(rpmad.cfg.transport, "auto");
	/* quiet unless asked (VERBS_TEST_LOG=info): errors are expected */
	const char *lvl = getenv("VERBS_TEST_LOG");
	log_max_level = lvl ? log_level_parse(lvl) : LOG_CRIT;
	if (log_max_level < 0)
		log_max_level = LOG_CRIT;
	ck_assert_int_eq(guard_init(), 0);
	rpmad.loop = loop_new();
	ck_assert_ptr_nonnull(rpmad.loop);
	rpmad.start_ns = loop_now_ns();
	registry_init();
	conn_init();
	h_configure();
	ck_assert_int_eq(transports_init(rpmad.loop, rpmad.cfg.transport), 0);
}

void
h_configure(void)
{
	char why[512];
	ck_assert_msg(transports_configure(&rpmad.cfg, why, sizeof(why)) == 0,
			"%s", why);
}

void
h_teardown(void)
{
	session_destroy_all();
	h_run(5);
	transport_verbs_fini();
	device_fini();
	remote_log_fini();
	loop_delete(rpmad.loop);
	rpmad.loop = NULL;

	struct fake_counts c = fake_counts();
	ck_assert_uint_eq(c.pds, 0);
	ck_assert_uint_eq(c.mrs, 0);
	ck_assert_uint_eq(c.cqs, 0);
	ck_assert_uint_eq(c.qps, 0);
	ck_assert_uint_eq(c.comp_channels, 0);
	ck_assert_uint_eq(c.ids, 0);
	ck_assert_uint_eq(c.event_channels, 0);
	ck_assert_uint_eq(c.unacked_events, 0);
}

struct session *
h_session(void)
{
	static unsigned n;
	char comm[16];
	(void) snprintf(comm, sizeof(comm), "client%u", ++n);
	struct session *s = session_new_own(-1, comm, false, true);
	ck_assert_ptr_nonnull(s);
	return s;
}

void
h_run(unsigned ms)
{
	uint64_t until = loop_now_ns() + (uint64_t)ms * 1000000;
	do {
		(void) loop_run_once(rpmad.loop, 0);
	} while (loop_now_ns() < until);
}

/* ------------------------------------------------------------ requests */

typedef void handler_fn(struct req_ctx *rc);

/* rpmad's handler of each kind of request (its dispatcher's table) */
static handler_fn *const handlers[] = {
	[RPMAD__REQUEST__BODY_DEVICE_GET] = device_handle_get,
	[RPMAD__REQUEST__BODY_PEER_NEW] = peer_handle_new,
	[RPMAD__REQUEST__BODY_PEER_DELETE] = peer_handle_delete,
	[RPMAD__REQUEST__BODY_MR_REG] = mr_handle_reg,
	[RPMAD__REQUEST__BODY_MR_DEREG] = mr_handle_dereg,
	[RPMAD__REQUEST__BODY_MR_ADVISE] = mr_handle_advise,
	[RPMAD__REQUEST__BODY_EP_LISTEN] = ep_handle_listen,
	[RPMAD__REQUEST__BODY_EP_SHUTDOWN] = ep_handle_shutdown,
	[RPMAD__REQUEST__BODY_EP_NEXT_CONN_REQ] = ep_handle_next_conn_req,
	[RPMAD__REQUEST__BODY_CONN_REQ_NEW] = conn_handle_req_new,
	[RPMAD__REQUEST__BODY_CONN_REQ_DELETE] = conn_handle_req_delete,
	[RPMAD__REQUEST__BODY_CONN_REQ_CONNECT] = conn_handle_req_connect,
	[RPMAD__REQUEST__BODY_CONN_NEXT_EVENT] = conn_handle_next_event,
	[RPMAD__REQUEST__BODY_CONN_DISCONNECT] = conn_handle_disconnect,
	[RPMAD__REQUEST__BODY_CONN_DELETE] = conn_handle_delete,
};

/* What the handler put into the reply, as the test reads it. */
static void
reply_of(const struct req_ctx *rc, struct h_reply *r)
{
	memset(r, 0, sizeof(*r));
	if (rc->resp.error) {
		r->code = rc->resp.error->code;
		(void) snprintf(r->msg, sizeof(r->msg), "%s",
				rc->resp.error->message);
		return;
	}
	switch (rc->resp.body_case) {
	case RPMAD__RESPONSE__BODY_DEVICE:
		r->device_id = rc->device.device_id;
		(void) snprintf(r->name, sizeof(r->name), "%s",
				rc->device.name);
		(void) snprintf(r->transport, sizeof(r->transport), "%s",
				rc->device.transport);
		r->odp = rc->device.odp_capable;
		break;
	case RPMAD__RESPONSE__BODY_PEER:
		r->id = rc->peer.peer_id;
		break;
	case RPMAD__RESPONSE__BODY_MR:
		r->id = rc->mr.mr_id;
		r->key = rc->mr.key;
		r->lkey = rc->mr.lkey;
		break;
	case RPMAD__RESPONSE__BODY_EP:
		r->id = rc->ep.ep_id;
		break;
	case RPMAD__RESPONSE__BODY_QP:
		r->id = rc->qp.conn_id;
		r->pdata_len = rc->qp.private_data.len;
		if (r->pdata_len)
			memcpy(r->pdata, rc->qp.private_data.data,
					r->pdata_len);
		break;
	case RPMAD__RESPONSE__BODY_EVENT:
		r->event = rc->event.event;
		r->has_pdata = rc->event.has_private_data;
		r->pdata_len = rc->event.private_data.len;
		if (r->pdata_len)
			memcpy(r->pdata, rc->event.private_data.data,
					r->pdata_len);
		break;
	default:
		break;
	}
}

/* One request through rpmad's handler of its kind, as a session sent it. */
static void
call(struct session *s, Rpmad__Request *req, int *fds, unsigned nfds,
		struct h_reply *r)
{
	ck_assert_uint_lt(req->body_case,
			sizeof(handlers) / sizeof(handlers[0]));
	handler_fn *fn = handlers[req->body_case];
	ck_assert_ptr_nonnull(fn);
	struct req_ctx rc;
	memset(&rc, 0, sizeof(rc));
	rc.client = session_client(s);
	rc.req = req;
	rc.fds = fds;
	rc.nfds = nfds;
	rpmad__response__init(&rc.resp);
	fn(&rc);
	reply_of(&rc, r);
	for (unsigned i = 0; i < rc.nfds; i++) {
		if (rc.fds[i] >= 0)
			(void) close(rc.fds[i]);
	}
	for (unsigned i = 0; i < rc.n_out_fds; i++)
		(void) close(rc.out_fds[i]);
	if (rc.after)
		rc.after(rc.after_arg);
}

void
h_by_id(struct session *s, Rpmad__Request__BodyCase kind, uint64_t id,
		struct h_reply *r)
{
	struct th_req q;
	Rpmad__Request *req = th_req_id(&q, kind, id);
	ck_assert_ptr_nonnull(req);
	call(s, req, NULL, 0, r);
}

void
h_device_get(struct session *s, const char *addr, bool remote,
		struct h_reply *r)
{
	struct th_req q;
	call(s, th_req_device_get(&q, addr, remote), NULL, 0, r);
}

void
h_mem_new(struct h_mem *m, size_t len)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	memset(m, 0, sizeof(*m));
	m->len = (len + page - 1) / page * page;
	m->fd = memfd_create("verbs-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ck_assert_int_ge(m->fd, 0);
	ck_assert_int_eq(ftruncate(m->fd, (off_t)m->len), 0);
	ck_assert_int_eq(fcntl(m->fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	m->ptr = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			m->fd, 0);
	ck_assert_ptr_ne(m->ptr, MAP_FAILED);
}

void
h_mem_free(struct h_mem *m)
{
	(void) munmap(m->ptr, m->len);
	(void) close(m->fd);
	m->ptr = NULL;
	m->fd = -1;
}

void
h_mr_reg(struct session *s, uint64_t peer, struct h_mem *m, uint32_t usage,
		struct h_reply *r)
{
	struct th_req q;
	int fds[1] = { dup(m->fd) };
	call(s,
			th_req_mr_reg(&q, peer, (uint64_t) (uintptr_t) m->ptr,
					m->len, usage),
			fds, 1, r);
	if (r->code == 0) {
		m->mr_id = r->id;
		m->key = r->key;
		m->lkey = r->lkey;
	}
}

void
h_mr_advise(struct session *s, uint64_t mr, uint64_t off, uint64_t len,
		int advice, struct h_reply *r)
{
	struct th_req q;
	call(s, th_req_mr_advise(&q, mr, off, len, advice), NULL, 0, r);
}

struct mr *
h_mr(struct session *s, uint64_t id)
{
	return (struct mr *)registry_find(id, OBJ_MR,
			&session_client(s)->owner);
}

void
h_ep_listen(struct session *s, uint64_t peer, const char *addr,
		const char *port, struct h_reply *r)
{
	struct th_req q;
	call(s, th_req_ep_listen(&q, peer, addr, port), NULL, 0, r);
}

/* The queue sizes of cfg (sq, rq, cq, rcq) in the request's q->cfg. */
static Rpmad__Request *
sized(struct th_req *q, Rpmad__Request *req, const uint32_t cfg[4])
{
	q->cfg.sq_size = cfg[0];
	q->cfg.rq_size = cfg[1];
	q->cfg.cq_size = cfg[2];
	q->cfg.rcq_size = cfg[3];
	q->cfg.timeout_ms = 1000;
	return req;
}

void
h_ep_next(struct session *s, uint64_t ep, const uint32_t cfg[4],
		struct h_reply *r)
{
	struct th_req q;
	call(s, sized(&q, th_req_ep_next(&q, ep), cfg), NULL, 0, r);
}

void
h_conn_req_new(struct session *s, uint64_t peer, const char *addr,
		const char *port, const uint32_t cfg[4], struct h_reply *r)
{
	struct th_req q;
	call(s, sized(&q, th_req_conn_req_new(&q, peer, addr, port), cfg), NULL,
			0, r);
}

void
h_connect(struct session *s, uint64_t conn, const void *pdata, size_t len,
		struct h_reply *r)
{
	struct th_req q;
	call(s, th_req_connect(&q, conn, pdata, len), NULL, 0, r);
}

struct conn *
h_conn(struct session *s, uint64_t id)
{
	return (struct conn *)registry_find(id, OBJ_CONN,
			&session_client(s)->owner);
}

struct conn_info
h_info(const struct conn *c)
{
	struct conn_info info;
	conn_describe(c, &info);
	return info;
}

int
h_wait_event(struct session *s, uint64_t conn, unsigned ms,
		struct h_reply *r)
{
	uint64_t until = loop_now_ns() + (uint64_t)ms * 1000000;
	for (;;) {
		h_next_event(s, conn, r);
		if (r->code == 0)
			return r->event;
		if (loop_now_ns() >= until)
			return -1;
		(void) loop_run_once(rpmad.loop, 1);
	}
}

/* ---------------------------------------------------------- the rings */

/*
 * As the library: the client's side of the ring steps (common/qp_ring.h)
 * on rpmad's views of the rings, and the doorbell when rpmad asked for it.
 */
static void
doorbell(struct qp *qp, _Atomic uint32_t *flag)
{
	uint64_t one = 1;
	if (qp_wakeup_wanted(flag) &&
			write(qp->doorbell_fd, &one, sizeof(one)) < 0)
		ck_abort_msg("doorbell: %s", strerror(errno));
}

static void
sq_push(struct conn *c, const struct qp_sqe *sqe)
{
	struct qp *qp = conn_qp(c);
	uint32_t tail = atomic_load_explicit(&qp->hdr->sq.tail,
			memory_order_relaxed);
	qp_ring_put(&qp->sq, &tail, sqe, sizeof(*sqe));
	doorbell(qp, &qp->hdr->need_wakeup);
}

void
h_post(struct conn *c, uint8_t opcode, bool signaled, uint64_t wr_id,
		const struct h_mem *local, size_t loff, uint32_t len,
		uint64_t raddr, uint32_t rkey, uint32_t imm)
{
	struct qp_sqe sqe = {
		.opcode = opcode,
		.flags = signaled ? QP_SQE_SIGNALED : 0,
		.imm = imm,
		.wr_id = wr_id,
		.length = len,
		.raddr = raddr,
		.rkey = rkey,
	};
	if (local) {
		sqe.lkey = local->lkey;
		sqe.laddr = (uint64_t)(uintptr_t)local->ptr + loff;
	}
	sq_push(c, &sqe);
}

void
h_post_flush(struct conn *c, bool persistent, uint64_t wr_id, uint64_t raddr,
		uint32_t rkey, uint32_t len)
{
	struct qp_sqe sqe = {
		.opcode = QP_OP_FLUSH,
		.flags = QP_SQE_SIGNALED |
			(persistent ? QP_SQE_PERSISTENT : 0),
		.wr_id = wr_id,
		.length = len,
		.raddr = raddr,
		.rkey = rkey,
	};
	sq_push(c, &sqe);
}

void
h_post_recv(struct conn *c, uint64_t wr_id, const struct h_mem *m,
		size_t off, uint32_t len)
{
	struct qp *qp = conn_qp(c);
	uint32_t tail = atomic_load_explicit(&qp->hdr->rq.tail,
			memory_order_relaxed);
	struct qp_rqe rqe = {
		.wr_id = wr_id,
		.laddr = m ? (uint64_t)(uintptr_t)m->ptr + off : 0,
		.lkey = m ? m->lkey : 0,
		.length = len,
	};
	qp_ring_put(&qp->rq, &tail, &rqe, sizeof(rqe));
	doorbell(qp, &qp->hdr->need_wakeup);
}

int
h_cq_take(struct conn *c, bool rcq, struct qp_cqe *out)
{
	struct qp *qp = conn_qp(c);
	const struct qp_ring *r = rcq ? &qp->rcq : &qp->cq;
	uint32_t head = atomic_load_explicit(&r->idx->head,
			memory_order_relaxed);
	int got = qp_ring_take(r, &head, out, sizeof(*out));
	ck_assert_int_ge(got, 0);
	if (got == 0)
		return 0;
	doorbell(qp, &qp->hdr->cq_space_wanted);
	return 1;
}

int
h_wait_cqe(struct conn *c, bool rcq, struct qp_cqe *out, unsigned ms)
{
	uint64_t until = loop_now_ns() + (uint64_t)ms * 1000000;
	for (;;) {
		if (h_cq_take(c, rcq, out))
			return 1;
		if (loop_now_ns() >= until)
			return 0;
		(void) loop_run_once(rpmad.loop, 1);
	}
}
