/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_ep.h -- listening endpoints on RDMA devices and the requests that
 * arrive at them, as the operations table and the CM's events reach them
 */

#ifndef RPMAD_VERBS_EP_H
#define RPMAD_VERBS_EP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rdma/rdma_cma.h>

struct ep;
struct incoming;

/* A listener's CM id context. */
struct verbs_ep {
	uint8_t kind;		/* VCTX_EP */
	struct ep *ep;
	struct rdma_cm_id *id;
};

/* the operations: endpoints (see transport.h) */
int verbs_listen(struct ep *ep, const struct sockaddr_storage *ss,
		socklen_t len, char *err, size_t errlen);
void verbs_unlisten(struct ep *ep);
void verbs_incoming_drop(struct incoming *inc, bool reject);

/* verbs_ep_request -- a CONNECT_REQUEST: its new id waits at the endpoint */
void verbs_ep_request(const struct rdma_cm_event *ev);

/* verbs_ep_event -- any other event of a listener's own id */
void verbs_ep_event(const struct verbs_ep *vep,
		const struct rdma_cm_event *ev);

#endif /* RPMAD_VERBS_EP_H */
