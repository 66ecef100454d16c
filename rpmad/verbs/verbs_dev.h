/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_dev.h -- the RDMA devices rpmad found, as every part of the
 * rdma-core transport sees them
 */

#ifndef RPMAD_VERBS_DEV_H
#define RPMAD_VERBS_DEV_H

#include <stdbool.h>

#include <infiniband/verbs.h>

#include "loop/loop.h"

struct device;
struct peer;
struct transport_ops;

/* How many RDMA devices rpmad keeps track of. */
#define VERBS_MAX_DEVICES 16

/* An RDMA device rpmad found, with the device object the core knows. */
struct verbs_dev {
	struct ibv_context *ctx;	/* librdmacm's; NULL once removed */
	struct device *dev;
	struct loop_watch async_watch;	/* its async events (verbs_async.c) */
	struct loop_timer port_timer;	/* armed while its link is down */
	bool dead;		/* fatal error or removed */
};

/*
 * verbs_dev_add -- a table entry for a context the CM gave us, with the
 * core's device object for it (served by `tp`); NULL (logged) when the
 * table is full or memory is short
 */
struct verbs_dev *verbs_dev_add(struct ibv_context *ctx,
		const struct transport_ops *tp);

/* verbs_dev_find -- the device of a CM id's context, also when it is gone */
struct verbs_dev *verbs_dev_find(const struct ibv_context *ctx);

/* verbs_dev_of_node -- the live device of /dev/infiniband/<node> (uverbsN) */
struct verbs_dev *verbs_dev_of_node(const char *node);

/* verbs_dev_of_peer -- a peer's device, or NULL when it is not an RDMA one */
struct verbs_dev *verbs_dev_of_peer(const struct peer *peer);

/* verbs_dev_ctx_name -- the device name of a CM id's context ("none") */
const char *verbs_dev_ctx_name(const struct ibv_context *ctx);

/*
 * verbs_dev_forget -- a device that is gone: no more of its events; a
 * removed one's context is forgotten too (a device made again is a new
 * one), a failed one's stays known as dead
 */
void verbs_dev_forget(struct verbs_dev *vd, bool removed);

/* verbs_dev_fini -- empty the table (rpmad ends) */
void verbs_dev_fini(void);

#endif /* RPMAD_VERBS_DEV_H */
