// SPDX-License-Identifier: BSD-3-Clause
/*
 * rpmad_user.c -- who may serve rpmad's socket (see rpmad_user.h)
 */

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpmad_user.h"

/* configure --with-rpmad-user: a name, a number, or "" (root only) */
static const char configured[] = RPMAD_USER;

const char *
rpmad_user_name(void)
{
	return configured;
}

/* The configured user's uid; false when there is none or it is unknown. */
static bool
configured_uid(uid_t *uid)
{
	if (configured[0] == '\0')
		return false;
	char *end;
	unsigned long num = strtoul(configured, &end, 10);
	if (*end == '\0')
		return (*uid = (uid_t)num) == num;

	long len = sysconf(_SC_GETPW_R_SIZE_MAX);
	size_t size = len > 0 ? (size_t)len : 16384;
	char *buf = malloc(size);
	if (buf == NULL)
		return false;
	struct passwd pw, *found = NULL;
	bool known = getpwnam_r(configured, &pw, buf, size, &found) == 0 &&
			found != NULL;
	if (known)
		*uid = pw.pw_uid;
	free(buf);
	return known;
}

bool
rpmad_user_is(uid_t uid)
{
	if (uid == 0)
		return true;
	int saved = errno;
	uid_t mine;
	bool is = configured_uid(&mine) && mine == uid;
	errno = saved;
	return is;
}
