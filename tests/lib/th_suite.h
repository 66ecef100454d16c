/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * th_suite.h -- the main() of every Check test program: test cases made
 * from lists of tests, a suite run and its failures turned into the exit
 * code automake's harness reads
 */

#ifndef TH_SUITE_H
#define TH_SUITE_H

#include <check.h>

/*
 * th_add -- add the tests of a NULL-terminated list to tc, then tc to s;
 * returns tc. TH_ADD(s, tc, test, ...) is the same with the tests listed.
 */
TCase *th_add(Suite *s, TCase *tc, const TTest *const *tests);

#define TH_ADD(s, tc, ...) \
	th_add((s), (tc), (const TTest *const []){ __VA_ARGS__, NULL })

/*
 * th_tcase -- a test case with a Check timeout (seconds; 0: Check's) and
 * a fixture run around each test in its process (either may be NULL)
 */
TCase *th_tcase(const char *name, int timeout, void (*setup)(void),
		void (*teardown)(void));

/*
 * check_run -- run every test of s (how: CK_ENV lets CK_VERBOSITY choose,
 * CK_NORMAL prints failures only); EXIT_SUCCESS when none failed
 */
int check_run(Suite *s, enum print_output how);

/*
 * check_run_forked -- the same with every test in a process of its own
 * whatever CK_FORK says (a test that leaves a library's process-wide
 * state behind, or kills its own process)
 */
int check_run_forked(Suite *s, enum print_output how);

#endif /* TH_SUITE_H */
