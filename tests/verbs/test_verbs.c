// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_verbs.c -- the rdma-core transport against fake RDMA devices
 *
 * rpmad's core runs in the test process (harness.c) with the verbs
 * transport linked to fake libibverbs/librdmacm (fake_*.c). Two fake
 * devices stand for two hosts: fake0 (127.0.0.1, on-demand paging) and
 * fake1 (127.0.0.2). Clients are sessions whose requests go straight to
 * rpmad's handlers; their work goes through the shared rings.
 *
 * Waits are bounded (WAIT_MS) only to fail instead of hanging: every
 * step completes within a few loop turns.
 */

#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "control/session.h"
#include "core/daemon.h"
#include "fake_rdma.h"
#include "harness.h"
#include "librpma.h"
#include "objects/device.h"
#include "objects/mr.h"
#include "th_suite.h"
#include "transport/transports.h"
#include "verbs/verbs.h"

#define WAIT_MS 2000
#define MEM_SIZE (4 * 4096)

#define USAGE_TARGET (RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC | \
		RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | \
		RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_RECV | \
		RPMA_MR_USAGE_SEND)
#define USAGE_INITIATOR (RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST | \
		RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV)

static const uint32_t CFG[4] = { 16, 8, 32, 0 };	/* sq, rq, cq, rcq */
static const uint32_t CFG_RCQ[4] = { 16, 8, 32, 8 };

static void
two_devices(void)
{
	ck_assert_int_eq(fake_add_device("fake0", "127.0.0.1", true), 0);
	ck_assert_int_eq(fake_add_device("fake1", "127.0.0.2", false), 0);
}

/* A client (on fake0) connected to a server (on fake1). */
struct pair {
	struct session *cs, *ss;
	uint64_t cpeer, speer, ep, cconn, sconn;
	struct conn *cc, *sc;
	struct h_mem cmem, smem;
	struct h_reply cest;	/* the client's ESTABLISHED event */
	struct h_reply sreq;	/* the server's connection request */
};

static uint64_t
addr_of(const struct h_mem *m, size_t off)
{
	return (uint64_t)(uintptr_t)m->ptr + off;
}

static uint64_t
peer_at(struct session *s, const char *addr, bool remote)
{
	struct h_reply r;
	h_device_get(s, addr, remote, &r);
	ck_assert_msg(r.code == 0, "device_get %s: %s", addr, r.msg);
	ck_assert_str_eq(r.transport, "verbs");
	h_peer_new(s, r.device_id, &r);
	ck_assert_msg(r.code == 0, "peer_new: %s", r.msg);
	return r.id;
}

/* The server's next request, once it arrived. */
static void
next_request(struct session *s, uint64_t ep, const uint32_t cfg[4],
		struct h_reply *r)
{
	for (int i = 0; i < WAIT_MS; i++) {
		h_ep_next(s, ep, cfg, r);
		if (r->code != RPMA_E_NO_EVENT)
			break;
		h_run(1);
	}
	ck_assert_msg(r->code == 0, "ep_next: %s", r->msg);
}

static void
expect_event(struct session *s, uint64_t conn, int event, struct h_reply *r)
{
	struct h_reply tmp;
	if (r == NULL)
		r = &tmp;
	int got = h_wait_event(s, conn, WAIT_MS, r);
	ck_assert_msg(got == event, "event %d, expected %d", got, event);
}

/* Listening, connecting and accepting with private data; cfg per side. */
static void
pair_connect(struct pair *p, const uint32_t ccfg[4], const uint32_t scfg[4])
{
	struct h_reply r;
	h_conn_req_new(p->cs, p->cpeer, "127.0.0.2", "7471", ccfg, &r);
	ck_assert_msg(r.code == 0, "conn_req_new: %s", r.msg);
	p->cconn = r.id;
	p->cc = h_conn(p->cs, p->cconn);
	h_connect(p->cs, p->cconn, "hello", 5, &r);
	ck_assert_msg(r.code == 0, "connect: %s", r.msg);

	next_request(p->ss, p->ep, scfg, &p->sreq);
	p->sconn = p->sreq.id;
	p->sc = h_conn(p->ss, p->sconn);
	h_connect(p->ss, p->sconn, "world", 5, &r);
	ck_assert_msg(r.code == 0, "accept: %s", r.msg);

	expect_event(p->cs, p->cconn, RPMA_CONN_ESTABLISHED, &p->cest);
	expect_event(p->ss, p->sconn, RPMA_CONN_ESTABLISHED, &r);
	ck_assert(!r.has_pdata);
}

/* Both sides ready to connect: sessions, peers, memory, the endpoint. */
static void
pair_prepare(struct pair *p)
{
	struct h_reply r;
	memset(p, 0, sizeof(*p));
	h_setup();
	two_devices();
	p->ss = h_session();
	p->cs = h_session();
	p->speer = peer_at(p->ss, "127.0.0.2", false);
	p->cpeer = peer_at(p->cs, "127.0.0.2", true);

	h_mem_new(&p->smem, MEM_SIZE);
	h_mr_reg(p->ss, p->speer, &p->smem, USAGE_TARGET, &r);
	ck_assert_msg(r.code == 0, "mr_reg: %s", r.msg);
	h_mem_new(&p->cmem, MEM_SIZE);
	h_mr_reg(p->cs, p->cpeer, &p->cmem, USAGE_INITIATOR, &r);
	ck_assert_msg(r.code == 0, "mr_reg: %s", r.msg);

	h_ep_listen(p->ss, p->speer, "127.0.0.2", "7471", &r);
	ck_assert_msg(r.code == 0, "ep_listen: %s", r.msg);
	p->ep = r.id;
}

static void
pair_setup(struct pair *p, const uint32_t ccfg[4], const uint32_t scfg[4])
{
	pair_prepare(p);
	pair_connect(p, ccfg, scfg);
}

static void
pair_teardown(struct pair *p)
{
	h_teardown();
	h_mem_free(&p->cmem);
	h_mem_free(&p->smem);
}

static struct ibv_qp *
hw_qp(struct conn *c)
{
	return ((struct verbs_conn *)conn_tp(c))->qp;
}

static void
expect_cqe(struct conn *c, bool rcq, uint64_t wr_id, int status,
		struct qp_cqe *out)
{
	struct qp_cqe tmp;
	if (out == NULL)
		out = &tmp;
	ck_assert_msg(h_wait_cqe(c, rcq, out, WAIT_MS),
			"no completion (wr_id %llu)",
			(unsigned long long)wr_id);
	ck_assert_uint_eq(out->wr_id, wr_id);
	ck_assert_msg((int)out->status == status, "wr_id %llu: status %s, "
			"expected %s", (unsigned long long)wr_id,
			ibv_wc_status_str(out->status),
			ibv_wc_status_str(status));
}

