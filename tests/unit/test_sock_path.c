// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_sock_path.c -- the walk that decides whether the way to rpmad's
 * socket is safe from other users (rpmad/control/sock_path.c), on real
 * directories and links in a scratch directory under /tmp (itself a
 * root-owned sticky directory, the case that must keep working).
 *
 * What other users own is made with chown, so those cases need root and
 * are skipped without it.
 */

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/sock_path.h"
#include "th_files.h"
#include "th_suite.h"

#define OTHER 65534	/* the attacker */

static char base[64];
static char err[PATH_MAX + 256];

static const char *
at(const char *rel)
{
	return th_path(base, rel);
}

static void
mkdir_as(const char *rel, mode_t mode, uid_t owner)
{
	ck_assert_int_eq(th_mkdir_owned(at(rel), mode, owner), 0);
}

static void
link_as(const char *target, const char *rel, uid_t owner)
{
	ck_assert_int_eq(symlink(target, at(rel)), 0);
	if (owner != (uid_t)-1)
		ck_assert_int_eq(lchown(at(rel), owner, (gid_t)-1), 0);
}

static int
check(const char *rel, struct stat *st)
{
	err[0] = '\0';
	return sock_path_check(at(rel), geteuid(), st, err, sizeof(err));
}

/* the walk refuses `rel` with -EPERM and names `who` in its reason */
static void
refused(const char *rel, const char *who, const char *why)
{
	struct stat st;
	ck_assert_int_eq(check(rel, &st), -EPERM);
	ck_assert_msg(strstr(err, at(who)) && strstr(err, why),
			"%s: \"%s\" does not name %s (%s)", rel, err, at(who),
			why);
}

/* the walk accepts `rel` and reaches the directory `real` */
static void
accepted(const char *rel, const char *real)
{
	struct stat st, want;
	ck_assert_msg(check(rel, &st) == 0, "%s: %s", rel, err);
	ck_assert_int_eq(stat(at(real), &want), 0);
	ck_assert(st.st_dev == want.st_dev && st.st_ino == want.st_ino);
}

static bool
root(void)
{
	if (geteuid() == 0)
		return true;
	(void) fprintf(stderr, "not root: other users' files cannot be made; "
			"skipping\n");
	return false;
}

static void
setup(void)
{
	(void) snprintf(base, sizeof(base), "/tmp/rpmad-sockpath.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
	mkdir_as("run", 0755, (uid_t)-1);
}

static void
teardown(void)
{
	th_remove_tree(base);
}

/* A root-owned 0700 directory in /tmp: what the tests' rpmads use. */
START_TEST(test_private_dir_in_tmp)
{
	accepted("run", "run");
	accepted(".", ".");
	/* /tmp itself passes the walk (its mode is the listener's concern) */
	struct stat st;
	ck_assert_int_eq(sock_path_check("/tmp", geteuid(), &st, err,
			sizeof(err)), 0);
}
END_TEST

START_TEST(test_dots_and_relative_links)
{
	accepted("run/../run/./", "run");
	link_as("run", "rel", (uid_t)-1);
	accepted("rel", "run");
	link_as("rel/..", "up", (uid_t)-1);
	accepted("up/run", "run");
	char abs[PATH_MAX];
	(void) snprintf(abs, sizeof(abs), "%s/run", base);
	link_as(abs, "abs", (uid_t)-1);
	accepted("abs", "run");
}
END_TEST

START_TEST(test_what_stops_the_walk)
{
	struct stat st;
	ck_assert_int_eq(check("missing/run", &st), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, at("missing")));
	FILE *f = fopen(at("file"), "w");
	ck_assert_ptr_nonnull(f);
	(void) fclose(f);
	ck_assert_int_eq(check("file/run", &st), -ENOTDIR);
	ck_assert_ptr_nonnull(strstr(err, at("file")));
	link_as("b", "a", (uid_t)-1);
	link_as("a", "b", (uid_t)-1);
	ck_assert_int_eq(check("a", &st), -ELOOP);
}
END_TEST

/* An ancestor its group or others may write, not sticky: refused. */
START_TEST(test_writable_ancestor)
{
	mkdir_as("shared", 0775, (uid_t)-1);
	mkdir_as("shared/run", 0700, (uid_t)-1);
	refused("shared/run", "shared", "may be written by its group");
	ck_assert_int_eq(chmod(at("shared"), 0757), 0);
	refused("shared/run", "shared", "may be written by others");
}
END_TEST

/*
 * A sticky world-writable ancestor (a /tmp of one's own): fine for what
 * root owns in it, refused for what another user owns there.
 */
START_TEST(test_sticky_ancestor)
{
	mkdir_as("tmp", 01777, (uid_t)-1);
	mkdir_as("tmp/run", 0700, (uid_t)-1);
	accepted("tmp/run", "tmp/run");
	if (!root())
		return;
	mkdir_as("tmp/theirs", 0700, OTHER);
	refused("tmp/theirs", "tmp/theirs", "belongs to uid 65534 and lies in");
}
END_TEST

/* A root-owned directory under an attacker-owned parent: refused. */
START_TEST(test_attacker_owned_parent)
{
	if (!root())
		return;
	mkdir_as("evil", 0755, OTHER);
	mkdir_as("evil/run", 0700, (uid_t)-1);
	refused("evil/run", "evil", "belongs to uid 65534");
	/* and a root-owned link in it to a safe place is no better */
	char abs[PATH_MAX];
	(void) snprintf(abs, sizeof(abs), "%s/run", base);
	link_as(abs, "evil/link", (uid_t)-1);
	refused("evil/link", "evil", "belongs to uid 65534");
}
END_TEST

