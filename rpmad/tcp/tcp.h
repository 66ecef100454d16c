/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp.h -- the software transport's own header: daemon to daemon over TCP
 * (docs/internals.md), what each of its files offers the others. The
 * transport sees rpmad through transport/transport.h alone; the frames
 * it speaks are tcp_wire.h's.
 *
 * From the top, each file standing on those below it alone (a lower one
 * calls up only through handlers it is given); the sections of this
 * header follow them from the bottom up.
 *
 *   transport_tcp.c  the operations table and the table entry
 *   tcp_rx.c         the receive engine
 *   tcp_ops.c        operations, the initiator's side
 *   tcp_target.c     operations, the target's side
 *   tcp_open.c       listening, connecting, TLS on a new socket
 *   tcp_handshake.c  the set-up frames (HELLO, ACCEPT, REJECT, READY)
 *   tcp_batch.c      bytes of a client's own memory, in batches
 *   tcp_conn.c       the connection object, its endpoint
 *   tcp_local.c      both ends in this rpmad: memory to memory
 *   tcp_complete.c   how our operations complete
 *   tcp_chan.c       one socket: what it sends, what it has read
 *   tcp_tls.c        TLS 1.3 on a socket, pre-shared keys (tcp_psk.c)
 *   tcp_liveness.c   whether the remote rpmads are still there
 *   tcp_log.c        log lines charged to the other end
 *   tcp_env.c        what rpmad gave the transport at init
 */

#ifndef RPMAD_TCP_H
#define RPMAD_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tcp/tcp_wire.h"
#include "transport/transport.h"

struct tcp_batch_role;
struct tcp_chan;
struct tcp_conn;
struct tcp_ep;
struct tcp_remote;
struct tcp_tls;
struct tx_item;

/* ----------------------------------------------------------- tcp_env.c */

/* what rpmad gave the transport at init (transport.h) */
extern const struct transport_env *tcp_env;

/* ----------------------------------------------------------- tcp_psk.c */

/*
 * tcp_psk.c -- the pre-shared keys of the software transport's TLS
 * (rpmad.conf's tls_psk_file): one line per key, IDENTITY:HEXKEY, as
 * NVMe/TCP's retained keys are; '#' starts a comment. The first key is
 * the one this rpmad presents when it connects; every key is one it
 * accepts from a connecting rpmad.
 */

#define TCP_PSK_IDENTITY_MAX 128
#define TCP_PSK_KEY_MIN 16 /* bytes: 128 bits */
#define TCP_PSK_KEY_MAX 64

struct tcp_psk {
	char identity[TCP_PSK_IDENTITY_MAX + 1];
	uint8_t key[TCP_PSK_KEY_MAX];
	size_t key_len;
};

struct tcp_psk_table {
	struct tcp_psk *keys;
	size_t n;
};

/*
 * tcp_psk_parse_line -- one line: 0 with the key in *out, 1 when it holds
 * none (blank, a comment), or -EINVAL with the reason in why
 */
int tcp_psk_parse_line(const char *line, struct tcp_psk *out, char *why,
		size_t len);

/*
 * tcp_psk_load -- the keys of the file at path, which must be a regular
 * file of root's (or of the user rpmad runs as) that nobody else may read
 * or write, with at least one key and no identity twice. 0, or a negative
 * errno with the reason (naming file and line) in err; t is untouched
 * then.
 */
int tcp_psk_load(const char *path, struct tcp_psk_table *t, char *err,
		size_t len);

/* tcp_psk_find -- the key of an identity (as sent: not NUL-terminated) */
const struct tcp_psk *tcp_psk_find(const struct tcp_psk_table *t,
		const uint8_t *identity, size_t len);

/* tcp_psk_free -- forget the keys (their bytes are wiped) */
void tcp_psk_free(struct tcp_psk_table *t);

/* ----------------------------------------------------------- tcp_log.c */

/*
 * tcp_conn_log -- a log line the other end caused, charged to it: to its
 * host's share (remote_log.h), or to its user's when that end is a client
 * of this very rpmad (tenant.h)
 */
