// SPDX-License-Identifier: BSD-3-Clause
/*
 * transport_tcp.c -- the software transport: its operations table, the
 * end of a connection (goodbyes, loss, release) and the receive engine
 * that cuts a socket's bytes into frames and hands them to their handlers
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"
#include "daemon.h"
#include "device.h"
#include "ep.h"
#include "guard.h"
#include "log.h"
#include "mr.h"
#include "tcp_chan.h"
#include "tcp_conn.h"
#include "tcp_internal.h"
#include "transport_tcp.h"

/* Bytes one socket may deliver per wake-up before others get a turn. */
#define RX_BUDGET (4u << 20)
/* How long a goodbye waits for the peer's. */
#define GOODBYE_TIMEOUT_NS (1000 * 1000 * 1000ull)
/* Payloads this big skip the staging buffer. */
#define DIRECT_RECV_MIN 4096
/*
 * Answers queued on a target channel before rpmad stops reading the
 * peer's operations (a peer that never reads its answers must not make
 * rpmad grow without bound), and the level at which it reads again.
 */
#define TX_THROTTLE_FRAMES 1024
#define TX_RESUME_FRAMES 256

/*
 * Sends what is queued; a socket that fails loses the connection.
 * Returns -1 when the connection object is gone (not adopted yet, freed).
 */
static int
flush_chan(struct tcp_chan *ch)
{
	struct tcp_conn *tc = ch->tc;
	if (tcp_chan_flush(ch) == 0) {
		if (ch->throttled && ch->tx_count <= TX_RESUME_FRAMES) {
			/* the peer reads its answers again: so do we */
			ch->throttled = false;
			tcp_chan_pause(ch, false);
			(void) tcp_chan_rx(ch);
		}
		return 0;
	}
	if (tc->conn == NULL) {
		tcp_conn_socket_gone(tc);
		return -1;
	}
	tcp_conn_over(tc, tc->state == TC_DISCONNECTING ? RPMA_CONN_CLOSED :
			RPMA_CONN_LOST);
	return 0;
}

static int
tcp_poll(void *arg)
{
	int work = 0;
	struct tcp_chan *ch;
	while ((ch = tcp_chan_next_dirty()) != NULL) {
		(void) flush_chan(ch);
		work++;
	}
	return work;
}

static int
tcp_prepare_sleep(void *arg)
{
	return tcp_poll(arg);
}

static void
tcp_wake(void *arg)
{
}

static struct loop_poller tcp_poller = {
	.poll = tcp_poll,
	.prepare_sleep = tcp_prepare_sleep,
	.wake = tcp_wake,
};

/* rpmad's own device: every address no other transport serves */
static struct device *software_device;

int
transport_tcp_init(void)
{
	software_device = device_add(SOFTWARE_DEVICE_NAME, &transport_tcp,
			false, NULL);
	if (software_device == NULL)
		return -1;
	loop_poller_add(rpmad.loop, &tcp_poller);
	return 0;
}

void
transport_tcp_fini(void)
{
	/* connections were released with their sessions */
	(void) tcp_poll(NULL);
}

bool
transport_tcp_pending(void)
{
	(void) tcp_poll(NULL);
	return tcp_conn_any_pending();
}

/* ------------------------------------------------------- connection life */

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
		tcp_conn_over(tc, tcp_connect_outcome((int)-err));
		break;
	case TC_HELLO:
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
			log_info("tcp: connection qp %u: %s",
					tc->conn->qp_num, strerror((int)-err));
		tcp_conn_over(tc, RPMA_CONN_LOST);
		break;
	}
}

static void
goodbye_timeout(struct loop_timer *t)
{
	struct tcp_conn *tc = t->arg;
	tcp_conn_over(tc, RPMA_CONN_CLOSED);
}

/* A DISCONNECT from the peer: answer it, and the connection is closed. */
static void
goodbye_received(struct tcp_conn *tc)
{
	if (tc->state == TC_ESTABLISHED) {
		tcp_conn_send_goodbye(tc);
		(void) flush_chan(tc->ini);
	}
	tcp_conn_over(tc, RPMA_CONN_CLOSED);
}

/* --------------------------------------------------------- receive engine */

/* Which handler a frame on this channel goes to; -1 when none may. */
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
			return -1;
		}
		ch->sink = SINK_SCRATCH;
		return 0;
	}
	if (tc->state != TC_ESTABLISHED && tc->state != TC_DISCONNECTING) {
		tcp_conn_violation(tc, "operation before the connection is up");
		return -1;
	}
	if (f->type < TF_ACK) {
		if (ch != tc->tgt) {
			tcp_conn_violation(tc, "operation on the wrong socket");
			return -1;
		}
		return tcp_target_begin(tc, ch);
	}
	if (ch != tc->ini) {
		tcp_conn_violation(tc, "answer on the wrong socket");
		return -1;
	}
	return tcp_initiator_begin(tc, ch);
}

