/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * call.h -- a client's call on an object as the objects see it: who asks
 * and, when it fails, why
 *
 * The objects know nothing of the control protocol: control/ makes a call
 * for each request, hands it to the typed calls of objects/ and turns a
 * failure written here into its answer (reply.h, req_fail_call).
 */

#ifndef RPMAD_CALL_H
#define RPMAD_CALL_H

#include <stdint.h>

#include "core/registry.h"

struct client;

struct call {
	struct client *client; /* who asks: the owner of what it makes */
	int code; /* the RPMA_E_* it failed with; 0: none */
	int errnum;
	char msg[512];
};

/* call_fail -- fail with an RPMA_E_* code, errno and a reason */
void call_fail(struct call *call, int code, int errnum, const char *fmt, ...)
		__attribute__((format(printf, 4, 5)));

/*
 * call_find -- the object `id` of this kind owned by the calling client;
 * NULL, with the call failed as RPMA_E_INVAL, when there is none.
 */
struct obj *call_find(struct call *call, uint64_t id, enum obj_kind kind);

#endif /* RPMAD_CALL_H */
