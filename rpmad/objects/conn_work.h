/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_work.h -- a connection's work path (conn_work.c) as the files of a
 * connection above it call it: the poller and its life. What a transport
 * calls of it stands in transport/transport.h.
 */

#ifndef RPMAD_CONN_WORK_H
#define RPMAD_CONN_WORK_H

#include <stdbool.h>

struct conn;
struct qp;

/* Every further work request is flushed: the queue pair is in error. */
void conn_set_qp_error(struct conn *conn);

/* Takes work from the SQ into the transport; returns how much. */
int conn_take_work(struct conn *conn);

/* Flushes everything still in the rings (the queue pair is in error). */
int conn_flush_rings(struct conn *conn);

/* Flushes the work the transport refused for now (it holds none of it). */
int conn_flush_deferred(struct conn *conn);

/* Where the connection's receives are posted: its own RQ or a shared one. */
struct qp *conn_recv_qp(struct conn *conn);

/* Lets go of the transport and flushes what it had. */
void conn_release_transport(struct conn *conn, bool abort);

#endif /* RPMAD_CONN_WORK_H */