/* Returns -1 when the channel is gone with its connection object. */
static int
frame_end(struct tcp_conn *tc, struct tcp_chan *ch)
{
	const struct tcp_frame *f = &ch->cur;
	if (f->type == TF_HEARTBEAT)
		return 0;	/* its arrival was the point */
	if (f->type == TF_DISCONNECT) {
		if (tc->conn == NULL) {
			tcp_conn_socket_gone(tc);
			return -1;
		}
		goodbye_received(tc);
	} else if (f->type < TF_WRITE) {
		return tcp_setup_frame(tc, ch, f, ch->scratch);
	} else if (f->type < TF_ACK) {
		tcp_target_end(tc, ch);
	} else {
		tcp_initiator_end(tc, ch);
	}
	return 0;
}

/* Moves staged payload bytes to where they belong. */
static void
sink_bytes(struct tcp_chan *ch, const uint8_t *src, size_t n)
{
	switch (ch->sink) {
	case SINK_MEM:
		if (!ch->copy_failed &&
				guarded_memcpy(ch->dst + ch->got, src, n))
			ch->copy_failed = true;
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
 * complete, 0 when more must arrive first, -1 when the socket ended.
 */
static int
rx_payload(struct tcp_chan *ch, size_t *budget)
{
	while (ch->got < ch->cur_payload) {
		size_t want = ch->cur_payload - ch->got;
		size_t avail = ch->rlen - ch->rpos;
		if (avail) {
			size_t take = avail < want ? avail : want;
			sink_bytes(ch, ch->rbuf + ch->rpos, take);
			ch->rpos += take;
			continue;
		}
		if (*budget == 0)
			return 0;
		long n;
		if (ch->sink == SINK_MEM && !ch->copy_failed &&
				want >= DIRECT_RECV_MIN) {
			/* straight into registered memory: no staging copy */
			do {
				n = recv(ch->fd, ch->dst + ch->got, want, 0);
			} while (n < 0 && errno == EINTR);
			if (n < 0)
				n = -errno;
			if (n == -EFAULT) {
				/*
				 * A page is gone (its file was truncated); the
				 * bytes stay in the socket: take them through
				 * the staging buffer, and the operation fails.
				 */
				ch->copy_failed = true;
				continue;
			}
			if (n > 0) {
				ch->got += (uint32_t)n;
				ch->last_rx_ns = loop_now_ns();
			}
		} else {
			n = tcp_chan_fill(ch);
		}
		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return 0;
		if (n <= 0) {
			socket_ended(ch->tc, n);
			return -1;
		}
		*budget = (size_t)n > *budget ? 0 : *budget - (size_t)n;
	}
	return 1;
}

int
tcp_chan_rx(struct tcp_chan *ch)
{
	struct tcp_conn *tc = ch->tc;
	size_t budget = RX_BUDGET;
	int ret = 0;

	while (ch->fd >= 0 && tc->state != TC_OVER && !ch->paused) {
		if (!ch->in_frame && ch == tc->tgt &&
				ch->tx_count >= TX_THROTTLE_FRAMES) {
			ch->throttled = true;
			tcp_chan_pause(ch, true);
			break;
		}
		if (!ch->in_frame) {
			if (ch->rlen - ch->rpos < TCP_FRAME_SIZE) {
				if (budget == 0)
					break;
				long n = tcp_chan_fill(ch);
				if (n == -EAGAIN || n == -EWOULDBLOCK)
					break;
				if (n <= 0) {
					socket_ended(tc, n);
					return -1;
				}
				budget = (size_t)n > budget ? 0 :
					budget - (size_t)n;
				continue;
			}
			if (tcp_frame_decode(ch->rbuf + ch->rpos, &ch->cur)) {
				tcp_conn_violation(tc, "malformed frame");
				return -1;
			}
			ch->rpos += TCP_FRAME_SIZE;
			ch->in_frame = true;
			ch->begun = false;
			ch->got = 0;
			ch->copy_failed = false;
			ch->cur_payload = tcp_frame_payload_len(&ch->cur);
		}
		if (!ch->begun) {
			int r = frame_begin(tc, ch);
			if (r < 0)
				return -1;
			if (r > 0)
				break;	/* paused until a receive is posted */
			ch->begun = true;
		}
		int r = rx_payload(ch, &budget);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		ch->in_frame = false;
		if (frame_end(tc, ch) < 0)
			return -1;
	}
	if (tc->state == TC_OVER)
		ret = -1;
	else if (ch == tc->tgt)
		tcp_target_ack(tc);
	return ret;
}

void
tcp_chan_ready(struct loop_watch *w, uint32_t events)
{
	struct tcp_chan *ch = w->arg;
	struct tcp_conn *tc = ch->tc;

	if (tc->state == TC_CONNECTING && (events & (EPOLLOUT | EPOLLERR |
			EPOLLHUP))) {
		tcp_connect_done(tc, ch == &tc->chan[0] ? 0 : 1);
		return;
	}
	if ((events & EPOLLOUT) && flush_chan(ch) < 0)
		return;
	if (ch->fd >= 0 && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP |
			EPOLLERR)))
		(void) tcp_chan_rx(ch);
}

/* ------------------------------------------------------------ operations */

