// SPDX-License-Identifier: BSD-3-Clause
/*
 * tenant.c -- per-user accounting, limits, network rules and log shares
 *
 * What a user holds is counted where its clients' objects come and go
 * (struct user_held, client.h: the registry counts by kind, the objects
 * the rest), so admitting a request reads a few counters whatever the
 * number of clients: 15,000 idle sessions of one user cost another user's
 * requests nothing.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <uthash.h>

#include "clients/call.h"
#include "clients/client.h"
#include "clients/tenant.h"
#include "core/daemon.h"
#include "core/registry.h"
#include "librpma.h"
#include "log/log.h"
#include "log/ratelimit.h"
#include "log/remote_log.h"
#include "loop/loop.h"

/* users without sessions are kept (their log share lives on) up to this */
#define IDLE_TENANTS_MAX 256

/*
 * Sessions past a user's max_descriptors that stay until their first
 * request, to be told why; any more are closed at once, so that a user
 * cannot hold more of rpmad's descriptors by being refused.
 */
#define SESSIONS_TOLD_MAX 8

struct tenant {
	uid_t uid;
	struct user_held held;		/* what its clients hold together */
	struct ratelimit log_rl;	/* the log lines its clients cause */
	pid_t last_pid;			/* whose line was held back last */
	struct loop_timer report;	/* says what was held back */
	uint64_t refused_limits, refused_connect, refused_listen;
	uint64_t log_suppressed;	/* in all */
	struct fairq_tenant fq;		/* its share of the data path */
	UT_hash_handle hh;
};

static struct tenant *tenants;
static unsigned n_idle;
static struct tenant_totals totals;

static void
say_held_back(const struct tenant *t, uint64_t n)
{
	if (t->last_pid)
		log_notice("suppressed %" PRIu64 " messages from uid %u (last "
				"from client pid %d)", n, (unsigned)t->uid,
				(int)t->last_pid);
	else
		log_notice("suppressed %" PRIu64 " messages from uid %u", n,
				(unsigned)t->uid);
}

static void
report_held_back(struct tenant *t)
{
	uint64_t n = ratelimit_drain(&t->log_rl);
	if (n)
		say_held_back(t, n);
}

static void
report_timer_fn(struct loop_timer *timer)
{
	report_held_back(timer->arg);
}

static void
tenant_free(struct tenant *t)
{
	report_held_back(t);
	if (rpmad.loop)
		loop_timer_cancel(rpmad.loop, &t->report);
	fairq_tenant_fini(&t->fq);
	HASH_DEL(tenants, t);
	free(t);
}

/* Frees idle users whose log window has passed. */
static void
sweep_idle(void)
{
	uint64_t now = loop_now_ns();
	struct tenant *t, *tmp;
	HASH_ITER(hh, tenants, t, tmp) {
		if (t->held.sessions == 0 && now - t->log_rl.window_start_ns >=
				RATELIMIT_WINDOW_NS) {
			tenant_free(t);
			n_idle--;
		}
	}
}

struct tenant *
tenant_join(uid_t uid)
{
	struct tenant *t;
	HASH_FIND(hh, tenants, &uid, sizeof(uid), t);
	if (t) {
		if (t->held.sessions++ == 0)
			n_idle--;
		return t;
	}
	if (n_idle >= IDLE_TENANTS_MAX)
		sweep_idle();
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->uid = uid;
	t->held.sessions = 1;
	t->report.fn = report_timer_fn;
	t->report.arg = t;
	fairq_tenant_init(&t->fq, FAIRQ_WEIGHT_DEFAULT);
	HASH_ADD(hh, tenants, uid, sizeof(t->uid), t);
	return t;
}

void
tenant_leave(struct tenant *t)
{
	if (t && --t->held.sessions == 0)
		n_idle++;
}

struct user_held *
tenant_held(struct tenant *t)
{
	return &t->held;
}

struct fairq_tenant *
tenant_fairq(const struct client *c)
{
	if (c->tenant == NULL)
		return NULL;
	/* as rpmad.conf says now: a reload counts from the next connection */
	struct limits l;
	tenant_limits(c, &l);
	fairq_tenant_set_weight(&c->tenant->fq, l.weight);
	fairq_tenant_set_rate(&c->tenant->fq, l.max_bandwidth);
	return &c->tenant->fq;
}

const struct fairq_tenant *
tenant_share(const struct client *c)
{
	return c->tenant ? &c->tenant->fq : NULL;
}

