// SPDX-License-Identifier: BSD-3-Clause
/*
 * srq.c -- shared receive queues (1.x): rpma_srq_new, rpma_srq_delete,
 * rpma_srq_recv, rpma_srq_get_rcq
 *
 * NOT YET SERVED: rpmad has no shared receive queue yet (issue 35's last
 * part). Until it has, creating one fails with RPMA_E_NOSUPP, so that a
 * program built against native librpma 1.x still loads and runs every path
 * that uses no shared RQ; the argument checks are 1.x's already.
 */

#include "log_internal.h"
#include "srq.h"

int
rpma_srq_new(struct rpma_peer *peer, struct rpma_srq_cfg *cfg,
		struct rpma_srq **srq_ptr)
{
	(void) cfg;
	if (peer == NULL || srq_ptr == NULL)
		return RPMA_E_INVAL;

	RLOG_ERROR("shared receive queues are not served by rpmad yet");
	return RPMA_E_NOSUPP;
}

/* no shared RQ can exist yet: every non-NULL one is not ours */
int
rpma_srq_delete(struct rpma_srq **srq_ptr)
{
	if (srq_ptr == NULL)
		return RPMA_E_INVAL;
	if (*srq_ptr == NULL)
		return 0;
	*srq_ptr = NULL;
	return RPMA_E_INVAL;
}

int
rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst, size_t offset,
		size_t len, const void *op_context)
{
	(void) op_context;
	if (srq == NULL || (dst == NULL && (offset != 0 || len != 0)))
		return RPMA_E_INVAL;
	return RPMA_E_INVAL;
}

int
rpma_srq_get_rcq(const struct rpma_srq *srq, struct rpma_cq **rcq_ptr)
{
	if (srq == NULL || rcq_ptr == NULL)
		return RPMA_E_INVAL;
	return RPMA_E_INVAL;
}
