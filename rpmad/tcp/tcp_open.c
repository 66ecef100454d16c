// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_open.c -- opening the sockets of a connection over TCP: listening
 * and accepting them (passive), connecting both (active), TLS on each one
 * connected where the attempt offers it, connecting again (without TLS,
 * or with an older wire version), and how long each may take (pairing,
 * connecting); the set-up frames that follow are tcp_handshake.c's
 *
 * The receive engine stands above this file: it reads the sockets opened
 * here and calls down to go on with them (a socket connected, a HELLO
 * closed unanswered). This file reaches the engine only through the
 * handlers it gave once at init, which every new socket gets, as the loop
 * calls them. The set-up frames stand below.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp/tcp.h"

/*
 * Sockets that may be pairing at one endpoint (each gets setup_timeout_ms
 * to say HELLO and find its pair). A new one pushes out the oldest of the
 * host with the most: half-open connections cannot pile up, and a real
 * client, whose two sockets pair within a moment, still gets through a
 * flood of them from elsewhere.
 */
#define PAIRING_MAX 64

/* the receive engine's handlers (tcp_open_init) */
static const struct tcp_engine *engine;

void
tcp_open_init(const struct tcp_engine *e)
{
	engine = e;
}

/* ------------------------------------------------- TLS on a new socket */

/*
 * tcp_tls.c makes a socket's TLS; here a new socket's handshake runs in
 * the loop, holding the socket's events until it ends, and its end tells
 * the connection how to go on. The active side is TLS's client.
 */

/* the first byte of a TLS record that carries a handshake */
#define TLS_HANDSHAKE_RECORD 0x16

/* The handshake ended: the channel goes on, or is given up. */
static void
tls_done(struct tcp_chan *ch, bool ok, const char *why)
{
	struct tcp_conn *tc = ch->tc;
	int i = ch == &tc->chan[0] ? 0 : 1;
	if (ok) {
		(void) snprintf(tc->tls_identity, sizeof(tc->tls_identity),
				"%s", tcp_tls_identity(ch));
		tc->tls = true;
	}
	tcp_tls_end(ch, ok);
	ch->watch.fn = engine->ready;
	if (!tc->passive) {
		tcp_connect_secured(tc, i, ok, why);
		return;
	}
	if (!ok) {
		tcp_conn_log(tc, LOG_NOTICE,
				"tcp: %s:%s: a TLS handshake failed: %s",
				ep_addr(tc->tep->ep), ep_port(tc->tep->ep),
				why);
		tcp_conn_socket_gone(tc);
		return;
	}
	tcp_chan_pause(ch, false);
}

static void
tls_step(struct loop_watch *w, uint32_t events)
{
	(void) events;
	struct tcp_chan *ch = w->arg;
	uint32_t wait;
	char why[512] = "";
	int r = tcp_tls_handshake(ch, &wait, why, sizeof(why));
	if (r > 0) {
		tcp_chan_set_events(ch, wait);
		return;
	}
	tls_done(ch, r == 0, why);
}

/* A handshake on the channel's socket, as client or server. */
static void
tls_start(struct tcp_chan *ch, bool client)
{
	if (tcp_tls_start(ch, client)) {
		/* as a failed handshake: the caller's way of giving up */
		if (client)
			tcp_connect_secured(ch->tc,
					ch == &ch->tc->chan[0] ? 0 : 1, false,
					"out of memory");
		else
			tcp_conn_socket_gone(ch->tc);
		return;
	}
	ch->watch.fn = tls_step;
	tls_step(&ch->watch, 0);
}

