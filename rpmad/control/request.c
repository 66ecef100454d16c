// SPDX-License-Identifier: BSD-3-Clause
/*
 * request.c -- decoding a control packet, checking it as a whole and
 * dispatching it to the handler of its kind
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clients/client.h"
#include "clients/reply.h"
#include "clients/tenant.h"
#include "control/admin.h"
#include "control/conn_req.h"
#include "control/device_req.h"
#include "control/ep_req.h"
#include "control/landing_req.h"
#include "control/mr_req.h"
#include "control/peer_req.h"
#include "control/request.h"
#include "control/session.h"
#include "control/srq_req.h"
#include "control/vouch.h"
#include "core/daemon.h"
#include "librpma.h"
#include "log/log.h"

typedef void handler_fn(struct req_ctx *rc);

struct handler {
	handler_fn *fn;
	bool admin;	/* root or an admin group only */
};

static const struct handler *
handler_for(Rpmad__Request__BodyCase c)
{
	static const struct handler table[] = {
		[RPMAD__REQUEST__BODY_HELLO] = { session_handle_hello, false },
		[RPMAD__REQUEST__BODY_PROVE_IDENTITY] = { session_handle_prove,
			false },
		[RPMAD__REQUEST__BODY_NET_NAMESPACE] = { session_handle_netns,
			false },
		[RPMAD__REQUEST__BODY_DEVICE_GET] = { device_handle_get, false },
		[RPMAD__REQUEST__BODY_DEVICE_QUERY] = { device_handle_query, false },
		[RPMAD__REQUEST__BODY_PEER_NEW] = { peer_handle_new, false },
		[RPMAD__REQUEST__BODY_PEER_DELETE] = { peer_handle_delete, false },
		[RPMAD__REQUEST__BODY_MR_REG] = { mr_handle_reg, false },
		[RPMAD__REQUEST__BODY_MR_DEREG] = { mr_handle_dereg, false },
		[RPMAD__REQUEST__BODY_MR_ADVISE] = { mr_handle_advise, false },
		[RPMAD__REQUEST__BODY_EP_LISTEN] = { ep_handle_listen, false },
		[RPMAD__REQUEST__BODY_EP_SHUTDOWN] = { ep_handle_shutdown, false },
		[RPMAD__REQUEST__BODY_EP_NEXT_CONN_REQ] = { ep_handle_next_conn_req, false },
		[RPMAD__REQUEST__BODY_CONN_REQ_NEW] = { conn_handle_req_new, false },
		[RPMAD__REQUEST__BODY_CONN_REQ_DELETE] = { conn_handle_req_delete, false },
		[RPMAD__REQUEST__BODY_CONN_REQ_CONNECT] = { conn_handle_req_connect, false },
		[RPMAD__REQUEST__BODY_CONN_NEXT_EVENT] = { conn_handle_next_event, false },
		[RPMAD__REQUEST__BODY_CONN_DISCONNECT] = { conn_handle_disconnect, false },
		[RPMAD__REQUEST__BODY_CONN_DELETE] = { conn_handle_delete, false },
		[RPMAD__REQUEST__BODY_SRQ_NEW] = { srq_handle_new, false },
		[RPMAD__REQUEST__BODY_SRQ_DELETE] = { srq_handle_delete,
			false },
		[RPMAD__REQUEST__BODY_LANDING_OPEN] = { landing_handle_open,
			false },
		[RPMAD__REQUEST__BODY_LANDING_CLOSE] = { landing_handle_close,
			false },
		[RPMAD__REQUEST__BODY_ADMIN_QUERY] = { admin_handle_query, true },
		[RPMAD__REQUEST__BODY_ADMIN_EVICT] = { admin_handle_evict, true },
		[RPMAD__REQUEST__BODY_ADMIN_UPGRADE] = { admin_handle_upgrade,
			true },
	};
	if ((size_t)c >= sizeof(table) / sizeof(table[0]) || table[c].fn == NULL)
		return NULL;
	return &table[c];
}

/* Whether a request has rpmad work on the network for its client. */
static bool
needs_network(Rpmad__Request__BodyCase c)
{
	return c == RPMAD__REQUEST__BODY_DEVICE_GET ||
		c == RPMAD__REQUEST__BODY_EP_LISTEN ||
		c == RPMAD__REQUEST__BODY_CONN_REQ_NEW ||
		c == RPMAD__REQUEST__BODY_CONN_REQ_CONNECT;
}

