// SPDX-License-Identifier: BSD-3-Clause
/*
 * ops_pair.c -- an ops_peer server and client on the test's rpmad (see
 * ops_pair.h)
 */

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "harness.h"
#include "ops_pair.h"

const char *
ops_peer_bin(void)
{
	return builddir_path("tests/ops/ops_peer");
}

void
ops_pair_start(struct ops_pair *p, const char *pmem)
{
	ck_assert_int_eq(it_free_port(p->port, sizeof(p->port)), 0);
	(void) snprintf(p->pmem, sizeof(p->pmem), "%s", pmem);
	char *trunc[] = { "truncate", "-s", "64K", p->pmem, NULL };
	struct run r;
	ck_assert_int_eq(run_cmd(&r, trunc, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_int_eq(r.status, 0);
	run_free(&r);

	char *sargv[] = { (char *) ops_peer_bin(), "server", "127.0.0.1",
		p->port, p->pmem, NULL };
	ck_assert_int_eq(proc_start(&p->server, sargv, NULL, NULL), 0);
	char line[256];
	if (proc_line(&p->server, "listening", line, sizeof(line),
			    TH_WAIT_MS)) {
		char rest[512] = "";
		(void) proc_line(&p->server, "", rest, sizeof(rest), 100);
		ck_abort_msg("the server does not listen (%s)", rest);
	}
	char *cargv[] = { (char *) ops_peer_bin(), "client", "127.0.0.1",
		p->port, NULL };
	ck_assert_int_eq(proc_start(&p->client, cargv, NULL, NULL), 0);
}

void
ops_pair_stop(struct ops_pair *p)
{
	(void) proc_end(&p->client, SIGKILL);
	(void) proc_end(&p->server, SIGKILL);
	(void) unlink(p->pmem);
}
