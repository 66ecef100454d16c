/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fstream.h -- a steady stream of every kind of work on one connection,
 * for tests that break the connection in the middle of it: writes,
 * visibility flushes, reads and sends, signaled and unsignaled, with
 * FS_WINDOW of them in flight and FS_RECVS receives posted at all times.
 *
 * After the break, fs_drain() checks the semantics of a broken
 * reliable connection: the connection reports RPMA_CONN_LOST or
 * RPMA_CONN_CLOSED; every work request still outstanding completes
 * exactly once and with an error, in posting order; signaled work that
 * completed before never completes again; nothing else completes.
 *
 * Used by role processes of tests/integration's itest.h (failures are
 * IT_ASSERTs). Both ends of a connection run the same stream: each one's
 * sends meet the other's receives.
 */

#ifndef FSTREAM_H
#define FSTREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "itest.h"

#define FS_WINDOW 24	/* send-queue work in flight */
#define FS_RECVS 16	/* receives kept posted */
#define FS_RING 64	/* bookkeeping ring of send-queue work (> window) */

/* The kinds of work, also the top byte of each wr_id. */
enum fs_kind { FS_WRITE, FS_FLUSH, FS_READ, FS_SEND, FS_RECV, FS_KINDS };

/* What the break looked like; times are it_now_ms() values. */
struct fs_result {
	uint64_t t_break;	/* the first sign of it */
	uint64_t t_event;	/* the connection event */
	uint64_t t_flushed;	/* the last outstanding completion */
	const char *cause;	/* what showed it first */
	enum rpma_conn_event event;
	unsigned sq_outstanding;	/* at the break */
	unsigned rq_outstanding;
	unsigned failed[FS_KINDS];	/* error completions by kind */
	unsigned failed_unsignaled;	/* ... of unsignaled work */
	unsigned failed_other;	/* ... with a status other than WR_FLUSH_ERR */
	uint64_t ok;		/* successful completions before the break */
};

struct fs_stream {
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	int cq_fd, ev_fd;
	uint8_t *buf;
	struct rpma_mr_local *mr;
	struct rpma_mr_remote *rmr;

	uint32_t sq_next, sq_done;	/* posted; completed or skipped */
	uint8_t sq_kind[FS_RING];
	bool sq_signaled[FS_RING];
	bool sq_failed;			/* an SQ error completion came */
	uint32_t rq_next, rq_done;
	bool rq_failed;

	bool broken, event_seen;
	struct fs_result res;
};

/* The queue sizes both ends must use (rpma_conn_req_new/next_conn_req). */
const struct rpma_conn_cfg *fs_conn_cfg(void);

/*
 * fs_init -- register the stream's buffer with peer, post the receives.
 * The other end needs this end's descriptor (it_send_desc(to, s->mr, NULL)).
 */
void fs_init(struct fs_stream *s, struct rpma_peer *peer,
		struct rpma_conn *conn);

/* fs_set_remote -- the other end's registration */
void fs_set_remote(struct fs_stream *s, const struct it_desc *desc);

/* fs_run_ok -- stream until `n` successful completions (fails on a break) */
void fs_run_ok(struct fs_stream *s, uint64_t n);

/* fs_run_until_broken -- stream until the connection breaks (bounded) */
void fs_run_until_broken(struct fs_stream *s, int timeout_ms);

/*
 * fs_idle_until_broken -- post nothing, only wait (bounded) until the
 * connection breaks; its receives stay posted
 */
void fs_idle_until_broken(struct fs_stream *s, int timeout_ms);

/*
 * fs_drain -- after the break: wait (bounded) for the event and for every
 * outstanding completion, checking each as the header says
 */
void fs_drain(struct fs_stream *s, int timeout_ms);

/* fs_posts_fail -- every kind of post now fails with RPMA_E_PROVIDER */
void fs_posts_fail(struct fs_stream *s);

/* fs_report -- one line about the break, times relative to `since` */
void fs_report(const struct fs_stream *s, const char *who, uint64_t since);

/* fs_fini -- disconnect, delete the connection, release the buffer */
void fs_fini(struct fs_stream *s);

#endif /* FSTREAM_H */
