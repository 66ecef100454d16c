// SPDX-License-Identifier: BSD-3-Clause
/*
 * fake_verbs.c -- a test double of the libibverbs functions rpmad uses:
 * devices, protection domains, memory registrations, completion channels
 * and queues, and RC queue pairs that execute work like a NIC
 *
 * A work request runs when posted (unless held): keys, bounds and access
 * are checked on both ends; a bad local buffer fails with
 * IBV_WC_LOC_PROT_ERR, a bad remote one with IBV_WC_REM_ACCESS_ERR (and
 * the target's queue pair fails too), a message finds the target's next
 * receive or waits for one (RNR), a peer that is gone gives
 * IBV_WC_RETRY_EXC_ERR. Only signaled work and errors make completions;
 * a send queue slot is free again once a completion of it or of later
 * work was polled. A queue pair in error flushes its work
 * (IBV_WC_WR_FLUSH_ERR: signaled sends and every receive).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_internal.h"

struct fake_state fake;

void
fake_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void) fprintf(stderr, "fake rdma: ");
	(void) vfprintf(stderr, fmt, ap);
	(void) fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

/* ------------------------------------------------------------- op log */

static struct fake_op *ops;
static unsigned nops, ops_cap;
static unsigned advises;

static void
log_op(uint32_t qp_num, const struct ibv_send_wr *wr, uint32_t len,
		enum ibv_wc_status status)
{
	if (nops == ops_cap) {
		unsigned cap = ops_cap ? ops_cap * 2 : 64;
		struct fake_op *n = realloc(ops, cap * sizeof(*n));
		if (n == NULL)
			fake_fail("out of memory");
		ops = n;
		ops_cap = cap;
	}
	ops[nops++] = (struct fake_op){
		.qp_num = qp_num,
		.opcode = wr->opcode,
		.send_flags = wr->send_flags,
		.raddr = wr->wr.rdma.remote_addr,
		.rkey = wr->wr.rdma.rkey,
		.length = len,
		.status = status,
	};
}

unsigned
fake_op_count(void)
{
	return nops;
}

const struct fake_op *
fake_op_get(unsigned i)
{
	return i < nops ? &ops[i] : NULL;
}

unsigned
fake_advise_count(void)
{
	return advises;
}

struct fake_counts
fake_counts(void)
{
	return fake.counts;
}

/* ---------------------------------------------------------- the objects */

struct fake_pd {
	struct ibv_pd pd;
	unsigned users;
};

struct fake_mr {
	struct ibv_mr mr;
	uint64_t iova;
	unsigned access;
	struct fake_mr *next;
};

struct fake_cq_event {
	struct fake_cq *cq;
	struct fake_cq_event *next;
};

struct fake_cc {
	struct ibv_comp_channel ch;
	int wfd;
	unsigned cqs;
	struct fake_cq_event *head, *tail;
};

struct fake_qp;

struct fake_cqe {
	struct ibv_wc wc;
	struct fake_qp *qp;
	uint64_t seq;		/* send completions: the work's position */
	bool send;
};

struct fake_cq {
	struct ibv_cq cq;
	struct fake_cqe *cqes;
	int cap, head, count;
	bool armed;
	unsigned unacked;
	unsigned qps;
};

struct fake_wr {
	struct ibv_send_wr wr;
	struct ibv_sge sge[2];
	uint64_t seq;
	struct fake_wr *next;
};

struct fake_rwr {
	uint64_t wr_id;
	struct ibv_sge sge[2];
	int num_sge;
	struct fake_rwr *next;
};

struct fake_qp {
	struct ibv_qp qp;
	struct ibv_qp_cap cap;
	bool sig_all;
	struct fake_qp *peer;
	struct fake_wr *sq_head, *sq_tail;	/* not executed yet */
	uint64_t next_seq;		/* posted */
	uint64_t retired;		/* slots freed: seq < retired */
	struct fake_rwr *rq_head, *rq_tail;
	unsigned rq_n;
	struct fake_qp *next;
};

static struct fake_mr *all_mrs;
static struct fake_qp *all_qps;
static uint32_t next_qp_num = 0x100;

struct fake_dev *
fake_dev_of_ctx(const struct ibv_context *ctx)
{
	for (unsigned i = 0; i < fake.ndevs; i++) {
		if (&fake.devs[i].vctx.context == ctx)
			return &fake.devs[i];
	}
	return NULL;
}

static struct fake_qp *
fq(struct ibv_qp *qp)
{
	return (struct fake_qp *)qp;
}

/* ------------------------------------------------------------ the CQs */

