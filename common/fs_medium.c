// SPDX-License-Identifier: BSD-3-Clause
/*
 * fs_medium.c -- where a file's pages live (see fs_medium.h)
 */

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "fs_medium.h"

enum fs_medium
fs_medium_of(int fd)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode))
		return FS_MEDIUM_STORAGE;
	struct statfs sfs;
	if (fstatfs(fd, &sfs))
		return FS_MEDIUM_STORAGE;
	if (sfs.f_type == TMPFS_MAGIC || sfs.f_type == HUGETLBFS_MAGIC)
		return FS_MEDIUM_SHMEM;
	return sfs.f_type == RAMFS_MAGIC ? FS_MEDIUM_RAMFS : FS_MEDIUM_STORAGE;
}
