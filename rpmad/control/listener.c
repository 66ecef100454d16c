// SPDX-License-Identifier: BSD-3-Clause
/*
 * listener.c -- the control socket: from systemd (sd_listen_fds) or made
 * here (AF_UNIX SOCK_SEQPACKET at the configured path, group and mode)
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "control/listener.h"
#include "control/sock_path.h"
#include "core/daemon.h"
#include "log/log.h"
#include "rpmad_user.h"

/* whether rpmad made (and so owns) the socket file */
static bool made_here;

/*
 * The socket rpmad made: its directory (held open, so that the name always
 * means an entry of the directory that was checked), its name there, and
 * the node bind() made. Owner and mode are changed through these, never by
 * following the path again.
 */
static int dir_fd = -1;
static char node_name[sizeof(rpmad.cfg.socket_path)];
static dev_t node_dev;
static ino_t node_ino;

/* The path a passed socket is bound to, into cfg.socket_path. */
static void
learn_path(int fd)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);
	memset(&sun, 0, sizeof(sun));
	if (getsockname(fd, (struct sockaddr *)&sun, &len) ||
			len <= offsetof(struct sockaddr_un, sun_path) ||
			sun.sun_path[0] == '\0')
		return;	/* unnamed or abstract: keep the configured name */
	size_t n = len - offsetof(struct sockaddr_un, sun_path);
	if (n >= sizeof(rpmad.cfg.socket_path))
		n = sizeof(rpmad.cfg.socket_path) - 1;
	memcpy(rpmad.cfg.socket_path, sun.sun_path, n);
	rpmad.cfg.socket_path[n] = '\0';
}

/*
 * A passed socket is the service manager's: rpmad cannot refuse it, only
 * say when clients would find it by a way others could change (a unit
 * with ListenSequentialPacket= in such a place).
 */
static void
check_passed_path(const char *path)
{
	char copy[sizeof(rpmad.cfg.socket_path)];
	(void) snprintf(copy, sizeof(copy), "%s", path);
	char why[PATH_MAX + 256];
	struct stat st;
	if (sock_path_check(dirname(copy), geteuid(), &st, why,
			sizeof(why)) == -EPERM)
		log_warning("the passed socket %s is reached by a way others "
				"could change (%s): clients could be led to a "
				"socket that is not rpmad's", path, why);
}

/*
 * The socket the service manager passed, or a negative errno: -ENOENT when
 * there is none (rpmad then makes its own).
 */
static int
from_systemd(void)
{
	int n = sd_listen_fds(1);
	if (n < 0) {
		log_warning("cannot take the passed sockets: %s",
				strerror(-n));
		return n;
	}
	if (n == 0)
		return -ENOENT;
	int found = -ENOENT;
	for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
		if (found < 0 && sd_is_socket_unix(fd, SOCK_SEQPACKET, 1,
				NULL, 0) > 0) {
			(void) fcntl(fd, F_SETFL,
					fcntl(fd, F_GETFL) | O_NONBLOCK);
			(void) fcntl(fd, F_SETFD, FD_CLOEXEC);
			found = fd;
			continue;
		}
		log_warning("closing passed descriptor %d: not a listening "
				"AF_UNIX SOCK_SEQPACKET socket (rpmad.socket "
				"must use ListenSequentialPacket=)", fd);
		(void) close(fd);
	}
	return found;
}

/*
 * Removes a stale socket file, but never a socket something serves. 0, or
 * a negative errno (logged, unless the probe's socket cannot be made).
 */
static int
clear_stale(const char *path, const struct sockaddr_un *sun)
{
	int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe < 0)
		return -errno;
	int alive = connect(probe, (const struct sockaddr *)sun,
			sizeof(*sun)) == 0;
	(void) close(probe);
	if (alive) {
		log_err("%s is served by another process (another rpmad?)",
				path);
		return -EADDRINUSE;
	}
	/* unlinkat removes a symlink itself, never what it points to */
	if (unlinkat(dir_fd, node_name, 0) && errno != ENOENT) {
		int e = errno;
		log_err("cannot remove the stale %s: %s", path, strerror(e));
		return -e;
	}
	return 0;
}

/*
 * The socket's directory, when it is missing: made like systemd's
 * RuntimeDirectory (root's, world-searchable; the socket's own group and
 * mode decide who gets in). Only the last level: a missing /run is not
 * ours to fix.
 */
static void
make_parent(const char *dir)
{
	if (mkdir(dir, 0755) == 0)
		log_info("made the directory %s", dir);
}

