/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_cfg.h -- the connection configuration object, for the library's use
 */

#ifndef RPMACLIENT_CONN_CFG_H
#define RPMACLIENT_CONN_CFG_H

#include <stdint.h>

#include "librpma.h"

struct rpma_conn_cfg {
	int timeout_ms;
	uint32_t cq_size;
	uint32_t rcq_size;
	uint32_t sq_size;
	uint32_t rq_size;
};

/* conn_cfg_or_default -- cfg itself, or the defaults when cfg is NULL */
const struct rpma_conn_cfg *conn_cfg_or_default(
		const struct rpma_conn_cfg *cfg);

#endif /* RPMACLIENT_CONN_CFG_H */
