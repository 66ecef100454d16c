// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_conn.c -- the software transport's connection object: making and
 * freeing it, the lists it is on (every connection, its endpoint's
 * unpaired sockets, its twin in this rpmad), how it ends, and the frames
 * it sends of its own accord (heartbeats, the goodbye)
 *
 * The frame handlers, the receive engine and the table stand on this
 * file and it calls none of them: a connection ends the same way wherever
 * its end is found.
 */

#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "log.h"
#include "tcp_chan.h"
#include "tcp_conn.h"

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
	tc->heartbeat.arg = tc;
	tc->expect_seq = 1;
	tc->all_next = all_tcs;
	if (all_tcs)
		all_tcs->all_prev = tc;
	all_tcs = tc;
	return tc;
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

void
tcp_conn_free(struct tcp_conn *tc)
{
	unpair_local(tc);
	for (int i = 0; i < 2; i++) {
		tcp_chan_forget_dirty(&tc->chan[i]);
		tcp_chan_close(&tc->chan[i], false);
	}
	loop_timer_cancel(rpmad.loop, &tc->timer);
	loop_timer_cancel(rpmad.loop, &tc->rnr_timer);
	loop_timer_cancel(rpmad.loop, &tc->heartbeat);
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
	loop_timer_cancel(rpmad.loop, &tc->timer);
	loop_timer_cancel(rpmad.loop, &tc->rnr_timer);
	loop_timer_cancel(rpmad.loop, &tc->heartbeat);
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
	log_warning("tcp: connection qp %u: the peer broke the protocol (%s)",
			tc->conn ? conn_qp_num(tc->conn) : 0, what);
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
 * Liveness: a peer that goes silent (a cut network, a frozen host) must be
 * found within tcp_timeout_ms, also when nothing is in flight and at a
 * finer grain than TCP keepalives (whole seconds). Each socket carries a
 * heartbeat when it was quiet for a quarter of the timeout; a socket that
 * heard nothing for seven eighths of it (three heartbeats missed) has lost
 * its peer -- checked every eighth, so the loss is known within the
 * timeout. A socket we do not read (a message waits for a receive buffer)
 * proves nothing either way; the other one still does.
 */
static void
heartbeat_tick(struct loop_timer *t)
{
	struct tcp_conn *tc = t->arg;
	uint64_t timeout = (uint64_t)rpmad.cfg.tcp_timeout_ms * 1000000;
	uint64_t now = loop_now_ns();

	for (int i = 0; i < 2; i++) {
		struct tcp_chan *ch = &tc->chan[i];
		if (ch->fd < 0)
			continue;
		if (!ch->paused && now - ch->last_rx_ns >= timeout / 8 * 7) {
			log_info("tcp: connection qp %u: the peer was silent "
					"for %u ms",
					tc->conn ? conn_qp_num(tc->conn) : 0,
					rpmad.cfg.tcp_timeout_ms);
			tcp_chan_close(&tc->chan[0], true);
			tcp_chan_close(&tc->chan[1], true);
			tcp_conn_over(tc, tc->state == TC_DISCONNECTING ?
					RPMA_CONN_CLOSED : RPMA_CONN_LOST);
			return;
		}
		if (now - ch->last_tx_ns >= timeout / 4) {
			struct tcp_frame f = { .type = TF_HEARTBEAT };
			if (tcp_chan_send(ch, &f, NULL, 0, NULL, NULL) == 0)
				tcp_chan_mark_dirty(ch);
		}
	}
	loop_timer_arm(rpmad.loop, t, timeout / 8);
}

void
tcp_conn_start_heartbeat(struct tcp_conn *tc)
{
	uint64_t now = loop_now_ns();
	for (int i = 0; i < 2; i++)
		tc->chan[i].last_rx_ns = tc->chan[i].last_tx_ns = now;
	tc->heartbeat.fn = heartbeat_tick;
	loop_timer_arm(rpmad.loop, &tc->heartbeat,
			(uint64_t)rpmad.cfg.tcp_timeout_ms * 1000000 / 8);
}

/*
 * The goodbye follows our operations on their socket, so that the peer
 * sees everything we posted before it.
 */
void
tcp_conn_send_goodbye(struct tcp_conn *tc)
{
	struct tcp_frame f = { .type = TF_DISCONNECT };
	if (tcp_chan_send(tc->ini, &f, NULL, 0, NULL, NULL) == 0)
		tcp_chan_mark_dirty(tc->ini);
}
