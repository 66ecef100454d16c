// SPDX-License-Identifier: BSD-3-Clause
/*
 * log.c -- rpmad's log lines. Under systemd (JOURNAL_STREAM set) each line
 * starts with the "<N>" priority prefix journald parses; otherwise with a
 * timestamp and the level's name.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

int log_max_level = LOG_NOTICE;
static bool journal;

static const char *const names[] = {
	[LOG_EMERG] = "emerg", [LOG_ALERT] = "alert", [LOG_CRIT] = "crit",
	[LOG_ERR] = "err", [LOG_WARNING] = "warning",
	[LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

int
log_level_parse(const char *name)
{
	for (int i = LOG_ERR; i <= LOG_DEBUG; i++) {
		if (strcmp(name, names[i]) == 0)
			return i;
	}
	if (strcmp(name, "error") == 0)
		return LOG_ERR;
	return -1;
}

const char *
log_level_name(int level)
{
	if (level < LOG_EMERG || level > LOG_DEBUG)
		return "?";
	return names[level];
}

void
log_init(void)
{
	journal = getenv("JOURNAL_STREAM") != NULL;
}

void
log_msg(int level, const char *fmt, ...)
{
	if (level > log_max_level)
		return;

	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);

	if (journal) {
		(void) fprintf(stderr, "<%d>%s\n", level, text);
		return;
	}
	struct timespec ts;
	struct tm tm;
	char stamp[32] = "";
	(void) clock_gettime(CLOCK_REALTIME, &ts);
	if (localtime_r(&ts.tv_sec, &tm))
		(void) strftime(stamp, sizeof(stamp), "%F %T", &tm);
	(void) fprintf(stderr, "%s.%03ld rpmad[%s] %s\n", stamp,
			ts.tv_nsec / 1000000, log_level_name(level), text);
}
