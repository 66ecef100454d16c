/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_handshake.h -- the set-up frames of the software transport, as the
 * receive engine, the file that opens sockets and the operations table
 * call them
 */

#ifndef RPMAD_TCP_HANDSHAKE_H
#define RPMAD_TCP_HANDSHAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "librpma.h"

struct conn;
struct incoming;
struct tcp_chan;
struct tcp_conn;
struct tcp_frame;

/* the core's answer to an incoming request (struct transport_ops) */
int tcp_adopt(struct conn *conn, struct incoming *inc, char *err,
		size_t errlen);
int tcp_accept(struct conn *conn, const void *pdata, uint8_t len, char *err,
		size_t errlen);
void tcp_reject(struct conn *conn);
void tcp_incoming_drop(struct incoming *inc, bool reject);

/* the active side's socket i finished connecting (or failed) */
void tcp_connect_done(struct tcp_conn *tc, int i);
/*
 * the TLS handshake of the active side's socket i ended (tcp_tls.h): the
 * socket goes on with HELLO, or the connection falls back to plain TCP
 * (tls = on) or ends rejected; why: the handshake's failure
 */
void tcp_connect_secured(struct tcp_conn *tc, int i, bool ok,
		const char *why);
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

#endif /* RPMAD_TCP_HANDSHAKE_H */
