/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fsident.h -- the file-system identity rpmad works with
 *
 * rpmad writes into its clients' files through its mappings of them. When
 * such a write allocates a block, the file system decides by the writer's
 * file-system uid and gid (and CAP_SYS_RESOURCE) whether blocks reserved
 * for someone (ext2/3/4: root by default, or resuid=/resgid=) may be used.
 * rpmad runs as root; were its fsuid 0, a client could fill a file system
 * past what it may write itself, and the same holds for any id a mount
 * reserves blocks for -- nobody included (this very project's build host
 * mounts / with resuid=65534). So once the socket is made, rpmad takes
 * the file-system uid/gid of its own system user (`file_user`, "rpmad",
 * made by systemd-sysusers from the package), without supplementary
 * groups and without CAP_SYS_RESOURCE, and goes back to 0 only for its
 * own files (the configuration on reload, the socket's mode and removal).
 */

#ifndef RPMAD_FSIDENT_H
#define RPMAD_FSIDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * fsident_drop -- take the file-system identity of `user` (a name, or a
 * number: uid and gid) and drop CAP_SYS_RESOURCE and the supplementary
 * groups. When `user` is the default and does not exist, the highest id
 * below 65535 that no mounted file system reserves blocks for is taken
 * (logged). Logged when it cannot be done (rpmad without
 * CAP_SETUID/CAP_SETGID, see rpmad.service); nothing to do when rpmad does
 * not run as root.
 */
void fsident_drop(const char *user);

/* fsident_root -- root's file-system identity for rpmad's own files */
void fsident_root(void);

/* fsident_restore -- back to the identity fsident_drop() took */
void fsident_restore(void);

/*
 * fsident_dropped -- whether rpmad works with its own identity; its uid
 * and gid in *uid and *gid (either may be NULL)
 */
bool fsident_dropped(uid_t *uid, gid_t *gid);

/*
 * fsident_check_mount -- whether rpmad may write into a file system with
 * these options: 0, or -EPERM (the reason in err) when it reserves its
 * blocks for rpmad's file-system identity (writes there would use the
 * reserve). Always 0 while rpmad works as root (see docs/internals.md:
 * with RDMA devices it cannot change its credentials).
 */
int fsident_check_mount(const char *super_opts, const char *mount_point,
		char *err, size_t errlen);

#endif /* RPMAD_FSIDENT_H */
