// SPDX-License-Identifier: BSD-3-Clause
/*
 * peer_cfg.c -- the peer configuration object and its 1-byte descriptor
 */

#include <stdint.h>
#include <stdlib.h>

#include "peer_cfg.h"

int
rpma_peer_cfg_new(struct rpma_peer_cfg **pcfg_ptr)
{
	if (pcfg_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_peer_cfg *pcfg = calloc(1, sizeof(*pcfg));
	if (pcfg == NULL)
		return RPMA_E_NOMEM;

	*pcfg_ptr = pcfg;
	return 0;
}

int
rpma_peer_cfg_delete(struct rpma_peer_cfg **pcfg_ptr)
{
	if (pcfg_ptr == NULL)
		return RPMA_E_INVAL;

	free(*pcfg_ptr);
	*pcfg_ptr = NULL;
	return 0;
}

int
rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg *pcfg,
		bool supported)
{
	if (pcfg == NULL)
		return RPMA_E_INVAL;

	pcfg->direct_write_to_pmem = supported;
	return 0;
}

int
rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg *pcfg,
		bool *supported)
{
	if (pcfg == NULL || supported == NULL)
		return RPMA_E_INVAL;

	*supported = pcfg->direct_write_to_pmem;
	return 0;
}

int
rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg *pcfg, void *desc)
{
	if (pcfg == NULL || desc == NULL)
		return RPMA_E_INVAL;

	*(uint8_t *)desc = pcfg->direct_write_to_pmem ? 1 : 0;
	return 0;
}

int
rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg *pcfg,
		size_t *desc_size)
{
	if (pcfg == NULL || desc_size == NULL)
		return RPMA_E_INVAL;

	*desc_size = PEER_CFG_DESCRIPTOR_SIZE;
	return 0;
}

int
rpma_peer_cfg_from_descriptor(const void *desc, size_t desc_size,
		struct rpma_peer_cfg **pcfg_ptr)
{
	if (desc == NULL || pcfg_ptr == NULL)
		return RPMA_E_INVAL;
	if (desc_size != PEER_CFG_DESCRIPTOR_SIZE)
		return RPMA_E_INVAL;

	struct rpma_peer_cfg *pcfg = calloc(1, sizeof(*pcfg));
	if (pcfg == NULL)
		return RPMA_E_NOMEM;

	/* any non-zero byte means "supported", as a bool would read it */
	pcfg->direct_write_to_pmem = *(const uint8_t *)desc != 0;
	*pcfg_ptr = pcfg;
	return 0;
}
