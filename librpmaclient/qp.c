// SPDX-License-Identifier: BSD-3-Clause
/*
 * qp.c -- mapping a shared queue pair and posting work requests to it
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "conn_cfg.h"
#include "fork.h"
#include "log_internal.h"
#include "qp.h"
#include "qp_wc.h"

/* Staging asked for per entry of a queue, at least and at most. */
#define STAGING_PER_ENTRY (1u << 20)
#define STAGING_LEAST (1u << 20)

/*
 * The staging to ask for a queue of `depth` entries: room for an entry of
 * a MiB each (pages are made only as they are used); none when
 * RPMA_STAGING is 0, which makes rpmad reach the application's memory for
 * every payload as it did before staging (to compare the two).
 */
static uint32_t
staging_wish(uint32_t depth)
{
	static int enabled = -1;
	if (enabled < 0) {
		const char *env = secure_getenv("RPMA_STAGING");
		enabled = !(env && strcmp(env, "0") == 0);
	}
	if (!enabled)
		return 0;
	uint64_t want = (uint64_t)depth * STAGING_PER_ENTRY;
	if (want < STAGING_LEAST)
		want = STAGING_LEAST;
	return want > QP_STAGING_MAX ? QP_STAGING_MAX : (uint32_t)want;
}

void
qp_sizes_from_cfg(const struct rpma_conn_cfg *cfg, struct qp_sizes *sizes)
{
	cfg = conn_cfg_or_default(cfg);
	sizes->sq = cfg->sq_size;
	sizes->rq = cfg->rq_size;
	sizes->cq = cfg->cq_size;
	sizes->rcq = cfg->rcq_size;
}

void
qp_staging_for(const struct qp_sizes *sizes, struct qp_staging *out)
{
	out->sq = staging_wish(sizes->sq);
	out->rq = staging_wish(sizes->rq);
}

static void
cq_init(struct rpma_cq *cq, struct qp *qp, bool is_rcq, int fd)
{
	cq->qp = qp;
	cq->is_rcq = is_rcq;
	cq->fd = fd;
	if (is_rcq)
		qp_ring_init(&cq->ring, qp->region, qp->layout.rcq_offset,
				qp->layout.rcq_entries, &qp->hdr->rcq);
	else
		qp_ring_init(&cq->ring, qp->region, qp->layout.cq_offset,
				qp->layout.cq_entries, &qp->hdr->cq);
	cq->armed = is_rcq ? &qp->hdr->rcq_armed : &qp->hdr->cq_armed;
	cq->head = atomic_load(&cq->ring.idx->head);
	cq->armed_by_us = true;	/* rpmad arms every queue at the start */
	cq->stale = 0;
	pthread_mutex_init(&cq->lock, NULL);
	pthread_mutex_init(&cq->wait_lock, NULL);
}

