// SPDX-License-Identifier: BSD-3-Clause
/*
 * log.c -- the librpma logging API: thresholds, the logging function and
 * the default function that writes to syslog and stderr
 */

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log_internal.h"

#define MESSAGE_MAX 1024

static _Atomic int thresholds[RPMA_LOG_THRESHOLD_MAX] = {
	[RPMA_LOG_THRESHOLD] = RPMA_LOG_LEVEL_WARNING,
	[RPMA_LOG_THRESHOLD_AUX] = RPMA_LOG_DISABLED,
};

static void default_log_function(enum rpma_log_level level,
		const char *file_name, const int line_no,
		const char *function_name, const char *message_format, ...)
	__attribute__((format(printf, 5, 6)));

static _Atomic(rpma_log_function *) log_function = default_log_function;

static const char *const level_names[] = {
	[RPMA_LOG_LEVEL_FATAL] = "*FATAL*",
	[RPMA_LOG_LEVEL_ERROR] = "*ERROR*",
	[RPMA_LOG_LEVEL_WARNING] = "*WARNING*",
	[RPMA_LOG_LEVEL_NOTICE] = "*NOTICE*",
	[RPMA_LOG_LEVEL_INFO] = "*INFO*",
	[RPMA_LOG_LEVEL_DEBUG] = "*DEBUG*",
};

static const int syslog_priorities[] = {
	[RPMA_LOG_LEVEL_FATAL] = LOG_CRIT,
	[RPMA_LOG_LEVEL_ERROR] = LOG_ERR,
	[RPMA_LOG_LEVEL_WARNING] = LOG_WARNING,
	[RPMA_LOG_LEVEL_NOTICE] = LOG_NOTICE,
	[RPMA_LOG_LEVEL_INFO] = LOG_INFO,
	[RPMA_LOG_LEVEL_DEBUG] = LOG_DEBUG,
};

static int
level_is_valid(int level)
{
	return level >= RPMA_LOG_DISABLED && level <= RPMA_LOG_LEVEL_DEBUG;
}

/*
 * Whether a syslog daemon listens at /dev/log (_PATH_LOG), where syslog(3)
 * sends. A container has none as a rule, nor has a host without a
 * journal or syslogd: what syslog(3) is given there is lost. Asked anew
 * for every message (they are few: errors and warnings by default), so
 * a syslog daemon that starts later is used from then on.
 */
static bool
syslog_listens(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	(void) snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", _PATH_LOG);
	static const int types[] = { SOCK_DGRAM, SOCK_STREAM };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return true;	/* cannot tell: as before */
		int ret = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
		int err = errno;
		(void) close(fd);
		if (ret == 0)
			return true;
		if (err != EPROTOTYPE)
			return false;
	}
	return false;
}

/*
 * default_log_function -- syslog is the primary destination (the caller
 * already applied RPMA_LOG_THRESHOLD), stderr the secondary one, filtered
 * by RPMA_LOG_THRESHOLD_AUX. Where no syslog daemon listens, what passed
 * RPMA_LOG_THRESHOLD goes to stderr as well, so that an application in a
 * container still shows why a call failed.
 */
static void
default_log_function(enum rpma_log_level level, const char *file_name,
		const int line_no, const char *function_name,
		const char *message_format, ...)
{
	if (level < RPMA_LOG_LEVEL_FATAL || level > RPMA_LOG_LEVEL_DEBUG)
		return;

	char message[MESSAGE_MAX];
	va_list ap;
	va_start(ap, message_format);
	int n = vsnprintf(message, sizeof(message), message_format, ap);
	va_end(ap);
	if (n < 0)
		return;

	char where[256] = "";
	if (file_name != NULL) {
		const char *base = strrchr(file_name, '/');
		(void) snprintf(where, sizeof(where), "%s:%4d:%s: ",
				base ? base + 1 : file_name, line_no,
				function_name ? function_name : "");
	}

	syslog(syslog_priorities[level], "%s%s%s", level_names[level], where,
			message);

	if (level <= atomic_load(&thresholds[RPMA_LOG_THRESHOLD_AUX]) ||
			!syslog_listens()) {
		struct timespec ts;
		struct tm tm;
		char stamp[32] = "";
		if (clock_gettime(CLOCK_REALTIME, &ts) == 0 &&
				localtime_r(&ts.tv_sec, &tm) != NULL)
			(void) strftime(stamp, sizeof(stamp), "%F %T", &tm);
		(void) fprintf(stderr, "%s.%06ld %s%s %s\n", stamp,
				(long)(ts.tv_nsec / 1000), where,
				level_names[level], message);
	}
}

void
rpma_log_emit(enum rpma_log_level level, const char *file, int line,
		const char *func, const char *fmt, ...)
{
	if (level > atomic_load(&thresholds[RPMA_LOG_THRESHOLD]) ||
			level == RPMA_LOG_DISABLED)
		return;

	rpma_log_function *fn = atomic_load(&log_function);
	if (fn == NULL)
		return;

	/* the public type is variadic: format here, pass the text as "%s" */
	char message[MESSAGE_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;

	int saved_errno = errno;
	fn(level, file, line, func, "%s", message);
	errno = saved_errno;
}

int
rpma_log_set_threshold(enum rpma_log_threshold threshold,
		enum rpma_log_level level)
{
	if (threshold != RPMA_LOG_THRESHOLD &&
			threshold != RPMA_LOG_THRESHOLD_AUX)
		return RPMA_E_INVAL;
	if (!level_is_valid(level))
		return RPMA_E_INVAL;

	atomic_store(&thresholds[threshold], level);
	return 0;
}

int
rpma_log_get_threshold(enum rpma_log_threshold threshold,
		enum rpma_log_level *level)
{
	if (threshold != RPMA_LOG_THRESHOLD &&
			threshold != RPMA_LOG_THRESHOLD_AUX)
		return RPMA_E_INVAL;
	if (level == NULL)
		return RPMA_E_INVAL;

	*level = (enum rpma_log_level)atomic_load(&thresholds[threshold]);
	return 0;
}

int
rpma_log_set_function(rpma_log_function *fn)
{
	atomic_store(&log_function,
			fn == RPMA_LOG_USE_DEFAULT_FUNCTION ?
			default_log_function : fn);
	return 0;
}
