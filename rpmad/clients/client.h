/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.h -- a client process as its objects see their owner: who it is
 * (the name its log lines carry, the uid and groups its user's limits and
 * rules go by) and what it holds
 *
 * Its session (control/session.c) embeds one and fills it in when the
 * process connects. Below the control plane there are clients, not
 * sessions: the objects, the tenants and the replies need nothing else.
 */

#ifndef RPMAD_CLIENT_H
#define RPMAD_CLIENT_H

#include <stdint.h>
#include <sys/types.h>

struct conn;
struct ep;
struct mr;
struct peer;
struct tenant;

#define CLIENT_MAX_GROUPS 64

struct client_counts {
	uint32_t peers, mrs, eps, conn_reqs, conns;
	uint64_t pinned_bytes;
};

struct client {
	uint64_t id;		/* its session's number (rpmactl shows it) */
	pid_t pid;
	uid_t uid;
	gid_t gid;
	char comm[32];
	char name[64];		/* "pid 123 (comm)" for log lines */
	gid_t groups[CLIENT_MAX_GROUPS];	/* primary first */
	unsigned n_groups;
	uint64_t memlock;	/* RLIMIT_MEMLOCK (see tenant_read_memlock) */
	struct tenant *tenant;	/* its user */

	struct peer *peers;
	struct mr *mrs;
	struct ep *eps;
	struct conn *conns;
	struct client_counts counts;
};

#endif /* RPMAD_CLIENT_H */
