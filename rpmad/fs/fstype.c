// SPDX-License-Identifier: BSD-3-Clause
/*
 * fstype.c -- the file system of a descriptor or a device number, told
 * from /proc without asking the file system itself
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fs/blockdev.h"
#include "fs/fstype.h"

/* ------------------------------------------------------------ judging */

/*
 * Types whose operations wait on a server or a network (as mountinfo
 * names them; FUSE file systems also as "fuse.NAME" and "fuseblk.NAME").
 */
static const char *const blocking[] = {
	"fuse", "fuseblk", "virtiofs",		/* a user-space server */
	"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "coda",
	"ncpfs", "ceph", "glusterfs", "lustre", "orangefs", "pvfs2",
	"beegfs", "gpfs", "vboxsf",		/* a server, over a network */
	"gfs2", "ocfs2",			/* a cluster's lock manager */
};

enum fstype_verdict
fstype_judge(const char *type)
{
	if (strncmp(type, "fuse.", 5) == 0 || strncmp(type, "fuseblk.", 8) == 0)
		return FSTYPE_MAY_BLOCK;
	for (size_t i = 0; i < sizeof(blocking) / sizeof(blocking[0]); i++) {
		if (strcmp(type, blocking[i]) == 0)
			return FSTYPE_MAY_BLOCK;
	}
	return FSTYPE_LOCAL;
}

/* ------------------------------------------------------------ parsing */

/* Copies a mountinfo field, turning its \NNN escapes back into bytes. */
static void
unescape(const char *in, size_t inlen, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < inlen && o + 1 < outlen; i++) {
		if (in[i] == '\\' && i + 3 < inlen &&
				in[i + 1] >= '0' && in[i + 1] <= '3' &&
				in[i + 2] >= '0' && in[i + 2] <= '7' &&
				in[i + 3] >= '0' && in[i + 3] <= '7') {
			out[o++] = (char)((in[i + 1] - '0') * 64 +
					(in[i + 2] - '0') * 8 + (in[i + 3] - '0'));
			i += 3;
			continue;
		}
		out[o++] = in[i];
	}
	out[o] = '\0';
}

/* The next field of a mountinfo line at *p (space separated). */
static bool
next_field(const char **p, const char **start, size_t *len)
{
	while (**p == ' ')
		(*p)++;
	if (**p == '\0' || **p == '\n')
		return false;
	*start = *p;
	while (**p && **p != ' ' && **p != '\n')
		(*p)++;
	*len = (size_t)(*p - *start);
	return true;
}

int
fstype_parse_mountinfo(const char *line, struct fstype_mount *m)
{
	memset(m, 0, sizeof(*m));
	const char *p = line, *f;
	size_t len;
	/* id parent major:minor root mount-point options [optional...] - */
	const char *fields[6];
	size_t lens[6];
	for (int i = 0; i < 6; i++) {
		if (!next_field(&p, &fields[i], &lens[i]))
			return -EINVAL;
	}
	char num[32];
	unescape(fields[0], lens[0], num, sizeof(num));
	char *end;
	m->id = strtoul(num, &end, 10);
	if (end == num || *end)
		return -EINVAL;
	unescape(fields[2], lens[2], num, sizeof(num));
	if (sscanf(num, "%u:%u", &m->major, &m->minor) != 2)
		return -EINVAL;
	unescape(fields[3], lens[3], m->root, sizeof(m->root));
	unescape(fields[4], lens[4], m->mount_point, sizeof(m->mount_point));
	/* the optional fields end with a lone "-" */
	do {
		if (!next_field(&p, &f, &len))
			return -EINVAL;
	} while (!(len == 1 && f[0] == '-'));
	/* type source super-options */
	if (!next_field(&p, &f, &len))
		return -EINVAL;
	unescape(f, len, m->type, sizeof(m->type));
	if (!next_field(&p, &f, &len))
		return -EINVAL;
	if (next_field(&p, &f, &len))
		unescape(f, len, m->super_opts, sizeof(m->super_opts));
	return 0;
}

int
fstype_parse_fdinfo_mnt_id(const char *text, unsigned long *mnt_id)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n'),
			l = l ? l + 1 : NULL) {
		if (sscanf(l, "mnt_id: %lu", mnt_id) == 1)
			return 0;
	}
	return -EINVAL;
}

/* ------------------------------------------------------- mount tables */

struct mounts {
	struct fstype_mount *m;
	size_t n;
};

static void
mounts_free(struct mounts *t)
{
	free(t->m);
	t->m = NULL;
	t->n = 0;
}

