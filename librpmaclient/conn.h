/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.h -- connections and connection requests, for the library's use
 */

#ifndef RPMACLIENT_CONN_H
#define RPMACLIENT_CONN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "abi.h"
#include "conn_pdata.h"
#include "librpma.h"
#include "qp.h"

/* An owned copy of private data (len 0: none). */
struct private_data {
	uint8_t bytes[CONN_PDATA_MAX];
	uint8_t len;
};

struct rpma_conn_req {
	struct rpma_peer *peer;
	struct qp *qp;
	bool incoming;
	struct private_data pdata;	/* incoming: what the client sent */
	int compl_fd;		/* the shared channel (1.x), or -1 */
};

struct rpma_conn {
	struct rpma_peer *peer;
	struct qp *qp;
	struct private_data pdata;	/* what the other side sent */
	bool direct_write_to_pmem;	/* from the remote peer's config */
	bool lost_reported;		/* rpmad vanished, LOST was said */
	int compl_fd;		/* the shared channel (1.x), or -1 */

	/* rpma_atomic_write's 8-byte slots (atomic_write.c) */
	pthread_mutex_t atomic_lock;
	struct rpma_mr_local *staging;	/* NULL until the first one */
	void *staging_buf;
	size_t staging_size;
	uint32_t staging_slots, staging_next;
};

/* private_data_set -- copy len bytes (at most CONN_PDATA_MAX) */
void private_data_set(struct private_data *pd, const void *ptr, size_t len);

/* private_data_get -- expose the copy the way the API does */
void private_data_get(struct private_data *pd,
		struct rpma_conn_private_data *out);

/*
 * conn_new -- the connection object a request turns into; it takes over
 * the request's queue pair and private data.
 */
int conn_new(struct rpma_conn_req *req, struct rpma_conn **conn_ptr);

/*
 * conn_staging_delete -- deregister and free rpma_atomic_write's staging
 * buffer, if it was made (atomic_write.c)
 */
int conn_staging_delete(struct rpma_conn *conn);

/*
 * compl_channel_new -- the shared completion channel of qp's queues, a
 * descriptor the caller owns (compl_channel.c)
 */
int compl_channel_new(struct qp *qp, int *fd_ptr);

/*
 * conn_next_event -- rpma_conn_next_event as the given version reports it
 * (a server that could not be reached: 1.x RPMA_CONN_UNREACHABLE, 0.12
 * RPMA_E_UNKNOWN)
 */
int conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event,
		enum rpma_abi abi);

#endif /* RPMACLIENT_CONN_H */