void
tenant_data_use(const struct client *c, struct tenant_data *out)
{
	*out = (struct tenant_data){ 0 };
	if (c->tenant == NULL)
		return;
	out->weight = c->tenant->fq.weight;
	out->use = c->tenant->fq.use;
	struct tenant *t, *tmp;
	HASH_ITER(hh, tenants, t, tmp)
		out->all_bytes += t->fq.use.bytes;
}

void
tenant_destroy_all(void)
{
	struct tenant *t, *tmp;
	HASH_ITER(hh, tenants, t, tmp)
		tenant_free(t);
	n_idle = 0;
}

void
tenant_totals(struct tenant_totals *out)
{
	*out = totals;
}

void
tenant_totals_of(const struct client *who, struct tenant_totals *out)
{
	memset(out, 0, sizeof(*out));
	const struct tenant *t = who->tenant;
	if (t == NULL)
		return;
	out->refused_limits = t->refused_limits;
	out->refused_connect = t->refused_connect;
	out->refused_listen = t->refused_listen;
	out->log_suppressed = t->log_suppressed;
}

/* ------------------------------------------------------------ memlock */

uint64_t
tenant_read_memlock(pid_t pid)
{
	char path[64], line[256];
	uint64_t memlock = 0;

	(void) snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (f) {
		unsigned long long caps = 0;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "CapEff: %llx", &caps) == 1)
				break;
		}
		(void) fclose(f);
		/* CAP_IPC_LOCK (14): its own ibv_reg_mr would be unlimited */
		if (caps & (1ULL << 14))
			return UINT64_MAX;
	}

	(void) snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char soft[32];
		if (sscanf(line, "Max locked memory %31s", soft) != 1)
			continue;
		if (strcmp(soft, "unlimited") == 0)
			memlock = UINT64_MAX;
		else
			memlock = strtoull(soft, NULL, 10);
		break;
	}
	(void) fclose(f);
	return memlock;
}

/* ------------------------------------------------------------ limits */

static bool
section_applies(const struct config_section *sec, const struct client *who)
{
	if (!sec->group)
		return sec->id == who->uid;
	for (unsigned i = 0; i < who->n_groups; i++) {
		if (who->groups[i] == sec->id)
			return true;
	}
	return false;
}

/*
 * Every matching section in the order of the file, [group] sections
 * before [user] sections: a user's own section wins. `visit` gets each.
 */
#define FOR_EACH_SECTION(who, sec) \
	for (int pass_ = 0; pass_ < 2; pass_++) \
		for (unsigned i_ = 0; i_ < rpmad.cfg.n_sections; i_++) \
			if (((sec) = &rpmad.cfg.sections[i_]), \
					(sec)->group == (pass_ == 0) && \
					section_applies((sec), (who)))

void
tenant_limits(const struct client *who, struct limits *out)
{
	*out = rpmad.cfg.limits;
	const struct config_section *sec;
	FOR_EACH_SECTION(who, sec) {
		const struct limits *l = &sec->limits;
		if (sec->limits_set & LIMIT_SET_CONNECTIONS)
			out->max_connections = l->max_connections;
		if (sec->limits_set & LIMIT_SET_ENDPOINTS)
			out->max_endpoints = l->max_endpoints;
		if (sec->limits_set & LIMIT_SET_PENDING)
			out->max_pending_requests = l->max_pending_requests;
		if (sec->limits_set & LIMIT_SET_DESCRIPTORS)
			out->max_descriptors = l->max_descriptors;
		if (sec->limits_set & LIMIT_SET_BYTES)
			out->max_registered_bytes = l->max_registered_bytes;
		if (sec->limits_set & LIMIT_SET_WEIGHT)
			out->weight = l->weight;
		if (sec->limits_set & LIMIT_SET_BANDWIDTH)
			out->max_bandwidth = l->max_bandwidth;
	}
}

/* Where a limit came from: "[user x]", "[group y]" or "rpmad.conf". */
static void
limit_source(const struct client *who, unsigned bit, char *buf, size_t len)
{
	(void) snprintf(buf, len, "the default or rpmad.conf");
	const struct config_section *sec;
	FOR_EACH_SECTION(who, sec) {
		if (sec->limits_set & bit)
			(void) snprintf(buf, len, "[%s %s]",
					sec->group ? "group" : "user",
					sec->name);
	}
}

