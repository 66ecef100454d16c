// SPDX-License-Identifier: BSD-3-Clause
/*
 * compl_channel.c -- one completion channel for both queues of a connection
 * (1.x): rpma_conn_get_compl_fd, rpma_conn_wait
 *
 * Each queue has its own notification socket from rpmad; the channel is an
 * epoll set of both, so its descriptor is readable when either queue has
 * something to report. Both queues stay armed (cq.c, cq_wait_shared).
 */

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "conn.h"
#include "fork.h"
#include "log_internal.h"

static int
watch(int epfd, struct rpma_cq *cq)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = cq };
	return epoll_ctl(epfd, EPOLL_CTL_ADD, cq->fd, &ev);
}

int
compl_channel_new(struct qp *qp, int *fd_ptr)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0 || watch(epfd, &qp->cq) ||
			(qp->has_rcq && watch(epfd, &qp->rcq))) {
		RLOG_ERROR("making the shared completion channel: %s",
				strerror(errno));
		if (epfd >= 0)
			(void) close(epfd);
		return RPMA_E_PROVIDER;
	}
	struct rpma_cq *cqs[] = { &qp->cq, &qp->rcq };
	for (int i = 0; i < (qp->has_rcq ? 2 : 1); i++) {
		cqs[i]->shared_channel = true;
		cqs[i]->channel_fd = epfd;
		cq_arm_shared(cqs[i]);
	}
	*fd_ptr = epfd;
	return 0;
}

int
rpma_conn_get_compl_fd(const struct rpma_conn *conn, int *fd)
{
	if (conn == NULL || fd == NULL)
		return RPMA_E_INVAL;
	if (conn->compl_fd < 0)
		return RPMA_E_NOT_SHARED_CHNL;

	*fd = conn->compl_fd;
	return 0;
}

/* flags: reserved by 1.x for later use; ignored there too */
int
rpma_conn_wait(struct rpma_conn *conn, int flags, struct rpma_cq **cq,
		bool *is_rcq)
{
	(void) flags;
	if (conn == NULL || cq == NULL)
		return RPMA_E_INVAL;
	if (conn->compl_fd < 0)
		return RPMA_E_NOT_SHARED_CHNL;
	struct qp *qp = conn->qp;
	if (fork_inherited(qp->epoch, "rpma_conn_wait"))
		return RPMA_E_PROVIDER;

	struct rpma_cq *const cqs[] = { &qp->cq, &qp->rcq };
	int n = qp->has_rcq ? 2 : 1;
	/* one waiter per queue, as rpma_cq_wait; always in this order */
	for (int i = 0; i < n; i++)
		pthread_mutex_lock(&cqs[i]->wait_lock);
	struct rpma_cq *which = NULL;
	int ret = cq_wait_shared(cqs, n, conn->compl_fd, &which);
	for (int i = n - 1; i >= 0; i--)
		pthread_mutex_unlock(&cqs[i]->wait_lock);
	if (ret)
		return ret;

	*cq = which;
	if (is_rcq)
		*is_rcq = which->is_rcq;
	return 0;
}
