// SPDX-License-Identifier: BSD-3-Clause
/*
 * late.c -- requests the library stopped waiting for, and their answers
 * (see late.h)
 */

#include <stdatomic.h>
#include <string.h>

#include "ctl_socket.h"
#include "late.h"

/* A request whose answer did not come in time. */
struct pending {
	uint64_t id;
	Rpmad__Request__BodyCase body;
	uint64_t conn_id;	/* CONN_NEXT_EVENT: the connection asked */
};

/* What a late answer made, to be deleted. */
struct undo {
	Rpmad__Request__BodyCase body;	/* the delete */
	uint64_t id;			/* of the object */
};

/*
 * The three lists share LATE_MAX places: an answer turns a pending request
 * into an undo or a kept event, an undo sent becomes a pending request.
 */
static struct {
	struct pending pending[LATE_MAX];
	unsigned npending;
	struct undo undo[LATE_MAX];
	unsigned nundo;
	struct late_event events[LATE_MAX];
	unsigned nevents;
	/* events asked for and not answered, and events kept */
	_Atomic unsigned owed;
} late;

bool
late_full(void)
{
	return late.npending + late.nundo + late.nevents >= LATE_MAX;
}

void
late_add(const Rpmad__Request *req)
{
	if (late_full())
		return;
	struct pending *p = &late.pending[late.npending++];
	p->id = req->id;
	p->body = req->body_case;
	p->conn_id = 0;
	if (p->body == RPMAD__REQUEST__BODY_CONN_NEXT_EVENT) {
		p->conn_id = req->conn_next_event->conn_id;
		atomic_fetch_add(&late.owed, 1);
	}
}

static void
want_undone(Rpmad__Request__BodyCase body, uint64_t id)
{
	late.undo[late.nundo++] = (struct undo){ .body = body, .id = id };
}

static void
keep_event(uint64_t conn_id, const Rpmad__ConnEvent *e)
{
	struct late_event *ev = &late.events[late.nevents++];
	memset(ev, 0, sizeof(*ev));
	ev->conn_id = conn_id;
	ev->event = e->event;
	ev->has_pdata = e->has_private_data;
	size_t len = e->private_data.len;
	if (len > sizeof(ev->pdata))
		len = sizeof(ev->pdata);
	if (len)
		memcpy(ev->pdata, e->private_data.data, len);
	ev->pdata_len = (uint8_t)len;
	atomic_fetch_add(&late.owed, 1);
}

/* What a successful late answer to `p` needs done. */
static void
put_right(const struct pending *p, const Rpmad__Response *resp)
{
	switch (p->body) {
	case RPMAD__REQUEST__BODY_PEER_NEW:
		if (resp->body_case == RPMAD__RESPONSE__BODY_PEER)
			want_undone(RPMAD__REQUEST__BODY_PEER_DELETE,
					resp->peer->peer_id);
		break;
	case RPMAD__REQUEST__BODY_MR_REG:
		if (resp->body_case == RPMAD__RESPONSE__BODY_MR)
			want_undone(RPMAD__REQUEST__BODY_MR_DEREG,
					resp->mr->mr_id);
		break;
	case RPMAD__REQUEST__BODY_EP_LISTEN:
		if (resp->body_case == RPMAD__RESPONSE__BODY_EP)
			want_undone(RPMAD__REQUEST__BODY_EP_SHUTDOWN,
					resp->ep->ep_id);
		break;
	case RPMAD__REQUEST__BODY_CONN_REQ_NEW:
	case RPMAD__REQUEST__BODY_EP_NEXT_CONN_REQ:
		/* an incoming one is rejected: its client may try again */
		if (resp->body_case == RPMAD__RESPONSE__BODY_QP)
			want_undone(RPMAD__REQUEST__BODY_CONN_REQ_DELETE,
					resp->qp->conn_id);
		break;
	case RPMAD__REQUEST__BODY_CONN_NEXT_EVENT:
		if (resp->body_case == RPMAD__RESPONSE__BODY_EVENT)
			keep_event(p->conn_id, resp->event);
		break;
	default:
		/*
		 * Deletes, connecting (the delete the library sent after it
		 * gave up comes after it), device lookups, advice: nothing
		 */
		break;
	}
}

