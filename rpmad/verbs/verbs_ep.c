// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_ep.c -- listening through the RDMA CM, and the connection
 * requests that arrive: each gets a connection state and waits at its
 * endpoint until the application takes it (verbs_cm.c adopts it then) or
 * nobody will (dropped, rejected unless its client is gone already)
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/verbs.h"

int
verbs_listen(struct ep *ep, const struct sockaddr_storage *ss,
		socklen_t len, char *err, size_t errlen)
{
	struct verbs_dev *vd = verbs_dev_of_peer(ep_peer(ep));
	struct rdma_event_channel *ch = verbs_channel();
	if (ch == NULL) {
		(void) snprintf(err, errlen, "no RDMA CM event channel");
		return -ENODEV;
	}
	struct verbs_ep *vep = calloc(1, sizeof(*vep));
	if (vep == NULL) {
		(void) snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	vep->kind = VCTX_EP;
	vep->ep = ep;

	int ret;
	const char *call = "rdma_create_id";
	if (verbs_create_id(ep_netns(ep), ch, &vep->id, vep))
		goto err_errno;
	call = "rdma_bind_addr";
	if (rdma_bind_addr(vep->id, (struct sockaddr *)ss))
		goto err_errno;
	if (vep->id->verbs && vep->id->verbs != vd->ctx) {
		(void) snprintf(err, errlen,
				"cannot listen at %s:%s: it is "
				"served by RDMA device %s, the peer's device "
				"is %s",
				ep_addr(ep), ep_port(ep),
				verbs_dev_ctx_name(vep->id->verbs),
				device_name(peer_device(ep_peer(ep))));
		ret = -EINVAL;
		goto err;
	}
	call = "rdma_listen";
	if (rdma_listen(vep->id, EP_BACKLOG))
		goto err_errno;
	ep_set_tp(ep, vep);
	return 0;

err_errno:
	/* the core adds the errno's text */
	ret = errno ? -errno : -EIO;
	(void) snprintf(err, errlen, "cannot listen at %s:%s: %s", ep_addr(ep),
			ep_port(ep), call);
err:
	if (vep->id)
		(void) rdma_destroy_id(vep->id);
	free(vep);
	return ret;
}

void
verbs_unlisten(struct ep *ep)
{
	struct verbs_ep *vep = ep_tp(ep);
	if (vep == NULL)
		return;
	if (rdma_destroy_id(vep->id))
		log_warning("verbs: rdma_destroy_id: %s", strerror(errno));
	free(vep);
	ep_set_tp(ep, NULL);
}

static void
refuse_request(struct rdma_cm_id *id)
{
	(void) rdma_reject(id, NULL, 0);
	(void) rdma_destroy_id(id);
}

void
verbs_ep_request(const struct rdma_cm_event *ev)
{
	struct verbs_ep *vep = ev->listen_id->context;
	struct ep *ep = vep->ep;
	struct rdma_cm_id *id = ev->id;

	/* lines a request causes are its host's share */
	const struct sockaddr_storage *from = &id->route.addr.dst_storage;
	struct verbs_dev *vd = verbs_dev_of_peer(ep_peer(ep));
	if (vd == NULL || id->verbs != vd->ctx) {
		remote_log(from, LOG_WARNING,
				"verbs: endpoint %s:%s: a request "
				"came through RDMA device %s, the endpoint's "
				"peer uses %s; rejecting it",
				ep_addr(ep), ep_port(ep),
				verbs_dev_ctx_name(id->verbs),
				device_name(peer_device(ep_peer(ep))));
		refuse_request(id);
		return;
	}
	struct verbs_conn *vc = verbs_conn_new();
	struct incoming *inc = calloc(1, sizeof(*inc));
	if (vc == NULL || inc == NULL) {
		remote_log(from, LOG_WARNING, "verbs: endpoint %s:%s: out of "
				"memory for a request; rejecting it",
				ep_addr(ep), ep_port(ep));
		if (vc)
			verbs_conn_free(vc);
		free(inc);
		refuse_request(id);
		return;
	}
	vc->passive = true;
	vc->id = id;
	vc->state = VC_WAITING;
	id->context = vc;

	inc->tp_state = vc;
	inc->pdata_len = ev->param.conn.private_data ?
		ev->param.conn.private_data_len : 0;
	if (inc->pdata_len)
		memcpy(inc->pdata, ev->param.conn.private_data,
				inc->pdata_len);
	memcpy(&inc->local, &id->route.addr.src_storage, sizeof(inc->local));
	memcpy(&inc->remote, &id->route.addr.dst_storage,
			sizeof(inc->remote));
	inc->remote_len = inc->remote.ss_family == AF_INET6 ?
		sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	if (ep_incoming(ep, inc))
		verbs_incoming_drop(inc, true);
}

/* A request waiting at its endpoint has no queue pair yet (adopt makes it). */
void
verbs_incoming_drop(struct incoming *inc, bool reject)
{
	struct verbs_conn *vc = inc->tp_state;
	if (reject && !vc->remote_gone)
		(void) rdma_reject(vc->id, NULL, 0);
	verbs_conn_free(vc);
	free(inc);
}

void
verbs_ep_event(const struct verbs_ep *vep, const struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		log_warning("verbs: endpoint %s:%s: its RDMA device was "
				"removed", ep_addr(vep->ep), ep_port(vep->ep));
}
