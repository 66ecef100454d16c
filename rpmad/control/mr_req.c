// SPDX-License-Identifier: BSD-3-Clause
/*
 * mr_req.c -- MrReg, MrDereg and MrAdvise (objects/mr.h)
 */

#include "clients/call.h"
#include "clients/reply.h"
#include "control/mr_req.h"
#include "mr_usage.h"
#include "objects/mr.h"
#include "objects/peer.h"
#include "transport/transport.h"

void
mr_handle_reg(struct req_ctx *rc)
{
	const Rpmad__MrReg *m = rc->req->mr_reg;
	struct call call = { .client = rc->client };
	struct peer *peer = peer_find(&call, m->peer_id);
	if (peer == NULL) {
		req_fail_call(rc, &call);
		return;
	}

	/* a count out of bounds is refused before any segment is read */
	struct mr_reg_segment segs[MR_MAX_SEGMENTS];
	for (size_t i = 0; i < m->n_segments && i < MR_MAX_SEGMENTS; i++) {
		const Rpmad__Segment *in = m->segments[i];
		segs[i] = (struct mr_reg_segment){
			.fd_index = in->fd_index,
			.offset = in->offset,
			.length = in->length,
			.file_backed = in->file_backed,
			.in_process = in->in_process,
		};
	}
	struct mr_reg_args args = {
		.addr = m->addr,
		.length = m->length,
		.usage = m->usage,
		.n_segments = m->n_segments,
		.segments = segs,
		.fds = rc->fds,
		.nfds = rc->nfds,
	};
	const char *note = NULL;
	struct mr *mr = mr_reg(&call, peer, &args, &note);
	if (mr == NULL) {
		req_fail_call(rc, &call);
		return;
	}

	rpmad__mr_reg_reply__init(&rc->mr);
	rc->mr.mr_id = mr->obj.id;
	rc->mr.key = mr_rkey(mr);
	rc->mr.lkey = mr->lkey;
	rc->mr.usage = mr->usage;
	/* a string literal: it outlives the request */
	rc->mr.usage_note = (char *) (note ? note : "");
	/* reached through the address space: only on devices that copy */
	rc->mr.landing = mr->as != NULL;
	rc->resp.body_case = RPMAD__RESPONSE__BODY_MR;
	rc->resp.mr = &rc->mr;
}

void
mr_handle_dereg(struct req_ctx *rc)
{
	struct call call = { .client = rc->client };
	struct mr *mr = mr_find(&call, rc->req->mr_dereg->mr_id);
	if (mr == NULL) {
		req_fail_call(rc, &call);
		return;
	}
	mr_dereg(mr);
	req_ok(rc);
}

void
mr_handle_advise(struct req_ctx *rc)
{
	const Rpmad__MrAdvise *m = rc->req->mr_advise;
	struct call call = { .client = rc->client };
	struct mr *mr = mr_find(&call, m->mr_id);
	if (mr == NULL ||
			mr_advise(&call, mr, m->offset, m->length, m->advice,
					m->flags)) {
		req_fail_call(rc, &call);
		return;
	}
	req_ok(rc);
}