static const struct fake_op *
last_op(void)
{
	ck_assert_uint_gt(fake_op_count(), 0);
	return fake_op_get(fake_op_count() - 1);
}

/* ---------------------------------------------------------------- devices */

START_TEST(test_no_rdma_support)
{
	h_setup();
	fake_rdma_present(false);
	struct session *s = h_session();
	struct h_reply r;

	uint64_t t0 = loop_now_ns();
	h_device_get(s, "127.0.0.1", false, &r);
	ck_assert_int_eq(r.code, 0);
	ck_assert_str_eq(r.transport, "tcp");
	ck_assert_str_eq(r.name, "rpmad_tcp");
	h_device_get(s, "127.0.0.1", true, &r);
	ck_assert_str_eq(r.transport, "tcp");
	/* quick: no resolution is attempted without devices */
	ck_assert_uint_lt(loop_now_ns() - t0, 500ull * 1000 * 1000);

	strcpy(rpmad.cfg.transport, "verbs");
	h_device_get(s, "127.0.0.1", false, &r);
	ck_assert_int_eq(r.code, RPMA_E_PROVIDER);
	ck_assert_ptr_nonnull(strstr(r.msg, "no RDMA device"));
	h_teardown();
}
END_TEST

/* rpmad knows every RDMA device from its start (rpmactl status) */
START_TEST(test_devices_at_start)
{
	h_setup();
	two_devices();
	transport_verbs_init(transports_env());
	const char *names[3] = { NULL };
	unsigned n = 0;
	for (struct device *d = device_list(); d && n < 3; d = d->next)
		names[n++] = d->name;
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(names[0], SOFTWARE_DEVICE_NAME);
	ck_assert_str_eq(names[1], "fake0");
	ck_assert_str_eq(names[2], "fake1");
	/* a lookup finds the same device, not a new one */
	struct session *s = h_session();
	struct h_reply r;
	h_device_get(s, "127.0.0.2", false, &r);
	ck_assert_str_eq(r.name, "fake1");
	n = 0;
	for (struct device *d = device_list(); d; d = d->next)
		n++;
	ck_assert_uint_eq(n, 3);
	h_teardown();
}
END_TEST

START_TEST(test_device_lookup)
{
	h_setup();
	two_devices();
	struct session *s = h_session();
	struct h_reply a, b, c;

	h_device_get(s, "127.0.0.1", false, &a);
	ck_assert_int_eq(a.code, 0);
	ck_assert_str_eq(a.transport, "verbs");
	ck_assert_str_eq(a.name, "fake0");
	ck_assert(a.odp);
	h_device_get(s, "127.0.0.2", false, &b);
	ck_assert_str_eq(b.name, "fake1");
	ck_assert(!b.odp);
	ck_assert_uint_ne(a.device_id, b.device_id);
	/* a destination is reached through the other device */
	h_device_get(s, "127.0.0.2", true, &c);
	ck_assert_str_eq(c.name, "fake0");
	ck_assert_uint_eq(c.device_id, a.device_id);
	/* the same device is found again, not added twice */
	h_device_get(s, "127.0.0.1", false, &c);
	ck_assert_uint_eq(c.device_id, a.device_id);

	/* an address no RDMA device serves: the software transport */
	h_device_get(s, "127.0.0.3", false, &c);
	ck_assert_int_eq(c.code, 0);
	ck_assert_str_eq(c.transport, "tcp");
	strcpy(rpmad.cfg.transport, "verbs");
	h_device_get(s, "127.0.0.3", false, &c);
	ck_assert_int_eq(c.code, RPMA_E_PROVIDER);
	strcpy(rpmad.cfg.transport, "tcp");
	h_device_get(s, "127.0.0.1", false, &c);
	ck_assert_str_eq(c.transport, "tcp");

	/* the throw-away lookup ids are gone */
	ck_assert_uint_eq(fake_counts().ids, 0);
	h_teardown();
}
END_TEST

/* ------------------------------------------------------------ registration */

