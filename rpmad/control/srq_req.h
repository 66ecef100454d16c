/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq_req.h -- a client's requests about its shared receive queues
 * (objects/srq.h)
 */

#ifndef RPMAD_SRQ_REQ_H
#define RPMAD_SRQ_REQ_H

struct req_ctx;

void srq_handle_new(struct req_ctx *rc);
void srq_handle_delete(struct req_ctx *rc);

#endif /* RPMAD_SRQ_REQ_H */
