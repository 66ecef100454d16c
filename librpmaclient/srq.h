/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq.h -- shared receive queues (1.x), for the library's use
 */

#ifndef RPMACLIENT_SRQ_H
#define RPMACLIENT_SRQ_H

#include <stdint.h>

#include "librpma.h"

struct rpma_srq_cfg {
	_Atomic uint32_t rq_size;
	_Atomic uint32_t rcq_size;
};

/* srq_cfg_sizes -- cfg's sizes, or the defaults when cfg is NULL */
void srq_cfg_sizes(const struct rpma_srq_cfg *cfg, uint32_t *rq_size,
		uint32_t *rcq_size);

#endif /* RPMACLIENT_SRQ_H */