static void
cc_signal(struct fake_cc *cc, struct fake_cq *cq)
{
	struct fake_cq_event *e = calloc(1, sizeof(*e));
	if (e == NULL)
		fake_fail("out of memory");
	e->cq = cq;
	if (cc->tail)
		cc->tail->next = e;
	else
		cc->head = e;
	cc->tail = e;
	char b = 1;
	if (write(cc->wfd, &b, 1) != 1)
		fake_fail("completion channel write: %s", strerror(errno));
}

static void
cq_push(struct fake_cq *cq, const struct fake_cqe *e)
{
	if (cq->count == cq->cap)
		fake_fail("CQ overrun (%d entries): a real CQ would fail",
				cq->cap);
	cq->cqes[(cq->head + cq->count) % cq->cap] = *e;
	cq->count++;
	if (cq->armed && cq->cq.channel) {
		cq->armed = false;
		cc_signal((struct fake_cc *)cq->cq.channel, cq);
	}
}

static enum ibv_wc_opcode
wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return IBV_WC_SEND;
	default:
		return IBV_WC_RDMA_WRITE;
	}
}

static void
complete_send(struct fake_qp *q, const struct fake_wr *fw,
		enum ibv_wc_status status, uint32_t len)
{
	if (status == IBV_WC_SUCCESS && !q->sig_all &&
			!(fw->wr.send_flags & IBV_SEND_SIGNALED))
		return;
	struct fake_cqe e = {
		.wc = {
			.wr_id = fw->wr.wr_id,
			.status = status,
			.opcode = wc_opcode(fw->wr.opcode),
			.byte_len = fw->wr.opcode == IBV_WR_RDMA_READ ? len : 0,
			.qp_num = q->qp.qp_num,
			.vendor_err = status == IBV_WC_SUCCESS ? 0 : 0x42,
		},
		.qp = q,
		.seq = fw->seq,
		.send = true,
	};
	cq_push((struct fake_cq *)q->qp.send_cq, &e);
}

static void
complete_recv(struct fake_qp *q, const struct fake_rwr *r,
		enum ibv_wc_status status, uint32_t len,
		enum ibv_wc_opcode opcode, bool imm, uint32_t imm_data)
{
	struct fake_cqe e = {
		.wc = {
			.wr_id = r->wr_id,
			.status = status,
			.opcode = opcode,
			.byte_len = len,
			.imm_data = imm ? imm_data : 0,
			.wc_flags = imm ? IBV_WC_WITH_IMM : 0,
			.qp_num = q->qp.qp_num,
		},
		.qp = q,
	};
	cq_push((struct fake_cq *)q->qp.recv_cq, &e);
}

/* ------------------------------------------------------ queue pair life */

void
fake_qp_to_error(struct ibv_qp *qp)
{
	struct fake_qp *q = fq(qp);
	q->qp.state = IBV_QPS_ERR;
	while (q->sq_head) {
		struct fake_wr *fw = q->sq_head;
		q->sq_head = fw->next;
		if (fw->wr.send_flags & IBV_SEND_SIGNALED || q->sig_all)
			complete_send(q, fw, IBV_WC_WR_FLUSH_ERR, 0);
		free(fw);
	}
	q->sq_tail = NULL;
	while (q->rq_head) {
		struct fake_rwr *r = q->rq_head;
		q->rq_head = r->next;
		complete_recv(q, r, IBV_WC_WR_FLUSH_ERR, 0, IBV_WC_RECV,
				false, 0);
		free(r);
	}
	q->rq_tail = NULL;
	q->rq_n = 0;
}

void
fake_qp_unlink(struct ibv_qp *qp)
{
	struct fake_qp *q = fq(qp);
	if (q->peer)
		q->peer->peer = NULL;
	q->peer = NULL;
}

static void progress(struct fake_qp *q);

void
fake_qp_connect(struct ibv_qp *a, struct ibv_qp *b)
{
	fq(a)->peer = fq(b);
	fq(b)->peer = fq(a);
	a->state = IBV_QPS_RTS;
	b->state = IBV_QPS_RTS;
}

void
fake_dev_qps_fail(struct fake_dev *d)
{
	for (struct fake_qp *q = all_qps; q; q = q->next) {
		if (q->qp.context != &d->vctx.context)
			continue;
		fake_qp_unlink(&q->qp);
		if (q->qp.state != IBV_QPS_ERR)
			fake_qp_to_error(&q->qp);
	}
}

