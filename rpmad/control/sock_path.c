// SPDX-License-Identifier: BSD-3-Clause
/*
 * sock_path.c -- whether anyone but root or rpmad's user could change
 * where the way to the control socket leads
 *
 * Clients follow the socket's path afresh every time they connect,
 * symbolic links included. Whoever can rename, remove or replace one of
 * the directories or links on that way can put a socket of their own
 * where clients look, and pose as rpmad: clients then hand their memory
 * to it. So the path is walked from "/" as the kernel resolves it, and,
 * in the manner of OpenSSH's StrictModes, every step must be fixed:
 * - each directory on the way belongs to root or to rpmad's user (an
 *   owner may always change its directory's mode);
 * - no directory on the way may be written by its group or others, unless
 *   it is sticky (as /tmp is) and the entry the walk takes from it belongs
 *   to root or rpmad's user: in a sticky directory only the entry's owner
 *   (and the directory's, and root) may remove or rename it;
 * - a symbolic link is walked through, its target checked the same way
 *   (a link cannot be changed in place, only replaced, which the rule for
 *   its directory covers).
 * The same walk checks the binary an upgrade runs (upgrade.c), with root
 * alone trusted, down to the file itself: root's, written by nobody else.
 */

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/sock_path.h"

/* as the kernel allows (MAXSYMLINKS) */
#define MAX_LINKS 40

struct walk {
	uid_t self;
	bool file_last;		/* the last component may be a regular file */
	char cur[PATH_MAX];	/* the directory reached, without links */
	struct stat cst;	/* its status */
	char todo[PATH_MAX];	/* what is left of the path */
	char *err;
	size_t errlen;
};