/*
 * An attacker's symlink to a root-owned directory, in a sticky directory
 * anyone may write (as /tmp): the attacker can point it elsewhere later.
 * The same link owned by root cannot be replaced: accepted.
 */
START_TEST(test_attacker_symlink)
{
	if (!root())
		return;
	mkdir_as("tmp", 01777, (uid_t)-1);
	char abs[PATH_MAX];
	(void) snprintf(abs, sizeof(abs), "%s/run", base);
	link_as(abs, "tmp/theirs", OTHER);
	refused("tmp/theirs", "tmp/theirs", "belongs to uid 65534 and lies in");
	link_as(abs, "tmp/roots", (uid_t)-1);
	accepted("tmp/roots", "run");
	/* a link that leads through one of theirs, also when relative */
	link_as("theirs", "tmp/via", (uid_t)-1);
	refused("tmp/via", "tmp/theirs", "belongs to uid 65534 and lies in");
}
END_TEST

/* rpmad's own user counts as root does, and only it. */
START_TEST(test_rpmad_user)
{
	if (!root())
		return;
	mkdir_as("mine", 0755, 4242);
	struct stat st;
	ck_assert_int_eq(sock_path_check(at("mine"), 4242, &st, err,
			sizeof(err)), 0);
	ck_assert_int_eq(sock_path_check(at("mine"), 4243, &st, err,
			sizeof(err)), -EPERM);
	ck_assert_ptr_nonnull(strstr(err, "belongs to uid 4242"));
}
END_TEST

static void
file_as(const char *rel, mode_t mode, uid_t owner)
{
	FILE *f = fopen(at(rel), "w");
	ck_assert_ptr_nonnull(f);
	(void) fclose(f);
	ck_assert_int_eq(chmod(at(rel), mode), 0);
	if (owner != (uid_t)-1)
		ck_assert_int_eq(chown(at(rel), owner, (gid_t)-1), 0);
}

/* the binary an upgrade runs: root alone is trusted, down to the file */
static int
check_file(const char *rel, char *real, size_t len)
{
	struct stat st;
	err[0] = '\0';
	return sock_path_check_file(at(rel), 0, &st, real, len, err,
			sizeof(err));
}

START_TEST(test_binary)
{
	if (!root())
		return;
	char real[PATH_MAX];
	mkdir_as("sbin", 0755, (uid_t)-1);
	file_as("sbin/rpmad", 0755, (uid_t)-1);
	ck_assert_msg(check_file("sbin/rpmad", real, sizeof(real)) == 0, "%s",
			err);
	ck_assert_str_eq(real, at("sbin/rpmad"));
	/* a root-owned link to it, in a root-owned directory: the file */
	link_as("rpmad", "sbin/link", (uid_t)-1);
	ck_assert_int_eq(check_file("sbin/link", real, sizeof(real)), 0);
	ck_assert_str_eq(real, at("sbin/rpmad"));
	/* a directory is no binary */
	ck_assert_int_eq(check_file("sbin", real, sizeof(real)), -EISDIR);

	/* someone else's file, or one others may write */
	file_as("sbin/theirs", 0755, OTHER);
	ck_assert_int_eq(check_file("sbin/theirs", real, sizeof(real)),
			-EPERM);
	ck_assert_ptr_nonnull(strstr(err, "belongs to uid 65534"));
	file_as("sbin/open", 0757, (uid_t)-1);
	ck_assert_int_eq(check_file("sbin/open", real, sizeof(real)), -EPERM);
	ck_assert_ptr_nonnull(strstr(err, "may be written by others"));

	/* the swapped-symlink attack: a directory of theirs above it */
	mkdir_as("home", 0755, OTHER);
	file_as("home/rpmad", 0755, (uid_t)-1);
	ck_assert_int_eq(check_file("home/rpmad", real, sizeof(real)), -EPERM);
	ck_assert_msg(strstr(err, at("home")) &&
			strstr(err, "belongs to uid 65534"), "%s", err);
	/* root's link into their directory: refused as well */
	link_as(at("home/rpmad"), "sbin/via", (uid_t)-1);
	ck_assert_int_eq(check_file("sbin/via", real, sizeof(real)), -EPERM);

	/* rpmad's own user is not trusted here: root alone */
	mkdir_as("mine", 0755, 4242);
	file_as("mine/rpmad", 0755, (uid_t)-1);
	ck_assert_int_eq(check_file("mine/rpmad", real, sizeof(real)), -EPERM);
}
END_TEST

int
main(void)
{
	const TTest *const tc_walk[] = { test_private_dir_in_tmp,
		test_dots_and_relative_links, test_what_stops_the_walk,
		test_writable_ancestor, test_sticky_ancestor,
		test_attacker_owned_parent, test_attacker_symlink,
		test_rpmad_user, test_binary, NULL };
	const struct th_tcase tcases[] = {
		{ "walk", .tests = tc_walk, .setup = setup,
				.teardown = teardown },
	};
	return check_run(th_suite("sock_path", tcases, TH_N(tcases)),
			CK_NORMAL);
}
