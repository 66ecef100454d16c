// SPDX-License-Identifier: BSD-3-Clause
/*
 * session.c -- client sessions: accepting, identifying (SO_PEERCRED),
 * reading requests, and releasing everything a client owned when it goes
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utlist.h>

#include "clients/addrspace.h"
#include "clients/client.h"
#include "clients/landing.h"
#include "clients/proc_ident.h"
#include "clients/tenant.h"
#include "control/session.h"
#include "control/vouch.h"
#include "core/daemon.h"
#include "core/fdreserve.h"
#include "core/netns.h"
#include "core/registry.h"
#include "librpma.h"
#include "log/log.h"
#include "loop/loop.h"
#include "objects/mr_holes.h"

/* Requests handled per wake-up of one session before others get a turn. */
#define REQUESTS_PER_TURN 16

/*
 * How long a new session may take to say hello (the library and rpmactl
 * say it at once). A connection that says nothing holds a descriptor of
 * rpmad's, so it must not hold it for ever.
 */
#define HELLO_TIMEOUT_NS (10 * 1000 * 1000 * 1000ull)

/* The fields are this file's: other files have the functions of session.h. */
struct session {
	struct client client;	/* who it is and what it holds */
	int fd;
	struct loop_watch watch;
	struct loop_timer hello_timer;	/* armed until its hello */
	char *refusal;		/* over its user's limits: said at hello */
	bool hello;
	bool allowed;
	bool admin;
	bool closing;
	bool dispatching;

	struct session *prev, *next;
};

/*
 * An informational string from the client, cut to fit and with anything
 * but printable ASCII replaced: it ends up in rpmactl's tables and JSON.
 */
static void
copy_printable(char *dst, size_t size, const char *src)
{
	size_t n = 0;
	for (; src && src[n] && n + 1 < size; n++)
		dst[n] = src[n] >= 0x20 && src[n] < 0x7f ? src[n] : '?';
	dst[n] = '\0';
}

static uint64_t next_session_id = 1;

/* every session, oldest first */
static struct session *sessions;

/* the dispatcher above this file, handed down by main.c */
static session_packet_fn *packet_handler;

void
session_set_handler(session_packet_fn *fn)
{
	packet_handler = fn;
}

/* The session a request's client speaks through (every client has one). */
static struct session *
session_of(struct client *c)
{
	return (struct session *)((char *)c - offsetof(struct session,
			client));
}

struct client *
session_client(struct session *s)
{
	return &s->client;
}

const char *
session_name(const struct session *s)
{
	return s->client.name;
}

int
session_fd(const struct session *s)
{
	return s->fd;
}

bool
session_said_hello(const struct session *s)
{
	return s->hello;
}

bool
session_is_admin(const struct session *s)
{
	return s->admin;
}

static void
session_add(struct session *s)
{
	registry_owner_add(&s->client.owner, &s->client.user->objs);
	DL_APPEND(sessions, s);
}

struct session *
session_first(void)
{
	return sessions;
}

struct session *
session_next(const struct session *s)
{
	return s->next;
}

struct session *
session_find_pid(pid_t pid)
{
	struct session *s;
	DL_FOREACH(sessions, s) {
		if (s->client.pid == pid && !s->closing)
			return s;
	}
	return NULL;
}

static bool
id_in(unsigned id, const unsigned *list, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (list[i] == id)
			return true;
	}
	return false;
}

/*
 * The groups of the client: its primary group plus the supplementary groups
 * the kernel recorded when it connected (SO_PEERGROUPS). Those are what the
 * process really had, also for users without a passwd entry here (as in
 * containers); only kernels without SO_PEERGROUPS fall back to the group
 * database.
 */
struct peer_groups {
	gid_t *list;
	unsigned n;
	gid_t small[64];
};

static void
peer_groups_get(int fd, uid_t uid, gid_t gid, struct peer_groups *g)
{
	g->list = g->small;
	g->small[0] = gid;
	g->n = 1;

	socklen_t len = sizeof(g->small) - sizeof(gid_t);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g->small + 1,
			&len) == 0) {
		g->n += len / sizeof(gid_t);
		return;
	}
	if (errno == ERANGE) {
		gid_t *list = malloc(len + sizeof(gid_t));
		if (list && getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, list + 1,
				&len) == 0) {
			list[0] = gid;
			g->list = list;
			g->n = 1 + len / sizeof(gid_t);
			return;
		}
		free(list);
		log_warning("the groups of uid %u are not known: %s",
				(unsigned)uid, strerror(errno));
		return;
	}
	struct passwd *pw = getpwuid(uid);
	int count = (int)(sizeof(g->small) / sizeof(gid_t));
	if (pw && getgrouplist(pw->pw_name, gid, g->small, &count) >= 0)
		g->n = (unsigned)count;
}

