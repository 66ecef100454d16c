// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_serve.c -- servers that live longer than one connection: one server
 * process takes clients one after another on one endpoint, watching
 * every descriptor with one epoll (the upstream multiple-connections
 * example has this shape), each client a new process that connects as
 * soon as the one before it is gone; and several servers side by side on
 * one rpmad, one client connected to all of them at once
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "itest.h"
#include "th_suite.h"

enum { TAG_SERVED = 100, TAG_READ_DONE };

/* ============================================ clients one after another */

#define NCLIENTS 4
#define NAME_LEN 64

/* Who ends a connection once the server read the client's name. */
enum closer { SERVER_CLOSES, CLIENT_CLOSES };

struct seq_arg {
	enum closer closer;
	int client;		/* which client a client role is */
};

/* One connection of the epoll server, and what epoll hands back. */
struct slot {
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	int event_fd, cq_fd;
	bool read_done;
};

struct watch {
	struct slot *slot;	/* NULL: the endpoint */
	bool cq;		/* the slot's CQ, else its events */
};

struct epoll_server {
	int epoll;
	struct rpma_ep *ep;
	struct rpma_mr_local *names_mr;
	struct slot slots[NCLIENTS];
	struct watch watches[NCLIENTS][2];
	struct watch ep_watch;
	int accepted, served;
	enum closer closer;
};

static void
watch_fd(struct epoll_server *s, int fd, struct watch *w)
{
	int fl = fcntl(fd, F_GETFL);
	IT_ASSERT(fl >= 0);
	IT_EQ(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };
	IT_EQ(epoll_ctl(s->epoll, EPOLL_CTL_ADD, fd, &ev), 0);
}

/* A request: accepted into the next slot, its descriptors watched. */
static void
on_request(struct epoll_server *s)
{
	struct rpma_conn_req *req = NULL;
	int ret = rpma_ep_next_conn_req(s->ep, NULL, &req);
	if (ret == RPMA_E_NO_EVENT)
		return;
	IT_OK(ret);
	IT_ASSERT_MSG(s->accepted < NCLIENTS, "a request beyond the %d "
			"clients", NCLIENTS);
	int i = s->accepted++;
	struct slot *sl = &s->slots[i];
	IT_OK(rpma_conn_req_connect(&req, NULL, &sl->conn));
	IT_OK(rpma_conn_get_event_fd(sl->conn, &sl->event_fd));
	IT_OK(rpma_conn_get_cq(sl->conn, &sl->cq));
	IT_OK(rpma_cq_get_fd(sl->cq, &sl->cq_fd));
	s->watches[i][0] = (struct watch){ sl, false };
	s->watches[i][1] = (struct watch){ sl, true };
	watch_fd(s, sl->event_fd, &s->watches[i][0]);
	watch_fd(s, sl->cq_fd, &s->watches[i][1]);
}

/* Established: read the client's name (its descriptor came with the request). */
static void
read_name(struct epoll_server *s, struct slot *sl)
{
	struct rpma_conn_private_data pd;
	IT_OK(rpma_conn_get_private_data(sl->conn, &pd));
	IT_ASSERT(pd.len >= 21);
	struct rpma_mr_remote *src = NULL;
	IT_OK(rpma_mr_remote_from_descriptor(pd.ptr, 21, &src));
	size_t i = (size_t)(sl - s->slots);
	IT_OK(rpma_read(sl->conn, s->names_mr, i * NAME_LEN, src, 0, NAME_LEN,
			RPMA_F_COMPLETION_ALWAYS, (void *)(i + 1)));
	IT_OK(rpma_mr_remote_delete(&src));
}