/*
 * Opens the socket's directory into dir_fd and its last component into
 * node_name. The way there must be one nobody but root or rpmad's user
 * could change (sock_path.c): clients follow it to find rpmad. The
 * directory itself must not be writable by anyone else either, sticky or
 * not: whoever can write there could put a symlink where the socket goes,
 * or take the name while rpmad is not running and pose as rpmad to its
 * clients. 0, or a negative errno (logged).
 */
static int
open_socket_dir(const char *path)
{
	char copy[sizeof(rpmad.cfg.socket_path)];
	(void) snprintf(copy, sizeof(copy), "%s", path);
	(void) snprintf(node_name, sizeof(node_name), "%s", basename(copy));
	(void) snprintf(copy, sizeof(copy), "%s", path);
	const char *dir = dirname(copy);
	if (node_name[0] == '\0' || strcmp(node_name, "/") == 0 ||
			strcmp(node_name, ".") == 0 ||
			strcmp(node_name, "..") == 0) {
		log_err("socket path %s names no file", path);
		return -EINVAL;
	}
	char why[PATH_MAX + 256];
	struct stat st;
	int ret = sock_path_check(dir, geteuid(), &st, why, sizeof(why));
	if (ret == -ENOENT) {
		make_parent(dir);
		ret = sock_path_check(dir, geteuid(), &st, why, sizeof(why));
	}
	if (ret) {
		log_err("socket path %s: %s%s", path, why, ret != -EPERM ? "" :
				"; clients could be led to a socket that is "
				"not rpmad's: use a directory that only root or "
				"rpmad's user can change, all the way from /, "
				"such as /run/rpmad");
		return ret;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		log_err("socket directory %s may be written by others (mode "
				"%04o): they could replace the socket; use a "
				"directory only its owner may write, such as "
				"/run/rpmad (chmod go-w %s)", dir,
				(unsigned)(st.st_mode & 07777), dir);
		return -EPERM;
	}
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		log_err("socket directory %s: %s", dir, strerror(-ret));
		return ret;
	}
	struct stat now;
	if (fstat(fd, &now) || now.st_dev != st.st_dev ||
			now.st_ino != st.st_ino) {
		/* only root or rpmad's user could have moved it meanwhile */
		log_err("socket directory %s changed while it was checked",
				dir);
		(void) close(fd);
		return -EAGAIN;
	}
	dir_fd = fd;
	return 0;
}

/*
 * Whether the entry at the socket's name is still the node rpmad bound:
 * a socket, not a symlink, the same inode. Anything else is left alone.
 * 0, or a negative errno (logged): -EEXIST when another file is there.
 */
static int
check_node(const char *path)
{
	struct stat st;
	if (fstatat(dir_fd, node_name, &st, AT_SYMLINK_NOFOLLOW)) {
		int e = errno;
		log_err("socket %s: %s", path, strerror(e));
		return -e;
	}
	if (!S_ISSOCK(st.st_mode) || st.st_dev != node_dev ||
			st.st_ino != node_ino) {
		log_err("%s is no longer the socket rpmad made (%s); its owner "
				"and mode are left alone", path,
				S_ISLNK(st.st_mode) ? "a symbolic link" :
				"another file");
		return -EEXIST;
	}
	return 0;
}

/* 0, or a negative errno (logged) */
static int
apply_owner_and_mode(const char *path)
{
	const struct config *c = &rpmad.cfg;
	int ret = check_node(path);
	if (ret)
		return ret;
	if (c->socket_group[0]) {
		/* a name, or a number (that need not have a name) */
		struct group *gr = getgrnam(c->socket_group);
		char *end;
		unsigned long num = strtoul(c->socket_group, &end, 10);
		gid_t gid = gr ? gr->gr_gid : (gid_t)num;
		if (gr == NULL && (*end != '\0' || end == c->socket_group)) {
			log_err("socket_group '%s' does not exist",
					c->socket_group);
			return -ENOENT;
		}
		if (fchownat(dir_fd, node_name, (uid_t)-1, gid,
				AT_SYMLINK_NOFOLLOW)) {
			int e = errno;
			log_err("chown %s to group %s: %s", path,
					c->socket_group, strerror(e));
			return -e;
		}
	}
	/* glibc refuses (EOPNOTSUPP) rather than follow a symlink here */
	if (fchmodat(dir_fd, node_name, c->socket_mode, AT_SYMLINK_NOFOLLOW)) {
		int e = errno;
		log_err("chmod %s: %s", path, strerror(e));
		return -e;
	}
	return 0;
}

int
listener_apply_access(void)
{
	if (!made_here)
		return 0;
	return apply_owner_and_mode(rpmad.cfg.socket_path);
}

