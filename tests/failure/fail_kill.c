// SPDX-License-Identifier: BSD-3-Clause
/*
 * fail_kill.c -- SIGKILL in the middle of a stream of every kind of work.
 *
 * A server application (the target, on rpmad A) and a client application
 * (the initiator, on rpmad B) are connected and both run fstream.h's
 * stream: writes, flushes, reads and sends, signaled and unsignaled,
 * FS_WINDOW in flight, receives posted. Then the parent SIGKILLs
 *   (a) the target application,
 *   (b) the target's rpmad (A),
 *   (c) the initiator application,
 * and checks that every survivor sees RPMA_CONN_LOST or RPMA_CONN_CLOSED
 * and an error completion for everything it had outstanding within
 * KILL_BOUND_MS of the kill, that posting then fails with
 * RPMA_E_PROVIDER, that deleting its objects succeeds, and that every
 * surviving rpmad lets go of everything: no connection once the survivor
 * deleted its own, and its resources, descriptors and mappings back to
 * what they were before the test once every client ended.
 *
 * (tests/integration/it_events.c test_lost covers an idle connection with
 * a few receives and one send; it_cleanup.c an application killed while
 * writing and reading. This adds the stream of every kind, the time bound
 * and the initiator's side.)
 */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "footprint.h"
#include "fstream.h"
#include "itest.h"
#include "th_suite.h"

/*
 * How soon after the kill a survivor must have seen everything. Nothing
 * on the way waits for a timer: the kernel closes a killed process's
 * descriptors at once, and each step is an event on one of them.
 * - Application killed: its control socket reaches its end, rpmad
 *   releases the session (session.c, OBJ_RELEASE_ABORT) and closes the
 *   connection's TCP sockets with SO_LINGER 0 (tcp_chan_close), so the
 *   other rpmad reads a reset and ends the connection as LOST
 *   (tcp_rx.c socket_ended), flushing what is outstanding.
 * - rpmad killed: its TCP sockets close (the other rpmad sees their end,
 *   as above), and so do the notification sockets of its applications,
 *   whose library then reports LOST and makes up the flush completions.
 * tcp_timeout_ms (default 5000 ms: TCP_USER_TIMEOUT and keepalives in
 * tcp_chan.c) only finds a peer that goes silent without closing, and
 * the 1 s GOODBYE_TIMEOUT only ends an orderly disconnect that got no
 * answer; neither is involved. The work itself takes milliseconds; 2 s
 * leaves room for two shared cores running sanitizer builds under
 * make -j2, and is below the 5 s keepalive bound, so a pass shows that
 * the loss was not found by a timeout.
 */
#define KILL_BOUND_MS 2000

/* Successful completions each end sees before the kill. */
#define WARMUP 200

enum { TAG_STREAMING = 100, TAG_KILL_AT, TAG_CONN_GONE, TAG_GO };

enum victim {
	KILL_TARGET_APP,
	KILL_TARGET_DAEMON,
	KILL_INITIATOR_APP,
	VICTIMS
};

static const char *const victim_names[VICTIMS] = {
	"target application", "target's rpmad", "initiator application",
};

struct kill_opts {
	enum victim victim;
};

/* Whether `role` lives on past the kill. */
static bool
survives(enum victim v, enum it_role role)
{
	switch (v) {
	case KILL_TARGET_APP:
		return role == IT_CLIENT;
	case KILL_INITIATOR_APP:
		return role == IT_SERVER;
	default:
		return true;	/* both applications */
	}
}

/* The role's part once its end of the stream broke. */
static void
survive(struct fs_stream *s, const struct kill_opts *o, bool own_daemon_dead)
{
	uint64_t kill_at = 0;
	IT_EQ(it_expect(TAG_KILL_AT, &kill_at, sizeof(kill_at)),
			sizeof(kill_at));
	IT_ASSERT_MSG(s->res.t_break >= kill_at, "the stream broke (%s) "
			"%llu ms before the kill", s->res.cause,
			(unsigned long long)(kill_at - s->res.t_break));
	fs_drain(s, IT_WAIT_MS);

	char who[128];
	(void) snprintf(who, sizeof(who), "fail_kill: %s killed: %s",
			victim_names[o->victim], it_role_name(it_role()));
	fs_report(s, who, kill_at);
	const struct fs_result *r = &s->res;
	IT_ASSERT_MSG(r->t_event - kill_at <= KILL_BOUND_MS, "%s came %llu "
			"ms after the kill (bound %d ms)",
			rpma_utils_conn_event_2str(r->event),
			(unsigned long long)(r->t_event - kill_at),
			KILL_BOUND_MS);
	IT_ASSERT_MSG(r->t_flushed - kill_at <= KILL_BOUND_MS, "the last "
			"outstanding work failed %llu ms after the kill "
			"(bound %d ms)",
			(unsigned long long)(r->t_flushed - kill_at),
			KILL_BOUND_MS);
	/* receives are always posted: the break must have failed them */
	IT_ASSERT(r->failed[FS_RECV] > 0);

	fs_posts_fail(s);
	if (own_daemon_dead) {
		/* new objects need a daemon: an error, not a hang */
		struct ibv_context *dev = NULL;
		IT_ERR(RPMA_E_PROVIDER, rpma_utils_get_ibv_context(IT_ADDR,
				RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev));
	}
	fs_fini(s);
}

