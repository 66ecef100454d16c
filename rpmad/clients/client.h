/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.h -- a client process as its objects see their owner: who it is
 * (the name its log lines carry, the uid and groups its user's limits and
 * rules go by) and what it holds
 *
 * Its session (control/session.c) embeds one and fills it in when the
 * process connects. Below the control plane there are clients, not
 * sessions: the objects, the tenants and the replies need nothing else.
 * The registry's owners (core/registry.h) are the clients.
 */

#ifndef RPMAD_CLIENT_H
#define RPMAD_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/registry.h"

struct addrspace;
struct tenant;

#define CLIENT_MAX_GROUPS 64

/*
 * What all clients of one user hold together (its tenant's, tenant.c):
 * the registry counts its objects by kind into `objs` as it counts each
 * client's, and the two counts below change with each client's
 * (client_add_pinned(), client_add_reqs(), client_add_mr_fds()).
 * Admission reads these: its cost does not grow with the number of
 * clients.
 */
struct user_held {
	struct obj_tally objs;
	uint32_t sessions;	/* from accept on */
	uint32_t conn_reqs;
	uint32_t mr_fds;	/* registrations' descriptors (mr.h) */
	uint64_t pinned_bytes;
};

struct client {
	struct obj_owner owner;	/* its objects, by kind (registry.h) */
	uint64_t id;		/* its session's number (rpmactl shows it) */
	pid_t pid;
	uid_t uid;
	gid_t gid;
	char comm[32];
	char name[64];		/* "pid 123 (comm)" for log lines */
	char library[32];	/* as it said at hello (informational) */
	char api[24];		/* the librpma versions it runs, too */
	gid_t groups[CLIENT_MAX_GROUPS];	/* primary first */
	unsigned n_groups;
	uint64_t memlock;	/* RLIMIT_MEMLOCK (see tenant_read_memlock) */
	struct tenant *tenant;	/* its user */
	struct addrspace *as;	/* its memory, if it handed it over at hello */
	/* its network namespace (netns.h): -1 for rpmad's own */
	int netns;
	uint64_t netns_ino;	/* its number, as in net:[INODE]; 0: rpmad's */
	bool netns_foreign;	/* none handed over, and not in rpmad's */
	struct user_held *user;	/* what its user holds (its tenant's) */

	/* what the registry's counts by kind do not tell */
	uint64_t pinned_bytes;	/* what its registrations span (mr.c) */
	uint32_t conn_reqs;	/* connections not connecting yet (conn.c) */
};

/* client_of -- the client that is this owner */
static inline struct client *
client_of(struct obj_owner *owner)
{
	return (struct client *)((char *)owner - offsetof(struct client,
			owner));
}

/* obj_client -- the client owning o */
static inline struct client *
obj_client(const struct obj *o)
{
	return client_of(o->owner);
}

/* client_add_pinned -- its registrations span `delta` bytes more (mr.c) */
static inline void
client_add_pinned(struct client *c, int64_t delta)
{
	c->pinned_bytes += (uint64_t)delta;
	if (c->user)
		c->user->pinned_bytes += (uint64_t)delta;
}

/* client_add_reqs -- `delta` more requests not connecting yet (conn.c) */
static inline void
client_add_reqs(struct client *c, int delta)
{
	c->conn_reqs += (uint32_t)delta;
	if (c->user)
		c->user->conn_reqs += (uint32_t)delta;
}

/*
 * client_add_mr_fds -- its registrations hold `delta` more descriptors
 * (counted for its user only: nothing shows a client's own)
 */
static inline void
client_add_mr_fds(struct client *c, int delta)
{
	if (c->user)
		c->user->mr_fds += (uint32_t)delta;
}

/* What a client holds, as rpmactl, its user's limits and the log count. */
struct client_counts {
	uint32_t peers, mrs, eps, conn_reqs, conns;	/* conns: with reqs */
	uint64_t pinned_bytes;
};

static inline void
client_counts(const struct client *c, struct client_counts *out)
{
	out->peers = registry_count(&c->owner, OBJ_PEER);
	out->mrs = registry_count(&c->owner, OBJ_MR);
	out->eps = registry_count(&c->owner, OBJ_EP);
	out->conn_reqs = c->conn_reqs;
	out->conns = registry_count(&c->owner, OBJ_CONN);
	out->pinned_bytes = c->pinned_bytes;
}

#endif /* RPMAD_CLIENT_H */
