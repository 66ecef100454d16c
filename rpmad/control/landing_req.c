// SPDX-License-Identifier: BSD-3-Clause
/*
 * landing_req.c -- LandingOpen and LandingClose: a client's thread starts
 * or stops landing remote accesses to its private memory (landing.h)
 */

#include <errno.h>
#include <string.h>

#include "clients/client.h"
#include "clients/landing.h"
#include "clients/reply.h"
#include "control/landing_req.h"
#include "landing_area.h"
#include "librpma.h"

void
landing_handle_open(struct req_ctx *rc)
{
	struct addrspace *as = rc->client->as;
	if (as == NULL) {
		req_fail(rc, RPMA_E_NOSUPP, 0, "rpmad does not reach this "
				"client's memory through its address space: "
				"nothing to land");
		return;
	}
	int fds[LANDING_FD_MAX];
	uint32_t first;
	int ret = landing_open(as, fds, &first);
	if (ret) {
		req_fail(rc, ret == -ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER,
				-ret, "no landing area: %s", strerror(-ret));
		return;
	}
	for (unsigned i = 0; i < LANDING_FD_MAX; i++)
		req_pass_fd(rc, fds[i]);
	rpmad__landing_reply__init(&rc->landing);
	rc->landing.fd_count = LANDING_FD_MAX;
	rc->landing.first_slot = first;
	rc->resp.body_case = RPMAD__RESPONSE__BODY_LANDING;
	rc->resp.landing = &rc->landing;
}

void
landing_handle_close(struct req_ctx *rc)
{
	if (rc->client->as)
		landing_close(rc->client->as);
	req_ok(rc);
}
