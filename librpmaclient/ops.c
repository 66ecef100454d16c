// SPDX-License-Identifier: BSD-3-Clause
/*
 * ops.c -- remote memory access and messaging on a connection: read,
 * write (with immediate data), atomic write, flush, send (with immediate
 * data), receive. Each call checks its arguments and posts one entry to
 * the connection's shared queue; rpmad checks it again.
 */

#include <arpa/inet.h>
#include <stdint.h>

#include "conn.h"
#include "log_internal.h"
#include "mr.h"
#include "ops.h"

#define FLAGS_ALL RPMA_F_COMPLETION_ALWAYS

static int
flags_valid(int flags)
{
	if (flags == 0 || (flags & ~FLAGS_ALL)) {
		RLOG_ERROR("flags 0x%x are not RPMA_F_COMPLETION_* flags",
				flags);
		return 0;
	}
	return 1;
}

static int
len_valid(size_t len)
{
	if (len > UINT32_MAX) {
		RLOG_ERROR("%zu bytes is more than one operation can move", len);
		return 0;
	}
	return 1;
}

/* Success is reported only with RPMA_F_COMPLETION_ALWAYS. */
static uint8_t
sqe_flags(int flags)
{
	return (flags & (RPMA_F_COMPLETION_ALWAYS & ~RPMA_F_COMPLETION_ON_ERROR)) ?
		QP_SQE_SIGNALED : 0;
}

/* Local buffer of an operation: the registration's key and address. */
static void
set_local(struct qp_sqe *sqe, const struct rpma_mr_local *mr, size_t offset)
{
	if (mr == NULL)
		return;
	sqe->lkey = mr->lkey;
	sqe->laddr = (uint64_t)(uintptr_t)mr->ptr + offset;
}

static void
set_remote(struct qp_sqe *sqe, const struct rpma_mr_remote *mr, size_t offset)
{
	if (mr == NULL)
		return;
	sqe->rkey = mr->rkey;
	sqe->raddr = mr->raddr + offset;
}

/*
 * The argument rules read, write and write-with-imm share: either both
 * registrations are given, or none and the operation moves 0 bytes.
 */
static int
rma_args_valid(struct rpma_conn *conn, const void *local, size_t local_off,
		const void *remote, size_t remote_off, size_t len, int flags)
{
	if (conn == NULL || !flags_valid(flags))
		return 0;
	if ((local == NULL || remote == NULL) && (local != NULL ||
			remote != NULL || local_off != 0 || remote_off != 0 ||
			len != 0))
		return 0;
	return len_valid(len);
}

/*
 * What to copy through the staging bytes for a local buffer (staging.h):
 * nothing unless rpmad would accept the buffer as it is (a registration of
 * this session, the range inside it, a destination it may write), so that
 * work rpmad refuses is still refused by rpmad, with the same completion;
 * and only private memory of the process's own, which a copy in the
 * process cannot fault on (a file's page whose block is gone would raise
 * SIGBUS here, where rpmad's guarded copies only lose the bytes, as a NIC
 * writing a pinned page the file no longer has). Returns `req` or NULL.
 */
static const struct stage_req *
stage_for(struct stage_req *req, const struct rpma_mr_local *mr,
		size_t offset, size_t len, bool into, uint64_t generation)
{
	if (mr == NULL || len == 0 || !mr->private_only ||
			mr->generation != generation || offset > mr->size ||
			len > mr->size - offset)
		return NULL;
	if (into && !mr_usage_local_write((unsigned)mr->usage))
		return NULL;
	char *p = (char *)mr->ptr + offset;
	*req = (struct stage_req){ .len = len };
	if (into)
		req->dst = p;
	else
		req->src = p;
	return req;
}

static int
post_rma(struct rpma_conn *conn, uint8_t opcode,
		const struct rpma_mr_local *local, size_t local_off,
		const struct rpma_mr_remote *remote, size_t remote_off,
		size_t len, int flags, uint32_t imm, const void *op_context)
{
	struct qp_sqe sqe = {
		.opcode = opcode,
		.flags = sqe_flags(flags),
		.imm = imm,
		.wr_id = (uint64_t)(uintptr_t)op_context,
		.length = (uint32_t)len,
	};
	set_local(&sqe, local, local_off);
	set_remote(&sqe, remote, remote_off);
	struct stage_req req;
	return qp_post_send(conn->qp, &sqe, stage_for(&req, local, local_off,
			len, opcode == QP_OP_READ, conn->qp->generation));
}

int
rpma_read(struct rpma_conn *conn, struct rpma_mr_local *dst,
		size_t dst_offset, const struct rpma_mr_remote *src,
		size_t src_offset, size_t len, int flags,
		const void *op_context)
{
	if (!rma_args_valid(conn, dst, dst_offset, src, src_offset, len, flags))
		return RPMA_E_INVAL;

	return post_rma(conn, QP_OP_READ, dst, dst_offset, src, src_offset,
			len, flags, 0, op_context);
}

int
rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const struct rpma_mr_local *src,
		size_t src_offset, size_t len, int flags,
		const void *op_context)
{
	if (!rma_args_valid(conn, src, src_offset, dst, dst_offset, len, flags))
		return RPMA_E_INVAL;

	return post_rma(conn, QP_OP_WRITE, src, src_offset, dst, dst_offset,
			len, flags, 0, op_context);
}

