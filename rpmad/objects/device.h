/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device.h -- the devices rpmad serves: RDMA devices through the verbs
 * transport and its own software device (TCP) for everything else. The
 * transports make them (device_add(), transport/transport.h).
 */

#ifndef RPMAD_DEVICE_H
#define RPMAD_DEVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "clients/call.h"
#include "transport/transport.h"

struct device {
	uint32_t id;
	char name[64];
	const struct transport_ops *tp;
	bool odp_capable;
	void *tp_dev;		/* the transport's own state */
	/* what clients hold on it, for rpmactl status */
	uint32_t mrs;
	uint64_t pinned_bytes;
	struct device *next;
};

void device_fini(void);

struct device *device_by_id(uint32_t id);

/* device_list -- every device, for status */
struct device *device_list(void);

/*
 * resolve_addr -- addr and port (numbers; port NULL for 0) as
 * a socket address. 0, or a negative errno with the call failed
 * (RPMA_E_NOMEM and -ENOMEM, or RPMA_E_PROVIDER as librpma and -EINVAL
 * when it cannot resolve).
 */
int resolve_addr(struct call *call, const char *addr, const char *port,
		struct sockaddr_storage *ss, socklen_t *len);

/*
 * route_exists -- 0 when a route to the address exists in network
 * namespace `nsfd` (netns.h; -1: rpmad's), else a negative errno (no
 * call failed: the caller says what it was for)
 */
int route_exists(int nsfd, const struct sockaddr_storage *ss, socklen_t len);

/*
 * device_for_addr -- the device that serves `addr` (a number) in the
 * calling client's network namespace: as a local address of this host
 * (`local`), or as the destination of a route. NULL with the call failed.
 */
struct device *device_for_addr(struct call *call, const char *addr, bool local);

#endif /* RPMAD_DEVICE_H */
