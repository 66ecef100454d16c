// SPDX-License-Identifier: BSD-3-Clause
/*
 * device.c -- the devices the transports made, and looking up the one
 * that serves an address
 *
 * LOCAL: the address must be one of this host's (it can be bound);
 * REMOTE: a route to it must exist. Which device answers depends on the
 * transport setting; the transport registry (transport/registry.c) says.
 */

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clients/client.h"
#include "core/daemon.h"
#include "core/netns.h"
#include "librpma.h"
#include "log/log.h"
#include "objects/device.h"
#include "transport/transports.h"

static struct device *devices;
static uint32_t next_device_id = 1;

struct device *
device_add(const char *name, const struct transport_ops *tp,
		bool odp_capable, void *tp_dev)
{
	struct device *d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NULL;
	d->id = next_device_id++;
	(void) snprintf(d->name, sizeof(d->name), "%s", name);
	d->tp = tp;
	d->odp_capable = odp_capable;
	d->tp_dev = tp_dev;
	struct device **pp = &devices;
	while (*pp)
		pp = &(*pp)->next;
	*pp = d;
	return d;
}

void
device_fini(void)
{
	while (devices) {
		struct device *d = devices;
		devices = d->next;
		free(d);
	}
}

struct device *
device_by_id(uint32_t id)
{
	for (struct device *d = devices; d; d = d->next) {
		if (d->id == id)
			return d;
	}
	return NULL;
}

struct device *
device_list(void)
{
	return devices;
}

uint32_t
device_id(const struct device *dev)
{
	return dev->id;
}

const char *
device_name(const struct device *dev)
{
	return dev->name;
}

bool
device_odp(const struct device *dev)
{
	return dev->odp_capable;
}

void *
device_tp(const struct device *dev)
{
	return dev->tp_dev;
}

void
device_set_gone(struct device *dev)
{
	size_t n = strlen(dev->name);
	if (n + sizeof(" (gone)") <= sizeof(dev->name))
		memcpy(dev->name + n, " (gone)", sizeof(" (gone)"));
}

int
resolve_addr(struct call *call, const char *addr, const char *port,
		struct sockaddr_storage *ss, socklen_t *len)
{
	/* numbers only: the library resolves names on the client's side */
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
	};
	struct addrinfo *res = NULL;
	int ret = getaddrinfo(addr, port, &hints, &res);
	if (ret) {
		call_fail(call,
				ret == EAI_MEMORY ? RPMA_E_NOMEM :
						    RPMA_E_PROVIDER,
				0, "cannot resolve %s%s%s: %s", addr,
				port ? ":" : "", port ? port : "",
				gai_strerror(ret));
		return ret == EAI_MEMORY ? -ENOMEM : -EINVAL;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/*
 * 0 when the address is one of the namespace's (a socket can be bound
 * to it); a negative errno
 */
static int
check_local(int nsfd, const struct sockaddr_storage *ss, socklen_t len)
{
	/* any port: only the address is in question (port 9 may be taken) */
	struct sockaddr_storage any = *ss;
	if (any.ss_family == AF_INET)
		((struct sockaddr_in *)&any)->sin_port = 0;
	else if (any.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&any)->sin6_port = 0;
	int fd = netns_socket(nsfd, ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC,
			0);
	if (fd < 0)
		return fd;
	int ret = bind(fd, (const struct sockaddr *)&any, len) ? -errno : 0;
	(void) close(fd);
	return ret;
}

int
route_exists(int nsfd, const struct sockaddr_storage *ss, socklen_t len)
{
	int fd = netns_socket(nsfd, ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC,
			0);
	if (fd < 0)
		return fd;
	int ret = connect(fd, (const struct sockaddr *)ss, len) ? -errno : 0;
	(void) close(fd);
	return ret;
}

/* transports_device_for, run in the client's namespace (verbs asks the CM) */
struct device_for {
	const struct sockaddr_storage *ss;
	socklen_t len;
	bool local;
	const char *noun;
	struct device *found;
};

static int
find_device(void *arg)
{
	struct device_for *f = arg;
	f->found = transports_device_for(rpmad.cfg.transport, f->ss, f->len,
			f->local, &f->noun);
	return 0;
}

struct device *
device_for_addr(struct call *call, const char *addr, bool local)
{
	struct sockaddr_storage ss;
	socklen_t len;

	if (addr == NULL || addr[0] == '\0') {
		call_fail(call, RPMA_E_INVAL, 0, "no address");
		return NULL;
	}
	if (resolve_addr(call, addr, "9", &ss, &len))
		return NULL;

	int nsfd = call->client->netns;
	int ret = local ? check_local(nsfd, &ss, len) :
		route_exists(nsfd, &ss, len);
	if (ret) {
		call_fail(call, RPMA_E_PROVIDER, -ret,
				local ? "%s is not an address of this host" :
					"no route to %s",
				addr);
		return NULL;
	}

	const char *choice = rpmad.cfg.transport;
	struct device_for f = { .ss = &ss, .len = len, .local = local,
		.noun = "device" };
	ret = netns_run(nsfd, find_device, &f);
	struct device *d = f.found;
	if (d == NULL) {
		call_fail(call, RPMA_E_PROVIDER, -ret,
				"no %s serves %s and "
				"rpmad runs with --transport %s",
				f.noun, addr, choice);
		return NULL;
	}
	return d;
}
