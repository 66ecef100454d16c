// SPDX-License-Identifier: BSD-3-Clause
/*
 * fsident.c -- rpmad's file-system uid/gid and CAP_SYS_RESOURCE
 */

#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsident.h"
#include "log.h"

static bool dropped;

/* caps_get, caps_set: 0 or a negative errno */
static int
caps_get(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3 };
	return syscall(SYS_capget, &h, data) ? -errno : 0;
}

static int
caps_set(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3 };
	return syscall(SYS_capset, &h, data) ? -errno : 0;
}

/*
 * Sets (on) or clears a capability in the effective (and permitted) set.
 * 0 or a negative errno.
 */
static int
cap_change(int cap, bool on, bool permitted_too)
{
	struct __user_cap_data_struct data[2];
	int ret = caps_get(data);
	if (ret)
		return ret;
	unsigned i = (unsigned)cap / 32;
	uint32_t bit = 1u << ((unsigned)cap % 32);
	if (on) {
		data[i].effective |= bit & data[i].permitted;
	} else {
		data[i].effective &= ~bit;
		if (permitted_too)
			data[i].permitted &= ~bit;
	}
	return caps_set(data);
}

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
	(void) cap_change(CAP_SETUID, true, false);
	(void) cap_change(CAP_SETGID, true, false);
	(void) setfsgid(gid);
	(void) setfsuid(uid);
	(void) cap_change(CAP_SETUID, false, false);
	(void) cap_change(CAP_SETGID, false, false);
	return fs_ids_are(uid, gid);
}

void
fsident_drop(void)
{
	if (geteuid() != 0)
		return;
	int ret = cap_change(CAP_SYS_RESOURCE, false, true);
	if (ret)
		log_warning("cannot drop CAP_SYS_RESOURCE: %s",
				strerror(-ret));
	if (!set_fs_ids(FSIDENT_UNPRIVILEGED, FSIDENT_UNPRIVILEGED)) {
		(void) set_fs_ids(0, 0);
		log_warning("cannot take file-system uid/gid %u (needs "
				"CAP_SETUID and CAP_SETGID at start): writes "
				"into clients' files may use root's reserved "
				"blocks", FSIDENT_UNPRIVILEGED);
		return;
	}
	dropped = true;
	log_info("file-system uid/gid %u, without CAP_SYS_RESOURCE: writes "
			"into clients' files never use root's reserved blocks",
			FSIDENT_UNPRIVILEGED);
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
	if (dropped && !set_fs_ids(FSIDENT_UNPRIVILEGED, FSIDENT_UNPRIVILEGED))
		log_warning("cannot take file-system uid/gid %u again",
				FSIDENT_UNPRIVILEGED);
}

bool
fsident_dropped(void)
{
	return dropped;
}
