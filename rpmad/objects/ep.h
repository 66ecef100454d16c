/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep.h -- listening endpoints and the requests waiting at them
 *
 * struct ep is opaque: its fields are ep.c's. What a transport may call
 * of it, and the requests it hands in (struct incoming), stand in
 * transport/transport.h; rpmactl gets a plain description
 * (ep_describe()).
 */

#ifndef RPMAD_EP_H
#define RPMAD_EP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "clients/reply.h"
#include "core/registry.h"
#include "log/origin.h"
#include "transport/transport.h"

#define EP_ADDR_MAX 64
#define EP_PORT_MAX 32

/* The largest shares of the waiting requests rpmactl shows. */
#define EP_INFO_SHARES 4

/* What rpmactl shows of an endpoint: plain data, filled by ep.c. */
struct ep_info {
	char addr[EP_ADDR_MAX], port[EP_PORT_MAX];
	unsigned pending;		/* requests waiting at it */
	const char *transport;		/* its transport's name */
	unsigned origins;		/* whom they come from: how many */
	struct {
		char origin[ORIGIN_NAME_MAX];
		unsigned pending;
	} share[EP_INFO_SHARES];	/* the largest, largest first */
	unsigned n_shares;
};

/* ep_describe -- an endpoint as rpmactl shows it */
void ep_describe(const struct ep *ep, struct ep_info *info);

void ep_handle_listen(struct req_ctx *rc);
void ep_handle_shutdown(struct req_ctx *rc);
void ep_handle_next_conn_req(struct req_ctx *rc);

#endif /* RPMAD_EP_H */
