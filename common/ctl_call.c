// SPDX-License-Identifier: BSD-3-Clause
/*
 * ctl_call.c -- one control request and its response
 */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "ctl_call.h"

static int
failed(struct ctl_answer *ans, enum ctl_step step, int err)
{
	ans->failed = step;
	return err;
}

static int64_t
now_ms(void)
{
	struct timespec ts;
	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Waits until sock is ready for `events`, up to `deadline` (CLOCK_MONOTONIC
 * ms; -1: no limit); 0, -ETIMEDOUT or poll's errno.
 */
static int
wait_ready(int sock, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = sock, .events = events };
	int n;
	do {
		/* at most the int a caller gave as its time-out */
		int64_t left = deadline < 0 ? -1 : deadline - now_ms();
		n = poll(&pfd, 1, deadline < 0 ? -1 : left > 0 ? (int)left : 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

/*
 * Sends the packet, waiting for room up to `deadline` (a peer that does
 * not read fills its queue): ctl_send's result, or -ETIMEDOUT.
 */
static int
send_by(int sock, const uint8_t *buf, size_t len, const int *fds,
		unsigned nfds, int64_t deadline)
{
	for (;;) {
		int ret = ctl_send_flags(sock, buf, len, fds, nfds,
				MSG_DONTWAIT);
		if (ret != -EAGAIN)
			return ret;
		if ((ret = wait_ready(sock, POLLOUT, deadline)) != 0)
			return ret;
	}
}

/*
 * One packet from sock, unpacked, with its descriptors in `got`: > 0 with
 * *resp, 0 at the end of the stream, or a negative errno (-EBADMSG: not a
 * response; nothing is kept then).
 */
static long
receive(int sock, uint8_t *buf, int *got, unsigned *ngot,
		Rpmad__Response **resp)
{
	*ngot = 0;
	long n = ctl_recv(sock, buf, CTL_MAX_MSG, got, CTL_MAX_FDS, ngot);
	if (n <= 0)
		return n;
	*resp = rpmad__response__unpack(NULL, (size_t)n, buf);
	if (*resp == NULL) {
		ctl_close_fds(got, *ngot);
		*ngot = 0;
		return -EBADMSG;
	}
	return n;
}

/*
 * Offers a response that is not the one waited for to the caller's
 * requests answered late: true when it was one (it is theirs then).
 */
static bool
taken_late(const struct ctl_late *late, Rpmad__Response *resp, int *fds,
		unsigned nfds)
{
	if (late && late->answer(late->arg, resp, fds, nfds))
		return true;
	rpmad__response__free_unpacked(resp, NULL);
	ctl_close_fds(fds, nfds);
	return false;
}

int
ctl_call(int sock, Rpmad__Request *req, const int *fds, unsigned nfds,
		int timeout_ms, struct ctl_answer *ans)
{
	ans->nfds = 0;
	ans->resp = NULL;
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;

	size_t len = rpmad__request__get_packed_size(req);
	if (len > CTL_MAX_MSG)
		return failed(ans, CTL_STEP_PACK, -EMSGSIZE);
	/* one buffer for both packets; too large for every caller's stack */
	uint8_t *buf = malloc(CTL_MAX_MSG);
	if (buf == NULL)
		return failed(ans, CTL_STEP_PACK, -ENOMEM);
	rpmad__request__pack(req, buf);

	int ret = send_by(sock, buf, len, fds, nfds, deadline);
	if (ret) {
		ret = failed(ans, CTL_STEP_SEND, ret);
		goto out;
	}

	int local[CTL_MAX_FDS];
	int *got = ans->fds ? ans->fds : local;
	unsigned ngot;
	Rpmad__Response *resp;
	for (;;) {
		ret = wait_ready(sock, POLLIN, deadline);
		if (ret) {
			ret = failed(ans, CTL_STEP_WAIT, ret);
			goto out;
		}
		long n = receive(sock, buf, got, &ngot, &resp);
		if (n <= 0) {
			ret = n == 0 ? failed(ans, CTL_STEP_END, -ECONNRESET) :
				failed(ans, n == -EBADMSG ? CTL_STEP_DECODE :
					CTL_STEP_RECV, (int)n);
			goto out;
		}
		if (resp->id == req->id)
			break;
		/* the answer to a request the caller gave up on, or nothing */
		if (!taken_late(ans->late, resp, got, ngot)) {
			ret = failed(ans, CTL_STEP_DECODE, -EBADMSG);
			goto out;
		}
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

int
ctl_drain(int sock, const struct ctl_late *late)
{
	uint8_t *buf = NULL;
	int ret;
	for (;;) {
		struct pollfd pfd = { .fd = sock, .events = POLLIN };
		int n = poll(&pfd, 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : 0;
			break;
		}
		if (buf == NULL && (buf = malloc(CTL_MAX_MSG)) == NULL) {
			ret = -ENOMEM;
			break;
		}
		int fds[CTL_MAX_FDS];
		unsigned nfds;
		Rpmad__Response *resp;
		long got = receive(sock, buf, fds, &nfds, &resp);
		if (got <= 0) {
			ret = got == 0 ? -ECONNRESET : (int)got;
			break;
		}
		if (!taken_late(late, resp, fds, nfds)) {
			ret = -EBADMSG;
			break;
		}
	}
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