struct ibv_qp *
fake_qp_create(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	if (attr->qp_type != IBV_QPT_RC || attr->send_cq == NULL ||
			attr->recv_cq == NULL || attr->srq ||
			attr->send_cq->context != pd->context ||
			attr->recv_cq->context != pd->context ||
			attr->cap.max_send_wr == 0 ||
			attr->cap.max_send_wr > 4096 ||
			attr->cap.max_recv_wr > 4096 ||
			attr->cap.max_send_sge > 2 ||
			attr->cap.max_recv_sge > 2) {
		errno = EINVAL;
		return NULL;
	}
	struct fake_qp *q = calloc(1, sizeof(*q));
	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	q->qp.context = pd->context;
	q->qp.qp_context = attr->qp_context;
	q->qp.pd = pd;
	q->qp.send_cq = attr->send_cq;
	q->qp.recv_cq = attr->recv_cq;
	q->qp.qp_num = next_qp_num++;
	q->qp.state = IBV_QPS_INIT;
	q->qp.qp_type = IBV_QPT_RC;
	q->cap = attr->cap;
	q->sig_all = attr->sq_sig_all;
	((struct fake_pd *)pd)->users++;
	((struct fake_cq *)attr->send_cq)->qps++;
	((struct fake_cq *)attr->recv_cq)->qps++;
	q->next = all_qps;
	all_qps = q;
	fake.counts.qps++;
	return &q->qp;
}

int
fake_qp_destroy(struct ibv_qp *qp)
{
	struct fake_qp *q = fq(qp);
	fake_qp_unlink(qp);
	while (q->sq_head) {
		struct fake_wr *fw = q->sq_head;
		q->sq_head = fw->next;
		free(fw);
	}
	while (q->rq_head) {
		struct fake_rwr *r = q->rq_head;
		q->rq_head = r->next;
		free(r);
	}
	/* the CQs forget its completions, as a provider cleans them */
	struct fake_cq *cqs[2] = { (struct fake_cq *)qp->send_cq,
			(struct fake_cq *)qp->recv_cq };
	for (int i = 0; i < 2; i++) {
		struct fake_cq *cq = cqs[i];
		int kept = 0;
		for (int j = 0; j < cq->count; j++) {
			struct fake_cqe e = cq->cqes[(cq->head + j) % cq->cap];
			if (e.qp != q)
				cq->cqes[(cq->head + kept++) % cq->cap] = e;
		}
		cq->count = kept;
		cq->qps--;
	}
	((struct fake_pd *)qp->pd)->users--;
	for (struct fake_qp **pp = &all_qps; *pp; pp = &(*pp)->next) {
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	}
	free(q);
	fake.counts.qps--;
	return 0;
}

int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	if (!(attr_mask & IBV_QP_STATE))
		return 0;
	if (attr->qp_state == IBV_QPS_ERR) {
		if (qp->state != IBV_QPS_ERR)
			fake_qp_to_error(qp);
		return 0;
	}
	qp->state = attr->qp_state;
	return 0;
}

/* ---------------------------------------------------------- execution */

static struct fake_mr *
mr_by_key(const struct ibv_pd *pd, uint32_t key, bool remote)
{
	for (struct fake_mr *m = all_mrs; m; m = m->next) {
		if (m->mr.pd == pd && (remote ? m->mr.rkey : m->mr.lkey) == key)
			return m;
	}
	return NULL;
}

/* The host address of [addr, addr + len) in the registration, or NULL. */
static uint8_t *
mr_range(const struct fake_mr *m, uint64_t addr, uint64_t len)
{
	if (addr < m->iova || addr - m->iova > m->mr.length ||
			len > m->mr.length - (addr - m->iova))
		return NULL;
	return (uint8_t *)m->mr.addr + (addr - m->iova);
}

/* Checks local SGEs; each pointer into *ptrs. 0 or a status. */
static enum ibv_wc_status
local_sges(const struct ibv_pd *pd, const struct ibv_sge *sge, int n,
		bool write, uint8_t **ptrs, uint32_t *total)
{
	*total = 0;
	for (int i = 0; i < n; i++) {
		struct fake_mr *m = mr_by_key(pd, sge[i].lkey, false);
		if (m == NULL || (write && !(m->access &
				IBV_ACCESS_LOCAL_WRITE)))
			return IBV_WC_LOC_PROT_ERR;
		ptrs[i] = mr_range(m, sge[i].addr, sge[i].length);
		if (ptrs[i] == NULL)
			return IBV_WC_LOC_PROT_ERR;
		*total += sge[i].length;
	}
	return IBV_WC_SUCCESS;
}

static void
gather(uint8_t *dst, const struct ibv_sge *sge, uint8_t **ptrs, int n)
{
	for (int i = 0; i < n; i++) {
		memcpy(dst, ptrs[i], sge[i].length);
		dst += sge[i].length;
	}
}

