/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tenant.h -- a user of rpmad (a uid, as the host sees it): what all its
 * clients hold together, the limits that apply to it (rpmad.conf and its
 * [user]/[group] sections), the networks it may reach, its refusals, and
 * its share of the log
 *
 * struct tenant is opaque: a client holds its user's (client.h) and the
 * others ask this file.
 */

#ifndef RPMAD_TENANT_H
#define RPMAD_TENANT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "core/config.h"
#include "log/origin.h"
#include "loop/fairq.h"
#include "qp_region.h"

struct client;
struct call;
struct tenant;

/* descriptors rpmad holds, counted per object (see rpmad.conf(5)) */
#define TENANT_FDS_SESSION 1
/* the queue pair's (qp_region.h: region, doorbell, notifications), and
 * the software transport's two sockets */
#define TENANT_FDS_CONN (QP_FD_MAX + 2)
#define TENANT_FDS_EP 3		/* listening socket, notification, spare */

/* What one user holds now, all its clients together. */
struct tenant_usage {
	uint32_t sessions, conns, pending, eps, descriptors;
	uint64_t registered_bytes;
};

/* Since the start: of every user (rpmactl status), or of one. */
struct tenant_totals {
	uint64_t refused_limits, refused_connect, refused_listen;
	uint64_t log_suppressed;
};

/* tenant_join -- the tenant of a new session (made when new); NULL: no memory */
struct tenant *tenant_join(uid_t uid);

/* tenant_leave -- a session of it ended */
void tenant_leave(struct tenant *t);

/* tenant_held -- what its clients hold together (client.h) */
struct user_held *tenant_held(struct tenant *t);

/*
 * tenant_fairq -- the client's user's share of the data path (fairq.h),
 * NULL when it has none (then rpmad's own is charged)
 */
struct fairq_tenant *tenant_fairq(const struct client *c);
/*
 * tenant_share -- the same share as it stands, for telling whose work is
 * whose: cheap, on the data path (tenant_fairq also applies rpmad.conf)
 */
const struct fairq_tenant *tenant_share(const struct client *c);
/*
 * What the client's user's connections moved through rpmad (fairq.h), its
 * weight, and what every user rpmad knows moved, for its share
 */
struct tenant_data {
	uint32_t weight;
	struct fairq_use use;
	uint64_t all_bytes;
};
void tenant_data_use(const struct client *c, struct tenant_data *out);
/* tenant_destroy_all -- at shutdown, saying what was held back */
void tenant_destroy_all(void);

/*
 * tenant_read_memlock -- the RLIMIT_MEMLOCK soft limit of a process
 * (UINT64_MAX: unlimited, also when it has CAP_IPC_LOCK, as the kernel
 * would not hold it to its limit either); 0 when it cannot be read
 */
uint64_t tenant_read_memlock(pid_t pid);

/* tenant_limits -- the limits for the client's user, sections applied */
void tenant_limits(const struct client *c, struct limits *out);

/* tenant_usage -- what the client's user holds now (a few counters) */
void tenant_usage(const struct client *c, struct tenant_usage *u);

/*
 * tenant_admit_session -- whether a new session (counted already) keeps
 * its user within max_descriptors: 0. Over it: the refusal is counted and
 * logged and its text is in `why`; -ENOMEM for a session that may stay to
 * be told at its first request, -EMFILE for one to close at once (the
 * user has SESSIONS_TOLD_MAX such sessions already).
 */
int tenant_admit_session(struct client *c, char *why, size_t len);

/*
 * Admission of a new object of the asking client: 0 when the user stays
 * within its limits; otherwise the call fails (RPMA_E_NOMEM, with
 * which limit and how to raise it), the refusal is counted and logged,
 * and -ENOMEM is returned.
 */
int tenant_admit_conn(struct call *call);
int tenant_admit_ep(struct call *call);
int tenant_admit_mr(struct call *call, uint64_t bytes);

/*
 * tenant_fds_allow -- whether `more` descriptors keep the client's user
 * within max_descriptors (nothing refused: for what rpmad may do
 * without, mr.h's write descriptors)
 */
bool tenant_fds_allow(const struct client *c, unsigned more);

/*
 * allow_connect / allow_listen: 0 when the client's user may connect to
 * (listen on) the address; otherwise the call fails (RPMA_E_PROVIDER,
 * EACCES), the refusal is counted and logged, and -EACCES is returned.
 */
int tenant_check_connect(struct call *call, const struct sockaddr *sa);
int tenant_check_listen(struct call *call, const struct sockaddr *sa);

/* tenant_totals -- refusals and held-back log lines since the start */
void tenant_totals(struct tenant_totals *t);

/* tenant_totals_of -- those of the client's user (zero: none known) */
void tenant_totals_of(const struct client *c, struct tenant_totals *t);

/*
 * tenant_log -- a log line a client caused: at most RATELIMIT_BURST per
 * user in RATELIMIT_WINDOW_NS; what is held back is counted and said
 * ("suppressed N messages from uid U, last from client pid P") when the
 * window ends
 */
void tenant_log(struct client *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * tenant_log_origin -- a log line an origin caused: a local user's goes to
 * its share as tenant_log's do, a remote host's to the host's
 * (remote_log.h); never to the share of whoever it happened to
 */
void tenant_log_origin(const struct origin *o, int level, const char *fmt,
		...) __attribute__((format(printf, 3, 4)));

/*
 * tenant_vlog_from -- the same, with "(from <origin>)" at the end of the
 * line: what a connection's other end caused (objects/conn.c, the
 * transports through their transport_env)
 */
void tenant_vlog_from(const struct origin *o, int level, const char *fmt,
		va_list ap) __attribute__((format(printf, 3, 0)));

#endif /* RPMAD_TENANT_H */
