/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * th_ctl.h -- a control session of a test's own with rpmad (the socket
 * the library speaks on): requests built with th_requests.h sent as the
 * library sends them, or packets of any shape sent as they are, and the
 * answers read back. Failures are return values: the caller asserts.
 */

#ifndef TH_CTL_H
#define TH_CTL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "th_requests.h"

/* th_ctl_code's answer when there was none to read a code from */
#define TH_CTL_NO_ANSWER INT_MIN

struct th_ctl {
	int fd;
	uint64_t next_id;
};

/* th_ctl_connect -- a session to the socket at path, before its hello */
int th_ctl_connect(struct th_ctl *s, const char *path);

/* th_ctl_open -- th_ctl_connect, then hello as `name`; 0 or -1 */
int th_ctl_open(struct th_ctl *s, const char *path, const char *name);

void th_ctl_close(struct th_ctl *s);

/*
 * th_ctl_call -- number `req`, send it with its descriptors and take its
 * answer (within TH_WAIT_MS) into *resp, which the caller frees
 * (rpmad__response__free_unpacked). 0, or a negative errno and no answer:
 * -ECONNRESET when rpmad ended the session.
 */
int th_ctl_call(struct th_ctl *s, Rpmad__Request *req, const int *fds,
		unsigned nfds, Rpmad__Response **resp);

/*
 * th_ctl_code -- th_ctl_call, and the answer's RPMA_E_* code (0:
 * success); TH_CTL_NO_ANSWER when none came or it was an error without
 * its reason
 */
int th_ctl_code(struct th_ctl *s, Rpmad__Request *req, const int *fds,
		unsigned nfds);

/*
 * th_ctl_send_raw -- one packet of any length with any number of
 * descriptors, as given; 0, or -1 when the kernel refused it
 */
int th_ctl_send_raw(int fd, const void *buf, size_t len, const int *fds,
		unsigned nfds);

/*
 * th_ctl_answer -- the next packet from rpmad within timeout_ms,
 * unpacked (its descriptors into fds, at most CTL_MAX_FDS, or closed when
 * fds is NULL). 0 with *resp; -ECONNRESET at the end of the session,
 * -ETIMEDOUT, -EBADMSG for what is no response, another negative errno.
 */
int th_ctl_answer(int fd, int timeout_ms, Rpmad__Response **resp, int *fds,
		unsigned *nfds);

/*
 * th_ctl_ended_after -- send a raw packet: 1 when rpmad then ended the
 * session (or the kernel refused the packet), 0 when it answered with an
 * error, -1 when it answered otherwise or not at all
 */
int th_ctl_ended_after(struct th_ctl *s, const void *buf, size_t len,
		const int *fds, unsigned nfds);

#endif /* TH_CTL_H */