static void
scatter(const uint8_t *src, uint32_t len, const struct ibv_sge *sge,
		uint8_t **ptrs, int n)
{
	for (int i = 0; i < n && len; i++) {
		uint32_t k = sge[i].length < len ? sge[i].length : len;
		memcpy(ptrs[i], src, k);
		src += k;
		len -= k;
	}
}

/* The target's memory of a remote access, or NULL (access error). */
static uint8_t *
remote_range(struct fake_qp *t, uint32_t rkey, uint64_t addr, uint32_t len,
		unsigned need)
{
	struct fake_mr *m = mr_by_key(t->qp.pd, rkey, true);
	if (m == NULL || !(m->access & need))
		return NULL;
	return mr_range(m, addr, len);
}

/* The target's queue pair fails (as a responder does on a bad request). */
static void
target_fails(struct fake_qp *t)
{
	fake_qp_to_error(&t->qp);
}

enum exec_result {
	EXEC_DONE,
	EXEC_RNR,	/* waits for a receive at the target */
};

/*
 * Runs the first work request of q. The outcome goes to *status; the
 * target's side (data, receive completions, failures) happens here.
 */
static enum exec_result
execute(struct fake_qp *q, struct fake_wr *fw, enum ibv_wc_status *status,
		uint32_t *len)
{
	struct ibv_send_wr *wr = &fw->wr;
	struct fake_qp *t = q->peer;
	uint8_t *lp[2] = { NULL, NULL };
	bool local_write = wr->opcode == IBV_WR_RDMA_READ;

	*status = local_sges(q->qp.pd, fw->sge, wr->num_sge, local_write, lp,
			len);
	if (*status)
		return EXEC_DONE;
	if (t == NULL || t->qp.state == IBV_QPS_ERR) {
		/* nobody answers: the transport retries give up */
		*status = IBV_WC_RETRY_EXC_ERR;
		return EXEC_DONE;
	}

	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM: {
		bool imm = wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
		if (imm && t->rq_head == NULL)
			return EXEC_RNR;
		uint8_t *rp = NULL;
		if (*len) {
			rp = remote_range(t, wr->wr.rdma.rkey,
					wr->wr.rdma.remote_addr, *len,
					IBV_ACCESS_REMOTE_WRITE);
			if (rp == NULL) {
				*status = IBV_WC_REM_ACCESS_ERR;
				target_fails(t);
				return EXEC_DONE;
			}
			gather(rp, fw->sge, lp, wr->num_sge);
		}
		if (imm) {
			struct fake_rwr *r = t->rq_head;
			t->rq_head = r->next;
			if (t->rq_head == NULL)
				t->rq_tail = NULL;
			t->rq_n--;
			complete_recv(t, r, IBV_WC_SUCCESS, *len,
					IBV_WC_RECV_RDMA_WITH_IMM, true,
					wr->imm_data);
			free(r);
		}
		return EXEC_DONE;
	}
	case IBV_WR_RDMA_READ:
		if (*len) {
			uint8_t *rp = remote_range(t, wr->wr.rdma.rkey,
					wr->wr.rdma.remote_addr, *len,
					IBV_ACCESS_REMOTE_READ);
			if (rp == NULL) {
				*status = IBV_WC_REM_ACCESS_ERR;
				target_fails(t);
				return EXEC_DONE;
			}
			scatter(rp, *len, fw->sge, lp, wr->num_sge);
		}
		return EXEC_DONE;
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM: {
		struct fake_rwr *r = t->rq_head;
		if (r == NULL)
			return EXEC_RNR;
		t->rq_head = r->next;
		if (t->rq_head == NULL)
			t->rq_tail = NULL;
		t->rq_n--;
		uint8_t *rp[2] = { NULL, NULL };
		uint32_t room;
		enum ibv_wc_status rs = local_sges(t->qp.pd, r->sge, r->num_sge,
				true, rp, &room);
		if (rs == IBV_WC_SUCCESS && room < *len)
			rs = IBV_WC_LOC_LEN_ERR;
		if (rs) {
			complete_recv(t, r, rs, 0, IBV_WC_RECV, false, 0);
			free(r);
			target_fails(t);
			*status = rs == IBV_WC_LOC_LEN_ERR ?
				IBV_WC_REM_INV_REQ_ERR : IBV_WC_REM_OP_ERR;
			return EXEC_DONE;
		}
		uint8_t *msg = malloc(*len ? *len : 1);
		if (msg == NULL)
			fake_fail("out of memory");
		gather(msg, fw->sge, lp, wr->num_sge);
		scatter(msg, *len, r->sge, rp, r->num_sge);
		free(msg);
		bool imm = wr->opcode == IBV_WR_SEND_WITH_IMM;
		complete_recv(t, r, IBV_WC_SUCCESS, *len, IBV_WC_RECV, imm,
				wr->imm_data);
		free(r);
		return EXEC_DONE;
	}
	default:
		*status = IBV_WC_LOC_QP_OP_ERR;
		return EXEC_DONE;
	}
}

