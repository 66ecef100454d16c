// SPDX-License-Identifier: BSD-3-Clause
/*
 * nt_conformance.c -- the upstream librpma example programs across two
 * hosts: ../shared/conformance/run.sh, unmodified, with its daemon A
 * (the example servers') inside one network namespace and daemon B (the
 * clients') inside the other, the servers listening at NS_ADDR_A.
 *
 * run.sh takes an installed prefix; this build is presented as one (the
 * header, librpma.so and librpma.so.0 linked from the build tree, a
 * librpma.pc that adds the sanitizer flags of this build, as an ASan
 * library needs ASan programs). Its RPMAD variable names a wrapper that
 * starts each daemon in its namespace, chosen by the socket run.sh gives
 * it ($WORK/A.sock or $WORK/B.sock); an `ss` first on PATH looks inside
 * namespace A, where the servers' endpoints listen.
 *
 * 08-messages-ping-pong is left out, as in scripts/run-tests.sh: run.sh
 * expects 3 rounds from "7 3", the unmodified client does rounds - 1
 * (tests/integration/it_pingpong runs it instead).
 *
 * Skips (77) without the examples, a compiler, pkg-config, python3 (run.sh
 * uses them) or network namespaces.
 */

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "itest.h"
#include "netns_env.h"
#include "th_suite.h"

#ifndef NT_EXAMPLE_CFLAGS
#define NT_EXAMPLE_CFLAGS ""
#endif
#ifndef NT_EXAMPLE_LIBS
#define NT_EXAMPLE_LIBS ""
#endif

static struct ns_hosts hosts;
static char conformance[512];	/* the folder of run.sh */

/* How long run.sh may take (it bounds each program at 30-40 s itself). */
#define RUN_MS 100000
#define RUN_TCASE_TIMEOUT 120

#define SKIPPED_EXAMPLE "08-messages-ping-pong"

static void
write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
}

static void
make_dir(const char *parent, const char *name, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/%s", parent, name);
	ck_assert(n > 0 && (size_t)n < len);
	ck_assert_msg(mkdir(out, 0755) == 0, "mkdir %s", out);
}

static void
link_to(const char *target, const char *dir, const char *name)
{
	char path[512];
	(void) snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_msg(access(target, R_OK) == 0, "%s is missing", target);
	ck_assert_msg(symlink(target, path) == 0, "symlink %s", path);
}

/* This build as an installed prefix, for run.sh. */
static void
make_prefix(char *prefix, size_t len)
{
	const char *src = getenv("TOP_SRCDIR");
	const char *build = getenv("TOP_BUILDDIR");
	ck_assert_msg(src && build, "TOP_SRCDIR and TOP_BUILDDIR must be set "
			"(make check sets them)");
	char inc[512], lib[512], pc[512], target[512], text[2048];
	make_dir(hosts.dir, "prefix", prefix, len);
	make_dir(prefix, "include", inc, sizeof(inc));
	make_dir(prefix, "lib", lib, sizeof(lib));
	make_dir(lib, "pkgconfig", pc, sizeof(pc));
	(void) snprintf(target, sizeof(target), "%s/include/librpma.h", src);
	link_to(target, inc, "librpma.h");
	(void) snprintf(target, sizeof(target), "%s/.libs/librpma.so",
			build);
	link_to(target, lib, "librpma.so");
	(void) snprintf(target, sizeof(target),
			"%s/.libs/librpma.so.0", build);
	link_to(target, lib, "librpma.so.0");
	(void) snprintf(text, sizeof(text), "prefix=%s\nlibdir=${prefix}/lib\n"
			"includedir=${prefix}/include\n\nName: librpma\n"
			"Description: this build of librpmaclient\n"
			"Version: 0.12.0\nLibs: -L${libdir} -lrpma %s\n"
			"Cflags: -I${includedir} %s\n", prefix,
			NT_EXAMPLE_LIBS, NT_EXAMPLE_CFLAGS);
	char path[600];
	(void) snprintf(path, sizeof(path), "%s/librpma.pc", pc);
	write_file(path, text, 0644);
}

