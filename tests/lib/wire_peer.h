/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire_peer.h -- a peer that speaks the software transport's wire itself
 * (rpmad/transport/tcp/tcp_wire.h, with rpmad's own encoder), for the
 * tests that lie on it or forge it: sockets to an endpoint (from a local
 * address of their choice), frames out and in, HELLOs. Failures of the
 * test's own calls fail the Check test.
 */

#ifndef WIRE_PEER_H
#define WIRE_PEER_H

#include <stddef.h>
#include <stdint.h>

#include "tcp/tcp_wire.h"

/* wire_connect -- a TCP socket to 127.0.0.1:port from 127.0.0.1 */
int wire_connect(const char *port);

/*
 * wire_connect_from -- from the local address `from` (another 127.x.y.z
 * plays another host); -1 when the connection is refused
 */
int wire_connect_from(const char *from, const char *port);

/* wire_send_all -- the bytes, unless rpmad closed the socket meanwhile */
void wire_send_all(int fd, const void *buf, size_t len);

/* wire_send_frame -- a frame and its payload */
void wire_send_frame(int fd, const struct tcp_frame *f, const void *payload,
		size_t len);

/* wire_recv_exact -- len bytes within timeout_ms: 1, 0 at the end, -1 */
int wire_recv_exact(int fd, void *buf, size_t len, int timeout_ms);

/* wire_recv_frame -- the next frame, its payload into buf: 1, 0, -1 */
int wire_recv_frame(int fd, struct tcp_frame *f, void *buf, size_t cap,
		int timeout_ms);

/* wire_closed_within -- whether rpmad ends the socket in time (1 or 0) */
int wire_closed_within(int fd, int timeout_ms);

/*
 * wire_hello -- the HELLO of a socket of a connection `token`: primary or
 * secondary, with `pdata_len` bytes of private data (NULL: zeros)
 */
void wire_hello(int fd, uint8_t role, const uint8_t *token,
		const void *pdata, uint8_t pdata_len);

/* wire_hello_of -- likewise, in the given wire version */
void wire_hello_of(int fd, uint16_t version, uint8_t role,
		const uint8_t *token, const void *pdata, uint8_t pdata_len);

/* wire_token -- a fresh random token */
void wire_token(uint8_t *token);

#endif /* WIRE_PEER_H */
