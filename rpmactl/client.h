/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.h -- rpmactl's connection to rpmad: hello, admin queries (every
 * page of a listing), evict; and the exit codes of rpmactl(8)
 */

#ifndef RPMACTL_CLIENT_H
#define RPMACTL_CLIENT_H

#include <stdint.h>

#include "rpmad.pb-c.h"

/* rpmactl's exit codes, documented in rpmactl(8) */
enum {
	EXIT_OK = 0,
	EXIT_REFUSED = 1,	/* rpmad refused or failed the request */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_UNREACHABLE = 3,	/* no rpmad at the socket, or it went away */
	EXIT_DENIED = 4,	/* not allowed: socket permissions or admin */
};

struct client {
	int sock;
	const char *path;
	uint64_t next_id;
	int timeout_ms;
};

/*
 * client_open -- connect to rpmad at `path` and say hello. Returns EXIT_OK
 * or the exit code for what went wrong (and says what on stderr).
 */
int client_open(struct client *c, const char *path, int timeout_ms);
void client_close(struct client *c);

/*
 * client_query -- one admin query (STATUS, STATS). On EXIT_OK *resp holds
 * the answer; free it with rpmad__response__free_unpacked().
 */
int client_query(struct client *c, Rpmad__AdminQuery__Kind kind,
		Rpmad__Response **resp);

/*
 * client_list -- every item of a listing (CLIENTS, CONNECTIONS, MRS,
 * ENDPOINTS), page after page, each page handed to `page` while it is
 * valid. A non-zero return of `page` stops and is returned.
 */
typedef int client_page_fn(const Rpmad__AdminReply *page, void *arg);
int client_list(struct client *c, Rpmad__AdminQuery__Kind kind,
		uint32_t page_limit, client_page_fn *page, void *arg);

/* client_evict -- evict the client process `pid` */
int client_evict(struct client *c, uint32_t pid);

/* client_upgrade -- start an upgrade; *pid: the new rpmad's */
int client_upgrade(struct client *c, uint32_t *pid);

#endif /* RPMACTL_CLIENT_H */