START_TEST(test_registration)
{
	h_setup();
	two_devices();
	struct session *s = h_session();
	uint64_t peer = peer_at(s, "127.0.0.1", false);
	ck_assert_uint_eq(fake_counts().pds, 1);
	struct h_reply r;

	/* key = the device's rkey, iova = the client's address */
	struct h_mem m1;
	h_mem_new(&m1, MEM_SIZE);
	h_mr_reg(s, peer, &m1, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_READ_SRC, &r);
	ck_assert_msg(r.code == 0, "%s", r.msg);
	struct mr *mr = h_mr(s, m1.mr_id);
	struct ibv_mr *hw = mr->tp_mr;
	ck_assert_ptr_nonnull(hw);
	ck_assert_uint_eq(m1.key, hw->rkey);
	ck_assert_uint_eq(mr_rkey(mr), hw->rkey);
	ck_assert_uint_eq(fake_mr_iova(hw), (uintptr_t)m1.ptr);
	ck_assert_ptr_eq(hw->addr, mr->base);
	ck_assert_ptr_ne(hw->addr, m1.ptr);	/* rpmad's own mapping */
	ck_assert_uint_eq(hw->length, m1.len);
	ck_assert_uint_eq(fake_mr_access(hw), IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);

	/* librpma's usage-to-access mapping */
	struct h_mem m2;
	h_mem_new(&m2, 4096);
	h_mr_reg(s, peer, &m2, RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &r);
	ck_assert_int_eq(r.code, 0);
	ck_assert_uint_eq(fake_mr_access(h_mr(s, m2.mr_id)->tp_mr),
			IBV_ACCESS_REMOTE_READ);
	h_mr_dereg(s, m2.mr_id, &r);
	ck_assert_int_eq(r.code, 0);
	h_mr_reg(s, peer, &m2, RPMA_MR_USAGE_SEND, &r);
	ck_assert_uint_eq(fake_mr_access(h_mr(s, m2.mr_id)->tp_mr), 0);
	h_mr_dereg(s, m2.mr_id, &r);

	/* rkeys are the device's, unique on it: a repeated one is refused */
	uint32_t same[1] = { m1.key };
	fake_next_rkeys("fake0", same, 1);
	h_mr_reg(s, peer, &m2, RPMA_MR_USAGE_READ_SRC, &r);
	ck_assert_int_eq(r.code, RPMA_E_PROVIDER);
	ck_assert_ptr_nonnull(strstr(r.msg, "in use"));
	ck_assert_uint_eq(fake_counts().mrs, 1);
	/* no remote access: rkey 0 (as rxe gives), named by rpmad's lkey */
	uint32_t zero[1] = { 0 };
	fake_next_rkeys("fake0", zero, 1);
	h_mr_reg(s, peer, &m2, RPMA_MR_USAGE_READ_DST, &r);
	ck_assert_msg(r.code == 0, "%s", r.msg);
	ck_assert_uint_eq(m2.key, 0);
	ck_assert_uint_ne(m2.lkey, 0);
	ck_assert_uint_ne(m2.lkey, m1.lkey);
	h_mr_dereg(s, m2.mr_id, &r);
	/* the same rkey on another device is another registration */
	uint64_t peer1 = peer_at(s, "127.0.0.2", false);
	h_device_get(s, "127.0.0.1", false, &r);
	uint32_t fake0_id = r.device_id;
	h_device_get(s, "127.0.0.2", false, &r);
	uint32_t fake1_id = r.device_id;
	fake_next_rkeys("fake1", same, 1);
	h_mr_reg(s, peer1, &m2, RPMA_MR_USAGE_WRITE_DST, &r);
	ck_assert_msg(r.code == 0, "%s", r.msg);
	ck_assert_uint_eq(m2.key, m1.key);
	ck_assert_ptr_eq(mr_by_rkey(fake0_id, m1.key), h_mr(s, m1.mr_id));
	ck_assert_ptr_eq(mr_by_rkey(fake1_id, m1.key), h_mr(s, m2.mr_id));
	h_mr_dereg(s, m2.mr_id, &r);
	ck_assert_int_eq(r.code, 0);

	/* advice: a pinned registration has nothing to prefetch (done) */
	h_mr_advise(s, m1.mr_id, 0, 4096, IBV_ADVISE_MR_ADVICE_PREFETCH, &r);
	ck_assert_int_eq(r.code, 0);
	ck_assert_uint_eq(fake_advise_count(), 0);
	/* memory that cannot be pinned: on-demand paging */
	fake_reg_needs_odp(true);
	h_mr_reg(s, peer, &m2, RPMA_MR_USAGE_READ_SRC, &r);
	ck_assert_msg(r.code == 0, "%s", r.msg);
	ck_assert(fake_mr_access(h_mr(s, m2.mr_id)->tp_mr) &
			IBV_ACCESS_ON_DEMAND);
	h_mr_advise(s, m2.mr_id, 0, 4096, IBV_ADVISE_MR_ADVICE_PREFETCH, &r);
	ck_assert_msg(r.code == 0, "%s", r.msg);
	ck_assert_uint_eq(fake_advise_count(), 1);
	fake_reg_needs_odp(false);

	/* pinned on a device without on-demand paging: done as well */
	struct h_mem m3;
	h_mem_new(&m3, 4096);
	h_mr_reg(s, peer1, &m3, RPMA_MR_USAGE_READ_SRC, &r);
	ck_assert_int_eq(r.code, 0);
	h_mr_advise(s, m3.mr_id, 0, 4096, IBV_ADVISE_MR_ADVICE_PREFETCH, &r);
	ck_assert_int_eq(r.code, 0);
	ck_assert_uint_eq(fake_advise_count(), 1);

	/* the protection domain goes with the peer */
	h_peer_delete(s, peer1, &r);
	ck_assert_int_eq(r.code, RPMA_E_PROVIDER);	/* still used */
	h_mr_dereg(s, m3.mr_id, &r);
	h_peer_delete(s, peer1, &r);
	ck_assert_int_eq(r.code, 0);
	ck_assert_uint_eq(fake_counts().pds, 1);

	h_teardown();
	h_mem_free(&m1);
	h_mem_free(&m2);
	h_mem_free(&m3);
}
END_TEST

/* -------------------------------------------------------------- connecting */

START_TEST(test_connect_accept)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);

	/* the CM pads private data: 56 bytes with a request, 196 accepting */
	ck_assert_uint_eq(p.sreq.pdata_len, 56);
	ck_assert_mem_eq(p.sreq.pdata, "hello", 5);
	ck_assert_uint_eq(p.sreq.pdata[5], 0);
	ck_assert(p.cest.has_pdata);
	ck_assert_uint_eq(p.cest.pdata_len, 196);
	ck_assert_mem_eq(p.cest.pdata, "world", 5);

	struct conn_info ci = h_info(p.cc), si = h_info(p.sc);
	ck_assert_ptr_nonnull(strstr(ci.local_name, "127.0.0.1"));
	ck_assert_ptr_nonnull(strstr(ci.remote_name, "127.0.0.2:7471"));
	ck_assert_ptr_nonnull(strstr(si.local_name, "127.0.0.2:7471"));
	ck_assert_ptr_nonnull(strstr(si.remote_name, "127.0.0.1"));
	ck_assert_int_eq(ci.state, CONN_ESTABLISHED);
	ck_assert_int_eq(si.state, CONN_ESTABLISHED);

	/* the server closes: both see CLOSED */
	struct h_reply r;
	h_disconnect(p.ss, p.sconn, &r);
	ck_assert_int_eq(r.code, 0);
	expect_event(p.ss, p.sconn, RPMA_CONN_CLOSED, NULL);
	expect_event(p.cs, p.cconn, RPMA_CONN_CLOSED, NULL);
	h_conn_delete(p.ss, p.sconn, &r);
	h_conn_delete(p.cs, p.cconn, &r);
	ck_assert_uint_eq(fake_counts().qps, 0);
	pair_teardown(&p);
}
END_TEST

/*
 * Set-up cannot hang on the other side (issue 20): a request the server
 * application never answers ends the client's attempt after
 * accept_timeout_ms (unreachable: RPMA_E_UNKNOWN in the library, as the
 * RDMA CM's own give-up); an accepted request whose client never
 * confirms ends the server's connection after setup_timeout_ms (LOST),
 * and the server's next request is served.
 */
START_TEST(test_setup_deadlines)
{
	struct pair p;
	pair_prepare(&p);
	rpmad.cfg.accept_timeout_ms = 300;
	rpmad.cfg.setup_timeout_ms = 300;
	h_configure();
	struct h_reply r, req;

	/* nobody answers the request */
	h_conn_req_new(p.cs, p.cpeer, "127.0.0.2", "7471", CFG, &r);
	uint64_t c1 = r.id;
	h_connect(p.cs, c1, NULL, 0, &r);
	ck_assert_int_eq(r.code, 0);
	(void) h_wait_event(p.cs, c1, WAIT_MS, &r);
	ck_assert_msg(r.code == 0 && r.event == RPMA_CONN_UNDEFINED,
			"code %d event %d", r.code, r.event);
	ck_assert_ptr_nonnull(strstr(h_info(h_conn(p.cs, c1)).state_text,
			"unreachable"));
	h_conn_delete(p.cs, c1, &r);
	/* the request that waited at the endpoint is withdrawn */
	next_request(p.ss, p.ep, CFG, &req);
	h_conn_delete(p.ss, req.id, &r);

	/* the server accepts; the confirmation never comes */
	fake_cm_silent_accept(true);
	h_conn_req_new(p.cs, p.cpeer, "127.0.0.2", "7471", CFG, &r);
	uint64_t c2 = r.id;
	h_connect(p.cs, c2, NULL, 0, &r);
	next_request(p.ss, p.ep, CFG, &req);
	h_connect(p.ss, req.id, NULL, 0, &r);
	ck_assert_int_eq(r.code, 0);
	expect_event(p.ss, req.id, RPMA_CONN_LOST, NULL);
	fake_cm_silent_accept(false);
	h_conn_delete(p.ss, req.id, &r);
	h_conn_delete(p.cs, c2, &r);

	/* and the next one connects */
	rpmad.cfg.accept_timeout_ms = 60000;
	h_configure();
	pair_connect(&p, CFG, CFG);
	pair_teardown(&p);
}
END_TEST

