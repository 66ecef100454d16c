/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_req.h -- a client's requests about its connections and the
 * requests they start as (objects/conn.h)
 */

#ifndef RPMAD_CONN_REQ_H
#define RPMAD_CONN_REQ_H

#include "clients/reply.h"

struct conn;
struct conn_cfg;

/*
 * conn_cfg_of -- the configuration a request carried, in `cfg`; NULL when
 * it carried none
 */
const struct conn_cfg *conn_cfg_of(const Rpmad__ConnCfg *m,
		struct conn_cfg *cfg);

/* conn_reply_qp -- answer with a new connection's queue pair */
void conn_reply_qp(struct req_ctx *rc, struct conn *conn);

void conn_handle_req_new(struct req_ctx *rc);
void conn_handle_req_delete(struct req_ctx *rc);
void conn_handle_req_connect(struct req_ctx *rc);
void conn_handle_next_event(struct req_ctx *rc);
void conn_handle_disconnect(struct req_ctx *rc);
void conn_handle_delete(struct req_ctx *rc);

#endif /* RPMAD_CONN_REQ_H */
