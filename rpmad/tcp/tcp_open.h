/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_open.h -- opening the sockets of the software transport, as its
 * operations table names them
 */

#ifndef RPMAD_TCP_OPEN_H
#define RPMAD_TCP_OPEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct conn;
struct ep;

int tcp_listen(struct ep *ep, const struct sockaddr_storage *ss,
		socklen_t len, char *err, size_t errlen);
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
struct tcp_conn;
bool tcp_connect_older(struct tcp_conn *tc);

/*
 * tcp_connect_plain -- the other end did not take TLS (why: how it
 * failed): with tls = on, connect again without it (once). false when
 * that does not apply (tls = required, or plain already).
 */
bool tcp_connect_plain(struct tcp_conn *tc, const char *why);

#endif /* RPMAD_TCP_OPEN_H */