START_TEST(test_private_data_limits)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);
	struct h_reply r;
	uint8_t big[255];
	memset(big, 0xab, sizeof(big));

	h_conn_req_new(p.cs, p.cpeer, "127.0.0.2", "7471", CFG, &r);
	uint64_t c2 = r.id;
	h_connect(p.cs, c2, big, 57, &r);
	ck_assert_int_eq(r.code, RPMA_E_PROVIDER);
	ck_assert_ptr_nonnull(strstr(r.msg, "at most 56"));
	h_conn_delete(p.cs, c2, &r);

	h_conn_req_new(p.cs, p.cpeer, "127.0.0.2", "7471", CFG, &r);
	c2 = r.id;
	h_connect(p.cs, c2, big, 56, &r);
	ck_assert_int_eq(r.code, 0);
	struct h_reply req;
	next_request(p.ss, p.ep, CFG, &req);
	ck_assert_mem_eq(req.pdata, big, 56);
	h_connect(p.ss, req.id, big, 197, &r);
	ck_assert_int_eq(r.code, RPMA_E_PROVIDER);
	ck_assert_ptr_nonnull(strstr(r.msg, "at most 196"));
	/* the server application gives up on it: the client is refused */
	h_conn_delete(p.ss, req.id, &r);
	expect_event(p.cs, c2, RPMA_CONN_REJECTED, NULL);
	h_conn_delete(p.cs, c2, &r);
	pair_teardown(&p);
}
END_TEST

START_TEST(test_reject_unreachable)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);
	struct h_reply r, req;

	/* the server deletes the request */
	h_conn_req_new(p.cs, p.cpeer, "127.0.0.2", "7471", CFG, &r);
	uint64_t c2 = r.id;
	h_connect(p.cs, c2, NULL, 0, &r);
	next_request(p.ss, p.ep, CFG, &req);
	ck_assert_uint_eq(req.pdata_len, 56);
	h_req_delete(p.ss, req.id, &r);
	ck_assert_int_eq(r.code, 0);
	expect_event(p.cs, c2, RPMA_CONN_REJECTED, NULL);
	h_conn_delete(p.cs, c2, &r);

	/* the endpoint shuts down with a request waiting */
	h_conn_req_new(p.cs, p.cpeer, "127.0.0.2", "7471", CFG, &r);
	c2 = r.id;
	h_connect(p.cs, c2, NULL, 0, &r);
	h_run(5);
	h_ep_shutdown(p.ss, p.ep, &r);
	ck_assert_int_eq(r.code, 0);
	expect_event(p.cs, c2, RPMA_CONN_REJECTED, NULL);
	h_conn_delete(p.cs, c2, &r);

	/* nobody listens any more */
	h_conn_req_new(p.cs, p.cpeer, "127.0.0.2", "7471", CFG, &r);
	c2 = r.id;
	h_connect(p.cs, c2, NULL, 0, &r);
	expect_event(p.cs, c2, RPMA_CONN_REJECTED, NULL);
	h_conn_delete(p.cs, c2, &r);

	/* no RDMA device reaches the address */
	h_conn_req_new(p.cs, p.cpeer, "127.0.0.9", "7471", CFG, &r);
	ck_assert_int_eq(r.code, 0);
	c2 = r.id;
	h_connect(p.cs, c2, NULL, 0, &r);
	ck_assert_int_eq(r.code, 0);
	/* librpma 0.12 has no event for it: the library gets UNDEFINED */
	ck_assert_int_eq(h_wait_event(p.cs, c2, WAIT_MS, &r),
			RPMA_CONN_UNDEFINED);
	ck_assert_int_eq(r.code, 0);
	struct conn_info info = h_info(h_conn(p.cs, c2));
	ck_assert_ptr_nonnull(strstr(info.state_text, "ended: unreachable"));
	h_conn_delete(p.cs, c2, &r);

	/* the established pair is untouched by all this */
	ck_assert_int_eq(h_info(p.cc).state, CONN_ESTABLISHED);
	pair_teardown(&p);
}
END_TEST

START_TEST(test_client_withdraws)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);
	struct h_reply r, req;

	/* before the server application looked at the request */
	h_conn_req_new(p.cs, p.cpeer, "127.0.0.2", "7471", CFG, &r);
	uint64_t c2 = r.id;
	h_connect(p.cs, c2, NULL, 0, &r);
	h_run(5);
	h_conn_delete(p.cs, c2, &r);
	h_run(5);
	next_request(p.ss, p.ep, CFG, &req);
	h_connect(p.ss, req.id, NULL, 0, &r);
	ck_assert_int_eq(r.code, 0);
	expect_event(p.ss, req.id, RPMA_CONN_LOST, NULL);
	h_conn_delete(p.ss, req.id, &r);

	/* after it took the request, before it accepted */
	h_conn_req_new(p.cs, p.cpeer, "127.0.0.2", "7471", CFG, &r);
	c2 = r.id;
	h_connect(p.cs, c2, NULL, 0, &r);
	next_request(p.ss, p.ep, CFG, &req);
	h_conn_delete(p.cs, c2, &r);
	expect_event(p.ss, req.id, RPMA_CONN_LOST, NULL);
	h_connect(p.ss, req.id, NULL, 0, &r);
	ck_assert_int_eq(r.code, RPMA_E_PROVIDER);	/* nothing to accept */
	h_conn_delete(p.ss, req.id, &r);

	ck_assert_int_eq(h_info(p.sc).state, CONN_ESTABLISHED);
	pair_teardown(&p);
}
END_TEST