static void
peer_groups_free(struct peer_groups *g)
{
	if (g->list != g->small)
		free(g->list);
}

/* Whether one of the client's groups is in `groups`: the first in *gid. */
static bool
member_of_any(const struct peer_groups *g, const gid_t *groups, unsigned n,
		gid_t *gid)
{
	for (unsigned i = 0; i < g->n; i++) {
		if (id_in(g->list[i], groups, n)) {
			*gid = g->list[i];
			return true;
		}
	}
	return false;
}

/*
 * Who the client is allowed to be: root and admin_groups may do anything
 * (and run rpmactl); others may use rpmad when both allow lists are empty,
 * or their uid or one of their groups is listed. Decided once, when the
 * client connects; `why` says how, for the log.
 */
static void
identify(struct session *s, char *why, size_t len)
{
	const struct config *c = &rpmad.cfg;
	struct client *who = &s->client;
	struct peer_groups g;
	peer_groups_get(s->fd, who->uid, who->gid, &g);

	who->n_groups = g.n < CLIENT_MAX_GROUPS ? g.n : CLIENT_MAX_GROUPS;
	memcpy(who->groups, g.list, who->n_groups * sizeof(gid_t));

	gid_t gid;
	s->allowed = true;
	if (who->uid == 0) {
		s->admin = true;
		(void) snprintf(why, len, "admin: root");
	} else if (member_of_any(&g, c->admin_groups, c->n_admin_groups,
			&gid)) {
		s->admin = true;
		(void) snprintf(why, len, "admin: group %u in admin_groups",
				(unsigned)gid);
	} else if (c->n_allow_users == 0 && c->n_allow_groups == 0) {
		(void) snprintf(why, len, "allowed: no allow_users or "
				"allow_groups");
	} else if (id_in(who->uid, c->allow_users, c->n_allow_users)) {
		(void) snprintf(why, len, "allowed: in allow_users");
	} else if (member_of_any(&g, c->allow_groups, c->n_allow_groups,
			&gid)) {
		(void) snprintf(why, len, "allowed: group %u in allow_groups",
				(unsigned)gid);
	} else {
		s->allowed = false;
		(void) snprintf(why, len, "NOT allowed: neither the uid nor a "
				"group is in allow_users/allow_groups");
	}
	peer_groups_free(&g);

	char path[64];
	(void) snprintf(path, sizeof(path), "/proc/%d/comm", (int)who->pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, who->comm, sizeof(who->comm) - 1);
		if (n > 0) {
			who->comm[n] = '\0';
			who->comm[strcspn(who->comm, "\n")] = '\0';
		}
		(void) close(fd);
	}
	(void) snprintf(who->name, sizeof(who->name), "pid %d (%s)",
			(int)who->pid, who->comm[0] ? who->comm : "?");
}

static void session_ready(struct loop_watch *w, uint32_t events);
static void read_requests(struct session *s, int max);

/* A session on fd of a process, its client known by its credentials. */
static struct session *
session_alloc(int fd, pid_t pid, uid_t uid, gid_t gid)
{
	struct session *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	struct client *who = &s->client;
	who->id = next_session_id++;
	s->fd = fd;
	who->pid = pid;
	who->uid = uid;
	who->gid = gid;
	who->netns = -1;
	/* its socket tells its namespace: rpmad's own, or one to hand over */
	uint64_t cookie = netns_cookie(fd);
	who->netns_foreign = !rpmad.cfg.netns_rpmad && cookie &&
		netns_own_cookie() && cookie != netns_own_cookie();
	return s;
}

struct session *
session_new_own(int fd, const char *comm, bool admin, bool hello)
{
	struct session *s = session_alloc(fd, getpid(), getuid(), getgid());
	if (s == NULL)
		return NULL;
	struct client *who = &s->client;
	s->allowed = true;
	s->admin = admin;
	s->hello = hello;
	(void) snprintf(who->comm, sizeof(who->comm), "%s", comm);
	(void) snprintf(who->name, sizeof(who->name), "pid %d (%s)",
			(int)who->pid, who->comm);
	who->memlock = UINT64_MAX;
	who->tenant = tenant_join(who->uid);
	if (who->tenant == NULL) {
		free(s);
		return NULL;
	}
	who->user = tenant_held(who->tenant);
	session_add(s);
	return s;
}

