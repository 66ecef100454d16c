// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_api_log.c -- the logging API: both thresholds and their defaults,
 * invalid thresholds and levels, the default function (stderr, filtered by
 * RPMA_LOG_THRESHOLD_AUX where a syslog daemon listens, and by
 * RPMA_LOG_THRESHOLD where none does), user functions with
 * file/line/function and a formatted message, filtering by
 * RPMA_LOG_THRESHOLD
 */

#include <errno.h>
#include <fcntl.h>
#include <syslog.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api_helpers.h"

/*
 * A library call that fails with a logged ERROR-level message and needs no
 * daemon: a descriptor of the wrong size.
 */
static void
provoke_error_message(void)
{
	char desc[5] = { 0 };
	struct rpma_mr_remote *mr = NULL;
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, sizeof(desc),
			&mr), RPMA_E_INVAL);
}

/* the two thresholds are these */
static void
assert_thresholds(enum rpma_log_level want, enum rpma_log_level want_aux)
{
	enum rpma_log_level level = (enum rpma_log_level) - 7, aux = level;
	ck_assert_int_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level), 0);
	ck_assert_int_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &aux),
			0);
	ck_assert_int_eq(level, want);
	ck_assert_int_eq(aux, want_aux);
}

START_TEST(threshold_values_are_abi)
{
	ck_assert_int_eq(RPMA_LOG_THRESHOLD, 0);
	ck_assert_int_eq(RPMA_LOG_THRESHOLD_AUX, 1);
	ck_assert_int_eq(RPMA_LOG_THRESHOLD_MAX, 2);
	ck_assert_int_eq(RPMA_LOG_DISABLED, -1);
	ck_assert_int_eq(RPMA_LOG_LEVEL_FATAL, 0);
	ck_assert_int_eq(RPMA_LOG_LEVEL_DEBUG, 5);
	ck_assert_ptr_null(RPMA_LOG_USE_DEFAULT_FUNCTION);
}
END_TEST

START_TEST(threshold_defaults)
{
	assert_thresholds(RPMA_LOG_LEVEL_WARNING, RPMA_LOG_DISABLED);
}
END_TEST

START_TEST(threshold_invalid)
{
	const int bad_thresholds[] = { RPMA_LOG_THRESHOLD_MAX, -1, 3, 1000 };
	for (size_t i = 0; i < sizeof(bad_thresholds) /
			sizeof(bad_thresholds[0]); i++) {
		enum rpma_log_threshold t =
				(enum rpma_log_threshold)bad_thresholds[i];
		enum rpma_log_level level = RPMA_LOG_LEVEL_INFO;
		ck_assert_int_eq(rpma_log_get_threshold(t, &level),
				RPMA_E_INVAL);
		/* untouched on failure */
		ck_assert_int_eq(level, RPMA_LOG_LEVEL_INFO);
		ck_assert_int_eq(rpma_log_set_threshold(t,
				RPMA_LOG_LEVEL_ERROR), RPMA_E_INVAL);
	}
	ck_assert_int_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, NULL),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, NULL),
			RPMA_E_INVAL);

	const int bad_levels[] = { -2, RPMA_LOG_LEVEL_DEBUG + 1, 100, -100 };
	for (int t = RPMA_LOG_THRESHOLD; t < RPMA_LOG_THRESHOLD_MAX; t++) {
		for (size_t i = 0; i < sizeof(bad_levels) /
				sizeof(bad_levels[0]); i++) {
			ck_assert_int_eq(rpma_log_set_threshold(
					(enum rpma_log_threshold)t,
					(enum rpma_log_level)bad_levels[i]),
					RPMA_E_INVAL);
		}
	}
	/* nothing changed */
	assert_thresholds(RPMA_LOG_LEVEL_WARNING, RPMA_LOG_DISABLED);
}
END_TEST

START_TEST(threshold_every_level)
{
	for (int t = RPMA_LOG_THRESHOLD; t < RPMA_LOG_THRESHOLD_MAX; t++) {
		for (int l = RPMA_LOG_DISABLED; l <= RPMA_LOG_LEVEL_DEBUG;
				l++) {
			ck_assert_int_eq(rpma_log_set_threshold(
					(enum rpma_log_threshold)t,
					(enum rpma_log_level)l), 0);
			enum rpma_log_level got = (enum rpma_log_level)-7;
			ck_assert_int_eq(rpma_log_get_threshold(
					(enum rpma_log_threshold)t, &got), 0);
			ck_assert_int_eq(got, l);
		}
	}
	/* the two thresholds are independent */
	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD,
			RPMA_LOG_LEVEL_NOTICE), 0);
	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
			RPMA_LOG_LEVEL_FATAL), 0);
	assert_thresholds(RPMA_LOG_LEVEL_NOTICE, RPMA_LOG_LEVEL_FATAL);
}
END_TEST