START_TEST(test_listen_errors)
{
	h_setup();
	two_devices();
	struct session *s = h_session();
	uint64_t peer0 = peer_at(s, "127.0.0.1", false);
	struct h_reply r;

	h_ep_listen(s, peer0, "127.0.0.1", "7480", &r);
	ck_assert_msg(r.code == 0, "%s", r.msg);
	/* the port is taken */
	h_ep_listen(s, peer0, "127.0.0.1", "7480", &r);
	ck_assert_int_eq(r.code, RPMA_E_PROVIDER);
	ck_assert_ptr_nonnull(strstr(r.msg, "rdma_bind_addr"));
	/* served by the other device than the peer's */
	h_ep_listen(s, peer0, "127.0.0.2", "7481", &r);
	ck_assert_int_eq(r.code, RPMA_E_PROVIDER);
	ck_assert_ptr_nonnull(strstr(r.msg, "fake1"));
	h_teardown();
}
END_TEST

/* -------------------------------------------------------------- operations */

START_TEST(test_operations)
{
	struct pair p;
	pair_setup(&p, CFG, CFG_RCQ);
	struct qp_cqe cqe;
	uint64_t s0 = addr_of(&p.smem, 0);

	/* write */
	for (int i = 0; i < 64; i++)
		p.cmem.ptr[i] = (uint8_t)(i + 1);
	h_post(p.cc, QP_OP_WRITE, true, 1, &p.cmem, 0, 64, s0, p.smem.key, 0);
	expect_cqe(p.cc, false, 1, IBV_WC_SUCCESS, &cqe);
	ck_assert_uint_eq(cqe.opcode, IBV_WC_RDMA_WRITE);
	ck_assert_mem_eq(p.smem.ptr, p.cmem.ptr, 64);
	ck_assert_uint_eq(last_op()->opcode, IBV_WR_RDMA_WRITE);
	ck_assert_uint_eq(last_op()->raddr, s0);

	/* read */
	memset(p.smem.ptr + 4096, 0x5a, 100);
	h_post(p.cc, QP_OP_READ, true, 2, &p.cmem, 4096, 100,
			addr_of(&p.smem, 4096), p.smem.key, 0);
	expect_cqe(p.cc, false, 2, IBV_WC_SUCCESS, &cqe);
	ck_assert_uint_eq(cqe.opcode, IBV_WC_RDMA_READ);
	ck_assert_uint_eq(cqe.byte_len, 100);
	ck_assert_mem_eq(p.cmem.ptr + 4096, p.smem.ptr + 4096, 100);

	/* atomic write: 8 bytes, fenced, as librpma 0.12 */
	uint64_t v = 0x1122334455667788ull;
	memcpy(p.cmem.ptr + 8192, &v, 8);
	h_post(p.cc, QP_OP_ATOMIC_WRITE, true, 3, &p.cmem, 8192, 8,
			addr_of(&p.smem, 128), p.smem.key, 0);
	expect_cqe(p.cc, false, 3, IBV_WC_SUCCESS, &cqe);
	ck_assert_uint_eq(cqe.opcode, IBV_WC_RDMA_WRITE);
	ck_assert_mem_eq(p.smem.ptr + 128, &v, 8);
	ck_assert_uint_eq(last_op()->opcode, IBV_WR_RDMA_WRITE);
	ck_assert(last_op()->send_flags & IBV_SEND_FENCE);
	ck_assert_uint_eq(last_op()->length, 8);

	/* flush: a write, then an 8-byte read of the range after it */
	unsigned before = fake_op_count();
	h_post(p.cc, QP_OP_WRITE, false, 4, &p.cmem, 0, 32,
			addr_of(&p.smem, 256), p.smem.key, 0);
	h_post_flush(p.cc, true, 5, addr_of(&p.smem, 256), p.smem.key, 32);
	expect_cqe(p.cc, false, 5, IBV_WC_SUCCESS, &cqe);
	ck_assert_uint_eq(cqe.opcode, IBV_WC_RDMA_READ);
	ck_assert_uint_eq(fake_op_count(), before + 2);
	ck_assert_uint_eq(fake_op_get(before)->opcode, IBV_WR_RDMA_WRITE);
	ck_assert_uint_eq(fake_op_get(before + 1)->opcode, IBV_WR_RDMA_READ);
	ck_assert_uint_eq(fake_op_get(before + 1)->length, 8);
	ck_assert_uint_eq(fake_op_get(before + 1)->raddr,
			addr_of(&p.smem, 256));
	ck_assert_uint_eq(fake_op_get(before + 1)->rkey, p.smem.key);
	/* a range shorter than 8 bytes at the very end: no overrun */
	h_post_flush(p.cc, false, 6, addr_of(&p.smem, MEM_SIZE - 4),
			p.smem.key, 4);
	expect_cqe(p.cc, false, 6, IBV_WC_SUCCESS, &cqe);
	ck_assert_uint_eq(last_op()->length, 4);

	/* unsignaled work completes with the next signaled one */
	uint32_t done = cqe.sq_index + 1;	/* the next SQ index */
	uint64_t writes = h_info(p.cc).ops.writes;
	h_post(p.cc, QP_OP_WRITE, false, 10, &p.cmem, 0, 8, s0, p.smem.key, 0);
	h_post(p.cc, QP_OP_WRITE, false, 11, &p.cmem, 0, 8, s0, p.smem.key, 0);
	h_post(p.cc, QP_OP_WRITE, true, 12, &p.cmem, 0, 8, s0, p.smem.key, 0);
	expect_cqe(p.cc, false, 12, IBV_WC_SUCCESS, &cqe);
	ck_assert_uint_eq(cqe.sq_index, done + 2);
	/* all three completed, each once */
	ck_assert_uint_eq(h_info(p.cc).ops.writes, writes + 3);
	ck_assert(!h_cq_take(p.cc, false, &cqe));
	ck_assert_uint_eq(conn_works_in_flight(p.cc), 0);

	/* receives go to the device as soon as they are posted */
	h_post_recv(p.sc, 100, &p.smem, 8192, 256);
	h_post_recv(p.sc, 101, &p.smem, 8192 + 256, 256);
	h_post_recv(p.sc, 102, NULL, 0, 0);
	h_run(2);
	ck_assert_uint_eq(fake_qp_rq_len(hw_qp(p.sc)), 3);

	/* send: lands in the first receive (the server has an RCQ) */
	memcpy(p.cmem.ptr + 512, "ping-ping-ping-ping-ping-ping-32", 32);
	h_post(p.cc, QP_OP_SEND, true, 20, &p.cmem, 512, 32, 0, 0, 0);
	expect_cqe(p.cc, false, 20, IBV_WC_SUCCESS, &cqe);
	ck_assert_uint_eq(cqe.opcode, IBV_WC_SEND);
	expect_cqe(p.sc, true, 100, IBV_WC_SUCCESS, &cqe);
	ck_assert_uint_eq(cqe.opcode, IBV_WC_RECV);
	ck_assert_uint_eq(cqe.byte_len, 32);
	ck_assert(!(cqe.wc_flags & IBV_WC_WITH_IMM));
	ck_assert_mem_eq(p.smem.ptr + 8192, p.cmem.ptr + 512, 32);

	/* send with immediate data */
	h_post(p.cc, QP_OP_SEND_IMM, true, 21, &p.cmem, 512, 4, 0, 0,
			htonl(7));
	expect_cqe(p.cc, false, 21, IBV_WC_SUCCESS, NULL);
	expect_cqe(p.sc, true, 101, IBV_WC_SUCCESS, &cqe);
	ck_assert(cqe.wc_flags & IBV_WC_WITH_IMM);
	ck_assert_uint_eq(ntohl(cqe.imm_data), 7);
	ck_assert_uint_eq(cqe.byte_len, 4);

	/* write with immediate data consumes a receive */
	memset(p.cmem.ptr + 1024, 0x33, 16);
	h_post(p.cc, QP_OP_WRITE_IMM, true, 22, &p.cmem, 1024, 16,
			addr_of(&p.smem, 12288), p.smem.key, htonl(9));
	expect_cqe(p.cc, false, 22, IBV_WC_SUCCESS, &cqe);
	ck_assert_uint_eq(cqe.opcode, IBV_WC_RDMA_WRITE);
	expect_cqe(p.sc, true, 102, IBV_WC_SUCCESS, &cqe);
	ck_assert_uint_eq(cqe.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(ntohl(cqe.imm_data), 9);
	ck_assert_uint_eq(cqe.byte_len, 16);
	ck_assert_mem_eq(p.smem.ptr + 12288, p.cmem.ptr + 1024, 16);

	/* a message before any receive waits for one (RNR) */
	h_post(p.cc, QP_OP_SEND, true, 23, &p.cmem, 512, 8, 0, 0, 0);
	h_run(5);
	ck_assert(!h_cq_take(p.cc, false, &cqe));
	h_post_recv(p.sc, 103, &p.smem, 8192, 64);
	expect_cqe(p.sc, true, 103, IBV_WC_SUCCESS, NULL);
	expect_cqe(p.cc, false, 23, IBV_WC_SUCCESS, NULL);

	/* and the other way: receives complete on the main CQ there */
	h_post_recv(p.cc, 200, &p.cmem, 2048, 64);
	h_run(2);
	memcpy(p.smem.ptr + 3000, "pong", 4);
	h_post(p.sc, QP_OP_SEND, true, 30, &p.smem, 3000, 4, 0, 0, 0);
	expect_cqe(p.sc, false, 30, IBV_WC_SUCCESS, NULL);
	expect_cqe(p.cc, false, 200, IBV_WC_SUCCESS, &cqe);
	ck_assert_uint_eq(cqe.source, QP_CQE_FROM_RQ);
	ck_assert_mem_eq(p.cmem.ptr + 2048, "pong", 4);

	ck_assert_uint_eq(h_info(p.cc).ops.writes, 6);
	ck_assert_uint_eq(h_info(p.cc).ops.flushes, 2);
	pair_teardown(&p);
}
END_TEST

START_TEST(test_receive_before_connect)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);
	struct h_reply r;

	/* a second connection whose client posts a receive first */
	h_conn_req_new(p.cs, p.cpeer, "127.0.0.2", "7471", CFG, &r);
	uint64_t c2 = r.id;
	struct conn *cc2 = h_conn(p.cs, c2);
	h_post_recv(cc2, 7, &p.cmem, 0, 128);
	h_run(2);
	h_connect(p.cs, c2, NULL, 0, &r);
	struct h_reply req;
	next_request(p.ss, p.ep, CFG, &req);
	struct conn *sc2 = h_conn(p.ss, req.id);
	h_connect(p.ss, req.id, NULL, 0, &r);
	expect_event(p.cs, c2, RPMA_CONN_ESTABLISHED, NULL);
	expect_event(p.ss, req.id, RPMA_CONN_ESTABLISHED, NULL);
	ck_assert_uint_eq(fake_qp_rq_len(hw_qp(cc2)), 1);

	memcpy(p.smem.ptr, "early bird", 10);
	h_post(sc2, QP_OP_SEND, true, 1, &p.smem, 0, 10, 0, 0, 0);
	expect_cqe(sc2, false, 1, IBV_WC_SUCCESS, NULL);
	struct qp_cqe cqe;
	expect_cqe(cc2, false, 7, IBV_WC_SUCCESS, &cqe);
	ck_assert_uint_eq(cqe.byte_len, 10);
	ck_assert_mem_eq(p.cmem.ptr, "early bird", 10);
	pair_teardown(&p);
}
END_TEST

