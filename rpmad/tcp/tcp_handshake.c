// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_handshake.c -- the set-up frames of a connection over TCP: HELLO on
 * each new socket, which pairs the two sockets of an incoming connection
 * and hands it to its endpoint; the core's answer to it (adopt, accept,
 * reject, drop); and the ACCEPT / REJECT / READY exchange that follows
 *
 * The sockets come from tcp_open.c, the frames from the receive engine;
 * both stand above this file.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "le_bytes.h"
#include "tcp/tcp.h"

/* ------------------------------------------------------------ passive */

/* Moves the socket of `from` (its only one) to be `to`'s secondary. */
static void
adopt_socket(struct tcp_conn *to, struct tcp_conn *from)
{
	tcp_chan_move(&to->chan[1], to, &from->chan[0]);
	tcp_chan_pause(&to->chan[1], false);
}

/*
 * Both sockets are here: the request goes to the endpoint's queue.
 * Returns 0, or a negative errno when it could not (tc is freed then).
 */
static int
publish(struct tcp_conn *tc)
{
	struct tcp_ep *tep = tc->tep;
	tcp_conn_unpaired_remove(tep, tc);
	loop_timer_cancel(tcp_env->loop, &tc->timer);
	tc->tgt = &tc->chan[0];
	tc->ini = &tc->chan[1];
	tc->state = TC_WAITING;

	struct incoming *inc = calloc(1, sizeof(*inc));
	if (inc == NULL) {
		tcp_conn_free(tc);
		return -ENOMEM;
	}
	inc->tp_state = tc;
	memcpy(inc->pdata, tc->pdata, tc->pdata_len);
	inc->pdata_len = tc->pdata_len;
	socklen_t len = sizeof(inc->local);
	(void) tcp_chan_local_addr(&tc->chan[0], &inc->local, &len);
	inc->remote_len = sizeof(inc->remote);
	(void) tcp_chan_peer_addr(&tc->chan[0], &inc->remote,
			&inc->remote_len);
	/* from a client of this rpmad: that user's doing */
	if (tc->local_peer && tc->local_peer->conn) {
		inc->from_local = true;
		inc->from_uid = conn_uid(tc->local_peer->conn);
	}
	tc->inc = inc;
	tc->tep = NULL;
	int ret = ep_incoming(tep->ep, inc);
	if (ret) {
		tcp_incoming_drop(inc, true);
		return ret;
	}
	return 0;
}

static struct tcp_conn *
find_partner(struct tcp_ep *tep, const struct tcp_conn *tc, uint8_t role)
{
	for (struct tcp_conn *o = tep->unpaired; o; o = o->pair_next) {
		/* a token pairs sockets of one authenticated peer only */
		if (o != tc && o->role == role &&
				o->wire_version == tc->wire_version &&
				o->tls == tc->tls && strcmp(o->tls_identity,
					tc->tls_identity) == 0 &&
				memcmp(o->token, tc->token, TCP_TOKEN_SIZE) == 0)
			return o;
	}
	return NULL;
}

/* The HELLO of an accepted socket. Returns false when tc was freed. */
static bool
hello_received(struct tcp_conn *tc, const struct tcp_frame *f,
		const uint8_t *payload)
{
	struct tcp_hello h;
	if (tc->state != TC_PAIRING || tc->role != 0) {
		tcp_conn_violation(tc, "bad HELLO");
		return false;
	}
	if (tcp_hello_decode(payload, f->length, &h)) {
		/* an rpmad of another version is told so, by name */
		uint16_t version;
		char what[128] = "bad HELLO";
		if (tcp_hello_version(payload, f->length, &version) == 0 &&
				(version < TCP_WIRE_VERSION_MIN ||
				version > TCP_WIRE_VERSION))
			(void) snprintf(what, sizeof(what), "HELLO of wire "
					"version %u, this rpmad speaks %u to "
					"%u: upgrade the older rpmad", version,
					TCP_WIRE_VERSION_MIN, TCP_WIRE_VERSION);
		tcp_conn_violation(tc, what);
		return false;
	}
	tc->role = h.role;
	memcpy(tc->token, h.token, TCP_TOKEN_SIZE);
	tc->peer_id = h.daemon_id;
	tc->wire_version = h.version;

	struct tcp_ep *tep = tc->tep;
	if (h.role == HELLO_PRIMARY) {
		memcpy(tc->pdata, payload + tcp_hello_size(h.version),
				h.pdata_len);
		tc->pdata_len = h.pdata_len;
		/* a client of this very rpmad: no need for the sockets' data */
		tcp_conn_pair_local(tc);
		struct tcp_conn *sec = find_partner(tep, tc, HELLO_SECONDARY);
		if (sec) {
			adopt_socket(tc, sec);
			tcp_conn_unpaired_remove(tep, sec);
			tcp_conn_free(sec);
			return publish(tc) == 0;
		}
		return true;
	}
	struct tcp_conn *prim = find_partner(tep, tc, HELLO_PRIMARY);
	if (prim) {
		adopt_socket(prim, tc);
		tcp_conn_unpaired_remove(tep, tc);
		tcp_conn_free(tc);
		(void) publish(prim);
		return false;	/* this channel now belongs to prim */
	}
	return true;
}

