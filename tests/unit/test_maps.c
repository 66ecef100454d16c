// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_maps.c -- common/proc_maps.c: maps_parse_line on lines as the
 * kernel writes them and on lines it never writes; the real
 * /proc/self/maps of this process; maps_query against maps_scan
 */

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc_maps.h"
#include "th_suite.h"

static struct maps_entry
parse_ok(const char *line)
{
	struct maps_entry e;
	memset(&e, 0xee, sizeof(e));
	ck_assert_msg(maps_parse_line(line, &e) == 0, "refused: \"%s\"", line);
	return e;
}

START_TEST(anonymous)
{
	/* the kernel pads the inode column with a space even without a path */
	struct maps_entry e = parse_ok(
		"7f1c2a000000-7f1c2a021000 rw-p 00000000 00:00 0 \n");
	ck_assert_uint_eq(e.start, 0x7f1c2a000000);
	ck_assert_uint_eq(e.end, 0x7f1c2a021000);
	ck_assert(e.read && e.write && !e.exec && !e.shared);
	ck_assert_uint_eq(e.offset, 0);
	ck_assert_uint_eq(e.dev_major, 0);
	ck_assert_uint_eq(e.dev_minor, 0);
	ck_assert_uint_eq(e.inode, 0);
	ck_assert_str_eq(e.path, "");

	e = parse_ok("7f1c2a000000-7f1c2a021000 ---p 00000000 00:00 0");
	ck_assert(!e.read && !e.write && !e.exec && !e.shared);
	ck_assert_str_eq(e.path, "");
}
END_TEST