int
qp_new(struct broker_reply *reply, const struct qp_sizes *sizes,
		const struct qp_staging *asked, struct qp **qp_ptr)
{
	const Rpmad__QpReply *r = reply->resp->qp;
	unsigned want = qp_fd_count(sizes->rcq);
	if (reply->nfds != want || r->fd_count != want) {
		RLOG_ERROR("rpmad passed %u descriptors for a queue pair, "
				"expected %u", reply->nfds, want);
		return RPMA_E_PROVIDER;
	}

	struct qp *qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return RPMA_E_NOMEM;
	qp->doorbell_fd = qp->event_fd = qp->cq.fd = qp->rcq.fd = -1;
	qp->sizes = *sizes;

	if (qp_layout_compute(sizes, &qp->layout) ||
			qp->layout.size != r->region_size) {
		RLOG_ERROR("rpmad's queue pair region does not match the "
				"configuration");
		goto err;
	}
	/* staging only as much as asked for (an older rpmad grants none) */
	uint64_t sq_stage = r->staging_lkey ? r->sq_staging : 0;
	uint64_t rq_stage = r->staging_lkey ? r->rq_staging : 0;
	if (sq_stage > asked->sq || rq_stage > asked->rq) {
		RLOG_ERROR("rpmad granted more staging than was asked for");
		goto err;
	}
	qp->map_size = r->region_size + sq_stage + rq_stage;
	qp->region = mmap(NULL, qp->map_size, PROT_READ | PROT_WRITE,
			MAP_SHARED, reply->fds[QP_FD_REGION], 0);
	if (qp->region == MAP_FAILED) {
		qp->region = NULL;
		RLOG_ERROR("cannot map the queue pair region: %s",
				strerror(errno));
		goto err;
	}
	qp->region_size = r->region_size;
	qp->hdr = qp->region;
	/*
	 * A child of fork() gets no view of the rings: nothing it does can
	 * post into its parent's connection or take its completions
	 */
	(void) madvise(qp->region, qp->map_size, MADV_DONTFORK);
	qp->epoch = fork_epoch();
	if (qp_layout_check_header(qp->hdr, sizes, r->region_size)) {
		RLOG_ERROR("the queue pair region has an unexpected layout");
		goto err;
	}

	qp->generation = reply->generation;
	qp->conn_id = r->conn_id;
	qp->qp_num = r->qp_num;
	qp->doorbell_fd = broker_take_fd(reply, QP_FD_DOORBELL);
	qp->event_fd = broker_take_fd(reply, QP_FD_EVENT);
	qp_ring_init(&qp->sq, qp->region, qp->layout.sq_offset,
			qp->layout.sq_entries, &qp->hdr->sq);
	qp_ring_init(&qp->rq, qp->region, qp->layout.rq_offset,
			qp->layout.rq_entries, &qp->hdr->rq);
	qp->sq_tail = atomic_load(&qp->hdr->sq.tail);
	qp->rq_tail = atomic_load(&qp->hdr->rq.tail);
	atomic_init(&qp->sq_retired, qp->sq_tail);
	atomic_init(&qp->rq_done, qp->rq_tail);
	uint8_t *staging = (uint8_t *)qp->region + r->region_size;
	if (staging_init(&qp->sq_stage, staging, QP_STAGING_ADDR, sq_stage,
			r->staging_lkey, qp->layout.sq_entries) ||
			staging_init(&qp->rq_stage, staging + sq_stage,
				QP_STAGING_ADDR + sq_stage, rq_stage,
				r->staging_lkey, qp->layout.rq_entries)) {
		staging_fini(&qp->sq_stage);
		RLOG_ERROR("out of memory for a queue pair");
		goto err;
	}
	pthread_mutex_init(&qp->sq_lock, NULL);
	pthread_mutex_init(&qp->rq_lock, NULL);
	pthread_mutex_init(&qp->dead_lock, NULL);
	cq_init(&qp->cq, qp, false, broker_take_fd(reply, QP_FD_CQ));
	if (sizes->rcq) {
		qp->has_rcq = true;
		cq_init(&qp->rcq, qp, true, broker_take_fd(reply, QP_FD_RCQ));
	}
	*qp_ptr = qp;
	return 0;

err:
	if (qp->region)
		(void) munmap(qp->region, qp->map_size);
	free(qp);
	return RPMA_E_PROVIDER;
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		(void) close(*fd);
	*fd = -1;
}

void
qp_delete(struct qp **qp_ptr)
{
	struct qp *qp = *qp_ptr;
	if (qp == NULL)
		return;
	/*
	 * In a child of fork() the rings are not mapped (something else may
	 * be there now) and the descriptors are the child's to keep or close
	 */
	if (qp->epoch == fork_epoch()) {
		if (qp->region)
			(void) munmap(qp->region, qp->map_size);
		close_fd(&qp->doorbell_fd);
		close_fd(&qp->event_fd);
		close_fd(&qp->cq.fd);
		if (qp->has_rcq)
			close_fd(&qp->rcq.fd);
	}
	pthread_mutex_destroy(&qp->cq.lock);
	if (qp->has_rcq)
		pthread_mutex_destroy(&qp->rcq.lock);
	pthread_mutex_destroy(&qp->sq_lock);
	pthread_mutex_destroy(&qp->rq_lock);
	pthread_mutex_destroy(&qp->dead_lock);
	staging_fini(&qp->sq_stage);
	staging_fini(&qp->rq_stage);
	free(qp->flushed);
	free(qp->rflushed);
	free(qp);
	*qp_ptr = NULL;
}