void tcp_conn_log(const struct tcp_conn *tc, int level, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------ tcp_liveness.c */

/*
 * tcp_liveness.c -- whether the rpmads at the other end of our
 * connections are still there, one heartbeat per remote rpmad
 *
 * A remote rpmad (its address and the id it gave in the handshake) is
 * alive while anything arrives from it on any socket; each connection to
 * it is a member (tcp_liveness.c says why). This file knows nothing of
 * connections: the members' owner says how to send a heartbeat through
 * one and how to end one (struct tcp_liveness_ops, given with each).
 */

/* a connection's place among its remote's */
struct tcp_member {
	struct tcp_remote *remote; /* NULL: not watched */
	struct tcp_member *prev, *next;
};

struct tcp_liveness_ops {
	/* send a heartbeat through m; 0, or a negative errno (try another) */
	int (*beat)(struct tcp_member *m);
	/* m's remote fell silent: end m's connection; m has left already */
	void (*lost)(struct tcp_member *m);
};

/* the loop its timers run on, the timeout (tcp_timeout_ms) it keeps */
void tcp_liveness_init(const struct transport_env *env);

/* this rpmad's id for the handshake: random, made at the first call */
uint64_t tcp_liveness_self_id(void);

/*
 * m joins the remote rpmad at addr (the port does not count) with this id,
 * made when it is the first; the remote was heard from just now. `alone`:
 * a remote of m's own, shared with no other member (a peer of wire version
 * 1 has no id, and watches each connection by itself). Returns
 * where the member's sockets stamp the time something arrived
 * (struct tcp_chan's heard), or NULL when out of memory.
 */
uint64_t *tcp_remote_join(struct tcp_member *m,
		const struct sockaddr_storage *addr, uint64_t id, bool alone,
		const struct tcp_liveness_ops *ops);
/* m leaves (again: nothing); the last one out frees the remote */
void tcp_remote_leave(struct tcp_member *m);

/* how many remote rpmads are watched (tests) */
unsigned tcp_remotes_count(void);

/* ----------------------------------------------------------- tcp_tls.c */

/*
 * tcp_tls.c -- TLS 1.3 on the software transport's sockets, mutual, with
 * pre-shared keys (tcp_psk.c) as NVMe/TCP uses them; the socket goes on
 * as before under it, encrypted by the kernel or relayed by rpmad.
 *
 * rpmad.conf's tls: off (no TLS; a TLS hello is garbage, as to an older
 * rpmad), on (a connecting rpmad offers TLS with the first key of the
 * file and falls back to plain TCP when the other end does not take it;
 * an accepting one takes TLS with any key of the file, and plain TCP),
 * required (TLS with a known key, both ways, or nothing).
 *
 * It wraps a socket and knows no connection: tcp_open.c runs a new
 * socket's handshake in the loop and decides what its end means.
 */

/*
 * tcp_tls_setup -- take the tls settings: load the keys, make the
 * contexts and, once, see whether the kernel has TLS. At start and at
 * every reload (connections keep what they were made with). 0, or a
 * negative errno with the reason in err (nothing changed then).
 */
int tcp_tls_setup(const struct transport_settings *set, char *err, size_t len);

/* tcp_tls_fini -- at exit: every relay and context goes */
void tcp_tls_fini(void);

/* tcp_tls_mode -- the tls setting in force */
enum transport_tls tcp_tls_mode(void);

/* tcp_tls_kernel -- whether the kernel encrypts (kTLS), else rpmad does */
bool tcp_tls_kernel(void);

/* tcp_tls_start -- TLS on ch's socket (ch->tls), not begun; 0 or -ENOMEM */
int tcp_tls_start(struct tcp_chan *ch, bool client);
/*
 * tcp_tls_handshake -- a step of its handshake: 1 while it goes on
 * (*wait: the socket's events it waits for), 0 once the socket is secured
 * (the kernel's TLS, or a relay), a negative errno when it failed (why)
 */
int tcp_tls_handshake(struct tcp_chan *ch, uint32_t *wait, char *why,
		size_t len);
/* tcp_tls_identity -- whose key it proved: ours (client), the client's */
const char *tcp_tls_identity(const struct tcp_chan *ch);
/* tcp_tls_end -- the handshake is over: ch->tls goes, unless a relay stays */
void tcp_tls_end(struct tcp_chan *ch, bool ok);

/*
 * tcp_tls_chan_close -- the channel's socket is being closed (abort: with
 * a reset): a handshake under way ends, a relay sends what it holds and
 * closes its TCP socket (or resets it)
 */
void tcp_tls_chan_close(struct tcp_chan *ch, bool abort);

/*
 * tcp_tls_net_fd -- the channel's TCP socket (its names, its options):
 * the relay's when rpmad relays it, else the channel's own
 */
int tcp_tls_net_fd(const struct tcp_chan *ch);

/* tcp_tls_move -- the channel's socket moved to ch (tcp_chan_move) */
void tcp_tls_move(struct tcp_chan *ch);

/* tcp_tls_pending -- whether a relay still has bytes to move */
bool tcp_tls_pending(void);

/* ---------------------------------------------------------- tcp_chan.c */

/*
 * tcp_chan.c -- one TCP socket of the software transport: what it sends,
 * what it has read, and the channels to flush before the loop sleeps
 */

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
	struct mr *mr; /* the payload's registration, or NULL */
	uint64_t addr; /* the client's address of the payload */
	uint8_t *buf; /* else the payload's own copy, or NULL */
	size_t payload_len;
	bool staged_only; /* never straight from rpmad's mapping */
	size_t sent;
	uint8_t type; /* the frame's (enum tcp_frame_type) */
	uint64_t seq; /* and its number */
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
	SINK_MEM, /* registered memory (dst_mr at dst_addr), by mr_io */
	SINK_BATCH, /* batch_dst: the client's thread writes it later */
	SINK_SCRATCH, /* the channel's small buffer (set-up frames) */
	SINK_DISCARD, /* nowhere: an operation the target refused */
};

