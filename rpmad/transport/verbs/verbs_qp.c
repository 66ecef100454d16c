// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_qp.c -- a connection's queue pair on an RDMA device: work from
 * the shared SQ becomes ibv_post_send, receives from the shared RQ go to
 * the device as soon as the client posts them, and work completions come
 * back to the core in order
 *
 * Completions: only signaled work (and failed work) makes a work
 * completion, and an RC send queue completes in order, so a completion of
 * work n means everything posted before n is done: those complete as
 * successes first. After an error, everything still held is flushed here
 * (the device's own flush completions then find nothing and are dropped).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <utlist.h>

#include "daemon.h"
#include "device.h"
#include "log.h"
#include "mr.h"
#include "peer.h"
#include "qp.h"
#include "verbs_internal.h"

/* Work completions taken per ibv_poll_cq. */
#define POLL_BATCH 16

static struct verbs_conn *polled;	/* every connection with a QP */
static bool poller_added;

/* ------------------------------------------------------------- receives */

static void
recv_complete(struct verbs_conn *vc, struct recv_slot *rs,
		enum ibv_wc_status status, const struct ibv_wc *wc)
{
	if (status != IBV_WC_SUCCESS || wc == NULL) {
		conn_recv_done(vc->conn, rs, status, 0, IBV_WC_RECV, false, 0);
		return;
	}
	bool imm = wc->wc_flags & IBV_WC_WITH_IMM;
	enum ibv_wc_opcode op = wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM ?
		IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	conn_recv_done(vc->conn, rs, IBV_WC_SUCCESS, wc->byte_len, op, imm,
			imm ? wc->imm_data : 0);
}

/* Completes every receive the device holds with IBV_WC_WR_FLUSH_ERR. */
static void
recvs_flush(struct verbs_conn *vc)
{
	while (vc->recv_done != vc->recv_posted) {
		struct recv_slot *rs = &vc->recvs[vc->recv_done %
				vc->max_recv_wr];
		vc->recv_done++;
		recv_complete(vc, rs, IBV_WC_WR_FLUSH_ERR, NULL);
	}
}

/* Hands the client's posted receives to the device, while it has room. */
static void
recvs_post(struct verbs_conn *vc)
{
	struct conn *conn = vc->conn;
	if (conn == NULL || vc->qp == NULL || vc->qp_failed ||
			vc->state == VC_OVER || conn->qp_error)
		return;
	while (vc->recv_posted - vc->recv_done < vc->max_recv_wr) {
		struct recv_slot *rs = &vc->recvs[vc->recv_posted %
				vc->max_recv_wr];
		/* the length is checked by the device when a message lands */
		int ret = conn_take_recv(conn, 0, rs);
		if (ret == -EAGAIN)
			return;	/* the core calls again when there are more */
		if (ret) {
			/* a bad one (completed by the core) fails the QP */
			verbs_qp_failed(vc);
			return;
		}

		struct ibv_sge sge = { 0 };
		struct ibv_recv_wr wr = {
			.wr_id = vc->recv_posted,
			.sg_list = &sge,
		};
		if (rs->mr) {
			sge.addr = verbs_mr_iova(rs->mr, rs->buf);
			sge.length = rs->length;
			sge.lkey = verbs_mr_lkey(rs->mr);
			wr.num_sge = 1;
		}
		struct ibv_recv_wr *bad = NULL;
		ret = ibv_post_recv(vc->qp, &wr, &bad);
		if (ret) {
			log_warning("verbs: connection qp %u: ibv_post_recv: "
					"%s", conn->qp_num, strerror(ret));
			verbs_qp_failed(vc);
			recv_complete(vc, rs, IBV_WC_WR_FLUSH_ERR, NULL);
			return;
		}
		vc->recv_posted++;
	}
}

void
verbs_recv_posted(struct conn *conn)
{
	struct verbs_conn *vc = conn->tp_conn;
	if (vc)
		recvs_post(vc);
}

static void
recv_wc(struct verbs_conn *vc, const struct ibv_wc *wc)
{
	/* gone already: flushed by us after an earlier error */
	if (wc->wr_id < vc->recv_done || wc->wr_id >= vc->recv_posted)
		return;
	/* a receive queue completes in order: nothing is skipped */
	while (vc->recv_done != wc->wr_id) {
		struct recv_slot *rs = &vc->recvs[vc->recv_done %
				vc->max_recv_wr];
		vc->recv_done++;
		recv_complete(vc, rs, IBV_WC_WR_FLUSH_ERR, NULL);
	}
	struct recv_slot *rs = &vc->recvs[vc->recv_done % vc->max_recv_wr];
	vc->recv_done++;
	recv_complete(vc, rs, wc->status, wc);
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			log_info("verbs: connection qp %u: a receive failed: "
					"%s", vc->conn->qp_num,
					ibv_wc_status_str(wc->status));
		verbs_qp_failed(vc);
	}
}

