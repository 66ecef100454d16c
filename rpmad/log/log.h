/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h -- rpmad's log lines: the journal (with fields) or stderr
 */

#ifndef RPMAD_LOG_H
#define RPMAD_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

/* levels are syslog priorities: LOG_ERR .. LOG_DEBUG */
extern int log_max_level;

/*
 * log_level_parse -- the level named "err" ("error"), "warning", "notice", "info" or
 * "debug"; -EINVAL for any other name
 */
int log_level_parse(const char *name);

/* log_level_name -- the name of a level */
const char *log_level_name(int level);

/* log_init -- decide between the journal and timestamped lines */
void log_init(void);

/*
 * What the next lines are about, until log_subject_clear(): the journal
 * gets them as fields (RPMAD_CLIENT_PID, RPMAD_CLIENT_UID,
 * RPMAD_CLIENT_COMM; RPMAD_CONN, the queue pair number rpmactl shows,
 * RPMAD_LOCAL_ADDRESS, RPMAD_PEER_ADDRESS). Plain lines are unchanged.
 */
void log_subject_client(int pid, unsigned uid, const char *comm);
void log_subject_conn(uint32_t qp_num, const char *local,
		const char *remote);
void log_subject_clear(void);

/*
 * log_subject_push / log_subject_pop -- keep the subject while lines about
 * another are logged (a connection event inside a client's request), then
 * restore it; push starts with no subject. Pairs nest.
 */
void log_subject_push(void);
void log_subject_pop(void);

void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * log_vmsg -- log_msg with its arguments in a va_list
 * log_text -- what a line of `level` says, into text (at most size bytes);
 *   false, and nothing formatted, when lines of that level are not logged
 */
void log_vmsg(int level, const char *fmt, va_list ap)
		__attribute__((format(printf, 2, 0)));
bool log_text(char *text, size_t size, int level, const char *fmt, va_list ap)
		__attribute__((format(printf, 4, 0)));

/* the longest line rpmad logs, its end included */
#define LOG_LINE_MAX 1024

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
