/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session.h -- one client process connected to rpmad
 *
 * A session is known by SO_PEERCRED (pid, uid, gid) and owns every object
 * it creates. When its socket closes -- clean exit, crash, kill -9 -- or an
 * admin evicts it, everything it owned is released (session_destroy).
 */

#ifndef RPMAD_SESSION_H
#define RPMAD_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "loop.h"
#include "reply.h"

struct peer;
struct mr;
struct ep;
struct conn;
struct tenant;

#define SESSION_MAX_GROUPS 64

struct session_counts {
	uint32_t peers, mrs, eps, conn_reqs, conns;
	uint64_t pinned_bytes;
};

struct session {
	uint64_t id;
	int fd;
	struct loop_watch watch;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	char comm[32];
	char name[64];		/* "pid 123 (comm)" for log lines */
	gid_t groups[SESSION_MAX_GROUPS];	/* primary first */
	unsigned n_groups;
	uint64_t memlock;	/* RLIMIT_MEMLOCK (see tenant_read_memlock) */
	struct tenant *tenant;	/* its user */
	bool hello;
	bool allowed;
	bool admin;
	bool closing;
	bool dispatching;

	struct peer *peers;
	struct mr *mrs;
	struct ep *eps;
	struct conn *conns;
	struct session_counts counts;

	struct session *prev, *next;
};

/*
 * session_packet_fn -- what answers one packet of a session (the request
 * dispatcher); 0, or -1 when the session should end
 */
typedef int session_packet_fn(struct session *s, const uint8_t *buf,
		size_t len, int *fds, unsigned nfds);

/* session_set_handler -- who answers packets, set once at start-up */
void session_set_handler(session_packet_fn *fn);

/* session_listen_fd_ready -- accept every pending client of listen_fd */
void session_accept_all(int listen_fd);

const char *session_name(const struct session *s);
int session_fd(const struct session *s);
bool session_said_hello(const struct session *s);
bool session_is_admin(const struct session *s);

/* session_close_later -- end the session once the current request is done */
void session_close_later(struct session *s);

/* session_destroy -- release everything the session owns and close it */
void session_destroy(struct session *s);

/* session_destroy_all -- at shutdown: connections close in order */
void session_destroy_all(void);

/* session_find_pid -- the first session of a process, or NULL */
struct session *session_find_pid(pid_t pid);

void session_handle_hello(struct req_ctx *rc);

#endif /* RPMAD_SESSION_H */
