/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_srq.h -- shared receive queues of an RDMA device (ibv_srq)
 */

#ifndef RPMAD_VERBS_SRQ_H
#define RPMAD_VERBS_SRQ_H

#include <stddef.h>

struct srq;

int verbs_srq_create(struct srq *srq, char *err, size_t errlen);
void verbs_srq_posted(struct srq *srq);
void verbs_srq_destroy(struct srq *srq);

#endif /* RPMAD_VERBS_SRQ_H */
