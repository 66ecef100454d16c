/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp.h -- the client side of a shared queue pair
 *
 * A queue pair belongs first to a connection request, then to the
 * connection made from it. Posting writes an entry into the shared SQ or
 * RQ and rings the doorbell only when rpmad's poller sleeps; completions
 * are read from the shared CQ (and RCQ). No system call per operation
 * while rpmad is awake. The steps on the rings are rpmad's too
 * (common/qp_ring.h); which slots are free, the locks and the made-up
 * completions of a dead queue pair are the library's.
 */

#ifndef RPMACLIENT_QP_H
#define RPMACLIENT_QP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "broker.h"
#include "librpma.h"
#include "qp_region.h"
#include "qp_ring.h"
#include "staging.h"

struct qp;

struct rpma_cq {
	struct qp *qp;
	bool is_rcq;
	int fd;			/* notification socket from rpmad */
	struct qp_ring ring;	/* this side consumes it (common/qp_ring.h) */
	_Atomic uint32_t *armed;
	uint32_t head;		/* private copy of idx->head */
	uint64_t last_liveness_check_ns;
	pthread_mutex_t lock;	/* the ring's head: rpma_cq_get_wc */

	/* busy polling: rpmad's progress counter as last seen (cq.c) */
	uint32_t seen_progress;
	uint32_t stalled_polls;

	/*
	 * The notification state, owned by rpma_cq_wait (one waiter at a
	 * time): whether the armed flag in the region is our doing and not
	 * yet used by rpmad, and how many bytes rpmad sent for armings that
	 * we no longer wait for. Each arming brings at most one byte, so a
	 * byte read while stale > 0 is an old one, never a new completion.
	 */
	pthread_mutex_t wait_lock;
	bool armed_by_us;
	unsigned stale;

	/*
	 * 1.x's shared completion channel (compl_channel.c): the
	 * connection's channel descriptor, which rpma_cq_get_fd gives out
	 * then, and rpma_cq_wait refuses the queue
	 */
	bool shared_channel;
	int channel_fd;
};

struct qp {
	uint64_t generation;
	unsigned epoch;		/* fork.h: a child's calls leave it alone */
	uint64_t conn_id;
	uint32_t qp_num;

	void *region;
	size_t region_size;	/* the rings'; the staging bytes follow */
	size_t map_size;	/* what is mapped: rings and staging */
	struct qp_region_header *hdr;
	struct qp_layout layout;
	struct qp_sizes sizes;

	int doorbell_fd;	/* eventfd rpmad sleeps on */
	int event_fd;		/* connection events from rpmad */

	struct qp_ring sq, rq;	/* this side produces them */

	pthread_mutex_t sq_lock;
	uint32_t sq_tail;
	_Atomic uint32_t sq_retired;	/* SQ slots before this are free */

	pthread_mutex_t rq_lock;
	uint32_t rq_tail;
	_Atomic uint32_t rq_done;	/* receives completed */

	/* payloads copied through the region (staging.h) */
	struct stage_ring sq_stage;	/* under sq_lock */
	struct stage_ring rq_stage;	/* under rq_lock */

	struct rpma_cq cq;
	struct rpma_cq rcq;
	bool has_rcq;
	/* 1.x: the shared RQ's region its receives come from (srq.c) */
	struct qp *srq_qp;

	/* set once rpmad's side of this queue pair is gone */
	_Atomic bool dead;
	pthread_mutex_t dead_lock;
	struct qp_cqe *flushed;		/* completions made up for the CQ */
	uint32_t nflushed, flushed_pos;
	struct qp_cqe *rflushed;	/* ... and for the RCQ */
	uint32_t nrflushed, rflushed_pos;
};

/*
 * qp_new -- build the client side from a QpReply (reply->resp->qp) and its
 * descriptors; `sizes` are the depths asked for. Returns 0 or RPMA_E_*.
 */
int qp_new(struct broker_reply *reply, const struct qp_sizes *sizes,
		const struct qp_staging *asked, struct qp **qp_ptr);

/* qp_delete -- unmap the region and close every descriptor. */
void qp_delete(struct qp **qp_ptr);

/*
 * qp_post_send / qp_post_recv -- 0, or RPMA_E_PROVIDER (queue full,
 * broken). With `stage` (may be NULL), the payload goes through the
 * staging bytes when it fits (staging.h): the entry then names them.
 */
int qp_post_send(struct qp *qp, const struct qp_sqe *sqe,
		const struct stage_req *stage);
int qp_post_recv(struct qp *qp, const struct qp_rqe *rqe,
		const struct stage_req *stage);

/*
 * qp_cq_space_made -- after taking completions: wake rpmad if completions
 * wait for room in a full queue
 */
void qp_cq_space_made(struct qp *qp);

/*
 * qp_mark_dead -- rpmad's side is gone (a descriptor reached its end):
 * everything outstanding completes with IBV_WC_WR_FLUSH_ERR. Idempotent.
 */
void qp_mark_dead(struct qp *qp);

/* qp_is_dead -- whether qp_mark_dead() happened */
static inline bool
qp_is_dead(struct qp *qp)
{
	return atomic_load_explicit(&qp->dead, memory_order_acquire);
}

/*
 * cq_arm_shared -- keep the queue armed for the shared completion channel
 * (its wait_lock held, or before anyone can wait)
 */
void cq_arm_shared(struct rpma_cq *cq);

/*
 * cq_wait_shared -- rpma_conn_wait: until one of the n queues (their
 * wait_locks held) has a completion; *which is that queue, still armed.
 * epfd is the channel (a non-blocking one: RPMA_E_NO_COMPLETION).
 */
int cq_wait_shared(struct rpma_cq *const cqs[], int n, int epfd,
		struct rpma_cq **which);

/* qp_sizes_from_cfg -- depths of a queue pair for a connection config */
struct rpma_conn_cfg;
void qp_sizes_from_cfg(const struct rpma_conn_cfg *cfg,
		struct qp_sizes *sizes);

/* qp_staging_for -- the staging the library asks for with these depths */
void qp_staging_for(const struct qp_sizes *sizes, struct qp_staging *out);

#endif /* RPMACLIENT_QP_H */
