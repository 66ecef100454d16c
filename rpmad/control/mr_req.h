/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr_req.h -- a client's requests about its memory registrations
 * (objects/mr.h)
 */

#ifndef RPMAD_MR_REQ_H
#define RPMAD_MR_REQ_H

struct req_ctx;

void mr_handle_reg(struct req_ctx *rc);
void mr_handle_dereg(struct req_ctx *rc);
void mr_handle_advise(struct req_ctx *rc);

#endif /* RPMAD_MR_REQ_H */