START_TEST(file_backed)
{
	struct maps_entry e = parse_ok("7f3a1c828000-7f3a1c84e000 r-xp "
		"00028000 fd:01 1966218                    "
		"/usr/lib/x86_64-linux-gnu/libc.so.6\n");
	ck_assert_uint_eq(e.start, 0x7f3a1c828000);
	ck_assert(e.read && !e.write && e.exec && !e.shared);
	ck_assert_uint_eq(e.offset, 0x28000);
	ck_assert_uint_eq(e.dev_major, 0xfd);
	ck_assert_uint_eq(e.dev_minor, 0x01);
	ck_assert_uint_eq(e.inode, 1966218);
	ck_assert_str_eq(e.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");

	/* a shared mapping at a large offset, 64-bit inode, no newline */
	e = parse_ok("7f0000000000-7f0000200000 rw-s 7ffff0000000 103:02 "
		"18446744073709551615 /mnt/pmem0/pool.file");
	ck_assert(e.read && e.write && e.shared);
	ck_assert_uint_eq(e.offset, 0x7ffff0000000ull);
	ck_assert_uint_eq(e.dev_major, 0x103);
	ck_assert_uint_eq(e.dev_minor, 2);
	ck_assert_uint_eq(e.inode, UINT64_MAX);
	ck_assert_str_eq(e.path, "/mnt/pmem0/pool.file");
}
END_TEST

START_TEST(special_paths)
{
	struct maps_entry e = parse_ok("55d0c7a4e000-55d0c7a6f000 rw-p "
		"00000000 00:00 0                          [heap]\n");
	ck_assert_str_eq(e.path, "[heap]");
	e = parse_ok("7ffd1a2b3000-7ffd1a2d4000 rw-p 00000000 00:00 0"
		"                          [stack]\n");
	ck_assert_str_eq(e.path, "[stack]");
	e = parse_ok("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0"
		"                  [vsyscall]\n");
	ck_assert_uint_eq(e.start, 0xffffffffff600000ull);
	ck_assert(!e.read && e.exec);
	ck_assert_str_eq(e.path, "[vsyscall]");
	e = parse_ok("7f1c2a000000-7f1c2a021000 rw-p 00000000 00:00 0 "
		"[anon:glibc malloc]\n");
	ck_assert_str_eq(e.path, "[anon:glibc malloc]");
}
END_TEST

START_TEST(paths_with_spaces_and_deleted)
{
	struct maps_entry e = parse_ok("7f0000000000-7f0000001000 rw-s "
		"00000000 08:01 4242                       "
		"/tmp/my data/a file.bin\n");
	ck_assert_str_eq(e.path, "/tmp/my data/a file.bin");

	e = parse_ok("7f0000000000-7f0000001000 rw-s 00000000 00:01 77 "
		"/memfd:rpmaclient (deleted)\n");
	ck_assert(e.shared);
	ck_assert_uint_eq(e.dev_minor, 1);
	ck_assert_str_eq(e.path, "/memfd:rpmaclient (deleted)");

	e = parse_ok("7f0000000000-7f0000001000 rw-s 00000000 08:01 4243 "
		"/tmp/gone.dat (deleted)");
	ck_assert_str_eq(e.path, "/tmp/gone.dat (deleted)");
	/* trailing blanks of a path are the path's */
	e = parse_ok("7f0000000000-7f0000001000 r--p 00000000 08:01 1 "
		"/tmp/x  \n");
	ck_assert_str_eq(e.path, "/tmp/x  ");
}
END_TEST

START_TEST(long_path)
{
	char line[2048];
	char path[1200];
	memset(path, 'p', sizeof(path));
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	(void) snprintf(line, sizeof(line), "1000-2000 rw-s 0 08:01 9 %s\n",
			path);
	struct maps_entry e = parse_ok(line);
	/* cut to what fits, terminated */
	ck_assert_uint_eq(strlen(e.path), MAPS_PATH_MAX - 1);
	ck_assert_int_eq(strncmp(e.path, path, MAPS_PATH_MAX - 1), 0);
}
END_TEST

START_TEST(malformed)
{
	static const char *const bad[] = {
		"",
		"\n",
		"garbage",
		"7f00-",
		"7f0000000000-7f0000001000",
		"7f0000000000-7f0000001000 rw-p",
		"7f0000000000-7f0000001000 rw-p 00000000",
		"7f0000000000-7f0000001000 rw-p 00000000 08:01",
		"7f0000000000 rw-p 00000000 08:01 1 /x",
		"zz-7f0000001000 rw-p 00000000 08:01 1 /x",
		"7f0000000000-zz rw-p 00000000 08:01 1 /x",
		"7f0000000000-7f0000001000 rw- 00000000 08:01 1 /x",
		"7f0000000000-7f0000001000 rw-px 00000000 08:01 1 /x",
		"7f0000000000-7f0000001000 rw-p xyz 08:01 1 /x",
		"7f0000000000-7f0000001000 rw-p 00000000 0801 1 /x",
		"7f0000000000-7f0000001000 rw-p 00000000 08:01 x /x",
		/* an empty or reversed range */
		"7f0000001000-7f0000001000 rw-p 00000000 08:01 1 /x",
		"7f0000002000-7f0000001000 rw-p 00000000 08:01 1 /x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct maps_entry e;
		ck_assert_msg(maps_parse_line(bad[i], &e) == -1,
				"accepted: \"%s\"", bad[i]);
	}
}
END_TEST

/* Every line of this process's own map parses, in address order. */
START_TEST(own_maps)
{
	FILE *f = fopen("/proc/self/maps", "r");
	ck_assert_ptr_nonnull(f);
	char *line = NULL;
	size_t cap = 0;
	uintptr_t last_end = 0;
	int lines = 0;
	while (getline(&line, &cap, f) > 0) {
		struct maps_entry e;
		ck_assert_msg(maps_parse_line(line, &e) == 0, "refused: %s",
				line);
		ck_assert_uint_lt(e.start, e.end);
		ck_assert_uint_ge(e.start, last_end);
		ck_assert_ptr_null(strchr(e.path, '\n'));
		last_end = e.end;
		lines++;
	}
	free(line);
	(void) fclose(f);
	ck_assert_int_gt(lines, 3);
}
END_TEST

struct inode_seen {
	dev_t dev;
	ino_t ino;
	int count;
};

static void
count_inode(const struct maps_entry *e, void *arg)
{
	struct inode_seen *s = arg;
	if (e->inode == s->ino && makedev(e->dev_major, e->dev_minor) == s->dev)
		s->count++;
}

/*
 * maps_scan finds a mapping made here, with its attributes, and shows
 * every mapping of the process to its callback.
 */
START_TEST(read_range_and_inode)
{
	char path[] = "/tmp/rpma-unit-maps.XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 3 * 4096), 0);
	char *map = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, 0);
	ck_assert_ptr_ne(map, MAP_FAILED);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);

	struct maps_entry *e = NULL;
	struct inode_seen seen = { st.st_dev, st.st_ino, 0 };
	int mfd = maps_open_self();
	ck_assert_int_ge(mfd, 0);
	int n = maps_scan(mfd, (uintptr_t)map + 4096, (uintptr_t)map + 8192,
			&e, count_inode, &seen);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_le(e[0].start, (uintptr_t)map);
	ck_assert_uint_ge(e[0].end, (uintptr_t)map + 3 * 4096);
	ck_assert(e[0].shared && e[0].read && e[0].write);
	ck_assert_uint_eq(e[0].inode, st.st_ino);
	ck_assert_uint_eq(makedev(e[0].dev_major, e[0].dev_minor), st.st_dev);
	ck_assert_str_eq(e[0].path, path);
	free(e);
	ck_assert_int_eq(seen.count, 1);

	ck_assert_int_eq(munmap(map, 3 * 4096), 0);
	seen.count = 0;
	ck_assert_int_eq(maps_scan(mfd, 0, 0, &e, count_inode, &seen), 0);
	free(e);
	(void) close(mfd);
	ck_assert_int_eq(seen.count, 0);
	(void) unlink(path);
	(void) close(fd);
}
END_TEST

