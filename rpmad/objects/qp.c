// SPDX-License-Identifier: BSD-3-Clause
/*
 * qp.c -- creating a shared queue pair, taking work from its rings and
 * putting completions into them
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log/log.h"
#include "objects/qp.h"

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		(void) close(*fd);
	*fd = -1;
}

/* A notification socket pair: rpmad writes bytes, the client reads them. */
static int
notify_pair(int *daemon_end, int *client_end)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	/* rpmad never blocks on a client that does not read */
	int flags = fcntl(sv[0], F_GETFL);
	(void) fcntl(sv[0], F_SETFL, flags | O_NONBLOCK);
	(void) shutdown(sv[0], SHUT_RD);
	(void) shutdown(sv[1], SHUT_WR);
	*daemon_end = sv[0];
	*client_end = sv[1];
	return 0;
}

static int
backlog_init(struct cqe_backlog *b, uint32_t cap)
{
	b->entries = calloc(cap, sizeof(*b->entries));
	b->cap = cap;
	b->head = b->count = 0;
	return b->entries ? 0 : -ENOMEM;
}

int
qp_create(struct qp *qp, const struct qp_sizes *sizes,
		const struct qp_staging *staging_sizes, uint32_t qp_num,
		char *err, size_t errlen)
{
	memset(qp, 0, sizeof(*qp));
	qp->memfd = qp->doorbell_fd = qp->event_sock = qp->cq_sock = -1;
	qp->rcq_sock = -1;
	qp->sizes = *sizes;
	qp->staging_sizes = *staging_sizes;
	for (unsigned i = 0; i < QP_FD_MAX; i++)
		qp->client_fds[i] = -1;

	int ret;
	if (qp_layout_compute(sizes, &qp->layout)) {
		(void) snprintf(err, errlen, "queue sizes sq %u, rq %u, cq %u, "
				"rcq %u are not possible (cq must be 1..%u, "
				"others 0..%u)", sizes->sq, sizes->rq,
				sizes->cq, sizes->rcq, QP_MAX_QUEUE_SIZE,
				QP_MAX_QUEUE_SIZE);
		return -EINVAL;
	}

	qp->memfd = memfd_create("rpmad-qp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (qp->memfd < 0)
		goto err_errno;
	uint64_t staging = (uint64_t)staging_sizes->sq + staging_sizes->rq;
	if (ftruncate(qp->memfd, (off_t)(qp->layout.size + staging)))
		goto err_errno;
	/* the client gets this fd: it must not be able to shrink it */
	if (fcntl(qp->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
			F_SEAL_SEAL))
		goto err_errno;
	qp->region = mmap(NULL, qp->layout.size, PROT_READ | PROT_WRITE,
			MAP_SHARED, qp->memfd, 0);
	if (qp->region == MAP_FAILED) {
		qp->region = NULL;
		goto err_errno;
	}
	if (staging) {
		/* a mapping of its own: its registration may outlive ours */
		qp->staging = mmap(NULL, staging, PROT_READ | PROT_WRITE,
				MAP_SHARED, qp->memfd, (off_t)qp->layout.size);
		if (qp->staging == MAP_FAILED) {
			qp->staging = NULL;
			goto err_errno;
		}
	}
	qp->hdr = qp->region;
	qp_layout_init_header(qp->hdr, sizes, &qp->layout, qp_num);
	const struct qp_layout *l = &qp->layout;
	qp_ring_init(&qp->sq, qp->region, l->sq_offset, l->sq_entries,
			&qp->hdr->sq);
	qp_ring_init(&qp->rq, qp->region, l->rq_offset, l->rq_entries,
			&qp->hdr->rq);
	qp_ring_init(&qp->cq, qp->region, l->cq_offset, l->cq_entries,
			&qp->hdr->cq);
	qp_ring_init(&qp->rcq, qp->region, l->rcq_offset, l->rcq_entries,
			&qp->hdr->rcq);

	qp->doorbell_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (qp->doorbell_fd < 0)
		goto err_errno;

	/* passed to the client in the order of a QpReply (enum qp_fd) */
	int *cfd = qp->client_fds;
	qp->n_client_fds = qp_fd_count(sizes->rcq);
	/* the mapping holds the region; the client's copy is the only fd */
	cfd[QP_FD_REGION] = qp->memfd;
	qp->memfd = -1;
	cfd[QP_FD_DOORBELL] = dup(qp->doorbell_fd);
	if (cfd[QP_FD_DOORBELL] < 0)
		goto err_errno;
	if ((ret = notify_pair(&qp->event_sock, &cfd[QP_FD_EVENT])))
		goto err_ret;
	if ((ret = notify_pair(&qp->cq_sock, &cfd[QP_FD_CQ])))
		goto err_ret;
	if (sizes->rcq && (ret = notify_pair(&qp->rcq_sock,
			&cfd[QP_FD_RCQ])))
		goto err_ret;

	/* every SQ and RQ entry makes at most one completion */
	uint32_t most = qp->layout.sq_entries + qp->layout.rq_entries;
	if (backlog_init(&qp->cq_backlog, most) ||
			backlog_init(&qp->rcq_backlog, sizes->rcq ? most : 1)) {
		ret = -ENOMEM;
		goto err_ret;
	}
	return 0;

err_errno:
	ret = -errno;
err_ret:
	(void) snprintf(err, errlen, "cannot create a queue pair: %s",
			strerror(-ret));
	qp_destroy(qp);
	return ret;
}

void
qp_destroy(struct qp *qp)
{
	if (qp->region)
		(void) munmap(qp->region, qp->layout.size);
	qp->region = NULL;
	qp->hdr = NULL;
	if (qp->staging)
		(void) munmap(qp->staging, (size_t)qp->staging_sizes.sq +
				qp->staging_sizes.rq);
	qp->staging = NULL;
	close_fd(&qp->memfd);
	close_fd(&qp->doorbell_fd);
	close_fd(&qp->event_sock);
	close_fd(&qp->cq_sock);
	close_fd(&qp->rcq_sock);
	for (unsigned i = 0; i < QP_FD_MAX; i++)
		close_fd(&qp->client_fds[i]);
	qp->n_client_fds = 0;
	free(qp->cq_backlog.entries);
	free(qp->rcq_backlog.entries);
	qp->cq_backlog.entries = qp->rcq_backlog.entries = NULL;
}

void
qp_set_state(struct qp *qp, enum qp_state state)
{
	atomic_store_explicit(&qp->hdr->state, state, memory_order_release);
}

/* The client corrupted the region: from now on its rings are ignored. */
static void
mark_corrupted(struct qp *qp)
{
	qp->corrupted = true;
	qp->broken = true;
	qp->cq_backlog.count = qp->rcq_backlog.count = 0;
}

int
qp_sq_next(struct qp *qp, struct qp_sqe *out, uint32_t *index)
{
	if (qp->broken)
		return -EPROTO;
	uint32_t head = qp->sq_head;
	/* the ring step's own 1, 0 or -1 (common/qp_ring.h) */
	int got = qp_ring_take(&qp->sq, &qp->sq_head, out, sizeof(*out));
	if (got < 0) {
		mark_corrupted(qp);
		return -EPROTO;
	}
	if (got > 0)
		*index = head;
	return got;
}

int
qp_rq_next(struct qp *qp, struct qp_rqe *out)
{
	if (qp->broken)
		return -EPROTO;
	int got = qp_ring_take(&qp->rq, &qp->rq_head, out, sizeof(*out));
	if (got < 0) {
		mark_corrupted(qp);
		return -EPROTO;
	}
	return got;
}

bool
qp_sq_pending(struct qp *qp)
{
	return !qp->broken && qp_ring_pending(&qp->sq, qp->sq_head);
}

bool
qp_rq_pending(struct qp *qp)
{
	return !qp->broken && qp_ring_pending(&qp->rq, qp->rq_head);
}

/* Sends one notification byte; a full socket already says "look". */
static void
notify(int sock)
{
	if (sock < 0)
		return;
	char byte = 1;
	ssize_t n;
	do {
		n = send(sock, &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
}

void
qp_notify_event(struct qp *qp)
{
	notify(qp->event_sock);
}

/*
 * Writes one completion into a ring if it has room. The client's head is
 * hostile: a value that makes the ring look over-full marks the queue pair
 * corrupted.
 */
static bool
ring_put(struct qp *qp, bool rcq, const struct qp_cqe *cqe)
{
	const struct qp_ring *r = rcq ? &qp->rcq : &qp->cq;
	uint32_t *tail = rcq ? &qp->rcq_tail : &qp->cq_tail;
	uint32_t depth = rcq ? qp->sizes.rcq : qp->sizes.cq;

	if (qp->broken)
		return false;
	uint32_t used;
	if (qp_ring_used(r, *tail, &used)) {
		mark_corrupted(qp);
		return false;
	}
	if (used >= depth)
		return false;
	qp_ring_put(r, tail, cqe, sizeof(*cqe));
	return true;
}

static void
notify_cq(struct qp *qp, bool rcq)
{
	/* pairs with the client's request (cq_armed) before its recheck */
	if (qp_wakeup_claim(rcq ? &qp->hdr->rcq_armed : &qp->hdr->cq_armed))
		notify(rcq ? qp->rcq_sock : qp->cq_sock);
}

static bool
backlog_push(struct cqe_backlog *b, const struct qp_cqe *cqe)
{
	if (b->count == b->cap)
		return false;
	b->entries[(b->head + b->count) % b->cap] = *cqe;
	b->count++;
	return true;
}

void
qp_progress(struct qp *qp)
{
	if (!qp->broken)
		atomic_store_explicit(&qp->hdr->progress, ++qp->progress,
				memory_order_relaxed);
}

void
qp_set_contended(struct qp *qp, bool contended)
{
	/* written on a change only: the client reads this line */
	if (qp->broken || qp->contended == contended)
		return;
	qp->contended = contended;
	atomic_store_explicit(&qp->hdr->contended, contended,
			memory_order_relaxed);
}

void
qp_complete(struct qp *qp, const struct qp_cqe *cqe, bool recv)
{
	qp_progress(qp);
	bool rcq = recv && qp->sizes.rcq > 0;
	struct cqe_backlog *b = rcq ? &qp->rcq_backlog : &qp->cq_backlog;

	/* order: nothing may overtake what waits in the backlog */
	if (b->count == 0 && ring_put(qp, rcq, cqe)) {
		notify_cq(qp, rcq);
		return;
	}
	if (qp->broken)
		return;	/* nobody can take it from a corrupted ring */
	atomic_store_explicit(&qp->hdr->cq_space_wanted, 1,
			memory_order_relaxed);
	if (!backlog_push(b, cqe)) {
		/*
		 * More completions than SQ and RQ hold: the client reused SQ
		 * slots whose completions it never took. As corrupt as an
		 * impossible index (and not worth a log line each time).
		 */
		mark_corrupted(qp);
	}
}

static int
drain_one(struct qp *qp, bool rcq)
{
	struct cqe_backlog *b = rcq ? &qp->rcq_backlog : &qp->cq_backlog;
	int moved = 0;
	while (b->count > 0 && ring_put(qp, rcq, &b->entries[b->head])) {
		b->head = (b->head + 1) % b->cap;
		b->count--;
		moved++;
	}
	if (moved)
		notify_cq(qp, rcq);
	return moved;
}

int
qp_backlog_drain(struct qp *qp)
{
	if (qp->cq_backlog.count == 0 && qp->rcq_backlog.count == 0)
		return 0;
	int moved = drain_one(qp, false);
	if (qp->sizes.rcq)
		moved += drain_one(qp, true);
	if (qp->cq_backlog.count == 0 && qp->rcq_backlog.count == 0)
		atomic_store_explicit(&qp->hdr->cq_space_wanted, 0,
				memory_order_relaxed);
	return moved;
}

bool
qp_backlog_waiting(struct qp *qp)
{
	return qp->cq_backlog.count > 0 || qp->rcq_backlog.count > 0;
}

bool
qp_prepare_sleep(struct qp *qp, bool want_sq, bool want_rq)
{
	/* pairs with the client's check after publishing (qp_wakeup_wanted) */
	qp_wakeup_request(&qp->hdr->need_wakeup);
	qp->sleeping = true;
	if ((want_sq && qp_sq_pending(qp)) || (want_rq && qp_rq_pending(qp)))
		return true;
	/* a backlog that fits now is work too */
	return qp_backlog_drain(qp) > 0;
}

void
qp_wake(struct qp *qp)
{
	if (!qp->sleeping)
		return;
	atomic_store_explicit(&qp->hdr->need_wakeup, 0, memory_order_relaxed);
	qp->sleeping = false;
}

void
qp_doorbell_drain(struct qp *qp)
{
	uint64_t count;
	while (read(qp->doorbell_fd, &count, sizeof(count)) > 0)
		;
}
