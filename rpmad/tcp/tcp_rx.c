// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_rx.c -- the receive engine of the software transport: the events of
 * a connection's sockets, their bytes cut into frames and handed to the
 * frame's handler (set-up in tcp_handshake.c, operations and answers in
 * tcp_ops.c, goodbye and heartbeat here), and reading again once a wait
 * is over (answers drained, a receive posted, the RNR time run out)
 *
 * It stands above the handlers and calls them; they only pause a socket,
 * and only this file reads one again. It stands above the file that opens
 * sockets too, which hands each new one to the handlers the engine gave
 * it at init (tcp_rx_engine).
 */

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "tcp/tcp.h"

/* Payloads this big skip the staging buffer. */
#define DIRECT_RECV_MIN 4096
/*
 * Answers queued on a target channel before rpmad stops reading the
 * peer's operations (a peer that never reads its answers must not make
 * rpmad grow without bound), and the level at which it reads again.
 */
#define TX_THROTTLE_FRAMES 1024
#define TX_RESUME_FRAMES 256

/* The end of a socket (EOF, reset, timeout). */
static void
socket_ended(struct tcp_conn *tc, long err)
{
	if (tc->conn == NULL) {
		tcp_conn_socket_gone(tc);
		return;
	}
	switch (tc->state) {
	case TC_CONNECTING:
		/* a HELLO sent on the other socket and closed unanswered */
		if (tcp_connect_older(tc))
			break;
		tcp_conn_over(tc, tcp_connect_outcome(tc, (int)-err));
		break;
	case TC_HELLO:
		/* an rpmad of an older wire version refuses the HELLO so */
		if (tcp_connect_older(tc))
			break;
		/*
		 * the far rpmad dropped the request before the server's
		 * application answered it (its endpoint shut down, or it went
		 * away): RDMA CM rejects the requests of a destroyed listener
		 */
		tcp_conn_over(tc, RPMA_CONN_REJECTED);
		break;
	case TC_DISCONNECTING:
		tcp_conn_over(tc, RPMA_CONN_CLOSED);
		break;
	default:
		if (err && err != -ECONNRESET)
			tcp_conn_log(tc, LOG_INFO, "tcp: connection qp %u: %s",
					conn_qp_num(tc->conn),
					strerror((int)-err));
		tcp_conn_over(tc, RPMA_CONN_LOST);
		break;
	}
}

/*
 * Reads and handles what arrived, at most *budget bytes of it (what is
 * left of it stays there) and counts the frames handled; false when the
 * connection is over.
 */
static bool chan_rx(struct tcp_chan *ch, size_t *budget, unsigned *frames);
static void rx_kick(struct tcp_chan *ch);

/* After a send: the socket failed (ret < 0), or answers drained. */
static bool
sent(struct tcp_chan *ch, int ret)
{
	struct tcp_conn *tc = ch->tc;
	if (ret >= 0) {
		if (ch->throttled && ch->tx_count <= TX_RESUME_FRAMES) {
			/* the peer reads its answers again: so do we */
			ch->throttled = false;
			tcp_chan_pause(ch, false);
			rx_kick(ch);
		}
		return true;
	}
	if (tc->conn == NULL) {
		tcp_conn_socket_gone(tc);
		return false;
	}
	tcp_conn_over(tc, tc->state == TC_DISCONNECTING ? RPMA_CONN_CLOSED :
			RPMA_CONN_LOST);
	return true;
}

bool
tcp_rx_flush(struct tcp_chan *ch)
{
	return sent(ch, tcp_chan_flush(ch));
}

size_t
tcp_rx_tx_turn(struct fairq_flow *f, size_t budget, bool *more)
{
	struct tcp_chan *ch = f->arg;
	struct fairq_tenant *t = f->tenant;	/* ch may go in sent() */
	size_t bytes;
	unsigned frames;
	int ret = tcp_chan_send_some(ch, budget, &bytes, &frames);
	*more = sent(ch, ret) && ret > 0;
	return fairq_charge(t, bytes, frames);
}

size_t
tcp_rx_rx_turn(struct fairq_flow *f, size_t budget, bool *more)
{
	struct tcp_chan *ch = f->arg;
	struct fairq_tenant *t = f->tenant;
	size_t left = budget;
	unsigned frames = 0;
	*more = false;
	/* read turns are queued for adopted connections only: ch stays */
	ch->rx_queued = false;
	if (chan_rx(ch, &left, &frames)) {
		*more = left == 0 && ch->fd >= 0 && !ch->paused;
		tcp_chan_rx_done(ch, *more);
	}
	size_t used = budget - left, ops = (size_t)frames * FAIRQ_OP_COST;
	return fairq_charge(t, used > ops ? used - ops : 0, frames);
}

/*
 * More is to be read: by a turn of the arbiter's once the connection is
 * a client's, at once while it is being set up (a few small frames).
 */
static void
rx_kick(struct tcp_chan *ch)
{
	if (ch->tc->conn != NULL) {
		tcp_chan_rx_due(ch);
		return;
	}
	size_t budget = FAIRQ_SLICE;
	unsigned frames = 0;
	(void) chan_rx(ch, &budget, &frames);
}

