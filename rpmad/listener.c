// SPDX-License-Identifier: BSD-3-Clause
/*
 * listener.c -- the control socket: from systemd (sd_listen_fds) or made
 * here (AF_UNIX SOCK_SEQPACKET at the configured path, group and mode)
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "daemon.h"
#include "listener.h"
#include "log.h"

static int
from_systemd(void)
{
	int n = sd_listen_fds(1);
	if (n <= 0)
		return -1;
	for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
		if (sd_is_socket_unix(fd, SOCK_SEQPACKET, 1, NULL, 0) > 0) {
			(void) fcntl(fd, F_SETFL,
					fcntl(fd, F_GETFL) | O_NONBLOCK);
			return fd;
		}
		log_warning("ignoring passed descriptor %d: not a listening "
				"AF_UNIX SOCK_SEQPACKET socket", fd);
	}
	return -1;
}

/* Removes a stale socket file, but never a socket something serves. */
static int
clear_stale(const char *path, const struct sockaddr_un *sun)
{
	int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe < 0)
		return -1;
	int alive = connect(probe, (const struct sockaddr *)sun,
			sizeof(*sun)) == 0;
	(void) close(probe);
	if (alive) {
		log_err("%s is served by another process (another rpmad?)",
				path);
		return -1;
	}
	if (unlink(path) && errno != ENOENT) {
		log_err("cannot remove the stale %s: %s", path,
				strerror(errno));
		return -1;
	}
	return 0;
}

static int
apply_owner_and_mode(const char *path)
{
	const struct config *c = &rpmad.cfg;
	if (c->socket_group[0]) {
		struct group *gr = getgrnam(c->socket_group);
		if (gr == NULL) {
			log_err("socket_group '%s' does not exist",
					c->socket_group);
			return -1;
		}
		if (chown(path, (uid_t)-1, gr->gr_gid)) {
			log_err("chown %s: %s", path, strerror(errno));
			return -1;
		}
	}
	if (chmod(path, c->socket_mode)) {
		log_err("chmod %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int
listener_open(bool *systemd)
{
	int fd = from_systemd();
	if (fd >= 0) {
		*systemd = true;
		log_info("using the control socket passed by systemd");
		return fd;
	}
	*systemd = false;

	const char *path = rpmad.cfg.socket_path;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_err("socket path too long: %s", path);
		return -1;
	}
	strcpy(sun.sun_path, path);

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		log_err("socket: %s", strerror(errno));
		return -1;
	}
	if (clear_stale(path, &sun))
		goto err;
	/* nobody may connect before the mode is right */
	mode_t old = umask(0177);
	int ret = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (ret) {
		log_err("bind %s: %s", path, strerror(errno));
		goto err;
	}
	if (apply_owner_and_mode(path))
		goto err_unlink;
	if (listen(fd, 128)) {
		log_err("listen %s: %s", path, strerror(errno));
		goto err_unlink;
	}
	return fd;

err_unlink:
	(void) unlink(path);
err:
	(void) close(fd);
	return -1;
}

void
listener_close(int fd, bool systemd)
{
	if (fd < 0)
		return;
	(void) close(fd);
	if (!systemd)
		(void) unlink(rpmad.cfg.socket_path);
}