/* The whole of a /proc file from fd (at its start); NULL, errno set. */
static char *
slurp(int fd)
{
	size_t cap = 16384, len = 0;
	char *buf = malloc(cap);
	if (buf == NULL)
		return NULL;
	for (;;) {
		if (len + 1 >= cap) {
			char *bigger = realloc(buf, cap * 2);
			if (bigger == NULL) {
				free(buf);
				errno = ENOMEM;
				return NULL;
			}
			buf = bigger;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			free(buf);
			errno = e;
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return buf;
}

/* Parses a mountinfo text into t. 0 or -ENOMEM (bad lines are skipped). */
static int
mounts_parse(const char *text, struct mounts *t)
{
	size_t lines = 0;
	for (const char *c = text; *c; c++)
		lines += *c == '\n';
	t->m = calloc(lines + 1, sizeof(*t->m));
	t->n = 0;
	if (t->m == NULL)
		return -ENOMEM;
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		if (fstype_parse_mountinfo(l, &t->m[t->n]) == 0)
			t->n++;
		if (nl == NULL)
			break;
		l = nl + 1;
	}
	return 0;
}

static int
mounts_read_fd(int fd, struct mounts *t)
{
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	char *text = slurp(fd);
	if (text == NULL)
		return -errno;
	mounts_free(t);
	int ret = mounts_parse(text, t);
	free(text);
	return ret;
}

/*
 * rpmad's own mount table, parsed once and again only when the kernel
 * says it changed (POLLPRI on the open mountinfo file) or a lookup misses.
 */
static struct mounts own;
static int own_fd = -1;
static bool own_read;

static int
own_table(bool again)
{
	if (own_fd < 0) {
		own_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
		if (own_fd < 0)
			return -errno;
	}
	struct pollfd p = { .fd = own_fd, .events = POLLPRI };
	/* polling also takes the news: the next poll says only what is new */
	bool changed = poll(&p, 1, 0) > 0 && (p.revents & POLLPRI);
	if (own_read && !changed && !again)
		return 0;
	int ret = mounts_read_fd(own_fd, &own);
	own_read = ret == 0;
	return ret;
}

int
fstype_init(void)
{
	return own_table(false);
}

/* What to look for in a table: a mount id, or a device number. */
struct key {
	bool by_dev;
	unsigned long id;
	unsigned major, minor;
};

static const struct fstype_mount *
mounts_find(const struct mounts *t, const struct key *k)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct fstype_mount *m = &t->m[i];
		if (k->by_dev ? m->major == k->major && m->minor == k->minor :
				m->id == k->id)
			return m;
	}
	return NULL;
}

/* The mount table of process pid's mount namespace; 0 or -errno. */
static int
mounts_read_pid(pid_t pid, struct mounts *t)
{
	char path[64];
	(void) snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int ret = mounts_read_fd(fd, t);
	(void) close(fd);
	return ret;
}

/*
 * The mount of the key: rpmad's table (read again once when it misses),
 * then the client's mount namespace. 1 (found, in *out), 0, or -errno.
 */
static int
find_mount(const struct key *k, pid_t client, struct fstype_mount *out)
{
	int ret = own_table(false);
	const struct fstype_mount *m = ret ? NULL : mounts_find(&own, k);
	if (m == NULL && ret == 0 && own_table(true) == 0)
		m = mounts_find(&own, k);
	if (m) {
		*out = *m;
		return 1;
	}
	if (client <= 0)
		return 0;
	struct mounts theirs = { 0 };
	ret = mounts_read_pid(client, &theirs);
	if (ret == 0 && (m = mounts_find(&theirs, k)) != NULL)
		*out = *m;
	mounts_free(&theirs);
	return ret ? ret : m != NULL;
}

int
fstype_mount_by_id(unsigned long id, pid_t client, struct fstype_mount *out)
{
	struct key k = { .by_dev = false, .id = id };
	return find_mount(&k, client, out);
}

/* --------------------------------------------------- reserved blocks */

/* The value of option `key` (as "key=") in a comma-separated list. */
static bool
option_value(const char *opts, const char *key, unsigned long *value)
{
	size_t klen = strlen(key);
	for (const char *o = opts; o && *o; o = strchr(o, ','),
			o = o ? o + 1 : NULL) {
		if (strncmp(o, key, klen) == 0 && o[klen] == '=') {
			char *end;
			*value = strtoul(o + klen + 1, &end, 10);
			return end != o + klen + 1;
		}
	}
	return false;
}

