/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_internal.h -- the parts of the software transport, shared among
 *   transport_tcp.c  the transport's operations and connection life
 *   tcp_chan.c       one TCP socket: options, send queue, receive buffer
 *   tcp_setup.c      listening, connecting, the HELLO handshake
 *   tcp_ops.c        operations: the initiator's and the target's side
 */

#ifndef RPMAD_TCP_INTERNAL_H
#define RPMAD_TCP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "conn.h"
#include "loop.h"
#include "tcp_wire.h"

struct ep;
struct incoming;
struct mr;
struct tcp_conn;

#define TCP_RBUF_SIZE (64 * 1024)
#define TCP_INLINE_MAX (TCP_FRAME_SIZE + TCP_HELLO_SIZE + TCP_PDATA_MAX)

/* One frame to send: header and small payload inline, big payload by
 * reference (held alive by mr_ref). */
struct tx_item {
	struct tx_item *next;
	uint8_t head[TCP_INLINE_MAX];
	size_t head_len;
	const uint8_t *payload;
	size_t payload_len;
	struct mr *mr_ref;
	size_t sent;
};

/* Where the payload of the frame being received goes. */
enum rx_sink {
	SINK_MEM,	/* registered memory (dst), guarded copies */
	SINK_SCRATCH,	/* the channel's small buffer (set-up frames) */
	SINK_DISCARD,	/* nowhere: an operation the target refused */
};

struct tcp_chan {
	int fd;
	struct loop_watch watch;
	uint32_t events;
	struct tcp_conn *tc;

	/* receiving: a staging buffer, then the frame being received */
	uint8_t *rbuf;
	size_t rpos, rlen;
	bool in_frame;
	bool begun;		/* the frame's handler accepted its header */
	struct tcp_frame cur;
	uint32_t cur_payload;	/* payload bytes of cur (0 for READ, FLUSH) */
	enum rx_sink sink;
	uint8_t *dst;
	uint32_t got;
	bool copy_failed;
	uint8_t scratch[TCP_HELLO_SIZE + TCP_PDATA_MAX];
	bool paused;		/* waiting for a receive buffer (RNR) */
	uint64_t last_rx_ns;	/* when bytes last arrived */
	uint64_t last_tx_ns;	/* when bytes last left */

	/* sending */
	struct tx_item *tx_head, *tx_tail;
	unsigned tx_count;	/* frames queued */
	bool throttled;		/* not reading until answers drain */
	bool dirty;		/* frames queued since the last flush */
	struct tcp_chan *dirty_next;
};

enum tc_state {
	TC_PAIRING,		/* passive: waiting for the other socket */
	TC_WAITING,		/* passive: at the endpoint, for the app */
	TC_CONNECTING,		/* active: TCP connects under way */
	TC_HELLO,		/* active: waiting for ACCEPT or REJECT */
	TC_ACCEPTED,		/* passive: waiting for READY */
	TC_ESTABLISHED,
	TC_DISCONNECTING,	/* our DISCONNECT is out */
	TC_OVER,		/* reported to the core; waiting for release */
};

struct tcp_ep;

struct tcp_conn {
	struct conn *conn;		/* NULL until a passive one is adopted */
	enum tc_state state;
	bool passive;
	struct tcp_chan chan[2];	/* [0] primary, [1] secondary */
	struct tcp_chan *ini;		/* our operations go out here */
	struct tcp_chan *tgt;		/* the peer's operations come in here */
	bool connected[2];
	uint8_t role;			/* passive, pairing: enum tcp_hello_role */
	uint8_t token[TCP_TOKEN_SIZE];
	uint8_t pdata[TCP_PDATA_MAX];	/* active: to send; passive: received */
	uint8_t pdata_len;
	struct loop_timer timer;	/* connect, pairing, goodbye */
	struct loop_timer rnr_timer;
	struct loop_timer heartbeat;	/* liveness while established */

	/* passive, until adopted */
	struct tcp_ep *tep;
	struct incoming *inc;
	bool remote_gone;
	struct tcp_conn *pair_next;	/* the endpoint's unpaired sockets */

	/* initiator */
	uint64_t next_seq;
	struct work *out_head, *out_tail;	/* sent, unanswered, in order */

	/* target */
	uint64_t expect_seq;
	uint64_t last_done;
	bool ack_due;
	bool tgt_error;		/* refused one: discard the rest */
	bool rnr;		/* a message waits for a receive buffer */
	struct recv_slot rs;	/* the receive a message is landing in */
	bool rs_active;
	struct mr *tgt_mr;	/* registration a payload is landing in */

	/*
	 * Both ends in this rpmad: operations go memory to memory, the
	 * sockets carry set-up and tear-down only (see tcp_local.c).
	 */
	struct tcp_conn *local_peer;
	struct work *local_wait_head, *local_wait_tail;	/* RNR, in order */

	struct tx_item *free_items;
	struct tcp_conn *all_prev, *all_next;
};

