// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_cfg.c -- the connection configuration object (timeout, queue sizes;
 * 1.x: the shared completion channel, the shared RQ)
 */

#include <stdlib.h>

#include "conn_cfg.h"
#include "log_internal.h"
#include "srq.h"

static const struct rpma_conn_cfg defaults = {
	.timeout_ms = RPMA_DEFAULT_TIMEOUT_MS,
	.cq_size = 10,
	.rcq_size = 0,
	.sq_size = 10,
	.rq_size = 10,
	.shared_comp_channel = false,
	.srq = NULL,
};

const struct rpma_conn_cfg *
conn_cfg_or_default(const struct rpma_conn_cfg *cfg)
{
	return cfg ? cfg : &defaults;
}

int
conn_cfg_check(const struct rpma_conn_cfg *cfg)
{
	cfg = conn_cfg_or_default(cfg);
	if (cfg->shared_comp_channel && cfg->srq && cfg->srq->has_rcq) {
		RLOG_ERROR("a shared completion channel cannot be used when "
				"the shared RQ has its own receive CQ");
		return RPMA_E_INVAL;
	}
	return 0;
}

int
rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_conn_cfg *cfg = malloc(sizeof(*cfg));
	if (cfg == NULL)
		return RPMA_E_NOMEM;

	*cfg = defaults;
	*cfg_ptr = cfg;
	return 0;
}

int
rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL)
		return RPMA_E_INVAL;

	free(*cfg_ptr);
	*cfg_ptr = NULL;
	return 0;
}

int
rpma_conn_cfg_set_timeout(struct rpma_conn_cfg *cfg, int timeout_ms)
{
	if (cfg == NULL || timeout_ms < 0)
		return RPMA_E_INVAL;

	cfg->timeout_ms = timeout_ms;
	return 0;
}

int
rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg *cfg, int *timeout_ms)
{
	if (cfg == NULL || timeout_ms == NULL)
		return RPMA_E_INVAL;

	*timeout_ms = cfg->timeout_ms;
	return 0;
}

/* The four queue sizes have identical setters and getters. */
#define QUEUE_SIZE_ACCESSORS(name) \
int \
rpma_conn_cfg_set_##name(struct rpma_conn_cfg *cfg, uint32_t name) \
{ \
	if (cfg == NULL) \
		return RPMA_E_INVAL; \
	cfg->name = name; \
	return 0; \
} \
\
int \
rpma_conn_cfg_get_##name(const struct rpma_conn_cfg *cfg, uint32_t *name) \
{ \
	if (cfg == NULL || name == NULL) \
		return RPMA_E_INVAL; \
	*name = cfg->name; \
	return 0; \
}

QUEUE_SIZE_ACCESSORS(cq_size)
QUEUE_SIZE_ACCESSORS(rcq_size)
QUEUE_SIZE_ACCESSORS(sq_size)
QUEUE_SIZE_ACCESSORS(rq_size)

int
rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg *cfg, bool shared)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;

	cfg->shared_comp_channel = shared;
	return 0;
}

int
rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg *cfg, bool *shared)
{
	if (cfg == NULL || shared == NULL)
		return RPMA_E_INVAL;

	*shared = cfg->shared_comp_channel;
	return 0;
}

/* 1.x's man page names only cfg NULL; native 1.x refuses srq NULL too */
int
rpma_conn_cfg_set_srq(struct rpma_conn_cfg *cfg, struct rpma_srq *srq)
{
	if (cfg == NULL || srq == NULL)
		return RPMA_E_INVAL;

	cfg->srq = srq;
	return 0;
}

int
rpma_conn_cfg_get_srq(const struct rpma_conn_cfg *cfg,
		struct rpma_srq **srq_ptr)
{
	if (cfg == NULL || srq_ptr == NULL)
		return RPMA_E_INVAL;

	*srq_ptr = cfg->srq;
	return 0;
}
