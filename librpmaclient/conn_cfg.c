// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_cfg.c -- the connection configuration object (timeout, queue sizes)
 */

#include <stdlib.h>

#include "conn_cfg.h"

static const struct rpma_conn_cfg defaults = {
	.timeout_ms = RPMA_DEFAULT_TIMEOUT_MS,
	.cq_size = 10,
	.rcq_size = 0,
	.sq_size = 10,
	.rq_size = 10,
};

const struct rpma_conn_cfg *
conn_cfg_or_default(const struct rpma_conn_cfg *cfg)
{
	return cfg ? cfg : &defaults;
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
