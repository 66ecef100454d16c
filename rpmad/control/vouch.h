/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vouch.h -- rpmad proves who it is to a client that cannot tell it from
 * a process of its own user namespace (ProveIdentity in rpmad.proto; the
 * reasoning is in docs/internals.md, "Who serves the socket")
 */

#ifndef RPMAD_VOUCH_H
#define RPMAD_VOUCH_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/*
 * vouch_creds -- the credentials that prove rpmad to client process `pid`
 * of (effective) uid `uid`, both as rpmad sees them: rpmad's pid and gid,
 * and the uid that is 0 in the client's user namespace, or the client's
 * own where the namespace maps no uid 0. 0, or -1 with the reason in err.
 */
int vouch_creds(pid_t pid, uid_t uid, struct ucred *as, char *err,
		size_t errlen);

/*
 * vouch_send -- sends the answer `buf` on `sock` carrying `as`, with
 * CAP_SETUID effective for that one call. 0 or a negative errno.
 */
int vouch_send(int sock, const void *buf, size_t len, const struct ucred *as);

#endif /* RPMAD_VOUCH_H */
