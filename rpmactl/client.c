// SPDX-License-Identifier: BSD-3-Clause
/*
 * client.c -- talking to rpmad over its control socket
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "ctl_call.h"

#define ADMIN_HINT "rpmactl commands need root or a group named in " \
	"admin_groups of rpmad.conf(5)"

/*
 * A daemon that refuses a request says why; so do we, and pick the code.
 * `hint` says who may do `what`, for a refusal for want of permission.
 */
static int
refused(const struct client *c, const Rpmad__Error *err, const char *what,
		const char *hint)
{
	const char *msg = err->message && *err->message ? err->message :
		"(no reason given)";
	if (err->errnum == EPERM || err->errnum == EACCES) {
		(void) fprintf(stderr, "rpmactl: permission denied: %s\n", msg);
		(void) fprintf(stderr, "rpmactl: %s\n", hint);
		return EXIT_DENIED;
	}
	(void) fprintf(stderr, "rpmactl: rpmad at %s refused %s: %s\n",
			c->path, what, msg);
	return EXIT_REFUSED;
}

/* One request, one answer. Returns EXIT_OK with *resp, or an exit code. */
static int
call(struct client *c, Rpmad__Request *req, Rpmad__Response **resp)
{
	req->id = ++c->next_id;
	struct ctl_answer ans = { .fds = NULL };	/* admin answers: none */
	int ret = ctl_call(c->sock, req, NULL, 0, c->timeout_ms, &ans);
	*resp = ans.resp;
	if (ret == 0)
		return EXIT_OK;
	switch (ans.failed) {
	case CTL_STEP_PACK:
		(void) fprintf(stderr, "rpmactl: %s\n", ret == -EMSGSIZE ?
				"request too large" : strerror(-ret));
		return EXIT_REFUSED;
	case CTL_STEP_WAIT:
		(void) fprintf(stderr, "rpmactl: rpmad at %s did not answer "
				"within %d ms\n", c->path, c->timeout_ms);
		return EXIT_UNREACHABLE;
	case CTL_STEP_END:
		(void) fprintf(stderr, "rpmactl: lost rpmad at %s: it closed "
				"the connection\n", c->path);
		return EXIT_UNREACHABLE;
	case CTL_STEP_DECODE:
		(void) fprintf(stderr, "rpmactl: rpmad at %s sent an answer "
				"that makes no sense\n", c->path);
		return EXIT_REFUSED;
	case CTL_STEP_SEND:
	case CTL_STEP_RECV:
	default:
		(void) fprintf(stderr, "rpmactl: lost rpmad at %s: %s\n",
				c->path, strerror(-ret));
		return EXIT_UNREACHABLE;
	}
}

int
client_open(struct client *c, const char *path, int timeout_ms)
{
	memset(c, 0, sizeof(*c));
	c->sock = -1;
	c->path = path;
	c->timeout_ms = timeout_ms;

	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		(void) fprintf(stderr, "rpmactl: socket path too long: %s\n",
				path);
		return EXIT_USAGE;
	}
	strcpy(sun.sun_path, path);

	c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->sock < 0) {
		(void) fprintf(stderr, "rpmactl: %s\n", strerror(errno));
		return EXIT_REFUSED;
	}
	if (connect(c->sock, (struct sockaddr *)&sun, sizeof(sun))) {
		int err = errno;
		(void) fprintf(stderr, "rpmactl: cannot reach rpmad at %s: "
				"%s\n", path, strerror(err));
		if (err == EACCES || err == EPERM) {
			(void) fprintf(stderr, "rpmactl: the socket's group "
					"and mode decide who may connect "
					"(SocketGroup=/SocketMode= of "
					"rpmad.socket, or socket_group/"
					"socket_mode)\n");
			return EXIT_DENIED;
		}
		(void) fprintf(stderr, "rpmactl: is rpmad running? (--socket "
				"PATH or RPMAD_SOCKET name another socket)\n");
		return EXIT_UNREACHABLE;
	}

	Rpmad__Hello hello;
	Rpmad__Request req;
	ctl_hello(&req, &hello, "rpmactl");
	Rpmad__Response *resp;
	int ret = call(c, &req, &resp);
	if (ret)
		return ret;
	if (resp->error)
		ret = refused(c, resp->error, "the connection",
				"allow_users and allow_groups of rpmad.conf(5) "
				"decide who may use rpmad");
	rpmad__response__free_unpacked(resp, NULL);
	return ret;
}

void
client_close(struct client *c)
{
	if (c->sock >= 0)
		(void) close(c->sock);
	c->sock = -1;
}

