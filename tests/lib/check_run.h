/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_run.h -- the main() of every Check test program: run a suite and
 * turn its failures into the exit code automake's harness reads
 */

#ifndef RPMAD_TESTS_CHECK_RUN_H
#define RPMAD_TESTS_CHECK_RUN_H

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>

/*
 * check_run -- run every test of s (how: CK_ENV lets CK_VERBOSITY choose,
 * CK_NORMAL prints failures only); EXIT_SUCCESS when none failed
 */
static inline int
check_run_as(Suite *s, enum print_output how, bool always_fork)
{
	SRunner *sr = srunner_create(s);
	if (always_fork)
		srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, how);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

static inline int
check_run(Suite *s, enum print_output how)
{
	return check_run_as(s, how, false);
}

/*
 * check_run_forked -- the same with every test in a process of its own
 * whatever CK_FORK says (a test that leaves a library's process-wide
 * state behind, or kills its own process)
 */
static inline int
check_run_forked(Suite *s, enum print_output how)
{
	return check_run_as(s, how, true);
}

#endif /* RPMAD_TESTS_CHECK_RUN_H */
