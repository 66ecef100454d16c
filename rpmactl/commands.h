/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * commands.h -- rpmactl's commands; each returns an exit code of client.h
 */

#ifndef RPMACTL_COMMANDS_H
#define RPMACTL_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "client.h"

struct cmd_ctx {
	struct client *client;
	bool json;
	FILE *out;		/* printed only when the command succeeds */
	uint32_t page_limit;	/* items per listing page; 0: rpmad decides */
	int argc;		/* the command's own arguments */
	char **argv;
};

int cmd_status(struct cmd_ctx *x);
int cmd_clients(struct cmd_ctx *x);
int cmd_connections(struct cmd_ctx *x);
int cmd_mrs(struct cmd_ctx *x);
int cmd_endpoints(struct cmd_ctx *x);
int cmd_stats(struct cmd_ctx *x);
int cmd_evict(struct cmd_ctx *x);
int cmd_upgrade(struct cmd_ctx *x);
int cmd_metrics(struct cmd_ctx *x);	/* Prometheus text, even with --json */

/*
 * cmd_evict_check -- whether evict's arguments make sense, before
 * connecting: EXIT_OK or EXIT_USAGE
 */
int cmd_evict_check(int argc, char **argv);

/* ---- shared by the listing commands (cmd_owners.c) ---- */

/* who owns what: a client session's pid, uid and command name */
struct owner {
	uint64_t session_id;
	uint32_t pid, uid;
	char comm[64];
};

struct owners {
	struct owner *list;	/* by session id */
	size_t n;
};

/* owners_fetch -- every client session, for naming owners in listings */
int owners_fetch(struct cmd_ctx *x, struct owners *o);

/* owners_find -- the owner with this session id, or NULL */
const struct owner *owners_find(const struct owners *o, uint64_t session_id);

void owners_free(struct owners *o);

/* user_name -- the name of uid into buf, or NULL when it has none here */
const char *user_name(uint32_t uid, char *buf, size_t len);

#endif /* RPMACTL_COMMANDS_H */
