/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_util.h -- what the benchmark's parts share: starting an rpmad of
 * their own, a peer, small connections, and a call that must succeed
 */

#ifndef RPMA_BENCH_UTIL_H
#define RPMA_BENCH_UTIL_H

#include <librpma.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#define BENCH_ADDR "127.0.0.1"

/*
 * A call of the library that must succeed, or the process ends with
 * quit(1): exit in the bench's own process, _exit in a forked child, which
 * must not run the parent's exit handlers or flush its stdio twice.
 */
#define BENCH_CHECK(call, quit) \
	do { \
		int ret_ = (call); \
		if (ret_) { \
			(void) fprintf(stderr, "rpma-bench: %s:%d: %s: %s\n", \
					__FILE__, __LINE__, #call, \
					rpma_err_2str(ret_)); \
			quit(1); \
		} \
	} while (0)
#define BCHECK(call) BENCH_CHECK(call, _exit)

/*
 * bench_daemon_start -- run `rpmad` on `sock` (TCP transport) with the
 * per-user limits lifted (one benchmark user holds thousands of objects),
 * niced by `nice_delta`, and wait until it accepts connections. Its log
 * goes to $RPMA_BENCH_RPMAD_LOG, or nowhere. Returns its pid, or -1.
 */
pid_t bench_daemon_start(const char *rpmad, const char *sock, int nice_delta);
/* [user]/[group] sections the daemons started next get, or NULL */
extern const char *bench_conf_sections;
/* lines of rpmad.conf before the sections (NULL: none): --tls's */
extern const char *bench_conf_global;

/* bench_daemon_stop -- SIGTERM, wait, remove its socket and configuration */
void bench_daemon_stop(pid_t pid, const char *sock);

/*
 * bench_become_user -- become user `uid` (its group too, no supplementary
 * groups), or exit
 */
void bench_become_user(uid_t uid);

/* bench_peer -- a peer for BENCH_ADDR (type: an rpma_util_ibv_context_type) */
struct rpma_peer *bench_peer(int type);

/* bench_small_cfg -- small queues, a patient time-out (a loaded host) */
struct rpma_conn_cfg *bench_small_cfg(void);

/*
 * bench_conn_server -- in a process of its own on `sock`: listen on
 * BENCH_ADDR:port, say so on `ready`, accept `total` connections and keep
 * them until `done` is closed; then disconnect them all and exit
 */
void bench_conn_server(const char *sock, const char *port, unsigned total,
		int ready, int done) __attribute__((noreturn));

/* bench_conn_one -- one connection to BENCH_ADDR:port, established */
struct rpma_conn *bench_conn_one(struct rpma_peer *peer,
		struct rpma_conn_cfg *cfg, const char *port);

#endif /* RPMA_BENCH_UTIL_H */
