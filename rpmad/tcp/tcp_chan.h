/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_chan.h -- one TCP socket of the software transport: what it sends,
 * what it has read, and the channels to flush before the loop sleeps
 */

#ifndef RPMAD_TCP_CHAN_H
#define RPMAD_TCP_CHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "loop/fairq.h"
#include "loop/loop.h"
#include "tcp/tcp_wire.h"

struct as_batch;
struct mr;
struct tcp_batch_role;
struct tcp_chan;
struct tcp_conn;
struct tx_item;
struct tcp_tls;

#define TCP_RBUF_SIZE (64 * 1024)
#define TCP_INLINE_MAX (TCP_FRAME_SIZE + TCP_HELLO_SIZE + TCP_PDATA_MAX)

/*
 * One frame to send: header and small payload inline, big payload by
 * reference to the registration it is read from when it leaves (as a NIC
 * reads it then), held alive by a reference.
 */
struct tx_item {
	struct tx_item *next;
	uint8_t head[TCP_INLINE_MAX];
	size_t head_len;
	struct mr *mr;		/* the payload's registration, or NULL */
	uint64_t addr;		/* the client's address of the payload */
	uint8_t *buf;		/* else the payload's own copy, or NULL */
	size_t payload_len;
	bool staged_only;	/* never straight from rpmad's mapping */
	size_t sent;
	uint8_t type;		/* the frame's (enum tcp_frame_type) */
	uint64_t seq;		/* and its number */
	/*
	 * a payload in the client's own memory, read by the client's thread
	 * (as_worker.h) a slice at a time before it goes: the slice fetched,
	 * and whether that slice (or one before) lost bytes
	 */
	struct as_batch *fetch;
	const uint8_t *fetched;
	size_t fetch_off, fetch_len;
	bool fetch_busy;
	bool fetch_lost;
};

/*
 * What the owner of a channel's frames hears of payloads the client's
 * thread read (tcp_chan_fetch_start)
 */
struct tcp_fetch_role {
	/*
	 * bytes of `it`'s payload could not be read: before anything of the
	 * frame went (`unsent`: the owner drops or replaces it), or after
	 * (zeros went in their place)
	 */
	void (*lost)(struct tcp_chan *ch, struct tx_item *it, bool unsent);
	/* the whole payload of `it` is read (may be NULL) */
	void (*fetched)(struct tcp_chan *ch, struct tx_item *it);
};

/* Where the payload of the frame being received goes. */
enum rx_sink {
	SINK_MEM,	/* registered memory (dst_mr at dst_addr), by mr_io */
	SINK_BATCH,	/* batch_dst: the client's thread writes it later */
	SINK_SCRATCH,	/* the channel's small buffer (set-up frames) */
	SINK_DISCARD,	/* nowhere: an operation the target refused */
};

struct tcp_chan {
	int fd;
	struct loop_watch watch;
	uint32_t events;
	struct tcp_conn *tc;	/* whose socket it is (opaque here) */
	/*
	 * its TLS (tcp_tls.h): a handshake under way, or the relay whose
	 * socketpair fd is one end of when the kernel has no TLS; NULL for
	 * plain sockets and those the kernel encrypts
	 */
	struct tcp_tls *tls;

	/* receiving: a staging buffer, then the frame being received */
	uint8_t *rbuf;
	size_t rpos, rlen;
	bool in_frame;
	bool begun;		/* the frame's handler accepted its header */
	struct tcp_frame cur;
	uint32_t cur_payload;	/* payload bytes of cur (0 for READ, FLUSH) */
	enum rx_sink sink;
	struct mr *dst_mr;
	uint64_t dst_addr;
	/*
	 * SINK_BATCH: where the payload's bytes batch_start up to batch_end
	 * go in the batch
	 */
	uint8_t *batch_dst;
	uint32_t batch_start, batch_end;
	uint32_t got;
	bool staged_only;	/* a page was lost: no recv straight into it */
	uint8_t scratch[TCP_HELLO_SIZE + TCP_PDATA_MAX];
	bool paused;		/* waiting for a receive buffer (RNR) */
	/*
	 * what frames read here do to a client's own memory (tcp_batch.h):
	 * the batch they add to, the one with the client's thread, the
	 * current frame's end waiting for its bytes, reading stopped for
	 * them; the channel's role and how to read on
	 */
	struct as_batch *rx_batch, *rx_busy;
	bool rx_deferred, rx_end_pending, rx_nomem, batch_paused;
	const struct tcp_batch_role *rx_role;
	void (*rx_resume)(struct tcp_chan *ch);
	uint64_t *heard;	/* stamped when bytes arrive (tcp_liveness.h) */