/* ----------------------------------------------------------------- work */

static void
out_push(struct verbs_conn *vc, struct work *w)
{
	w->next = NULL;
	if (vc->out_tail)
		vc->out_tail->next = w;
	else
		vc->out_head = w;
	vc->out_tail = w;
	vc->sends_out++;
}

static struct work *
out_pop(struct verbs_conn *vc)
{
	struct work *w = vc->out_head;
	if (w) {
		vc->out_head = w->next;
		if (vc->out_head == NULL)
			vc->out_tail = NULL;
		w->next = NULL;
		vc->sends_out--;
	}
	return w;
}

void
verbs_qp_failed(struct verbs_conn *vc)
{
	if (vc->qp_failed || vc->conn == NULL || vc->state == VC_OVER)
		return;
	vc->qp_failed = true;
	/* the device must stop touching the buffers before they are flushed */
	if (vc->qp) {
		struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
		(void) ibv_modify_qp(vc->qp, &attr, IBV_QP_STATE);
	}
	struct work *w;
	while ((w = out_pop(vc)) != NULL)
		conn_work_done(vc->conn, w, IBV_WC_WR_FLUSH_ERR);
	recvs_flush(vc);
	conn_qp_error(vc->conn);
}

/*
 * Whether a failed work request says the way to the peer is gone, rather
 * than that the work itself was bad (a key, a length, an access: those
 * fail the queue pair as on the software transport, nothing more): the
 * device gave up retrying, or could not send at all (rxe when its link is
 * down), or failed.
 */
static bool
path_failed(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_LOC_QP_OP_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
	case IBV_WC_FATAL_ERR:
	case IBV_WC_GENERAL_ERR:
		return true;
	default:
		return false;
	}
}

static void
send_wc(struct verbs_conn *vc, const struct ibv_wc *wc)
{
	struct work *w;
	/* unsignaled work before it is done: a later completion says so */
	while ((w = vc->out_head) != NULL && w->tp_seq < wc->wr_id)
		conn_work_done(vc->conn, out_pop(vc), IBV_WC_SUCCESS);
	if ((w = vc->out_head) != NULL && w->tp_seq == wc->wr_id)
		conn_work_done(vc->conn, out_pop(vc), wc->status);
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			log_info("verbs: connection qp %u: work failed: %s "
					"(vendor error 0x%x)", vc->conn->qp_num,
					ibv_wc_status_str(wc->status),
					wc->vendor_err);
		verbs_qp_failed(vc);
		if (path_failed(wc->status))
			verbs_conn_lost(vc);
	}
}

/* Fills the local part of a work request. */
static void
set_local(struct ibv_sge *sge, struct ibv_send_wr *wr, const struct work *w)
{
	if (w->lmr == NULL || w->length == 0)
		return;
	sge->addr = verbs_mr_iova(w->lmr, w->local);
	sge->length = w->length;
	sge->lkey = verbs_mr_lkey(w->lmr);
	wr->num_sge = 1;
}

/* Something other than a full queue: the queue pair is unusable. */
static void
post_failed(struct verbs_conn *vc, struct work *w, int err)
{
	log_warning("verbs: connection qp %u: ibv_post_send: %s",
			vc->conn->qp_num, strerror(err));
	(void) verbs_qp_poll(vc);
	verbs_qp_failed(vc);
	conn_work_done(vc->conn, w, IBV_WC_WR_FLUSH_ERR);
}

