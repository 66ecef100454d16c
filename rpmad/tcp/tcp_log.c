// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_log.c -- log lines the other end of a connection caused, charged to
 * it (tcp.h)
 *
 * It needs only the connection's fields and rpmad's log, nothing of the
 * transport's files, so that every one of them may log so: the socket
 * whose send failed as well as the connection that ends.
 */

#include <stdarg.h>
#include <stdio.h>

#include "tcp/tcp.h"

void
tcp_conn_log(const struct tcp_conn *tc, int level, const char *fmt, ...)
{
	if (level > log_max_level)
		return;
	struct origin o;
	if (tc->local_peer && tc->local_peer->conn)
		origin_of_user(conn_uid(tc->local_peer->conn), &o);
	else
		origin_of_addr(&tc->remote, &o);
	va_list ap;
	va_start(ap, fmt);
	tcp_env->vlog_from(&o, level, fmt, ap);
	va_end(ap);
}
