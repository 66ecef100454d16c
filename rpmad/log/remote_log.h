/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remote_log.h -- log lines a remote host can make rpmad write (malformed
 * frames, forged or abandoned connection requests, full queues): at most
 * RATELIMIT_BURST per RATELIMIT_WINDOW_NS for each host (origin.h), the
 * rest counted and said in one line, "suppressed N messages caused by
 * 192.0.2.7", when the host's window ends. A flood from one address
 * neither fills the journal nor uses up anyone else's share, a local
 * client's included.
 *
 * Hosts are remembered while they have a window under way, up to
 * REMOTE_LOG_HOSTS; beyond that the others share one limiter.
 */

#ifndef RPMAD_REMOTE_LOG_H
#define RPMAD_REMOTE_LOG_H

#include <stdint.h>
#include <sys/socket.h>

#include "log/origin.h"

#define REMOTE_LOG_HOSTS 1024

/* remote_log -- a line caused by the host at `from` (NULL: unknown) */
void remote_log(const struct sockaddr_storage *from, int level,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* remote_log_origin -- the same for a host already made an origin */
void remote_log_origin(const struct origin *host, int level,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* remote_log_suppressed -- lines held back since the start, all hosts */
uint64_t remote_log_suppressed(void);

/* remote_log_fini -- says what is held back; forgets every host */
void remote_log_fini(void);

#endif /* RPMAD_REMOTE_LOG_H */