static int
tp_accept(struct conn *conn, const void *pdata, uint8_t len, char *err,
		size_t errlen)
{
	struct tcp_conn *tc = conn->tp_conn;
	if (tc->remote_gone) {
		tc->state = TC_ACCEPTED;
		tcp_conn_over(tc, RPMA_CONN_LOST);
		return 0;
	}
	struct tcp_frame f = { .type = TF_ACCEPT, .length = len };
	if (tcp_chan_send(&tc->chan[0], &f, pdata, len, NULL, NULL)) {
		(void) snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	tc->state = TC_ACCEPTED;
	tcp_chan_mark_dirty(&tc->chan[0]);
	return 0;
}

static void
tp_reject(struct conn *conn)
{
	struct tcp_conn *tc = conn->tp_conn;
	struct tcp_frame f = { .type = TF_REJECT };
	if (tc->chan[0].fd >= 0 &&
			tcp_chan_send(&tc->chan[0], &f, NULL, 0, NULL, NULL) == 0)
		(void) tcp_chan_flush(&tc->chan[0]);
	tc->state = TC_OVER;
}

static void
tp_disconnect(struct conn *conn)
{
	struct tcp_conn *tc = conn->tp_conn;
	if (tc == NULL)
		return;
	switch (tc->state) {
	case TC_ESTABLISHED:
		tc->state = TC_DISCONNECTING;
		tcp_ops_fail_outstanding(tc, IBV_WC_WR_FLUSH_ERR);
		tcp_conn_send_goodbye(tc);
		tc->timer.fn = goodbye_timeout;
		loop_timer_arm(rpmad.loop, &tc->timer, GOODBYE_TIMEOUT_NS);
		break;
	case TC_CONNECTING:
	case TC_HELLO:
	case TC_ACCEPTED:
	case TC_WAITING:
		/* not up yet: just go; the core reports the close */
		tcp_chan_close(&tc->chan[0], true);
		tcp_chan_close(&tc->chan[1], true);
		tc->state = TC_OVER;
		break;
	default:
		break;
	}
}

static void
tp_release(struct conn *conn, bool abort)
{
	struct tcp_conn *tc = conn->tp_conn;
	if (tc == NULL)
		return;
	tcp_ops_forget(tc);
	tcp_local_forget(tc);
	if (!abort) {
		if (tc->state == TC_ESTABLISHED)
			tcp_conn_send_goodbye(tc);
		for (int i = 0; i < 2; i++)
			if (tc->chan[i].fd >= 0)
				(void) tcp_chan_flush(&tc->chan[i]);
	}
	for (int i = 0; i < 2; i++) {
		tcp_chan_forget_dirty(&tc->chan[i]);
		tcp_chan_close(&tc->chan[i], abort);
	}
	tc->conn = NULL;
	conn->tp_conn = NULL;
	tcp_conn_free(tc);
}

static int
tp_post(struct conn *conn, struct work *w)
{
	struct tcp_conn *tc = conn->tp_conn;
	if (tc == NULL || tc->state != TC_ESTABLISHED)
		return -EAGAIN;
	if (tc->local_peer)
		return tcp_local_post(tc, w);
	return tcp_ops_post(tc, w);
}

static void
tp_recv_posted(struct conn *conn)
{
	struct tcp_conn *tc = conn->tp_conn;
	if (tc == NULL)
		return;
	tcp_target_resume(tc);
	tcp_local_resume(tc);
}

static int
tp_adopt(struct conn *conn, struct incoming *inc, char *err, size_t errlen)
{
	struct tcp_conn *tc = inc->tp_state;
	tc->conn = conn;
	tc->inc = NULL;
	conn->tp_conn = tc;
	return 0;
}

static void
tp_incoming_drop(struct incoming *inc, bool reject)
{
	struct tcp_conn *tc = inc->tp_state;
	if (reject && tc->chan[0].fd >= 0) {
		struct tcp_frame f = { .type = TF_REJECT };
		if (tcp_chan_send(&tc->chan[0], &f, NULL, 0, NULL, NULL) == 0)
			(void) tcp_chan_flush(&tc->chan[0]);
	}
	tcp_conn_free(tc);
	free(inc);
}

const struct transport_ops transport_tcp = {
	.name = "tcp",
	.listen = tcp_listen,
	.unlisten = tcp_unlisten,
	.incoming_drop = tp_incoming_drop,
	.adopt = tp_adopt,
	.connect = tcp_connect,
	.accept = tp_accept,
	.reject = tp_reject,
	.disconnect = tp_disconnect,
	.release = tp_release,
	.post = tp_post,
	.recv_posted = tp_recv_posted,
};

static struct device *
tcp_device_for(const struct sockaddr_storage *ss, socklen_t len, bool local)
{
	(void) ss;
	(void) len;
	(void) local;
	return software_device;
}

const struct transport_entry transport_tcp_entry = {
	.name = "tcp",
	.ops = &transport_tcp,
	.fallback = true,
	.device_noun = "software device",
	.init = transport_tcp_init,
	.fini = transport_tcp_fini,
	.device_for = tcp_device_for,
	.pending = transport_tcp_pending,
};