int
listener_open(bool *systemd)
{
	const struct config *c = &rpmad.cfg;
	int fd = from_systemd();
	if (fd >= 0) {
		*systemd = true;
		learn_path(fd);
		check_passed_path(c->socket_path);
		log_notice("using the control socket %s passed by the service "
				"manager (socket activation)", c->socket_path);
		if (c->socket_group[0] || c->socket_mode != 0660)
			log_notice("socket_group and socket_mode do not apply "
					"to a passed socket: the socket unit's "
					"SocketGroup= and SocketMode= do");
		return fd;
	}
	*systemd = false;

	const char *path = c->socket_path;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_err("socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		int e = errno;
		log_err("socket: %s", strerror(e));
		return -e;
	}
	int ret = open_socket_dir(path);
	if (ret)
		goto err;
	ret = clear_stale(path, &sun);
	if (ret)
		goto err;
	/*
	 * Bound through the directory already checked (its descriptor), so
	 * that a directory renamed meanwhile cannot redirect the node; the
	 * plain path when that name would not fit.
	 */
	struct sockaddr_un at = { .sun_family = AF_UNIX };
	if ((size_t)snprintf(at.sun_path, sizeof(at.sun_path),
			"/proc/self/fd/%d/%s", dir_fd, node_name) >=
			sizeof(at.sun_path))
		at = sun;
	/* nobody may connect before the mode is right */
	mode_t old = umask(0177);
	ret = bind(fd, (struct sockaddr *)&at, sizeof(at)) ? -errno : 0;
	umask(old);
	if (ret) {
		log_err("bind %s: %s", path, strerror(-ret));
		goto err;
	}
	struct stat st;
	if (fstatat(dir_fd, node_name, &st, AT_SYMLINK_NOFOLLOW)) {
		ret = -errno;
		log_err("socket %s: %s", path, strerror(-ret));
		goto err;
	}
	node_dev = st.st_dev;
	node_ino = st.st_ino;
	ret = apply_owner_and_mode(path);
	if (ret)
		goto err_unlink;
	if (listen(fd, 128)) {
		ret = -errno;
		log_err("listen %s: %s", path, strerror(-ret));
		goto err_unlink;
	}
	made_here = true;
	log_info("listening on %s (mode %04o%s%s)", path, c->socket_mode,
			c->socket_group[0] ? ", group " : "", c->socket_group);
	/* clients judge the socket by who listens: rpmad, now */
	if (!rpmad_user_is(geteuid())) {
		const char *user = rpmad_user_name();
		log_warning("rpmad runs as uid %u: clients of this build talk "
				"only to an rpmad of root%s%s and will refuse it "
				"(configure --with-rpmad-user)",
				(unsigned)geteuid(), *user ? " or " : "", user);
	}
	return fd;

err_unlink:
	(void) unlinkat(dir_fd, node_name, 0);
err:
	(void) close(fd);
	if (dir_fd >= 0)
		(void) close(dir_fd);
	dir_fd = -1;
	return ret;
}

int
listener_adopt(int fd, bool passed, const char *path_given)
{
	if (sd_is_socket_unix(fd, SOCK_SEQPACKET, 1, NULL, 0) <= 0) {
		log_err("the descriptor %d the older rpmad handed over is no "
				"listening AF_UNIX SOCK_SEQPACKET socket", fd);
		(void) close(fd);
		return -EINVAL;
	}
	(void) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (path_given && *path_given)
		(void) snprintf(rpmad.cfg.socket_path,
				sizeof(rpmad.cfg.socket_path), "%s",
				path_given);
	else
		learn_path(fd);
	const char *path = rpmad.cfg.socket_path;
	if (!passed) {
		/* the node the older rpmad made is ours to remove at the end */
		struct stat st;
		if (open_socket_dir(path) == 0 && fstatat(dir_fd, node_name,
				&st, AT_SYMLINK_NOFOLLOW) == 0 &&
				S_ISSOCK(st.st_mode)) {
			node_dev = st.st_dev;
			node_ino = st.st_ino;
			made_here = true;
		} else {
			log_warning("the handed-over socket %s is not at its "
					"path: it is left there at the end",
					path);
		}
	}
	log_notice("using the control socket %s handed over by the older "
			"rpmad", path);
	return fd;
}

void
listener_hand_over(int fd)
{
	if (fd >= 0)
		(void) close(fd);
	made_here = false;
	if (dir_fd >= 0)
		(void) close(dir_fd);
	dir_fd = -1;
}

void
listener_close(int fd, bool systemd)
{
	if (fd < 0)
		return;
	(void) close(fd);
	if (!systemd && made_here && check_node(rpmad.cfg.socket_path) == 0)
		(void) unlinkat(dir_fd, node_name, 0);
	made_here = false;
	if (dir_fd >= 0)
		(void) close(dir_fd);
	dir_fd = -1;
}
