/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_daemon.h -- starting and stopping a real rpmad for a test
 *
 * The daemon binary is $RPMAD_BIN (make check sets it to the one just
 * built); its socket lives in a fresh temporary directory, and RPMAD_SOCKET
 * is set so that librpmaclient in this process (and its children) uses it.
 */

#ifndef TEST_DAEMON_H
#define TEST_DAEMON_H

#include <sys/types.h>

struct test_daemon {
	pid_t pid;
	char dir[256];
	char socket[300];
	char log[300];
};

/*
 * test_daemon_transport -- the transport the tests' daemons use:
 * $RPMAD_TEST_TRANSPORT (tcp, verbs or auto), tcp by default
 */
const char *test_daemon_transport(void);

/*
 * test_daemon_start -- run rpmad --foreground --transport T on a new
 * socket (T: test_daemon_transport()), plus the extra arguments (NULL-terminated list, may be NULL),
 * and wait until it accepts connections. Returns 0 or -1.
 */
int test_daemon_start(struct test_daemon *d, const char *const *extra_args);

/*
 * test_daemon_restart -- after test_daemon_kill (or a SIGTERM the test
 * waited for), run rpmad again as test_daemon_start did, on the same
 * socket, directory and log (appended to), with these extra arguments.
 * Returns 0 once it accepts connections, or -1.
 */
int test_daemon_restart(struct test_daemon *d, const char *const *extra_args);

/* test_daemon_use -- point RPMAD_SOCKET at this daemon */
void test_daemon_use(const struct test_daemon *d);

/* test_daemon_stop -- SIGTERM, wait, remove the directory; its status */
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

#endif /* TEST_DAEMON_H */