/* The wrapper run.sh starts as rpmad, and the `ss` it asks. */
static void
make_wrappers(char *rpmad, size_t len, char *shims, size_t shims_len)
{
	char text[2048];
	(void) snprintf(rpmad, len, "%s/rpmad-ab", hosts.dir);
	(void) snprintf(text, sizeof(text), "#!/bin/sh\n"
			"# run.sh starts daemon A on $WORK/A.sock, B on "
			"$WORK/B.sock\n"
			"case \"$*\" in\n"
			"*/A.sock*) exec '%s' \"$@\" ;;\n"
			"*) exec '%s' \"$@\" ;;\n"
			"esac\n", hosts.rpmad[0], hosts.rpmad[1]);
	write_file(rpmad, text, 0755);

	make_dir(hosts.dir, "shims", shims, shims_len);
	char ss[256];
	if (ns_find_program("ss", ss, sizeof(ss)))
		return;	/* run.sh then waits a fixed second instead */
	(void) snprintf(text, sizeof(text), "#!/bin/sh\n"
			"exec '%s' netns exec '%s' '%s' \"$@\"\n", hosts.ip,
			hosts.ns[0], ss);
	char path[600];
	(void) snprintf(path, sizeof(path), "%s/ss", shims);
	write_file(path, text, 0755);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The NN-* example folders but SKIPPED_EXAMPLE; returns how many. */
static int
list_examples(char *names[], int max)
{
	char dir[600];
	(void) snprintf(dir, sizeof(dir), "%s/rpma-0.12.0-examples",
			conformance);
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "no %s", dir);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < max) {
		const char *s = e->d_name;
		if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' ||
				s[2] != '-' || strcmp(s, SKIPPED_EXAMPLE) == 0)
			continue;
		names[n] = strdup(s);
		ck_assert_ptr_nonnull(names[n]);
		n++;
	}
	(void) closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), by_name);
	return n;
}

static void
show(const char *path)
{
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return;
	char line[1024];
	while (fgets(line, sizeof(line), f))
		(void) fprintf(stderr, "run.sh: %s", line);
	(void) fclose(f);
}

/* run.sh's verdict: its last line "N passed, M failed". */
static void
verdict(const char *path, char *buf, size_t len)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return;
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strstr(line, " passed, ") && strstr(line, " failed"))
			(void) snprintf(buf, len, "%s", line);
	}
	(void) fclose(f);
}

START_TEST(test_conformance_across_namespaces)
{
	char prefix[256], rpmad[256], shims[256], out[300];
	make_prefix(prefix, sizeof(prefix));
	make_wrappers(rpmad, sizeof(rpmad), shims, sizeof(shims));
	char *names[64];
	int n = list_examples(names, 64);
	ck_assert_int_gt(n, 0);

	(void) snprintf(out, sizeof(out), "%s/run.out", hosts.dir);
	uint64_t start = it_now_ms();
	(void) fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char path[4096], script[600];
		const char *old = getenv("PATH");
		(void) snprintf(path, sizeof(path), "%s:%s", shims,
				old ? old : "/usr/bin:/bin");
		(void) snprintf(script, sizeof(script), "%s/run.sh",
				conformance);
		(void) setenv("PATH", path, 1);
		(void) setenv("ADDR", NS_ADDR_A, 1);
		(void) setenv("RPMAD", rpmad, 1);
		(void) setenv("RPMAD_ARGS", "--config /dev/null --log-level info",
				1);
		(void) unsetenv("ONE_DAEMON");
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			(void) dup2(fd, STDOUT_FILENO);
			(void) dup2(fd, STDERR_FILENO);
		}
		const char *argv[70] = { "bash", script, prefix };
		int argc = 3;
		for (int i = 0; i < n; i++)
			argv[argc++] = names[i];
		argv[argc] = NULL;
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	int code = it_join(pid, RUN_MS);
	uint64_t took = it_now_ms() - start;
	show(out);
	char last[1024], want[64];
	verdict(out, last, sizeof(last));
	(void) snprintf(want, sizeof(want), "%d passed, 0 failed", n);
	(void) fprintf(stderr, "nt_conformance: %d examples across %s and %s "
			"in %llu ms: %s\n", n, hosts.ns[0], hosts.ns[1],
			(unsigned long long)took, last);
	ck_assert_msg(code == 0 && strcmp(last, want) == 0, "run.sh ended "
			"with %d: \"%s\" (wanted \"%s\")", code, last, want);
	for (int i = 0; i < n; i++)
		free(names[i]);
}
END_TEST

/* Whether what run.sh needs is here; says what is not. */
static bool
can_run(void)
{
	const char *src = getenv("TOP_SRCDIR");
	(void) snprintf(conformance, sizeof(conformance),
			"%s/../shared/conformance", src ? src : ".");
	char script[600];
	(void) snprintf(script, sizeof(script), "%s/run.sh", conformance);
	if (access(script, R_OK) != 0) {
		(void) fprintf(stderr, "nt_conformance: SKIP: no %s\n", script);
		return false;
	}
	static const char *const tools[] = { "bash", "cc", "pkg-config",
		"python3" };
	char path[256];
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		if (ns_find_program(tools[i], path, sizeof(path))) {
			(void) fprintf(stderr, "nt_conformance: SKIP: run.sh "
					"needs %s\n", tools[i]);
			return false;
		}
	}
	return true;
}

static Suite *
conformance_suite(void)
{
	const TTest *const tc_conformance[] = {
		test_conformance_across_namespaces, NULL
	};
	const struct th_tcase tcases[] = {
		{ "conformance", .tests = tc_conformance,
				.create = it_tcase_create,
				.timeout = RUN_TCASE_TIMEOUT },
	};
	return th_suite("conformance across two hosts", tcases, TH_N(tcases));
}

int
main(void)
{
	if (!can_run())
		return NS_SKIP;
	return ns_main(&hosts, conformance_suite);
}
