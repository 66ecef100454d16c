/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * broker.h -- the library's one control connection to rpmad
 *
 * Opened lazily on the first call that needs the daemon, shared by all
 * threads (calls are serialized: the daemon answers every request at once),
 * and reopened after the daemon went away. Objects remember the generation
 * of the connection they were created in: the daemon forgot them when that
 * connection ended, so using them later fails cleanly.
 */

#ifndef RPMACLIENT_BROKER_H
#define RPMACLIENT_BROKER_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl_call.h"
#include "late.h"
#include "rpmad.pb-c.h"

struct broker_reply {
	Rpmad__Response *resp;
	int fds[CTL_MAX_FDS];
	unsigned nfds;
	uint64_t generation;	/* of the connection that answered */
};

/*
 * broker_call -- send `req` (its id is filled in) with `nfds` descriptors
 * and wait for the answer. `generation` is that of the object the request
 * is about (0 for requests about no object): a request for an object of an
 * ended session fails without reaching the daemon. Returns 0 with
 * reply->resp holding a response whose body case is `expect`, or an RPMA_E_*
 * code (the daemon's reason is logged; reply holds nothing then). An
 * answer that does not come in time fails the call alone
 * (RPMA_E_PROVIDER): the session stays, and late.c puts the answer right
 * when it comes. A delete of an object rpmad no longer has succeeds (an
 * earlier delete of it came late).
 */
int broker_call(uint64_t generation, Rpmad__Request *req, const int *fds,
		unsigned nfds, Rpmad__Response__BodyCase expect,
		struct broker_reply *reply);

/* broker_reply_fini -- free the response and close fds not taken (-1). */
void broker_reply_fini(struct broker_reply *reply);

/*
 * broker_take_fd -- take ownership of the reply's descriptor number i
 * (-1 when there is none).
 */
int broker_take_fd(struct broker_reply *reply, unsigned i);

/*
 * broker_call_simple -- broker_call for requests answered by "ok" (or an
 * error) only.
 */
int broker_call_simple(uint64_t generation, Rpmad__Request *req);

/*
 * broker_session_alive -- whether the daemon still holds the objects of
 * `generation`. Deleting an object of an ended session only has to free
 * the library's side of it.
 */
int broker_session_alive(uint64_t generation);

/*
 * broker_session_ended_by_rpmad -- whether the session of `generation`
 * ended because rpmad closed or reset it (it stopped, or ended its
 * sessions), not because this library gave it up
 */
int broker_session_ended_by_rpmad(uint64_t generation);

/*
 * broker_late_event -- the event of connection `conn_id` (of session
 * `generation`) that an rpma_conn_next_event gave up waiting for: 1 with
 * it in *ev, waiting for its answer as long as for any answer if it has
 * not come yet; 0 when none is owed (or the session ended); an RPMA_E_*
 * code when it still did not come (logged).
 */
int broker_late_event(uint64_t generation, uint64_t conn_id,
		struct late_event *ev);

/* broker_late_event_forget -- the connection is deleted: drop its events */
void broker_late_event_forget(uint64_t generation, uint64_t conn_id);

/*
 * broker_addrspace -- whether rpmad has this process's address space in
 * the session of `generation` (memshare.h)
 */
bool broker_addrspace(uint64_t generation);

/*
 * broker_maps_shared -- whether rpmad of the session of `generation` maps
 * shared memory of no storage passed by descriptor (memshare.h)
 */
bool broker_maps_shared(uint64_t generation);

/* broker_atfork_child -- the fork handler: the child has no session */
void broker_atfork_child(void);

#endif /* RPMACLIENT_BROKER_H */