static void
ring_doorbell(struct qp *qp)
{
	uint64_t one = 1;
	ssize_t n;
	do {
		n = write(qp->doorbell_fd, &one, sizeof(one));
	} while (n < 0 && errno == EINTR);
}

void
qp_cq_space_made(struct qp *qp)
{
	if (qp_wakeup_wanted(&qp->hdr->cq_space_wanted))
		ring_doorbell(qp);
}

/* Wakes rpmad's poller if it announced that it sleeps. */
static void
qp_doorbell(struct qp *qp)
{
	/* pairs with rpmad's request (need_wakeup) before its recheck */
	if (qp_wakeup_wanted(&qp->hdr->need_wakeup))
		ring_doorbell(qp);
}

static int
qp_usable(struct qp *qp)
{
	if (fork_inherited(qp->epoch, "posting work"))
		return 0;
	if (qp_is_dead(qp) || atomic_load_explicit(&qp->hdr->state,
			memory_order_acquire) == QP_STATE_ERROR) {
		RLOG_ERROR("the connection is broken or closed: nothing can be "
				"posted to it");
		return 0;
	}
	return 1;
}

/* work that stages nothing still gives back what completed before it */
static const struct stage_req no_staging;

int
qp_post_send(struct qp *qp, const struct qp_sqe *sqe,
		const struct stage_req *stage)
{
	if (!qp_usable(qp))
		return RPMA_E_PROVIDER;

	pthread_mutex_lock(&qp->sq_lock);
	uint32_t tail = qp->sq_tail;
	uint32_t retired = atomic_load_explicit(&qp->sq_retired,
			memory_order_acquire);
	if (tail - retired >= qp->sizes.sq) {
		pthread_mutex_unlock(&qp->sq_lock);
		RLOG_ERROR("the send queue is full (%u entries): collect "
				"completions first", qp->sizes.sq);
		return RPMA_E_PROVIDER;
	}
	/* staged, it names the staging bytes; else the application's memory */
	struct qp_sqe e = *sqe;
	(void) staging_take(&qp->sq_stage, tail, retired,
			stage ? stage : &no_staging, &e.lkey, &e.laddr);
	qp_ring_put(&qp->sq, &qp->sq_tail, &e, sizeof(e));
	pthread_mutex_unlock(&qp->sq_lock);

	qp_doorbell(qp);
	return 0;
}

int
qp_post_recv(struct qp *qp, const struct qp_rqe *rqe,
		const struct stage_req *stage)
{
	if (!qp_usable(qp))
		return RPMA_E_PROVIDER;
	/* as ibv_post_recv on a queue pair of a shared RQ */
	if (qp->srq_qp) {
		RLOG_ERROR("the connection takes its receives from a shared "
				"RQ: post them with rpma_srq_recv");
		return RPMA_E_PROVIDER;
	}

	pthread_mutex_lock(&qp->rq_lock);
	uint32_t tail = qp->rq_tail;
	uint32_t done = atomic_load_explicit(&qp->rq_done,
			memory_order_acquire);
	if (tail - done >= qp->sizes.rq) {
		pthread_mutex_unlock(&qp->rq_lock);
		RLOG_ERROR("the receive queue is full (%u entries)",
				qp->sizes.rq);
		return RPMA_E_PROVIDER;
	}
	struct qp_rqe e = *rqe;
	(void) staging_take(&qp->rq_stage, tail, done,
			stage ? stage : &no_staging, &e.lkey, &e.laddr);
	qp_ring_put(&qp->rq, &qp->rq_tail, &e, sizeof(e));
	pthread_mutex_unlock(&qp->rq_lock);

	qp_doorbell(qp);
	return 0;
}

/*
 * Advances *sq_from past SQ work and *rq_from past receives whose
 * completions sit unread in the ring of `cq`.
 */
