/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_internal.h -- how the library's own code writes log messages
 */

#ifndef RPMACLIENT_LOG_INTERNAL_H
#define RPMACLIENT_LOG_INTERNAL_H

#include "librpma.h"

/*
 * rpma_log_emit -- hand one message to the current logging function if
 * `level` passes the primary threshold.
 */
void rpma_log_emit(enum rpma_log_level level, const char *file, int line,
		const char *func, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#define RPMA_LOG(level, ...) \
	rpma_log_emit((level), __FILE__, __LINE__, __func__, __VA_ARGS__)

#define RLOG_FATAL(...)   RPMA_LOG(RPMA_LOG_LEVEL_FATAL, __VA_ARGS__)
#define RLOG_ERROR(...)   RPMA_LOG(RPMA_LOG_LEVEL_ERROR, __VA_ARGS__)
#define RLOG_WARNING(...) RPMA_LOG(RPMA_LOG_LEVEL_WARNING, __VA_ARGS__)
#define RLOG_NOTICE(...)  RPMA_LOG(RPMA_LOG_LEVEL_NOTICE, __VA_ARGS__)
#define RLOG_INFO(...)    RPMA_LOG(RPMA_LOG_LEVEL_INFO, __VA_ARGS__)
#define RLOG_DEBUG(...)   RPMA_LOG(RPMA_LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif /* RPMACLIENT_LOG_INTERNAL_H */
