/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_channel.h -- rpmad's one RDMA CM event channel, on which every CM
 * id of the transport (listeners and connections) is made
 */

#ifndef RPMAD_VERBS_CHANNEL_H
#define RPMAD_VERBS_CHANNEL_H

#include <stddef.h>

#include <rdma/rdma_cma.h>

#include "loop/loop.h"

/*
 * Every CM id's context starts with one of these, so that an event finds
 * the part it belongs to.
 */
enum verbs_ctx_kind {
	VCTX_EP = 1,
	VCTX_CONN,
};

/*
 * verbs_channel_open -- make the channel (non-blocking) and have the loop
 * watch it with `ready`, the reader of its events (it stands above the
 * parts that make ids on the channel, as a socket's handler does). 0, or
 * a negative errno with the reason in err.
 */
int verbs_channel_open(loop_fd_fn *ready, char *err, size_t errlen);

/* verbs_channel -- the channel, or NULL while it is not open */
struct rdma_event_channel *verbs_channel(void);

/* verbs_channel_close -- at the end, when no id is left on it */
void verbs_channel_close(void);

#endif /* RPMAD_VERBS_CHANNEL_H */
