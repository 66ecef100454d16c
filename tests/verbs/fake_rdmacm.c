// SPDX-License-Identifier: BSD-3-Clause
/*
 * fake_rdmacm.c -- a test double of the librdmacm functions rpmad uses
 *
 * Event channels are pipes (one byte per queued event) so that a loop can
 * watch them. Ids bind to the fake device that owns an address; an active
 * id resolves through another device than the one serving the
 * destination (two "hosts" in one process); rdma_connect finds the
 * listener bound to the destination and queues CONNECT_REQUEST on a new
 * id; accept, reject, disconnect and destroy queue what the other side
 * sees. Private data is padded as on IB: 56 bytes with a request, 196
 * with an accept. Misuse a real library would hang on (destroying an id
 * with unacknowledged events or with its QP) aborts the test.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "fake_internal.h"

#define REQ_PDATA 56
#define REP_PDATA 196
#define REJ_PDATA 148
#define REJ_CONSUMER 28		/* IB_CM_REJ_CONSUMER_DEFINED */
#define REJ_NO_LISTENER 8	/* IB_CM_REJ_INVALID_SERVICE_ID */

struct fake_ev {
	struct rdma_cm_event ev;	/* first: rdma_ack_cm_event finds us */
	uint8_t pdata[256];
	struct fake_id *owner;		/* whose events_completed it counts */
	struct fake_ev *next;
};

struct fake_chan {
	struct rdma_event_channel ch;
	int wfd;
	unsigned ids;
	struct fake_ev *head, *tail;
};

enum fid_state {
	FID_IDLE,
	FID_BOUND,
	FID_ADDR,		/* address resolved */
	FID_ROUTE,		/* route resolved */
	FID_LISTEN,
	FID_CONNECT,		/* active: request sent */
	FID_REQ,		/* passive: request received */
	FID_CONNECTED,
	FID_DISCONNECTED,
};

struct fake_id {
	struct rdma_cm_id id;	/* first */
	struct fake_chan *chan;	/* NULL: synchronous */
	enum fid_state st;
	struct fake_id *remote;
	unsigned unacked;
	struct fake_id *next;
};

static struct fake_id *all_ids;
static uint16_t next_port = 50000;
static bool silent_accepts;	/* fake_cm_silent_accept */

static struct fake_id *
fid(struct rdma_cm_id *id)
{
	return (struct fake_id *)id;
}

static struct ibv_context *
ctx_of(struct fake_dev *d)
{
	return d ? &d->vctx.context : NULL;
}

static struct fake_dev *
dev_of_addr(const struct sockaddr *sa)
{
	if (sa->sa_family != AF_INET)
		return NULL;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	for (unsigned i = 0; i < fake.ndevs; i++) {
		struct fake_dev *d = &fake.devs[i];
		if (!d->removed && d->addr.s_addr == sin->sin_addr.s_addr)
			return d;
	}
	return NULL;
}

static bool
is_wildcard(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET &&
		((const struct sockaddr_in *)ss)->sin_addr.s_addr ==
		htonl(INADDR_ANY);
}

static uint16_t
port_of(const struct sockaddr_storage *ss)
{
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

static void
set_addr(struct sockaddr_storage *ss, struct in_addr a, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	sin->sin_family = AF_INET;
	sin->sin_addr = a;
	sin->sin_port = htons(port);
}

/* ------------------------------------------------------------- events */

static void
queue_event(struct fake_id *f, enum rdma_cm_event_type type, int status,
		const void *pdata, uint8_t len, uint8_t pad_to,
		struct fake_id *listen)
{
	struct fake_chan *c = f->chan;
	if (c == NULL)
		return;	/* synchronous ids answer in the call */
	struct fake_ev *e = calloc(1, sizeof(*e));
	if (e == NULL)
		fake_fail("out of memory");
	e->ev.id = &f->id;
	e->ev.listen_id = listen ? &listen->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	uint8_t total = len > pad_to ? len : pad_to;
	if (total) {
		if (len)
			memcpy(e->pdata, pdata, len);
		e->ev.param.conn.private_data = e->pdata;
		e->ev.param.conn.private_data_len = total;
	}
	e->owner = listen ? listen : f;
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	char b = 1;
	if (write(c->wfd, &b, 1) != 1)
		fake_fail("event channel write: %s", strerror(errno));
}

struct rdma_event_channel *
rdma_create_event_channel(void)
{
	if (fake.absent) {
		errno = ENODEV;
		return NULL;
	}
	struct fake_chan *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC)) {
		free(c);
		return NULL;
	}
	c->ch.fd = p[0];
	c->wfd = p[1];
	fake.counts.event_channels++;
	return &c->ch;
}

