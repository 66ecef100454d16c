// SPDX-License-Identifier: BSD-3-Clause
/*
 * ops_device.c -- a librpma application for the tests of whom the library
 * trusts (test_trust): it asks for the device of 127.0.0.1 once, prints
 * every message the library logs ("log: ..."), then "result N" (the
 * librpma return value), and exits. Run with file capabilities by another
 * user, it is the privileged program of issue 19.
 */

#include <librpma.h>
#include <stdarg.h>
#include <stdio.h>

static void print_log(enum rpma_log_level level, const char *file,
		const int line, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void
print_log(enum rpma_log_level level, const char *file, const int line,
		const char *func, const char *fmt, ...)
{
	(void) level;
	(void) file;
	(void) line;
	(void) func;
	va_list ap;
	va_start(ap, fmt);
	(void) fputs("log: ", stdout);
	(void) vprintf(fmt, ap);
	(void) putchar('\n');
	va_end(ap);
}

int
main(void)
{
	if (rpma_log_set_function(print_log) ||
			rpma_log_set_threshold(RPMA_LOG_THRESHOLD,
				RPMA_LOG_LEVEL_DEBUG))
		return 2;
	struct ibv_context *dev;
	int ret = rpma_utils_get_ibv_context("127.0.0.1",
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev);
	(void) printf("result %d\n", ret);
	return 0;
}
