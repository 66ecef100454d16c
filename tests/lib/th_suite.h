/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * th_suite.h -- the main() of every Check test program: test cases made
 * from lists of tests, a suite run and its failures turned into the exit
 * code automake's harness reads
 */

#ifndef TH_SUITE_H
#define TH_SUITE_H

#include <stddef.h>

#include <check.h>

/*
 * A test case as data: its name, its tests in order, how it is made and
 * run. A program's main (or suite function) lists its test cases in a
 * table and th_suite makes the suite, so that no program spells out the
 * tcase_create / tcase_add_test / suite_add_tcase sequence again.
 */
struct th_test {
	const TTest *test;
	int start, end; /* end > 0: a loop test over [start, end) */
};

struct th_tcase {
	const char *name;
	const TTest *const *tests; /* ended by NULL, or: */
	const struct th_test *steps; /* loop tests among them, TH_END */
	TCase *(*create)(const char *name); /* NULL: tcase_create */
	int timeout; /* seconds; 0: as created */
	void (*setup)(void); /* a checked fixture: around each test */
	void (*teardown)(void);
};

/*
 * TH_TEST(t), TH_LOOP(t, start, end) -- the steps of a th_tcase's .steps,
 * ended by TH_END (initializers, not blocks, whatever clang-format thinks)
 */
/* clang-format off */
#define TH_TEST(t) { (t), 0, 0 }
#define TH_LOOP(t, start, end) { (t), (start), (end) }
#define TH_END { NULL, 0, 0 }
/* clang-format on */

/* TH_N -- the number of elements of an array */
#define TH_N(a) (sizeof(a) / sizeof((a)[0]))

/* th_suite -- a suite named name of the n test cases of tcases */
Suite *th_suite(const char *name, const struct th_tcase *tcases, size_t n);

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
