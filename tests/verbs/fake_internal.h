/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_internal.h -- what the fake libibverbs (fake_verbs.c) and the fake
 * librdmacm (fake_rdmacm.c) share
 */

#ifndef FAKE_INTERNAL_H
#define FAKE_INTERNAL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "fake_rdma.h"

#define FAKE_MAX_DEVICES 4
#define FAKE_MAX_KEYS 8

struct fake_async {
	struct ibv_async_event ev;
	struct fake_async *next;
};

struct fake_dev {
	struct ibv_device ibdev;
	struct verbs_context vctx;	/* the context: vctx.context */
	struct in_addr addr;
	bool odp;
	bool removed;
	int async_pipe[2];
	struct fake_async *async_head, *async_tail;
	uint32_t next_key;
	uint32_t forced_keys[FAKE_MAX_KEYS];
	unsigned nforced;
};

struct fake_state {
	bool absent;			/* no kernel RDMA support */
	bool hold;
	bool reg_needs_odp;
	struct fake_dev devs[FAKE_MAX_DEVICES];
	unsigned ndevs;
	struct fake_counts counts;
};

extern struct fake_state fake;

/* fake_fail -- a misuse a real library would hang or crash on: abort */
void fake_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* the device of a context, or NULL */
struct fake_dev *fake_dev_of_ctx(const struct ibv_context *ctx);

/* ---- fake_verbs.c, for the CM ---- */
/* a QP on the pd's device in INIT state */
struct ibv_qp *fake_qp_create(struct ibv_pd *pd,
		struct ibv_qp_init_attr *attr);
int fake_qp_destroy(struct ibv_qp *qp);
/* connect two QPs (both ready to send) */
void fake_qp_connect(struct ibv_qp *a, struct ibv_qp *b);
/* the QP's peer forgets it (disconnect, destroy) */
void fake_qp_unlink(struct ibv_qp *qp);
/* the QP goes to the error state: its work is flushed */
void fake_qp_to_error(struct ibv_qp *qp);
/* every QP of a device fails */
void fake_dev_qps_fail(struct fake_dev *d);

/* ---- fake_rdmacm.c ---- */
/* DEVICE_REMOVAL to every CM id of the device */
void fake_cm_device_removed(struct fake_dev *d);

#endif /* FAKE_INTERNAL_H */