struct tcp_ep {
	struct ep *ep;
	int fd;
	struct loop_watch watch;
	struct tcp_hs *handshakes;	/* accepted, HELLO not read yet */
	struct tcp_conn *unpaired;	/* one socket of two arrived */
	unsigned n_unpaired;
	bool warned_full;
};

/* ---- tcp_chan.c ---- */
int tcp_chan_setup_socket(int fd);
void tcp_chan_init(struct tcp_chan *ch, struct tcp_conn *tc, int fd,
		loop_fd_fn *fn);
void tcp_chan_close(struct tcp_chan *ch, bool abort);
/* queue a frame: header, inline bytes, optional referenced payload */
int tcp_chan_send(struct tcp_chan *ch, const struct tcp_frame *f,
		const void *inline_data, size_t inline_len,
		const void *payload, struct mr *mr_ref);
/* write what is queued; 0, or -1 when the socket failed */
int tcp_chan_flush(struct tcp_chan *ch);
bool tcp_chan_pending(const struct tcp_chan *ch);
void tcp_chan_pause(struct tcp_chan *ch, bool paused);
/* read more into the staging buffer: >0 bytes, 0 EOF, -EAGAIN, -errno */
long tcp_chan_fill(struct tcp_chan *ch);

/* ---- tcp_setup.c ---- */
int tcp_listen(struct ep *ep, const struct sockaddr_storage *ss,
		socklen_t len, char *err, size_t errlen);
void tcp_unlisten(struct ep *ep);
int tcp_connect(struct conn *conn, const void *pdata, uint8_t pdata_len,
		char *err, size_t errlen);
/* the active side's socket i finished connecting (or failed) */
void tcp_connect_done(struct tcp_conn *tc, int i);

/* tcp_connect_outcome -- how a failed connect (errno) ends the connection */
enum rpma_conn_event tcp_connect_outcome(int err);
/*
 * a set-up frame (HELLO, ACCEPT, REJECT, READY) arrived; -1 when the
 * channel's connection object was freed (pairing, failure)
 */
int tcp_setup_frame(struct tcp_conn *tc, struct tcp_chan *ch,
		const struct tcp_frame *f, const uint8_t *payload);
/* close the sockets and free; the connection is known to nobody */
void tcp_conn_free(struct tcp_conn *tc);
/* a passive connection's socket ended before the app took it */
void tcp_setup_socket_gone(struct tcp_conn *tc);

/* ---- tcp_ops.c ---- */
int tcp_ops_post(struct tcp_conn *tc, struct work *w);
/* a frame header arrived on the target (or initiator) channel */
int tcp_target_begin(struct tcp_conn *tc, struct tcp_chan *ch);
void tcp_target_end(struct tcp_conn *tc, struct tcp_chan *ch);
int tcp_initiator_begin(struct tcp_conn *tc, struct tcp_chan *ch);
void tcp_initiator_end(struct tcp_conn *tc, struct tcp_chan *ch);
/* after a batch of frames: send the ACK that is due */
void tcp_target_ack(struct tcp_conn *tc);
/* the core says receives were posted / the RNR wait expired */
void tcp_target_resume(struct tcp_conn *tc);
void tcp_target_rnr_expired(struct loop_timer *t);
/* forget all work: the connection ends (the core flushes it) */
void tcp_ops_forget(struct tcp_conn *tc);
/* complete every work still unanswered with `status` */
void tcp_ops_fail_outstanding(struct tcp_conn *tc, enum ibv_wc_status status);

/* ---- tcp_local.c ---- */
/* link a passive connection with its active end in this rpmad, if there */
void tcp_local_pair(struct tcp_conn *passive);
/* undo the link (either side going away) */
void tcp_local_unpair(struct tcp_conn *tc);
/* execute work at the local peer; 0 */
int tcp_local_post(struct tcp_conn *tc, struct work *w);
/* the peer posted receives: run work waiting for them */
void tcp_local_resume(struct tcp_conn *target);
/* a send waited too long for a receive at the local peer */
void tcp_local_rnr_expired(struct tcp_conn *tc);
/* forget waiting work (the core flushes it) */
void tcp_local_forget(struct tcp_conn *tc);

/* ---- transport_tcp.c ---- */
/* the active connection with this token, or NULL */
struct tcp_conn *tcp_conn_find_active(const uint8_t *token);
/* the connection is over: tell the core (once), stop reading */
void tcp_conn_over(struct tcp_conn *tc, enum rpma_conn_event event);
/* a peer broke the protocol: log, abort, report the connection lost */
void tcp_conn_violation(struct tcp_conn *tc, const char *what);
/* epoll callback of every connection socket */
void tcp_chan_ready(struct loop_watch *w, uint32_t events);
/* frames were queued: flush the channel before the loop sleeps */
void tcp_chan_mark_dirty(struct tcp_chan *ch);
/* process what arrived on a channel; -1 when the connection is over */
int tcp_chan_rx(struct tcp_chan *ch);
/* a new connection object, on the list of all */
struct tcp_conn *tcp_conn_new(void);
/* the connection is up: start proving that both ends are alive */
void tcp_conn_start_heartbeat(struct tcp_conn *tc);

#endif /* RPMAD_TCP_INTERNAL_H */
