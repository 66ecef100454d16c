/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * request.h -- a control packet decoded, checked and handed to the
 * handler of its kind (the handlers answer through reply.h)
 */

#ifndef RPMAD_REQUEST_H
#define RPMAD_REQUEST_H

#include <stddef.h>
#include <stdint.h>

struct session;

/*
 * request_handle -- decode one packet of a session and answer it. Returns
 * 0, or -EPROTO when the packet was not a request at all (logged; the
 * session should end).
 */
int request_handle(struct session *s, const uint8_t *buf, size_t len,
		int *fds, unsigned nfds);

#endif /* RPMAD_REQUEST_H */
