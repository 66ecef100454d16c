// SPDX-License-Identifier: BSD-3-Clause
/*
 * fsident.c -- rpmad's file-system uid/gid, supplementary groups and
 * CAP_SYS_RESOURCE
 */

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <unistd.h>

#include "core/caps.h"
#include "fs/fsident.h"
#include "fs/fstype.h"
#include "log/log.h"

/* the last id the fallback may take (60000 and up: no distribution's) */
#define FALLBACK_HIGHEST 65534
#define FALLBACK_LOWEST 60001

static bool dropped;
static uid_t fs_uid;
static gid_t fs_gid;

/* setfsuid reports the old value; asking again tells whether it took. */
static bool
fs_ids_are(uid_t uid, gid_t gid)
{
	return (uid_t)setfsuid((uid_t)-1) == uid &&
		(gid_t)setfsgid((gid_t)-1) == gid;
}

static bool
set_fs_ids(uid_t uid, gid_t gid)
{
	/* an unprivileged id needs CAP_SETUID/CAP_SETGID for a moment */
	(void) caps_change(CAP_SETUID, true, false);
	(void) caps_change(CAP_SETGID, true, false);
	(void) setfsgid(gid);
	(void) setfsuid(uid);
	(void) caps_change(CAP_SETUID, false, false);
	(void) caps_change(CAP_SETGID, false, false);
	return fs_ids_are(uid, gid);
}

/*
 * The identity for clients' files: `user`'s uid and primary gid (a number
 * is both). The default user missing, the highest id in the fallback
 * range that no mounted file system reserves blocks for; `how` says
 * which. 0, or -ENOENT when none will do (logged).
 */
static int
choose(const char *user, uid_t *uid, gid_t *gid, char *how, size_t len)
{
	struct passwd *pw = getpwnam(user);
	if (pw) {
		*uid = pw->pw_uid;
		*gid = pw->pw_gid;
		(void) snprintf(how, len, "user %s", user);
		return 0;
	}
	char *end;
	unsigned long n = strtoul(user, &end, 10);
	if (*user && *end == '\0') {
		*uid = (uid_t)n;
		*gid = (gid_t)n;
		(void) snprintf(how, len, "uid/gid %lu", n);
		return 0;
	}
	for (unsigned id = FALLBACK_HIGHEST; id >= FALLBACK_LOWEST; id--) {
		char where[FSTYPE_PATH_MAX];
		int ret = fstype_any_reserves_for(id, id, where,
				sizeof(where));
		if (ret == 1)
			continue;
		*uid = (uid_t)id;
		*gid = (gid_t)id;
		(void) snprintf(how, len, "uid/gid %u: there is no user %s "
				"(systemd-sysusers makes it from the package's "
				"sysusers.d entry)", id, user);
		return 0;
	}
	log_err("no file-system identity for clients' files: user %s does "
			"not exist and file systems reserve blocks for every id "
			"from %u to %u", user, FALLBACK_LOWEST,
			FALLBACK_HIGHEST);
	return -ENOENT;
}

void
fsident_drop(const char *user)
{
	if (geteuid() != 0)
		return;
	int ret = caps_change(CAP_SYS_RESOURCE, false, true);
	if (ret)
		log_warning("cannot drop CAP_SYS_RESOURCE: %s",
				strerror(-ret));
	char how[192];
	uid_t uid;
	gid_t gid;
	if (choose(user, &uid, &gid, how, sizeof(how)))
		return;
	/* a supplementary group could be one a mount reserves blocks for */
	(void) caps_change(CAP_SETGID, true, false);
	if (setgroups(0, NULL))
		log_warning("cannot drop the supplementary groups: %s",
				strerror(errno));
	(void) caps_change(CAP_SETGID, false, false);
	if (!set_fs_ids(uid, gid)) {
		(void) set_fs_ids(0, 0);
		log_warning("cannot take file-system %s (needs CAP_SETUID and "
				"CAP_SETGID at start): writes into clients' "
				"files may use root's reserved blocks", how);
		return;
	}
	fs_uid = uid;
	fs_gid = gid;
	dropped = true;
	char where[FSTYPE_PATH_MAX];
	if (fstype_any_reserves_for(uid, gid, where, sizeof(where)) == 1)
		log_warning("the file system at %s reserves blocks for %s, "
				"rpmad's identity for clients' files: rpmad "
				"refuses to write into files there (choose "
				"another file_user)", where, how);
	log_info("file-system %s, without CAP_SYS_RESOURCE or supplementary "
			"groups: writes into clients' files never use reserved "
			"blocks", how);
}

void
fsident_root(void)
{
	/* the effective uid is 0: no capability needed for this */
	if (dropped)
		(void) set_fs_ids(0, 0);
}

void
fsident_restore(void)
{
	if (dropped && !set_fs_ids(fs_uid, fs_gid))
		log_warning("cannot take file-system uid %u and gid %u again",
				(unsigned)fs_uid, (unsigned)fs_gid);
}

bool
fsident_dropped(uid_t *uid, gid_t *gid)
{
	if (uid)
		*uid = fs_uid;
	if (gid)
		*gid = fs_gid;
	return dropped;
}

int
fsident_check_mount(const char *super_opts, const char *mount_point,
		char *err, size_t errlen)
{
	if (!dropped || !fstype_reserves_for(super_opts, fs_uid, fs_gid))
		return 0;
	(void) snprintf(err, errlen, "the file system at %.64s reserves "
			"blocks for uid %u or gid %u, rpmad's identity for "
			"clients' files: rpmad's writes there would use the "
			"reserve (an operator sets another file_user in "
			"rpmad.conf)",
			mount_point[0] ? mount_point : "?", (unsigned)fs_uid,
			(unsigned)fs_gid);
	return -EPERM;
}
