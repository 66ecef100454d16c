// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_srq.c -- a shared receive queue (1.x) as the device's own: an
 * ibv_srq in the peer's protection domain, which the queue pairs of the
 * connections made with it use (verbs_qp.c). The client's receives go to
 * it as it posts them (srq_take: rpmad's slot number is the wr_id), and a
 * completion on any of those queue pairs names the slot (verbs_work.c,
 * srq_done).
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "verbs/verbs.h"

int
verbs_srq_create(struct srq *srq, char *err, size_t errlen)
{
	struct ibv_srq_init_attr attr = {
		.srq_context = srq,
		.attr = {
			.max_wr = srq_slots(srq),
			.max_sge = 1,
		},
	};
	struct ibv_srq *s = ibv_create_srq(peer_tp(srq_peer(srq)), &attr);
	if (s == NULL) {
		int e = errno ? errno : EIO;
		(void) snprintf(err, errlen, "ibv_create_srq: %s",
				strerror(e));
		return -e;
	}
	srq_set_tp(srq, s);
	return 0;
}

void
verbs_srq_posted(struct srq *srq)
{
	struct ibv_srq *s = srq_tp(srq);
	if (s == NULL)
		return;
	for (;;) {
		struct recv_slot *rs;
		uint64_t wr_id;
		if (srq_take(srq, &rs, &wr_id))
			return;	/* none, no room, or corrupted */
		struct ibv_sge sge = { 0 };
		struct ibv_recv_wr wr = {
			.wr_id = wr_id,
			.sg_list = &sge,
		};
		if (rs->mr) {
			/* registered at the client's addresses */
			sge.addr = rs->addr;
			sge.length = rs->length;
			sge.lkey = verbs_mr_lkey(rs->mr);
			wr.num_sge = 1;
		}
		struct ibv_recv_wr *bad = NULL;
		/* libibverbs answers with a positive errno */
		int ret = ibv_post_srq_recv(s, &wr, &bad);
		if (ret) {
			log_warning("verbs: ibv_post_srq_recv: %s",
					strerror(ret));
			srq_untake(srq, wr_id);
			return;
		}
	}
}

void
verbs_srq_destroy(struct srq *srq)
{
	if (srq_tp(srq) == NULL)
		return;
	/* libibverbs answers with a positive errno */
	int ret = ibv_destroy_srq(srq_tp(srq));
	if (ret)
		log_warning("verbs: ibv_destroy_srq: %s", strerror(ret));
	srq_set_tp(srq, NULL);
}
