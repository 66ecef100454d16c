// SPDX-License-Identifier: BSD-3-Clause
/*
 * remote_log.c -- log lines of remote hosts, rate-limited per host
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <uthash.h>

#include "log/log.h"
#include "log/remote_log.h"
#include "log/rlog.h"
#include "loop/loop.h"

struct host_log {
	struct origin key;
	struct rlog log;
	UT_hash_handle hh;
};

static struct host_log *hosts;
static unsigned n_hosts;
static struct rlog others;	/* hosts beyond REMOTE_LOG_HOSTS, unknown */
static uint64_t suppressed_gone;	/* of hosts forgotten */

static void
forget(struct host_log *h)
{
	rlog_fini(&h->log);
	suppressed_gone += h->log.suppressed;
	HASH_DEL(hosts, h);
	free(h);
	n_hosts--;
}

/* Forgets the hosts that hold nothing back and have no window under way. */
static void
sweep(void)
{
	uint64_t now = loop_now_ns();
	struct host_log *h, *tmp;
	HASH_ITER(hh, hosts, h, tmp) {
		if (rlog_quiet(&h->log, now))
			forget(h);
	}
}

static struct rlog *
limiter_of(const struct origin *host)
{
	if (others.about[0] == '\0')
		rlog_init(&others, "caused by other remote hosts");
	if (host == NULL || host->kind != ORIGIN_HOST)
		return &others;
	struct host_log *h;
	HASH_FIND(hh, hosts, host, sizeof(*host), h);
	if (h)
		return &h->log;
	if (n_hosts >= REMOTE_LOG_HOSTS)
		sweep();
	if (n_hosts >= REMOTE_LOG_HOSTS || (h = malloc(sizeof(*h))) == NULL)
		return &others;
	h->key = *host;
	char name[ORIGIN_NAME_MAX], about[RLOG_ABOUT_MAX];
	origin_name(host, name, sizeof(name));
	(void) snprintf(about, sizeof(about), "caused by %s", name);
	rlog_init(&h->log, about);
	HASH_ADD(hh, hosts, key, sizeof(h->key), h);
	n_hosts++;
	return &h->log;
}

static void
vlog(const struct origin *host, int level, const char *fmt, va_list ap)
{
	if (level > log_max_level)
		return;
	char text[1024];
	(void) vsnprintf(text, sizeof(text), fmt, ap);
	(void) rlog_msg(limiter_of(host), level, "%s", text);
}

void
remote_log(const struct sockaddr_storage *from, int level, const char *fmt,
		...)
{
	struct origin host;
	if (from)
		origin_of_addr(from, &host);
	va_list ap;
	va_start(ap, fmt);
	vlog(from ? &host : NULL, level, fmt, ap);
	va_end(ap);
}

void
remote_log_origin(const struct origin *host, int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(host, level, fmt, ap);
	va_end(ap);
}

uint64_t
remote_log_suppressed(void)
{
	uint64_t n = suppressed_gone + others.suppressed;
	struct host_log *h, *tmp;
	HASH_ITER(hh, hosts, h, tmp)
		n += h->log.suppressed;
	return n;
}

void
remote_log_fini(void)
{
	struct host_log *h, *tmp;
	HASH_ITER(hh, hosts, h, tmp)
		forget(h);
	if (others.about[0] != '\0')
		rlog_fini(&others);
}
