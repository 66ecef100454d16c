/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netns_env.h -- two "hosts" made of network namespaces: NS_ADDR_A and
 * NS_ADDR_B on the two ends of a veth pair, one rpmad in each.
 *
 * Only the daemons run inside the namespaces (`ip netns exec`); the
 * applications reach them by their Unix socket paths, which every
 * namespace shares, as containers reach a bind-mounted rpmad socket.
 * The names carry the test program's pid, so concurrent runs do not
 * meet; everything is removed at the end, after a failed test too, and
 * namespaces that a killed earlier run left behind are swept at the start.
 */

#ifndef NETNS_ENV_H
#define NETNS_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <check.h>

#include "test_daemon.h"

#define NS_ADDR_A "10.77.0.1"
#define NS_ADDR_B "10.77.0.2"

/* exit code of a test that cannot run here */
#define NS_SKIP 77

struct ns_hosts {
	char ns[2][48];		/* namespace names */
	char veth[2][16];	/* the veth end in each */
	char dir[200];		/* scratch: wrappers, the daemons' dirs */
	char rpmad[2][300];	/* "rpmad" that runs in namespace i */
	char ip[256];		/* the ip(8) binary */
	bool made[2];
};

/*
 * ns_hosts_create -- make both namespaces and the link; point TMPDIR at
 * the scratch dir. Returns 0, NS_SKIP (with the reason on stderr) when
 * this host cannot (not root, no ip, no network namespaces), or -1.
 * Removal at exit and on SIGINT/SIGTERM/SIGHUP is arranged.
 */
int ns_hosts_create(struct ns_hosts *h);

/* ns_hosts_destroy -- end what still runs in them, remove everything */
void ns_hosts_destroy(struct ns_hosts *h);

/*
 * ns_link -- set host i's end of the link up or down (up: with fresh
 * address resolution on both ends); 0 or -1
 */
int ns_link(const struct ns_hosts *h, int i, bool up);

/*
 * ns_main -- a test program's main() on these hosts: make h, run the
 * suite that `suite` makes, show the end of every daemon log when a test
 * failed, remove h. The exit code: NS_SKIP where the hosts cannot be
 * made here, else the suite's (check_run).
 */
int ns_main(struct ns_hosts *h, Suite *(*suite)(void) );

/*
 * ns_daemon_start -- test_daemon_start_opts of an rpmad inside namespace
 * i with this configuration (NULL: none); it dies with the process that
 * started it. Returns 0 or -1.
 */
int ns_daemon_start(const struct ns_hosts *h, int i, struct test_daemon *d,
		const char *config);

/* ns_holds -- whether process pid runs inside namespace i */
bool ns_holds(const struct ns_hosts *h, int i, pid_t pid);

/* ns_find_program -- the path of `name` on PATH (or in sbin); 0 or -1 */
int ns_find_program(const char *name, char *buf, size_t len);

#endif /* NETNS_ENV_H */
