// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_pingpong.c -- the upstream example 08-messages-ping-pong, unmodified,
 * built as an application is (cc ... -lrpma -libverbs) against the
 * library of this build, its server on one rpmad and its client on
 * another, for several round counts. Its client loops `while (--rounds)`,
 * so "<seed> <rounds>" makes rounds - 1 exchanges: the exact lines of
 * both programs are checked.
 *
 * The example sources are not part of this project: they are looked for
 * at $IT_EXAMPLES_DIR, else $TOP_SRCDIR/../shared/conformance/
 * rpma-0.12.0-examples; without them the program exits 77 (skipped).
 */

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "itest.h"
#include "th_suite.h"

#define EXAMPLE "08-messages-ping-pong"
#define SEED 7

/* Set by main() before the tests fork. */
static char examples[512];
static char work[300];
static char build_error[1024];

static int
file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* Finds the examples; 0 or -1. */
static int
find_examples(void)
{
	const char *dir = getenv("IT_EXAMPLES_DIR");
	if (dir && *dir) {
		(void) snprintf(examples, sizeof(examples), "%s", dir);
	} else {
		const char *top = getenv("TOP_SRCDIR");
		if (top == NULL || *top == '\0')
			return -1;
		(void) snprintf(examples, sizeof(examples),
				"%s/../shared/conformance/rpma-0.12.0-examples",
				top);
	}
	char probe[700];
	(void) snprintf(probe, sizeof(probe), "%s/%s/client.c", examples,
			EXAMPLE);
	return file_exists(probe) ? 0 : -1;
}

/*
 * Builds server and client in `work`. -lrpma finds librpmaclient through
 * a librpma.so link, as an installed librpmaclient provides it.
 */
static int
build_example(void)
{
	const char *builddir = getenv("TOP_BUILDDIR");
	const char *srcdir = getenv("TOP_SRCDIR");
	if (builddir == NULL || srcdir == NULL) {
		(void) snprintf(build_error, sizeof(build_error),
				"TOP_BUILDDIR or TOP_SRCDIR not set");
		return -1;
	}
	char libdir[600], link[700];
	(void) snprintf(libdir, sizeof(libdir), "%s/.libs", builddir);
	(void) snprintf(link, sizeof(link), "%s/librpma.so", work);
	char target[700];
	(void) snprintf(target, sizeof(target), "%s/librpma.so", libdir);
	if (symlink(target, link)) {
		(void) snprintf(build_error, sizeof(build_error),
				"symlink %s: %m", link);
		return -1;
	}
	static const char *const roles[] = { "server", "client" };
	for (int i = 0; i < 2; i++) {
		char cmd[4096];
		int n = snprintf(cmd, sizeof(cmd),
			"%s -O1 -g %s -o '%s/%s' '%s/%s/%s.c' "
			"'%s/%s/messages-ping-pong-common.c' "
			"'%s/common/common-conn.c' '%s/common/common-epoll.c' "
			"-I'%s/common' -I'%s/include' -L'%s' -lrpma "
			"-Wl,-rpath,'%s' -libverbs %s >'%s/build.log' 2>&1",
			IT_CC, IT_EXAMPLE_CFLAGS, work, roles[i], examples,
			EXAMPLE, roles[i], examples, EXAMPLE, examples,
			examples, examples, srcdir, work, libdir,
			IT_EXAMPLE_LIBS, work);
		if (n < 0 || (size_t)n >= sizeof(cmd)) {
			(void) snprintf(build_error, sizeof(build_error),
					"paths too long to build the example");
			return -1;
		}
		if (system(cmd) != 0) {
			(void) snprintf(build_error, sizeof(build_error),
					"building the %s failed: see %s/build.log",
					roles[i], work);
			return -1;
		}
	}
	return 0;
}

/*
 * Runs one program of the example, its output in ROLE-ROUNDS.out and .err
 * (each test its own, so that a failure's output stays); its pid.
 */