int
rpma_write_with_imm(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const struct rpma_mr_local *src,
		size_t src_offset, size_t len, int flags, uint32_t imm,
		const void *op_context)
{
	if (!rma_args_valid(conn, src, src_offset, dst, dst_offset, len, flags))
		return RPMA_E_INVAL;

	/* completions carry it in network byte order, as verbs does */
	return post_rma(conn, QP_OP_WRITE_IMM, src, src_offset, dst,
			dst_offset, len, flags, htonl(imm), op_context);
}

int
rpma_write_atomic(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const struct rpma_mr_local *src,
		size_t src_offset, int flags, const void *op_context)
{
	if (conn == NULL || dst == NULL || src == NULL || !flags_valid(flags))
		return RPMA_E_INVAL;
	if (dst_offset % RPMA_ATOMIC_WRITE_ALIGNMENT) {
		RLOG_ERROR("dst_offset %zu is not aligned to %d bytes",
				dst_offset, RPMA_ATOMIC_WRITE_ALIGNMENT);
		return RPMA_E_INVAL;
	}

	return post_rma(conn, QP_OP_ATOMIC_WRITE, src, src_offset, dst,
			dst_offset, RPMA_ATOMIC_WRITE_ALIGNMENT, flags, 0,
			op_context);
}

int
rpma_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, size_t len, enum rpma_flush_type type,
		int flags, const void *op_context)
{
	if (conn == NULL || dst == NULL || !flags_valid(flags) ||
			!len_valid(len))
		return RPMA_E_INVAL;

	uint8_t sqe_extra;
	switch (type) {
	case RPMA_FLUSH_TYPE_PERSISTENT:
		if (!conn->direct_write_to_pmem) {
			RLOG_ERROR("the remote peer did not declare direct "
					"write to pmem (see "
					"rpma_conn_apply_remote_peer_cfg)");
			return RPMA_E_NOSUPP;
		}
		if (!(dst->usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)) {
			RLOG_ERROR("the remote memory region does not support "
					"flushing to persistence");
			return RPMA_E_NOSUPP;
		}
		sqe_extra = QP_SQE_PERSISTENT;
		break;
	case RPMA_FLUSH_TYPE_VISIBILITY:
		/* persistence implies visibility */
		if (!(dst->usage & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
				RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT))) {
			RLOG_ERROR("the remote memory region does not support "
					"flushing to visibility");
			return RPMA_E_NOSUPP;
		}
		sqe_extra = 0;
		break;
	default:
		RLOG_ERROR("unknown flush type %d", (int)type);
		return RPMA_E_INVAL;
	}

	struct qp_sqe sqe = {
		.opcode = QP_OP_FLUSH,
		.flags = sqe_flags(flags) | sqe_extra,
		.wr_id = (uint64_t)(uintptr_t)op_context,
		.length = (uint32_t)len,
	};
	set_remote(&sqe, dst, dst_offset);
	return qp_post_send(conn->qp, &sqe, NULL);
}

static int
post_send(struct rpma_conn *conn, uint8_t opcode,
		const struct rpma_mr_local *src, size_t offset, size_t len,
		int flags, uint32_t imm, const void *op_context)
{
	if (conn == NULL || !flags_valid(flags) || !len_valid(len))
		return RPMA_E_INVAL;
	if (src == NULL && (offset != 0 || len != 0))
		return RPMA_E_INVAL;

	struct qp_sqe sqe = {
		.opcode = opcode,
		.flags = sqe_flags(flags),
		.imm = imm,
		.wr_id = (uint64_t)(uintptr_t)op_context,
		.length = (uint32_t)len,
	};
	set_local(&sqe, src, offset);
	struct stage_req req;
	return qp_post_send(conn->qp, &sqe, stage_for(&req, src, offset, len,
			false, conn->qp->generation));
}

int
rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src,
		size_t offset, size_t len, int flags, const void *op_context)
{
	return post_send(conn, QP_OP_SEND, src, offset, len, flags, 0,
			op_context);
}

int
rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src,
		size_t offset, size_t len, int flags, uint32_t imm,
		const void *op_context)
{
	return post_send(conn, QP_OP_SEND_IMM, src, offset, len, flags,
			htonl(imm), op_context);
}

int
ops_post_recv(struct qp *qp, const struct rpma_mr_local *dst, size_t offset,
		size_t len, const void *op_context)
{
	if (!len_valid(len))
		return RPMA_E_INVAL;

	struct qp_rqe rqe = {
		.wr_id = (uint64_t)(uintptr_t)op_context,
		.length = (uint32_t)len,
	};
	if (dst) {
		rqe.lkey = dst->lkey;
		rqe.laddr = (uint64_t)(uintptr_t)dst->ptr + offset;
	}
	struct stage_req req;
	return qp_post_recv(qp, &rqe, stage_for(&req, dst, offset, len, true,
			qp->generation));
}

int
rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset,
		size_t len, const void *op_context)
{
	if (conn == NULL)
		return RPMA_E_INVAL;
	if (dst == NULL && (offset != 0 || len != 0))
		return RPMA_E_INVAL;

	return ops_post_recv(conn->qp, dst, offset, len, op_context);
}