static void
on_event(struct epoll_server *s, struct slot *sl)
{
	enum rpma_conn_event ev;
	/* a non-blocking descriptor with nothing pending: 0.12's PROVIDER */
	if (rpma_conn_next_event(sl->conn, &ev) == RPMA_E_PROVIDER)
		return;
	switch (ev) {
	case RPMA_CONN_ESTABLISHED:
		read_name(s, sl);
		break;
	case RPMA_CONN_CLOSED:
		IT_ASSERT_MSG(sl->read_done, "client %zu closed before its "
				"name was read", (size_t)(sl - s->slots));
		IT_EQ(epoll_ctl(s->epoll, EPOLL_CTL_DEL, sl->event_fd, NULL),
				0);
		IT_EQ(epoll_ctl(s->epoll, EPOLL_CTL_DEL, sl->cq_fd, NULL), 0);
		if (s->closer == CLIENT_CLOSES)
			IT_OK(rpma_conn_disconnect(sl->conn));
		IT_OK(rpma_conn_delete(&sl->conn));
		s->served++;
		IT_EQ(it_tell(IT_PARENT, TAG_SERVED, NULL, 0), 0);
		break;
	default:
		IT_ASSERT_MSG(0, "client %zu: event %s", (size_t)(sl - s->slots),
				rpma_utils_conn_event_2str(ev));
	}
}

static void
on_completion(struct epoll_server *s, struct slot *sl)
{
	int ret = rpma_cq_wait(sl->cq);
	if (ret == RPMA_E_NO_COMPLETION)
		return;
	IT_OK(ret);
	struct ibv_wc wc;
	while ((ret = rpma_cq_get_wc(sl->cq, 1, &wc, NULL)) == 0) {
		size_t i = (size_t)(sl - s->slots);
		IT_ASSERT_MSG(wc.status == IBV_WC_SUCCESS, "client %zu: "
				"read: %s", i, ibv_wc_status_str(wc.status));
		IT_EQ(wc.wr_id, i + 1);
		sl->read_done = true;
		if (s->closer == SERVER_CLOSES)
			IT_OK(rpma_conn_disconnect(sl->conn));
		else
			IT_EQ(it_tell(IT_CLIENT, TAG_READ_DONE, NULL, 0), 0);
	}
	IT_EQ(ret, RPMA_E_NO_COMPLETION);
}

static int
epoll_server(const struct it_env *env, void *arg)
{
	const struct seq_arg *a = arg;
	struct epoll_server s = { .closer = a->closer };
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *names = it_alloc(NCLIENTS * NAME_LEN);
	IT_OK(rpma_mr_reg(peer, names, NCLIENTS * NAME_LEN,
			RPMA_MR_USAGE_READ_DST, &s.names_mr));
	s.epoll = epoll_create1(EPOLL_CLOEXEC);
	IT_ASSERT(s.epoll >= 0);
	IT_OK(rpma_ep_listen(peer, IT_ADDR, env->port, &s.ep));
	int ep_fd;
	IT_OK(rpma_ep_get_fd(s.ep, &ep_fd));
	watch_fd(&s, ep_fd, &s.ep_watch);
	IT_EQ(it_tell(IT_PARENT, IT_TAG_LISTENING, NULL, 0), 0);

	/* every client comes within IT_ROLE_MS, each its own process */
	while (s.served < NCLIENTS) {
		struct epoll_event ev;
		int n = epoll_wait(s.epoll, &ev, 1, IT_ROLE_MS);
		IT_ASSERT_MSG(n == 1 || (n < 0 && errno == EINTR),
				"%d of %d clients served, then nothing for "
				"%d ms", s.served, NCLIENTS, IT_ROLE_MS);
		if (n != 1)
			continue;
		struct watch *w = ev.data.ptr;
		if (w->slot == NULL)
			on_request(&s);
		else if (w->cq)
			on_completion(&s, w->slot);
		else
			on_event(&s, w->slot);
	}

	for (int i = 0; i < NCLIENTS; i++)
		IT_EQ(it_check(names + i * NAME_LEN, NAME_LEN, 300 + i), -1);
	IT_EQ(close(s.epoll), 0);
	IT_OKS(rpma_ep_shutdown(&s.ep), rpma_mr_dereg(&s.names_mr),
			rpma_peer_delete(&peer));
	free(names);
	return 0;
}

