// SPDX-License-Identifier: BSD-3-Clause
/*
 * reply.c -- how a handler answers its request: done, a failure with its
 * reason, the descriptors that go back
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clients/call.h"
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

void
req_fail_call(struct req_ctx *rc, const struct call *call)
{
	(void) snprintf(rc->errmsg, sizeof(rc->errmsg), "%s", call->msg);
	rpmad__error__init(&rc->err);
	rc->err.code = call->code;
	rc->err.errnum = call->errnum;
	rc->err.message = rc->errmsg;
	rc->resp.error = &rc->err;
	rc->resp.body_case = RPMAD__RESPONSE__BODY__NOT_SET;
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