static pid_t
run(const char *role, int rounds, const struct test_daemon *d,
		char *const argv[])
{
	(void) fflush(NULL);
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	char path[400], out[400], err[400];
	(void) snprintf(path, sizeof(path), "%s/%s", work, role);
	(void) snprintf(out, sizeof(out), "%s/%s-%d.out", work, role, rounds);
	(void) snprintf(err, sizeof(err), "%s/%s-%d.err", work, role, rounds);
	int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (o < 0 || e < 0)
		_exit(126);
	(void) dup2(o, STDOUT_FILENO);
	(void) dup2(e, STDERR_FILENO);
	test_daemon_use(d);
	execv(path, argv);
	_exit(127);
}

/* The "Value ..." lines a program printed, one string. */
static void
value_lines(const char *role, int rounds, char *buf, size_t len)
{
	char path[400];
	(void) snprintf(path, sizeof(path), "%s/%s-%d.out", work, role,
			rounds);
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return;
	char line[256];
	size_t used = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Value ", 6) != 0)
			continue;
		int n = snprintf(buf + used, len - used, "%s", line);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	(void) fclose(f);
}

static const int rounds_of[] = { 1, 3, 5 };

/* _i: index into rounds_of */
START_TEST(test_ping_pong)
{
	ck_assert_msg(build_error[0] == '\0', "%s", build_error);
	int rounds = rounds_of[_i];
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 2), 0);

	char seed[16], nrounds[16];
	(void) snprintf(seed, sizeof(seed), "%d", SEED);
	(void) snprintf(nrounds, sizeof(nrounds), "%d", rounds);
	char *sargv[] = { "server", (char *)IT_ADDR, env.port, NULL };
	char *cargv[] = { "client", (char *)IT_ADDR, env.port, seed, nrounds, NULL };
	pid_t server = run("server", rounds, env.srv, sargv);
	ck_assert_int_gt(server, 0);
	ck_assert_int_eq(it_wait_listening(env.port, IT_WAIT_MS), 0);
	pid_t client = run("client", rounds, env.cli, cargv);
	ck_assert_int_gt(client, 0);
	int crc = it_join(client, IT_ROLE_MS);
	int src = it_join(server, IT_WAIT_MS);
	ck_assert_msg(crc == 0 && src == 0, "client exit %d, server exit %d "
			"(outputs in %s)", crc, src, work);

	/* rounds - 1 exchanges, counting up from the seed */
	char want_c[1024] = "", want_s[1024] = "";
	size_t uc = 0, us = 0;
	for (int k = 0; k < rounds - 1; k++) {
		uc += (size_t)snprintf(want_c + uc, sizeof(want_c) - uc,
				"Value sent: %d\nValue received: %d\n",
				SEED + k, SEED + k + 1);
		us += (size_t)snprintf(want_s + us, sizeof(want_s) - us,
				"Value received: %d\nValue sent: %d\n",
				SEED + k, SEED + k + 1);
	}
	char got[1024];
	value_lines("client", rounds, got, sizeof(got));
	ck_assert_str_eq(got, want_c);
	value_lines("server", rounds, got, sizeof(got));
	ck_assert_str_eq(got, want_s);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

static Suite *
pingpong_suite(void)
{
	const struct th_test tc_pingpong[] = {
		TH_LOOP(test_ping_pong, 0,
				sizeof(rounds_of) / sizeof(rounds_of[0])),
		TH_END
	};
	const struct th_tcase tcases[] = {
		{ "pingpong", .steps = tc_pingpong, .create = it_tcase_create },
	};
	return th_suite("integration: upstream ping-pong", tcases,
			TH_N(tcases));
}

static void
remove_work(void)
{
	static const char *const files[] = { "server", "client", "server.out",
		"server.err", "client.out", "client.err", "build.log",
		"librpma.so" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char p[400];
		(void) snprintf(p, sizeof(p), "%s/%s", work, files[i]);
		(void) unlink(p);
	}
	(void) rmdir(work);
}

int
main(void)
{
	if (find_examples()) {
		(void) printf("skipped: no upstream examples at %s\n",
				examples[0] ? examples : "(TOP_SRCDIR unset)");
		return 77;
	}
	const char *tmp = getenv("TMPDIR");
	(void) snprintf(work, sizeof(work), "%s/rpmad-pingpong.XXXXXX",
			tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(work) == NULL) {
		perror("mkdtemp");
		return 99;
	}
	(void) build_example();

	SRunner *sr = srunner_create(pingpong_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (!failed && getenv("TEST_KEEP_LOGS") == NULL)
		remove_work();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
