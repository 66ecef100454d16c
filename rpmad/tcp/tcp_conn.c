// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_conn.c -- the software transport's connection object: making and
 * freeing it, the lists it is on (every connection, its endpoint's
 * unpaired sockets, its twin in this rpmad), how it ends, and the frames
 * it sends of its own accord (heartbeats, the goodbye), and its place
 * among the connections to the same remote rpmad
 *
 * The frame handlers, the receive engine and the table stand on this
 * file and it calls none of them: a connection ends the same way wherever
 * its end is found.
 */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tcp/tcp.h"

static struct tcp_conn *all_tcs;

/* ------------------------------------------------------------ the object */

struct tcp_conn *
tcp_conn_new(loop_timer_fn *rnr_expired)
{
	struct tcp_conn *tc = calloc(1, sizeof(*tc));
	if (tc == NULL)
		return NULL;
	tc->chan[0].fd = tc->chan[1].fd = -1;
	tc->chan[0].tc = tc->chan[1].tc = tc;
	tc->chan[0].spare = tc->chan[1].spare = &tc->free_items;
	tc->timer.arg = tc;
	tc->rnr_timer.arg = tc;
	tc->rnr_timer.fn = rnr_expired;
	tc->expect_seq = 1;
	tcp_local_init(tc);
	tc->all_next = all_tcs;
	if (all_tcs)
		all_tcs->all_prev = tc;
	all_tcs = tc;
	return tc;
}

void
tcp_conn_set_tenant(struct tcp_conn *tc)
{
	struct fairq_tenant *t = tc->conn ? conn_fairq(tc->conn) : NULL;
	for (int i = 0; i < 2; i++) {
		fairq_flow_set_tenant(&tc->chan[i].tx_flow, t);
		fairq_flow_set_tenant(&tc->chan[i].rx_flow, t);
	}
	fairq_flow_set_tenant(&tc->local_flow, t);
}

void
tcp_conn_unpaired_remove(struct tcp_ep *tep, struct tcp_conn *tc)
{
	for (struct tcp_conn **pp = &tep->unpaired; *pp;
			pp = &(*pp)->pair_next) {
		if (*pp == tc) {
			*pp = tc->pair_next;
			tep->n_unpaired--;
			break;
		}
	}
	tc->pair_next = NULL;
}

/* The active connection with this token, or NULL. */
static struct tcp_conn *
find_active(const uint8_t *token)
{
	for (struct tcp_conn *tc = all_tcs; tc; tc = tc->all_next) {
		if (!tc->passive && tc->conn &&
				memcmp(tc->token, token, TCP_TOKEN_SIZE) == 0)
			return tc;
	}
	return NULL;
}

void
tcp_conn_pair_local(struct tcp_conn *passive)
{
	struct tcp_conn *active = find_active(passive->token);
	if (active == NULL || active->local_peer)
		return;
	passive->local_peer = active;
	active->local_peer = passive;
}

/* The twin in this rpmad goes on alone. */
static void
unpair_local(struct tcp_conn *tc)
{
	if (tc->local_peer)
		tc->local_peer->local_peer = NULL;
	tc->local_peer = NULL;
}

/* No longer one of its remote's: its sockets stamp nothing. */
static void
unwatch_remote(struct tcp_conn *tc)
{
	tcp_remote_leave(&tc->member);
	tc->chan[0].heard = tc->chan[1].heard = NULL;
}

void
tcp_conn_free(struct tcp_conn *tc)
{
	unwatch_remote(tc);
	unpair_local(tc);
	for (int i = 0; i < 2; i++) {
		tcp_chan_forget_dirty(&tc->chan[i]);
		tcp_chan_close(&tc->chan[i], false);
	}
	loop_timer_cancel(tcp_env->loop, &tc->timer);
	loop_timer_cancel(tcp_env->loop, &tc->rnr_timer);
	while (tc->free_items) {
		struct tx_item *it = tc->free_items;
		tc->free_items = it->next;
		free(it);
	}
	if (tc->all_prev)
		tc->all_prev->all_next = tc->all_next;
	else
		all_tcs = tc->all_next;
	if (tc->all_next)
		tc->all_next->all_prev = tc->all_prev;
	free(tc);
}

bool
tcp_conn_any_pending(void)
{
	for (struct tcp_conn *tc = all_tcs; tc; tc = tc->all_next) {
		if (tcp_chan_pending(&tc->chan[0]) ||
				tcp_chan_pending(&tc->chan[1]))
			return true;
	}
	return false;
}

/* --------------------------------------------------------------- its end */