void
rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	struct fake_chan *c = (struct fake_chan *)ch;
	if (c->ids)
		fake_fail("destroying an event channel with %u ids", c->ids);
	while (c->head) {
		struct fake_ev *e = c->head;
		c->head = e->next;
		free(e);
	}
	(void) close(c->ch.fd);
	(void) close(c->wfd);
	free(c);
	fake.counts.event_channels--;
}

int
rdma_get_cm_event(struct rdma_event_channel *ch, struct rdma_cm_event **event)
{
	struct fake_chan *c = (struct fake_chan *)ch;
	char b;
	ssize_t n = read(c->ch.fd, &b, 1);
	if (n != 1) {
		if (n == 0)
			errno = EIO;
		return -1;
	}
	struct fake_ev *e = c->head;
	if (e == NULL)
		fake_fail("an event byte without an event");
	c->head = e->next;
	if (c->head == NULL)
		c->tail = NULL;
	e->next = NULL;
	e->owner->unacked++;
	fake.counts.unacked_events++;
	*event = &e->ev;
	return 0;
}

int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct fake_ev *e = (struct fake_ev *)event;
	e->owner->unacked--;
	fake.counts.unacked_events--;
	free(e);
	return 0;
}

const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		"RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR",
		"RDMA_CM_EVENT_ROUTE_RESOLVED", "RDMA_CM_EVENT_ROUTE_ERROR",
		"RDMA_CM_EVENT_CONNECT_REQUEST",
		"RDMA_CM_EVENT_CONNECT_RESPONSE",
		"RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE",
		"RDMA_CM_EVENT_REJECTED", "RDMA_CM_EVENT_ESTABLISHED",
		"RDMA_CM_EVENT_DISCONNECTED", "RDMA_CM_EVENT_DEVICE_REMOVAL",
		"RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR",
		"RDMA_CM_EVENT_ADDR_CHANGE", "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};
	if ((unsigned)event < sizeof(names) / sizeof(names[0]))
		return names[event];
	return "UNKNOWN EVENT";
}

/* ---------------------------------------------------------------- ids */

static struct fake_id *
id_new(struct fake_chan *c, void *context, enum rdma_port_space ps)
{
	struct fake_id *f = calloc(1, sizeof(*f));
	if (f == NULL)
		return NULL;
	f->chan = c;
	f->id.channel = c ? &c->ch : NULL;
	f->id.context = context;
	f->id.ps = ps;
	f->id.qp_type = IBV_QPT_RC;
	if (c)
		c->ids++;
	f->next = all_ids;
	all_ids = f;
	fake.counts.ids++;
	return f;
}

int
rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
		void *context, enum rdma_port_space ps)
{
	if (fake.absent) {
		errno = ENODEV;
		return -1;
	}
	struct fake_id *f = id_new((struct fake_chan *)ch, context, ps);
	if (f == NULL) {
		errno = ENOMEM;
		return -1;
	}
	*id = &f->id;
	return 0;
}

static void
unlink_remote(struct fake_id *f)
{
	if (f->remote)
		f->remote->remote = NULL;
	f->remote = NULL;
}

/* What the other side of f sees when f goes away. */
static void
tell_remote_gone(struct fake_id *f)
{
	struct fake_id *r = f->remote;
	if (r == NULL)
		return;
	switch (f->st) {
	case FID_CONNECTED:
		if (r->st == FID_CONNECTED) {
			r->st = FID_DISCONNECTED;
			queue_event(r, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0,
					0, NULL);
		}
		if (f->id.qp)
			fake_qp_unlink(f->id.qp);
		break;
	case FID_CONNECT:
		/* the request is withdrawn: the passive side gets a REJ */
		if (r->st == FID_REQ)
			queue_event(r, RDMA_CM_EVENT_REJECTED, REJ_CONSUMER,
					NULL, 0, 0, NULL);
		break;
	case FID_REQ:
		if (r->st == FID_CONNECT) {
			r->st = FID_IDLE;
			queue_event(r, RDMA_CM_EVENT_REJECTED, REJ_CONSUMER,
					NULL, 0, REJ_PDATA, NULL);
		}
		break;
	default:
		break;
	}
	unlink_remote(f);
}

static void destroy(struct fake_id *f);

/* Events queued for f go unseen (the kernel drops them with the id). */
static void
drop_events(struct fake_id *f)
{
	struct fake_chan *c = f->chan;
	if (c == NULL)
		return;
	struct fake_id *orphans[64];
	unsigned norphans = 0;
	struct fake_ev *prev = NULL;
	for (struct fake_ev *e = c->head, *next; e; e = next) {
		next = e->next;
		if (e->ev.id != &f->id && e->ev.listen_id != &f->id) {
			prev = e;
			continue;
		}
		if (prev)
			prev->next = next;
		else
			c->head = next;
		if (c->tail == e)
			c->tail = prev;
		char b;
		if (read(c->ch.fd, &b, 1) != 1)
			fake_fail("event channel out of step");
		/* a request nobody will see: its id goes as well */
		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST &&
				e->ev.id != &f->id && norphans < 64)
			orphans[norphans++] = fid(e->ev.id);
		free(e);
	}
	for (unsigned i = 0; i < norphans; i++)
		destroy(orphans[i]);
}

