// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_fstype.c -- rpmad's judge of file systems (rpmad/core/fstype.c):
 * mountinfo lines (escapes, optional fields, FUSE subtypes), fdinfo, the
 * verdicts by type, reserved blocks in mount options; and, on this
 * machine's own file systems, descriptors and device numbers of local
 * ones (the negative control of tests/ops/test_files.c, which judges a
 * real FUSE mount).
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs/fstype.h"
#include "th_suite.h"

START_TEST(test_mountinfo_lines)
{
	struct fstype_mount m;
	ck_assert_int_eq(fstype_parse_mountinfo("36 35 98:0 /mnt1 /mnt2 "
			"rw,noatime master:1 - ext3 /dev/root "
			"rw,errors=continue\n", &m), 0);
	ck_assert_uint_eq(m.id, 36);
	ck_assert_uint_eq(m.major, 98);
	ck_assert_uint_eq(m.minor, 0);
	ck_assert_str_eq(m.root, "/mnt1");
	ck_assert_str_eq(m.mount_point, "/mnt2");
	ck_assert_str_eq(m.type, "ext3");
	ck_assert_str_eq(m.super_opts, "rw,errors=continue");

	/* no optional fields; escapes in the mount point */
	ck_assert_int_eq(fstype_parse_mountinfo("812 29 0:61 / /tmp/a\\040b "
			"rw,nosuid,nodev,relatime - fuse.sshfs host:/x "
			"rw,user_id=1000,group_id=1000,allow_other", &m), 0);
	ck_assert_str_eq(m.root, "/");
	ck_assert_str_eq(m.mount_point, "/tmp/a b");
	ck_assert_str_eq(m.type, "fuse.sshfs");
	ck_assert_uint_eq(m.minor, 61);

	/* several optional fields */
	ck_assert_int_eq(fstype_parse_mountinfo("25 1 254:0 / / rw,relatime "
			"shared:1 master:2 propagate_from:3 - ext4 /dev/vda "
			"rw,resuid=65534,resgid=65534", &m), 0);
	ck_assert_str_eq(m.type, "ext4");
	ck_assert(fstype_reserves_for(m.super_opts, 65534, 1));
	ck_assert(fstype_reserves_for(m.super_opts, 1, 65534));
	ck_assert(!fstype_reserves_for(m.super_opts, 65533, 65533));
	ck_assert(!fstype_reserves_for("rw,resuid=655340", 65534, 0));

	/* broken lines */
	ck_assert_int_eq(fstype_parse_mountinfo("", &m), -EINVAL);
	ck_assert_int_eq(fstype_parse_mountinfo("1 2 3:4 / /x rw", &m),
			-EINVAL);
	ck_assert_int_eq(fstype_parse_mountinfo("x 2 3:4 / /x rw - t s o",
			&m), -EINVAL);
	ck_assert_int_eq(fstype_parse_mountinfo("1 2 34 / /x rw - t s o",
			&m), -EINVAL);
}
END_TEST

START_TEST(test_fdinfo)
{
	unsigned long id = 0;
	ck_assert_int_eq(fstype_parse_fdinfo_mnt_id("pos:\t0\nflags:\t02\n"
			"mnt_id:\t29\nino:\t7\n", &id), 0);
	ck_assert_uint_eq(id, 29);
	ck_assert_int_eq(fstype_parse_fdinfo_mnt_id("pos:\t0\n", &id),
			-EINVAL);
}
END_TEST

START_TEST(test_verdicts)
{
	const char *blocking[] = { "fuse", "fuseblk", "fuse.sshfs",
		"fuseblk.ntfs", "virtiofs", "nfs", "nfs4", "cifs", "smb3",
		"9p", "ceph", "gfs2", "ocfs2", "lustre" };
	for (size_t i = 0; i < sizeof(blocking) / sizeof(blocking[0]); i++)
		ck_assert_msg(fstype_judge(blocking[i]) == FSTYPE_MAY_BLOCK,
				"%s", blocking[i]);
	const char *local[] = { "ext4", "xfs", "btrfs", "tmpfs", "hugetlbfs",
		"devtmpfs", "overlay", "f2fs" };
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		ck_assert_msg(fstype_judge(local[i]) == FSTYPE_LOCAL, "%s",
				local[i]);
	/* not a prefix match */
	ck_assert_int_eq(fstype_judge("fusex"), FSTYPE_LOCAL);
}
END_TEST

/* The verdict of a descriptor of this machine; its type in `type`. */
static enum fstype_verdict
judge_fd(int fd, char *type, size_t len)
{
	struct fstype fs;
	ck_assert_int_eq(fstype_of_fd(fd, 0, &fs), 0);
	(void) snprintf(type, len, "%s", fs.type);
	return fs.verdict;
}

START_TEST(test_local_descriptors)
{
	char type[FSTYPE_NAME_MAX];
	/* a file of the file system the tests run on */
	char path[] = "/tmp/test_fstype.XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(judge_fd(fd, type, sizeof(type)), FSTYPE_LOCAL);
	ck_assert_str_ne(type, "");
	(void) unlink(path);
	(void) close(fd);

	/* a memfd: shared memory, whatever its (hidden) mount */
	fd = memfd_create("test_fstype", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(judge_fd(fd, type, sizeof(type)), FSTYPE_LOCAL);
	ck_assert_str_eq(type, "shared memory");
	(void) close(fd);

	/* a pipe: a kernel object, no file system */
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(judge_fd(p[0], type, sizeof(type)), FSTYPE_LOCAL);
	(void) close(p[0]);
	(void) close(p[1]);

	/* /dev/null: devtmpfs */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(judge_fd(fd, type, sizeof(type)), FSTYPE_LOCAL);
	ck_assert_str_eq(type, "devtmpfs");
	(void) close(fd);
}
END_TEST

START_TEST(test_local_devices)
{
	/* the device of /, as /proc/PID/maps would show a file of it */
	struct stat st;
	ck_assert_int_eq(stat("/", &st), 0);
	struct fstype fs;
	ck_assert_int_eq(fstype_of_dev(major(st.st_dev), minor(st.st_dev), 0,
			&fs), 0);
	ck_assert_int_eq(fs.verdict, FSTYPE_LOCAL);
	ck_assert_str_ne(fs.type, "");
	/*
	 * a block device's number no mount has (unmounted, files still open):
	 * a disk (only FUSE, whose devices have no major number, is judged
	 * further: tests/ops/test_files)
	 */
	ck_assert_int_eq(fstype_of_dev(4095, 1048575, 0, &fs), 0);
	ck_assert_int_eq(fs.verdict, FSTYPE_LOCAL);
}
END_TEST

int
main(void)
{
	const TTest *const tc_fstype[] = { test_mountinfo_lines, test_fdinfo,
		test_verdicts, test_local_descriptors, test_local_devices,
		NULL };
	const struct th_tcase tcases[] = {
		{ "fstype", .tests = tc_fstype },
	};
	return check_run(th_suite("fstype", tcases, TH_N(tcases)), CK_NORMAL);
}
