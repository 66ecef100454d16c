// SPDX-License-Identifier: BSD-3-Clause
/*
 * atomic_write.c -- rpma_atomic_write (1.x): 0.12's rpma_write_atomic
 * took its 8 bytes from registered memory; 1.x's takes them by value and
 * copies them when posting (native 1.x posts them inline)
 *
 * NOT YET SERVED: the 8 bytes need a place in memory rpmad reads when it
 * executes the write; the per-connection staging area being added to the
 * queue pair region is that place. Until this file uses it, the call
 * checks its arguments as 1.x does and fails with RPMA_E_NOSUPP.
 */

#include "conn.h"
#include "log_internal.h"

int
rpma_atomic_write(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const char src[8], int flags,
		const void *op_context)
{
	(void) op_context;
	if (conn == NULL || dst == NULL || src == NULL || flags == 0)
		return RPMA_E_INVAL;
	if (dst_offset % RPMA_ATOMIC_WRITE_ALIGNMENT) {
		RLOG_ERROR("dst_offset %zu is not aligned to %d bytes",
				dst_offset, RPMA_ATOMIC_WRITE_ALIGNMENT);
		return RPMA_E_INVAL;
	}

	RLOG_ERROR("rpma_atomic_write is not served yet");
	return RPMA_E_NOSUPP;
}
