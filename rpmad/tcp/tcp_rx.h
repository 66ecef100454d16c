/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_rx.h -- the receive engine of the software transport, as the files
 * above it see it: the handlers they give the loop, and what resumes it
 */

#ifndef RPMAD_TCP_RX_H
#define RPMAD_TCP_RX_H

#include <stdbool.h>
#include <stdint.h>

#include "loop/fairq.h"
#include "loop/loop.h"

struct tcp_chan;
struct tcp_conn;

/* epoll callback of every connection socket */
void tcp_rx_ready(struct loop_watch *w, uint32_t events);
/* the timer of a connection's RNR wait (tcp_conn_new) */
void tcp_rx_rnr_expired(struct loop_timer *t);
/*
 * send what is queued; a socket that fails ends the connection, one
 * throttled for its unread answers reads again. false when the connection
 * object is gone (not adopted yet, freed)
 */
bool tcp_rx_flush(struct tcp_chan *ch);
/*
 * a socket's turns (fairq.h): sending what is queued, reading what
 * arrived, a slice at a time (tcp_chan_init)
 */
size_t tcp_rx_tx_turn(struct fairq_flow *f, size_t budget, bool *more);
size_t tcp_rx_rx_turn(struct fairq_flow *f, size_t budget, bool *more);
/* receives were posted: a message waiting for one lands now */
void tcp_rx_resume(struct tcp_conn *tc);

#endif /* RPMAD_TCP_RX_H */
