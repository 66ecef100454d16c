/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sock_path.h -- whether the way to the control socket, or to the binary
 * an upgrade runs, is safe from other users (see sock_path.c)
 */

#ifndef RPMAD_SOCK_PATH_H
#define RPMAD_SOCK_PATH_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * sock_path_check -- walk the directory `dir` from "/" (relative: from the
 * working directory), through its symbolic links, and check that nobody
 * but root or `self` could change where it leads. Returns 0 with the
 * status of the directory reached in *st, or a negative errno with the
 * reason, naming the component, in err: -EPERM when someone else could
 * change it, -ENOENT, -ENOTDIR, -ELOOP, ... when the walk cannot go on.
 */
int sock_path_check(const char *dir, uid_t self, struct stat *st, char *err,
		size_t errlen);

/*
 * sock_path_check_file -- the same walk down to a regular file `path`,
 * which must belong to root or `self` too and be written by nobody else
 * (self 0: root alone is trusted). 0 with its status in *st and its path
 * without symbolic links in `real`, or a negative errno with the reason.
 */
int sock_path_check_file(const char *path, uid_t self, struct stat *st,
		char *real, size_t reallen, char *err, size_t errlen);

#endif /* RPMAD_SOCK_PATH_H */
