// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_setup.c -- setting connections up over TCP: listening and pairing
 * the two sockets of each incoming connection, connecting both sockets of
 * an outgoing one, and the ACCEPT / REJECT / READY exchange
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"
#include "daemon.h"
#include "ep.h"
#include "log.h"
#include "registry.h"
#include "tcp_chan.h"
#include "tcp_conn.h"
#include "tcp_internal.h"
#include "transport_tcp.h"

/* How long an accepted socket may take to say HELLO and find its pair. */
#define PAIRING_TIMEOUT_NS (5 * 1000 * 1000 * 1000ull)
/*
 * Sockets that may be pairing at one endpoint. A new one pushes out the
 * oldest: half-open connections cannot pile up, and a real client, whose
 * two sockets pair within a moment, still gets through a flood of them.
 */
#define PAIRING_MAX 64

/* ------------------------------------------------------------ passive */

static void
pairing_timeout(struct loop_timer *t)
{
	struct tcp_conn *tc = t->arg;
	log_info("tcp: an incoming connection did not complete its set-up "
			"in time");
	tcp_conn_socket_gone(tc);
}

/* Moves the socket of `from` (its only one) to be `to`'s secondary. */
static void
adopt_socket(struct tcp_conn *to, struct tcp_conn *from)
{
	tcp_chan_move(&to->chan[1], to, &from->chan[0]);
	tcp_chan_pause(&to->chan[1], false);
}

/*
 * Both sockets are here: the request goes to the endpoint's queue.
 * Returns -1 when it could not (tc is freed then).
 */
static int
publish(struct tcp_conn *tc)
{
	struct tcp_ep *tep = tc->tep;
	tcp_conn_unpaired_remove(tep, tc);
	loop_timer_cancel(rpmad.loop, &tc->timer);
	tc->tgt = &tc->chan[0];
	tc->ini = &tc->chan[1];
	tc->state = TC_WAITING;

	struct incoming *inc = calloc(1, sizeof(*inc));
	if (inc == NULL) {
		tcp_conn_free(tc);
		return -1;
	}
	inc->tp_state = tc;
	memcpy(inc->pdata, tc->pdata, tc->pdata_len);
	inc->pdata_len = tc->pdata_len;
	socklen_t len = sizeof(inc->local);
	(void) getsockname(tc->chan[0].fd, (struct sockaddr *)&inc->local,
			&len);
	inc->remote_len = sizeof(inc->remote);
	(void) getpeername(tc->chan[0].fd, (struct sockaddr *)&inc->remote,
			&inc->remote_len);
	tc->inc = inc;
	tc->tep = NULL;
	if (ep_incoming(tep->ep, inc)) {
		transport_tcp.incoming_drop(inc, true);
		return -1;
	}
	return 0;
}

static struct tcp_conn *
find_partner(struct tcp_ep *tep, const struct tcp_conn *tc, uint8_t role)
{
	for (struct tcp_conn *o = tep->unpaired; o; o = o->pair_next) {
		if (o != tc && o->role == role &&
				memcmp(o->token, tc->token, TCP_TOKEN_SIZE) == 0)
			return o;
	}
	return NULL;
}

/* The HELLO of an accepted socket. Returns -1 when tc was freed. */
static int
hello_received(struct tcp_conn *tc, const struct tcp_frame *f,
		const uint8_t *payload)
{
	struct tcp_hello h;
	if (tc->state != TC_PAIRING || tc->role != 0 ||
			tcp_hello_decode(payload, f->length, &h)) {
		tcp_conn_violation(tc, "bad HELLO");
		return -1;
	}
	tc->role = h.role;
	memcpy(tc->token, h.token, TCP_TOKEN_SIZE);

	struct tcp_ep *tep = tc->tep;
	if (h.role == HELLO_PRIMARY) {
		memcpy(tc->pdata, payload + TCP_HELLO_SIZE, h.pdata_len);
		tc->pdata_len = h.pdata_len;
		/* a client of this very rpmad: no need for the sockets' data */
		tcp_conn_pair_local(tc);
		struct tcp_conn *sec = find_partner(tep, tc, HELLO_SECONDARY);
		if (sec) {
			adopt_socket(tc, sec);
			tcp_conn_unpaired_remove(tep, sec);
			tcp_conn_free(sec);
			return publish(tc);
		}
		return 0;
	}
	struct tcp_conn *prim = find_partner(tep, tc, HELLO_PRIMARY);
	if (prim) {
		adopt_socket(prim, tc);
		tcp_conn_unpaired_remove(tep, tc);
		tcp_conn_free(tc);
		(void) publish(prim);
		return -1;	/* this channel now belongs to prim */
	}
	return 0;
}

static void
drop_oldest_unpaired(struct tcp_ep *tep)
{
	struct tcp_conn *oldest = tep->unpaired;
	while (oldest && oldest->pair_next)
		oldest = oldest->pair_next;
	if (oldest == NULL)
		return;
	if (!tep->warned_full)
		log_warning("tcp: %s:%s: %u connections are setting up at once; "
				"dropping the oldest", tep->ep->addr,
				tep->ep->port, tep->n_unpaired);
	tep->warned_full = true;
	tcp_conn_unpaired_remove(tep, oldest);
	tcp_conn_free(oldest);
}