void
tenant_usage(const struct client *who, struct tenant_usage *u)
{
	memset(u, 0, sizeof(*u));
	const struct user_held *h = who->user;
	if (h == NULL)
		return;
	u->sessions = h->sessions;
	u->conns = h->objs.n[OBJ_CONN];
	u->eps = h->objs.n[OBJ_EP];
	u->pending = h->conn_reqs;
	u->registered_bytes = h->pinned_bytes;
	/* registrations hold only the page-cache files' write descriptors:
	 * rpmad closes the others a client passes once it has mapped them */
	u->descriptors = h->sessions * TENANT_FDS_SESSION +
		u->conns * TENANT_FDS_CONN + u->eps * TENANT_FDS_EP +
		h->mr_fds;
}

/* One refusal, in the totals and (its counter of the same kind) the user's. */
static void
count_refusal(struct client *who, uint64_t *total)
{
	(*total)++;
	struct tenant *t = who->tenant;
	if (t == NULL)
		return;
	if (total == &totals.refused_limits)
		t->refused_limits++;
	else if (total == &totals.refused_listen)
		t->refused_listen++;
	else
		t->refused_connect++;
}

/* rpmad-wide refusals by setting, for rpmactl stats and metrics */
static void
count_setting(const char *key)
{
	struct refusals *r = &rpmad.stats.refused;
	if (strcmp(key, "max_connections") == 0)
		r->max_connections++;
	else if (strcmp(key, "max_endpoints") == 0)
		r->max_endpoints++;
	else if (strcmp(key, "max_registered_bytes") == 0)
		r->max_registered_bytes++;
	else if (strcmp(key, "max_descriptors") == 0)
		r->max_descriptors++;
}

/* Fails the request for the limit `key` (its LIMIT_SET_* bit `bit`). */
static void
refuse(struct call *call, unsigned bit, const char *key, const char *what,
		uint64_t have, uint64_t limit)
{
	struct client *who = call->client;
	char source[96];
	limit_source(who, bit, source, sizeof(source));
	call_fail(call, RPMA_E_NOMEM, 0,
			"uid %u has %" PRIu64 " %s (all its "
			"clients together), its limit: %s = %" PRIu64
			" from %s; "
			"an operator raises it in rpmad.conf (%s under [user %u], "
			"or for everyone)",
			(unsigned) who->uid, have, what, key, limit, source,
			key, (unsigned) who->uid);
	count_refusal(who, &totals.refused_limits);
	count_setting(key);
	tenant_log(who, LOG_NOTICE, "session %s: refused: %s", who->name,
			call->msg);
}

/* whether `have` + `more` goes past a limit (0: none) */
static bool
over(uint64_t have, uint64_t more, uint64_t limit)
{
	return limit && (have > limit || more > limit - have);
}

static int
check_fds(struct call *call, const struct limits *l,
		const struct tenant_usage *u, unsigned more)
{
	if (!over(u->descriptors, more, l->max_descriptors))
		return 0;
	refuse(call, LIMIT_SET_DESCRIPTORS, "max_descriptors",
			"descriptors in rpmad", u->descriptors,
			l->max_descriptors);
	return -ENOMEM;
}

int
tenant_admit_session(struct client *who, char *why, size_t len)
{
	struct limits l;
	struct tenant_usage u;
	tenant_limits(who, &l);
	tenant_usage(who, &u);
	/* this session counts already */
	if (l.max_descriptors == 0 || u.descriptors <= l.max_descriptors)
		return 0;
	char source[96];
	limit_source(who, LIMIT_SET_DESCRIPTORS, source, sizeof(source));
	(void) snprintf(why, len, "uid %u has %" PRIu32 " descriptors in "
			"rpmad with this session (all its clients together: "
			"%" PRIu32 " sessions), its limit: max_descriptors = "
			"%" PRIu32 " from %s; an operator raises it in "
			"rpmad.conf (max_descriptors under [user %u], or for "
			"everyone)", (unsigned)who->uid, u.descriptors,
			u.sessions, l.max_descriptors, source,
			(unsigned)who->uid);
	count_refusal(who, &totals.refused_limits);
	count_setting("max_descriptors");
	bool told = u.descriptors - l.max_descriptors <=
		SESSIONS_TOLD_MAX * TENANT_FDS_SESSION;
	tenant_log(who, LOG_NOTICE, "session %s: refused%s: %s", who->name,
			told ? "" : " and closed", why);
	return told ? -ENOMEM : -EMFILE;
}