static void
destroy(struct fake_id *f)
{
	tell_remote_gone(f);
	drop_events(f);
	for (struct fake_id **pp = &all_ids; *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	}
	if (f->chan)
		f->chan->ids--;
	free(f);
	fake.counts.ids--;
}

int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct fake_id *f = fid(id);
	if (f->unacked)
		fake_fail("rdma_destroy_id with %u unacknowledged events (a "
				"real one waits forever)", f->unacked);
	if (id->qp)
		fake_fail("rdma_destroy_id with its QP still there");
	destroy(f);
	return 0;
}

int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct fake_id *f = fid(id);
	if (f->st != FID_IDLE || addr->sa_family != AF_INET) {
		errno = EINVAL;
		return -1;
	}
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, addr, sizeof(struct sockaddr_in));
	struct fake_dev *d = NULL;
	if (!is_wildcard(&ss)) {
		d = dev_of_addr(addr);
		if (d == NULL) {
			errno = EADDRNOTAVAIL;
			return -1;
		}
	}
	uint16_t port = port_of(&ss);
	if (port == 0) {
		port = next_port++;
	} else {
		for (struct fake_id *o = all_ids; o; o = o->next) {
			if (o != f && (o->st == FID_BOUND ||
					o->st == FID_LISTEN) &&
					port_of(&o->id.route.addr.src_storage)
					== port) {
				errno = EADDRINUSE;
				return -1;
			}
		}
	}
	struct in_addr a = ((struct sockaddr_in *)&ss)->sin_addr;
	set_addr(&id->route.addr.src_storage, a, port);
	id->verbs = ctx_of(d);
	id->port_num = d ? 1 : 0;
	f->st = FID_BOUND;
	return 0;
}

int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src,
		struct sockaddr *dst, int timeout_ms)
{
	struct fake_id *f = fid(id);
	if ((f->st != FID_IDLE && f->st != FID_BOUND) || dst == NULL ||
			timeout_ms <= 0) {
		errno = EINVAL;
		return -1;
	}
	/* the route leaves through another device: the other "host" */
	struct fake_dev *dd = dev_of_addr(dst);
	struct fake_dev *sd = NULL;
	if (dd) {
		for (unsigned i = 0; i < fake.ndevs && sd == NULL; i++) {
			if (&fake.devs[i] != dd && !fake.devs[i].removed)
				sd = &fake.devs[i];
		}
		if (sd == NULL)
			sd = dd;
	}
	if (src)
		sd = dev_of_addr(src);
	if (sd == NULL) {
		if (f->chan == NULL) {
			errno = ENODEV;
			return -1;
		}
		queue_event(f, RDMA_CM_EVENT_ADDR_ERROR, -ENODEV, NULL, 0, 0,
				NULL);
		return 0;
	}
	set_addr(&id->route.addr.src_storage, sd->addr, next_port++);
	memset(&id->route.addr.dst_storage, 0, sizeof(struct sockaddr_storage));
	memcpy(&id->route.addr.dst_storage, dst, sizeof(struct sockaddr_in));
	id->verbs = ctx_of(sd);
	id->port_num = 1;
	f->st = FID_ADDR;
	queue_event(f, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, 0, 0, NULL);
	return 0;
}

int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct fake_id *f = fid(id);
	if (f->st != FID_ADDR || timeout_ms <= 0) {
		errno = EINVAL;
		return -1;
	}
	f->st = FID_ROUTE;
	queue_event(f, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0, 0, NULL);
	return 0;
}

int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
		struct ibv_qp_init_attr *attr)
{
	if (id->verbs == NULL || pd->context != id->verbs || id->qp) {
		errno = EINVAL;
		return -1;
	}
	struct ibv_qp *qp = fake_qp_create(pd, attr);
	if (qp == NULL)
		return -1;
	id->qp = qp;
	id->pd = pd;
	return 0;
}

void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id->qp)
		(void) fake_qp_destroy(id->qp);
	id->qp = NULL;
}

int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct fake_id *f = fid(id);
	if (f->st != FID_BOUND || f->chan == NULL) {
		errno = EINVAL;
		return -1;
	}
	f->st = FID_LISTEN;
	return 0;
}