static void
listener_ready(struct loop_watch *w, uint32_t events)
{
	struct tcp_ep *tep = w->arg;
	for (;;) {
		int fd = accept4(tep->fd, NULL, NULL,
				SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				log_warning("tcp: accept at %s:%s: %s",
						tep->ep->addr, tep->ep->port,
						strerror(errno));
			return;
		}
		if (tep->n_unpaired >= PAIRING_MAX)
			drop_oldest_unpaired(tep);
		struct tcp_conn *tc = tcp_conn_new(tcp_target_rnr_expired);
		if (tc == NULL) {
			(void) close(fd);
			continue;
		}
		(void) tcp_chan_setup_socket(fd);
		tc->passive = true;
		tc->state = TC_PAIRING;
		tc->tep = tep;
		tcp_chan_init(&tc->chan[0], tc, fd, tcp_chan_ready);
		tcp_chan_pause(&tc->chan[0], false);
		tc->pair_next = tep->unpaired;
		tep->unpaired = tc;
		tep->n_unpaired++;
		tc->timer.fn = pairing_timeout;
		loop_timer_arm(rpmad.loop, &tc->timer, PAIRING_TIMEOUT_NS);
	}
}

int
tcp_listen(struct ep *ep, const struct sockaddr_storage *ss, socklen_t len,
		char *err, size_t errlen)
{
	struct tcp_ep *tep = calloc(1, sizeof(*tep));
	if (tep == NULL) {
		(void) snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	int ret;
	tep->fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK |
			SOCK_CLOEXEC, 0);
	if (tep->fd < 0)
		goto err_errno;
	int one = 1;
	(void) setsockopt(tep->fd, SOL_SOCKET, SO_REUSEADDR, &one,
			sizeof(one));
	/* two sockets make one request; EP_BACKLOG requests may wait */
	if (bind(tep->fd, (const struct sockaddr *)ss, len) ||
			listen(tep->fd, 2 * EP_BACKLOG))
		goto err_errno;
	tep->ep = ep;
	tep->watch.fd = tep->fd;
	tep->watch.fn = listener_ready;
	tep->watch.arg = tep;
	if (loop_add(rpmad.loop, &tep->watch, EPOLLIN)) {
		ret = -EIO;
		(void) snprintf(err, errlen, "cannot watch the listener");
		goto err;
	}
	ep->tp_ep = tep;
	return 0;

err_errno:
	ret = -errno;
	(void) snprintf(err, errlen, "cannot listen at %s:%s: %s", ep->addr,
			ep->port, strerror(errno));
err:
	if (tep->fd >= 0)
		(void) close(tep->fd);
	free(tep);
	return ret;
}

void
tcp_unlisten(struct ep *ep)
{
	struct tcp_ep *tep = ep->tp_ep;
	if (tep == NULL)
		return;
	loop_del(rpmad.loop, &tep->watch);
	(void) close(tep->fd);
	while (tep->unpaired) {
		struct tcp_conn *tc = tep->unpaired;
		tep->unpaired = tc->pair_next;
		tcp_conn_free(tc);
	}
	free(tep);
	ep->tp_ep = NULL;
}

/* ------------------------------------------------------------- active */

static void
connect_timeout(struct loop_timer *t)
{
	struct tcp_conn *tc = t->arg;
	if (tc->state != TC_CONNECTING)
		return;
	log_info("tcp: connection qp %u: %s did not answer within %u ms",
			tc->conn->qp_num, tc->conn->remote_name,
			tc->conn->timeout_ms);
	tcp_chan_close(&tc->chan[0], true);
	tcp_chan_close(&tc->chan[1], true);
	tcp_conn_over(tc, CONN_END_UNREACHABLE);
}

enum rpma_conn_event
tcp_connect_outcome(int err)
{
	/* a refused connect is a host without a listener there */
	return err == ECONNREFUSED ? CONN_END_REFUSED : CONN_END_UNREACHABLE;
}

static int
send_hello(struct tcp_conn *tc, int i)
{
	struct tcp_hello h = {
		.magic = TCP_WIRE_MAGIC,
		.version = TCP_WIRE_VERSION,
		.role = i == 0 ? HELLO_PRIMARY : HELLO_SECONDARY,
		.pdata_len = i == 0 ? tc->pdata_len : 0,
		.qp_num = tc->conn->qp_num,
	};
	memcpy(h.token, tc->token, TCP_TOKEN_SIZE);
	uint8_t buf[TCP_HELLO_SIZE + TCP_PDATA_MAX];
	tcp_hello_encode(&h, buf);
	memcpy(buf + TCP_HELLO_SIZE, tc->pdata, h.pdata_len);
	struct tcp_frame f = {
		.type = TF_HELLO,
		.length = TCP_HELLO_SIZE + h.pdata_len,
	};
	if (tcp_chan_send(&tc->chan[i], &f, buf, f.length, NULL, NULL))
		return -1;
	tcp_chan_mark_dirty(&tc->chan[i]);
	return 0;
}