static void
progress(struct fake_qp *q)
{
	while (!fake.hold && q->sq_head && q->qp.state == IBV_QPS_RTS) {
		struct fake_wr *fw = q->sq_head;
		enum ibv_wc_status status;
		uint32_t len = 0;
		if (execute(q, fw, &status, &len) == EXEC_RNR)
			return;	/* rnr_retry 7: waits for a receive */
		q->sq_head = fw->next;
		if (q->sq_head == NULL)
			q->sq_tail = NULL;
		log_op(q->qp.qp_num, &fw->wr, len, status);
		complete_send(q, fw, status, len);
		free(fw);
		if (status != IBV_WC_SUCCESS)
			fake_qp_to_error(&q->qp);
	}
}

void
fake_hold(bool hold)
{
	fake.hold = hold;
	if (!hold) {
		for (struct fake_qp *q = all_qps; q; q = q->next)
			progress(q);
	}
}

/* ----------------------------------------------------------- data path */

static int
fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		struct ibv_send_wr **bad)
{
	struct fake_qp *q = fq(qp);
	for (; wr; wr = wr->next) {
		if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_ERR) {
			*bad = wr;
			return EINVAL;
		}
		if (wr->num_sge < 0 || wr->num_sge > (int)q->cap.max_send_sge ||
				(wr->send_flags & IBV_SEND_INLINE)) {
			*bad = wr;
			return EINVAL;
		}
		if (q->next_seq - q->retired >= q->cap.max_send_wr) {
			*bad = wr;
			return ENOMEM;
		}
		struct fake_wr *fw = calloc(1, sizeof(*fw));
		if (fw == NULL)
			fake_fail("out of memory");
		fw->wr = *wr;
		fw->wr.next = NULL;
		if (wr->num_sge)
			memcpy(fw->sge, wr->sg_list, (size_t)wr->num_sge *
					sizeof(*fw->sge));
		fw->wr.sg_list = fw->sge;
		fw->seq = q->next_seq++;
		if (qp->state == IBV_QPS_ERR) {
			complete_send(q, fw, IBV_WC_WR_FLUSH_ERR, 0);
			free(fw);
			continue;
		}
		if (q->sq_tail)
			q->sq_tail->next = fw;
		else
			q->sq_head = fw;
		q->sq_tail = fw;
	}
	progress(q);
	return 0;
}

static int
fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		struct ibv_recv_wr **bad)
{
	struct fake_qp *q = fq(qp);
	for (; wr; wr = wr->next) {
		if (qp->state == IBV_QPS_RESET || wr->num_sge < 0 ||
				wr->num_sge > (int)q->cap.max_recv_sge) {
			*bad = wr;
			return EINVAL;
		}
		if (q->rq_n >= q->cap.max_recv_wr) {
			*bad = wr;
			return ENOMEM;
		}
		struct fake_rwr *r = calloc(1, sizeof(*r));
		if (r == NULL)
			fake_fail("out of memory");
		r->wr_id = wr->wr_id;
		r->num_sge = wr->num_sge;
		if (wr->num_sge)
			memcpy(r->sge, wr->sg_list, (size_t)wr->num_sge *
					sizeof(*r->sge));
		if (qp->state == IBV_QPS_ERR) {
			complete_recv(q, r, IBV_WC_WR_FLUSH_ERR, 0, IBV_WC_RECV,
					false, 0);
			free(r);
			continue;
		}
		if (q->rq_tail)
			q->rq_tail->next = r;
		else
			q->rq_head = r;
		q->rq_tail = r;
		q->rq_n++;
	}
	/* a message waiting for a receive may land now */
	if (q->peer)
		progress(q->peer);
	return 0;
}

static int
fake_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct fake_cq *cq = (struct fake_cq *)ibcq;
	int got = 0;
	while (got < n && cq->count) {
		struct fake_cqe *e = &cq->cqes[cq->head];
		wc[got++] = e->wc;
		/* this and every earlier send slot of the QP is free */
		if (e->send && e->qp->retired <= e->seq)
			e->qp->retired = e->seq + 1;
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
	}
	return got;
}

static int
fake_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	((struct fake_cq *)ibcq)->armed = true;
	return 0;
}

/* ------------------------------------------------------------- devices */

