/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fstype.h -- whether a file system can make rpmad wait: FUSE (its server
 * is a process, possibly a tenant's) and network or cluster file systems
 * (a server, a network, a lock manager). rpmad is one thread; a page
 * fault, fstat or msync that waits on such a file system stops it for
 * everyone, so it refuses client memory there.
 *
 * Nothing here calls into the file system it judges. A descriptor's mount
 * comes from /proc/self/fdinfo/N (mnt_id), a device number's from what
 * /proc/PID/maps shows; the type from /proc/self/mountinfo -- and, for a
 * mount of another mount namespace (a container's), from the client's
 * /proc/PID/mountinfo. A memfd is shared memory whatever its mount. An
 * overlay's data lives on its layers: the file is mapped for a moment and
 * judged by the device of that mapping (mmap asks the layer nothing).
 */

#ifndef RPMAD_FSTYPE_H
#define RPMAD_FSTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum fstype_verdict {
	FSTYPE_LOCAL,		/* waits on nobody (a disk, memory, the kernel) */
	FSTYPE_MAY_BLOCK,	/* FUSE, network or cluster */
	FSTYPE_UNKNOWN,		/* its mount cannot be found */
};

#define FSTYPE_NAME_MAX 64
#define FSTYPE_PATH_MAX 256
#define FSTYPE_OPTS_MAX 256

/* What is known of the file system of a descriptor or device. */
struct fstype {
	enum fstype_verdict verdict;
	char type[FSTYPE_NAME_MAX];	/* "ext4", "fuse.sshfs", "memfd", ... */
	char mount_point[FSTYPE_PATH_MAX];	/* "" when not known */
	char super_opts[FSTYPE_OPTS_MAX];	/* "rw,resuid=65534", ... */
};

/*
 * fstype_init -- opens and reads rpmad's mount table, which stays open (a
 * descriptor) to tell when it changes: at start, before clients count
 * rpmad's descriptors. 0 or a negative errno (then tried again at use).
 */
int fstype_init(void);

/*
 * fstype_of_fd -- the file system of a descriptor rpmad holds (a client
 * passed it); `client` is the client's pid, whose mount namespace is
 * looked at when rpmad's does not have the mount (0: only rpmad's).
 * 0, or a negative errno when /proc cannot be read (out->verdict is
 * FSTYPE_UNKNOWN then too).
 */
int fstype_of_fd(int fd, pid_t client, struct fstype *out);

/*
 * fstype_of_dev -- the file system of a device number, as /proc/PID/maps
 * shows it ("fd:01" is major 0xfd, minor 1); the mounts looked at as for
 * fstype_of_fd. 0 or a negative errno.
 */
int fstype_of_dev(unsigned major, unsigned minor, pid_t client,
		struct fstype *out);

/*
 * fstype_mount_by_id -- the mount with this id (a descriptor's mnt_id in
 * /proc/self/fdinfo), looked for as fstype_of_fd does: 1 (in *out), 0 (no
 * such mount), or a negative errno
 */
struct fstype_mount;
int fstype_mount_by_id(unsigned long id, pid_t client,
		struct fstype_mount *out);

/*
 * fstype_reserves_for -- whether a file system's options (super_opts of
 * struct fstype) reserve its blocks for this uid or gid (ext2/3/4's
 * resuid=, resgid=; by default they are root's, and not shown)
 */
bool fstype_reserves_for(const char *super_opts, uid_t uid, gid_t gid);

/*
 * fstype_any_reserves_for -- whether a file system mounted in rpmad's
 * namespace reserves blocks for uid or gid: 1 (its mount point in
 * `where`), 0, or a negative errno
 */
int fstype_any_reserves_for(uid_t uid, gid_t gid, char *where, size_t len);

/*
 * For the unit tests: the pure parts.
 * fstype_judge -- the verdict for a type as mountinfo names it
 */
enum fstype_verdict fstype_judge(const char *type);

/* One line of a mountinfo file, its strings unescaped. */
struct fstype_mount {
	unsigned long id;
	unsigned major, minor;
	char root[FSTYPE_PATH_MAX];	/* of the mount in its file system */
	char mount_point[FSTYPE_PATH_MAX];
	char type[FSTYPE_NAME_MAX];
	char super_opts[FSTYPE_OPTS_MAX];
};

/* fstype_parse_mountinfo -- one line (no newline needed); 0 or -EINVAL */
int fstype_parse_mountinfo(const char *line, struct fstype_mount *m);

/* fstype_parse_fdinfo_mnt_id -- the mnt_id of a fdinfo text; 0 or -EINVAL */
int fstype_parse_fdinfo_mnt_id(const char *text, unsigned long *mnt_id);

#endif /* RPMAD_FSTYPE_H */