START_TEST(user_function_gets_where_and_message)
{
	ck_assert_int_eq(th_log_capture(), 0);
	provoke_error_message();

	ck_assert_uint_eq(th_log_count(), 1);
	const struct th_log_entry *e = th_log_entry(0);
	ck_assert_int_eq(e->level, RPMA_LOG_LEVEL_ERROR);
	/* where in the library: a source file, a line, the function */
	const char *base = strrchr(e->file, '/');
	base = base ? base + 1 : e->file;
	ck_assert_str_eq(base, "mr_remote.c");
	ck_assert_int_gt(e->line, 0);
	ck_assert_str_eq(e->func, "rpma_mr_remote_from_descriptor");
	/* the message arrives formatted: the numbers are in it */
	ck_assert_msg(strstr(e->msg, "5") && strstr(e->msg, "21"),
			"message: \"%s\"", e->msg);
	ck_assert_ptr_null(strchr(e->msg, '%'));
}
END_TEST

START_TEST(threshold_filters_messages)
{
	ck_assert_int_eq(th_log_capture(), 0);

	/* ERROR passes WARNING (the default) and ERROR */
	provoke_error_message();
	ck_assert_uint_eq(th_log_count(), 1);
	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD,
			RPMA_LOG_LEVEL_ERROR), 0);
	provoke_error_message();
	ck_assert_uint_eq(th_log_count(), 2);

	/* it does not pass FATAL nor DISABLED */
	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD,
			RPMA_LOG_LEVEL_FATAL), 0);
	provoke_error_message();
	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD,
			RPMA_LOG_DISABLED), 0);
	provoke_error_message();
	ck_assert_uint_eq(th_log_count(), 2);

	/* the auxiliary threshold is the function's business only */
	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD,
			RPMA_LOG_LEVEL_DEBUG), 0);
	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
			RPMA_LOG_DISABLED), 0);
	provoke_error_message();
	ck_assert_uint_eq(th_log_count(), 3);
}
END_TEST

START_TEST(set_function_back_to_default)
{
	ck_assert_int_eq(th_log_capture(), 0);
	provoke_error_message();
	ck_assert_uint_eq(th_log_count(), 1);

	ck_assert_int_eq(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION),
			0);
	provoke_error_message();
	ck_assert_uint_eq(th_log_count(), 1); /* no longer called */
}
END_TEST

/* Runs provoke_error_message() with stderr going to a file; its text. */
static void
stderr_of_error_message(char *out, size_t cap)
{
	char path[] = "/tmp/rpma-unit-stderr.XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	(void) unlink(path);

	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
	provoke_error_message();
	fflush(stderr);
	ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
	(void) close(saved);

	ssize_t n = pread(fd, out, cap - 1, 0);
	ck_assert_int_ge(n, 0);
	out[n] = '\0';
	(void) close(fd);
}

static void
write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	(void) close(fd);
}

/*
 * Gives this test process (Check forks one per test) a /dev of its own,
 * a tmpfs in a mount namespace (within a user namespace of its own when
 * not root), with a stand-in syslog daemon bound at /dev/log or without
 * one. Returns the stand-in's socket, or -1 (none asked for); skips the
 * test where namespaces cannot be made here.
 */
static int
own_dev(bool with_syslog)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	int flags = CLONE_NEWNS | (uid == 0 ? 0 : CLONE_NEWUSER);
	if (unshare(flags)) {
		(void) fprintf(stderr, "unshare: %s: skipping\n",
				strerror(errno));
		exit(0);	/* the test passes, untested */
	}
	if (uid != 0) {
		char map[64];
		write_file("/proc/self/setgroups", "deny");
		(void) snprintf(map, sizeof(map), "%u %u 1", (unsigned)uid,
				(unsigned)uid);
		write_file("/proc/self/uid_map", map);
		(void) snprintf(map, sizeof(map), "%u %u 1", (unsigned)gid,
				(unsigned)gid);
		write_file("/proc/self/gid_map", map);
	}
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_int_eq(mount("tmpfs", "/dev", "tmpfs", 0, "mode=755"), 0);
	if (!with_syslog)
		return -1;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	(void) snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", _PATH_LOG);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