/* A DISCONNECT from the peer: answer it, and the connection is closed. */
static void
goodbye_received(struct tcp_conn *tc)
{
	if (tc->state == TC_ESTABLISHED) {
		tcp_conn_send_goodbye(tc);
		(void) tcp_rx_flush(tc->ini);
	}
	tcp_conn_over(tc, RPMA_CONN_CLOSED);
}

/*
 * Which handler a frame on this channel goes to; as tcp_target_begin(): 0
 * (take the payload), 1 (wait for a receive buffer), or a negative errno
 * when the connection ended (-EPROTO: no handler may take the frame).
 */
static int
frame_begin(struct tcp_conn *tc, struct tcp_chan *ch)
{
	const struct tcp_frame *f = &ch->cur;
	bool primary = ch == &tc->chan[0];

	if (f->type < TF_WRITE) {
		/* the goodbye comes after the peer's operations, on theirs */
		if (!primary && f->type != TF_HELLO &&
				f->type != TF_DISCONNECT &&
				f->type != TF_HEARTBEAT) {
			tcp_conn_violation(tc, "set-up frame on the secondary");
			return -EPROTO;
		}
		ch->sink = SINK_SCRATCH;
		return 0;
	}
	if (tc->state != TC_ESTABLISHED && tc->state != TC_DISCONNECTING) {
		tcp_conn_violation(tc, "operation before the connection is up");
		return -EPROTO;
	}
	if (f->type < TF_ACK) {
		if (ch != tc->tgt) {
			tcp_conn_violation(tc, "operation on the wrong socket");
			return -EPROTO;
		}
		return tcp_target_begin(tc, ch, rx_kick);
	}
	if (ch != tc->ini) {
		tcp_conn_violation(tc, "answer on the wrong socket");
		return -EPROTO;
	}
	return tcp_initiator_begin(tc, ch, rx_kick);
}

/* Returns false when the channel is gone with its connection object. */
static bool
frame_end(struct tcp_conn *tc, struct tcp_chan *ch)
{
	const struct tcp_frame *f = &ch->cur;
	if (f->type == TF_HEARTBEAT)
		return true;	/* its arrival was the point */
	if (f->type == TF_DISCONNECT) {
		if (tc->conn == NULL) {
			tcp_conn_socket_gone(tc);
			return false;
		}
		goodbye_received(tc);
	} else if (f->type < TF_WRITE) {
		return tcp_setup_frame(tc, ch, f, ch->scratch);
	} else if (f->type < TF_ACK) {
		tcp_target_end(tc, ch);
	} else {
		tcp_initiator_end(tc, ch);
	}
	return true;
}

/* Moves staged payload bytes to where they belong. */
static void
sink_bytes(struct tcp_chan *ch, const uint8_t *src, size_t n)
{
	switch (ch->sink) {
	case SINK_MEM:
		mr_io_write_part(ch->dst_mr, ch->dst_addr + ch->got, src, n,
				ch->cur_payload);
		break;
	case SINK_BATCH:
		memcpy(ch->batch_dst + (ch->got - ch->batch_start), src, n);
		break;
	case SINK_SCRATCH:
		if (ch->got + n <= sizeof(ch->scratch))
			memcpy(ch->scratch + ch->got, src, n);
		break;
	case SINK_DISCARD:
		break;
	}
	ch->got += (uint32_t)n;
}

/*
 * Receives the rest of the current frame's payload. Returns 1 when it is
 * complete, 0 when more must arrive first, a negative errno when the
 * socket ended (-ECONNRESET for its end of file).
 */
static int
rx_payload(struct tcp_chan *ch, size_t *budget)
{
	while (ch->got < ch->cur_payload) {
		if (ch->sink == SINK_BATCH && ch->got == ch->batch_end &&
				tcp_batch_room(ch))
			return 0;	/* the client's thread is to catch up */
		size_t want = (ch->sink == SINK_BATCH ? ch->batch_end :
				ch->cur_payload) - ch->got;
		size_t avail = ch->rlen - ch->rpos;
		if (avail) {
			size_t take = avail < want ? avail : want;
			sink_bytes(ch, ch->rbuf + ch->rpos, take);
			ch->rpos += take;
			continue;
		}
		if (*budget == 0) {
			tcp_target_filled(ch->tc, ch);
			return 0;
		}
		long n;
		if (want > *budget)
			want = *budget;	/* a slice of a big payload at a time */
		uint8_t *direct = ch->sink == SINK_BATCH &&
			want >= DIRECT_RECV_MIN ? ch->batch_dst +
			(ch->got - ch->batch_start) :
			ch->sink == SINK_MEM && !ch->staged_only &&
			want >= DIRECT_RECV_MIN ? mr_io_direct_write(ch->dst_mr,
					ch->dst_addr + ch->got, want,
					ch->cur_payload) : NULL;
		if (direct) {
			/* straight into rpmad's mapping: no staging copy */
			do {
				n = recv(ch->fd, direct, want, 0);
			} while (n < 0 && errno == EINTR);
			if (n < 0)
				n = -errno;
			if (n == -EFAULT) {
				/*
				 * A page is gone (its file was cut short); the
				 * bytes stay in the socket: take them through
				 * the staging buffer and mr_io from now on.
				 */
				ch->staged_only = true;
				continue;
			}
			if (n > 0) {
				ch->got += (uint32_t)n;
				tcp_chan_heard(ch);
			}
		} else {
			n = tcp_chan_fill(ch);
		}
		if (n == -EAGAIN || n == -EWOULDBLOCK) {
			tcp_target_filled(ch->tc, ch);
			return 0;
		}
		if (n <= 0) {
			socket_ended(ch->tc, n);
			return n < 0 ? (int)n : -ECONNRESET;
		}
		*budget = (size_t)n > *budget ? 0 : *budget - (size_t)n;
	}
	return 1;
}

