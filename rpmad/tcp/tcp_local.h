/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_local.h -- operations between two ends of a connection in this
 * rpmad, memory to memory, as the operations table and the receive
 * engine call them
 */

#ifndef RPMAD_TCP_LOCAL_H
#define RPMAD_TCP_LOCAL_H

#include <stdbool.h>

struct tcp_conn;
struct work;

/* execute work at the local peer; 0 */
/* the connection's flow of works memory to memory (tcp_conn_new) */
void tcp_local_init(struct tcp_conn *tc);
int tcp_local_post(struct tcp_conn *tc, struct work *w);
/* the peer posted receives: run work waiting for them */
void tcp_local_resume(struct tcp_conn *target);
/* a send waited too long for a receive at the local peer; false if none */
bool tcp_local_rnr_expired(struct tcp_conn *tc);
/* the connection ends: stop waiting (the core flushes the work) */
void tcp_local_forget(struct tcp_conn *tc);

#endif /* RPMAD_TCP_LOCAL_H */