static void
hello_overdue(struct loop_timer *t)
{
	struct session *s = t->arg;
	rpmad.stats.sessions_silent++;
	log_subject_client(s->client.pid, s->client.uid, s->client.comm);
	tenant_log(&s->client, LOG_NOTICE, "session %s: no hello within %llu "
			"s; ending the session", s->client.name,
			HELLO_TIMEOUT_NS / 1000000000ull);
	log_subject_clear();
	session_destroy(s);
}

/* What admit() decided for a new session. */
enum admission {
	ADMITTED,
	TOLD_LATER,	/* refused: told at its hello, when that comes */
	TOLD_NOW,	/* refused: told if its hello is there already, gone */
};

/*
 * Whether the new session may stay: an administrator's always does; one
 * that keeps its user within max_descriptors does. Past the limit a few
 * stay until their hello, which is answered with the reason (s->refusal),
 * and others hear it only if their hello came with the connection (they
 * go at once). When rpmad has no descriptor to spare (`admins_only`),
 * every other session goes at once. Logged and counted here.
 */
static enum admission
admit(struct session *s, bool admins_only)
{
	struct client *who = &s->client;
	if (s->admin)
		return ADMITTED;
	char why[512];
	int ret;
	if (admins_only) {
		rpmad.stats.refused.no_descriptors++;
		(void) snprintf(why, sizeof(why), "rpmad is out of "
				"descriptors: only administrators get in "
				"now; an operator sees who holds them with "
				"rpmactl clients (max_descriptors in "
				"rpmad.conf(5), LimitNOFILE=)");
		tenant_log(who, LOG_WARNING, "session %s: refused: %s",
				who->name, why);
		ret = -EMFILE;
	} else {
		ret = tenant_admit_session(who, why, sizeof(why));
		if (ret == 0)
			return ADMITTED;
	}
	s->refusal = strdup(why);
	return ret == -EMFILE || s->refusal == NULL ? TOLD_NOW : TOLD_LATER;
}

void
session_start(int fd, bool admins_only)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		log_warning("SO_PEERCRED: %s", strerror(errno));
		(void) close(fd);
		return;
	}
	struct session *s = session_alloc(fd, cred.pid, cred.uid, cred.gid);
	if (s == NULL) {
		log_err("out of memory for a new session");
		(void) close(fd);
		return;
	}
	struct client *who = &s->client;
	char why[128];
	identify(s, why, sizeof(why));
	/* it counts against its user's limits from now on */
	who->tenant = tenant_join(who->uid);
	if (who->tenant == NULL) {
		log_err("out of memory for a new session");
		(void) close(fd);
		free(s);
		return;
	}
	who->user = tenant_held(who->tenant);
	log_subject_client(who->pid, who->uid, who->comm);
	enum admission adm = admit(s, admins_only);
	if (adm == ADMITTED)
		who->memlock = tenant_read_memlock(who->pid);
	s->watch.fd = fd;
	s->watch.fn = session_ready;
	s->watch.arg = s;
	session_add(s);
	if (adm == TOLD_NOW) {
		/* a client says hello as it connects: answer one there */
		read_requests(s, 1);
		log_subject_clear();
		session_destroy(s);
		return;
	}
	if (loop_add(rpmad.loop, &s->watch, EPOLLIN | EPOLLRDHUP)) {
		log_subject_clear();
		session_destroy(s);
		return;
	}
	s->hello_timer.fn = hello_overdue;
	s->hello_timer.arg = s;
	loop_timer_arm(rpmad.loop, &s->hello_timer, HELLO_TIMEOUT_NS);
	rpmad.stats.sessions_total++;
	tenant_log(who, LOG_INFO, "session %s: connected (uid %u, gid %u; %s)",
			who->name, (unsigned)who->uid, (unsigned)who->gid, why);
	log_subject_clear();
}

void
session_close_later(struct session *s)
{
	s->closing = true;
}

/*
 * Releases everything of a session. A client that went away leaves its
 * peers a reset (they see the connection lost); at shutdown rpmad closes
 * its connections in order (they see them closed).
 */
