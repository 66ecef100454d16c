// SPDX-License-Identifier: BSD-3-Clause
/*
 * ops_log.c -- what librpmaclient logs in a test process, kept for the
 * test to look at (see ops_util.h); only tests linked with the library
 * use it
 */

#include <librpma.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ops_util.h"

char ops_logged[OPS_LOGGED_SIZE];

static void capture(enum rpma_log_level level, const char *file,
		const int line, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void
capture(enum rpma_log_level level, const char *file, const int line,
		const char *func, const char *fmt, ...)
{
	(void) level;
	(void) file;
	(void) line;
	(void) func;
	size_t used = strlen(ops_logged);
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(ops_logged + used, sizeof(ops_logged) - used, fmt,
			ap);
	va_end(ap);
	used = strlen(ops_logged);
	if (used + 1 < sizeof(ops_logged))
		strcat(ops_logged, "\n");
}

int
ops_log_capture(void)
{
	ops_logged[0] = '\0';
	return rpma_log_set_function(capture);
}