bool
late_answer(void *arg, Rpmad__Response *resp, int *fds, unsigned nfds)
{
	(void) arg;
	unsigned i;
	for (i = 0; i < late.npending; i++)
		if (late.pending[i].id == resp->id)
			break;
	if (i == late.npending)
		return false;

	struct pending p = late.pending[i];
	memmove(&late.pending[i], &late.pending[i + 1],
			(late.npending - i - 1) * sizeof(late.pending[0]));
	late.npending--;
	if (p.body == RPMAD__REQUEST__BODY_CONN_NEXT_EVENT)
		atomic_fetch_sub(&late.owed, 1);
	if (resp->error == NULL)
		put_right(&p, resp);
	/* nothing it carried is the application's: no object has it */
	ctl_close_fds(fds, nfds);
	rpmad__response__free_unpacked(resp, NULL);
	return true;
}

bool
late_undo_next(struct late_undo *u)
{
	if (late.nundo == 0)
		return false;
	const struct undo *d = &late.undo[0];
	rpmad__request__init(&u->req);
	u->req.body_case = d->body;
	switch (d->body) {
	case RPMAD__REQUEST__BODY_PEER_DELETE:
		rpmad__peer_delete__init(&u->body.peer);
		u->body.peer.peer_id = d->id;
		u->req.peer_delete = &u->body.peer;
		break;
	case RPMAD__REQUEST__BODY_MR_DEREG:
		rpmad__mr_dereg__init(&u->body.mr);
		u->body.mr.mr_id = d->id;
		u->req.mr_dereg = &u->body.mr;
		break;
	case RPMAD__REQUEST__BODY_EP_SHUTDOWN:
		rpmad__ep_shutdown__init(&u->body.ep);
		u->body.ep.ep_id = d->id;
		u->req.ep_shutdown = &u->body.ep;
		break;
	default:
		rpmad__conn_req_delete__init(&u->body.conn_req);
		u->body.conn_req.conn_id = d->id;
		u->req.conn_req_delete = &u->body.conn_req;
		break;
	}
	return true;
}

void
late_undo_sent(void)
{
	memmove(&late.undo[0], &late.undo[1],
			(late.nundo - 1) * sizeof(late.undo[0]));
	late.nundo--;
}

unsigned
late_events_owed(void)
{
	return atomic_load(&late.owed);
}

int
late_event_take(uint64_t conn_id, struct late_event *ev)
{
	for (unsigned i = 0; i < late.nevents; i++) {
		if (late.events[i].conn_id != conn_id)
			continue;
		*ev = late.events[i];
		memmove(&late.events[i], &late.events[i + 1],
				(late.nevents - i - 1) * sizeof(late.events[0]));
		late.nevents--;
		atomic_fetch_sub(&late.owed, 1);
		return 1;
	}
	for (unsigned i = 0; i < late.npending; i++)
		if (late.pending[i].body ==
				RPMAD__REQUEST__BODY_CONN_NEXT_EVENT &&
				late.pending[i].conn_id == conn_id)
			return -1;
	return 0;
}

void
late_event_forget(uint64_t conn_id)
{
	struct late_event ev;
	while (late_event_take(conn_id, &ev) == 1)
		;
	/* answers still to come: dropped when they do */
	for (unsigned i = 0; i < late.npending; i++) {
		struct pending *p = &late.pending[i];
		if (p->body == RPMAD__REQUEST__BODY_CONN_NEXT_EVENT &&
				p->conn_id == conn_id) {
			p->body = RPMAD__REQUEST__BODY__NOT_SET;
			atomic_fetch_sub(&late.owed, 1);
		}
	}
}

void
late_reset(void)
{
	late.npending = 0;
	late.nundo = 0;
	late.nevents = 0;
	atomic_store(&late.owed, 0);
}
