/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_handshake.h -- the set-up frames of the software transport, as the
 * receive engine and the files that open sockets call them
 */

#ifndef RPMAD_TCP_HANDSHAKE_H
#define RPMAD_TCP_HANDSHAKE_H

#include <stdint.h>

#include "librpma.h"

struct tcp_chan;
struct tcp_conn;
struct tcp_frame;

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

#endif /* RPMAD_TCP_HANDSHAKE_H */
