// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_man.c -- every man page (man/NAME.3, .5, .7 and .8) renders with
 * `groff -man -ww -z` without a single warning, and is listed in
 * man/man.am so that it is installed. Skipped (77) without groff.
 */

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static bool
is_page(const char *name)
{
	size_t n = strlen(name);
	return n > 2 && name[n - 2] == '.' && strchr("3578", name[n - 1]);
}

START_TEST(test_render_all)
{
	const char *mandir = srcdir_path("man");
	char *am = read_text(srcdir_path("man/man.am"));
	ck_assert_ptr_nonnull(am);
	DIR *dir = opendir(mandir);
	ck_assert_ptr_nonnull(dir);
	unsigned pages = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (!is_page(e->d_name))
			continue;
		char path[1024], listed[300];
		(void) snprintf(path, sizeof(path), "%s/%s", mandir,
				e->d_name);
		char *argv[] = { "groff", "-man", "-ww", "-z", path, NULL };
		struct run r;
		ck_assert_int_eq(run_cmd(&r, argv, (uid_t) -1, 0, NULL, 0,
						 TH_WAIT_MS),
				0);
		ck_assert_msg(r.status == 0 && r.out[0] == '\0' &&
				r.err[0] == '\0', "%s: exit %d\n%s%s",
				e->d_name, r.status, r.out, r.err);
		run_free(&r);
		(void) snprintf(listed, sizeof(listed), "man/%s", e->d_name);
		ck_assert_msg(strstr(am, listed), "%s is not in man/man.am",
				e->d_name);
		pages++;
	}
	(void) closedir(dir);
	free(am);
	/* the API pages and ours at least */
	ck_assert_uint_ge(pages, 70);
}
END_TEST

/* The checker is not blind: a page with a mistake makes groff speak. */
START_TEST(test_checker_speaks)
{
	char path[] = "/tmp/rpmad-man.XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	const char bad[] = ".TH BAD 8\n.SH NAME\nbad \\- page\n.BOGUSMACRO x\n"
		"\\fBunclosed\n";
	ck_assert_int_eq(write(fd, bad, sizeof(bad) - 1), sizeof(bad) - 1);
	(void) close(fd);
	char *argv[] = { "groff", "-man", "-ww", "-z", path, NULL };
	struct run r;
	ck_assert_int_eq(run_cmd(&r, argv, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_msg(r.err[0] != '\0', "groff said nothing");
	run_free(&r);
	(void) unlink(path);
}
END_TEST

int
main(void)
{
	if (th_have_program("groff") != 1) {
		(void) fprintf(stderr, "groff is not installed: skipped\n");
		return 77;
	}
	const TTest *const tc_man[] = { test_render_all, test_checker_speaks,
		NULL };
	const struct th_tcase tcases[] = {
		{ "man", .tests = tc_man, .timeout = 120 },
	};
	return check_run(th_suite("man", tcases, TH_N(tcases)), CK_NORMAL);
}