static int
stream_role(const struct it_env *env, void *arg)
{
	const struct kill_opts *o = arg;
	bool server = it_role() == IT_SERVER;
	struct rpma_peer *peer = it_role_peer(IT_ADDR);
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn;
	if (server) {
		ep = it_listen(peer, env);
		struct rpma_conn_req *req = it_next_req(ep, fs_conn_cfg());
		conn = it_accept(&req, NULL);
	} else {
		conn = it_connect(peer, env, fs_conn_cfg(), NULL);
	}

	struct fs_stream s;
	fs_init(&s, peer, conn);
	it_send_desc(server ? IT_CLIENT : IT_SERVER, s.mr, NULL);
	struct it_desc desc;
	it_expect_desc(&desc);
	fs_set_remote(&s, &desc);
	fs_run_ok(&s, WARMUP);
	IT_EQ(it_tell(IT_PARENT, TAG_STREAMING, NULL, 0), 0);

	fs_run_until_broken(&s, IT_ROLE_MS);
	IT_ASSERT_MSG(survives(o->victim, it_role()), "the victim's stream "
			"broke (%s) before it was killed", s.res.cause);
	bool own_daemon_dead = server && o->victim == KILL_TARGET_DAEMON;
	survive(&s, o, own_daemon_dead);

	/* the parent looks at rpmad now: no connection may be left */
	IT_EQ(it_tell(IT_PARENT, TAG_CONN_GONE, NULL, 0), 0);
	IT_ASSERT(it_hear(TAG_GO, NULL, 0, IT_ROLE_MS) == 0);
	if (ep)
		IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/* _i: enum victim */
START_TEST(test_kill_mid_stream)
{
	struct kill_opts o = { .victim = (enum victim)_i };
	struct it_env env;
	/* admin queries need root or an admin group: ours */
	char config[64];
	(void) snprintf(config, sizeof(config), "admin_groups = %u\n",
			(unsigned)getgid());
	ck_assert_int_eq(it_env_start_cfg(&env, 2, config), 0);
	struct test_daemon *a = env.srv, *b = env.cli;
	ck_assert_int_eq(it_free_port(env.port, sizeof(env.port)), 0);

	struct it_admin adm_a, adm_b;
	ck_assert_int_eq(it_admin_open(&adm_a, a), 0);
	ck_assert_int_eq(it_admin_open(&adm_b, b), 0);
	struct footprint empty_a, empty_b;
	footprint_now(&adm_a, a->pid, &empty_a);
	footprint_now(&adm_b, b->pid, &empty_b);

	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, a, stream_role,
			&o), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, b, stream_role,
			&o), 0);
	ck_assert_msg(it_group_hear(&g, TAG_STREAMING, 2) == 0, "%s",
			it_report());
	struct it_counts c;
	ck_assert_int_eq(it_admin_status(&adm_a, &c), 0);
	ck_assert_int_eq(c.connections, 1);
	ck_assert_int_eq(it_admin_status(&adm_b, &c), 0);
	ck_assert_int_eq(c.connections, 1);

	/* the survivors learn when it happened, then it happens */
	enum it_role roles[2] = { IT_SERVER, IT_CLIENT };
	uint64_t kill_at = it_now_ms();
	for (int i = 0; i < 2; i++) {
		if (survives(o.victim, roles[i]))
			ck_assert_int_eq(it_tell(roles[i], TAG_KILL_AT,
					&kill_at, sizeof(kill_at)), 0);
	}
	switch (o.victim) {
	case KILL_TARGET_APP:
		it_group_kill(&g, IT_SERVER);
		break;
	case KILL_TARGET_DAEMON:
		it_admin_close(&adm_a);
		test_daemon_kill(a);
		break;
	case KILL_INITIATOR_APP:
		it_group_kill(&g, IT_CLIENT);
		break;
	default:
		ck_abort();
	}

	/* the killed application's rpmad let go of all it held */
	if (o.victim != KILL_TARGET_DAEMON) {
		bool target = o.victim == KILL_TARGET_APP;
		long ms = footprint_expect(target ? &adm_a : &adm_b,
				target ? a->pid : b->pid,
				target ? &empty_a : &empty_b, KILL_BOUND_MS,
				"the killed application's rpmad");
		(void) fprintf(stderr, "fail_kill: %s killed: its rpmad let "
				"go of everything within %ld ms (bound %d "
				"ms)\n", victim_names[o.victim], ms,
				KILL_BOUND_MS);
	}

	/* each survivor deleted its connection: its rpmad holds none */
	int survivors = o.victim == KILL_TARGET_DAEMON ? 2 : 1;
	ck_assert_msg(it_group_hear(&g, TAG_CONN_GONE, survivors) == 0, "%s",
			it_report());
	if (o.victim != KILL_INITIATOR_APP)
		(void) footprint_expect_no_conns(&adm_b, IT_WAIT_MS,
				"the initiator's rpmad");
	if (o.victim == KILL_INITIATOR_APP)
		(void) footprint_expect_no_conns(&adm_a, IT_WAIT_MS,
				"the target's rpmad");
	for (int i = 0; i < 2; i++) {
		if (survives(o.victim, roles[i]))
			ck_assert_int_eq(it_tell(roles[i], TAG_GO, NULL, 0),
					0);
	}
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());

	/* and once every client ended, the surviving rpmads are as before */
	(void) footprint_expect(&adm_b, b->pid, &empty_b, IT_WAIT_MS,
			"the initiator's rpmad at the end");
	if (o.victim != KILL_TARGET_DAEMON) {
		(void) footprint_expect(&adm_a, a->pid, &empty_a, IT_WAIT_MS,
				"the target's rpmad at the end");
		it_admin_close(&adm_a);
	}
	it_admin_close(&adm_b);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

int
main(void)
{
	const struct th_test tc_kill[] = {
		TH_LOOP(test_kill_mid_stream, 0, VICTIMS), TH_END
	};
	const struct th_tcase tcases[] = {
		{ "kill", .steps = tc_kill, .create = it_tcase_create },
	};
	return check_run(th_suite("failure: SIGKILL mid-stream", tcases,
					 TH_N(tcases)),
			CK_ENV);
}
