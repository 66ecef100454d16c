/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_open.h -- opening the sockets of the software transport, as its
 * operations table names them
 */

#ifndef RPMAD_TCP_OPEN_H
#define RPMAD_TCP_OPEN_H

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

#endif /* RPMAD_TCP_OPEN_H */
