// SPDX-License-Identifier: BSD-3-Clause
/*
 * reply.c -- how a handler answers its request: done, a failure with its
 * reason, the objects it names, the descriptors that go back
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clients/client.h"
#include "clients/reply.h"
#include "librpma.h"

void
req_fail(struct req_ctx *rc, int code, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(rc->errmsg, sizeof(rc->errmsg), fmt, ap);
	va_end(ap);
	if (errnum)
		(void) snprintf(rc->errmsg + strlen(rc->errmsg),
				sizeof(rc->errmsg) - strlen(rc->errmsg),
				": %s", strerror(errnum));

	rpmad__error__init(&rc->err);
	rc->err.code = code;
	rc->err.errnum = errnum;
	rc->err.message = rc->errmsg;
	rc->resp.error = &rc->err;
	rc->resp.body_case = RPMAD__RESPONSE__BODY__NOT_SET;
}

struct obj *
req_find(struct req_ctx *rc, uint64_t id, enum obj_kind kind)
{
	static const char *const names[] = {
		[OBJ_PEER] = "peer",
		[OBJ_MR] = "registration",
		[OBJ_EP] = "endpoint",
		[OBJ_CONN] = "connection",
		[OBJ_SRQ] = "shared receive queue",
	};
	struct obj *o = registry_find(id, kind, &rc->client->owner);
	if (o == NULL) {
		req_fail(rc, RPMA_E_INVAL, 0, "no %s %llx in this session",
				names[kind], (unsigned long long)id);
		/* the library knows a delete that came late by it */
		rc->err.errnum = ENOENT;
	}
	return o;
}

void
req_ok(struct req_ctx *rc)
{
	rpmad__empty__init(&rc->ok);
	rc->resp.body_case = RPMAD__RESPONSE__BODY_OK;
	rc->resp.ok = &rc->ok;
}

int
req_take_fd(struct req_ctx *rc, unsigned i)
{
	/* -1 is what fds[] holds for "none", not an error code */
	if (i >= rc->nfds)
		return -1;
	int fd = rc->fds[i];
	rc->fds[i] = -1;
	return fd;
}

void
req_pass_fd(struct req_ctx *rc, int fd)
{
	if (rc->n_out_fds < CTL_MAX_FDS)
		rc->out_fds[rc->n_out_fds++] = fd;
}
