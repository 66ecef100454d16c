// SPDX-License-Identifier: BSD-3-Clause
/*
 * ctl_call.c -- one control request and its response
 */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

#include "ctl_call.h"

static int
failed(struct ctl_answer *ans, enum ctl_step step, int err)
{
	ans->failed = step;
	return err;
}

/* Waits for the answer; 0, -ETIMEDOUT or poll's errno. */
static int
wait_answer(int sock, int timeout_ms)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	int n;
	do {
		n = poll(&pfd, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

int
ctl_call(int sock, Rpmad__Request *req, const int *fds, unsigned nfds,
		int timeout_ms, struct ctl_answer *ans)
{
	ans->nfds = 0;
	ans->resp = NULL;

	size_t len = rpmad__request__get_packed_size(req);
	if (len > CTL_MAX_MSG)
		return failed(ans, CTL_STEP_PACK, -EMSGSIZE);
	/* one buffer for both packets; too large for every caller's stack */
	uint8_t *buf = malloc(CTL_MAX_MSG);
	if (buf == NULL)
		return failed(ans, CTL_STEP_PACK, -ENOMEM);
	rpmad__request__pack(req, buf);

	int ret = ctl_send(sock, buf, len, fds, nfds);
	if (ret) {
		ret = failed(ans, CTL_STEP_SEND, ret);
		goto out;
	}
	ret = wait_answer(sock, timeout_ms);
	if (ret) {
		ret = failed(ans, CTL_STEP_WAIT, ret);
		goto out;
	}

	int local[CTL_MAX_FDS];
	int *got = ans->fds ? ans->fds : local;
	unsigned ngot = 0;
	long n = ctl_recv(sock, buf, CTL_MAX_MSG, got, CTL_MAX_FDS, &ngot);
	if (n <= 0) {
		ret = n == 0 ? failed(ans, CTL_STEP_END, -ECONNRESET) :
			failed(ans, CTL_STEP_RECV, (int)n);
		goto out;
	}
	Rpmad__Response *resp = rpmad__response__unpack(NULL, (size_t)n, buf);
	if (resp == NULL || resp->id != req->id) {
		if (resp)
			rpmad__response__free_unpacked(resp, NULL);
		ctl_close_fds(got, ngot);
		ret = failed(ans, CTL_STEP_DECODE, -EBADMSG);
		goto out;
	}
	if (got == local)
		ctl_close_fds(local, ngot);
	else
		ans->nfds = ngot;
	ans->resp = resp;
out:
	free(buf);
	return ret;
}

void
ctl_hello(Rpmad__Request *req, Rpmad__Hello *hello, const char *client_name)
{
	rpmad__hello__init(hello);
	hello->version = RPMAD__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT;
	hello->client_name = (char *)client_name;
	rpmad__request__init(req);
	req->body_case = RPMAD__REQUEST__BODY_HELLO;
	req->hello = hello;
}
