/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * late.h -- requests the library stopped waiting for, and their answers
 *
 * A slow rpmad is not a dead one: a call whose answer does not come in
 * time fails alone (broker.c) and its request stays here, by id, until
 * the answer comes. rpmad answers in order, so late answers come before
 * the answer to whatever is asked next, and each is recognized here and
 * put right:
 * - what it made is undone (a peer, a registration, an endpoint, a
 *   connection request, outgoing or incoming): the library never heard of
 *   it; the delete that undoes it goes out as one more request whose
 *   answer nobody waits for;
 * - the connection event it took from rpmad is kept for the connection's
 *   next rpma_conn_next_event (its notification was read already);
 * - anything else is dropped: a delete that came late happened (the
 *   library's object finds rpmad's gone, broker.c), an answer without an
 *   object changed nothing the library holds.
 *
 * Everything here belongs to the session of broker.c and is called with
 * its lock held (but late_events_owed, which may be read without).
 */

#ifndef RPMACLIENT_LATE_H
#define RPMACLIENT_LATE_H

#include <stdbool.h>
#include <stdint.h>

#include "conn_pdata.h"
#include "rpmad.pb-c.h"

/* How many requests may be left unanswered before calls stop sending. */
#define LATE_MAX 32

/* late_full -- whether no more requests may go unanswered */
bool late_full(void);

/* late_add -- `req` (its id set) was sent and its answer did not come */
void late_add(const Rpmad__Request *req);

/*
 * late_answer -- struct ctl_late's answer (common/ctl_call.h): whether
 * `resp` answers a request added here; if so it is taken and put right,
 * and resp and its descriptors are freed.
 */
bool late_answer(void *arg, Rpmad__Response *resp, int *fds, unsigned nfds);

/* A request that undoes what a late answer made, with its body. */
struct late_undo {
	Rpmad__Request req;
	union {
		Rpmad__PeerDelete peer;
		Rpmad__MrDereg mr;
		Rpmad__EpShutdown ep;
		Rpmad__ConnReqDelete conn_req;
	} body;
};

/*
 * late_undo_next -- the first undo to send, into *u (its id is the
 * caller's to set); false when there is none, or no room to wait for one
 * more answer
 */
bool late_undo_next(struct late_undo *u);

/* late_undo_sent -- the one late_undo_next gave left (late_add it too) */
void late_undo_sent(void);

/* A connection event that came late. */
struct late_event {
	uint64_t conn_id;
	int32_t event;
	bool has_pdata;
	uint8_t pdata_len;
	uint8_t pdata[CONN_PDATA_MAX];
};

/* late_events_owed -- how many events are owed or kept (no lock needed) */
unsigned late_events_owed(void);

/*
 * late_event_take -- the kept event of `conn_id` into *ev: 1, or 0 when
 * none is kept; -1 when none is kept and its answer has not come yet
 */
int late_event_take(uint64_t conn_id, struct late_event *ev);

/* late_event_forget -- the connection is deleted: its events go */
void late_event_forget(uint64_t conn_id);

/* late_reset -- the session ended: forget everything */
void late_reset(void);

#endif /* RPMACLIENT_LATE_H */
