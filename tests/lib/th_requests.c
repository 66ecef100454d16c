// SPDX-License-Identifier: BSD-3-Clause
/*
 * th_requests.c -- rpmad's control requests built (see th_requests.h)
 *
 * A request's body is set up from protobuf-c's descriptions of the
 * messages, so a kind needs no code of its own unless a test fills more
 * than the object it names.
 */

#include <string.h>

#include "th_requests.h"

/* a string field: NULL leaves it empty, as protobuf-c's defaults are */
static char *
str(const char *s)
{
	return (char *) (s ? s : protobuf_c_empty_string);
}

void *
th_req_new(struct th_req *q, Rpmad__Request__BodyCase kind)
{
	memset(q, 0, sizeof(*q));
	rpmad__request__init(&q->req);
	const ProtobufCFieldDescriptor *f =
			protobuf_c_message_descriptor_get_field(
					&rpmad__request__descriptor,
					(unsigned) kind);
	if (f == NULL || f->type != PROTOBUF_C_TYPE_MESSAGE ||
			f->quantifier_offset == 0)
		return NULL;
	const ProtobufCMessageDescriptor *body = f->descriptor;
	if (body->sizeof_message > sizeof(q->u))
		return NULL;
	body->message_init((ProtobufCMessage *) &q->u);
	*(void **) ((char *) &q->req + f->offset) = &q->u;
	q->req.body_case = kind;
	rpmad__conn_cfg__init(&q->cfg);
	for (size_t i = 0; i < TH_REQ_SEGS; i++) {
		rpmad__segment__init(&q->seg[i]);
		q->segp[i] = &q->seg[i];
	}
	return &q->u;
}

Rpmad__Request *
th_req_id(struct th_req *q, Rpmad__Request__BodyCase kind, uint64_t id)
{
	ProtobufCMessage *body = th_req_new(q, kind);
	if (body == NULL || body->descriptor->n_fields == 0)
		return NULL;
	const ProtobufCFieldDescriptor *first = &body->descriptor->fields[0];
	char *at = (char *) body + first->offset;
	switch (first->type) {
	case PROTOBUF_C_TYPE_UINT64:
		*(uint64_t *) at = id;
		return &q->req;
	case PROTOBUF_C_TYPE_UINT32:
		*(uint32_t *) at = (uint32_t) id;
		return &q->req;
	default:
		return NULL;
	}
}

Rpmad__Request *
th_req_hello(struct th_req *q, const char *name)
{
	Rpmad__Hello *m = th_req_new(q, RPMAD__REQUEST__BODY_HELLO);
	m->version = RPMAD__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT;
	m->client_name = str(name);
	return &q->req;
}

Rpmad__Request *
th_req_device_get(struct th_req *q, const char *addr, bool remote)
{
	Rpmad__DeviceGet *m = th_req_new(q, RPMAD__REQUEST__BODY_DEVICE_GET);
	m->addr = str(addr);
	m->type = remote ? RPMAD__CONTEXT_TYPE__CONTEXT_REMOTE :
			   RPMAD__CONTEXT_TYPE__CONTEXT_LOCAL;
	return &q->req;
}

Rpmad__Request *
th_req_mr_reg(struct th_req *q, uint64_t peer, uint64_t addr, uint64_t len,
		uint32_t usage)
{
	Rpmad__MrReg *m = th_req_new(q, RPMAD__REQUEST__BODY_MR_REG);
	m->peer_id = peer;
	m->addr = addr;
	m->length = len;
	m->usage = usage;
	m->n_segments = 1;
	m->segments = q->segp;
	m->fd_count = 1;
	q->seg[0].length = len;
	return &q->req;
}

Rpmad__Request *
th_req_mr_advise(struct th_req *q, uint64_t mr, uint64_t off, uint64_t len,
		int32_t advice)
{
	Rpmad__MrAdvise *m = th_req_new(q, RPMAD__REQUEST__BODY_MR_ADVISE);
	m->mr_id = mr;
	m->offset = off;
	m->length = len;
	m->advice = advice;
	return &q->req;
}

Rpmad__Request *
th_req_ep_listen(struct th_req *q, uint64_t peer, const char *addr,
		const char *port)
{
	Rpmad__EpListen *m = th_req_new(q, RPMAD__REQUEST__BODY_EP_LISTEN);
	m->peer_id = peer;
	m->addr = str(addr);
	m->port = str(port);
	return &q->req;
}

Rpmad__Request *
th_req_ep_next(struct th_req *q, uint64_t ep)
{
	Rpmad__EpNextConnReq *m =
			th_req_new(q, RPMAD__REQUEST__BODY_EP_NEXT_CONN_REQ);
	m->ep_id = ep;
	m->cfg = &q->cfg;
	return &q->req;
}

Rpmad__Request *
th_req_conn_req_new(struct th_req *q, uint64_t peer, const char *addr,
		const char *port)
{
	Rpmad__ConnReqNew *m = th_req_new(q, RPMAD__REQUEST__BODY_CONN_REQ_NEW);
	m->peer_id = peer;
	m->addr = str(addr);
	m->port = str(port);
	m->cfg = &q->cfg;
	return &q->req;
}

Rpmad__Request *
th_req_connect(struct th_req *q, uint64_t conn, const void *pdata, size_t len)
{
	Rpmad__ConnReqConnect *m =
			th_req_new(q, RPMAD__REQUEST__BODY_CONN_REQ_CONNECT);
	m->conn_id = conn;
	m->private_data.data = (uint8_t *) pdata;
	m->private_data.len = len;
	return &q->req;
}

Rpmad__Request *
th_req_admin(struct th_req *q, Rpmad__AdminQuery__Kind kind)
{
	Rpmad__AdminQuery *m = th_req_new(q, RPMAD__REQUEST__BODY_ADMIN_QUERY);
	m->kind = kind;
	return &q->req;
}
