// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_qp.c -- a connection's queue pair on its RDMA device: made on the
 * connection's CM id with its own send and receive completion queues on a
 * completion channel the loop watches; while the loop spins the queues are
 * polled (one poller for every queue pair), before it sleeps they are
 * armed; destroyed with everything it had
 *
 * What the completions mean is the data path's (verbs_work.c), which this
 * file calls whenever the device may have completed something.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <utlist.h>

#include "verbs/verbs.h"

static struct verbs_conn *polled;	/* every connection with a QP */
static bool poller_added;

/* ------------------------------------------------------------ watching */

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
	(void) verbs_work_poll(vc);
	loop_kick(verbs_env->loop);
}

static int
poll_all(void *arg)
{
	int work = 0;
	struct verbs_conn *vc, *tmp;
	DL_FOREACH_SAFE(polled, vc, tmp)
		work += verbs_work_poll(vc);
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
	loop_poller_add(verbs_env->loop, &qp_poller);
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
		(void) snprintf(err, errlen,
				"the connection goes through RDMA "
				"device %s, the peer's device is %s",
				verbs_dev_ctx_name(ctx),
				device_name(peer_device(peer)));
		return -EINVAL;
	}
	vc->vdev = vd;

	struct ibv_device_attr attr;
	memset(&attr, 0, sizeof(attr));
	(void) ibv_query_device(ctx, &attr);
	/* the core hands over at most a ring's worth: the device takes it */
	const struct qp_layout *layout = conn_qp_layout(conn);
	vc->max_send_wr = clamp(layout->sq_entries, attr.max_qp_wr);
	vc->max_recv_wr = clamp(layout->rq_entries, attr.max_qp_wr);
	uint32_t send_cqe = clamp(vc->max_send_wr, attr.max_cqe);
	uint32_t recv_cqe = clamp(vc->max_recv_wr, attr.max_cqe);

	const char *call;
	vc->flush_buf = calloc(1, 64);
	if (vc->flush_buf == NULL) {
		errno = ENOMEM;
		call = "calloc";
		goto err;
	}
	call = "ibv_reg_mr";
	vc->flush_mr = ibv_reg_mr(peer_tp(peer), vc->flush_buf,
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
	/* 1.x: its receives come from the shared RQ's queue (verbs_srq.c) */
	struct srq *srq = conn_srq(conn);
	if (srq) {
		init.srq = srq_tp(srq);
		init.cap.max_recv_wr = 0;
		init.cap.max_recv_sge = 0;
	}
	call = "rdma_create_qp";
	if (rdma_create_qp(vc->id, peer_tp(peer), &init))
		goto err;
	vc->qp = vc->id->qp;

	vc->channel_watch.fd = vc->channel->fd;
	vc->channel_watch.fn = channel_ready;
	vc->channel_watch.arg = vc;
	call = "loop_add";
	if (loop_add(verbs_env->loop, &vc->channel_watch, EPOLLIN)) {
		errno = EIO;
		goto err;
	}
	arm(vc);
	DL_APPEND(polled, vc);
	vc->polled = true;
	/* receives the client posted early go to the device now */
	verbs_work_post_recvs(vc);
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
		loop_del(verbs_env->loop, &vc->channel_watch);
	if (vc->polled)
		DL_DELETE(polled, vc);
	vc->polled = false;
	if (vc->qp) {
		rdma_destroy_qp(vc->id);
		vc->qp = NULL;
	}
	/* the device holds nothing now: the receives it held are flushed */
	if (vc->conn)
		conn_recv_flush(vc->conn);
	/* libibverbs answers these with a positive errno */
	int ret;
	if (vc->send_cq && (ret = -ibv_destroy_cq(vc->send_cq)))
		log_warning("verbs: ibv_destroy_cq: %s", strerror(-ret));
	if (vc->recv_cq && (ret = -ibv_destroy_cq(vc->recv_cq)))
		log_warning("verbs: ibv_destroy_cq: %s", strerror(-ret));
	vc->send_cq = vc->recv_cq = NULL;
	if (vc->channel && (ret = -ibv_destroy_comp_channel(vc->channel)))
		log_warning("verbs: ibv_destroy_comp_channel: %s",
				strerror(-ret));
	vc->channel = NULL;
	if (vc->flush_mr)
		(void) ibv_dereg_mr(vc->flush_mr);
	vc->flush_mr = NULL;
	free(vc->flush_buf);
	vc->flush_buf = NULL;
}