/* The first byte of an accepted socket: a TLS record, or rpmad's HELLO. */
static void
sniff(struct loop_watch *w, uint32_t events)
{
	struct tcp_chan *ch = w->arg;
	struct tcp_conn *tc = ch->tc;
	uint8_t b;
	ssize_t n = recv(ch->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	bool again = errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
	if (n < 0 && again)
		return;
	if (n == 1 && b == TLS_HANDSHAKE_RECORD) {
		tls_start(ch, false);
		return;
	}
	if (n == 1 && tcp_tls_mode() == TRANSPORT_TLS_REQUIRED) {
		tcp_conn_log(tc, LOG_NOTICE,
				"tcp: %s:%s: a connection without TLS refused "
				"(tls = required)",
				ep_addr(tc->tep->ep), ep_port(tc->tep->ep));
		tcp_conn_socket_gone(tc);
		return;
	}
	/* plain, or the end: the engine reads it as before */
	ch->watch.fn = engine->ready;
	engine->ready(w, events);
}

/*
 * A socket just accepted: its first byte says TLS or not; a TLS handshake
 * is answered, a plain socket goes on as before (refused with tls =
 * required); the TLS peer's identity is the socket's (tc->tls_identity)
 * before its HELLO is read.
 */
static void
tls_incoming(struct tcp_conn *tc)
{
	if (tcp_tls_mode() == TRANSPORT_TLS_OFF)
		return;
	tc->chan[0].watch.fn = sniff;
}

/* ------------------------------------------------------------ passive */

static void
pairing_timeout(struct loop_timer *t)
{
	struct tcp_conn *tc = t->arg;
	tcp_conn_log(tc, LOG_INFO,
			"tcp: %s:%s: an incoming connection did "
			"not complete its set-up within %u ms; dropped",
			ep_addr(tc->tep->ep), ep_port(tc->tep->ep),
			tcp_env->set.setup_timeout_ms);
	tcp_conn_socket_gone(tc);
}

/* How many of the endpoint's unpaired sockets come from tc's host. */
static unsigned
unpaired_of_host(const struct tcp_ep *tep, const struct tcp_conn *tc)
{
	struct origin mine, theirs;
	origin_of_addr(&tc->remote, &mine);
	unsigned n = 0;
	for (const struct tcp_conn *o = tep->unpaired; o; o = o->pair_next) {
		origin_of_addr(&o->remote, &theirs);
		n += origin_eq(&mine, &theirs);
	}
	return n;
}

/*
 * Room for one more: the oldest unpaired socket of the host that has the
 * most goes (the list is newest first and PAIRING_MAX long).
 */
static void
drop_oldest_unpaired(struct tcp_ep *tep)
{
	struct tcp_conn *victim = NULL;
	unsigned most = 0;
	for (struct tcp_conn *o = tep->unpaired; o; o = o->pair_next) {
		unsigned n = unpaired_of_host(tep, o);
		if (n >= most) {
			most = n;
			victim = o;
		}
	}
	if (victim == NULL)
		return;
	tcp_conn_log(victim, LOG_WARNING, "tcp: %s:%s: %u connections are "
			"setting up at once, %u of them from this host; "
			"dropping its oldest", ep_addr(tep->ep),
			ep_port(tep->ep), tep->n_unpaired, most);
	tcp_conn_unpaired_remove(tep, victim);
	tcp_conn_free(victim);
}

/*
 * Accept failing (rpmad out of descriptors or memory): the listener rests
 * a while instead of waking the loop at once again, and says so at most
 * RATELIMIT_BURST times a window for all endpoints together.
 */
static void
accept_failed(struct tcp_ep *tep, int err)
{
	static struct rlog failures;
	if (failures.about[0] == '\0')
		rlog_init(&failures, "about accepting at endpoints");
	uint64_t ns = backoff_pause(&tep->pause);
	(void) rlog_msg(&failures, LOG_WARNING, "tcp: cannot accept at "
			"%s:%s: %s; trying again in %llu ms", ep_addr(tep->ep),
			ep_port(tep->ep), strerror(err),
			(unsigned long long)(ns / 1000000));
}

static void
listener_ready(struct loop_watch *w, uint32_t events)
{
	struct tcp_ep *tep = w->arg;
	for (;;) {
		struct sockaddr_storage remote;
		socklen_t len = sizeof(remote);
		int fd = accept4(tep->fd, (struct sockaddr *)&remote, &len,
				SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				accept_failed(tep, errno);
			return;
		}
		backoff_reset(&tep->pause);
		if (tep->n_unpaired >= PAIRING_MAX)
			drop_oldest_unpaired(tep);
		struct tcp_conn *tc = tcp_conn_new(engine->rnr_expired);
		if (tc == NULL) {
			(void) close(fd);
			continue;
		}
		(void) tcp_chan_setup_socket(fd);
		tc->passive = true;
		tc->state = TC_PAIRING;
		tc->tep = tep;
		tc->remote = remote;
		tcp_chan_init(&tc->chan[0], tc, fd, engine->ready,
				engine->tx_turn, engine->rx_turn);
		/* TLS or not: its first byte says (tls = on, required) */
		tls_incoming(tc);
		tcp_chan_pause(&tc->chan[0], false);
		tc->pair_next = tep->unpaired;
		tep->unpaired = tc;
		tep->n_unpaired++;
		tc->timer.fn = pairing_timeout;
		loop_timer_arm(tcp_env->loop, &tc->timer,
				(uint64_t) tcp_env->set.setup_timeout_ms *
						1000000);
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
	/* in the client's network namespace (netns.h) */
	tep->fd = netns_socket(ep_netns(ep), ss->ss_family, SOCK_STREAM |
			SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (tep->fd < 0) {
		errno = -tep->fd;
		goto err_errno;
	}
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
	backoff_init(&tep->pause, tcp_env->loop, &tep->watch, EPOLLIN);
	if (loop_add(tcp_env->loop, &tep->watch, EPOLLIN)) {
		ret = -EIO;
		(void) snprintf(err, errlen, "cannot watch the listener");
		goto err;
	}
	ep_set_tp(ep, tep);
	return 0;

err_errno:
	ret = -errno;
	(void) snprintf(err, errlen, "cannot listen at %s:%s: %s", ep_addr(ep),
			ep_port(ep), strerror(errno));
err:
	if (tep->fd >= 0)
		(void) close(tep->fd);
	free(tep);
	return ret;
}

void
tcp_unlisten(struct ep *ep)
{
	struct tcp_ep *tep = ep_tp(ep);
	if (tep == NULL)
		return;
	backoff_cancel(&tep->pause);
	loop_del(tcp_env->loop, &tep->watch);
	(void) close(tep->fd);
	while (tep->unpaired) {
		struct tcp_conn *tc = tep->unpaired;
		tep->unpaired = tc->pair_next;
		tcp_conn_free(tc);
	}
	free(tep);
	ep_set_tp(ep, NULL);
}

/* ------------------------------------------------------------- active */

static void
connect_timeout(struct loop_timer *t)
{
	struct tcp_conn *tc = t->arg;
	if (tc->state != TC_CONNECTING)
		return;
	conn_log(tc->conn, LOG_INFO, "tcp: connection qp %u: %s did not "
			"answer within %u ms",
			conn_qp_num(tc->conn), conn_remote_name(tc->conn),
			conn_timeout_ms(tc->conn));
	tcp_chan_close(&tc->chan[0], true);
	tcp_chan_close(&tc->chan[1], true);
	tcp_conn_over(tc, CONN_END_UNREACHABLE);
}

/*
 * Both sockets of an active connection, connecting. 0 (also when a
 * connect was refused at once: the connection is over then), or a
 * negative errno with `err` saying why.
 */
static int
start_connects(struct tcp_conn *tc, char *err, size_t errlen)
{
	struct conn *conn = tc->conn;
	socklen_t remote_len;
	const struct sockaddr_storage *remote = conn_remote(conn, &remote_len);
	tc->tls_attempt = tcp_tls_mode() != TRANSPORT_TLS_OFF &&
			!tc->tls_fell_back;
	for (int i = 0; i < 2; i++) {
		/* in the client's network namespace (netns.h) */
		int fd = netns_socket(conn_netns(conn), remote->ss_family,
				SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			int e = -fd;
			(void) snprintf(err, errlen, "socket: %s",
					strerror(e));
			return -e;
		}
		(void) tcp_chan_setup_socket(fd);
		tcp_chan_init(&tc->chan[i], tc, fd, engine->ready,
				engine->tx_turn, engine->rx_turn);
		if (connect(fd, (const struct sockaddr *)remote, remote_len) &&
				errno != EINPROGRESS) {
			/* refused at once (loopback): the event says so */
			int e = errno;
			conn_log(conn, LOG_INFO, "tcp: connection qp %u: "
					"cannot connect to "
					"%s: %s", conn_qp_num(conn),
					conn_remote_name(conn), strerror(e));
			tcp_chan_close(&tc->chan[0], true);
			tcp_chan_close(&tc->chan[1], true);
			tcp_conn_over(tc, tcp_connect_outcome(tc, e));
			return 0;
		}
		tc->chan[i].events = EPOLLOUT;
		if (loop_add(tcp_env->loop, &tc->chan[i].watch, EPOLLOUT)) {
			(void) snprintf(err, errlen, "cannot watch a socket");
			return -EIO;
		}
	}
	tcp_conn_set_tenant(tc);
	uint32_t ms = conn_timeout_ms(conn);
	if (ms == 0)
		ms = RPMA_DEFAULT_TIMEOUT_MS;
	tc->timer.fn = connect_timeout;
	loop_timer_arm(tcp_env->loop, &tc->timer, (uint64_t) ms * 1000000);
	return 0;
}

int
tcp_connect(struct conn *conn, const void *pdata, uint8_t pdata_len,
		char *err, size_t errlen)
{
	struct tcp_conn *tc = tcp_conn_new(engine->rnr_expired);
	if (tc == NULL) {
		(void) snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	tc->conn = conn;
	conn_set_tp(conn, tc);
	tc->state = TC_CONNECTING;
	tc->wire_version = TCP_WIRE_VERSION;
	tc->ini = &tc->chan[0];
	tc->tgt = &tc->chan[1];
	random_bytes(tc->token, sizeof(tc->token));
	if (pdata_len)	/* no private data may come as a NULL pointer */
		memcpy(tc->pdata, pdata, pdata_len);
	tc->pdata_len = pdata_len;
	socklen_t remote_len;
	tc->remote = *conn_remote(conn, &remote_len);
	return start_connects(tc, err, errlen);
}

bool
tcp_connect_plain(struct tcp_conn *tc, const char *why)
{
	if (tc->passive || tc->tls_fell_back ||
			tcp_tls_mode() != TRANSPORT_TLS_ON)
		return false;
	conn_log(tc->conn, LOG_INFO, "tcp: connection qp %u: %s did not take "
			"TLS (%s): connecting again without it (tls = on)",
			conn_qp_num(tc->conn), conn_remote_name(tc->conn), why);
	loop_timer_cancel(tcp_env->loop, &tc->timer);
	for (int i = 0; i < 2; i++) {
		tcp_chan_forget_dirty(&tc->chan[i]);
		tcp_chan_close(&tc->chan[i], true);
		tc->connected[i] = false;
	}
	tc->tls_fell_back = true;
	tc->state = TC_CONNECTING;
	char err[128];
	if (start_connects(tc, err, sizeof(err))) {
		conn_log(tc->conn, LOG_INFO, "tcp: connection qp %u: %s",
				conn_qp_num(tc->conn), err);
		tcp_chan_close(&tc->chan[0], true);
		tcp_chan_close(&tc->chan[1], true);
		tcp_conn_over(tc, RPMA_CONN_REJECTED);
	}
	return true;
}

bool
tcp_connect_older(struct tcp_conn *tc)
{
	if (tc->passive || tc->offered_older ||
			tc->wire_version <= TCP_WIRE_VERSION_MIN ||
			(!tc->connected[0] && !tc->connected[1]))
		return false;
	tcp_conn_log(tc, LOG_INFO, "tcp: connection qp %u: %s closed the "
			"HELLO of wire version %u unanswered: connecting again "
			"with version %u, for an rpmad not yet upgraded",
			conn_qp_num(tc->conn), conn_remote_name(tc->conn),
			tc->wire_version, tc->wire_version - 1);
	loop_timer_cancel(tcp_env->loop, &tc->timer);
	for (int i = 0; i < 2; i++) {
		tcp_chan_forget_dirty(&tc->chan[i]);
		tcp_chan_close(&tc->chan[i], true);
		tc->connected[i] = false;
	}
	tc->wire_version--;
	tc->offered_older = true;
	tc->state = TC_CONNECTING;
	char err[128];
	if (start_connects(tc, err, sizeof(err))) {
		conn_log(tc->conn, LOG_INFO, "tcp: connection qp %u: %s",
				conn_qp_num(tc->conn),
				err);
		tcp_chan_close(&tc->chan[0], true);
		tcp_chan_close(&tc->chan[1], true);
		tcp_conn_over(tc, RPMA_CONN_REJECTED);
	}
	return true;
}

void
tcp_connect_done(struct tcp_conn *tc, int i)
{
	int err = 0;
	socklen_t len = sizeof(err);
	if (getsockopt(tc->chan[i].fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	if (err == 0 && tc->tls_attempt) {
		/* TLS first; its end goes on in tcp_connect_secured() */
		tls_start(&tc->chan[i], true);
		return;
	}
	tcp_channel_up(tc, i, err);
}

void
tcp_connect_secured(struct tcp_conn *tc, int i, bool ok, const char *why)
{
	if (ok) {
		tcp_channel_up(tc, i, 0);
		return;
	}
	/* tls = on: an rpmad without TLS (or without our key) gets plain */
	if (tcp_connect_plain(tc, why))
		return;
	conn_log(tc->conn, LOG_NOTICE,
			"tcp: connection qp %u: %s refused "
			"TLS with this rpmad's key: %s%s",
			conn_qp_num(tc->conn), conn_remote_name(tc->conn), why,
			tcp_tls_mode() == TRANSPORT_TLS_REQUIRED ?
					" (tls = required)" :
					"");
	tcp_chan_close(&tc->chan[0], true);
	tcp_chan_close(&tc->chan[1], true);
	tcp_conn_over(tc, RPMA_CONN_REJECTED);
}