int
tenant_admit_conn(struct call *call)
{
	struct limits l;
	struct tenant_usage u;
	tenant_limits(call->client, &l);
	tenant_usage(call->client, &u);
	if (over(u.conns, 1, l.max_connections)) {
		refuse(call, LIMIT_SET_CONNECTIONS, "max_connections",
				"connections", u.conns, l.max_connections);
		return -ENOMEM;
	}
	/* every new connection starts as a request */
	if (over(u.pending, 1, l.max_pending_requests)) {
		refuse(call, LIMIT_SET_PENDING, "max_pending_requests",
				"connection requests not connected yet",
				u.pending, l.max_pending_requests);
		return -ENOMEM;
	}
	return check_fds(call, &l, &u, TENANT_FDS_CONN);
}

int
tenant_admit_ep(struct call *call)
{
	struct limits l;
	struct tenant_usage u;
	tenant_limits(call->client, &l);
	tenant_usage(call->client, &u);
	if (over(u.eps, 1, l.max_endpoints)) {
		refuse(call, LIMIT_SET_ENDPOINTS, "max_endpoints", "endpoints",
				u.eps, l.max_endpoints);
		return -ENOMEM;
	}
	return check_fds(call, &l, &u, TENANT_FDS_EP);
}

bool
tenant_fds_allow(const struct client *c, unsigned more)
{
	struct limits l;
	struct tenant_usage u;
	tenant_limits(c, &l);
	tenant_usage(c, &u);
	return !over(u.descriptors, more, l.max_descriptors);
}

