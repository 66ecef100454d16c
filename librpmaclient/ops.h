/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ops.h -- posting work requests, shared by conn_req.c and ops.c
 */

#ifndef RPMACLIENT_OPS_H
#define RPMACLIENT_OPS_H

#include <stddef.h>

#include "librpma.h"
#include "qp.h"

/* ops_post_recv -- post a receive buffer (dst may be NULL for 0 bytes) */
int ops_post_recv(struct qp *qp, const struct rpma_mr_local *dst,
		size_t offset, size_t len, const void *op_context);

#endif /* RPMACLIENT_OPS_H */