static bool
chan_rx(struct tcp_chan *ch, size_t *budgetp, unsigned *frames)
{
	struct tcp_conn *tc = ch->tc;
	size_t budget = *budgetp;
	bool alive = false;

	while (ch->fd >= 0 && tc->state != TC_OVER && !ch->paused) {
		if (!ch->in_frame && ch == tc->tgt &&
				ch->tx_count >= TX_THROTTLE_FRAMES) {
			ch->throttled = true;
			tcp_chan_pause(ch, true);
			break;
		}
		if (!ch->in_frame) {
			if (budget == 0)
				break;
			if (ch->rlen - ch->rpos < TCP_FRAME_SIZE) {
				long n = tcp_chan_fill(ch);
				if (n == -EAGAIN || n == -EWOULDBLOCK)
					break;
				if (n <= 0) {
					socket_ended(tc, n);
					goto out;
				}
				budget = (size_t)n > budget ? 0 :
					budget - (size_t)n;
				continue;
			}
			if (tcp_frame_decode(ch->rbuf + ch->rpos, &ch->cur)) {
				tcp_conn_violation(tc, "malformed frame");
				goto out;
			}
			ch->rpos += TCP_FRAME_SIZE;
			ch->in_frame = true;
			ch->begun = false;
			ch->got = 0;
			ch->staged_only = false;
			ch->cur_payload = tcp_frame_payload_len(&ch->cur);
		}
		if (!ch->begun) {
			int r = frame_begin(tc, ch);
			if (r < 0)
				goto out;
			if (r > 0)
				break;	/* paused until a receive is posted */
			ch->begun = true;
		}
		/* a persistent flush, a slice at a time (tcp_ops.c) */
		if (ch == tc->tgt && !tcp_target_persist(tc, ch, &budget,
				rx_kick))
			break;
		int r = rx_payload(ch, &budget);
		if (r < 0)
			goto out;
		if (r == 0)
			break;
		ch->in_frame = false;
		(*frames)++;
		budget = budget > FAIRQ_OP_COST ? budget - FAIRQ_OP_COST : 0;
		if (!frame_end(tc, ch))
			goto out;
	}
	if (tc->state == TC_OVER)
		goto out;
	/* what the frames need of the client's memory, then the ACK */
	tcp_batch_flush(ch);
	if (ch == tc->tgt)
		tcp_target_ack(tc);
	alive = true;
out:
	*budgetp = budget;
	return alive;
}

void
tcp_rx_ready(struct loop_watch *w, uint32_t events)
{
	struct tcp_chan *ch = w->arg;
	struct tcp_conn *tc = ch->tc;

	/* a socket connects once: later events on it, while its twin still
	 * connects, are read as on any socket (not a second HELLO) */
	int i = ch == &tc->chan[0] ? 0 : 1;
	if (tc->state == TC_CONNECTING && !tc->connected[i] &&
			(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
		tcp_connect_done(tc, i);
		return;
	}
	if (events & EPOLLOUT)
		tcp_chan_tx_due(ch);
	if (ch->fd >= 0 && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP |
			EPOLLERR)) && !ch->rx_queued)
		rx_kick(ch);
}

void
tcp_rx_resume(struct tcp_conn *tc)
{
	if (!tc->rnr || tc->tgt == NULL || tc->tgt->fd < 0)
		return;
	tcp_chan_pause(tc->tgt, false);
	rx_kick(tc->tgt);
}

void
tcp_rx_rnr_expired(struct loop_timer *t)
{
	struct tcp_conn *tc = t->arg;
	/* one timer for both waits: our local work's, else the peer's */
	if (tcp_local_rnr_expired(tc) || !tcp_target_rnr_expired(tc))
		return;
	/* the message was refused: its payload is read and discarded */
	struct tcp_chan *ch = tc->tgt;
	ch->begun = true;
	tcp_chan_pause(ch, false);
	rx_kick(ch);
}

const struct tcp_engine tcp_rx_engine = {
	.ready = tcp_rx_ready,
	.tx_turn = tcp_rx_tx_turn,
	.rx_turn = tcp_rx_rx_turn,
	.rnr_expired = tcp_rx_rnr_expired,
};