/*
 * batches of a channel with the client's thread at once: while it lands
 * one, rpmad reads on and posts the next, so that a stream of writes does
 * not go in lock-step between the two
 */
#define TCP_BATCHES_OUT 4u

/* A batch with the client's thread, and how it came back. */
struct tcp_batch_out {
	struct as_batch *b;
	bool back;
	enum as_status status;
};

struct tcp_chan {
	int fd;
	struct loop_watch watch;
	uint32_t events;
	struct tcp_conn *tc; /* whose socket it is (opaque here) */
	/*
	 * its TLS (tcp_tls.c): a handshake under way, or the relay whose
	 * socketpair fd is one end of when the kernel has no TLS; NULL for
	 * plain sockets and those the kernel encrypts
	 */
	struct tcp_tls *tls;

	/* receiving: a staging buffer, then the frame being received */
	uint8_t *rbuf;
	size_t rpos, rlen;
	bool in_frame;
	bool begun; /* the frame's handler accepted its header */
	struct tcp_frame cur;
	uint32_t cur_payload; /* payload bytes of cur (0 for READ, FLUSH) */
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
	bool staged_only; /* a page was lost: no recv straight into it */
	uint8_t scratch[TCP_HELLO_SIZE + TCP_PDATA_MAX];
	bool paused; /* waiting for a receive buffer (RNR) */
	/*
	 * what frames read here do to a client's own memory (tcp_batch.c):
	 * the batch they add to, the ones with the client's thread (oldest
	 * first), the current frame's end waiting for its bytes, reading
	 * stopped for them; the channel's role and how to read on. Its
	 * batches are a stream (as_batch_set_stream), a new one after each
	 * failure.
	 */
	struct as_batch *rx_batch;
	uint64_t rx_stream;
	struct tcp_batch_out rx_out[TCP_BATCHES_OUT];
	unsigned rx_out_first, rx_out_n;
	bool rx_deferred, rx_end_pending, rx_nomem, batch_paused;
	const struct tcp_batch_role *rx_role;
	void (*rx_resume)(struct tcp_chan *ch);
	uint64_t *heard; /* stamped when bytes arrive (tcp_liveness.c) */

	/* sending */
	struct tx_item *tx_head, *tx_tail;
	uint8_t *stage; /* payload read out of a client's memory */
	struct tx_item *stage_item; /* whose payload it holds, */
	size_t stage_off, stage_len; /* which bytes of it */
	unsigned tx_count; /* frames queued */
	struct tx_item **spare; /* unused items, shared by both sockets */
	bool throttled; /* not reading until answers drain */
	const struct tcp_fetch_role *fetch_role;

