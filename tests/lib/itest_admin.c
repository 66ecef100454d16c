// SPDX-License-Identifier: BSD-3-Clause
/*
 * itest_admin.c -- what a daemon holds, as the tests see it: its admin
 * protocol (AdminQuery STATUS and CLIENTS, spoken here directly rather than
 * by parsing rpmactl's output, whose wording may change)
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "itest.h"
#include "rpmad.pb-c.h"
#include "th_ctl.h"

int
it_admin_open(struct it_admin *a, const struct test_daemon *d)
{
	return th_ctl_open(&a->ctl, d->socket, "itest-admin");
}

void
it_admin_close(struct it_admin *a)
{
	th_ctl_close(&a->ctl);
}

/* One admin query; the reply or NULL. */
static Rpmad__Response *
admin_query(struct it_admin *a, Rpmad__AdminQuery__Kind kind)
{
	struct th_req q;
	Rpmad__Response *resp;
	if (th_ctl_call(&a->ctl, th_req_admin(&q, kind), NULL, 0, &resp))
		return NULL;
	if (resp->error)
		(void) fprintf(stderr, "itest: rpmad refused: %s\n",
				resp->error->message);
	if (resp->error || resp->body_case != RPMAD__RESPONSE__BODY_ADMIN ||
			resp->admin == NULL) {
		rpmad__response__free_unpacked(resp, NULL);
		resp = NULL;
	}
	return resp;
}

static void
counts_from(const Rpmad__ResourceCounts *m, struct it_counts *c)
{
	memset(c, 0, sizeof(*c));
	if (m == NULL)
		return;
	c->sessions = m->sessions;
	c->peers = m->peers;
	c->mrs = m->mrs;
	c->endpoints = m->endpoints;
	c->conn_reqs = m->conn_reqs;
	c->connections = m->connections;
	c->pinned_bytes = m->pinned_bytes;
}

/* rpmad's status (resp->admin->status), or NULL */
static Rpmad__Response *
status_query(struct it_admin *a)
{
	Rpmad__Response *resp = admin_query(a,
			RPMAD__ADMIN_QUERY__KIND__STATUS);
	if (resp && resp->admin->status == NULL) {
		rpmad__response__free_unpacked(resp, NULL);
		resp = NULL;
	}
	return resp;
}

int
it_admin_status(struct it_admin *a, struct it_counts *c)
{
	Rpmad__Response *resp = status_query(a);
	if (resp == NULL)
		return -1;
	counts_from(resp->admin->status->counts, c);
	/* the asking session is not one of the clients under test */
	if (c->sessions > 0)
		c->sessions--;
	rpmad__response__free_unpacked(resp, NULL);
	return 0;
}

int
it_admin_pids(struct it_admin *a, pid_t *pid, pid_t *draining, size_t max,
		size_t *n)
{
	Rpmad__Response *resp = status_query(a);
	if (resp == NULL)
		return -1;
	const Rpmad__StatusReply *st = resp->admin->status;
	*pid = (pid_t)st->pid;
	*n = 0;
	for (size_t i = 0; i < st->n_draining_pids && *n < max; i++)
		draining[(*n)++] = (pid_t)st->draining_pids[i];
	rpmad__response__free_unpacked(resp, NULL);
	return 0;
}

int
it_admin_ep_pending(struct it_admin *a, const char *port, const char *origin)
{
	Rpmad__Response *resp = admin_query(a,
			RPMAD__ADMIN_QUERY__KIND__ENDPOINTS);
	if (resp == NULL)
		return -1;
	int n = 0;
	for (size_t i = 0; i < resp->admin->n_endpoints; i++) {
		const Rpmad__EndpointInfo *e = resp->admin->endpoints[i];
		if (strcmp(e->port, port) != 0)
			continue;
		if (origin == NULL)
			n = (int)e->pending_requests;
		for (size_t s = 0; origin && s < e->n_largest_shares; s++) {
			if (strcmp(e->largest_shares[s]->origin, origin) == 0)
				n = (int)e->largest_shares[s]->pending;
		}
	}
	rpmad__response__free_unpacked(resp, NULL);
	return n;
}

int
it_admin_client(struct it_admin *a, pid_t pid, struct it_counts *c)
{
	Rpmad__Response *resp = admin_query(a,
			RPMAD__ADMIN_QUERY__KIND__CLIENTS);
	if (resp == NULL)
		return -1;
	int found = 0;
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < resp->admin->n_clients; i++) {
		const Rpmad__ClientInfo *ci = resp->admin->clients[i];
		if (ci->pid != (uint32_t)pid)
			continue;
		struct it_counts one;
		counts_from(ci->counts, &one);
		c->sessions++;
		c->peers += one.peers;
		c->mrs += one.mrs;
		c->endpoints += one.endpoints;
		c->conn_reqs += one.conn_reqs;
		c->connections += one.connections;
		c->pinned_bytes += one.pinned_bytes;
		found = 1;
	}
	rpmad__response__free_unpacked(resp, NULL);
	return found;
}

int
it_admin_mr(struct it_admin *a, pid_t pid, uint32_t *usage, char *persistence,
		size_t len)
{
	Rpmad__Response *resp = admin_query(a, RPMAD__ADMIN_QUERY__KIND__MRS);
	if (resp == NULL)
		return -1;
	int found = 0;
	for (size_t i = 0; i < resp->admin->n_mrs && !found; i++) {
		const Rpmad__MrInfo *m = resp->admin->mrs[i];
		if (m->pid != (uint32_t)pid)
			continue;
		*usage = m->usage;
		(void) snprintf(persistence, len, "%s",
				m->persistence ? m->persistence : "");
		found = 1;
	}
	rpmad__response__free_unpacked(resp, NULL);
	return found;
}

int
it_daemon_serves(const struct test_daemon *d, pid_t pid_at_start)
{
	if (d->pid != pid_at_start || !test_daemon_alive(d))
		return -1;
	struct it_admin a;
	if (it_admin_open(&a, d))
		return -1;
	struct it_counts c;
	int ret = it_admin_status(&a, &c);
	it_admin_close(&a);
	return ret;
}