/*
 * maps_query (the kernel's PROCMAP_QUERY, or a scan where the kernel lacks
 * it) tells the same as maps_scan: mappings of several kinds and
 * protections side by side, and a hole.
 */
START_TEST(query_matches_scan)
{
	char path[] = "/tmp/rpma-unit-maps.XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 2 * 4096), 0);
	char *area = mmap(NULL, 6 * 4096, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(area, MAP_FAILED);
	ck_assert_int_eq(mprotect(area + 4096, 4096, PROT_READ), 0);
	ck_assert_ptr_ne(mmap(area + 2 * 4096, 2 * 4096, PROT_READ |
			PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0), MAP_FAILED);
	ck_assert_int_eq(munmap(area + 4 * 4096, 4096), 0);

	uintptr_t from = (uintptr_t)area, to = (uintptr_t)area + 6 * 4096;
	struct maps_entry *q = NULL, *e = NULL;
	int mfd = maps_open_self();
	ck_assert_int_ge(mfd, 0);
	int nq = maps_query(mfd, from, to, &q);
	int ne = maps_scan(mfd, from, to, &e, NULL, NULL);
	ck_assert_int_ge(nq, 4);
	ck_assert_int_eq(nq, ne);
	for (int i = 0; i < nq; i++) {
		ck_assert_uint_eq(q[i].start, e[i].start);
		ck_assert_uint_eq(q[i].end, e[i].end);
		ck_assert_int_eq(q[i].read, e[i].read);
		ck_assert_int_eq(q[i].write, e[i].write);
		ck_assert_int_eq(q[i].exec, e[i].exec);
		ck_assert_int_eq(q[i].shared, e[i].shared);
		ck_assert_uint_eq(q[i].offset, e[i].offset);
		ck_assert_uint_eq(q[i].inode, e[i].inode);
		ck_assert_uint_eq(q[i].dev_major, e[i].dev_major);
		ck_assert_uint_eq(q[i].dev_minor, e[i].dev_minor);
		ck_assert_str_eq(q[i].path, e[i].path);
	}
	free(q);
	free(e);

	/* the heap and the stack by name */
	int local = 0;
	uintptr_t sp = (uintptr_t)&local;
	ck_assert_int_eq(maps_query(mfd, sp, sp + 1, &q), 1);
	ck_assert_int_eq(maps_scan(mfd, sp, sp + 1, &e, NULL, NULL), 1);
	ck_assert_str_eq(q[0].path, e[0].path);
	free(q);
	free(e);

	ck_assert_int_eq(munmap(area, 6 * 4096), 0);
	(void) close(mfd);
	(void) unlink(path);
	(void) close(fd);
}
END_TEST

int
main(void)
{
	const TTest *const tc_parse_line[] = { anonymous, file_backed,
		special_paths, paths_with_spaces_and_deleted, long_path,
		malformed, NULL };
	const TTest *const tc_proc[] = { own_maps, read_range_and_inode,
		query_matches_scan, NULL };
	const struct th_tcase tcases[] = {
		{ "parse_line", .tests = tc_parse_line },
		{ "proc", .tests = tc_proc },
	};
	return check_run(th_suite("maps", tcases, TH_N(tcases)), CK_NORMAL);
}
