// SPDX-License-Identifier: BSD-3-Clause
/*
 * ctl_socket.c -- sending and receiving control packets with descriptors
 */

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_socket.h"

void
ctl_close_fds(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (fds[i] >= 0)
			(void) close(fds[i]);
		fds[i] = -1;
	}
}

int
ctl_send(int sock, const void *buf, size_t len, const int *fds, unsigned nfds)
{
	return ctl_send_flags(sock, buf, len, fds, nfds, 0);
}

int
ctl_send_flags(int sock, const void *buf, size_t len, const int *fds,
		unsigned nfds, int flags)
{
	if (len > CTL_MAX_MSG || nfds > CTL_MAX_FDS)
		return -EMSGSIZE;

	union {
		char buf[CMSG_SPACE(sizeof(int) * CTL_MAX_FDS)];
		struct cmsghdr align;
	} control;
	memset(&control, 0, sizeof(control));

	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds > 0) {
		msg.msg_control = control.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}

	ssize_t n;
	do {
		n = sendmsg(sock, &msg, MSG_NOSIGNAL | flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	return 0;
}

int
ctl_send_as(int sock, const void *buf, size_t len, const struct ucred *as)
{
	if (len > CTL_MAX_MSG)
		return -EMSGSIZE;
	union {
		char buf[CMSG_SPACE(sizeof(*as))];
		struct cmsghdr align;
	} control;
	memset(&control, 0, sizeof(control));
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_CREDENTIALS;
	cm->cmsg_len = CMSG_LEN(sizeof(*as));
	memcpy(CMSG_DATA(cm), as, sizeof(*as));
	ssize_t n;
	do {
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Collects the descriptors of every SCM_RIGHTS header of a received packet. */
static unsigned
take_fds(struct msghdr *msg, int *fds, unsigned max_fds, int *overflow)
{
	unsigned got = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm != NULL;
			cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *data = (int *)CMSG_DATA(cm);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, &data[i], sizeof(fd));
			if (got < max_fds) {
				fds[got++] = fd;
			} else {
				(void) close(fd);
				*overflow = 1;
			}
		}
	}
	return got;
}

long
ctl_recv(int sock, void *buf, size_t cap, int *fds, unsigned max_fds,
		unsigned *nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * CTL_MAX_FDS)];
		struct cmsghdr align;
	} control;

	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};

	*nfds = 0;
	ssize_t n;
	do {
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;

	int overflow = 0;
	unsigned got = take_fds(&msg, fds, max_fds > CTL_MAX_FDS ?
			CTL_MAX_FDS : max_fds, &overflow);
	if (overflow || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		ctl_close_fds(fds, got);
		return -EMSGSIZE;
	}
	if (n == 0 && got > 0) {
		/* an empty packet is never valid; do not keep what it carried */
		ctl_close_fds(fds, got);
		return -EBADMSG;
	}
	*nfds = got;
	return (long)n;
}
