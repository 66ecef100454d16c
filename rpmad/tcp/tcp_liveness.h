/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_liveness.h -- whether the rpmads at the other end of our
 * connections are still there, one heartbeat per remote rpmad
 *
 * A remote rpmad (its address and the id it gave in the handshake) is
 * alive while anything arrives from it on any socket; each connection to
 * it is a member. Silence, a cut network or a frozen host, is a fact
 * about the remote, not about one connection, so the cost of finding it
 * grows with the remote rpmads, not with the connections: 1000 idle
 * connections to one peer cost one heartbeat. What only one socket
 * suffers (its flow dropped by a middlebox) the kernel finds with
 * keepalives and TCP_USER_TIMEOUT (tcp_chan_setup_socket).
 *
 * This file knows nothing of connections: the members' owner says how to
 * send a heartbeat through one and how to end one (struct
 * tcp_liveness_ops, given with every member).
 */

#ifndef RPMAD_TCP_LIVENESS_H
#define RPMAD_TCP_LIVENESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct tcp_remote;
struct transport_env;

/* a connection's place among its remote's */
struct tcp_member {
	struct tcp_remote *remote;	/* NULL: not watched */
	struct tcp_member *prev, *next;
};

struct tcp_liveness_ops {
	/* send a heartbeat through m; 0, or a negative errno (try another) */
	int (*beat)(struct tcp_member *m);
	/* m's remote fell silent: end m's connection; m has left already */
	void (*lost)(struct tcp_member *m);
};

/* the loop its timers run on, the timeout (tcp_timeout_ms) it keeps */
void tcp_liveness_init(const struct transport_env *env);

/* this rpmad's id for the handshake: random, made at the first call */
uint64_t tcp_liveness_self_id(void);

/*
 * m joins the remote rpmad at addr (the port does not count) with this id,
 * made when it is the first; the remote was heard from just now. `alone`:
 * a remote of m's own, shared with no other member (a peer of wire version
 * 1 has no id, and watches each connection by itself). Returns
 * where the member's sockets stamp the time something arrived
 * (struct tcp_chan's heard), or NULL when out of memory.
 */
uint64_t *tcp_remote_join(struct tcp_member *m,
		const struct sockaddr_storage *addr, uint64_t id, bool alone,
		const struct tcp_liveness_ops *ops);
/* m leaves (again: nothing); the last one out frees the remote */
void tcp_remote_leave(struct tcp_member *m);

/* how many remote rpmads are watched (tests) */
unsigned tcp_remotes_count(void);

#endif /* RPMAD_TCP_LIVENESS_H */