/* A client: its name's descriptor goes with the request. */
static int
named_client(const struct it_env *env, void *arg)
{
	const struct seq_arg *a = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *name = it_alloc(NAME_LEN);
	it_fill(name, NAME_LEN, 300 + (uint32_t)a->client);
	struct rpma_mr_local *mr =
			IT_REG(peer, name, NAME_LEN, RPMA_MR_USAGE_READ_SRC);
	uint8_t desc[21];
	IT_OK(rpma_mr_get_descriptor(mr, desc));
	struct rpma_conn_private_data pd = { desc, sizeof(desc) };
	/* the server listens already: connect at once, as the example's
	 * clients run one after another */
	struct rpma_conn *conn = it_connect_to(peer, env->port, NULL, &pd);
	if (a->closer == SERVER_CLOSES) {
		it_await_close(&conn);
	} else {
		(void) it_expect(TAG_READ_DONE, NULL, 0);
		it_close(&conn);
	}
	IT_OK(rpma_mr_dereg(&mr));
	IT_OK(rpma_peer_delete(&peer));
	free(name);
	return 0;
}

/*
 * _i: bit 0 the client closes (else the server), bit 1 one rpmad for
 * both (else two). Each client process starts the moment the one before
 * it exited, as the example's clients are run: its request reaches the
 * server's rpmad right after the previous connection ended, maybe before
 * the server application has deleted it.
 */
START_TEST(test_clients_one_after_another)
{
	struct seq_arg a = { .closer = (_i & 1) ? CLIENT_CLOSES :
			SERVER_CLOSES };
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, (_i & 2) ? 1 : 2), 0);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			epoll_server, &a), 0);
	ck_assert_msg(it_group_hear(&g, IT_TAG_LISTENING, 1) == 0, "%s",
			it_report());
	for (int i = 0; i < NCLIENTS; i++) {
		struct seq_arg ca = a;
		ca.client = i;
		pid_t pid = it_spawn(IT_CLIENT, &env, env.cli, named_client,
				&ca);
		ck_assert_int_gt(pid, 0);
		int code = it_join(pid, IT_ROLE_MS);
		ck_assert_msg(code == 0, "client %d of %d: exit %d", i + 1,
				NCLIENTS, code);
	}
	ck_assert_msg(it_group_hear(&g, TAG_SERVED, NCLIENTS) == 0, "%s",
			it_report());
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ===================================== several servers on one rpmad */

#define NSERVERS 3
#define AREA 4096

static const enum it_role server_roles[NSERVERS] = {
	IT_SERVER, IT_THIRD, IT_FOURTH
};

struct side_arg {
	char ports[NSERVERS][16];
	int server;		/* which server a server role is */
};

/* A server: a target for writes and reads, until the client closes. */
static int
side_server(const struct it_env *env, void *arg)
{
	const struct side_arg *a = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *area = it_alloc(AREA);
	struct rpma_mr_local *mr = IT_REG(peer, area, AREA,
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
					RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, a->ports[a->server], &ep));
	uint8_t desc[21];
	IT_OK(rpma_mr_get_descriptor(mr, desc));
	IT_EQ(it_tell(IT_PARENT, IT_TAG_LISTENING, NULL, 0), 0);

	struct rpma_conn_req *req = it_next_req(ep, NULL);
	struct rpma_conn_private_data pd = { desc, sizeof(desc) };
	struct rpma_conn *conn = it_accept(&req, &pd);
	it_await_close(&conn);
	IT_EQ(it_check(area, AREA, 400 + (uint32_t)a->server), -1);
	IT_OKS(rpma_ep_shutdown(&ep), rpma_mr_dereg(&mr),
			rpma_peer_delete(&peer));
	free(area);
	return 0;
}

