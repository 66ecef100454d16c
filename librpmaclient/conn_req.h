/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_req.h -- building connection requests, for ep.c and conn_req.c
 */

#ifndef RPMACLIENT_CONN_REQ_H
#define RPMACLIENT_CONN_REQ_H

#include <stdbool.h>

#include "broker.h"
#include "librpma.h"

/* conn_cfg_to_msg -- the configuration (or the defaults) as sent to rpmad */
void conn_cfg_to_msg(const struct rpma_conn_cfg *cfg, Rpmad__ConnCfg *msg);

/* conn_req_from_reply -- a request object for rpmad's QpReply */
int conn_req_from_reply(struct rpma_peer *peer, struct broker_reply *reply,
		const struct rpma_conn_cfg *cfg, bool incoming,
		struct rpma_conn_req **req_ptr);

/* conn_req_forget -- tell rpmad to drop a request the library could not use */
void conn_req_forget(uint64_t generation, uint64_t conn_id);

#endif /* RPMACLIENT_CONN_REQ_H */
