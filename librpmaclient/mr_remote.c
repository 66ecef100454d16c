// SPDX-License-Identifier: BSD-3-Clause
/*
 * mr_remote.c -- remote memory registrations: decoding the 21-byte
 * descriptor and the getters
 */

#include <stdlib.h>
#include <string.h>

#include "le_bytes.h"
#include "log_internal.h"
#include "mr.h"

int
rpma_mr_remote_from_descriptor(const void *desc, size_t desc_size,
		struct rpma_mr_remote **mr_ptr)
{
	if (desc == NULL || mr_ptr == NULL)
		return RPMA_E_INVAL;
	if (desc_size != MR_DESCRIPTOR_SIZE) {
		RLOG_ERROR("incompatible descriptor size: %zu (expected %d)",
				desc_size, MR_DESCRIPTOR_SIZE);
		return RPMA_E_INVAL;
	}

	const uint8_t *p = desc;
	uint64_t raddr = le_get64(p);
	uint64_t size = le_get64(p + 8);
	uint32_t rkey = le_get32(p + 16);
	uint8_t usage = p[20];

	if (usage == 0) {
		RLOG_ERROR("the descriptor names no usage: not a memory region");
		return RPMA_E_NOSUPP;
	}
	if (size == 0 || raddr + size < raddr) {
		RLOG_ERROR("the descriptor's range [0x%llx, +%llu) is not valid",
				(unsigned long long)raddr,
				(unsigned long long)size);
		return RPMA_E_NOSUPP;
	}

	struct rpma_mr_remote *mr = malloc(sizeof(*mr));
	if (mr == NULL)
		return RPMA_E_NOMEM;

	mr->raddr = raddr;
	mr->size = size;
	mr->rkey = rkey;
	mr->usage = usage;
	*mr_ptr = mr;
	return 0;
}

int
rpma_mr_remote_get_size(const struct rpma_mr_remote *mr, size_t *size)
{
	if (mr == NULL || size == NULL)
		return RPMA_E_INVAL;

	*size = (size_t)mr->size;
	return 0;
}

int
rpma_mr_remote_get_flush_type(const struct rpma_mr_remote *mr,
		int *flush_type)
{
	if (mr == NULL || flush_type == NULL)
		return RPMA_E_INVAL;

	*flush_type = mr->usage & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	return 0;
}

int
rpma_mr_remote_delete(struct rpma_mr_remote **mr_ptr)
{
	if (mr_ptr == NULL)
		return RPMA_E_INVAL;

	free(*mr_ptr);
	*mr_ptr = NULL;
	return 0;
}