/* How many descriptors a well-formed request of this kind carries. */
static unsigned
fds_expected(const Rpmad__Request *req)
{
	if (req->body_case == RPMAD__REQUEST__BODY_MR_REG)
		return req->mr_reg->fd_count;
	if (req->body_case == RPMAD__REQUEST__BODY_HELLO)
		return req->hello->fd_count;
	if (req->body_case == RPMAD__REQUEST__BODY_NET_NAMESPACE)
		return 1;
	return 0;
}

static void
send_answer(struct session *s, struct req_ctx *rc)
{
	size_t len = rpmad__response__get_packed_size(&rc->resp);
	uint8_t *buf = len <= CTL_MAX_MSG ? malloc(len ? len : 1) : NULL;
	if (buf == NULL) {
		log_err("session %s: answer of %zu bytes cannot be sent",
				session_name(s), len);
		session_close_later(s);
		return;
	}
	rpmad__response__pack(&rc->resp, buf);
	int ret = rc->vouch ? vouch_send(session_fd(s), buf, len,
			&rc->vouch_as) :
		ctl_send(session_fd(s), buf, len, rc->out_fds, rc->n_out_fds);
	free(buf);
	if (ret) {
		log_info("session %s: cannot answer: %s", session_name(s),
				strerror(-ret));
		session_close_later(s);
	}
}

int
request_handle(struct session *s, const uint8_t *buf, size_t len, int *fds,
		unsigned nfds)
{
	struct client *who = session_client(s);
	Rpmad__Request *req = rpmad__request__unpack(NULL, len, buf);
	if (req == NULL) {
		tenant_log(who, LOG_WARNING, "session %s: a packet that is not "
				"a request; ending the session",
				session_name(s));
		ctl_close_fds(fds, nfds);
		return -EPROTO;
	}

	struct req_ctx rc;
	memset(&rc, 0, sizeof(rc));
	rc.client = who;
	rc.req = req;
	rc.fds = fds;
	rc.nfds = nfds;
	rpmad__response__init(&rc.resp);
	rc.resp.id = req->id;
	rpmad.stats.requests++;
	/* every line while handling it is about this client */
	log_subject_client(who->pid, who->uid, who->comm);

	const struct handler *h = handler_for(req->body_case);
	if (h == NULL) {
		req_fail(&rc, RPMA_E_NOSUPP, 0, "unknown request (%d)",
				(int)req->body_case);
	} else if (fds_expected(req) != nfds) {
		req_fail(&rc, RPMA_E_INVAL, 0, "the request carried %u "
				"descriptors, expected %u", nfds,
				fds_expected(req));
	} else if (req->body_case != RPMAD__REQUEST__BODY_HELLO &&
			req->body_case != RPMAD__REQUEST__BODY_PROVE_IDENTITY &&
			!session_said_hello(s)) {
		req_fail(&rc, RPMA_E_PROVIDER, 0,
				"the first request must be hello");
	} else if (h->admin && !session_is_admin(s)) {
		/* an operator wants to see who tried */
		rpmad.stats.refused.admin_groups++;
		tenant_log(who, LOG_NOTICE, "session %s: admin request "
				"refused: not root and in no group of "
				"admin_groups",
				session_name(s));
		req_fail(&rc, RPMA_E_NOSUPP, EPERM, "admin requests need root "
				"or a group of admin_groups");
	} else if (needs_network(req->body_case) &&
			session_network_refused(&rc)) {
		/* failed there */
	} else {
		h->fn(&rc);
		if (rc.resp.error == NULL &&
				rc.resp.body_case == RPMAD__RESPONSE__BODY__NOT_SET)
			req_fail(&rc, RPMA_E_UNKNOWN, 0, "no answer");
	}
	if (rc.resp.error) {
		rpmad.stats.request_errors++;
		log_debug("session %s: request %d failed: %s", session_name(s),
				(int)req->body_case, rc.errmsg);
	}

	/* descriptors the handler did not take are not kept */
	ctl_close_fds(rc.fds, rc.nfds);
	send_answer(s, &rc);
	ctl_close_fds(rc.out_fds, rc.n_out_fds);
	if (rc.after)
		rc.after(rc.after_arg);
	rpmad__request__free_unpacked(req, NULL);
	log_subject_clear();
	return 0;
}