void
tcp_connect_done(struct tcp_conn *tc, int i)
{
	int err = 0;
	socklen_t len = sizeof(err);
	if (getsockopt(tc->chan[i].fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	if (err == 0 && send_hello(tc, i))
		err = ENOMEM;
	if (err) {
		log_info("tcp: connection qp %u: cannot connect to %s: %s",
				tc->conn->qp_num, tc->conn->remote_name,
				strerror(err));
		tcp_chan_close(&tc->chan[0], true);
		tcp_chan_close(&tc->chan[1], true);
		tcp_conn_over(tc, err == ENOMEM ? RPMA_CONN_LOST :
				tcp_connect_outcome(err));
		return;
	}
	tc->connected[i] = true;
	tcp_chan_pause(&tc->chan[i], false);
	if (tc->connected[0] && tc->connected[1]) {
		/* reachable: from now on it is up to the server's application */
		loop_timer_cancel(rpmad.loop, &tc->timer);
		tc->state = TC_HELLO;
		struct sockaddr_storage local;
		socklen_t llen = sizeof(local);
		if (getsockname(tc->chan[0].fd, (struct sockaddr *)&local,
				&llen) == 0)
			conn_set_names(tc->conn, &local, NULL);
	}
}

int
tcp_connect(struct conn *conn, const void *pdata, uint8_t pdata_len,
		char *err, size_t errlen)
{
	struct tcp_conn *tc = tcp_conn_new(tcp_target_rnr_expired);
	if (tc == NULL) {
		(void) snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	tc->conn = conn;
	conn->tp_conn = tc;
	tc->state = TC_CONNECTING;
	tc->ini = &tc->chan[0];
	tc->tgt = &tc->chan[1];
	registry_random_bytes(tc->token, sizeof(tc->token));
	if (pdata_len)	/* no private data may come as a NULL pointer */
		memcpy(tc->pdata, pdata, pdata_len);
	tc->pdata_len = pdata_len;

	for (int i = 0; i < 2; i++) {
		int fd = socket(conn->remote.ss_family, SOCK_STREAM |
				SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			(void) snprintf(err, errlen, "socket: %s",
					strerror(errno));
			return -errno;
		}
		(void) tcp_chan_setup_socket(fd);
		tcp_chan_init(&tc->chan[i], tc, fd, tcp_chan_ready);
		if (connect(fd, (struct sockaddr *)&conn->remote,
				conn->remote_len) && errno != EINPROGRESS) {
			/* refused at once (loopback): the event says so */
			int e = errno;
			log_info("tcp: connection qp %u: cannot connect to "
					"%s: %s", conn->qp_num,
					conn->remote_name, strerror(e));
			tcp_chan_close(&tc->chan[0], true);
			tcp_chan_close(&tc->chan[1], true);
			tcp_conn_over(tc, tcp_connect_outcome(e));
			return 0;
		}
		tc->chan[i].events = EPOLLOUT;
		if (loop_add(rpmad.loop, &tc->chan[i].watch, EPOLLOUT)) {
			(void) snprintf(err, errlen, "cannot watch a socket");
			return -EIO;
		}
	}
	uint32_t ms = conn->timeout_ms ? conn->timeout_ms :
		RPMA_DEFAULT_TIMEOUT_MS;
	tc->timer.fn = connect_timeout;
	loop_timer_arm(rpmad.loop, &tc->timer, (uint64_t)ms * 1000000);
	return 0;
}

/* --------------------------------------------------------- set-up frames */

int
tcp_setup_frame(struct tcp_conn *tc, struct tcp_chan *ch,
		const struct tcp_frame *f, const uint8_t *payload)
{
	switch (f->type) {
	case TF_HELLO:
		return hello_received(tc, f, payload);
	case TF_ACCEPT:
		if (tc->passive || tc->state != TC_HELLO)
			break;
		struct tcp_frame ready = { .type = TF_READY };
		if (tcp_chan_send(&tc->chan[0], &ready, NULL, 0, NULL, NULL)) {
			tcp_conn_over(tc, RPMA_CONN_LOST);
			return 0;
		}
		tcp_chan_mark_dirty(&tc->chan[0]);
		tc->state = TC_ESTABLISHED;
		tcp_conn_start_heartbeat(tc);
		conn_established(tc->conn, payload, (uint8_t)f->length, true);
		return 0;
	case TF_REJECT:
		if (tc->passive || tc->state != TC_HELLO)
			break;
		tcp_conn_over(tc, RPMA_CONN_REJECTED);
		return 0;
	case TF_READY:
		if (!tc->passive || tc->state != TC_ACCEPTED)
			break;
		tc->state = TC_ESTABLISHED;
		tcp_conn_start_heartbeat(tc);
		conn_established(tc->conn, NULL, 0, false);
		return 0;
	default:
		break;
	}
	bool adopted = tc->conn != NULL;
	tcp_conn_violation(tc, "unexpected set-up frame");
	return adopted ? 0 : -1;
}
