/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sock_path.h -- whether the way to the control socket is safe from other
 * users (see sock_path.c)
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

#endif /* RPMAD_SOCK_PATH_H */
