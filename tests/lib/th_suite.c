// SPDX-License-Identifier: BSD-3-Clause
/*
 * th_suite.c -- suites from tables of test cases, suites run (see
 * th_suite.h)
 */

#include <stdbool.h>
#include <stdlib.h>

#include "th_suite.h"

static TCase *
th_tcase_make(const struct th_tcase *t)
{
	TCase *tc = t->create ? t->create(t->name) : tcase_create(t->name);
	if (t->timeout > 0)
		tcase_set_timeout(tc, t->timeout);
	if (t->setup || t->teardown)
		tcase_add_checked_fixture(tc, t->setup, t->teardown);
	for (size_t i = 0; t->tests && t->tests[i]; i++)
		tcase_add_test(tc, t->tests[i]);
	for (const struct th_test *st = t->steps; st && st->test; st++) {
		if (st->end > 0)
			tcase_add_loop_test(tc, st->test, st->start, st->end);
		else
			tcase_add_test(tc, st->test);
	}
	return tc;
}

Suite *
th_suite(const char *name, const struct th_tcase *tcases, size_t n)
{
	Suite *s = suite_create(name);
	for (size_t i = 0; i < n; i++)
		suite_add_tcase(s, th_tcase_make(&tcases[i]));
	return s;
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
