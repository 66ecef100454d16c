/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_cfg.h -- the connection configuration object, for the library's use
 */

#ifndef RPMACLIENT_CONN_CFG_H
#define RPMACLIENT_CONN_CFG_H

#include <stdbool.h>
#include <stdint.h>

#include "librpma.h"

struct rpma_conn_cfg {
	int timeout_ms;
	uint32_t cq_size;
	uint32_t rcq_size;
	uint32_t sq_size;
	uint32_t rq_size;
	bool shared_comp_channel;	/* 1.x: one channel for CQ and RCQ */
	struct rpma_srq *srq;		/* 1.x: its receives' queue */
};

/* conn_cfg_or_default -- cfg itself, or the defaults when cfg is NULL */
const struct rpma_conn_cfg *conn_cfg_or_default(
		const struct rpma_conn_cfg *cfg);

/*
 * conn_cfg_check -- 0, or RPMA_E_INVAL when cfg asks for a shared
 * completion channel and a shared RQ that has its own receive CQ (1.x
 * refuses the two together)
 */
int conn_cfg_check(const struct rpma_conn_cfg *cfg);

#endif /* RPMACLIENT_CONN_CFG_H */