/* ---------------------------------------- the core's answer to a request */

/*
 * The client did not answer our ACCEPT with READY in time: whatever sent
 * the request (a forger, or an rpmad that vanished) will not complete it.
 * The application that accepted sees the connection lost, as when the
 * RDMA CM reports a connect error, and is free for its next request.
 */
static void
ready_overdue(struct loop_timer *t)
{
	struct tcp_conn *tc = t->arg;
	tcp_conn_log(tc, LOG_NOTICE,
			"tcp: connection qp %u: %s did not "
			"confirm the accepted connection within %u ms; it is "
			"lost",
			conn_qp_num(tc->conn), conn_remote_name(tc->conn),
			tcp_env->set.setup_timeout_ms);
	tcp_chan_close(&tc->chan[0], true);
	tcp_chan_close(&tc->chan[1], true);
	tcp_conn_over(tc, RPMA_CONN_LOST);
}

int
tcp_adopt(struct conn *conn, struct incoming *inc, char *err, size_t errlen)
{
	struct tcp_conn *tc = inc->tp_state;
	tc->conn = conn;
	tc->inc = NULL;
	conn_set_tp(conn, tc);
	tcp_conn_set_tenant(tc);
	return 0;
}

void
tcp_incoming_drop(struct incoming *inc, bool reject)
{
	struct tcp_conn *tc = inc->tp_state;
	if (reject && tc->chan[0].fd >= 0) {
		struct tcp_frame f = { .type = TF_REJECT };
		if (tcp_chan_send(&tc->chan[0], &f, NULL, 0, NULL, 0) == 0)
			(void) tcp_chan_flush(&tc->chan[0]);
	}
	tcp_conn_free(tc);
	free(inc);
}

