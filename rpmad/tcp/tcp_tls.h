/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_tls.h -- TLS 1.3 on the software transport's sockets, mutual, with
 * pre-shared keys (tcp_psk.h) as NVMe/TCP uses them: the handshake by
 * OpenSSL, then the kernel's TLS (kTLS: TCP_ULP "tls", TLS_TX, TLS_RX)
 * encrypts and decrypts what the receive engine and the senders move with
 * recv and writev on the socket as before. Where the kernel has no TLS,
 * rpmad relays each socket itself: the engine's end is one end of a
 * socketpair, and the loop moves its bytes through OpenSSL to the TCP
 * socket (slower; logged at start).
 *
 * rpmad.conf's tls: off (no TLS; a TLS hello is garbage, as to an older
 * rpmad), on (a connecting rpmad offers TLS with the first key of the
 * file and falls back to plain TCP when the other end does not take it;
 * an accepting one takes TLS with any key of the file, and plain TCP),
 * required (TLS with a known key, both ways, or nothing).
 */

#ifndef RPMAD_TCP_TLS_H
#define RPMAD_TCP_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "transport/transport.h"

struct tcp_chan;
struct tcp_conn;
struct tcp_tls;

/*
 * tcp_tls_setup -- take the tls settings: load the keys, make the
 * contexts and, once, see whether the kernel has TLS. At start and at
 * every reload (connections keep what they were made with). 0, or a
 * negative errno with the reason in err (nothing changed then).
 */
int tcp_tls_setup(const struct transport_settings *set, char *err,
		size_t len);

/* tcp_tls_fini -- at exit: every relay and context goes */
void tcp_tls_fini(void);

/* tcp_tls_mode -- the tls setting in force */
enum transport_tls tcp_tls_mode(void);

/* tcp_tls_kernel -- whether the kernel encrypts (kTLS), else rpmad does */
bool tcp_tls_kernel(void);

/*
 * tcp_tls_connect -- the active side's socket i is connected: TLS over
 * it; the handshake's end calls tcp_connect_secured() (tcp_handshake.h)
 */
void tcp_tls_connect(struct tcp_conn *tc, int i);

/*
 * tcp_tls_incoming -- a socket just accepted: its first byte says TLS or
 * not; a TLS handshake is answered, a plain socket goes on as before
 * (refused with tls = required); the TLS peer's identity is the socket's
 * (tc->tls_identity) before its HELLO is read
 */
void tcp_tls_incoming(struct tcp_conn *tc);

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

#endif /* RPMAD_TCP_TLS_H */
