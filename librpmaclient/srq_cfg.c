// SPDX-License-Identifier: BSD-3-Clause
/*
 * srq_cfg.c -- the shared RQ configuration object (1.x): the sizes of the
 * shared receive queue and of its own receive CQ
 */

#include <stdatomic.h>
#include <stdlib.h>

#include "srq.h"

/* 1.x's defaults (rpma_srq_cfg_new(3)) */
#define SRQ_DEFAULT_RQ_SIZE 100
#define SRQ_DEFAULT_RCQ_SIZE 100

void
srq_cfg_sizes(const struct rpma_srq_cfg *cfg, uint32_t *rq_size,
		uint32_t *rcq_size)
{
	*rq_size = cfg ? atomic_load(&cfg->rq_size) : SRQ_DEFAULT_RQ_SIZE;
	*rcq_size = cfg ? atomic_load(&cfg->rcq_size) : SRQ_DEFAULT_RCQ_SIZE;
}

int
rpma_srq_cfg_new(struct rpma_srq_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_srq_cfg *cfg = malloc(sizeof(*cfg));
	if (cfg == NULL)
		return RPMA_E_NOMEM;

	atomic_init(&cfg->rq_size, SRQ_DEFAULT_RQ_SIZE);
	atomic_init(&cfg->rcq_size, SRQ_DEFAULT_RCQ_SIZE);
	*cfg_ptr = cfg;
	return 0;
}

int
rpma_srq_cfg_delete(struct rpma_srq_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL)
		return RPMA_E_INVAL;

	free(*cfg_ptr);
	*cfg_ptr = NULL;
	return 0;
}

/* the sizes are atomic: 1.x made these calls safe from many threads */
int
rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg *cfg, uint32_t rq_size)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;

	atomic_store(&cfg->rq_size, rq_size);
	return 0;
}

int
rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg *cfg, uint32_t *rq_size)
{
	if (cfg == NULL || rq_size == NULL)
		return RPMA_E_INVAL;

	*rq_size = atomic_load(&cfg->rq_size);
	return 0;
}

int
rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg *cfg, uint32_t rcq_size)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;

	atomic_store(&cfg->rcq_size, rcq_size);
	return 0;
}

int
rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg *cfg, uint32_t *rcq_size)
{
	if (cfg == NULL || rcq_size == NULL)
		return RPMA_E_INVAL;

	*rcq_size = atomic_load(&cfg->rcq_size);
	return 0;
}
