/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_poll.h -- the poller of the connections' queue pairs (conn_poll.c)
 * as a connection's life calls it
 */

#ifndef RPMAD_CONN_POLL_H
#define RPMAD_CONN_POLL_H

#include <stdint.h>

struct loop_watch;

/* conn_poller_start -- the poller of every connection joins the loop */
void conn_poller_start(void);

/* The client rang the doorbell of a connection's queue pair. */
void conn_doorbell_ready(struct loop_watch *w, uint32_t events);

#endif /* RPMAD_CONN_POLL_H */