static int
fake_query_device_ex(struct ibv_context *ctx,
		const struct ibv_query_device_ex_input *input,
		struct ibv_device_attr_ex *attr, size_t size)
{
	struct fake_dev *d = fake_dev_of_ctx(ctx);
	memset(attr, 0, size);
	(void) ibv_query_device(ctx, &attr->orig_attr);
	if (d->odp) {
		attr->odp_caps.general_caps = IBV_ODP_SUPPORT;
		attr->odp_caps.per_transport_caps.rc_odp_caps =
			IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ;
	}
	return 0;
}

static int
fake_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		uint32_t flags, struct ibv_sge *sg, uint32_t n)
{
	struct fake_dev *d = fake_dev_of_ctx(pd->context);
	if (!d->odp)
		return EOPNOTSUPP;
	for (uint32_t i = 0; i < n; i++) {
		struct fake_mr *m = mr_by_key(pd, sg[i].lkey, false);
		if (m == NULL || !(m->access & IBV_ACCESS_ON_DEMAND))
			return EINVAL;
		if (mr_range(m, sg[i].addr, sg[i].length) == NULL)
			return EFAULT;
	}
	advises++;
	return 0;
}

int
fake_add_device(const char *name, const char *ipv4, bool odp)
{
	if (fake.ndevs == FAKE_MAX_DEVICES)
		return -1;
	struct fake_dev *d = &fake.devs[fake.ndevs];
	memset(d, 0, sizeof(*d));
	if (inet_pton(AF_INET, ipv4, &d->addr) != 1)
		return -1;
	if (pipe2(d->async_pipe, O_CLOEXEC))
		return -1;
	(void) snprintf(d->ibdev.name, sizeof(d->ibdev.name), "%s", name);
	d->ibdev.node_type = IBV_NODE_CA;
	d->ibdev.transport_type = IBV_TRANSPORT_IB;
	d->odp = odp;
	d->next_key = ((uint32_t)(fake.ndevs + 1) << 20) | 0x100;
	d->vctx.sz = sizeof(d->vctx);
	d->vctx.query_device_ex = fake_query_device_ex;
	d->vctx.advise_mr = fake_advise_mr;
	struct ibv_context *ctx = &d->vctx.context;
	ctx->device = &d->ibdev;
	ctx->cmd_fd = -1;
	ctx->async_fd = d->async_pipe[0];
	ctx->num_comp_vectors = 1;
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->ops.post_send = fake_post_send;
	ctx->ops.post_recv = fake_post_recv;
	ctx->ops.poll_cq = fake_poll_cq;
	ctx->ops.req_notify_cq = fake_req_notify_cq;
	fake.ndevs++;
	return 0;
}

static struct fake_dev *
dev_by_name(const char *name)
{
	for (unsigned i = 0; i < fake.ndevs; i++) {
		if (strcmp(fake.devs[i].ibdev.name, name) == 0)
			return &fake.devs[i];
	}
	fake_fail("no device %s", name);
}

static void
async_push(struct fake_dev *d, enum ibv_event_type type, struct ibv_qp *qp)
{
	struct fake_async *a = calloc(1, sizeof(*a));
	if (a == NULL)
		fake_fail("out of memory");
	a->ev.event_type = type;
	if (qp)
		a->ev.element.qp = qp;
	if (d->async_tail)
		d->async_tail->next = a;
	else
		d->async_head = a;
	d->async_tail = a;
	char b = 1;
	if (write(d->async_pipe[1], &b, 1) != 1)
		fake_fail("async write: %s", strerror(errno));
}

void
fake_rdma_present(bool present)
{
	fake.absent = !present;
}

void
fake_remove_device(const char *name)
{
	struct fake_dev *d = dev_by_name(name);
	d->removed = true;
	fake_cm_device_removed(d);
	fake_dev_qps_fail(d);
	async_push(d, IBV_EVENT_DEVICE_FATAL, NULL);
}

void
fake_device_fatal(const char *name)
{
	struct fake_dev *d = dev_by_name(name);
	fake_dev_qps_fail(d);
	async_push(d, IBV_EVENT_DEVICE_FATAL, NULL);
}

void
fake_qp_fatal(struct ibv_qp *qp)
{
	struct fake_dev *d = fake_dev_of_ctx(qp->context);
	fake_qp_unlink(qp);
	fake_qp_to_error(qp);
	async_push(d, IBV_EVENT_QP_FATAL, qp);
}

void
fake_next_rkeys(const char *name, const uint32_t *keys, unsigned n)
{
	struct fake_dev *d = dev_by_name(name);
	if (n > FAKE_MAX_KEYS)
		n = FAKE_MAX_KEYS;
	memcpy(d->forced_keys, keys, n * sizeof(*keys));
	d->nforced = n;
}

