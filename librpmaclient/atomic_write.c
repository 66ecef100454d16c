// SPDX-License-Identifier: BSD-3-Clause
/*
 * atomic_write.c -- rpma_atomic_write (1.x): 0.12's rpma_write_atomic took
 * its 8 bytes from registered memory; 1.x's takes them by value and copies
 * them when posting (native 1.x posts them inline)
 *
 * rpmad reads a write's source when it executes it, after the call
 * returned, so the 8 bytes go into a staging buffer of the connection,
 * registered on its peer when the first atomic write comes: one 8-byte
 * slot per atomic write, round robin over sq_entries + 1 slots. A slot is
 * written again only sq_entries + 1 atomic writes later; had its old write
 * not completed by then, the send queue would hold more than sq_entries
 * of them at once. The slot is chosen, filled and posted under the
 * connection's atomic_lock; a failed post uses no slot.
 */

#include <string.h>
#include <sys/mman.h>

#include "conn.h"
#include "log_internal.h"

#define SLOT RPMA_ATOMIC_WRITE_ALIGNMENT

static int
staging_new(struct rpma_conn *conn)
{
	uint32_t slots = conn->qp->layout.sq_entries + 1;
	size_t size = ((size_t)slots * SLOT + 4095) & ~(size_t)4095;
	void *buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return RPMA_E_NOMEM;
	int ret = rpma_mr_reg(conn->peer, buf, size, RPMA_MR_USAGE_WRITE_SRC,
			&conn->staging);
	if (ret) {
		(void) munmap(buf, size);
		return ret;
	}
	conn->staging_buf = buf;
	conn->staging_size = size;
	conn->staging_slots = slots;
	return 0;
}

int
conn_staging_delete(struct rpma_conn *conn)
{
	if (conn->staging == NULL)
		return 0;
	int ret = rpma_mr_dereg(&conn->staging);
	(void) munmap(conn->staging_buf, conn->staging_size);
	conn->staging_buf = NULL;
	return ret;
}

int
rpma_atomic_write(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const char src[8], int flags,
		const void *op_context)
{
	if (conn == NULL || dst == NULL || src == NULL || flags == 0)
		return RPMA_E_INVAL;
	if (dst_offset % RPMA_ATOMIC_WRITE_ALIGNMENT) {
		RLOG_ERROR("dst_offset %zu is not aligned to %d bytes",
				dst_offset, RPMA_ATOMIC_WRITE_ALIGNMENT);
		return RPMA_E_INVAL;
	}

	pthread_mutex_lock(&conn->atomic_lock);
	int ret = conn->staging ? 0 : staging_new(conn);
	if (ret == 0) {
		uint32_t slot = conn->staging_next;
		memcpy((char *)conn->staging_buf + (size_t)slot * SLOT, src,
				SLOT);
		ret = rpma_write_atomic(conn, dst, dst_offset, conn->staging,
				(size_t)slot * SLOT, flags, op_context);
		if (ret == 0)
			conn->staging_next = (slot + 1) % conn->staging_slots;
	}
	pthread_mutex_unlock(&conn->atomic_lock);
	/* the registration failing is the post failing, for the program */
	if (ret == RPMA_E_NOMEM || ret == RPMA_E_NOSUPP)
		ret = RPMA_E_PROVIDER;
	return ret;
}