bool
fstype_reserves_for(const char *super_opts, uid_t uid, gid_t gid)
{
	unsigned long v;
	return (option_value(super_opts, "resuid", &v) && v == uid) ||
		(option_value(super_opts, "resgid", &v) && v == gid);
}

int
fstype_any_reserves_for(uid_t uid, gid_t gid, char *where, size_t len)
{
	int ret = own_table(false);
	if (ret)
		return ret;
	for (size_t i = 0; i < own.n; i++) {
		if (fstype_reserves_for(own.m[i].super_opts, uid, gid)) {
			(void) snprintf(where, len, "%s",
					own.m[i].mount_point);
			return 1;
		}
	}
	return 0;
}

/* ---------------------------------------------------------- judgements */

static void
fill(struct fstype *out, const struct fstype_mount *m)
{
	out->verdict = fstype_judge(m->type);
	(void) snprintf(out->type, sizeof(out->type), "%s", m->type);
	(void) snprintf(out->mount_point, sizeof(out->mount_point), "%s",
			m->mount_point);
	(void) snprintf(out->super_opts, sizeof(out->super_opts), "%s",
			m->super_opts);
}

/* ------------------------------------------------------ block devices */

/* how many loop devices deep a file may hold a file system holding a file */
#define BLOCK_DEPTH 4
static int block_depth;

/* The mount of rpmad's table whose mount point holds path most closely. */
static const struct fstype_mount *
mounts_holding(const struct mounts *t, const char *path)
{
	const struct fstype_mount *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < t->n; i++) {
		const char *mp = t->m[i].mount_point;
		size_t len = strlen(mp);
		bool holds = strcmp(mp, "/") == 0 ? path[0] == '/' :
			strncmp(path, mp, len) == 0 &&
			(path[len] == '/' || path[len] == '\0');
		/* the later of two mounts at one point is the one on top */
		if (holds && (best == NULL || len >= best_len)) {
			best = &t->m[i];
			best_len = len;
		}
	}
	return best;
}