/* ----------------------------------------------------------------- errors */

START_TEST(test_remote_access_error)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);
	struct qp_cqe cqe;

	h_post_recv(p.sc, 50, &p.smem, 0, 64);
	h_run(2);
	/* a key the target does not know */
	h_post(p.cc, QP_OP_WRITE, false, 1, &p.cmem, 0, 8,
			addr_of(&p.smem, 0), p.smem.key + 0x100, 0);
	h_post(p.cc, QP_OP_WRITE, true, 2, &p.cmem, 0, 8, addr_of(&p.smem, 0),
			p.smem.key, 0);
	expect_cqe(p.cc, false, 1, IBV_WC_REM_ACCESS_ERR, &cqe);
	expect_cqe(p.cc, false, 2, IBV_WC_WR_FLUSH_ERR, NULL);
	ck_assert(conn_qp_failed(p.cc));
	/* the target's queue pair failed as well: its receive is flushed */
	expect_cqe(p.sc, false, 50, IBV_WC_WR_FLUSH_ERR, &cqe);
	ck_assert_uint_eq(cqe.source, QP_CQE_FROM_RQ);
	/* further work is flushed by the core */
	h_post(p.cc, QP_OP_READ, true, 3, &p.cmem, 0, 8, addr_of(&p.smem, 0),
			p.smem.key, 0);
	expect_cqe(p.cc, false, 3, IBV_WC_WR_FLUSH_ERR, NULL);

	/* a fresh connection: outside the registration */
	struct h_reply r;
	h_conn_delete(p.cs, p.cconn, &r);
	expect_event(p.ss, p.sconn, RPMA_CONN_CLOSED, NULL);
	h_conn_delete(p.ss, p.sconn, &r);
	pair_connect(&p, CFG, CFG);
	h_post(p.cc, QP_OP_WRITE, true, 4, &p.cmem, 0, 64,
			addr_of(&p.smem, MEM_SIZE - 32), p.smem.key, 0);
	expect_cqe(p.cc, false, 4, IBV_WC_REM_ACCESS_ERR, NULL);

	/* and a key of another protection domain (the client's own) */
	h_conn_delete(p.cs, p.cconn, &r);
	h_conn_delete(p.ss, p.sconn, &r);
	pair_connect(&p, CFG, CFG);
	h_post(p.cc, QP_OP_READ, true, 5, &p.cmem, 0, 8, addr_of(&p.cmem, 0),
			p.cmem.key, 0);
	expect_cqe(p.cc, false, 5, IBV_WC_REM_ACCESS_ERR, NULL);
	pair_teardown(&p);
}
END_TEST

