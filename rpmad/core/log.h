/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h -- rpmad's log lines on stderr, with levels journald understands
 */

#ifndef RPMAD_LOG_H
#define RPMAD_LOG_H

#include <syslog.h>

/* levels are syslog priorities: LOG_ERR .. LOG_DEBUG */
extern int log_max_level;

/* log_level_parse -- "err", "warning", "notice", "info", "debug" or -1 */
int log_level_parse(const char *name);

/* log_level_name -- the name of a level */
const char *log_level_name(int level);

/* log_init -- decide between journald prefixes and timestamped lines */
void log_init(void);

void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...)     log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)  log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)    log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) \
	do { \
		if (log_max_level >= LOG_DEBUG) \
			log_msg(LOG_DEBUG, __VA_ARGS__); \
	} while (0)

#endif /* RPMAD_LOG_H */