/* Worse of two verdicts: one that may block, then one not known. */
static void
worsen(struct fstype *out, enum fstype_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
worsen(struct fstype *out, enum fstype_verdict v, const char *fmt, ...)
{
	if (v == FSTYPE_LOCAL || out->verdict == FSTYPE_MAY_BLOCK ||
			(out->verdict == FSTYPE_UNKNOWN && v == FSTYPE_UNKNOWN))
		return;
	out->verdict = v;
	char type[FSTYPE_NAME_MAX];
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(type, sizeof(type), fmt, ap);
	va_end(ap);
	memcpy(out->type, type, sizeof(out->type));
}

static void judge_block(unsigned major, unsigned minor, pid_t client,
		struct fstype *out);

/*
 * The file system holding `path` in one mount table, judged with what is
 * under it in turn, into *file. false when no mount of the table holds it.
 */
static bool
judge_path_in(const struct mounts *t, const char *path, pid_t client,
		struct fstype *file)
{
	const struct fstype_mount *found = mounts_holding(t, path);
	if (found == NULL)
		return false;
	/* a copy: judging what is under it may read rpmad's table again */
	struct fstype_mount m = *found;
	memset(file, 0, sizeof(*file));
	fill(file, &m);
	if (strcmp(m.type, "overlay") == 0 || block_depth >= BLOCK_DEPTH) {
		file->verdict = FSTYPE_UNKNOWN;
	} else {
		block_depth++;
		judge_block(m.major, m.minor, client, file);
		block_depth--;
	}
	return true;
}

/*
 * A loop device's file system: where its file is, by the path the kernel
 * names the file by (sysfs, from rpmad's root), in the mount tables that
 * could hold that path -- rpmad's, the host's (pid 1's: rpmad's own may
 * hide mounts, as PrivateTmp= does /tmp's) and the client's -- the worst
 * verdict of them; then what is under that file system in turn. Not by
 * the device number of the file: the only way to it (LOOP_GET_STATUS64)
 * asks the file's file system, which could be the FUSE server that
 * stalls. An overlay's file is on one of its layers, which no path tells:
 * not known.
 */
static void
judge_loop(const struct blockdev_lower *l, const char *type, pid_t client,
		struct fstype *out)
{
	char path[BLOCKDEV_PATH_MAX];
	(void) snprintf(path, sizeof(path), "%s", l->backing_path);
	/* a file removed after the device was set up is there all the same */
	size_t len = strlen(path), dlen = strlen(" (deleted)");
	if (len > dlen && strcmp(path + len - dlen, " (deleted)") == 0)
		path[len - dlen] = '\0';
	struct fstype file, worst = { .verdict = FSTYPE_LOCAL };
	bool placed = false;
	if (path[0] == '/' && own_table(false) == 0 &&
			judge_path_in(&own, path, client, &file)) {
		placed = true;
		worst = file;
	}
	pid_t others[2] = { 1, client };
	for (int i = 0; i < 2 && path[0] == '/'; i++) {
		struct mounts t = { 0 };
		if (others[i] <= 0 || (i == 1 && client == 1) ||
				mounts_read_pid(others[i], &t)) {
			mounts_free(&t);
			continue;
		}
		if (judge_path_in(&t, path, client, &file)) {
			placed = true;
			if (file.verdict == FSTYPE_MAY_BLOCK ||
					(file.verdict == FSTYPE_UNKNOWN &&
					worst.verdict == FSTYPE_LOCAL))
				worst = file;
		}
		mounts_free(&t);
	}
	if (!placed)
		worsen(out, FSTYPE_UNKNOWN, "%s on %s, whose file rpmad cannot "
				"place", type, l->name);
	else
		worsen(out, worst.verdict, "%s on %s, a file on %s", type,
				l->name, worst.type);
}

/*
 * A file system on a block device waits on what is under the device: a
 * loop device's file (ext4 in an image on FUSE is FUSE), a device that a
 * process serves (nbd, ublk). Devices sysfs does not know stay as judged.
 */
static void
judge_block(unsigned major, unsigned minor, pid_t client,
		struct fstype *out)
{
	if (major == 0 || out->verdict != FSTYPE_LOCAL)
		return;
	struct blockdev_lower low[BLOCKDEV_MAX_LOWERS];
	int n = blockdev_lowers(major, minor, low, BLOCKDEV_MAX_LOWERS);
	char type[FSTYPE_NAME_MAX];
	memcpy(type, out->type, sizeof(type));
	for (int i = 0; i < n; i++) {
		switch (low[i].kind) {
		case BLOCKDEV_DISK:
			break;
		case BLOCKDEV_LOOP:
			judge_loop(&low[i], type, client, out);
			break;
		case BLOCKDEV_SERVED:
			worsen(out, FSTYPE_MAY_BLOCK, "%s on %s (served by a "
					"process)", type, low[i].name);
			break;
		case BLOCKDEV_UNKNOWN:
			worsen(out, FSTYPE_UNKNOWN, "%s on %s", type,
					low[i].name);
			break;
		}
	}
}

/* the file system of /sys/fs/fuse/connections (fusectl) */
#define FUSECTL_SUPER_MAGIC 0x65735543

/*
 * A device no mount table shows: a mount detached (umount -l) while files
 * stay open or mapped, or one of a namespace nobody here can see (the
 * upper layer of an overlay mounted before a switch_root). Of the file
 * systems that can make rpmad wait, only FUSE can be mounted by a user
 * (the others need root, whose mounts are the operator's choice), and the
 * kernel lists every FUSE connection by its device's minor number in
 * fusectl, whatever namespace mounted it. A device with a major number is
 * a block device's file system: a disk.
 */
static void
judge_unlisted(unsigned major, unsigned minor, struct fstype *out)
{
	char path[64];
	if (major != 0) {
		out->verdict = FSTYPE_LOCAL;
		(void) snprintf(out->type, sizeof(out->type),
				"a block device's, unmounted");
		return;
	}
	struct statfs sfs;
	if (statfs("/sys/fs/fuse/connections", &sfs) == 0 &&
			sfs.f_type == FUSECTL_SUPER_MAGIC) {
		struct stat st;
		(void) snprintf(path, sizeof(path),
				"/sys/fs/fuse/connections/%u", minor);
		bool fuse = stat(path, &st) == 0;
		out->verdict = fuse ? FSTYPE_MAY_BLOCK : FSTYPE_LOCAL;
		(void) snprintf(out->type, sizeof(out->type), "%s",
				fuse ? "fuse, unmounted" : "not FUSE, unlisted");
		return;
	}
	/* no fusectl to ask: only a kernel without FUSE loaded rules it out */
	if (access("/sys/fs/fuse", F_OK) != 0 &&
			access("/sys/module/fuse", F_OK) != 0) {
		out->verdict = FSTYPE_LOCAL;
		(void) snprintf(out->type, sizeof(out->type),
				"unlisted, FUSE not loaded");
	}
}

int
fstype_of_dev(unsigned major, unsigned minor, pid_t client,
		struct fstype *out)
{
	memset(out, 0, sizeof(*out));
	out->verdict = FSTYPE_UNKNOWN;
	struct key k = { .by_dev = true, .major = major, .minor = minor };
	struct fstype_mount m;
	int ret = find_mount(&k, client, &m);
	if (ret > 0)
		fill(out, &m);
	else if (ret == 0)
		judge_unlisted(major, minor, out);
	if (ret >= 0)
		judge_block(major, minor, client, out);
	return ret < 0 ? ret : 0;
}

/* Pipes, sockets, anonymous inodes: kernel objects of no file system. */
static bool
kernel_object(int fd)
{
	char path[64], target[64];
	(void) snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return strncmp(target, "pipe:", 5) == 0 ||
		strncmp(target, "socket:", 7) == 0 ||
		strncmp(target, "anon_inode:", 11) == 0;
}

/*
 * The device of the mapping at addr in rpmad's maps ("fd:01"); 0 or
 * -errno.
 */
static int
mapping_dev(const void *addr, unsigned *major, unsigned *minor)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char *text = slurp(fd);
	int e = errno;
	(void) close(fd);
	if (text == NULL)
		return -e;
	char want[32];
	(void) snprintf(want, sizeof(want), "%lx-", (unsigned long)addr);
	int ret = -ENOENT;
	for (const char *l = text; l && *l;) {
		if (strncmp(l, want, strlen(want)) == 0) {
			/* start-end perms offset major:minor inode path */
			ret = sscanf(l, "%*s %*s %*s %x:%x", major, minor) == 2 ?
				0 : -EINVAL;
			break;
		}
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	free(text);
	return ret;
}

/*
 * The file system of a file by the device a moment's mapping of it shows:
 * for an overlay, which keeps a file's data on one of its layers, named in
 * its mount options by paths that may not be visible from here (a
 * container pivots away from them), since a mapping of the file is one of
 * the layer's file; and for a file whose mount no table shows (detached).
 * mmap asks the file system for nothing, and the page is never touched.
 * `what` prefixes the type's name ("overlay over ").
 */
static int
judge_by_mapping(int fd, pid_t client, struct fstype *out, const char *what)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		out->verdict = FSTYPE_UNKNOWN;
		return 0;
	}
	unsigned major, minor;
	int ret = mapping_dev(p, &major, &minor);
	(void) munmap(p, (size_t)page);
	if (ret) {
		out->verdict = FSTYPE_UNKNOWN;
		return 0;
	}
	struct fstype layer;
	ret = fstype_of_dev(major, minor, client, &layer);
	out->verdict = layer.verdict;
	/* "overlay over fuse.x": the name is cut to fit if it must be */
	int n = snprintf(out->type, sizeof(out->type), "%s", what);
	(void) strncat(out->type, layer.verdict == FSTYPE_UNKNOWN ?
			"an unknown file system" : layer.type,
			sizeof(out->type) - (size_t)n - 1);
	/* blocks come from the layer's file system: its options count */
	(void) snprintf(out->super_opts, sizeof(out->super_opts), "%s",
			layer.super_opts);
	return ret;
}

