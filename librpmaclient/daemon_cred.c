// SPDX-License-Identifier: BSD-3-Clause
/*
 * daemon_cred.c -- whether what answers at rpmad's socket may be trusted
 * with the process's memory
 *
 * The library hands rpmad descriptors of the application's memory (its
 * registrations, read-write, and /proc/self/mem at hello) and trusts its
 * answers. Whoever listens at the socket path gets them, so before any of
 * it is sent the kernel is asked who listens (SO_PEERCRED: the
 * credentials of the process that made the listening socket): root or
 * the user rpmad was built to run as (configure --with-rpmad-user) will
 * do; an application's environment, which RPMAD_SOCKET comes from, can
 * name a socket, never decide whom to trust.
 *
 * Credentials are those of the caller's user namespace. In a container
 * whose namespace does not map the host's root (rootless podman,
 * systemd-nspawn --private-users=pick), the host's rpmad shows as the
 * overflow uid, and so does the container's own "nobody", which those
 * mappings map: the uid cannot tell them apart. Such a socket must prove
 * itself before anything else is sent: asked ProveIdentity, it answers
 * with SCM_CREDENTIALS that name root of this user namespace, a claim
 * the kernel lets only a process privileged over the namespace make
 * (rpmad/control/vouch.c; docs/internals.md, "Who serves the socket").
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_socket.h"
#include "daemon_cred.h"
#include "log_internal.h"
#include "rpmad.pb-c.h"
#include "rpmad_user.h"

/* how long rpmad has to answer ProveIdentity (as a call before hello) */
#define PROVE_TIMEOUT_MS 60000

/* The kernel's overflow uid, as an unsigned number in a /proc file. */
static bool
read_number(const char *path, unsigned long *out)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	(void) close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	char *end;
	*out = strtoul(buf, &end, 10);
	return end != buf;
}

/*
 * Whether this process is in the initial user namespace, and whether its
 * namespace maps uid 0.
 */
static bool
initial_userns(bool *maps_root)
{
	*maps_root = true;
	FILE *f = fopen("/proc/self/uid_map", "re");
	if (f == NULL)
		return true;	/* no user namespaces in this kernel */
	unsigned long inside, outside, count;
	bool initial = false;
	*maps_root = false;
	while (fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3) {
		if (inside == 0 && count > 0)
			*maps_root = true;
		if (inside == 0 && outside == 0 && count == 4294967295UL)
			initial = true;
	}
	(void) fclose(f);
	return initial;
}

/*
 * Whether `uid` may be a uid this user namespace does not map: it is the
 * overflow uid, in a namespace other than the initial one (which maps
 * every uid: there the overflow uid is a user like any other).
 */
static bool
maybe_unmapped(uid_t uid, bool *maps_root)
{
	unsigned long overflow;
	return read_number("/proc/sys/kernel/overflowuid", &overflow) &&
		uid == overflow && !initial_userns(maps_root);
}

/* Closes what SCM_RIGHTS brought and finds SCM_CREDENTIALS. */
static bool
take_cmsgs(struct msghdr *msg, struct ucred *cred)
{
	bool found = false;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm != NULL;
			cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == SCM_RIGHTS) {
			size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < n; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
						sizeof(fd));
				(void) close(fd);
			}
		} else if (cm->cmsg_type == SCM_CREDENTIALS &&
				cm->cmsg_len == CMSG_LEN(sizeof(*cred))) {
			memcpy(cred, CMSG_DATA(cm), sizeof(*cred));
			found = true;
		}
	}
	return found;
}

/*
 * Asks the socket to prove it is rpmad; SO_PASSCRED is on meanwhile.
 * Returns 0 when the answer carries uid `want` (as this namespace numbers
 * it), else -1 with the reason in `why`.
 */
