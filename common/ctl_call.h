/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_call.h -- one request to rpmad and its response: the round trip of
 * the library (librpmaclient/broker.c), rpmactl (rpmactl/client.c) and the
 * tests that speak the control protocol themselves.
 *
 * It packs the request, sends it with its descriptors as one packet
 * (common/ctl_socket.h), waits for the answer, receives it with the
 * descriptors it carries, unpacks it and checks that it answers this
 * request. What a caller does around it (locking, connecting, numbering its
 * requests, time-outs, wording of errors) stays the caller's.
 */

#ifndef RPMAD_COMMON_CTL_CALL_H
#define RPMAD_COMMON_CTL_CALL_H

#include <stdbool.h>

#include "ctl_socket.h"
#include "rpmad.pb-c.h"

/*
 * The step at which a round trip failed. Up to CTL_STEP_SEND nothing left:
 * the session is as it was. From CTL_STEP_WAIT on the request was sent and
 * its answer is missing or unusable: the session is out of step, unless
 * the answer is only late (-ETIMEDOUT at CTL_STEP_WAIT) and the caller
 * takes it when it comes (struct ctl_late).
 */
enum ctl_step {
	CTL_STEP_PACK,		/* too large (-EMSGSIZE) or -ENOMEM */
	CTL_STEP_SEND,		/* ctl_send failed, or no room in time */
	CTL_STEP_WAIT,		/* no answer in time (-ETIMEDOUT), poll failed */
	CTL_STEP_RECV,		/* ctl_recv failed (-EMSGSIZE: too large) */
	CTL_STEP_END,		/* rpmad closed the connection (-ECONNRESET) */
	CTL_STEP_DECODE,	/* not a response, or not to this request */
};

/*
 * Answers to requests a caller stopped waiting for (the library's, when
 * rpmad was slow: librpmaclient/late.c). Such a caller sends the next
 * request while they are outstanding; rpmad answers in order, so their
 * answers come first, and each is offered here.
 */
struct ctl_late {
	/*
	 * Whether `resp` answers one of them: if so the function owns resp
	 * (rpmad__response__free_unpacked) and its nfds descriptors in fds
	 * (to close or keep); if not, it leaves both alone.
	 */
	bool (*answer)(void *arg, Rpmad__Response *resp, int *fds,
			unsigned nfds);
	void *arg;
};

/* What came back. */
struct ctl_answer {
	/*
	 * Set by the caller: room for CTL_MAX_FDS descriptors of the answer,
	 * which are the caller's from then on; NULL: they are closed.
	 */
	int *fds;
	/* set by the caller: its requests answered late; NULL: none */
	const struct ctl_late *late;
	unsigned nfds;
	Rpmad__Response *resp;	/* rpmad__response__free_unpacked() it */
	enum ctl_step failed;	/* after an error: where */
};

/*
 * ctl_call -- send `req` (its id set by the caller) with `nfds`
 * descriptors over `sock` and wait up to `timeout_ms` (-1: no limit) for
 * its response, sending included (a peer that reads nothing fills its
 * queue). Responses to other requests before it go to ans->late, and are
 * a protocol error without it. Returns 0 with ans->resp, whose id is
 * req->id (an error reply included: that is the caller's to read), or a
 * negative errno with nothing in `ans` (no response, no descriptors) and
 * the step in ans->failed: -ETIMEDOUT at CTL_STEP_SEND or CTL_STEP_WAIT
 * when the time ran out.
 */
int ctl_call(int sock, Rpmad__Request *req, const int *fds, unsigned nfds,
		int timeout_ms, struct ctl_answer *ans);

/*
 * ctl_drain -- between requests: take every packet already waiting on
 * `sock`, without waiting; each must be an answer `late` takes. Returns 0
 * when none is left, -ECONNRESET at the end of the stream (rpmad closed
 * the session), -EBADMSG when something else came, or another negative
 * errno.
 */
int ctl_drain(int sock, const struct ctl_late *late);

/*
 * ctl_hello -- the first request of every session: this build's protocol
 * version and the client's name, in `hello` (which must outlive req).
 */
void ctl_hello(Rpmad__Request *req, Rpmad__Hello *hello,
		const char *client_name);

#endif /* RPMAD_COMMON_CTL_CALL_H */