int
tenant_admit_mr(struct call *call, uint64_t bytes)
{
	struct client *who = call->client;
	struct limits l;
	struct tenant_usage u;
	tenant_limits(who, &l);
	tenant_usage(who, &u);
	uint64_t limit = l.max_registered_bytes;
	bool memlock = limit == LIMIT_MEMLOCK;
	if (memlock)
		limit = who->memlock;
	if (memlock && limit == UINT64_MAX)
		limit = 0;	/* unlimited, or CAP_IPC_LOCK */
	if (memlock && who->memlock == 0) {
		call_fail(call, RPMA_E_NOMEM, 0,
				"registering %" PRIu64 " bytes: "
				"uid %u may register no memory: "
				"max_registered_bytes = memlock, and this "
				"process's RLIMIT_MEMLOCK is 0 (or unknown); "
				"raise it (ulimit -l, LimitMEMLOCK=), or an "
				"operator sets max_registered_bytes under "
				"[user %u] in rpmad.conf",
				bytes, (unsigned) who->uid,
				(unsigned) who->uid);
		count_refusal(who, &totals.refused_limits);
		count_setting("max_registered_bytes");
		tenant_log(who, LOG_NOTICE, "session %s: refused: %s",
				who->name, call->msg);
		return -ENOMEM;
	}
	if (over(u.registered_bytes, bytes, limit)) {
		char source[96];
		limit_source(who, LIMIT_SET_BYTES, source, sizeof(source));
		if (memlock)
			call_fail(call, RPMA_E_NOMEM, 0,
					"registering %" PRIu64
					" more bytes would bring uid %u (all "
					"its clients together) to %" PRIu64
					", over this process's RLIMIT_MEMLOCK "
					"of %" PRIu64 " (max_registered_bytes "
					"= memlock, from %s); raise the "
					"process's limit (ulimit -l, "
					"LimitMEMLOCK=), or an operator sets "
					"max_registered_bytes under [user %u] "
					"in rpmad.conf",
					bytes, (unsigned) who->uid,
					u.registered_bytes + bytes, limit,
					source, (unsigned) who->uid);
		else
			call_fail(call, RPMA_E_NOMEM, 0,
					"registering %" PRIu64
					" more bytes would bring uid %u (all "
					"its clients together) to %" PRIu64
					", over its limit: max_registered_"
					"bytes = %" PRIu64 " from %s; an "
					"operator raises it in rpmad.conf "
					"(max_registered_bytes under [user "
					"%u], or for everyone)",
					bytes, (unsigned) who->uid,
					u.registered_bytes + bytes, limit,
					source, (unsigned) who->uid);
		count_refusal(who, &totals.refused_limits);
		count_setting("max_registered_bytes");
		tenant_log(who, LOG_NOTICE, "session %s: refused: %s",
				who->name, call->msg);
		return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------ networks */

static const struct net_rules *
rules_for(const struct client *who, bool listen, char *source, size_t len)
{
	const struct net_rules *r = listen ? &rpmad.cfg.allow_listen :
		&rpmad.cfg.allow_connect;
	(void) snprintf(source, len, "rpmad.conf");
	const struct config_section *sec;
	FOR_EACH_SECTION(who, sec) {
		const struct net_rules *own = listen ? &sec->allow_listen :
			&sec->allow_connect;
		if (own->set) {
			r = own;
			(void) snprintf(source, len, "[%s %s]",
					sec->group ? "group" : "user",
					sec->name);
		}
	}
	return r;
}

static void
addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;
		(void) inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		(void) snprintf(buf, len, "%s:%u", host, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		(void) inet_ntop(AF_INET6, &in6->sin6_addr, host,
				sizeof(host));
		port = ntohs(in6->sin6_port);
		(void) snprintf(buf, len, "[%s]:%u", host, port);
	} else {
		(void) snprintf(buf, len, "(family %d)", sa->sa_family);
	}
}

static int
check_net(struct call *call, const struct sockaddr *sa, bool listen)
{
	struct client *who = call->client;
	char source[96];
	const struct net_rules *r = rules_for(who, listen, source,
			sizeof(source));
	if (net_rules_allow(r, sa))
		return 0;
	const char *key = listen ? "allow_listen" : "allow_connect";
	char where[96];
	addr_text(sa, where, sizeof(where));
	call_fail(call, RPMA_E_PROVIDER, EACCES,
			"uid %u may not %s %s (%s of "
			"%s); an operator allows it in rpmad.conf (%s under "
			"[user %u], or for everyone)",
			(unsigned) who->uid,
			listen ? "listen on" : "connect to", where, key, source,
			key, (unsigned) who->uid);
	count_refusal(who, listen ? &totals.refused_listen :
			&totals.refused_connect);
	tenant_log(who, LOG_NOTICE, "session %s: refused: %s", who->name,
			call->msg);
	return -EACCES;
}

int
tenant_check_connect(struct call *call, const struct sockaddr *sa)
{
	return check_net(call, sa, false);
}

int
tenant_check_listen(struct call *call, const struct sockaddr *sa)
{
	return check_net(call, sa, true);
}

/* ------------------------------------------------------------ log */

static void vlog_tenant(struct tenant *t, pid_t pid, int level,
		const char *text);

void
tenant_log(struct client *who, int level, const char *fmt, ...)
{
	char text[LOG_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	bool logged = log_text(text, sizeof(text), level, fmt, ap);
	va_end(ap);
	if (logged)
		vlog_tenant(who->tenant, who->pid, level, text);
}

/*
 * A line an origin caused, "(from <origin>)" after it when `from`: to its
 * user's share, or its host's.
 */
static void vlog_origin(const struct origin *o, int level, bool from,
		const char *fmt, va_list ap)
		__attribute__((format(printf, 4, 0)));

static void
vlog_origin(const struct origin *o, int level, bool from, const char *fmt,
		va_list ap)
{
	char text[LOG_LINE_MAX];
	if (!log_text(text, sizeof(text), level, fmt, ap))
		return;
	if (from) {
		char who[ORIGIN_NAME_MAX];
		origin_name(o, who, sizeof(who));
		size_t n = strlen(text);
		(void) snprintf(text + n, sizeof(text) - n, " (from %s)", who);
	}
	if (o->kind != ORIGIN_USER) {
		remote_log_origin(o, level, "%s", text);
		return;
	}
	uid_t uid = (uid_t)o->uid;
	struct tenant *t;
	HASH_FIND(hh, tenants, &uid, sizeof(uid), t);
	vlog_tenant(t, 0, level, text);
}

void
tenant_log_origin(const struct origin *o, int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog_origin(o, level, false, fmt, ap);
	va_end(ap);
}

void
tenant_vlog_from(const struct origin *o, int level, const char *fmt, va_list ap)
{
	vlog_origin(o, level, true, fmt, ap);
}

/* One line of a tenant's share (t NULL: no share; pid 0: not a client's). */
static void
vlog_tenant(struct tenant *t, pid_t pid, int level, const char *text)
{
	if (t == NULL) {
		log_msg(level, "%s", text);
		return;
	}
	uint64_t now = loop_now_ns(), held;
	bool ok = ratelimit_take(&t->log_rl, now, &held);
	if (held)
		say_held_back(t, held);
	if (ok) {
		log_msg(level, "%s", text);
		return;
	}
	if (pid)
		t->last_pid = pid;
	t->log_suppressed++;
	totals.log_suppressed++;
	/* the count is said when the window ends, even if all goes quiet */
	if (!t->report.armed && rpmad.loop)
		loop_timer_arm(rpmad.loop, &t->report, t->log_rl.window_start_ns
				+ RATELIMIT_WINDOW_NS - now);
}
