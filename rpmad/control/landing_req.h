/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * landing_req.h -- a client's requests for its landing area
 * (clients/landing.h)
 */

#ifndef RPMAD_LANDING_REQ_H
#define RPMAD_LANDING_REQ_H

struct req_ctx;

void landing_handle_open(struct req_ctx *rc);
void landing_handle_close(struct req_ctx *rc);

#endif /* RPMAD_LANDING_REQ_H */
