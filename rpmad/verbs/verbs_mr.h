/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_mr.h -- protection domains and registrations on RDMA devices, as
 * the operations table and the data path use them
 */

#ifndef RPMAD_VERBS_MR_H
#define RPMAD_VERBS_MR_H

#include <stddef.h>
#include <stdint.h>

struct mr;
struct peer;

int verbs_pd_alloc(struct peer *peer, char *err, size_t errlen);
void verbs_pd_free(struct peer *peer);
int verbs_mr_register(struct mr *mr, char *err, size_t errlen);
void verbs_mr_deregister(struct mr *mr);
int verbs_mr_advise(struct mr *mr, uint64_t offset, uint64_t len,
		int advice, uint32_t flags, char *err, size_t errlen);

uint32_t verbs_mr_lkey(const struct mr *mr);

#endif /* RPMAD_VERBS_MR_H */