static void
ring_pending(struct rpma_cq *cq, uint32_t *sq_from, uint32_t *rq_from)
{
	uint32_t n;
	if (qp_ring_avail(&cq->ring, cq->head, &n))
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct qp_cqe c;
		qp_ring_read(&cq->ring, cq->head + i, &c, sizeof(c));
		if (c.source == QP_CQE_FROM_SQ) {
			if ((int32_t)(c.sq_index + 1 - *sq_from) > 0)
				*sq_from = c.sq_index + 1;
		} else {
			(*rq_from)++;
		}
	}
}

void
qp_mark_dead(struct qp *qp)
{
	pthread_mutex_lock(&qp->dead_lock);
	if (qp_is_dead(qp))
		goto out;

	/* no more producers: stop both queues where they are */
	pthread_mutex_lock(&qp->cq.lock);
	if (qp->has_rcq)
		pthread_mutex_lock(&qp->rcq.lock);
	pthread_mutex_lock(&qp->sq_lock);
	pthread_mutex_lock(&qp->rq_lock);

	/* skip work whose completion is still waiting in a ring */
	uint32_t sq_from = atomic_load(&qp->sq_retired);
	uint32_t rq_from = atomic_load(&qp->rq_done);
	ring_pending(&qp->cq, &sq_from, &rq_from);
	if (qp->has_rcq)
		ring_pending(&qp->rcq, &sq_from, &rq_from);
	uint32_t sq_n = qp->sq_tail - sq_from;
	uint32_t rq_n = qp->rq_tail - rq_from;
	if (sq_n > qp->layout.sq_entries)
		sq_n = 0;
	if (rq_n > qp->layout.rq_entries)
		rq_n = 0;

	/* completions still in the rings come first; these follow them */
	struct qp_cqe *sq_cqes = calloc(sq_n + rq_n + 1, sizeof(*sq_cqes));
	struct qp_cqe *rq_cqes = qp->has_rcq ?
			calloc(rq_n + 1, sizeof(*rq_cqes)) : NULL;
	if (sq_cqes == NULL || (qp->has_rcq && rq_cqes == NULL)) {
		RLOG_ERROR("out of memory while flushing a broken connection");
		free(sq_cqes);
		free(rq_cqes);
		sq_n = rq_n = 0;
		sq_cqes = rq_cqes = NULL;
	}

	uint32_t n = 0;
	for (uint32_t i = 0; i < sq_n; i++) {
		const struct qp_sqe *e = qp_sq_slot(qp->region, &qp->layout,
				sq_from + i);
		sq_cqes[n++] = (struct qp_cqe){
			.wr_id = e->wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = qp_sq_wc_opcode(e->opcode),
			.sq_index = sq_from + i,
			.source = QP_CQE_FROM_SQ,
		};
	}
	struct qp_cqe *rdst = qp->has_rcq ? rq_cqes : sq_cqes;
	uint32_t rn = qp->has_rcq ? 0 : n;
	for (uint32_t i = 0; i < rq_n; i++) {
		const struct qp_rqe *e = qp_rq_slot(qp->region, &qp->layout,
				rq_from + i);
		rdst[rn++] = (struct qp_cqe){
			.wr_id = e->wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.source = QP_CQE_FROM_RQ,
		};
	}
	if (qp->has_rcq) {
		qp->flushed = sq_cqes;
		qp->nflushed = n;
		qp->rflushed = rq_cqes;
		qp->nrflushed = rn;
	} else {
		qp->flushed = sq_cqes;
		qp->nflushed = rn;
	}
	/* nothing may be posted from now on */
	qp->sizes.sq = qp->sizes.rq = 0;

	pthread_mutex_unlock(&qp->rq_lock);
	pthread_mutex_unlock(&qp->sq_lock);
	if (qp->has_rcq)
		pthread_mutex_unlock(&qp->rcq.lock);
	pthread_mutex_unlock(&qp->cq.lock);
	atomic_store_explicit(&qp->dead, true, memory_order_release);
	RLOG_WARNING("rpmad's side of connection (qp %u) is gone; %u "
			"outstanding work requests flushed", qp->qp_num,
			sq_n + rq_n);
out:
	pthread_mutex_unlock(&qp->dead_lock);
}
