// SPDX-License-Identifier: BSD-3-Clause
/*
 * stallfs.c -- a FUSE file system for the tests (libfuse3): one file,
 * "data", of STALLFS_SIZE bytes kept in memory, served to root and to one
 * user; a request of anyone else waits for good, as a file system whose
 * server a tenant runs and stops at will. Every request is logged, a line
 * "OP UID PID" each, before it is served or not.
 *
 * usage: stallfs MOUNTPOINT UID LOGFILE
 *
 * Mounted with allow_other (other users' processes reach it: the point),
 * attribute and entry timeouts of 0 (every stat asks the server), in the
 * foreground and single-threaded: one waiting request stalls it all. Ends
 * by a signal; the caller unmounts it (umount -l).
 */

#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define STALLFS_SIZE (1024 * 1024)

static char *data;
static uid_t served;
static FILE *requests_log;

/* Logs the request; waits for good unless root's or the served user's. */
static void
request(const char *op)
{
	const struct fuse_context *c = fuse_get_context();
	(void) fprintf(requests_log, "%s %u %d\n", op, (unsigned)c->uid, (int)c->pid);
	(void) fflush(requests_log);
	while (c->uid != 0 && c->uid != served)
		(void) pause();
}

static void *
fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void) conn;
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	return NULL;
}

static int
fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void) fi;
	request("getattr");
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, "/data") != 0)
		return -ENOENT;
	st->st_mode = S_IFREG | 0666;
	st->st_nlink = 1;
	st->st_size = STALLFS_SIZE;
	return 0;
}

static int
fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void) off;
	(void) fi;
	(void) flags;
	request("readdir");
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	(void) fill(buf, ".", NULL, 0, 0);
	(void) fill(buf, "..", NULL, 0, 0);
	(void) fill(buf, "data", NULL, 0, 0);
	return 0;
}

static int
fs_open(const char *path, struct fuse_file_info *fi)
{
	(void) fi;
	request("open");
	return strcmp(path, "/data") == 0 ? 0 : -ENOENT;
}

static int
fs_read(const char *path, char *buf, size_t size, off_t off,
		struct fuse_file_info *fi)
{
	(void) path;
	(void) fi;
	request("read");
	if (off >= STALLFS_SIZE)
		return 0;
	if (size > (size_t)(STALLFS_SIZE - off))
		size = (size_t)(STALLFS_SIZE - off);
	memcpy(buf, data + off, size);
	return (int)size;
}

static int
fs_write(const char *path, const char *buf, size_t size, off_t off,
		struct fuse_file_info *fi)
{
	(void) path;
	(void) fi;
	request("write");
	if (off >= STALLFS_SIZE)
		return -ENOSPC;
	if (size > (size_t)(STALLFS_SIZE - off))
		size = (size_t)(STALLFS_SIZE - off);
	memcpy(data + off, buf, size);
	return (int)size;
}

static const struct fuse_operations ops = {
	.init = fs_init,
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
};

int
main(int argc, char *argv[])
{
	if (argc != 4) {
		(void) fprintf(stderr, "usage: stallfs MOUNTPOINT UID "
				"LOGFILE\n");
		return 2;
	}
	/* a test that dies leaves no server behind */
	(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
	served = (uid_t)strtoul(argv[2], NULL, 10);
	requests_log = fopen(argv[3], "a");
	data = calloc(1, STALLFS_SIZE);
	if (requests_log == NULL || data == NULL) {
		perror("stallfs");
		return 1;
	}
	char *fargv[] = { argv[0], "-f", "-s", "-o", "allow_other", argv[1],
		NULL };
	return fuse_main(6, fargv, &ops, NULL);
}
