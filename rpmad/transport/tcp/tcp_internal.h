/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_internal.h -- the parts of the software transport above its
 * connection object (tcp_conn.h), shared among
 *   transport_tcp.c  the transport's operations and the receive engine
 *   tcp_setup.c      listening, connecting, the HELLO handshake
 *   tcp_ops.c        operations: the initiator's and the target's side
 *   tcp_local.c      operations between two ends in this rpmad
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
struct tcp_chan;
struct tcp_conn;

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
/* execute work at the local peer; 0 */
int tcp_local_post(struct tcp_conn *tc, struct work *w);
/* the peer posted receives: run work waiting for them */
void tcp_local_resume(struct tcp_conn *target);
/* a send waited too long for a receive at the local peer */
void tcp_local_rnr_expired(struct tcp_conn *tc);
/* forget waiting work (the core flushes it) */
void tcp_local_forget(struct tcp_conn *tc);

/* ---- transport_tcp.c ---- */
/* epoll callback of every connection socket */
void tcp_chan_ready(struct loop_watch *w, uint32_t events);
/* process what arrived on a channel; -1 when the connection is over */
int tcp_chan_rx(struct tcp_chan *ch);

#endif /* RPMAD_TCP_INTERNAL_H */
