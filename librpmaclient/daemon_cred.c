// SPDX-License-Identifier: BSD-3-Clause
/*
 * daemon_cred.c -- whether what answers at rpmad's socket may be trusted
 * with the process's memory
 *
 * The library hands rpmad descriptors of the application's memory (its
 * registrations, read-write) and trusts its answers. Whoever listens at
 * the socket path gets them, so before the first byte is sent the kernel
 * is asked who listens (SO_PEERCRED: the credentials of the process that
 * made the listening socket): only root or the user rpmad was built to
 * run as (configure --with-rpmad-user) will do; an application's
 * environment, which RPMAD_SOCKET comes from, can name a socket, never
 * decide whom to trust.
 *
 * Credentials are those of the caller's user namespace. In a container
 * whose namespace does not map the host's root, the host's rpmad appears
 * as the overflow uid (65534): that uid is accepted only when no user of
 * the namespace can have it, which is when the namespace maps nobody to
 * it (its members are then all mapped to other uids, and the process at
 * the other end is outside the namespace: the host's). Where the
 * namespace maps the overflow uid itself, the two cannot be told apart
 * and the socket is refused.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon_cred.h"
#include "log_internal.h"
#include "rpmad_user.h"

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
 * Whether `uid` stands for a process outside this process's user
 * namespace: it is the overflow uid and the namespace maps nothing to it.
 * False in the initial namespace, and whenever it cannot be told.
 */
static bool
outside_userns(uid_t uid)
{
	unsigned long overflow;
	if (!read_number("/proc/sys/kernel/overflowuid", &overflow) ||
			uid != overflow)
		return false;
	FILE *f = fopen("/proc/self/uid_map", "re");
	if (f == NULL)
		return false;
	bool mapped = false, initial = false;
	unsigned long inside, outside, count;
	while (fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3) {
		if (inside == 0 && outside == 0 && count == 4294967295UL)
			initial = true;
		if (overflow >= inside && overflow - inside < count)
			mapped = true;
	}
	(void) fclose(f);
	return !initial && !mapped;
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
	if (rpmad_user_is(cred.uid) || outside_userns(cred.uid)) {
		errno = saved;
		return 0;
	}
	const char *user = rpmad_user_name();
	RLOG_ERROR("refusing %s: it is served by uid %u (pid %d), and rpmad "
			"runs as root%s%s; nothing was sent to it (does "
			"RPMAD_SOCKET name a socket of another user?)", path,
			(unsigned)cred.uid, (int)cred.pid, *user ? " or " : "",
			user);
	errno = saved;
	return RPMA_E_PROVIDER;
}
