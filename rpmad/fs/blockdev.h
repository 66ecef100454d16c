/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blockdev.h -- what lies under a block device a file system is mounted
 * from: the disks at the bottom of its stack (a partition's disk, the
 * members of a device-mapper or md device), and of those the ones whose
 * data is not on a disk: a loop device's file (on whatever file system
 * holds it, FUSE included), and devices served by a process (nbd, ublk).
 * Told from sysfs alone. Not LOOP_GET_STATUS64: it asks the file's file
 * system for the file's attributes (a FUSE server may never answer).
 */

#ifndef RPMAD_BLOCKDEV_H
#define RPMAD_BLOCKDEV_H

#include <stdbool.h>
#include <stddef.h>

enum blockdev_kind {
	BLOCKDEV_DISK,		/* its data is on hardware (or memory) */
	BLOCKDEV_LOOP,		/* its data is a file's */
	BLOCKDEV_SERVED,	/* a process serves its data (nbd, ublk) */
	BLOCKDEV_UNKNOWN,	/* sysfs does not say (too deep, unreadable) */
};

#define BLOCKDEV_NAME_MAX 32
#define BLOCKDEV_PATH_MAX 256
#define BLOCKDEV_MAX_LOWERS 16

struct blockdev_lower {
	enum blockdev_kind kind;
	char name[BLOCKDEV_NAME_MAX];	/* "loop0", "nbd1", "sda" */
	/*
	 * BLOCKDEV_LOOP: its file's path as the kernel names it to rpmad
	 * (from rpmad's root; "" when sysfs does not say)
	 */
	char backing_path[BLOCKDEV_PATH_MAX];
};

/*
 * blockdev_lowers -- the devices at the bottom of the stack under the
 * block device major:minor, at most `max` into out. Their count (at least
 * one: the device itself when nothing lies under it), or a negative errno
 * when sysfs does not know the device.
 */
int blockdev_lowers(unsigned major, unsigned minor,
		struct blockdev_lower *out, size_t max);

#endif /* RPMAD_BLOCKDEV_H */
