// SPDX-License-Identifier: BSD-3-Clause
/*
 * vouch.c -- rpmad proves who it is to a client in another user namespace
 *
 * A client whose user namespace does not map rpmad's user sees rpmad as
 * the overflow uid, as it sees a process of its own that runs as the
 * overflow uid ("nobody", which the runtimes' default mappings map). It
 * asks rpmad to prove itself: rpmad's answer carries SCM_CREDENTIALS
 * naming the uid that is root in the client's namespace (where the
 * namespace maps no root, as `unshare --map-current-user` or bwrap make
 * them, the client's own uid). The kernel
 * checks such a claim against the sender's own capabilities when the
 * packet is sent (CAP_SETUID over a namespace that maps that uid), and
 * it stamps every packet anew: a process of the container without
 * root's power there can neither make the claim nor pass on one it got.
 */

#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "control/vouch.h"
#include "core/caps.h"
#include "ctl_socket.h"

int
vouch_creds(pid_t pid, uid_t uid, struct ucred *as, char *err,
		size_t errlen)
{
	if (pid <= 0) {
		(void) snprintf(err, errlen, "the client's pid is not visible "
				"from rpmad's pid namespace");
		return -1;
	}
	char path[64];
	(void) snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	FILE *f = fopen(path, "re");
	if (f == NULL) {
		(void) snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* "inside outside count", outside as rpmad's namespace numbers it */
	uint32_t inside, outside, count;
	int found = 0;
	while (fscanf(f, "%" SCNu32 " %" SCNu32 " %" SCNu32, &inside,
			&outside, &count) == 3) {
		if (inside == 0 && count > 0) {
			found = 1;
			break;
		}
	}
	(void) fclose(f);
	as->pid = getpid();
	/* without a root, the client's own uid is the one it cannot fake */
	as->uid = found ? (uid_t)outside : uid;
	as->gid = getgid();
	return 0;
}

int
vouch_send(int sock, const void *buf, size_t len, const struct ucred *as)
{
	bool had = caps_effective(CAP_SETUID);
	if (!had)
		(void) caps_change(CAP_SETUID, true, false);
	int ret = ctl_send_as(sock, buf, len, as);
	if (!had)
		(void) caps_change(CAP_SETUID, false, false);
	return ret;
}