static struct fake_id *
find_listener(const struct sockaddr_storage *dst)
{
	const struct sockaddr_in *d = (const struct sockaddr_in *)dst;
	for (struct fake_id *o = all_ids; o; o = o->next) {
		if (o->st != FID_LISTEN)
			continue;
		const struct sockaddr_storage *ls =
			&o->id.route.addr.src_storage;
		const struct sockaddr_in *l = (const struct sockaddr_in *)ls;
		if (l->sin_port == d->sin_port && (is_wildcard(ls) ||
				l->sin_addr.s_addr == d->sin_addr.s_addr))
			return o;
	}
	return NULL;
}

int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct fake_id *f = fid(id);
	if (f->st != FID_ROUTE || param == NULL || id->qp == NULL ||
			param->private_data_len > REQ_PDATA) {
		errno = EINVAL;
		return -1;
	}
	struct fake_id *l = find_listener(&id->route.addr.dst_storage);
	struct fake_dev *dd = dev_of_addr(&id->route.addr.dst_addr);
	if (l == NULL || dd == NULL) {
		queue_event(f, RDMA_CM_EVENT_REJECTED, REJ_NO_LISTENER, NULL, 0,
				0, NULL);
		return 0;
	}
	struct fake_id *c = id_new(l->chan, l->id.context, id->ps);
	if (c == NULL) {
		errno = ENOMEM;
		return -1;
	}
	c->id.verbs = ctx_of(dd);
	c->id.port_num = 1;
	c->id.route.addr.src_storage = id->route.addr.dst_storage;
	c->id.route.addr.dst_storage = id->route.addr.src_storage;
	c->st = FID_REQ;
	c->remote = f;
	f->remote = c;
	f->st = FID_CONNECT;
	queue_event(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, param->private_data,
			param->private_data_len, REQ_PDATA, l);
	return 0;
}

int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct fake_id *f = fid(id);
	uint8_t len = param ? param->private_data_len : 0;
	if (f->st != FID_REQ || id->qp == NULL || len > REP_PDATA) {
		errno = EINVAL;
		return -1;
	}
	if (silent_accepts)
		return 0;	/* the answer is lost: neither side hears */
	struct fake_id *a = f->remote;
	if (a == NULL || a->st != FID_CONNECT || a->id.qp == NULL) {
		/* the active side gave up: the handshake times out */
		f->st = FID_IDLE;
		queue_event(f, RDMA_CM_EVENT_CONNECT_ERROR, -ETIMEDOUT, NULL, 0,
				0, NULL);
		return 0;
	}
	fake_qp_connect(a->id.qp, id->qp);
	a->st = FID_CONNECTED;
	f->st = FID_CONNECTED;
	queue_event(a, RDMA_CM_EVENT_ESTABLISHED, 0,
			param ? param->private_data : NULL, len, REP_PDATA,
			NULL);
	queue_event(f, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0, 0, NULL);
	return 0;
}

void
fake_cm_silent_accept(bool silent)
{
	silent_accepts = silent;
}

int
rdma_reject(struct rdma_cm_id *id, const void *pdata, uint8_t len)
{
	struct fake_id *f = fid(id);
	if (f->st != FID_REQ) {
		errno = EINVAL;
		return -1;
	}
	struct fake_id *a = f->remote;
	if (a && a->st == FID_CONNECT) {
		a->st = FID_IDLE;
		queue_event(a, RDMA_CM_EVENT_REJECTED, REJ_CONSUMER, pdata, len,
				REJ_PDATA, NULL);
	}
	unlink_remote(f);
	f->st = FID_IDLE;
	return 0;
}

int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct fake_id *f = fid(id);
	if (f->st != FID_CONNECTED && f->st != FID_DISCONNECTED) {
		errno = EINVAL;
		return -1;
	}
	/* librdmacm moves the QP to error first */
	if (id->qp) {
		fake_qp_unlink(id->qp);
		struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
		(void) ibv_modify_qp(id->qp, &attr, IBV_QP_STATE);
	}
	if (f->st == FID_CONNECTED) {
		f->st = FID_DISCONNECTED;
		queue_event(f, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0, 0, NULL);
		struct fake_id *r = f->remote;
		if (r && r->st == FID_CONNECTED) {
			r->st = FID_DISCONNECTED;
			queue_event(r, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0,
					0, NULL);
		}
		unlink_remote(f);
	}
	return 0;
}

void
fake_cm_device_removed(struct fake_dev *d)
{
	for (struct fake_id *f = all_ids; f; f = f->next) {
		if (f->id.verbs == ctx_of(d) && f->chan)
			queue_event(f, RDMA_CM_EVENT_DEVICE_REMOVAL, 0, NULL, 0,
					0, NULL);
	}
}

struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **list = calloc(fake.ndevs + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	int n = 0;
	for (unsigned i = 0; i < fake.ndevs; i++) {
		if (!fake.devs[i].removed)
			list[n++] = ctx_of(&fake.devs[i]);
	}
	if (num_devices)
		*num_devices = n;
	return list;
}

void
rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
