// SPDX-License-Identifier: BSD-3-Clause
/*
 * th_ctl.c -- a control session of a test's own (see th_ctl.h)
 */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_call.h"
#include "ctl_socket.h"
#include "th_ctl.h"
#include "th_wait.h"

int
th_ctl_connect(struct th_ctl *s, const char *path)
{
	s->next_id = 1;
	s->fd = -1;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path))
		return -1;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	s->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -1;
	if (connect(s->fd, (struct sockaddr *) &sun, sizeof(sun)) == 0)
		return 0;
	th_ctl_close(s);
	return -1;
}

int
th_ctl_open(struct th_ctl *s, const char *path, const char *name)
{
	if (th_ctl_connect(s, path))
		return -1;
	struct th_req q;
	if (th_ctl_code(s, th_req_hello(&q, name), NULL, 0) == 0)
		return 0;
	th_ctl_close(s);
	return -1;
}

void
th_ctl_close(struct th_ctl *s)
{
	if (s->fd >= 0)
		(void) close(s->fd);
	s->fd = -1;
}

int
th_ctl_call(struct th_ctl *s, Rpmad__Request *req, const int *fds,
		unsigned nfds, Rpmad__Response **resp)
{
	req->id = s->next_id++;
	struct ctl_answer ans = { .fds = NULL };
	int ret = ctl_call(s->fd, req, fds, nfds, TH_WAIT_MS, &ans);
	*resp = ret ? NULL : ans.resp;
	return ret;
}

int
th_ctl_code(struct th_ctl *s, Rpmad__Request *req, const int *fds,
		unsigned nfds)
{
	Rpmad__Response *r;
	if (th_ctl_call(s, req, fds, nfds, &r))
		return TH_CTL_NO_ANSWER;
	int code = 0;
	if (r->error)
		code = r->error->message ? r->error->code : TH_CTL_NO_ANSWER;
	rpmad__response__free_unpacked(r, NULL);
	return code;
}

int
th_ctl_send_raw(int fd, const void *buf, size_t len, const int *fds,
		unsigned nfds)
{
	size_t space = CMSG_SPACE(sizeof(int) * nfds);
	char *control = nfds ? calloc(1, space) : NULL;
	if (nfds && control == NULL)
		return -1;
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds) {
		msg.msg_control = control;
		msg.msg_controllen = space;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	ssize_t r = sendmsg(fd, &msg, MSG_NOSIGNAL);
	free(control);
	return r == (ssize_t) len ? 0 : -1;
}

int
th_ctl_answer(int fd, int timeout_ms, Rpmad__Response **resp, int *fds,
		unsigned *nfds)
{
	*resp = NULL;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r = poll(&pfd, 1, timeout_ms);
	if (r == 0)
		return -ETIMEDOUT;
	if (r < 0)
		return -errno;
	/* too large for a stack of a test's thread */
	uint8_t *buf = malloc(CTL_MAX_MSG);
	if (buf == NULL)
		return -ENOMEM;
	int got[CTL_MAX_FDS];
	unsigned n = 0;
	long len = ctl_recv(fd, buf, CTL_MAX_MSG, got, CTL_MAX_FDS, &n);
	if (fds) {
		memcpy(fds, got, n * sizeof(int));
		*nfds = n;
	} else {
		ctl_close_fds(got, n);
	}
	int ret = 0;
	if (len == 0 || len == -ECONNRESET)
		ret = -ECONNRESET;
	else if (len < 0)
		ret = (int) len;
	else if ((*resp = rpmad__response__unpack(NULL, (size_t) len, buf)) ==
			NULL)
		ret = -EBADMSG;
	free(buf);
	return ret;
}

int
th_ctl_ended_after(struct th_ctl *s, const void *buf, size_t len,
		const int *fds, unsigned nfds)
{
	if (th_ctl_send_raw(s->fd, buf, len, fds, nfds))
		return 1; /* refused by the kernel: nothing reached rpmad */
	Rpmad__Response *r;
	int ret = th_ctl_answer(s->fd, TH_WAIT_MS, &r, NULL, NULL);
	if (ret == -ECONNRESET)
		return 1;
	if (ret)
		return -1;
	ret = r->error ? 0 : -1;
	rpmad__response__free_unpacked(r, NULL);
	return ret;
}
