// SPDX-License-Identifier: BSD-3-Clause
/*
 * ep.c -- listening endpoints: rpma_ep_listen, rpma_ep_get_fd,
 * rpma_ep_next_conn_req, rpma_ep_shutdown
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "addr.h"
#include "broker.h"
#include "conn_cfg.h"
#include "conn_req.h"
#include "fork.h"
#include "log_internal.h"
#include "peer.h"

struct rpma_ep {
	struct rpma_peer *peer;
	uint64_t generation;
	unsigned epoch;	/* fork.h */
	uint64_t ep_id;
	int fd;		/* one byte per incoming request, from rpmad */
};

int
rpma_ep_listen(struct rpma_peer *peer, const char *addr, const char *port,
		struct rpma_ep **ep_ptr)
{
	if (peer == NULL || addr == NULL || port == NULL || ep_ptr == NULL)
		return RPMA_E_INVAL;

	char host[ADDR_HOST_MAX], serv[ADDR_SERV_MAX];
	int ret = addr_numeric(addr, port, host, serv);
	if (ret)
		return ret == RPMA_E_INVAL ? RPMA_E_PROVIDER : ret;

	struct rpma_ep *ep = calloc(1, sizeof(*ep));
	if (ep == NULL)
		return RPMA_E_NOMEM;

	Rpmad__EpListen msg = RPMAD__EP_LISTEN__INIT;
	msg.peer_id = peer->peer_id;
	msg.addr = host;
	msg.port = serv;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_EP_LISTEN;
	req.ep_listen = &msg;

	struct broker_reply reply;
	ret = broker_call(peer->generation, &req, NULL, 0,
			RPMAD__RESPONSE__BODY_EP, &reply);
	if (ret) {
		free(ep);
		return ret;
	}
	if (reply.nfds != 1) {
		RLOG_ERROR("rpmad passed %u descriptors for an endpoint",
				reply.nfds);
		broker_reply_fini(&reply);
		free(ep);
		return RPMA_E_PROVIDER;
	}

	ep->peer = peer;
	ep->generation = reply.generation;
	ep->epoch = fork_epoch();
	ep->ep_id = reply.resp->ep->ep_id;
	ep->fd = broker_take_fd(&reply, 0);
	broker_reply_fini(&reply);

	*ep_ptr = ep;
	return 0;
}

int
rpma_ep_shutdown(struct rpma_ep **ep_ptr)
{
	if (ep_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_ep *ep = *ep_ptr;
	if (ep == NULL)
		return 0;

	bool ours = ep->epoch == fork_epoch();
	if (ours && broker_session_alive(ep->generation)) {
		Rpmad__EpShutdown msg = RPMAD__EP_SHUTDOWN__INIT;
		msg.ep_id = ep->ep_id;
		Rpmad__Request req = RPMAD__REQUEST__INIT;
		req.body_case = RPMAD__REQUEST__BODY_EP_SHUTDOWN;
		req.ep_shutdown = &msg;
		/* a session that ended just now took the object with it */
		if (broker_call_simple(ep->generation, &req) &&
				broker_session_alive(ep->generation))
			return RPMA_E_PROVIDER;
	}

	if (ours)	/* a child's descriptor is the child's */
		(void) close(ep->fd);
	free(ep);
	*ep_ptr = NULL;
	return 0;
}

int
rpma_ep_get_fd(const struct rpma_ep *ep, int *fd)
{
	if (ep == NULL || fd == NULL)
		return RPMA_E_INVAL;

	*fd = ep->fd;
	return 0;
}

int
rpma_ep_next_conn_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr)
{
	if (ep == NULL || req_ptr == NULL)
		return RPMA_E_INVAL;
	int bad = conn_cfg_check(cfg);
	if (bad)
		return bad;
	/* the notification would be taken from the parent */
	if (fork_inherited(ep->epoch, "rpma_ep_next_conn_req"))
		return RPMA_E_PROVIDER;

	for (;;) {
		char byte;
		ssize_t n = recv(ep->fd, &byte, 1, 0);
		if (n == 1)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return RPMA_E_NO_EVENT;
		if (n == 0)
			RLOG_ERROR("the endpoint is gone: rpmad's session ended");
		else
			RLOG_ERROR("waiting for a connection request: %s",
					strerror(errno));
		return RPMA_E_PROVIDER;
	}

	Rpmad__ConnCfg cfg_msg = RPMAD__CONN_CFG__INIT;
	conn_cfg_to_msg(cfg, &cfg_msg);
	Rpmad__EpNextConnReq msg = RPMAD__EP_NEXT_CONN_REQ__INIT;
	msg.ep_id = ep->ep_id;
	msg.cfg = &cfg_msg;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_EP_NEXT_CONN_REQ;
	req.ep_next_conn_req = &msg;

	struct broker_reply reply;
	int ret = broker_call(ep->generation, &req, NULL, 0,
			RPMAD__RESPONSE__BODY_QP, &reply);
	if (ret)
		return ret;

	ret = conn_req_from_reply(ep->peer, &reply, cfg, true, req_ptr);
	uint64_t conn_id = reply.resp->qp->conn_id;
	broker_reply_fini(&reply);
	if (ret)
		conn_req_forget(ep->generation, conn_id);
	return ret;
}
