/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_cm.h -- connections through the RDMA CM, as the operations table
 * and the CM's events reach them
 */

#ifndef RPMAD_VERBS_CM_H
#define RPMAD_VERBS_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/rdma_cma.h>

struct conn;
struct incoming;
struct verbs_conn;

/* the operations: connection life cycle (see transport.h) */
int verbs_adopt(struct conn *conn, struct incoming *inc, char *err,
		size_t errlen);
int verbs_connect(struct conn *conn, const void *pdata, uint8_t pdata_len,
		char *err, size_t errlen);
int verbs_accept(struct conn *conn, const void *pdata, uint8_t pdata_len,
		char *err, size_t errlen);
void verbs_reject(struct conn *conn);
void verbs_disconnect(struct conn *conn);
void verbs_release(struct conn *conn, bool abort);

/* verbs_cm_event -- one event of a connection's id (copied, acknowledged) */
void verbs_cm_event(struct verbs_conn *vc, const struct rdma_cm_event *ev);

/*
 * verbs_create_id -- rdma_create_id on channel `ch` in network namespace
 * `nsfd` (netns.h; -1: rpmad's): the CM takes the namespace of the thread
 * that makes an id, and resolves, binds and routes in it. 0, or -1 with
 * errno set.
 */
int verbs_create_id(int nsfd, struct rdma_event_channel *ch,
		struct rdma_cm_id **id, void *context);

#endif /* RPMAD_VERBS_CM_H */