int
fstype_of_fd(int fd, pid_t client, struct fstype *out)
{
	memset(out, 0, sizeof(*out));
	out->verdict = FSTYPE_UNKNOWN;
	/* shared memory of memfd_create (shmem or hugetlbfs) takes seals */
	if (fcntl(fd, F_GET_SEALS) >= 0) {
		out->verdict = FSTYPE_LOCAL;
		(void) snprintf(out->type, sizeof(out->type),
				"shared memory");
		return 0;
	}
	char path[64];
	(void) snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	int info = open(path, O_RDONLY | O_CLOEXEC);
	if (info < 0)
		return -errno;
	char *text = slurp(info);
	int e = errno;
	(void) close(info);
	if (text == NULL)
		return -e;
	struct key k = { .by_dev = false };
	int ret = fstype_parse_fdinfo_mnt_id(text, &k.id);
	free(text);
	if (ret)
		return ret;
	struct fstype_mount m;
	ret = find_mount(&k, client, &m);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		/* internal mounts of the kernel's own objects show nowhere */
		if (kernel_object(fd)) {
			out->verdict = FSTYPE_LOCAL;
			(void) snprintf(out->type, sizeof(out->type),
					"a kernel object");
			return 0;
		}
		/* a detached mount's file: by its device, as an overlay's */
		return judge_by_mapping(fd, client, out, "");
	}
	fill(out, &m);
	if (strcmp(m.type, "overlay") == 0)
		return judge_by_mapping(fd, client, out, "overlay over ");
	judge_block(m.major, m.minor, client, out);
	return 0;
}