static int
refuse(struct walk *w, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
refuse(struct walk *w, int ret, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(w->err, w->errlen, fmt, ap);
	va_end(ap);
	return ret;
}

static bool
trusted(const struct walk *w, uid_t uid)
{
	return uid == 0 || uid == w->self;
}

/* cur + "/" + name into out; 0 or -ENAMETOOLONG */
static int
join(const char *cur, const char *name, char *out, size_t len)
{
	int n = snprintf(out, len, "%s%s%s", cur,
			strcmp(cur, "/") == 0 ? "" : "/", name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Takes the next component of w->todo into name; false when none is left. */
static bool
next_component(struct walk *w, char *name, size_t len)
{
	char *s = w->todo;
	while (*s == '/')
		s++;
	if (*s == '\0')
		return false;
	size_t n = strcspn(s, "/");
	(void) snprintf(name, len, "%.*s", (int)n, s);
	memmove(w->todo, s + n, strlen(s + n) + 1);
	return true;
}

/* The walk goes on at "/" (after an absolute link); 0 or a negative errno */
static int
restart_at_root(struct walk *w)
{
	(void) snprintf(w->cur, sizeof(w->cur), "/");
	if (lstat("/", &w->cst))
		return refuse(w, -errno, "/: %s", strerror(errno));
	if (!trusted(w, w->cst.st_uid))
		return refuse(w, -EPERM, "/ belongs to uid %u",
				(unsigned)w->cst.st_uid);
	return 0;
}

/*
 * Whether the entry `path` (with status `est`) of the directory reached
 * stays what it is: 0, or -EPERM with the reason.
 */
static int
check_entry(struct walk *w, const char *path, const struct stat *est)
{
	mode_t mode = w->cst.st_mode;
	if (!(mode & (S_IWGRP | S_IWOTH)))
		return 0;
	if (!(mode & S_ISVTX))
		return refuse(w, -EPERM, "%s may be written by %s (mode %04o): "
				"they could replace %s", w->cur,
				mode & S_IWOTH ? "others" : "its group",
				(unsigned)(mode & 07777), path);
	if (!trusted(w, est->st_uid))
		return refuse(w, -EPERM, "%s belongs to uid %u and lies in %s, "
				"which others may write (mode %04o): its owner "
				"could replace it", path,
				(unsigned)est->st_uid, w->cur,
				(unsigned)(mode & 07777));
	return 0;
}

/* Puts the target of the link `path` before what is left; 0 or an errno */
static int
follow_link(struct walk *w, const char *path)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return refuse(w, -errno, "%s: %s", path, strerror(errno));
	target[n] = '\0';
	size_t left = strlen(w->todo);
	if ((size_t)n + 1 + left >= sizeof(w->todo))
		return refuse(w, -ENAMETOOLONG, "%s: the path is too long",
				path);
	memmove(w->todo + n + 1, w->todo, left + 1);
	memcpy(w->todo, target, (size_t)n);
	w->todo[n] = '/';
	return target[0] == '/' ? restart_at_root(w) : 0;
}

/* Whether nothing but slashes is left of the path. */
static bool
nothing_left(const struct walk *w)
{
	return w->todo[strspn(w->todo, "/")] == '\0';
}

/*
 * The walk of w->todo (set by the caller) from "/". 0 with the last
 * component reached in w->cur and w->cst, or a negative errno.
 */
static int
walk(struct walk *w, const char *what)
{
	int ret;
	if ((ret = restart_at_root(w)) != 0)
		return ret;

	unsigned links = 0;
	char name[NAME_MAX + 1];
	while (next_component(w, name, sizeof(name))) {
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			/* cur holds no links: its parent is the real one */
			char *slash = strrchr(w->cur, '/');
			if (slash != w->cur)
				*slash = '\0';
			else
				w->cur[1] = '\0';
			if (lstat(w->cur, &w->cst))
				return refuse(w, -errno, "%s: %s", w->cur,
						strerror(errno));
			continue;
		}
		char path[PATH_MAX];
		if (join(w->cur, name, path, sizeof(path)))
			return refuse(w, -ENAMETOOLONG, "%s/%s: the path is "
					"too long", w->cur, name);
		struct stat est;
		if (lstat(path, &est))
			return refuse(w, -errno, "%s: %s", path,
					strerror(errno));
		if ((ret = check_entry(w, path, &est)) != 0)
			return ret;
		if (S_ISLNK(est.st_mode)) {
			if (++links > MAX_LINKS)
				return refuse(w, -ELOOP, "%s: too many "
						"symbolic links", what);
			if ((ret = follow_link(w, path)) != 0)
				return ret;
			continue;
		}
		bool file = w->file_last && S_ISREG(est.st_mode) &&
			nothing_left(w);
		if (!S_ISDIR(est.st_mode) && !file)
			return refuse(w, -ENOTDIR, "%s is not a directory",
					path);
		if (!trusted(w, est.st_uid) && w->self)
			return refuse(w, -EPERM, "%s belongs to uid %u: every "
					"%s on the way must belong to root or "
					"rpmad's user (uid %u)", path,
					(unsigned)est.st_uid, file ? "file" :
					"directory", (unsigned)w->self);
		if (!trusted(w, est.st_uid))
			return refuse(w, -EPERM, "%s belongs to uid %u: every "
					"%s on the way must belong to root",
					path, (unsigned)est.st_uid, file ?
					"file" : "directory");
		if (file && (est.st_mode & (S_IWGRP | S_IWOTH)))
			return refuse(w, -EPERM, "%s may be written by %s "
					"(mode %04o)", path,
					est.st_mode & S_IWOTH ? "others" :
					"its group",
					(unsigned)(est.st_mode & 07777));
		memcpy(w->cur, path, sizeof(w->cur));
		w->cst = est;
	}
	return 0;
}

/* The path to walk into w->todo: absolute, or from the working directory */
static int
set_todo(struct walk *w, const char *path)
{
	if (path[0] == '/') {
		(void) snprintf(w->todo, sizeof(w->todo), "%s", path);
		return 0;
	}
	char cwd[PATH_MAX];
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return refuse(w, -errno, "the working directory: %s",
				strerror(errno));
	if (join(cwd, path, w->todo, sizeof(w->todo)))
		return refuse(w, -ENAMETOOLONG, "%s: the path is too long",
				path);
	return 0;
}

int
sock_path_check(const char *dir, uid_t self, struct stat *st, char *err,
		size_t errlen)
{
	struct walk w = { .self = self, .err = err, .errlen = errlen };
	int ret = set_todo(&w, dir);
	if (ret == 0)
		ret = walk(&w, dir);
	if (ret == 0)
		*st = w.cst;
	return ret;
}

int
sock_path_check_file(const char *path, uid_t self, struct stat *st,
		char *real, size_t reallen, char *err, size_t errlen)
{
	struct walk w = {
		.self = self, .file_last = true, .err = err, .errlen = errlen
	};
	int ret = set_todo(&w, path);
	if (ret == 0)
		ret = walk(&w, path);
	if (ret)
		return ret;
	if (!S_ISREG(w.cst.st_mode))
		return refuse(&w, -EISDIR, "%s is not a file", w.cur);
	*st = w.cst;
	(void) snprintf(real, reallen, "%s", w.cur);
	return 0;
}