/* Whether the stand-in syslog daemon got a message holding `what`. */
static bool
syslog_got(int fd, const char *what)
{
	char buf[2048];
	ssize_t n;
	while ((n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
		buf[n] = '\0';
		if (strstr(buf, what))
			return true;
	}
	return false;
}

/*
 * No syslog daemon (a container, as a rule): what passes
 * RPMA_LOG_THRESHOLD goes to stderr too, whatever RPMA_LOG_THRESHOLD_AUX
 * says; nothing else does.
 */
START_TEST(default_function_stderr_without_syslog)
{
	char text[4096];
	(void) own_dev(false);

	stderr_of_error_message(text, sizeof(text));
	ck_assert_msg(strstr(text, "incompatible descriptor size") != NULL,
			"stderr: \"%s\"", text);
	ck_assert_ptr_nonnull(strstr(text, "ERROR"));

	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
			RPMA_LOG_LEVEL_FATAL), 0);
	stderr_of_error_message(text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, "incompatible descriptor size"));

	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD,
			RPMA_LOG_LEVEL_FATAL), 0);
	stderr_of_error_message(text, sizeof(text));
	ck_assert_str_eq(text, "");
}
END_TEST

START_TEST(default_function_stderr_by_aux)
{
	char text[4096];
	int syslogd = own_dev(true);

	/* AUX disabled (the default): nothing on stderr, all to syslog */
	stderr_of_error_message(text, sizeof(text));
	ck_assert_str_eq(text, "");
	ck_assert(syslog_got(syslogd, "incompatible descriptor size"));

	/* AUX at ERROR: the message, its level and its origin */
	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
			RPMA_LOG_LEVEL_ERROR), 0);
	stderr_of_error_message(text, sizeof(text));
	ck_assert_msg(strstr(text, "incompatible descriptor size") != NULL,
			"stderr: \"%s\"", text);
	ck_assert_ptr_nonnull(strstr(text, "ERROR"));
	ck_assert_ptr_nonnull(strstr(text, "mr_remote.c"));
	ck_assert_ptr_nonnull(strstr(text, "rpma_mr_remote_from_descriptor"));
	ck_assert_ptr_nonnull(strchr(text, '\n'));

	/* AUX at FATAL: an ERROR message stays off stderr */
	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
			RPMA_LOG_LEVEL_FATAL), 0);
	stderr_of_error_message(text, sizeof(text));
	ck_assert_str_eq(text, "");

	/* the main threshold applies first: FATAL drops it everywhere */
	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
			RPMA_LOG_LEVEL_DEBUG), 0);
	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD,
			RPMA_LOG_LEVEL_FATAL), 0);
	stderr_of_error_message(text, sizeof(text));
	ck_assert_str_eq(text, "");
}
END_TEST

/*
 * NOTICE-level messages (a connection event) need a daemon: they reach the
 * function only when RPMA_LOG_THRESHOLD lets NOTICE through.
 */
START_TEST(notice_filtered_by_threshold)
{
	ck_assert_int_eq(th_log_capture(), 0);
	struct api_pair p;
	api_pair_connect(&p, NULL, NULL);
	ck_assert_ptr_null(th_log_find("Connection established"));
	api_pair_close(&p);

	ck_assert_int_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD,
			RPMA_LOG_LEVEL_NOTICE), 0);
	th_log_clear();
	api_pair_connect(&p, NULL, NULL);
	const struct th_log_entry *e = th_log_find("Connection established");
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->level, RPMA_LOG_LEVEL_NOTICE);
	ck_assert_int_gt(e->line, 0);
	ck_assert_str_ne(e->func, "");
	/* nothing above the threshold came through */
	for (unsigned i = 0; i < th_log_count(); i++)
		ck_assert_int_le(th_log_entry(i)->level, RPMA_LOG_LEVEL_NOTICE);
	api_pair_close(&p);
}
END_TEST

int
main(void)
{
	const TTest *const tc_thresholds[] = { threshold_values_are_abi,
		threshold_defaults, threshold_invalid, threshold_every_level,
		NULL };
	const TTest *const tc_functions[] = {
		user_function_gets_where_and_message,
		threshold_filters_messages, set_function_back_to_default,
		default_function_stderr_by_aux,
		default_function_stderr_without_syslog, NULL
	};
	const TTest *const tc_with_rpmad[] = { notice_filtered_by_threshold,
		NULL };
	const struct th_tcase tcases[] = {
		{ "thresholds", .tests = tc_thresholds },
		{ "functions", .tests = tc_functions },
		{ "with_rpmad", .tests = tc_with_rpmad,
				.create = api_tcase_shared },
	};
	return api_run(th_suite("api_log", tcases, TH_N(tcases)));
}
