/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_qp.h -- a connection's queue pair on its RDMA device: made,
 * watched and destroyed
 */

#ifndef RPMAD_VERBS_QP_H
#define RPMAD_VERBS_QP_H

#include <stddef.h>

struct peer;
struct verbs_conn;

/*
 * verbs_qp_create -- the queue pair of vc on its CM id, for the conn's
 * sizes, with its completion queues, watched from now on. 0, or a
 * negative errno with the reason in err.
 */
int verbs_qp_create(struct verbs_conn *vc, struct peer *peer, char *err,
		size_t errlen);

/* verbs_qp_destroy -- everything verbs_qp_create made (none: nothing) */
void verbs_qp_destroy(struct verbs_conn *vc);

/* verbs_qp_init -- the loop's poller of every queue pair (once) */
void verbs_qp_init(void);

#endif /* RPMAD_VERBS_QP_H */