static void
session_release(struct session *s, enum obj_release how)
{
	struct client *who = &s->client;
	struct client_counts held;
	client_counts(who, &held);
	/* the lines of its release are about it (an eviction: not rpmactl) */
	log_subject_push();
	log_subject_client(who->pid, who->uid, who->comm);
	tenant_log(who, LOG_INFO, "session %s: ended; releasing %u "
			"connection(s), %u endpoint(s), %u registration(s) "
			"(%llu bytes), %u peer(s)", who->name, held.conns,
			held.eps, held.mrs,
			(unsigned long long)held.pinned_bytes, held.peers);

	/* each kind lets go of its own, in the registry's order */
	registry_owner_release(&who->owner, how);
	if (who->as)
		landing_end(who->as);
	addrspace_put(who->as);
	if (who->netns >= 0)
		(void) close(who->netns);

	loop_del(rpmad.loop, &s->watch);
	loop_timer_cancel(rpmad.loop, &s->hello_timer);
	(void) close(s->fd);
	tenant_leave(who->tenant);
	DL_DELETE(sessions, s);
	free(s->refusal);
	free(s);
	/* its descriptor goes back to the reserve first, if that is short */
	fdreserve_fill();
	log_subject_pop();
}

void
session_destroy(struct session *s)
{
	if (s->dispatching) {
		s->closing = true;
		return;
	}
	session_release(s, OBJ_RELEASE_ABORT);
}

void
session_destroy_all(void)
{
	while (sessions)
		session_release(sessions, OBJ_RELEASE_ORDERLY);
}

bool
session_dispatch(struct session *s, const uint8_t *buf, size_t len,
		int *fds, unsigned nfds)
{
	/* a handler that destroys its own session only marks it closing */
	s->dispatching = true;
	if (packet_handler(s, buf, len, fds, nfds))
		s->closing = true;
	s->dispatching = false;
	return !s->closing;
}

/* Reads and dispatches up to `max` packets waiting on the session. */
static void
read_requests(struct session *s, int max)
{
	uint8_t *buf = malloc(CTL_MAX_MSG);
	if (buf == NULL) {
		log_err("out of memory reading a request");
		return;
	}

	for (int i = 0; i < max && !s->closing; i++) {
		int fds[CTL_MAX_FDS];
		unsigned nfds = 0;
		long n = ctl_recv(s->fd, buf, CTL_MAX_MSG, fds, CTL_MAX_FDS,
				&nfds);
		if (n == -EAGAIN || n == -EWOULDBLOCK)
			break;
		if (n == 0) {
			s->closing = true;
			break;
		}
		if (n < 0) {
			tenant_log(&s->client, LOG_WARNING, "session %s: bad "
					"packet (%s); ending the session",
					s->client.name,
					strerror((int)-n));
			s->closing = true;
			break;
		}
		(void) session_dispatch(s, buf, (size_t)n, fds, nfds);
	}
	free(buf);
}

static void
session_ready(struct loop_watch *w, uint32_t events)
{
	struct session *s = w->arg;
	read_requests(s, REQUESTS_PER_TURN);

	if (!s->closing && (events & (EPOLLHUP | EPOLLERR)) &&
			!(events & EPOLLIN))
		s->closing = true;
	if (s->closing)
		session_destroy(s);
}

/*
 * The descriptors of the client's /proc/self/mem and /proc/self/maps:
 * how rpmad reaches its private memory (addrspace.h). 0, or -1 with the
 * request failed and the session ending.
 */
static int
take_addrspace(struct req_ctx *rc)
{
	struct session *s = session_of(rc->client);
	char err[256];
	if (rc->nfds != 2 || s->client.as != NULL) {
		req_fail(rc, RPMA_E_INVAL, 0, "hello carries the descriptors of "
				"the process's mem and maps, once");
		session_close_later(s);
		return -1;
	}
	/* the caller's own, alive, not a thread's (proc_ident.h) */
	int ret = proc_ident_check(rc->fds[0], rc->fds[1], s->client.pid, err,
			sizeof(err));
	if (ret) {
		(void) close(rc->fds[0]);
		(void) close(rc->fds[1]);
		tenant_log(&s->client, LOG_WARNING, "session %s: refused its "
				"memory: %s", s->client.name, err);
	} else {
		ret = addrspace_new(rc->fds[0], rc->fds[1], &s->client.as,
				err, sizeof(err));
	}
	rc->fds[0] = rc->fds[1] = -1;	/* taken, or closed on failure */
	if (ret) {
		req_fail(rc, RPMA_E_PROVIDER, -ret, "%s", err);
		session_close_later(s);
		return -1;
	}
	return 0;
}

