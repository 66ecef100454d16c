// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_conn.c -- a connection's state in the rdma-core transport: making
 * and freeing it, the list of every one (device-wide events walk it), and
 * how it ends
 *
 * The parts that use it stand on this file and it calls none of them: a
 * connection is reported over the same way wherever its end is found.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "verbs/verbs.h"

static struct verbs_conn *all_vcs;

struct verbs_conn *
verbs_conn_new(void)
{
	struct verbs_conn *vc = calloc(1, sizeof(*vc));
	if (vc == NULL)
		return NULL;
	vc->kind = VCTX_CONN;
	vc->setup_timer.arg = vc;
	DL_APPEND2(all_vcs, vc, all_prev, all_next);
	return vc;
}

void
verbs_conn_drop_id(struct verbs_conn *vc)
{
	if (vc->id && rdma_destroy_id(vc->id))
		log_warning("verbs: rdma_destroy_id: %s", strerror(errno));
	vc->id = NULL;
}

void
verbs_conn_free(struct verbs_conn *vc)
{
	verbs_conn_drop_id(vc);
	loop_timer_cancel(verbs_env->loop, &vc->setup_timer);
	DL_DELETE2(all_vcs, vc, all_prev, all_next);
	free(vc);
}

struct verbs_conn *
verbs_conn_all(void)
{
	return all_vcs;
}

struct verbs_conn *
verbs_conn_of_qp(const struct ibv_qp *qp)
{
	struct verbs_conn *vc;
	DL_FOREACH2(all_vcs, vc, all_next) {
		if (vc->qp == qp)
			return vc;
	}
	return NULL;
}

void
verbs_conn_over(struct verbs_conn *vc, enum rpma_conn_event event)
{
	if (vc->state == VC_OVER)
		return;
	if (vc->conn == NULL) {
		/* waiting at the endpoint: the application learns it later */
		vc->remote_gone = true;
		return;
	}
	vc->state = VC_OVER;
	loop_timer_cancel(verbs_env->loop, &vc->setup_timer);
	conn_ended(vc->conn, event);
}