static int
ask_proof(int sock, uid_t want, char *why, size_t len)
{
	Rpmad__ProveIdentity body = RPMAD__PROVE_IDENTITY__INIT;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_PROVE_IDENTITY;
	req.prove_identity = &body;
	uint8_t out[16];
	size_t n = rpmad__request__get_packed_size(&req);
	rpmad__request__pack(&req, out);

	int ret = ctl_send(sock, out, n, NULL, 0);
	if (ret) {
		(void) snprintf(why, len, "cannot ask it: %s", strerror(-ret));
		return -1;
	}
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	int ready;
	do {
		ready = poll(&pfd, 1, PROVE_TIMEOUT_MS);
	} while (ready < 0 && errno == EINTR);
	if (ready <= 0) {
		(void) snprintf(why, len, "no answer within %d ms",
				PROVE_TIMEOUT_MS);
		return -1;
	}

	uint8_t *buf = malloc(CTL_MAX_MSG);
	if (buf == NULL) {
		(void) snprintf(why, len, "out of memory");
		return -1;
	}
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred)) +
			CMSG_SPACE(sizeof(int) * CTL_MAX_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = buf, .iov_len = CTL_MAX_MSG };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	ssize_t got;
	do {
		got = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (got < 0 && errno == EINTR);
	struct ucred cred;
	bool has_cred = got >= 0 && take_cmsgs(&msg, &cred);
	Rpmad__Response *resp = got > 0 ? rpmad__response__unpack(NULL,
			(size_t)got, buf) : NULL;
	free(buf);

	ret = -1;
	if (got <= 0)
		(void) snprintf(why, len, "it closed the connection instead "
				"of answering");
	else if (resp == NULL || resp->id != req.id)
		(void) snprintf(why, len, "its answer is no answer of rpmad's");
	else if (resp->error != NULL)
		(void) snprintf(why, len, "it answered: %s%s",
				resp->error->message ? resp->error->message :
				"?", resp->error->code == RPMA_E_NOSUPP ?
				" (an rpmad older than this library does not "
				"know the question)" : "");
	else if (!has_cred || cred.uid != want)
		(void) snprintf(why, len, "it could not claim %s, as rpmad "
				"can", want == 0 ? "root of this user namespace" :
				"this process's uid");
	else
		ret = 0;
	if (resp)
		rpmad__response__free_unpacked(resp, NULL);
	return ret;
}

/*
 * ask_proof() with SO_PASSCRED on for its answer alone: for uid 0, or
 * where this namespace maps no root (a namespace of one uid, as
 * `unshare --map-current-user` and bwrap make), this process's own
 */
static int
proven(int sock, bool maps_root, char *why, size_t len)
{
	int on = 1, off = 0;
	if (setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on))) {
		(void) snprintf(why, len, "SO_PASSCRED: %s", strerror(errno));
		return -1;
	}
	int ret = ask_proof(sock, maps_root ? 0 : geteuid(), why, len);
	if (setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &off, sizeof(off)) &&
			ret == 0) {
		(void) snprintf(why, len, "SO_PASSCRED: %s", strerror(errno));
		ret = -1;
	}
	return ret;
}

int
daemon_cred_check(int sock, const char *path)
{
	int saved = errno;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		RLOG_ERROR("cannot tell who serves %s: %s", path,
				strerror(errno));
		return RPMA_E_PROVIDER;
	}
	if (rpmad_user_is(cred.uid)) {
		errno = saved;
		return 0;
	}
	const char *user = rpmad_user_name();
	bool maps_root;
	if (maybe_unmapped(cred.uid, &maps_root)) {
		char why[256];
		int ret = proven(sock, maps_root, why, sizeof(why));
		errno = saved;
		if (ret == 0)
			return 0;
		RLOG_ERROR("refusing %s: it is served by uid %u (pid %d), "
				"the overflow uid: a user outside this user "
				"namespace, or this namespace's own uid %u; "
				"asked to prove it is rpmad, %s; nothing of this "
				"process was sent to it. To use the host's rpmad "
				"from a container, give the container the host's "
				"socket (CDI device rpmad.io/broker=socket, or a "
				"bind mount of /run/rpmad) and leave RPMAD_SOCKET "
				"unset or naming that socket; rpmad must run as "
				"root or with CAP_SETUID (librpmaclient(7), "
				"CONTAINERS)", path, (unsigned)cred.uid,
				(int)cred.pid, (unsigned)cred.uid, why);
		return RPMA_E_PROVIDER;
	}
	RLOG_ERROR("refusing %s: it is served by uid %u (pid %d), and rpmad "
			"runs as root%s%s; nothing was sent to it. Unset "
			"RPMAD_SOCKET to use the host's rpmad at %s, or name "
			"the socket of an rpmad run by root with it", path,
			(unsigned)cred.uid, (int)cred.pid, *user ? " or " : "",
			user, RPMAD_DEFAULT_SOCKET);
	errno = saved;
	return RPMA_E_PROVIDER;
}