void
session_handle_prove(struct req_ctx *rc)
{
	struct session *s = session_of(rc->client);
	struct client *who = rc->client;
	char err[160];
	if (s->refusal) {
		/* what its hello would hear: it will not come (TOLD_NOW) */
		req_fail(rc, RPMA_E_NOMEM, 0, "%s", s->refusal);
		return;
	}
	if (vouch_creds(who->pid, who->uid, &rc->vouch_as, err,
			sizeof(err))) {
		tenant_log(who, LOG_NOTICE, "session %s: cannot prove rpmad to "
				"it: %s", who->name, err);
		req_fail(rc, RPMA_E_PROVIDER, 0, "rpmad cannot prove itself "
				"to this process: %s", err);
		return;
	}
	rc->vouch = true;
	req_ok(rc);
}

void
session_handle_netns(struct req_ctx *rc)
{
	struct client *who = rc->client;
	char err[160];
	if (who->netns >= 0) {
		req_fail(rc, RPMA_E_INVAL, 0, "the network namespace is handed "
				"over once");
		return;
	}
	/* network_namespace = rpmad: taken as said, not used */
	if (rpmad.cfg.netns_rpmad) {
		req_ok(rc);
		return;
	}
	uint64_t ino;
	int ret = netns_take(rc->fds[0], session_fd(session_of(who)), &ino,
			err, sizeof(err));
	if (ret < 0) {
		tenant_log(who, LOG_NOTICE, "session %s: %s", who->name, err);
		req_fail(rc, RPMA_E_PROVIDER, 0, "%s", err);
		return;
	}
	/* rpmad's own (1): its work needs no thread to join it (-1) */
	if (ret == 0) {
		who->netns = req_take_fd(rc, 0);
		who->netns_ino = ino;
	}
	who->netns_foreign = false;
	req_ok(rc);
}

bool
session_network_refused(struct req_ctx *rc)
{
	if (!rc->client->netns_foreign)
		return false;
	req_fail(rc, RPMA_E_PROVIDER, EPERM, "this process is in a network "
			"namespace other than rpmad's and handed over none: "
			"rpmad does nothing on the network for it (a "
			"librpmaclient older than rpmad?)");
	return true;
}

void
session_handle_hello(struct req_ctx *rc)
{
	struct session *s = session_of(rc->client);
	struct client *who = rc->client;
	const Rpmad__Hello *h = rc->req->hello;

	if (!s->allowed) {
		rpmad.stats.refused.allow_lists++;
		tenant_log(who, LOG_WARNING, "session %s: refused: uid %u (gid "
				"%u) is not in allow_users and has no group of "
				"allow_groups", who->name, (unsigned)who->uid,
				(unsigned)who->gid);
		req_fail(rc, RPMA_E_PROVIDER, EACCES, "uid %u may not use this "
				"rpmad (allow_users/allow_groups)",
				(unsigned)who->uid);
		session_close_later(s);
		return;
	}
	if (s->refusal) {
		/* counted and logged when it connected */
		req_fail(rc, RPMA_E_NOMEM, 0, "%s", s->refusal);
		session_close_later(s);
		return;
	}
	if (h->version != RPMAD__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT) {
		req_fail(rc, RPMA_E_NOSUPP, 0, "protocol version %u is not "
				"spoken here (this rpmad speaks %u)",
				h->version,
				RPMAD__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT);
		session_close_later(s);
		return;
	}
	if (h->fd_count && take_addrspace(rc))
		return;
	if (who->comm[0] == '\0' && h->client_name) {
		(void) snprintf(who->comm, sizeof(who->comm), "%s",
				h->client_name);
		(void) snprintf(who->name, sizeof(who->name), "pid %d (%s)",
				(int)who->pid, who->comm);
	}
	copy_printable(who->library, sizeof(who->library), h->library);
	copy_printable(who->api, sizeof(who->api), h->api);
	s->hello = true;
	loop_timer_cancel(rpmad.loop, &s->hello_timer);

	rpmad__hello_reply__init(&rc->hello);
	rc->hello.version = RPMAD__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT;
	rc->hello.daemon_version = PACKAGE_VERSION;
	rc->hello.reply_timeout_ms = rpmad.cfg.reply_timeout_ms;
	rc->hello.maps_shared_memory = mr_holes_available();
	rc->resp.body_case = RPMAD__RESPONSE__BODY_HELLO;
	rc->resp.hello = &rc->hello;
}