static const char *
kind_name(Rpmad__AdminQuery__Kind kind)
{
	switch (kind) {
	case RPMAD__ADMIN_QUERY__KIND__STATUS:
		return "status";
	case RPMAD__ADMIN_QUERY__KIND__CLIENTS:
		return "clients";
	case RPMAD__ADMIN_QUERY__KIND__CONNECTIONS:
		return "connections";
	case RPMAD__ADMIN_QUERY__KIND__MRS:
		return "mrs";
	case RPMAD__ADMIN_QUERY__KIND__ENDPOINTS:
		return "endpoints";
	case RPMAD__ADMIN_QUERY__KIND__STATS:
		return "stats";
	default:
		return "the query";
	}
}

/* One admin query; on EXIT_OK *resp has an admin body. */
static int
query(struct client *c, Rpmad__AdminQuery *q, Rpmad__Response **resp)
{
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_ADMIN_QUERY;
	req.admin_query = q;
	int ret = call(c, &req, resp);
	if (ret)
		return ret;
	if ((*resp)->error) {
		ret = refused(c, (*resp)->error, kind_name(q->kind),
				ADMIN_HINT);
	} else if ((*resp)->body_case != RPMAD__RESPONSE__BODY_ADMIN) {
		(void) fprintf(stderr, "rpmactl: rpmad answered %s with "
				"something else\n", kind_name(q->kind));
		ret = EXIT_REFUSED;
	} else {
		return EXIT_OK;
	}
	rpmad__response__free_unpacked(*resp, NULL);
	*resp = NULL;
	return ret;
}

int
client_query(struct client *c, Rpmad__AdminQuery__Kind kind,
		Rpmad__Response **resp)
{
	Rpmad__AdminQuery q = RPMAD__ADMIN_QUERY__INIT;
	q.kind = kind;
	return query(c, &q, resp);
}

static size_t
page_items(const Rpmad__AdminReply *r)
{
	return r->n_clients + r->n_connections + r->n_mrs + r->n_endpoints;
}

int
client_list(struct client *c, Rpmad__AdminQuery__Kind kind,
		uint32_t page_limit, client_page_fn *page, void *arg)
{
	Rpmad__AdminCursor after = RPMAD__ADMIN_CURSOR__INIT;
	Rpmad__AdminQuery q = RPMAD__ADMIN_QUERY__INIT;
	q.kind = kind;
	q.limit = page_limit;
	for (;;) {
		Rpmad__Response *resp;
		int ret = query(c, &q, &resp);
		if (ret)
			return ret;
		const Rpmad__AdminReply *r = resp->admin;
		ret = page(r, arg);
		bool more = r->next != NULL;
		if (more) {
			/* a page that moves nothing would never end */
			if (page_items(r) == 0 || (q.after &&
					r->next->session_id ==
						after.session_id &&
					r->next->object_id ==
						after.object_id)) {
				(void) fprintf(stderr, "rpmactl: rpmad's "
						"listing does not advance\n");
				ret = EXIT_REFUSED;
			}
			after.session_id = r->next->session_id;
			after.object_id = r->next->object_id;
			q.after = &after;
		}
		rpmad__response__free_unpacked(resp, NULL);
		if (ret || !more)
			return ret;
	}
}

int
client_evict(struct client *c, uint32_t pid)
{
	Rpmad__AdminEvict ev = RPMAD__ADMIN_EVICT__INIT;
	ev.pid = pid;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_ADMIN_EVICT;
	req.admin_evict = &ev;
	Rpmad__Response *resp;
	int ret = call(c, &req, &resp);
	if (ret)
		return ret;
	if (resp->error)
		ret = refused(c, resp->error, "evict", ADMIN_HINT);
	rpmad__response__free_unpacked(resp, NULL);
	return ret;
}

int
client_upgrade(struct client *c, uint32_t *pid)
{
	Rpmad__AdminUpgrade up = RPMAD__ADMIN_UPGRADE__INIT;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_ADMIN_UPGRADE;
	req.admin_upgrade = &up;
	Rpmad__Response *resp;
	int ret = call(c, &req, &resp);
	if (ret)
		return ret;
	if (resp->error) {
		ret = refused(c, resp->error, "the upgrade", ADMIN_HINT);
	} else if (resp->body_case != RPMAD__RESPONSE__BODY_ADMIN ||
			resp->admin->upgrade_pid == 0) {
		(void) fprintf(stderr, "rpmactl: rpmad at %s started an upgrade "
				"but did not say its pid\n", c->path);
		ret = EXIT_REFUSED;
	} else {
		*pid = resp->admin->upgrade_pid;
	}
	rpmad__response__free_unpacked(resp, NULL);
	return ret;
}
