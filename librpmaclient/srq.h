/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq.h -- shared receive queues (1.x), for the library's use
 */

#ifndef RPMACLIENT_SRQ_H
#define RPMACLIENT_SRQ_H

#include <stdbool.h>
#include <stdint.h>

#include "librpma.h"
#include "qp.h"

struct rpma_srq_cfg {
	_Atomic uint32_t rq_size;
	_Atomic uint32_t rcq_size;
};

struct rpma_srq {
	struct rpma_peer *peer;
	struct qp *qp;		/* RQ: the shared queue; CQ: its RCQ */
	uint32_t rq_size;
	bool has_rcq;
};

/* srq_region_sizes -- the depths of a shared RQ's region (srq.c) */
void srq_region_sizes(uint32_t rq_size, uint32_t rcq_size,
		struct qp_sizes *sizes);

/* srq_cfg_sizes -- cfg's sizes, or the defaults when cfg is NULL */
void srq_cfg_sizes(const struct rpma_srq_cfg *cfg, uint32_t *rq_size,
		uint32_t *rcq_size);

#endif /* RPMACLIENT_SRQ_H */