	/*
	 * The arbiter's turns (fairq.h): sending what is queued, and reading
	 * once the socket is readable; a full socket's EPOLLOUT wakes the
	 * former, its EPOLLIN the latter (ignored while it is queued)
	 */
	struct fairq_flow tx_flow, rx_flow;
	bool rx_queued; /* readable: reading is the arbiter's */
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
int tcp_chan_local_addr(const struct tcp_chan *ch, struct sockaddr_storage *ss,
		socklen_t *len);
int tcp_chan_peer_addr(const struct tcp_chan *ch, struct sockaddr_storage *ss,
		socklen_t *len);
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

/* ------------------------------------------------------ tcp_complete.c */

/*
 * tcp_complete.c -- how our operations in flight complete, as the peer's
 * answers (tcp_ops.c) and its messages (tcp_target.c) say it did them
 */
/* w, as done by the target (or failed here: its local bytes were not) */
void tcp_complete(struct tcp_conn *tc, struct work *w);
/* a work never sent, which failed here, once it is the oldest */
void tcp_complete_unsent(struct tcp_conn *tc);
/* all before seq; 0, or -EPROTO for a read among them (its data says) */
int tcp_complete_before(struct tcp_conn *tc, uint64_t seq);
/*
 * what a message of the peer's says it did of ours, up to seq (a read
 * waits for its data); 0, or -EPROTO for operations never handed over
 */
int tcp_initiator_done_by_peer(struct tcp_conn *tc, uint64_t seq);

/* --------------------------------------------------------- tcp_local.c */

/*
 * tcp_local.c -- operations between two ends of a connection in this
 * rpmad, memory to memory, as the operations table and the receive
 * engine call them
 */

/* the connection's flow of works memory to memory (tcp_conn_new) */
void tcp_local_init(struct tcp_conn *tc);
/* execute work at the local peer; 0 */
int tcp_local_post(struct tcp_conn *tc, struct work *w);
/* the peer posted receives: run work waiting for them */
void tcp_local_resume(struct tcp_conn *target);
/* a send waited too long for a receive at the local peer; false if none */
bool tcp_local_rnr_expired(struct tcp_conn *tc);
/* the connection ends: stop waiting (the core flushes the work) */
void tcp_local_forget(struct tcp_conn *tc);

/* ---------------------------------------------------------- tcp_conn.c */

/*
 * tcp_conn.c -- the software transport's connection object and listening
 * endpoint, as every part of the transport sees them
 */

enum tc_state {
	TC_PAIRING, /* passive: waiting for the other socket */
	TC_WAITING, /* passive: at the endpoint, for the app */
	TC_CONNECTING, /* active: TCP connects under way */
	TC_HELLO, /* active: waiting for ACCEPT or REJECT */
	TC_ACCEPTED, /* passive: waiting for READY */
	TC_ESTABLISHED,
	TC_DISCONNECTING, /* our DISCONNECT is out */
	TC_OVER, /* reported to the core; waiting for release */
};

struct tcp_conn {
	struct conn *conn; /* NULL until a passive one is adopted */
	enum tc_state state;
	bool passive;
	struct tcp_chan chan[2]; /* [0] primary, [1] secondary */
	struct tcp_chan *ini; /* our operations go out here */
	struct tcp_chan *tgt; /* the peer's operations come in here */
	bool connected[2];
	uint8_t role; /* passive, pairing: enum tcp_hello_role */
	uint8_t token[TCP_TOKEN_SIZE];
	uint8_t pdata[TCP_PDATA_MAX]; /* active: to send; passive: received */
	uint8_t pdata_len;
	struct loop_timer timer; /* connect, pairing, goodbye */
	struct loop_timer rnr_timer;
	uint64_t peer_id; /* the other rpmad's, from the handshake */
	/*
	 * the wire version spoken (tcp_wire.h): active, the one offered;
	 * passive, the HELLO's (0 before it)
	 */
	uint16_t wire_version;
	bool offered_older; /* active: connecting again with it */
	/*
	 * TLS (tcp_tls.c): whether its sockets speak it, and the identity
	 * of the pre-shared key that authenticated the other end (the
	 * active side's own); sockets pair only with the same identity.
	 * Active: whether this attempt offers TLS, and whether it fell back
	 * to plain TCP (tls = on, the other end did not take TLS).
	 */
	bool tls;
	char tls_identity[TCP_PSK_IDENTITY_MAX + 1];
	bool tls_attempt;
	bool tls_fell_back;
	struct sockaddr_storage remote; /* the other end (its log lines) */
	struct tcp_member member; /* its remote's, while established */

