// SPDX-License-Identifier: BSD-3-Clause
/*
 * utils.c -- rpma_utils_*: looking devices up through rpmad, ODP query,
 * connection event names
 */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "broker.h"
#include "device.h"
#include "log_internal.h"

static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rpma_device *devices;

struct rpma_device *
device_from_ctx(const struct ibv_context *ctx)
{
	struct rpma_device *found = NULL;
	pthread_mutex_lock(&devices_lock);
	for (struct rpma_device *d = devices; d != NULL; d = d->next) {
		if (&d->ctx == ctx) {
			found = d;
			break;
		}
	}
	pthread_mutex_unlock(&devices_lock);
	return found;
}

/* Asks rpmad which device serves `host`; 0 with the reply, or an error. */
static int
look_up(const char *host, enum rpma_util_ibv_context_type type,
		struct broker_reply *reply)
{
	Rpmad__DeviceGet get = RPMAD__DEVICE_GET__INIT;
	get.addr = (char *)host;
	get.type = type == RPMA_UTIL_IBV_CONTEXT_LOCAL ?
			RPMAD__CONTEXT_TYPE__CONTEXT_LOCAL :
			RPMAD__CONTEXT_TYPE__CONTEXT_REMOTE;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_DEVICE_GET;
	req.device_get = &get;
	return broker_call(0, &req, NULL, 0, RPMAD__RESPONSE__BODY_DEVICE,
			reply);
}

/* Finds or makes the object standing for a device of a session. */
static struct rpma_device *
device_get(uint64_t generation, const Rpmad__DeviceInfo *info,
		const char *host, enum rpma_util_ibv_context_type type)
{
	pthread_mutex_lock(&devices_lock);
	struct rpma_device *d;
	for (d = devices; d != NULL; d = d->next) {
		if (d->generation == generation &&
				d->device_id == info->device_id)
			goto out;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		goto out;
	d->generation = generation;
	d->device_id = info->device_id;
	d->odp_capable = info->odp_capable;
	(void) snprintf(d->host, sizeof(d->host), "%s", host);
	d->type = type;
	d->rdma = info->transport && strcmp(info->transport, "tcp") != 0;
	d->ctx.device = &d->dev;
	d->dev.transport_type = IBV_TRANSPORT_UNKNOWN;
	d->dev.node_type = IBV_NODE_UNKNOWN;
	(void) snprintf(d->dev.name, sizeof(d->dev.name), "%s",
			info->name ? info->name : "rpmad");
	(void) snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "%s",
			d->dev.name);
	d->next = devices;
	devices = d;
out:
	pthread_mutex_unlock(&devices_lock);
	return d;
}

int
device_current(struct rpma_device *d, uint64_t *generation,
		uint32_t *device_id)
{
	pthread_mutex_lock(&devices_lock);
	*generation = d->generation;
	*device_id = d->device_id;
	pthread_mutex_unlock(&devices_lock);
	if (broker_session_alive(*generation))
		return 0;

	/* rpmad restarted (or the session broke): the same device, again */
	struct broker_reply reply;
	int ret = look_up(d->host, d->type, &reply);
	if (ret)
		return ret;
	const Rpmad__DeviceInfo *info = reply.resp->device;
	if (info->name == NULL || strcmp(info->name, d->dev.name) != 0) {
		RLOG_ERROR("the device %s this context stands for is not there "
				"any more: rpmad now finds %s for %s", d->dev.name,
				info->name ? info->name : "another device",
				d->host);
		broker_reply_fini(&reply);
		return RPMA_E_PROVIDER;
	}
	pthread_mutex_lock(&devices_lock);
	d->generation = reply.generation;
	d->device_id = info->device_id;
	d->odp_capable = info->odp_capable;
	*generation = d->generation;
	*device_id = d->device_id;
	pthread_mutex_unlock(&devices_lock);
	broker_reply_fini(&reply);
	return 0;
}

int
rpma_utils_get_ibv_context(const char *addr,
		enum rpma_util_ibv_context_type type,
		struct ibv_context **dev_ptr)
{
	if (addr == NULL || dev_ptr == NULL)
		return RPMA_E_INVAL;
	if (type != RPMA_UTIL_IBV_CONTEXT_LOCAL &&
			type != RPMA_UTIL_IBV_CONTEXT_REMOTE)
		return RPMA_E_INVAL;

	char host[ADDR_HOST_MAX], serv[ADDR_SERV_MAX];
	int ret = addr_numeric(addr, NULL, host, serv);
	if (ret)
		return ret;

	struct broker_reply reply;
	ret = look_up(host, type, &reply);
	if (ret)
		return ret;

	struct rpma_device *d = device_get(reply.generation,
			reply.resp->device, host, type);
	broker_reply_fini(&reply);
	if (d == NULL)
		return RPMA_E_NOMEM;

	*dev_ptr = &d->ctx;
	return 0;
}

int
rpma_utils_ibv_context_is_odp_capable(struct ibv_context *dev,
		int *is_odp_capable)
{
	if (dev == NULL || is_odp_capable == NULL)
		return RPMA_E_INVAL;

	struct rpma_device *d = device_from_ctx(dev);
	if (d == NULL) {
		RLOG_ERROR("the context was not obtained from "
				"rpma_utils_get_ibv_context()");
		return RPMA_E_INVAL;
	}

	*is_odp_capable = d->odp_capable ? 1 : 0;
	return 0;
}

const char *
rpma_utils_conn_event_2str(enum rpma_conn_event conn_event)
{
	switch (conn_event) {
	case RPMA_CONN_UNDEFINED:
		return "Undefined connection event";
	case RPMA_CONN_ESTABLISHED:
		return "Connection established";
	case RPMA_CONN_CLOSED:
		return "Connection closed";
	case RPMA_CONN_LOST:
		return "Connection lost";
	case RPMA_CONN_REJECTED:
		return "Connection rejected";
	case RPMA_CONN_UNREACHABLE:
		return "Connection unreachable";
	default:
		return "Unsupported connection event";
	}
}