int
verbs_post(struct conn *conn, struct work *w)
{
	struct verbs_conn *vc = conn->tp_conn;
	if (vc == NULL || vc->qp == NULL)
		return -EAGAIN;
	if (vc->qp_failed) {
		/* everything before it was flushed already */
		conn_work_done(conn, w, IBV_WC_WR_FLUSH_ERR);
		return 0;
	}
	if (vc->sends_out >= vc->max_send_wr)
		return -EAGAIN;

	struct ibv_sge sge = { 0 };
	struct ibv_send_wr wr = {
		.wr_id = vc->next_wr_id + 1,
		.sg_list = &sge,
		.send_flags = w->signaled ? IBV_SEND_SIGNALED : 0,
	};
	wr.wr.rdma.remote_addr = w->raddr;
	wr.wr.rdma.rkey = w->rkey;
	switch (w->opcode) {
	case QP_OP_READ:
		wr.opcode = IBV_WR_RDMA_READ;
		set_local(&sge, &wr, w);
		break;
	case QP_OP_WRITE:
		wr.opcode = IBV_WR_RDMA_WRITE;
		set_local(&sge, &wr, w);
		break;
	case QP_OP_WRITE_IMM:
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = w->imm;
		set_local(&sge, &wr, w);
		break;
	case QP_OP_ATOMIC_WRITE:
		/* librpma 0.12: an 8-byte write after everything before it */
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags |= IBV_SEND_FENCE;
		set_local(&sge, &wr, w);
		break;
	case QP_OP_FLUSH:
		/*
		 * librpma's method: reading from the range returns only after
		 * the writes before it reached the target's memory. A range
		 * shorter than the read reads only the range (no overrun).
		 */
		wr.opcode = IBV_WR_RDMA_READ;
		sge.addr = (uintptr_t)vc->flush_buf;
		sge.length = w->length && w->length < VERBS_FLUSH_READ_LEN ?
			w->length : VERBS_FLUSH_READ_LEN;
		sge.lkey = vc->flush_mr->lkey;
		wr.num_sge = 1;
		break;
	case QP_OP_SEND:
		wr.opcode = IBV_WR_SEND;
		set_local(&sge, &wr, w);
		break;
	case QP_OP_SEND_IMM:
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = w->imm;
		set_local(&sge, &wr, w);
		break;
	default:
		/* the core validated the opcode */
		conn_work_done(conn, w, IBV_WC_LOC_QP_OP_ERR);
		return 0;
	}

	struct ibv_send_wr *bad = NULL;
	int ret = ibv_post_send(vc->qp, &wr, &bad);
	if (ret == ENOMEM)
		return -EAGAIN;
	if (ret) {
		post_failed(vc, w, ret);
		return 0;
	}
	vc->next_wr_id++;
	w->tp_seq = wr.wr_id;
	out_push(vc, w);
	return 0;
}

/* ------------------------------------------------------------ completions */

static int
poll_cq(struct verbs_conn *vc, struct ibv_cq *cq, bool recv)
{
	int n = 0;
	struct ibv_wc wc[POLL_BATCH];
	for (;;) {
		/* the connection may end inside the loop (failure) */
		if (vc->state == VC_OVER)
			break;
		int got = ibv_poll_cq(cq, POLL_BATCH, wc);
		if (got < 0) {
			log_warning("verbs: connection qp %u: ibv_poll_cq "
					"failed", vc->conn->qp_num);
			verbs_qp_failed(vc);
			break;
		}
		for (int i = 0; i < got; i++) {
			if (recv)
				recv_wc(vc, &wc[i]);
			else
				send_wc(vc, &wc[i]);
		}
		n += got;
		if (got < POLL_BATCH)
			break;
	}
	return n;
}

int
verbs_qp_poll(struct verbs_conn *vc)
{
	if (vc->qp == NULL || vc->conn == NULL || vc->state == VC_OVER)
		return 0;
	int n = poll_cq(vc, vc->send_cq, false);
	int r = poll_cq(vc, vc->recv_cq, true);
	/* receive slots were freed: the client's next ones may go */
	if (r)
		recvs_post(vc);
	return n + r;
}

static void
arm(struct verbs_conn *vc)
{
	(void) ibv_req_notify_cq(vc->send_cq, 0);
	(void) ibv_req_notify_cq(vc->recv_cq, 0);
}

