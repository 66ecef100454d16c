// SPDX-License-Identifier: BSD-3-Clause
/*
 * cq.c -- completion queues: rpma_cq_get_fd, rpma_cq_wait, rpma_cq_get_wc
 */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#include "fork.h"
#include "log_internal.h"
#include "qp.h"

/* How often an empty poll checks that rpmad still serves the queue. */
#define LIVENESS_CHECK_NS (10 * 1000 * 1000)
/* How long rpma_cq_wait looks for a completion before it sleeps. */
#define DEFAULT_WAIT_SPIN_US 50
/*
 * Empty polls, with work outstanding and rpmad's progress counter standing
 * still, after which rpma_cq_get_wc gives the CPU away once. Measured with
 * bench/rpma-bench on 2 cores: 64 made busy polling 1.3-1.6 times slower
 * than blocking waits across two rpmads, 8 as fast.
 */
#define STALLED_POLLS_BEFORE_YIELD 8

static uint64_t
now_coarse_ns(void)
{
	struct timespec ts;
	(void) clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
now_fine_ns(void)
{
	struct timespec ts;
	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Made-up completions of a dead queue pair that this CQ still owes. */
static uint32_t
flushed_left(const struct rpma_cq *cq)
{
	const struct qp *qp = cq->qp;
	return cq->is_rcq ? qp->nrflushed - qp->rflushed_pos :
		qp->nflushed - qp->flushed_pos;
}

static int
cq_has_work(struct rpma_cq *cq)
{
	/* without cq->lock: the head as the last collector published it */
	uint32_t tail = atomic_load_explicit(&cq->ring.idx->tail,
			memory_order_acquire);
	uint32_t head = atomic_load_explicit(&cq->ring.idx->head,
			memory_order_relaxed);
	if (tail != head)
		return 1;
	return qp_is_dead(cq->qp) && flushed_left(cq) > 0;
}

/*
 * Reads the old bytes that have arrived, without blocking (see
 * rpma_cq.stale). Marks the queue pair dead when the socket reached its end
 * (rpmad's side is gone).
 */
static void
drain_stale(struct rpma_cq *cq)
{
	while (cq->stale > 0) {
		char buf[8];
		size_t want = cq->stale < sizeof(buf) ? cq->stale : sizeof(buf);
		ssize_t n = recv(cq->fd, buf, want, MSG_DONTWAIT);
		if (n > 0) {
			cq->stale -= (unsigned)n;
			continue;
		}
		if (n == 0)
			qp_mark_dead(cq->qp);
		else if (errno == EINTR)
			continue;
		return;
	}
}

/*
 * rpma_cq_wait returns with a completion at hand: withdraw our arming so
 * that rpmad sends no byte for it. If rpmad used it already, its byte is
 * on its way (or here) and is old for the next wait.
 */
static void
disarm(struct rpma_cq *cq)
{
	if (!cq->armed_by_us)
		return;
	cq->armed_by_us = false;
	if (qp_wakeup_withdraw(cq->armed))
		return;
	cq->stale++;
	drain_stale(cq);
}

int
rpma_cq_get_fd(const struct rpma_cq *cq, int *fd)
{
	if (cq == NULL || fd == NULL)
		return RPMA_E_INVAL;

	*fd = cq->shared_channel ? cq->channel_fd : cq->fd;
	return 0;
}

/* The spin time of rpma_cq_wait: RPMA_WAIT_SPIN_US, else the default. */
static uint64_t
wait_spin_ns(void)
{
	static _Atomic int64_t cached = -1;
	int64_t ns = atomic_load_explicit(&cached, memory_order_relaxed);
	if (ns < 0) {
		/* not in a program that gained privileges; strtol's ERANGE
		 * is not the application's errno */
		int saved = errno;
		const char *env = secure_getenv("RPMA_WAIT_SPIN_US");
		long us = env && *env ? strtol(env, NULL, 10) :
			DEFAULT_WAIT_SPIN_US;
		errno = saved;
		ns = us > 0 && us < 1000000 ? us * 1000 : 0;
		atomic_store_explicit(&cached, ns, memory_order_relaxed);
	}
	return (uint64_t)ns;
}

/*
 * While the application waits, the receive a large message is filling is
 * copied out of the staging as far as rpmad has filled it (qp_region.h,
 * rq_filled): the copy overlaps the message's arrival, and its completion
 * has only the last piece left to copy. Only the queue that collects the
 * connection's receive completions does it (its lock is held).
 */
static void
copy_ahead(struct rpma_cq *cq)
{
	struct qp *qp = cq->qp;
	if (cq != (qp->has_rcq ? &qp->rcq : &qp->cq) || qp->srq_qp ||
			qp->rq_stage.size == 0)
		return;
	uint64_t f = atomic_load_explicit(&qp->hdr->rq_filled,
			memory_order_acquire);
	uint32_t index = (uint32_t) (f >> 32), filled = (uint32_t) f;
	if (filled == 0)
		return;
	uint32_t done = atomic_load_explicit(&qp->rq_done,
			memory_order_relaxed);
	/* the entry and its staging are published with the ring's tail */
	uint32_t posted = atomic_load_explicit(&qp->rq.idx->tail,
			memory_order_acquire);
	/* a receive posted and not collected; else stale (or made up) */
	if (index - done >= posted - done)
		return;
	staging_deliver(&qp->rq_stage, index, filled);
}

/*
 * While rpmad's poller is awake an answer is on its way: look for it a
 * little while, yielding the CPU (there may be fewer cores than busy
 * processes), before paying for a sleep and a wake-up. Not when rpmad
 * said our work waits behind other tenants' slices: spinning then only
 * takes a CPU from rpmad and the others (on two cores, spinning waiters
 * beside a bulk writer made a wait's p99 4 ms instead of 0.3-0.6 ms).
 * Returns 1 when a completion came.
 */
static int
spin_for_work(struct rpma_cq *cq)
{
	uint64_t spin = wait_spin_ns();
	const struct qp_region_header *hdr = cq->qp->hdr;
	if (spin == 0 || atomic_load_explicit(&hdr->contended,
			memory_order_relaxed))
		return 0;
	uint64_t end = now_fine_ns() + spin;
	while (!atomic_load_explicit(&hdr->need_wakeup, memory_order_relaxed)) {
		if (cq_has_work(cq))
			return 1;
		/* unless a thread collects meanwhile */
		if (pthread_mutex_trylock(&cq->lock) == 0) {
			copy_ahead(cq);
			pthread_mutex_unlock(&cq->lock);
		}
		if (now_fine_ns() >= end)
			break;
		(void) sched_yield();
	}
	return cq_has_work(cq);
}

/*
 * Returns 0 with a completion waiting to be collected (unless another
 * thread collected it first): an old notification byte never ends a wait,
 * since programs read rpma_cq_get_wc's results right after it.
 */
static int
wait_locked(struct rpma_cq *cq)
{
	for (;;) {
		drain_stale(cq);
		if (cq_has_work(cq)) {
			disarm(cq);
			return 0;
		}
		if (qp_is_dead(cq->qp)) {
			RLOG_ERROR("no completion will ever come: rpmad's side "
					"of the connection is gone");
			return RPMA_E_PROVIDER;
		}
		if (spin_for_work(cq))
			continue;

		/*
		 * arm, then look again: a completion may have just come. An
		 * arming of ours still stands, or rpmad took it and its byte
		 * is on the way: nothing to order then.
		 */
		if (!cq->armed_by_us) {
			qp_wakeup_request(cq->armed);
			cq->armed_by_us = true;
		}
		if (cq_has_work(cq))
			continue;

		char byte;
		ssize_t n = recv(cq->fd, &byte, 1, 0);
		if (n == 1) {
			/* an old byte: wait on; else rpmad used our arming */
			if (cq->stale > 0)
				cq->stale--;
			else
				cq->armed_by_us = false;
			continue;
		}
		if (n == 0) {
			qp_mark_dead(cq->qp);
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return RPMA_E_NO_COMPLETION;
		RLOG_ERROR("waiting on the completion fd: %s", strerror(errno));
		return RPMA_E_PROVIDER;
	}
}

int
rpma_cq_wait(struct rpma_cq *cq)
{
	if (cq == NULL)
		return RPMA_E_INVAL;
	/* 1.x: its connection waits for both queues (rpma_conn_wait) */
	if (cq->shared_channel)
		return RPMA_E_SHARED_CHANNEL;
	if (fork_inherited(cq->qp->epoch, "rpma_cq_wait"))
		return RPMA_E_PROVIDER;

	pthread_mutex_lock(&cq->wait_lock);
	int ret = wait_locked(cq);
	pthread_mutex_unlock(&cq->wait_lock);
	return ret;
}

/*
 * The shared completion channel (1.x): both queues of the connection stay
 * armed, as native librpma arms its queues when it makes them and re-arms
 * the one rpma_conn_wait returns, so that the channel's descriptor (an
 * epoll set of both queues' sockets) becomes readable for a program that
 * polls it before it waits.
 */
void
cq_arm_shared(struct rpma_cq *cq)
{
	if (cq->armed_by_us)
		return;
	qp_wakeup_request(cq->armed);
	cq->armed_by_us = true;
}

/* Takes the byte a queue's socket has, if any. */
static int
take_byte(struct rpma_cq *cq)
{
	char byte;
	ssize_t n = recv(cq->fd, &byte, 1, MSG_DONTWAIT);
	if (n == 1) {
		/* an old byte; else rpmad used our arming */
		if (cq->stale > 0)
			cq->stale--;
		else
			cq->armed_by_us = false;
		return 0;
	}
	if (n == 0) {
		qp_mark_dead(cq->qp);
		return 0;
	}
	if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
		return 0;
	RLOG_ERROR("waiting on the completion fd: %s", strerror(errno));
	return RPMA_E_PROVIDER;
}

int
cq_wait_shared(struct rpma_cq *const cqs[], int n, int epfd,
		struct rpma_cq **which)
{
	int fl = fcntl(epfd, F_GETFL);
	bool nonblock = fl >= 0 && (fl & O_NONBLOCK);
	for (;;) {
		bool armed_now = false;
		for (int i = 0; i < n; i++) {
			drain_stale(cqs[i]);
			if (cq_has_work(cqs[i])) {
				*which = cqs[i];
				return 0;
			}
			if (!cqs[i]->armed_by_us) {
				cq_arm_shared(cqs[i]);
				armed_now = true;
			}
		}
		if (qp_is_dead(cqs[0]->qp)) {
			RLOG_ERROR("no completion will ever come: rpmad's side "
					"of the connection is gone");
			return RPMA_E_PROVIDER;
		}
		/* armed just now: a completion may have come before */
		if (armed_now)
			continue;

		struct epoll_event ev[2];
		int got = epoll_wait(epfd, ev, 2, nonblock ? 0 : -1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			RLOG_ERROR("waiting on the completion channel: %s",
					strerror(errno));
			return RPMA_E_PROVIDER;
		}
		if (got == 0)
			return RPMA_E_NO_COMPLETION;
		for (int i = 0; i < got; i++) {
			int ret = take_byte(ev[i].data.ptr);
			if (ret)
				return ret;
		}
	}
}

static void
cqe_to_wc(const struct qp *qp, const struct qp_cqe *c, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = c->wr_id;
	wc->status = (enum ibv_wc_status)c->status;
	wc->opcode = (enum ibv_wc_opcode)c->opcode;
	wc->vendor_err = c->vendor_err;
	wc->byte_len = c->byte_len;
	wc->imm_data = c->imm_data;
	wc->wc_flags = c->wc_flags;
	/* a shared RQ's receive: the queue pair that received it */
	wc->qp_num = c->source == QP_CQE_FROM_SRQ ? c->qp_num : qp->qp_num;
}

/*
 * Lets the queues reuse the slots of completed work, as a NIC would, once
 * the data of staged reads and receives is where it belongs (staging.h):
 * work completes in order, so the SQ work before this completion that
 * asked for none (RPMA_F_COMPLETION_ON_ERROR) succeeded too.
 */
static void
retire(struct qp *qp, const struct qp_cqe *c)
{
	if (c->source == QP_CQE_FROM_SQ) {
		uint32_t i = atomic_load_explicit(&qp->sq_retired,
				memory_order_relaxed);
		/* never past what can be outstanding, whatever the entry says */
		if (c->sq_index - i > qp->layout.sq_entries)
			i = c->sq_index;
		for (; (int32_t)(c->sq_index - i) > 0; i++)
			staging_deliver(&qp->sq_stage, i, UINT32_MAX);
		if (c->status == IBV_WC_SUCCESS)
			staging_deliver(&qp->sq_stage, c->sq_index,
					UINT32_MAX);
		atomic_store_explicit(&qp->sq_retired, c->sq_index + 1,
				memory_order_release);
	} else if (c->source == QP_CQE_FROM_SRQ && qp->srq_qp) {
		/* on a connection's queue: the shared RQ's slot is free */
		atomic_fetch_add_explicit(&qp->srq_qp->rq_done, 1,
				memory_order_release);
	} else {
		uint32_t i = atomic_load_explicit(&qp->rq_done,
				memory_order_relaxed);
		if (c->status == IBV_WC_SUCCESS && c->opcode == IBV_WC_RECV)
			staging_deliver(&qp->rq_stage, i, c->byte_len);
		atomic_store_explicit(&qp->rq_done, i + 1,
				memory_order_release);
	}
}

/* Whether work was posted whose completion has not been collected. */
static bool
work_outstanding(struct qp *qp)
{
	return qp->sq_tail != atomic_load_explicit(&qp->sq_retired,
			memory_order_relaxed) ||
		qp->rq_tail != atomic_load_explicit(&qp->rq_done,
			memory_order_relaxed);
}

/*
 * An empty poll. Applications spin on rpma_cq_get_wc (as on a NIC, which
 * works meanwhile), but here rpmad must run for the work to complete, and
 * with more busy processes than cores it would get the CPU only on the
 * scheduler's ticks. So: while rpmad's progress counter of this queue
 * pair moves (it takes and completes our work on another core) spin on
 * without a system call; when it stood still for a number of polls
 * (rpmad waits for a core, or waits for its peer, which may need a core
 * too) and work is outstanding, yield once. Returns whether to yield
 * (cq->lock is held).
 */
static bool
stalled_poll(struct rpma_cq *cq)
{
	struct qp *qp = cq->qp;
	uint32_t progress = atomic_load_explicit(&qp->hdr->progress,
			memory_order_relaxed);
	if (progress != cq->seen_progress) {
		cq->seen_progress = progress;
		cq->stalled_polls = 0;
		return false;
	}
	if (++cq->stalled_polls < STALLED_POLLS_BEFORE_YIELD)
		return false;
	cq->stalled_polls = 0;
	return work_outstanding(qp);
}

/* Returns 1 when rpmad's side looked gone (checked now and then). */
static int
liveness_check_due(struct rpma_cq *cq)
{
	uint64_t now = now_coarse_ns();
	if (now - cq->last_liveness_check_ns < LIVENESS_CHECK_NS)
		return 0;
	cq->last_liveness_check_ns = now;
	char byte;
	ssize_t n = recv(cq->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0;
}

int
rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc,
		int *num_entries_got)
{
	if (cq == NULL || wc == NULL || num_entries < 1)
		return RPMA_E_INVAL;
	if (num_entries > 1 && num_entries_got == NULL)
		return RPMA_E_INVAL;
	if (fork_inherited(cq->qp->epoch, "rpma_cq_get_wc"))
		return RPMA_E_PROVIDER;

	struct qp *qp = cq->qp;
	int got = 0;
	int check_dead = 0;
	bool yield = false;

	pthread_mutex_lock(&cq->lock);
	uint32_t avail;
	if (qp_ring_avail(&cq->ring, cq->head, &avail)) {
		pthread_mutex_unlock(&cq->lock);
		RLOG_ERROR("the completion queue is corrupted");
		return RPMA_E_PROVIDER;
	}
	while (got < num_entries && avail > 0) {
		struct qp_cqe c;
		qp_ring_read(&cq->ring, cq->head, &c, sizeof(c));
		cq->head++;
		avail--;
		retire(qp, &c);
		cqe_to_wc(qp, &c, &wc[got++]);
	}
	/* one release for the batch: rpmad may fill those slots again */
	qp_ring_release(&cq->ring, cq->head);
	if (got > 0)
		qp_cq_space_made(qp);

	if (got < num_entries && qp_is_dead(qp)) {
		struct qp_cqe *list = cq->is_rcq ? qp->rflushed : qp->flushed;
		uint32_t *pos = cq->is_rcq ? &qp->rflushed_pos :
				&qp->flushed_pos;
		while (got < num_entries && flushed_left(cq) > 0)
			cqe_to_wc(qp, &list[(*pos)++], &wc[got++]);
	} else if (got == 0) {
		copy_ahead(cq);
		check_dead = liveness_check_due(cq);
		yield = stalled_poll(cq);
	} else {
		cq->stalled_polls = 0;
	}
	pthread_mutex_unlock(&cq->lock);
	if (yield)
		(void) sched_yield();

	if (check_dead) {
		qp_mark_dead(qp);
		return rpma_cq_get_wc(cq, num_entries, wc, num_entries_got);
	}

	if (got == 0) {
		if (qp_is_dead(qp)) {
			RLOG_ERROR("no completion will ever come: rpmad's side "
					"of the connection is gone");
			return RPMA_E_PROVIDER;
		}
		/*
		 * librpma leaves the count alone here; programs that read it
		 * anyway (as the upstream ping-pong example can) see none.
		 */
		if (num_entries_got)
			*num_entries_got = 0;
		return RPMA_E_NO_COMPLETION;
	}
	if (num_entries_got)
		*num_entries_got = got;
	return 0;
}