/* Work rpmad refuses completes in its turn, after the work before it. */
START_TEST(test_refused_work_in_turn)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);
	struct qp_cqe cqe;

	fake_hold(true);	/* the device holds write 1 for now */
	h_post(p.cc, QP_OP_WRITE, true, 1, &p.cmem, 0, 8, addr_of(&p.smem, 0),
			p.smem.key, 0);
	h_run(2);
	ck_assert_uint_eq(conn_works_in_flight(p.cc), 1);
	/* a key that is not a registration of this client */
	struct h_mem bogus = p.cmem;
	bogus.lkey = p.smem.lkey;
	h_post(p.cc, QP_OP_WRITE, true, 2, &bogus, 0, 8, addr_of(&p.smem, 0),
			p.smem.key, 0);
	h_post(p.cc, QP_OP_WRITE, true, 3, &p.cmem, 0, 8, addr_of(&p.smem, 0),
			p.smem.key, 0);
	ck_assert(!h_wait_cqe(p.cc, false, &cqe, 50));
	ck_assert(!conn_qp_failed(p.cc));
	fake_hold(false);
	expect_cqe(p.cc, false, 1, IBV_WC_SUCCESS, NULL);
	expect_cqe(p.cc, false, 2, IBV_WC_LOC_PROT_ERR, NULL);
	expect_cqe(p.cc, false, 3, IBV_WC_WR_FLUSH_ERR, NULL);
	ck_assert(conn_qp_failed(p.cc));
	pair_teardown(&p);
}
END_TEST

START_TEST(test_bad_receive)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);
	struct qp_cqe cqe;

	h_post_recv(p.cc, 1, &p.cmem, 0, 64);
	h_run(2);
	/* a key that is not a registration of this client */
	struct h_mem bogus = p.cmem;
	bogus.lkey = p.smem.lkey;
	h_post_recv(p.cc, 2, &bogus, 0, 64);
	h_post_recv(p.cc, 3, &p.cmem, 0, 64);
	/* it waits for its turn: the receive before it is the device's */
	ck_assert(!h_wait_cqe(p.cc, false, &cqe, 50));
	ck_assert(!conn_qp_failed(p.cc));
	/* a message takes receive 1; then 2 fails, and the queue pair */
	h_post(p.sc, QP_OP_SEND, true, 10, &p.smem, 0, 8, 0, 0, 0);
	expect_cqe(p.sc, false, 10, IBV_WC_SUCCESS, NULL);
	expect_cqe(p.cc, false, 1, IBV_WC_SUCCESS, NULL);
	expect_cqe(p.cc, false, 2, IBV_WC_LOC_PROT_ERR, NULL);
	expect_cqe(p.cc, false, 3, IBV_WC_WR_FLUSH_ERR, NULL);
	ck_assert(conn_qp_failed(p.cc));
	ck_assert_uint_eq(conn_recvs_in_flight(p.cc), 0);
	h_post(p.cc, QP_OP_WRITE, true, 4, &p.cmem, 0, 8, addr_of(&p.smem, 0),
			p.smem.key, 0);
	expect_cqe(p.cc, false, 4, IBV_WC_WR_FLUSH_ERR, NULL);

	/* a message too long for the receive fails both sides */
	struct h_reply r;
	h_conn_delete(p.cs, p.cconn, &r);
	h_conn_delete(p.ss, p.sconn, &r);
	pair_connect(&p, CFG, CFG);
	h_post_recv(p.sc, 4, &p.smem, 0, 16);
	h_run(2);
	h_post(p.cc, QP_OP_SEND, true, 5, &p.cmem, 0, 64, 0, 0, 0);
	expect_cqe(p.cc, false, 5, IBV_WC_REM_INV_REQ_ERR, NULL);
	expect_cqe(p.sc, false, 4, IBV_WC_LOC_LEN_ERR, NULL);
	h_run(2);
	ck_assert(conn_qp_failed(p.sc));
	pair_teardown(&p);
}
END_TEST

START_TEST(test_disconnect_flushes)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);
	struct h_reply r;

	h_post_recv(p.sc, 60, &p.smem, 0, 64);
	h_post_recv(p.cc, 61, &p.cmem, 0, 64);
	fake_hold(true);	/* the network is slow: nothing executes */
	h_post(p.cc, QP_OP_WRITE, true, 1, &p.cmem, 0, 8, addr_of(&p.smem, 0),
			p.smem.key, 0);
	h_post(p.cc, QP_OP_WRITE, false, 2, &p.cmem, 0, 8,
			addr_of(&p.smem, 0), p.smem.key, 0);
	h_post(p.cc, QP_OP_WRITE, true, 3, &p.cmem, 0, 8, addr_of(&p.smem, 0),
			p.smem.key, 0);
	h_run(3);
	ck_assert_uint_eq(conn_works_in_flight(p.cc), 3);

	h_disconnect(p.cs, p.cconn, &r);
	ck_assert_int_eq(r.code, 0);
	expect_cqe(p.cc, false, 1, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_cqe(p.cc, false, 2, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_cqe(p.cc, false, 3, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_cqe(p.cc, false, 61, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_event(p.cs, p.cconn, RPMA_CONN_CLOSED, NULL);
	expect_event(p.ss, p.sconn, RPMA_CONN_CLOSED, NULL);
	expect_cqe(p.sc, false, 60, IBV_WC_WR_FLUSH_ERR, NULL);
	fake_hold(false);

	/* both sides released their queue pairs already */
	ck_assert_ptr_null(conn_tp(p.cc));
	ck_assert_ptr_null(conn_tp(p.sc));
	ck_assert_uint_eq(fake_counts().qps, 0);
	h_conn_delete(p.cs, p.cconn, &r);
	h_conn_delete(p.ss, p.sconn, &r);
	pair_teardown(&p);
}
END_TEST

START_TEST(test_client_vanishes)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);
	h_post_recv(p.sc, 70, &p.smem, 0, 64);
	h_run(2);
	/* kill -9: the session goes without goodbyes */
	session_destroy(p.cs);
	expect_event(p.ss, p.sconn, RPMA_CONN_CLOSED, NULL);
	expect_cqe(p.sc, false, 70, IBV_WC_WR_FLUSH_ERR, NULL);
	pair_teardown(&p);
}
END_TEST

/*
 * rpmad's poller visits only connections with work: an idle one sleeps
 * with need_wakeup set (its progress counter stands still) while another
 * one works, and its doorbell brings it back.
 */
START_TEST(test_idle_connection_sleeps)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);
	uint64_t s0 = addr_of(&p.smem, 0);
	h_run(5);
	ck_assert(!conn_polled(p.cc));
	ck_assert(!conn_polled(p.sc));
	ck_assert_uint_eq(atomic_load(&conn_qp(p.cc)->hdr->need_wakeup), 1);
	ck_assert_uint_eq(atomic_load(&conn_qp(p.sc)->hdr->need_wakeup), 1);
	uint32_t server_progress = atomic_load(&conn_qp(p.sc)->hdr->progress);
	uint32_t client_progress = atomic_load(&conn_qp(p.cc)->hdr->progress);

	/* one-sided writes: the client's connection works, not the server's */
	for (uint64_t i = 1; i <= 20; i++) {
		h_post(p.cc, QP_OP_WRITE, true, i, &p.cmem, 0, 8, s0,
				p.smem.key, 0);
		expect_cqe(p.cc, false, i, IBV_WC_SUCCESS, NULL);
	}
	ck_assert(conn_polled(p.cc));
	ck_assert_uint_ne(atomic_load(&conn_qp(p.cc)->hdr->progress),
			client_progress);
	ck_assert(!conn_polled(p.sc));
	ck_assert_uint_eq(atomic_load(&conn_qp(p.sc)->hdr->progress),
			server_progress);

	/* the sleeping server's doorbell: a send to the client works */
	h_post_recv(p.cc, 7, &p.cmem, 64, 8);
	h_post(p.sc, QP_OP_SEND, true, 8, &p.smem, 0, 8, 0, 0, 0);
	expect_cqe(p.sc, false, 8, IBV_WC_SUCCESS, NULL);
	expect_cqe(p.cc, false, 7, IBV_WC_SUCCESS, NULL);
	pair_teardown(&p);
}
END_TEST

