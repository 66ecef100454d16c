/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fsident.h -- the file-system identity rpmad works with
 *
 * rpmad writes into its clients' files through its mappings of them. When
 * such a write allocates a block, the file system decides by the writer's
 * file-system uid (and CAP_SYS_RESOURCE) whether root's reserved blocks
 * may be used. rpmad runs as root; were its fsuid 0, a client could fill a
 * file system past what it may write itself. So once the socket is made,
 * rpmad takes an unprivileged fsuid/fsgid (nobody) and drops
 * CAP_SYS_RESOURCE, and goes back to 0 only for its own files (the
 * configuration on reload, the socket's mode and removal).
 */

#ifndef RPMAD_FSIDENT_H
#define RPMAD_FSIDENT_H

#include <stdbool.h>

#define FSIDENT_UNPRIVILEGED 65534	/* nobody / nogroup */

/*
 * fsident_drop -- take the unprivileged file-system identity and drop
 * CAP_SYS_RESOURCE; logged when it cannot be done (rpmad without
 * CAP_SETUID/CAP_SETGID, see rpmad.service). Nothing to do when rpmad
 * does not run as root.
 */
void fsident_drop(void);

/* fsident_root -- root's file-system identity for rpmad's own files */
void fsident_root(void);

/* fsident_restore -- back to the identity fsident_drop() took */
void fsident_restore(void);

/* fsident_dropped -- whether rpmad works with the unprivileged identity */
bool fsident_dropped(void);

#endif /* RPMAD_FSIDENT_H */
