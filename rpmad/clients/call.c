// SPDX-License-Identifier: BSD-3-Clause
/*
 * call.c -- a call failing with its reason, the objects it names
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clients/call.h"
#include "clients/client.h"
#include "librpma.h"

void
call_fail(struct call *call, int code, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(call->msg, sizeof(call->msg), fmt, ap);
	va_end(ap);
	if (errnum)
		(void) snprintf(call->msg + strlen(call->msg),
				sizeof(call->msg) - strlen(call->msg), ": %s",
				strerror(errnum));
	call->code = code;
	call->errnum = errnum;
}

struct obj *
call_find(struct call *call, uint64_t id, enum obj_kind kind)
{
	static const char *const names[] = {
		[OBJ_PEER] = "peer",
		[OBJ_MR] = "registration",
		[OBJ_EP] = "endpoint",
		[OBJ_CONN] = "connection",
		[OBJ_SRQ] = "shared receive queue",
	};
	struct obj *o = registry_find(id, kind, &call->client->owner);
	if (o == NULL) {
		call_fail(call, RPMA_E_INVAL, 0, "no %s %llx in this session",
				names[kind], (unsigned long long) id);
		/* the library knows a delete that came late by it */
		call->errnum = ENOENT;
	}
	return o;
}
