/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session.h -- one client process connected to rpmad
 *
 * A session is known by SO_PEERCRED (pid, uid, gid); its client (client.h)
 * owns every object it creates. When its socket closes -- clean exit,
 * crash, kill -9 -- or an admin evicts it, everything it owned is released
 * (session_destroy).
 *
 * struct session is opaque: its fields are session.c's. The layers below
 * know a session by its client (session_client()); the white-box tests and
 * fuzz targets make theirs with session_new_own().
 */

#ifndef RPMAD_SESSION_H
#define RPMAD_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "clients/client.h"
#include "clients/reply.h"

struct session;

/*
 * session_packet_fn -- what answers one packet of a session (the request
 * dispatcher); 0, or a negative errno when the session should end
 */
typedef int session_packet_fn(struct session *s, const uint8_t *buf,
		size_t len, int *fds, unsigned nfds);

/* session_set_handler -- who answers packets, set once at start-up */
void session_set_handler(session_packet_fn *fn);

/*
 * session_start -- a client accepted on fd (the session owns it now). It
 * counts against its user's limits from here on; over them, it is told
 * why at its first request (or closed at once when far over them). It
 * must say hello within HELLO_TIMEOUT_NS. With `admins_only` (rpmad has
 * no descriptors to spare) only an administrator's session stays.
 */
void session_start(int fd, bool admins_only);

/* session_client -- the client it speaks for: what the layers below know */
struct client *session_client(struct session *s);

const char *session_name(const struct session *s);
int session_fd(const struct session *s);
bool session_said_hello(const struct session *s);
bool session_is_admin(const struct session *s);

/* session_close_later -- end the session once the current request is done */
void session_close_later(struct session *s);

/* session_destroy -- release everything its client owns and close it */
void session_destroy(struct session *s);

/* session_destroy_all -- at shutdown: connections close in order */
void session_destroy_all(void);

/*
 * session_new_own -- a session of this very process, for the white-box
 * tests and fuzz targets that call the handlers themselves: on `fd` (-1:
 * none; answers are sent there), with the process's pid, uid and gid,
 * allowed, an admin when `admin`, past its hello when `hello`, `comm` its
 * program's name; its user's accounting, no RLIMIT_MEMLOCK to hold it to.
 * NULL when out of memory.
 */
struct session *session_new_own(int fd, const char *comm, bool admin,
		bool hello);

/*
 * session_dispatch -- hand one packet to the dispatcher, as a packet read
 * from the socket is; the handlers may end the session meanwhile (it is
 * closing then). Returns false once the session is closing: its owner
 * destroys it (session_destroy).
 */
bool session_dispatch(struct session *s, const uint8_t *buf, size_t len,
		int *fds, unsigned nfds);

/* session_first, session_next -- every session, oldest first */
struct session *session_first(void);
struct session *session_next(const struct session *s);

/* session_find_pid -- the first session of a process, or NULL */
struct session *session_find_pid(pid_t pid);

void session_handle_hello(struct req_ctx *rc);

/*
 * session_handle_prove -- ProveIdentity: the answer carries the
 * credentials of vouch.h (a session over its limits hears why instead)
 */
void session_handle_prove(struct req_ctx *rc);

/*
 * session_handle_netns -- NetNamespace: the client's network namespace,
 * checked (netns_take) and kept for its network work (client.h)
 */
void session_handle_netns(struct req_ctx *rc);

/*
 * session_network_refused -- a request of network work from a client in
 * a namespace rpmad does not know (none handed over, not rpmad's own) is
 * failed here: true then
 */
bool session_network_refused(struct req_ctx *rc);

#endif /* RPMAD_SESSION_H */