	/* sending */
	struct tx_item *tx_head, *tx_tail;
	uint8_t *stage;		/* payload read out of a client's memory */
	struct tx_item *stage_item;	/* whose payload it holds, */
	size_t stage_off, stage_len;	/* which bytes of it */
	unsigned tx_count;	/* frames queued */
	struct tx_item **spare;	/* unused items, shared by both sockets */
	bool throttled;		/* not reading until answers drain */
	const struct tcp_fetch_role *fetch_role;

	/*
	 * The arbiter's turns (fairq.h): sending what is queued, and reading
	 * once the socket is readable; a full socket's EPOLLOUT wakes the
	 * former, its EPOLLIN the latter (ignored while it is queued)
	 */
	struct fairq_flow tx_flow, rx_flow;
	bool rx_queued;		/* readable: reading is the arbiter's */
};

int tcp_chan_setup_socket(int fd);

/* bytes arrived: the remote rpmad is alive (a stamp where it is watched) */
static inline void
tcp_chan_heard(struct tcp_chan *ch)
{
	if (ch->heard)
		*ch->heard = loop_now_ns();
}

/*
 * fn: the socket's events; tx_turn and rx_turn: its turns of sending and
 * reading (the receive engine's, above this file)
 */
void tcp_chan_init(struct tcp_chan *ch, struct tcp_conn *tc, int fd,
		loop_fd_fn *fn, fairq_run_fn *tx_turn, fairq_run_fn *rx_turn);
/* the socket of `src`, with what it has read, becomes `dst`'s */
void tcp_chan_move(struct tcp_chan *dst, struct tcp_conn *tc,
		struct tcp_chan *src);
void tcp_chan_close(struct tcp_chan *ch, bool abort);
/*
 * queue a frame: header, inline bytes, and (mr not NULL) the rest of its
 * length as payload from the registration at the client's addr; 0, or
 * -ENOTCONN (the socket is closed) or -ENOMEM
 */
int tcp_chan_send(struct tcp_chan *ch, const struct tcp_frame *f,
		const void *inline_data, size_t inline_len, struct mr *mr,
		uint64_t addr);
/*
 * queue a frame whose payload, len bytes at data, is copied now; 0, or
 * -ENOTCONN or -ENOMEM
 */
int tcp_chan_send_copy(struct tcp_chan *ch, const struct tcp_frame *f,
		const void *data, size_t len);
/*
 * tcp_chan_drop -- take `it` out of the queue, and with `later` every
 * operation frame after it that has not begun to go (the work they carry
 * failed)
 */
void tcp_chan_drop(struct tcp_chan *ch, struct tx_item *it, bool later);
/* write what is queued; 0, or a negative errno when the socket failed */
int tcp_chan_flush(struct tcp_chan *ch);
/*
 * write at most `budget` bytes of what is queued (*sent: how many, *frames:
 * how many frames went out whole); 1 when more is queued and the socket
 * would take it, 0 when nothing is left or the socket is full (its
 * EPOLLOUT wakes the turn), or a negative errno when the socket failed
 */
int tcp_chan_send_some(struct tcp_chan *ch, size_t budget, size_t *sent,
		unsigned *frames);
bool tcp_chan_pending(const struct tcp_chan *ch);
void tcp_chan_pause(struct tcp_chan *ch, bool paused);
/* watch the socket for exactly these events (a TLS handshake's) */
void tcp_chan_set_events(struct tcp_chan *ch, uint32_t events);
/*
 * the TCP socket's own addresses (also when rpmad relays its TLS): 0 or
 * -errno, as getsockname/getpeername
 */
int tcp_chan_local_addr(const struct tcp_chan *ch,
		struct sockaddr_storage *ss, socklen_t *len);
int tcp_chan_peer_addr(const struct tcp_chan *ch,
		struct sockaddr_storage *ss, socklen_t *len);
/* read more into the staging buffer: >0 bytes, 0 EOF, -EAGAIN, -errno */
long tcp_chan_fill(struct tcp_chan *ch);

/* frames were queued: the channel's sending turn is due */
void tcp_chan_mark_dirty(struct tcp_chan *ch);
/* the channel goes away: no more turns */
void tcp_chan_forget_dirty(struct tcp_chan *ch);
/* the socket is readable (or more is to be read): a reading turn is due */
void tcp_chan_rx_due(struct tcp_chan *ch);
/* the reading turn ended: `more` to read now, else watch the socket again */
void tcp_chan_rx_done(struct tcp_chan *ch, bool more);
/* the socket is writable again: a sending turn is due */
void tcp_chan_tx_due(struct tcp_chan *ch);

#endif /* RPMAD_TCP_CHAN_H */
