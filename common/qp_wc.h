/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp_wc.h -- the ibv_wc opcode a send-queue entry completes with, the same
 * whether rpmad completes it or the library makes the completion up (work
 * flushed after rpmad went away)
 */

#ifndef RPMAD_COMMON_QP_WC_H
#define RPMAD_COMMON_QP_WC_H

#include <stdint.h>

#include <infiniband/verbs.h>

#include "qp_region.h"

/* a flush is librpma's RDMA read; every kind of write is an RDMA write */
static inline uint32_t
qp_sq_wc_opcode(uint8_t op)
{
	switch (op) {
	case QP_OP_READ:
	case QP_OP_FLUSH:
		return IBV_WC_RDMA_READ;
	case QP_OP_SEND:
	case QP_OP_SEND_IMM:
		return IBV_WC_SEND;
	default:
		return IBV_WC_RDMA_WRITE;
	}
}

#endif /* RPMAD_COMMON_QP_WC_H */