START_TEST(test_device_removed)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);
	h_post_recv(p.sc, 80, &p.smem, 0, 64);
	h_run(2);

	fake_remove_device("fake1");	/* the server's */
	expect_event(p.ss, p.sconn, RPMA_CONN_LOST, NULL);
	expect_cqe(p.sc, false, 80, IBV_WC_WR_FLUSH_ERR, NULL);

	/*
	 * the server's rpmad let go of the device, its connection too: the
	 * client's side ends (the disconnect may reach it first), and its
	 * work cannot be delivered: it fails on the device or, taken after
	 * the connection's end in the same batch of events, is flushed
	 */
	h_post(p.cc, QP_OP_WRITE, true, 1, &p.cmem, 0, 8, addr_of(&p.smem, 0),
			p.smem.key, 0);
	struct qp_cqe cqe;
	ck_assert(h_wait_cqe(p.cc, false, &cqe, WAIT_MS));
	ck_assert_uint_eq(cqe.wr_id, 1);
	ck_assert_msg(cqe.status == IBV_WC_RETRY_EXC_ERR ||
			cqe.status == IBV_WC_WR_FLUSH_ERR, "status %s",
			ibv_wc_status_str(cqe.status));
	ck_assert(conn_qp_failed(p.cc));

	/* the address is not an RDMA device's any more */
	struct h_reply r;
	h_device_get(p.ss, "127.0.0.2", false, &r);
	ck_assert_str_eq(r.transport, "tcp");
	pair_teardown(&p);
}
END_TEST

START_TEST(test_device_fatal)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);
	struct h_reply r;

	fake_device_fatal("fake0");	/* the client's */
	expect_event(p.cs, p.cconn, RPMA_CONN_LOST, NULL);
	/*
	 * the client's rpmad let go of the device and its connection: the
	 * server's send fails on the device, or is flushed when the
	 * disconnect reached the server first
	 */
	h_post(p.sc, QP_OP_SEND, true, 1, &p.smem, 0, 8, 0, 0, 0);
	struct qp_cqe cqe;
	ck_assert(h_wait_cqe(p.sc, false, &cqe, WAIT_MS));
	ck_assert_uint_eq(cqe.wr_id, 1);
	ck_assert_msg(cqe.status == IBV_WC_RETRY_EXC_ERR ||
			cqe.status == IBV_WC_WR_FLUSH_ERR, "status %s",
			ibv_wc_status_str(cqe.status));
	/* a dead device gets no new peers */
	h_device_get(p.cs, "127.0.0.1", false, &r);
	ck_assert_str_eq(r.transport, "tcp");
	pair_teardown(&p);
}
END_TEST

START_TEST(test_qp_fatal)
{
	struct pair p;
	pair_setup(&p, CFG, CFG);

	h_post_recv(p.cc, 90, &p.cmem, 0, 64);
	h_run(2);
	fake_qp_fatal(hw_qp(p.cc));
	expect_cqe(p.cc, false, 90, IBV_WC_WR_FLUSH_ERR, NULL);
	h_run(2);
	ck_assert(conn_qp_failed(p.cc));
	ck_assert_int_eq(h_info(p.cc).state, CONN_ESTABLISHED);
	h_post(p.cc, QP_OP_WRITE, true, 1, &p.cmem, 0, 8, addr_of(&p.smem, 0),
			p.smem.key, 0);
	expect_cqe(p.cc, false, 1, IBV_WC_WR_FLUSH_ERR, NULL);
	pair_teardown(&p);
}
END_TEST

int
main(void)
{
	const TTest *const tc_devices[] = { test_no_rdma_support,
		test_devices_at_start, test_device_lookup, test_registration,
		NULL };
	const TTest *const tc_connections[] = { test_connect_accept,
		test_setup_deadlines, test_private_data_limits,
		test_reject_unreachable, test_client_withdraws,
		test_listen_errors, NULL };
	const TTest *const tc_operations[] = { test_operations,
		test_receive_before_connect, test_idle_connection_sleeps,
		NULL };
	const TTest *const tc_errors[] = { test_remote_access_error,
		test_refused_work_in_turn, test_bad_receive,
		test_disconnect_flushes, test_client_vanishes,
		test_device_removed, test_device_fatal, test_qp_fatal, NULL };
	const struct th_tcase tcases[] = {
		{ "devices", .tests = tc_devices },
		{ "connections", .tests = tc_connections },
		{ "operations", .tests = tc_operations },
		{ "errors", .tests = tc_errors },
	};
	return check_run(th_suite("verbs", tcases, TH_N(tcases)), CK_NORMAL);
}
