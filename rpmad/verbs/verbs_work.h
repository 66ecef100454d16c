/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_work.h -- the data path on a connection's queue pair, as the
 * operations table, the queue pair's watchers and the connection's end
 * use it
 */

#ifndef RPMAD_VERBS_WORK_H
#define RPMAD_VERBS_WORK_H

struct conn;
struct verbs_conn;
struct work;

/* the operations: data path (see transport.h) */
int verbs_post(struct conn *conn, struct work *w);
void verbs_recv_posted(struct conn *conn);

/* verbs_work_post_recvs -- the client's posted receives to the device,
 * while it has room */
void verbs_work_post_recvs(struct verbs_conn *vc);

/* verbs_work_poll -- take every completion the device has; how many */
int verbs_work_poll(struct verbs_conn *vc);

/* verbs_work_failed -- the queue pair failed: flush what it holds */
void verbs_work_failed(struct verbs_conn *vc);

/*
 * verbs_work_lost -- the peer cannot be reached (the device gave up
 * retrying, the link stayed down): the queue pair fails and the
 * connection is lost, as the TCP transport reports a silent peer
 */
void verbs_work_lost(struct verbs_conn *vc);

#endif /* RPMAD_VERBS_WORK_H */
