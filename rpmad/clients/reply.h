/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reply.h -- one control request of a client being answered
 *
 * A handler reads rc->req, takes the descriptors it expects, does its work
 * and ends with req_ok()/a body or req_fail(). Whatever it did not take is
 * closed; descriptors it queued with req_pass_fd() travel with the answer.
 * The handlers of control/ answer through it; the objects they call see
 * a call (call.h) instead. control/request.c makes one per request.
 */

#ifndef RPMAD_REPLY_H
#define RPMAD_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "core/registry.h"
#include "ctl_socket.h"
#include "rpmad.pb-c.h"

struct call;
struct client;

struct req_ctx {
	struct client *client;	/* who asks: the owner of what it makes */
	const Rpmad__Request *req;

	int *fds;		/* received with the request */
	unsigned nfds;

	Rpmad__Response resp;
	Rpmad__Error err;
	char errmsg[512];

	int out_fds[CTL_MAX_FDS];	/* sent with the answer, then closed */
	unsigned n_out_fds;
	/* the answer carries these credentials (control/vouch.h) */
	bool vouch;
	struct ucred vouch_as;

	/* room for the answer bodies */
	Rpmad__Empty ok;
	Rpmad__HelloReply hello;
	Rpmad__DeviceInfo device;
	Rpmad__PeerReply peer;
	Rpmad__MrRegReply mr;
	Rpmad__EpReply ep;
	Rpmad__QpReply qp;
	Rpmad__ConnEvent event;
	Rpmad__LandingReply landing;

	/* called after the answer went out (frees what the body points to) */
	void (*after)(void *arg);
	void *after_arg;
};

/* req_fail -- answer with an RPMA_E_* code, errno and a reason */
void req_fail(struct req_ctx *rc, int code, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * req_fail_call -- answer with the failure of an object's call
 * (call.h): its code, errno and reason as the call wrote them
 */
void req_fail_call(struct req_ctx *rc, const struct call *call);

/* req_ok -- answer "done", no body */
void req_ok(struct req_ctx *rc);

/* req_take_fd -- own received descriptor i (-1, no descriptor, when absent) */
int req_take_fd(struct req_ctx *rc, unsigned i);

/* req_pass_fd -- send fd with the answer; it is closed afterwards */
void req_pass_fd(struct req_ctx *rc, int fd);

#endif /* RPMAD_REPLY_H */
