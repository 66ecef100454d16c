/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fs_medium.h -- where a file's pages live, judged the same way by the
 * library and by rpmad
 *
 * On the software transport the library passes shared memory of no
 * storage by descriptor only where rpmad guards its own mapping of it
 * against holes (rpmad/objects/mr_holes.h): both sides must call the
 * same files shared memory, so both ask this.
 */

#ifndef RPMAD_COMMON_FS_MEDIUM_H
#define RPMAD_COMMON_FS_MEDIUM_H

enum fs_medium {
	FS_MEDIUM_STORAGE,	/* a file system on a device, or DAX */
	FS_MEDIUM_SHMEM,	/* tmpfs or hugetlbfs: a userfaultfd takes it */
	FS_MEDIUM_RAMFS,	/* memory no userfaultfd takes */
};

/*
 * fs_medium_of -- the medium of the file open as fd. A device (DAX) is
 * its own medium, though its node lives on devtmpfs, whose statfs says
 * tmpfs; a file that cannot be asked counts as storage.
 */
enum fs_medium fs_medium_of(int fd);

#endif /* RPMAD_COMMON_FS_MEDIUM_H */