	/* passive, until adopted */
	struct tcp_ep *tep;
	struct incoming *inc;
	bool remote_gone;
	struct tcp_conn *pair_next; /* the endpoint's unpaired sockets */

	/*
	 * initiator: our operations, sent and not answered, are the
	 * connection's works in flight (conn.h); the one whose local bytes
	 * could not be read or written (it fails in its turn), and whether
	 * its frame never went
	 */
	uint64_t ini_failed_seq;
	bool ini_failed_unsent;

	/* target (a message lands in the connection's receive in flight) */
	uint64_t expect_seq;
	uint64_t last_done;
	bool ack_due;
	bool tgt_error; /* refused one: discard the rest */
	bool rnr; /* a message waits for a receive buffer */
	struct mr *tgt_mr; /* registration a payload is landing in */
	/*
	 * a persistent flush: the DAX part in slices (persist_at on), then
	 * the page cache's in the thread of offload.h (persist_sync until
	 * its end, then persist_synced with its result); persist_resume is
	 * the receive engine's, to read on once it is over
	 */
	uint64_t persist_from, persist_at, persist_end;
	struct mr_sync *persist_sync;
	bool persist_synced;
	int persist_result;
	void (*persist_resume)(struct tcp_chan *ch);
	uint64_t acked; /* what our ACKs acknowledged */
	/* a read of the client's own memory: nothing taken until it is read */
	bool tgt_read_waits;

	/*
	 * Both ends in this rpmad: operations go memory to memory, the
	 * sockets carry set-up and tear-down only (see tcp_local.c); the
	 * works in flight are those waiting for a receive there.
	 */
	struct tcp_conn *local_peer;
	/*
	 * the works' turns: the oldest's progress, the receive it took, the
	 * page-cache part of its persist in the thread of offload.h
	 */
	struct fairq_flow local_flow;
	bool local_started;
	uint64_t local_done;
	struct recv_slot *local_rs;
	struct mr_sync *local_sync;
	bool local_synced;
	int local_sync_result;
	/*
	 * a slice that reads or writes a client's own memory, moved by that
	 * client's thread (as_worker.h): the batch out, the source's bytes
	 * once read, the slice's length, and, once it is over, how it went
	 */
	struct as_batch *local_job;
	bool local_reading; /* local_job reads the source */
	struct as_batch *local_read;
	const uint8_t *local_bytes;
	uint64_t local_n;
	bool local_over;
	int local_status;
	size_t local_overdraft; /* moved beyond the turn's budget */