void
tcp_conn_over(struct tcp_conn *tc, enum rpma_conn_event event)
{
	if (tc->state == TC_OVER)
		return;
	tc->state = TC_OVER;
	unwatch_remote(tc);
	loop_timer_cancel(tcp_env->loop, &tc->timer);
	loop_timer_cancel(tcp_env->loop, &tc->rnr_timer);
	/* nothing more is read; what is queued may still go out */
	tcp_chan_pause(&tc->chan[0], true);
	tcp_chan_pause(&tc->chan[1], true);
	if (tc->conn)
		conn_ended(tc->conn, event);
}

void
tcp_conn_socket_gone(struct tcp_conn *tc)
{
	if (tc->state == TC_PAIRING) {
		if (tc->tep)
			tcp_conn_unpaired_remove(tc->tep, tc);
		tcp_conn_free(tc);
		return;
	}
	/* waiting at the endpoint: the application gets it, then LOST */
	tc->remote_gone = true;
	tcp_chan_close(&tc->chan[0], false);
	tcp_chan_close(&tc->chan[1], false);
}

void
tcp_conn_violation(struct tcp_conn *tc, const char *what)
{
	tcp_conn_log(tc, LOG_WARNING, "tcp: connection qp %u: the peer broke "
			"the protocol (%s)", tc->conn ? conn_qp_num(tc->conn) :
			0, what);
	if (tc->conn == NULL) {
		tcp_conn_socket_gone(tc);
		return;
	}
	tcp_chan_close(&tc->chan[0], true);
	tcp_chan_close(&tc->chan[1], true);
	/* before ACCEPT, whatever answered there is no rpmad to talk to */
	tcp_conn_over(tc, tc->state == TC_CONNECTING || tc->state == TC_HELLO ?
			CONN_END_UNREACHABLE : RPMA_CONN_LOST);
}

/* ----------------------------------------------------- frames of its own */

/*
 * Liveness is the remote rpmad's (tcp_liveness.c): a heartbeat goes out
 * on the socket that carries our answers, because the other end reads
 * that one always -- it stops reading only the socket of our operations,
 * while a message waits for a receive buffer there. An rpmad of wire
 * version 1 watches each socket by itself: both hear one.
 */
static struct tcp_conn *
member_conn(struct tcp_member *m)
{
	return (struct tcp_conn *)((char *)m -
			offsetof(struct tcp_conn, member));
}

static int
beat(struct tcp_member *m)
{
	struct tcp_conn *tc = member_conn(m);
	if ((tc->state != TC_ESTABLISHED && tc->state != TC_DISCONNECTING) ||
			tc->tgt == NULL || tc->tgt->fd < 0)
		return -ENOTCONN;
	struct tcp_frame f = { .type = TF_HEARTBEAT };
	int ret = tcp_chan_send(tc->tgt, &f, NULL, 0, NULL, 0);
	if (ret == 0)
		tcp_chan_mark_dirty(tc->tgt);
	if (tc->wire_version == 1 && tc->ini->fd >= 0 &&
			tcp_chan_send(tc->ini, &f, NULL, 0, NULL, 0) == 0)
		tcp_chan_mark_dirty(tc->ini);
	return ret;
}

static void
remote_lost(struct tcp_member *m)
{
	struct tcp_conn *tc = member_conn(m);
	tcp_chan_close(&tc->chan[0], true);
	tcp_chan_close(&tc->chan[1], true);
	tcp_conn_over(tc, tc->state == TC_DISCONNECTING ? RPMA_CONN_CLOSED :
			RPMA_CONN_LOST);
}

static const struct tcp_liveness_ops liveness_ops = {
	.beat = beat,
	.lost = remote_lost,
};

int
tcp_conn_watch_remote(struct tcp_conn *tc)
{
	/* both ends here: one process cannot fall silent to itself */
	if (tc->local_peer)
		return 0;
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	int ret = tcp_chan_peer_addr(&tc->chan[0], &addr, &len);
	if (ret)
		return ret;
	/*
	 * A remote is its address, the id it gave and, with TLS, the key it
	 * proved: a plain socket from that address claiming that id does not
	 * keep an authenticated rpmad's connections looking alive.
	 */
	uint64_t id = tc->peer_id;
	if (tc->tls)
		for (const char *c = tc->tls_identity; *c; c++)
			id = (id ^ (uint8_t)*c) * 0x100000001b3ull;
	uint64_t *stamp = tcp_remote_join(&tc->member, &addr, id,
			tc->wire_version == 1, &liveness_ops);
	if (stamp == NULL)
		return -ENOMEM;
	tc->chan[0].heard = tc->chan[1].heard = stamp;
	return 0;
}

/*
 * The goodbye follows our operations on their socket, so that the peer
 * sees everything we posted before it.
 */
void
tcp_conn_send_goodbye(struct tcp_conn *tc)
{
	struct tcp_frame f = { .type = TF_DISCONNECT };
	if (tcp_chan_send(tc->ini, &f, NULL, 0, NULL, 0) == 0)
		tcp_chan_mark_dirty(tc->ini);
}