struct ibv_device **
ibv_get_device_list(int *num)
{
	if (num)
		*num = 0;
	if (fake.absent) {
		errno = ENOSYS;
		return NULL;
	}
	struct ibv_device **list = calloc(fake.ndevs + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	int n = 0;
	for (unsigned i = 0; i < fake.ndevs; i++) {
		if (!fake.devs[i].removed)
			list[n++] = &fake.devs[i].ibdev;
	}
	if (num)
		*num = n;
	return list;
}

void
ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

int
ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->max_qp_wr = 4096;
	attr->max_sge = 2;
	attr->max_cq = 1024;
	attr->max_cqe = 65536;
	attr->max_mr = 1024;
	attr->max_pd = 1024;
	attr->max_qp_rd_atom = 16;
	attr->max_qp_init_rd_atom = 16;
	attr->phys_port_cnt = 1;
	return 0;
}

int
ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	struct fake_dev *d = fake_dev_of_ctx(ctx);
	char b;
	ssize_t n = read(d->async_pipe[0], &b, 1);
	if (n != 1) {
		if (n == 0)
			errno = EIO;
		return -1;
	}
	struct fake_async *a = d->async_head;
	if (a == NULL)
		fake_fail("an async event byte without an event");
	d->async_head = a->next;
	if (d->async_head == NULL)
		d->async_tail = NULL;
	*event = a->ev;
	free(a);
	return 0;
}

void
ibv_ack_async_event(struct ibv_async_event *event)
{
}

/* ----------------------------------------------------- protection domains */

struct ibv_pd *
ibv_alloc_pd(struct ibv_context *ctx)
{
	struct fake_dev *d = fake_dev_of_ctx(ctx);
	if (d == NULL || d->removed) {
		errno = ENODEV;
		return NULL;
	}
	struct fake_pd *p = calloc(1, sizeof(*p));
	if (p == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	p->pd.context = ctx;
	fake.counts.pds++;
	return &p->pd;
}

int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct fake_pd *p = (struct fake_pd *)pd;
	if (p->users)
		return EBUSY;
	free(p);
	fake.counts.pds--;
	return 0;
}

/* ------------------------------------------------------- registrations */

struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		unsigned int access)
{
	struct fake_dev *d = fake_dev_of_ctx(pd->context);
	if (d->removed) {
		errno = ENODEV;
		return NULL;
	}
	if (fake.reg_needs_odp && !(access & IBV_ACCESS_ON_DEMAND)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (((access & IBV_ACCESS_REMOTE_WRITE) &&
			!(access & IBV_ACCESS_LOCAL_WRITE)) ||
			((access & IBV_ACCESS_ON_DEMAND) && !d->odp) ||
			addr == NULL || length == 0) {
		errno = EINVAL;
		return NULL;
	}
	struct fake_mr *m = calloc(1, sizeof(*m));
	if (m == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	uint32_t key;
	if (d->nforced) {
		key = d->forced_keys[0];
		memmove(d->forced_keys, d->forced_keys + 1,
				--d->nforced * sizeof(*d->forced_keys));
	} else {
		key = d->next_key;
		d->next_key += 0x100;
	}
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.lkey = key;
	m->mr.rkey = key;
	m->iova = iova;
	m->access = access;
	m->next = all_mrs;
	all_mrs = m;
	((struct fake_pd *)pd)->users++;
	fake.counts.mrs++;
	return &m->mr;
}

void
fake_reg_needs_odp(bool needs)
{
	fake.reg_needs_odp = needs;
}

uint64_t
fake_mr_iova(const struct ibv_mr *mr)
{
	return ((const struct fake_mr *)mr)->iova;
}

unsigned
fake_mr_access(const struct ibv_mr *mr)
{
	return ((const struct fake_mr *)mr)->access;
}

unsigned
fake_qp_rq_len(const struct ibv_qp *qp)
{
	return ((const struct fake_qp *)qp)->rq_n;
}

#undef ibv_reg_mr
struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr,
			(unsigned)access);
}

int
ibv_dereg_mr(struct ibv_mr *mr)
{
	for (struct fake_mr **pp = &all_mrs; *pp; pp = &(*pp)->next) {
		if (&(*pp)->mr == mr) {
			struct fake_mr *m = *pp;
			*pp = m->next;
			((struct fake_pd *)mr->pd)->users--;
			free(m);
			fake.counts.mrs--;
			return 0;
		}
	}
	return EINVAL;
}

/* ------------------------------------------------ completion channels */

struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct fake_cc *cc = calloc(1, sizeof(*cc));
	if (cc == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC)) {
		free(cc);
		return NULL;
	}
	cc->ch.context = ctx;
	cc->ch.fd = p[0];
	cc->wfd = p[1];
	fake.counts.comp_channels++;
	return &cc->ch;
}

int
ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	struct fake_cc *cc = (struct fake_cc *)ch;
	if (cc->cqs)
		return EBUSY;	/* as libibverbs: a positive errno */
	while (cc->head) {
		struct fake_cq_event *e = cc->head;
		cc->head = e->next;
		free(e);
	}
	(void) close(cc->ch.fd);
	(void) close(cc->wfd);
	free(cc);
	fake.counts.comp_channels--;
	return 0;
}

int
ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
		void **cq_context)
{
	struct fake_cc *cc = (struct fake_cc *)ch;
	char b;
	ssize_t n = read(cc->ch.fd, &b, 1);
	if (n != 1) {
		if (n == 0)
			errno = EIO;
		return -1;
	}
	struct fake_cq_event *e = cc->head;
	if (e == NULL)
		fake_fail("a completion event byte without an event");
	cc->head = e->next;
	if (cc->head == NULL)
		cc->tail = NULL;
	e->cq->unacked++;
	*cq = &e->cq->cq;
	*cq_context = e->cq->cq.cq_context;
	free(e);
	return 0;
}

void
ibv_ack_cq_events(struct ibv_cq *ibcq, unsigned int n)
{
	struct fake_cq *cq = (struct fake_cq *)ibcq;
	if (n > cq->unacked)
		fake_fail("acknowledging %u CQ events of %u", n, cq->unacked);
	cq->unacked -= n;
}

/* ------------------------------------------- shared receive queues */

/*
 * This double has none (rpmad's shared RQs over verbs are tested on
 * Soft-RoCE, tests/rxe): making one fails as on a device without them.
 */
struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	(void) pd;
	(void) attr;
	errno = EOPNOTSUPP;
	return NULL;
}

int
ibv_destroy_srq(struct ibv_srq *srq)
{
	(void) srq;
	return EINVAL;	/* as libibverbs: a positive errno */
}

/* ------------------------------------------------- completion queues */

struct ibv_cq *
ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
		struct ibv_comp_channel *channel, int comp_vector)
{
	if (cqe <= 0 || cqe > 65536) {
		errno = EINVAL;
		return NULL;
	}
	struct fake_cq *cq = calloc(1, sizeof(*cq));
	if (cq)
		cq->cqes = calloc((size_t)cqe, sizeof(*cq->cqes));
	if (cq == NULL || cq->cqes == NULL) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->cq.context = ctx;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = cqe;
	cq->cap = cqe;
	if (channel)
		((struct fake_cc *)channel)->cqs++;
	fake.counts.cqs++;
	return &cq->cq;
}

int
ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct fake_cq *cq = (struct fake_cq *)ibcq;
	if (cq->qps)
		return EBUSY;	/* as libibverbs: a positive errno */
	if (cq->unacked)
		fake_fail("destroying a CQ with %u unacknowledged events (a "
				"real one waits forever)", cq->unacked);
	struct fake_cc *cc = (struct fake_cc *)ibcq->channel;
	if (cc) {
		/* its pending events go, with their bytes */
		for (struct fake_cq_event **pp = &cc->head; *pp;) {
			struct fake_cq_event *e = *pp;
			if (e->cq != cq) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			free(e);
			char b;
			if (read(cc->ch.fd, &b, 1) != 1)
				fake_fail("completion channel out of step");
		}
		cc->tail = NULL;
		for (struct fake_cq_event *e = cc->head; e; e = e->next)
			cc->tail = e;
		cc->cqs--;
	}
	free(cq->cqes);
	free(cq);
	fake.counts.cqs--;
	return 0;
}

/* ------------------------------------------------------------- strings */

const char *
ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const names[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
	};
	if ((unsigned)status < sizeof(names) / sizeof(names[0]) &&
			names[status])
		return names[status];
	return "unknown";
}

const char *
ibv_event_type_str(enum ibv_event_type event)
{
	switch (event) {
	case IBV_EVENT_DEVICE_FATAL:
		return "local catastrophic error";
	case IBV_EVENT_QP_FATAL:
		return "local work queue catastrophic error";
	case IBV_EVENT_QP_REQ_ERR:
		return "invalid request local work queue error";
	case IBV_EVENT_QP_ACCESS_ERR:
		return "local access violation work queue error";
	case IBV_EVENT_PORT_ERR:
		return "port error";
	case IBV_EVENT_PORT_ACTIVE:
		return "port active";
	default:
		return "unknown";
	}
}