	struct tx_item *free_items; /* the sockets' spare items */
	struct tcp_conn *all_prev, *all_next;
};

struct tcp_ep {
	struct ep *ep;
	int fd;
	struct loop_watch watch;
	struct backoff pause; /* when accept fails (descriptors) */
	struct tcp_conn *unpaired; /* one socket of two arrived */
	unsigned n_unpaired;
};

/*
 * a new connection object, on the list of all; `rnr_expired` ends its
 * waits for a receive buffer (the receive engine, above this file)
 */
struct tcp_conn *tcp_conn_new(loop_timer_fn *rnr_expired);
/* the connection is a client's (tc->conn): its turns are its tenant's */
void tcp_conn_set_tenant(struct tcp_conn *tc);
/* close the sockets and free; the connection is known to nobody */
void tcp_conn_free(struct tcp_conn *tc);
/* whether a socket of any connection still has frames to send */
bool tcp_conn_any_pending(void);

/* take a passive connection off its endpoint's unpaired sockets */
void tcp_conn_unpaired_remove(struct tcp_ep *tep, struct tcp_conn *tc);
/* link a passive connection with its active end in this rpmad, if there */
void tcp_conn_pair_local(struct tcp_conn *passive);

/* the connection is over: tell the core (once), stop reading */
void tcp_conn_over(struct tcp_conn *tc, enum rpma_conn_event event);
/* a passive connection's socket ended before the app took it */
void tcp_conn_socket_gone(struct tcp_conn *tc);
/* a peer broke the protocol: log, abort, report the connection lost */
void tcp_conn_violation(struct tcp_conn *tc, const char *what);

/*
 * the connection is up: watch the other rpmad (tcp_liveness.c) unless it is
 * this one; 0, or -ENOMEM (the caller ends the connection)
 */
int tcp_conn_watch_remote(struct tcp_conn *tc);
/* queue our DISCONNECT behind our operations */
void tcp_conn_send_goodbye(struct tcp_conn *tc);

/* --------------------------------------------------------- tcp_batch.c */

/*
 * tcp_batch.c -- what the frames read on a socket do to a client's own
 * memory, handed to the client's thread in batches (as_worker.h)
 *
 * Frames that land bytes in memory rpmad reaches through the client's
 * address space add them to the channel's batch. Batches go to the
 * client's thread as they are gathered, up to TCP_BATCHES_OUT at once when
 * each can follow the one before into the client's landing area (which
 * lands them in order); otherwise one at a time, and the frames read
 * meanwhile gather the next. They come back in the order they went.
 * A payload bigger than TCP_BATCH_SLICE goes through in slices, so that
 * what rpmad holds of it stays bounded. A frame whose end must wait for
 * its bytes (a message's receive completion, a read's data) makes reading
 * stop until they are in; so does any frame that must not overtake the
 * bytes before it (the role decides which). The role of the channel
 * (the target's operations, the initiator's answers) says what a batch
 * that comes back means.
 */

#define TCP_BATCH_SLICE (1u << 20)

struct tcp_batch_role {
	/*
	 * a batch is back, with how it went (first of all: it may stop what
	 * follows, tcp_batch_discard)
	 */
	void (*back)(struct tcp_chan *ch, struct as_batch *b,
			enum as_status status);
	/* the frame whose end waited for its bytes ends now */
	void (*end)(struct tcp_chan *ch);
	/* everything of the batch is done: answers that waited go now */
	void (*after)(struct tcp_chan *ch);
};

/* tcp_batch_pending -- whether bytes of frames read are yet to be done */
bool tcp_batch_pending(const struct tcp_chan *ch);

/* tcp_batch_busy -- the oldest batch with the client's thread, or NULL */
struct as_batch *tcp_batch_busy(const struct tcp_chan *ch);

/*
 * tcp_batch_gathering -- the batch frames add to, or NULL (its first tag
 * is the first frame not done)
 */
struct as_batch *tcp_batch_gathering(const struct tcp_chan *ch);

/*
 * tcp_batch_for -- the batch the current frame adds to (made for the
 * registration's client); NULL when out of memory
 */
struct as_batch *tcp_batch_for(struct tcp_chan *ch, struct mr *mr);

/*
 * tcp_batch_sink -- the current frame's payload goes to the client's
 * memory at addr of mr: its first slice's room in the batch (SINK_BATCH).
 * 0, or -ENOMEM.
 */
int tcp_batch_sink(struct tcp_chan *ch, struct mr *mr, uint64_t addr);

/*
 * tcp_batch_room -- the slice is full: room for the next (0), or 1 when
 * the thread is to catch up first (reading stops until it has)
 */
int tcp_batch_room(struct tcp_chan *ch);

/* tcp_batch_flush -- what was gathered goes to the thread, when it can */
void tcp_batch_flush(struct tcp_chan *ch);

/*
 * tcp_batch_wait -- the current frame waits for every batch before it:
 * they go, and reading stops until they are back. Returns 1 (as frame
 * handlers do to wait).
 */
int tcp_batch_wait(struct tcp_chan *ch);

/*
 * tcp_batch_end_waits -- the current frame's payload is in; its end waits
 * for its bytes (role->end runs then), and nothing is read until then
 */
void tcp_batch_end_waits(struct tcp_chan *ch);

/*
 * tcp_batch_discard -- after a failure: what was gathered is dropped, and
 * the batches out after the one that failed are forgotten (what they did
 * is not reported: the frames in them are refused)
 */
void tcp_batch_discard(struct tcp_chan *ch);

/*
 * tcp_batch_start -- the channel's role and how to read on after a wait
 * tcp_batch_forget -- the channel goes: its batches are dropped
 */
void tcp_batch_start(struct tcp_chan *ch, const struct tcp_batch_role *role,
		void (*resume)(struct tcp_chan *ch));
void tcp_batch_forget(struct tcp_chan *ch);

/* ----------------------------------------------------- tcp_handshake.c */

/*
 * tcp_handshake.c -- the set-up frames of the software transport, as the
 * receive engine, the file that opens sockets and the operations table
 * call them
 */

/* the core's answer to an incoming request (struct transport_ops) */
int tcp_adopt(struct conn *conn, struct incoming *inc, char *err,
		size_t errlen);
int tcp_accept(struct conn *conn, const void *pdata, uint8_t len, char *err,
		size_t errlen);
void tcp_reject(struct conn *conn);
void tcp_incoming_drop(struct incoming *inc, bool reject);

/*
 * tcp_channel_up -- the active side's socket i is connected and secured,
 * or failed to be (err): it says HELLO (once both have, the server has
 * accept_timeout_ms to answer); a failure ends the connection
 */
void tcp_channel_up(struct tcp_conn *tc, int i, int err);
/*
 * tcp_connect_outcome -- how a failed connect (errno) ends the connection;
 * when connecting again with an older wire version, as the first attempt
 * ended: rejected
 */
enum rpma_conn_event tcp_connect_outcome(const struct tcp_conn *tc, int err);
/*
 * a set-up frame (HELLO, ACCEPT, REJECT, READY) arrived; false when the
 * channel's connection object was freed (pairing, failure)
 */
bool tcp_setup_frame(struct tcp_conn *tc, struct tcp_chan *ch,
		const struct tcp_frame *f, const uint8_t *payload);

/* ---------------------------------------------------------- tcp_open.c */

/*
 * tcp_open.c -- opening the sockets of the software transport, as its
 * operations table and the receive engine name them
 *
 * The receive engine, above, gives its handlers once (tcp_open_init), and
 * every socket opened here gets them (tcp_chan_init, tcp_conn_new).
 */
struct tcp_engine {
	loop_fd_fn *ready; /* a socket's events */
	fairq_run_fn *tx_turn; /* its turns of sending */
	fairq_run_fn *rx_turn; /* and of reading */
	loop_timer_fn *rnr_expired; /* a connection's wait for a receive */
};

void tcp_open_init(const struct tcp_engine *engine);

int tcp_listen(struct ep *ep, const struct sockaddr_storage *ss, socklen_t len,
		char *err, size_t errlen);
void tcp_unlisten(struct ep *ep);
int tcp_connect(struct conn *conn, const void *pdata, uint8_t pdata_len,
		char *err, size_t errlen);

/*
 * tcp_connect_older -- the remote closed an active connection's HELLO
 * unanswered, as an rpmad of an older wire version does: connect again
 * offering the version before (once). false when that does not apply
 * (the caller ends the connection as before); true when the connection
 * is connecting again, or is over.
 */
bool tcp_connect_older(struct tcp_conn *tc);

/*
 * tcp_connect_plain -- the other end did not take TLS (why: how it
 * failed): with tls = on, connect again without it (once). false when
 * that does not apply (tls = required, or plain already).
 */
bool tcp_connect_plain(struct tcp_conn *tc, const char *why);

/* the active side's socket i connected (or failed): TLS first, or HELLO */
void tcp_connect_done(struct tcp_conn *tc, int i);
/*
 * the TLS handshake of the active side's socket i ended: HELLO, or plain
 * TCP again (tls = on), or the connection ends rejected (why: its failure)
 */
void tcp_connect_secured(struct tcp_conn *tc, int i, bool ok, const char *why);

/* -------------------------------------------------------- tcp_target.c */

/* tcp_target.c -- the target's side of operations over the sockets */

/*
 * A frame header arrived on the target (or initiator) channel: 0 to take
 * its payload where ch->sink says, 1 to wait (for a receive buffer, or for
 * the client's thread to finish what frames before it need of the
 * client's memory: `resume` reads on after that), a negative errno when
 * the connection ended (-EPROTO: the peer broke the protocol). Its end,
 * once the payload is in.
 */
int tcp_target_begin(struct tcp_conn *tc, struct tcp_chan *ch,
		void (*resume)(struct tcp_chan *ch));
void tcp_target_end(struct tcp_conn *tc, struct tcp_chan *ch);

/*
 * The persistent flush the current frame asks for: its DAX part at most
 * *budget bytes at a time (taken off *budget), its page-cache part in the
 * thread of offload.h while the channel is paused (`resume` reads it on
 * once that is over). True once all is done (or refused), false while
 * more is left for the next turn or the thread.
 */
bool tcp_target_persist(struct tcp_conn *tc, struct tcp_chan *ch,
		size_t *budget, void (*resume)(struct tcp_chan *ch));
/*
 * Part of the current frame's payload is in: for a message landing in a
 * receive's buffer, the client may copy that much out already
 * (conn_recv_filled), for messages of TCP_FILLED_MIN bytes or more.
 */
#define TCP_FILLED_MIN (32u << 10)
void tcp_target_filled(struct tcp_conn *tc, struct tcp_chan *ch);
/* after a batch of frames: send the ACK that is due */
void tcp_target_ack(struct tcp_conn *tc);
/*
 * the last of the peer's operations whose effects are all in memory: what
 * an ACK, or a message riding along, may acknowledge
 */
uint64_t tcp_target_done_upto(const struct tcp_conn *tc);
/*
 * the message waiting for a receive buffer waited too long: refuse it;
 * false when none waits
 */
bool tcp_target_rnr_expired(struct tcp_conn *tc);

/* ----------------------------------------------------------- tcp_ops.c */

/* tcp_ops.c -- the initiator's side of operations over the sockets */

int tcp_ops_post(struct tcp_conn *tc, struct work *w);
/*
 * the connection ends: let go of the registration a payload was landing
 * in (the core flushes the work and the receive in flight)
 */
void tcp_ops_forget(struct tcp_conn *tc);
/* an answer's header arrived, its end: as tcp_target_begin() and _end() */
int tcp_initiator_begin(struct tcp_conn *tc, struct tcp_chan *ch,
		void (*resume)(struct tcp_chan *ch));
void tcp_initiator_end(struct tcp_conn *tc, struct tcp_chan *ch);

/* ------------------------------------------------------------ tcp_rx.c */

/*
 * tcp_rx.c -- the receive engine: the handlers of every socket (given to
 * tcp_open_init as tcp_rx_engine), and what resumes it
 */
extern const struct tcp_engine tcp_rx_engine;

/* epoll callback of every connection socket */
void tcp_rx_ready(struct loop_watch *w, uint32_t events);
/* the timer of a connection's RNR wait (tcp_conn_new) */
void tcp_rx_rnr_expired(struct loop_timer *t);
/*
 * a socket's turns (fairq.h): sending what is queued, reading what
 * arrived, a slice at a time (tcp_chan_init)
 */
size_t tcp_rx_tx_turn(struct fairq_flow *f, size_t budget, bool *more);
size_t tcp_rx_rx_turn(struct fairq_flow *f, size_t budget, bool *more);
/*
 * send what is queued; a socket that fails ends the connection, one
 * throttled for its unread answers reads again. false when the connection
 * object is gone (not adopted yet, freed)
 */
bool tcp_rx_flush(struct tcp_chan *ch);
/* receives were posted: a message waiting for one lands now */
void tcp_rx_resume(struct tcp_conn *tc);

/* ----------------------------------------------------- transport_tcp.c */

/*
 * transport_tcp.c -- the software transport as its table entry and the
 * tests see it
 */

extern const struct transport_ops transport_tcp;
extern const struct transport_entry transport_tcp_entry;

/* transport_tcp_init -- make the software device and start; 0 or -ENOMEM */
int transport_tcp_init(const struct transport_env *env);
void transport_tcp_fini(void);

/* transport_tcp_pending -- whether frames still wait to be sent */
bool transport_tcp_pending(void);

#endif /* RPMAD_TCP_H */
