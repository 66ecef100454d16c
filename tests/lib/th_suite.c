// SPDX-License-Identifier: BSD-3-Clause
/*
 * th_suite.c -- test cases from lists, suites run (see th_suite.h)
 */

#include <stdbool.h>
#include <stdlib.h>

#include "th_suite.h"

TCase *
th_add(Suite *s, TCase *tc, const TTest *const *tests)
{
	for (size_t i = 0; tests[i] != NULL; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
	return tc;
}

TCase *
th_tcase(const char *name, int timeout, void (*setup)(void),
		void (*teardown)(void))
{
	TCase *tc = tcase_create(name);
	if (timeout > 0)
		tcase_set_timeout(tc, timeout);
	if (setup || teardown)
		tcase_add_checked_fixture(tc, setup, teardown);
	return tc;
}

static int
run(Suite *s, enum print_output how, bool always_fork)
{
	SRunner *sr = srunner_create(s);
	if (always_fork)
		srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, how);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

int
check_run(Suite *s, enum print_output how)
{
	return run(s, how, false);
}

int
check_run_forked(Suite *s, enum print_output how)
{
	return run(s, how, true);
}
