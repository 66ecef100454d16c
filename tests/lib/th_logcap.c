// SPDX-License-Identifier: BSD-3-Clause
/*
 * th_logcap.c -- what librpmaclient logs, kept (see th_logcap.h)
 */

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "th_logcap.h"

#define LOG_MAX 256

char th_logged[TH_LOGGED_SIZE];

/* the library may log from threads of its own */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct th_log_entry entries[LOG_MAX];
static unsigned n_entries;

static void capture(enum rpma_log_level level, const char *file, const int line,
		const char *func, const char *fmt, ...)
		__attribute__((format(printf, 5, 6)));

static void
capture(enum rpma_log_level level, const char *file, const int line,
		const char *func, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	pthread_mutex_lock(&lock);
	size_t used = strlen(th_logged);
	(void) snprintf(th_logged + used, sizeof(th_logged) - used, "%s\n",
			msg);
	if (n_entries < LOG_MAX) {
		struct th_log_entry *e = &entries[n_entries++];
		e->level = level;
		(void) snprintf(e->file, sizeof(e->file), "%s",
				file ? file : "");
		e->line = line;
		(void) snprintf(e->func, sizeof(e->func), "%s",
				func ? func : "");
		/* the text keeps all of it; an entry its start */
		memcpy(e->msg, msg, sizeof(e->msg) - 1);
		e->msg[sizeof(e->msg) - 1] = '\0';
	}
	pthread_mutex_unlock(&lock);
}

int
th_log_capture(void)
{
	th_log_clear();
	return rpma_log_set_function(capture);
}

void
th_log_clear(void)
{
	pthread_mutex_lock(&lock);
	th_logged[0] = '\0';
	n_entries = 0;
	pthread_mutex_unlock(&lock);
}

unsigned
th_log_count(void)
{
	pthread_mutex_lock(&lock);
	unsigned n = n_entries;
	pthread_mutex_unlock(&lock);
	return n;
}

const struct th_log_entry *
th_log_entry(unsigned i)
{
	return i < th_log_count() ? &entries[i] : NULL;
}

const struct th_log_entry *
th_log_find(const char *needle)
{
	unsigned n = th_log_count();
	for (unsigned i = 0; i < n; i++) {
		if (strstr(entries[i].msg, needle) != NULL)
			return &entries[i];
	}
	return NULL;
}

void
th_log_daemon_start(struct test_daemon *d, const char *config)
{
	ck_assert_int_eq(test_daemon_start_cfg(d, config), 0);
	ck_assert_int_eq(th_log_capture(), 0);
}
