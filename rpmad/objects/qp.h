/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp.h -- rpmad's side of a shared queue pair (see common/qp_region.h)
 *
 * The region is a sealed memfd the client maps too. Everything rpmad reads
 * from it is hostile: the ring steps (common/qp_ring.h, the library's too)
 * copy entries out before they are looked at, and an index the client moved
 * beyond what is possible marks the queue pair corrupted (the connection
 * then fails; nothing else does). rpmad keeps its own copy of the layout
 * and of every index it owns.
 */

#ifndef RPMAD_QP_H
#define RPMAD_QP_H

#include <stdbool.h>
#include <stdint.h>

#include "loop/loop.h"
#include "qp_region.h"
#include "qp_ring.h"

/* completions that did not fit a full CQ yet, in order */
struct cqe_backlog {
	struct qp_cqe *entries;
	uint32_t cap, head, count;
};

struct qp {
	int memfd;
	void *region;
	struct qp_region_header *hdr;
	struct qp_layout layout;
	struct qp_sizes sizes;
	struct qp_staging staging_sizes;
	struct qp_ring sq, rq, cq, rcq;	/* placed by layout, not the header */
	/*
	 * rpmad's mapping of the staging bytes after the rings, until conn.c
	 * hands it to their registration
	 */
	void *staging;

	int doorbell_fd;		/* eventfd the client writes */
	struct loop_watch doorbell_watch;
	int event_sock;			/* rpmad's ends of the notification */
	int cq_sock;			/* socket pairs */
	int rcq_sock;

	/* the client's ends (enum qp_fd), passed once and then closed */
	int client_fds[QP_FD_MAX];
	unsigned n_client_fds;

	uint32_t sq_head;		/* next SQ entry to take */
	uint32_t rq_head;		/* next RQ entry to take */
	uint32_t cq_tail, rcq_tail;	/* next CQ/RCQ slot to fill */
	struct cqe_backlog cq_backlog, rcq_backlog;
	bool corrupted;			/* found corrupted; not reported yet */
	bool broken;			/* was corrupted: rings never read again */
	bool sleeping;			/* need_wakeup is set */
	uint32_t progress;		/* our copy of hdr->progress */
	bool contended;			/* our copy of hdr->contended */
};

/*
 * qp_create -- a region for these depths and staging sizes (granted: the
 * caller clamped them), its doorbell and notification sockets. Returns 0
 * or a negative errno (reason in err).
 */
int qp_create(struct qp *qp, const struct qp_sizes *sizes,
		const struct qp_staging *staging, uint32_t qp_num, char *err,
		size_t errlen);

/* qp_destroy -- unmap and close everything (the client's ends included) */
void qp_destroy(struct qp *qp);

/* qp_set_state -- publish enum qp_state to the client */
void qp_set_state(struct qp *qp, enum qp_state state);

/*
 * qp_sq_next -- copy the next posted send entry into *out.
 * Returns 1 (got one; its SQ index in *index), 0 (none) or -EPROTO (the
 * client moved the tail impossibly: corrupted, now or before).
 */
int qp_sq_next(struct qp *qp, struct qp_sqe *out, uint32_t *index);

/* qp_rq_next -- likewise for the receive queue */
int qp_rq_next(struct qp *qp, struct qp_rqe *out);

/* qp_sq_pending / qp_rq_pending -- whether entries wait (no copy) */
bool qp_sq_pending(struct qp *qp);
bool qp_rq_pending(struct qp *qp);

/*
 * qp_complete -- hand one completion to the client: to the RCQ when `recv`
 * and the queue pair has one, else to the CQ; into the backlog when that is
 * full. Notifies the client when it armed the queue.
 */
void qp_complete(struct qp *qp, const struct qp_cqe *cqe, bool recv);

/* qp_backlog_drain -- move backlog entries that now fit; work done */
int qp_backlog_drain(struct qp *qp);

/* qp_backlog_waiting -- whether completions wait for room */
bool qp_backlog_waiting(struct qp *qp);

/* qp_notify_event -- one byte on the connection event socket */
void qp_notify_event(struct qp *qp);

/*
 * qp_prepare_sleep -- set need_wakeup and look again: returns true when
 * work arrived meanwhile (new SQ entries count only when `want_sq`: the
 * connection can take them now; new receives only when `want_rq`: a
 * message waits for one). qp_wake -- clear need_wakeup.
 */
bool qp_prepare_sleep(struct qp *qp, bool want_sq, bool want_rq);

/*
 * qp_progress -- bump the region's progress counter: rpmad took work of
 * this queue pair or completed some (see common/qp_region.h)
 */
void qp_progress(struct qp *qp);
/*
 * qp_set_contended -- tell the client whether its work waits for other
 * tenants' slices now (see common/qp_region.h)
 */
void qp_set_contended(struct qp *qp, bool contended);
void qp_wake(struct qp *qp);

/* qp_doorbell_drain -- consume the doorbell's count */
void qp_doorbell_drain(struct qp *qp);

#endif /* RPMAD_QP_H */