int
tcp_accept(struct conn *conn, const void *pdata, uint8_t len, char *err,
		size_t errlen)
{
	struct tcp_conn *tc = conn_tp(conn);
	if (tc->remote_gone) {
		tc->state = TC_ACCEPTED;
		tcp_conn_over(tc, RPMA_CONN_LOST);
		return 0;
	}
	uint8_t payload[TCP_ACCEPT_ID_SIZE + TCP_PDATA_MAX];
	uint32_t id_size = tcp_accept_id_size(tc->wire_version);
	if (id_size)
		le_put64(payload, tcp_liveness_self_id());
	if (len)	/* without private data, pdata may be NULL */
		memcpy(payload + id_size, pdata, len);
	struct tcp_frame f = { .type = TF_ACCEPT,
			.length = id_size + (uint32_t)len };
	if (tcp_chan_send(&tc->chan[0], &f, payload, f.length, NULL, 0)) {
		(void) snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	tc->state = TC_ACCEPTED;
	tcp_chan_mark_dirty(&tc->chan[0]);
	tc->timer.fn = ready_overdue;
	loop_timer_arm(tcp_env->loop, &tc->timer,
			(uint64_t) tcp_env->set.setup_timeout_ms * 1000000);
	return 0;
}

void
tcp_reject(struct conn *conn)
{
	struct tcp_conn *tc = conn_tp(conn);
	struct tcp_frame f = { .type = TF_REJECT };
	if (tc->chan[0].fd >= 0 &&
			tcp_chan_send(&tc->chan[0], &f, NULL, 0, NULL, 0) == 0)
		(void) tcp_chan_flush(&tc->chan[0]);
	tc->state = TC_OVER;
}

/* ------------------------------------------------------------- active */

/*
 * The server's application did not accept or reject our request in time
 * (or what answered our sockets is no rpmad and says nothing): the
 * attempt ends as unreachable, as the RDMA CM's does when its retries end.
 */
static void
accept_overdue(struct loop_timer *t)
{
	struct tcp_conn *tc = t->arg;
	tcp_conn_log(tc, LOG_INFO,
			"tcp: connection qp %u: %s did not accept "
			"or reject the request within %u ms",
			conn_qp_num(tc->conn), conn_remote_name(tc->conn),
			tcp_env->set.accept_timeout_ms);
	tcp_chan_close(&tc->chan[0], true);
	tcp_chan_close(&tc->chan[1], true);
	tcp_conn_over(tc, CONN_END_UNREACHABLE);
}

enum rpma_conn_event
tcp_connect_outcome(const struct tcp_conn *tc, int err)
{
	if (tc->offered_older)
		return RPMA_CONN_REJECTED;
	/* a refused connect is a host without a listener there */
	return err == ECONNREFUSED ? CONN_END_REFUSED : CONN_END_UNREACHABLE;
}

/* 0, or a negative errno (tcp_chan_send's) */
static int
send_hello(struct tcp_conn *tc, int i)
{
	struct tcp_hello h = {
		.magic = TCP_WIRE_MAGIC,
		.version = tc->wire_version,
		.role = i == 0 ? HELLO_PRIMARY : HELLO_SECONDARY,
		.pdata_len = i == 0 ? tc->pdata_len : 0,
		.qp_num = conn_qp_num(tc->conn),
		.daemon_id = tcp_liveness_self_id(),
	};
	memcpy(h.token, tc->token, TCP_TOKEN_SIZE);
	uint8_t buf[TCP_HELLO_SIZE + TCP_PDATA_MAX];
	uint32_t size = tcp_hello_encode(&h, buf);
	memcpy(buf + size, tc->pdata, h.pdata_len);
	struct tcp_frame f = {
		.type = TF_HELLO,
		.length = size + h.pdata_len,
	};
	int ret = tcp_chan_send(&tc->chan[i], &f, buf, f.length, NULL, 0);
	if (ret)
		return ret;
	tcp_chan_mark_dirty(&tc->chan[i]);
	return 0;
}

void
tcp_channel_up(struct tcp_conn *tc, int i, int err)
{
	if (err == 0 && send_hello(tc, i))
		err = ENOMEM;
	if (err) {
		conn_log(tc->conn, LOG_INFO, "tcp: connection qp %u: cannot "
				"connect to %s: %s",
				conn_qp_num(tc->conn),
				conn_remote_name(tc->conn), strerror(err));
		tcp_chan_close(&tc->chan[0], true);
		tcp_chan_close(&tc->chan[1], true);
		tcp_conn_over(tc, err == ENOMEM ? RPMA_CONN_LOST :
				tcp_connect_outcome(tc, err));
		return;
	}
	tc->connected[i] = true;
	tcp_chan_pause(&tc->chan[i], false);
	if (tc->connected[0] && tc->connected[1]) {
		/* reachable: from now on it is up to the server's application */
		tc->state = TC_HELLO;
		tc->timer.fn = accept_overdue;
		loop_timer_arm(tcp_env->loop, &tc->timer,
				(uint64_t) tcp_env->set.accept_timeout_ms *
						1000000);
		struct sockaddr_storage local;
		socklen_t llen = sizeof(local);
		if (tcp_chan_local_addr(&tc->chan[0], &local, &llen) == 0)
			conn_set_names(tc->conn, &local, NULL);
	}
}

/* --------------------------------------------------------- set-up frames */

/* How the connection is secured, for the operator (with its other lines). */
static void
log_tls(const struct tcp_conn *tc)
{
	if (tc->tls)
		conn_log(tc->conn, LOG_INFO, "tcp: connection qp %u: TLS 1.3 "
				"with the key of '%s' (%s)",
				conn_qp_num(tc->conn), tc->tls_identity,
				tcp_tls_kernel() ? "the kernel encrypts" :
				"rpmad encrypts");
	else if (tcp_tls_mode() != TRANSPORT_TLS_OFF)
		conn_log(tc->conn, LOG_INFO, "tcp: connection qp %u: without "
				"TLS (the other end does not speak it)",
				conn_qp_num(tc->conn));
}

bool
tcp_setup_frame(struct tcp_conn *tc, struct tcp_chan *ch,
		const struct tcp_frame *f, const uint8_t *payload)
{
	switch (f->type) {
	case TF_HELLO:
		return hello_received(tc, f, payload);
	case TF_ACCEPT: {
		uint32_t id_size = tcp_accept_id_size(tc->wire_version);
		if (tc->passive || tc->state != TC_HELLO ||
				f->length < id_size ||
				f->length - id_size > TCP_PDATA_MAX)
			break;
		loop_timer_cancel(tcp_env->loop, &tc->timer);
		struct tcp_frame ready = { .type = TF_READY };
		if (tcp_chan_send(&tc->chan[0], &ready, NULL, 0, NULL, 0)) {
			tcp_conn_over(tc, RPMA_CONN_LOST);
			return true;
		}
		tcp_chan_mark_dirty(&tc->chan[0]);
		tc->state = TC_ESTABLISHED;
		tc->peer_id = id_size ? le_get64(payload) : 0;
		log_tls(tc);
		if (tcp_conn_watch_remote(tc)) {
			tcp_conn_over(tc, RPMA_CONN_LOST);
			return true;
		}
		conn_established(tc->conn, payload + id_size,
				(uint8_t)(f->length - id_size), true);
		return true;
	}
	case TF_REJECT:
		if (tc->passive || tc->state != TC_HELLO)
			break;
		tcp_conn_over(tc, RPMA_CONN_REJECTED);
		return true;
	case TF_READY:
		if (!tc->passive || tc->state != TC_ACCEPTED)
			break;
		loop_timer_cancel(tcp_env->loop, &tc->timer);
		tc->state = TC_ESTABLISHED;
		log_tls(tc);
		if (tcp_conn_watch_remote(tc)) {
			tcp_conn_over(tc, RPMA_CONN_LOST);
			return true;
		}
		conn_established(tc->conn, NULL, 0, false);
		return true;
	default:
		break;
	}
	bool adopted = tc->conn != NULL;
	tcp_conn_violation(tc, "unexpected set-up frame");
	return adopted;
}
