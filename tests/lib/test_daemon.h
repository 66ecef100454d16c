/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_daemon.h -- a real rpmad for a test: started, stopped, killed,
 * restarted, with a configuration of its own
 *
 * The daemon binary is $RPMAD_BIN (make check sets it to the one just
 * built); its socket, log and configuration live in a fresh temporary
 * directory, and RPMAD_SOCKET is set so that librpmaclient in this process
 * (and its children) uses it. A daemon dies with the process that started
 * it (a failed check ends that at once), so that none outlives its test.
 */

#ifndef TEST_DAEMON_H
#define TEST_DAEMON_H

#include <stdbool.h>
#include <sys/types.h>

struct test_daemon {
	pid_t pid;
	char dir[256];
	char socket[300];
	char log[300]; /* its standard output and error */
	char config[300]; /* its rpmad.conf; empty: --config /dev/null */
	char bin[300]; /* the program it runs */
	bool cfg_log_level; /* started without --log-level */
};

/* How to start one (all optional). */
struct test_daemon_opts {
	const char *config; /* rpmad.conf's text */
	const char *const *args; /* more arguments, NULL-terminated */
	char *const *env; /* more environment, "NAME=value" */
	const char *bin; /* else $RPMAD_BIN, else rpmad */
	mode_t dir_mode; /* its directory's; 0: 0700 */
	bool cfg_log_level; /* no --log-level: the file's wins */
};

/*
 * test_daemon_transport -- the transport the tests' daemons use:
 * $RPMAD_TEST_TRANSPORT (tcp, verbs or auto), tcp by default
 */
const char *test_daemon_transport(void);

/*
 * test_daemon_start_opts -- run `rpmad --foreground --socket S
 * --transport T --log-level L --config C` and the extra arguments in a new
 * directory (T: test_daemon_transport(); L: $RPMAD_TEST_LOG_LEVEL, else
 * info, none with cfg_log_level; C: the configuration written to the
 * directory, else /dev/null),
 * wait until it accepts connections and point RPMAD_SOCKET at it.
 * Returns 0 or -1.
 */
int test_daemon_start_opts(struct test_daemon *d,
		const struct test_daemon_opts *o);

/* test_daemon_start -- the same with these extra arguments (may be NULL) */
int test_daemon_start(struct test_daemon *d, const char *const *extra_args);

/*
 * test_daemon_start_cfg -- as an operator runs it: its configuration file
 * (`config`, NULL: empty) says all that the command line does not (the
 * log level too), and others may search its directory (0755), for
 * clients of other users
 */
int test_daemon_start_cfg(struct test_daemon *d, const char *config);

/*
 * test_daemon_restart -- after test_daemon_kill (or a SIGTERM the test
 * waited for), run rpmad again as it was started (its program and
 * configuration; not the extra environment), on the same socket,
 * directory and log (appended to), with these extra arguments. Returns 0
 * once it accepts connections, or -1.
 */
int test_daemon_restart(struct test_daemon *d, const char *const *extra_args);

/* test_daemon_use -- point RPMAD_SOCKET at this daemon */
void test_daemon_use(const struct test_daemon *d);

/*
 * test_daemon_stop -- SIGTERM, wait (10 s, then SIGKILL), remove the
 * directory (TEST_KEEP_LOGS keeps it); its wait status, -1 when it had to
 * be killed
 */
int test_daemon_stop(struct test_daemon *d);

/*
 * test_daemon_stop_pid -- SIGTERM an rpmad this process reaps that no
 * test_daemon names (the successor an upgrade started, reparented to a
 * PR_SET_CHILD_SUBREAPER process), wait; its status
 */
int test_daemon_stop_pid(pid_t pid);

/* test_daemon_kill -- SIGKILL, wait (the socket file stays) */
void test_daemon_kill(struct test_daemon *d);

/* test_daemon_alive -- whether the daemon still runs */
int test_daemon_alive(const struct test_daemon *d);

/* test_daemon_log_count -- lines of its log that contain `what` */
int test_daemon_log_count(const struct test_daemon *d, const char *what);

#endif /* TEST_DAEMON_H */