static void
channel_ready(struct loop_watch *w, uint32_t events)
{
	struct verbs_conn *vc = w->arg;
	struct ibv_cq *cq;
	void *ctx;
	while (ibv_get_cq_event(vc->channel, &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		(void) ibv_req_notify_cq(cq, 0);
	}
	(void) verbs_qp_poll(vc);
	loop_kick(rpmad.loop);
}

static int
poll_all(void *arg)
{
	int work = 0;
	struct verbs_conn *vc, *tmp;
	DL_FOREACH_SAFE(polled, vc, tmp)
		work += verbs_qp_poll(vc);
	return work;
}

/* Armed, then looked at once more: nothing completes unnoticed. */
static int
prepare_sleep_all(void *arg)
{
	struct verbs_conn *vc;
	DL_FOREACH(polled, vc)
		arm(vc);
	return poll_all(arg);
}

static void
wake_all(void *arg)
{
}

static struct loop_poller qp_poller = {
	.poll = poll_all,
	.prepare_sleep = prepare_sleep_all,
	.wake = wake_all,
};

void
verbs_qp_init(void)
{
	if (poller_added)
		return;
	loop_poller_add(rpmad.loop, &qp_poller);
	poller_added = true;
}

/* ------------------------------------------------------- create, destroy */

static uint32_t
clamp(uint32_t want, int most)
{
	if (want == 0)
		want = 1;
	if (most > 0 && want > (uint32_t)most)
		want = (uint32_t)most;
	return want;
}

int
verbs_qp_create(struct verbs_conn *vc, struct peer *peer, char *err,
		size_t errlen)
{
	struct conn *conn = vc->conn;
	struct verbs_dev *vd = verbs_dev_of_peer(peer);
	struct ibv_context *ctx = vc->id->verbs;
	if (vd == NULL || ctx != vd->ctx) {
		(void) snprintf(err, errlen, "the connection goes through RDMA "
				"device %s, the peer's device is %s",
				ctx ? ibv_get_device_name(ctx->device) : "none",
				peer->dev->name);
		return -EINVAL;
	}
	vc->vdev = vd;

	struct ibv_device_attr attr;
	memset(&attr, 0, sizeof(attr));
	(void) ibv_query_device(ctx, &attr);
	/* the core hands over at most a ring's worth: the device takes it */
	vc->max_send_wr = clamp(conn->qp.layout.sq_entries, attr.max_qp_wr);
	vc->max_recv_wr = clamp(conn->qp.layout.rq_entries, attr.max_qp_wr);
	uint32_t send_cqe = clamp(vc->max_send_wr, attr.max_cqe);
	uint32_t recv_cqe = clamp(vc->max_recv_wr, attr.max_cqe);

	const char *call;
	vc->recvs = calloc(vc->max_recv_wr, sizeof(*vc->recvs));
	vc->flush_buf = calloc(1, 64);
	if (vc->recvs == NULL || vc->flush_buf == NULL) {
		errno = ENOMEM;
		call = "calloc";
		goto err;
	}
	call = "ibv_reg_mr";
	vc->flush_mr = ibv_reg_mr(peer->tp_pd, vc->flush_buf,
			VERBS_FLUSH_READ_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (vc->flush_mr == NULL)
		goto err;
	call = "ibv_create_comp_channel";
	vc->channel = ibv_create_comp_channel(ctx);
	if (vc->channel == NULL)
		goto err;
	int flags = fcntl(vc->channel->fd, F_GETFL);
	call = "fcntl";
	if (flags < 0 || fcntl(vc->channel->fd, F_SETFL, flags | O_NONBLOCK))
		goto err;
	call = "ibv_create_cq";
	vc->send_cq = ibv_create_cq(ctx, (int)send_cqe, vc, vc->channel, 0);
	if (vc->send_cq == NULL)
		goto err;
	vc->recv_cq = ibv_create_cq(ctx, (int)recv_cqe, vc, vc->channel, 0);
	if (vc->recv_cq == NULL)
		goto err;

	struct ibv_qp_init_attr init = {
		.qp_context = vc,
		.send_cq = vc->send_cq,
		.recv_cq = vc->recv_cq,
		.cap = {
			.max_send_wr = vc->max_send_wr,
			.max_recv_wr = vc->max_recv_wr,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
	};
	call = "rdma_create_qp";
	if (rdma_create_qp(vc->id, peer->tp_pd, &init))
		goto err;
	vc->qp = vc->id->qp;

	vc->channel_watch.fd = vc->channel->fd;
	vc->channel_watch.fn = channel_ready;
	vc->channel_watch.arg = vc;
	call = "loop_add";
	if (loop_add(rpmad.loop, &vc->channel_watch, EPOLLIN)) {
		errno = EIO;
		goto err;
	}
	arm(vc);
	DL_APPEND(polled, vc);
	vc->polled = true;
	/* receives the client posted early go to the device now */
	recvs_post(vc);
	return 0;

err:;
	int e = errno ? errno : EIO;
	(void) snprintf(err, errlen, "%s: %s", call, strerror(e));
	verbs_qp_destroy(vc);
	return -e;
}

void
verbs_qp_destroy(struct verbs_conn *vc)
{
	if (vc->channel_watch.added)
		loop_del(rpmad.loop, &vc->channel_watch);
	if (vc->polled)
		DL_DELETE(polled, vc);
	vc->polled = false;
	if (vc->qp) {
		rdma_destroy_qp(vc->id);
		vc->qp = NULL;
	}
	/* the device holds nothing now: the receives it held are flushed */
	if (vc->recvs && vc->conn)
		recvs_flush(vc);
	/* the core flushes the work (release) */
	vc->out_head = vc->out_tail = NULL;
	vc->sends_out = 0;
	if (vc->send_cq && ibv_destroy_cq(vc->send_cq))
		log_warning("verbs: ibv_destroy_cq: %s", strerror(errno));
	if (vc->recv_cq && ibv_destroy_cq(vc->recv_cq))
		log_warning("verbs: ibv_destroy_cq: %s", strerror(errno));
	vc->send_cq = vc->recv_cq = NULL;
	if (vc->channel && ibv_destroy_comp_channel(vc->channel))
		log_warning("verbs: ibv_destroy_comp_channel: %s",
				strerror(errno));
	vc->channel = NULL;
	if (vc->flush_mr)
		(void) ibv_dereg_mr(vc->flush_mr);
	vc->flush_mr = NULL;
	free(vc->flush_buf);
	vc->flush_buf = NULL;
	free(vc->recvs);
	vc->recvs = NULL;
}
