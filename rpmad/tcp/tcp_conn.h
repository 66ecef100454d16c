/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_conn.h -- the software transport's connection object and listening
 * endpoint, as every part of the transport sees them
 */

#ifndef RPMAD_TCP_CONN_H
#define RPMAD_TCP_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "loop/backoff.h"
#include "loop/loop.h"
#include "objects/conn.h"
#include "tcp/tcp_chan.h"
#include "tcp/tcp_liveness.h"
#include "tcp/tcp_psk.h"
#include "tcp/tcp_wire.h"

struct ep;
struct incoming;
struct mr;

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
	uint64_t peer_id;		/* the other rpmad's, from the handshake */
	/*
	 * the wire version spoken (tcp_wire.h): active, the one offered;
	 * passive, the HELLO's (0 before it)
	 */
	uint16_t wire_version;
	bool offered_older;		/* active: connecting again with it */
	/*
	 * TLS (tcp_tls.h): whether its sockets speak it, and the identity
	 * of the pre-shared key that authenticated the other end (the
	 * active side's own); sockets pair only with the same identity.
	 * Active: whether this attempt offers TLS, and whether it fell back
	 * to plain TCP (tls = on, the other end did not take TLS).
	 */
	bool tls;
	char tls_identity[TCP_PSK_IDENTITY_MAX + 1];
	bool tls_attempt;
	bool tls_fell_back;
	struct sockaddr_storage remote;	/* the other end (its log lines) */
	struct tcp_member member;	/* its remote's, while established */

	/* passive, until adopted */
	struct tcp_ep *tep;
	struct incoming *inc;
	bool remote_gone;
	struct tcp_conn *pair_next;	/* the endpoint's unpaired sockets */

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
	bool tgt_error;		/* refused one: discard the rest */
	bool rnr;		/* a message waits for a receive buffer */
	struct mr *tgt_mr;	/* registration a payload is landing in */
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
	uint64_t acked;		/* what our ACKs acknowledged */
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
	bool local_reading;		/* local_job reads the source */
	struct as_batch *local_read;
	const uint8_t *local_bytes;
	uint64_t local_n;
	bool local_over;
	int local_status;
	size_t local_overdraft;		/* moved beyond the turn's budget */

	struct tx_item *free_items;	/* the sockets' spare items */
	struct tcp_conn *all_prev, *all_next;
};

struct tcp_ep {
	struct ep *ep;
	int fd;
	struct loop_watch watch;
	struct backoff pause;		/* when accept fails (descriptors) */
	struct tcp_conn *unpaired;	/* one socket of two arrived */
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
 * tcp_conn_log -- a log line the other end caused, charged to it: to its
 * host's share (remote_log.h), or to its user's when that end is a client
 * of this very rpmad (tenant.h)
 */
void tcp_conn_log(const struct tcp_conn *tc, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * the connection is up: watch the other rpmad (tcp_liveness.h) unless it is
 * this one; 0, or -ENOMEM (the caller ends the connection)
 */
int tcp_conn_watch_remote(struct tcp_conn *tc);
/* queue our DISCONNECT behind our operations */
void tcp_conn_send_goodbye(struct tcp_conn *tc);

#endif /* RPMAD_TCP_CONN_H */