/* The client: connected to every server at once, writes, reads back. */
static int
side_client(const struct it_env *env, void *arg)
{
	const struct side_arg *a = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *src = it_alloc(NSERVERS * AREA);
	uint8_t *back = it_alloc(NSERVERS * AREA);
	struct rpma_mr_local *src_mr = NULL, *back_mr = NULL;
	IT_OK(rpma_mr_reg(peer, src, NSERVERS * AREA,
			RPMA_MR_USAGE_WRITE_SRC, &src_mr));
	IT_OK(rpma_mr_reg(peer, back, NSERVERS * AREA,
			RPMA_MR_USAGE_READ_DST, &back_mr));
	struct rpma_conn *conns[NSERVERS];
	struct rpma_mr_remote *dst[NSERVERS];
	for (int i = 0; i < NSERVERS; i++) {
		it_fill(src + i * AREA, AREA, 400 + (uint32_t)i);
		conns[i] = it_connect_to(peer, a->ports[i], NULL, NULL);
		struct rpma_conn_private_data pd;
		IT_OK(rpma_conn_get_private_data(conns[i], &pd));
		IT_OK(rpma_mr_remote_from_descriptor(pd.ptr, 21, &dst[i]));
	}
	/* all connections busy at once: write, flush, read back */
	for (int i = 0; i < NSERVERS; i++) {
		IT_OK(rpma_write(conns[i], dst[i], 0, src_mr, i * AREA, AREA,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
		IT_OK(rpma_flush(conns[i], dst[i], 0, AREA,
				RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
		IT_OK(rpma_read(conns[i], back_mr, i * AREA, dst[i], 0, AREA,
				RPMA_F_COMPLETION_ALWAYS, (void *)0x5e));
	}
	for (int i = 0; i < NSERVERS; i++) {
		struct rpma_cq *cq = NULL;
		IT_OK(rpma_conn_get_cq(conns[i], &cq));
		struct ibv_wc wc;
		it_wc_ok(conns[i], cq, 0x5e, IBV_WC_RDMA_READ, &wc);
		IT_EQ(it_check(back + i * AREA, AREA, 400 + (uint32_t)i), -1);
	}
	for (int i = 0; i < NSERVERS; i++) {
		it_close(&conns[i]);
		IT_OK(rpma_mr_remote_delete(&dst[i]));
	}
	IT_OKS(rpma_mr_dereg(&src_mr), rpma_mr_dereg(&back_mr),
			rpma_peer_delete(&peer));
	free(src);
	free(back);
	return 0;
}

/* _i: 1 the client on the servers' rpmad, 2 on a second one */
START_TEST(test_servers_side_by_side)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, _i), 0);
	struct side_arg a[NSERVERS];
	(void) snprintf(a[0].ports[0], sizeof(a[0].ports[0]), "%s", env.port);
	for (int i = 1; i < NSERVERS; i++)
		ck_assert_int_eq(it_free_port(a[0].ports[i],
				sizeof(a[0].ports[i])), 0);
	struct it_group g;
	it_group_init(&g);
	for (int i = 0; i < NSERVERS; i++) {
		memcpy(a[i].ports, a[0].ports, sizeof(a[i].ports));
		a[i].server = i;
		ck_assert_int_eq(it_group_spawn(&g, server_roles[i], &env,
				env.srv, side_server, &a[i]), 0);
	}
	ck_assert_msg(it_group_hear(&g, IT_TAG_LISTENING, NSERVERS) == 0,
			"%s", it_report());
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			side_client, &a[0]), 0);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

int
main(void)
{
	const struct th_test tc_sequential[] = {
		TH_LOOP(test_clients_one_after_another, 0, 4), TH_END
	};
	const struct th_test tc_side_by_side[] = {
		TH_LOOP(test_servers_side_by_side, 1, 3), TH_END
	};
	const struct th_tcase tcases[] = {
		{ "sequential", .steps = tc_sequential,
				.create = it_tcase_create },
		{ "side by side", .steps = tc_side_by_side,
				.create = it_tcase_create },
	};
	return check_run(th_suite("integration: long-lived servers", tcases,
					 TH_N(tcases)),
			CK_ENV);
}
