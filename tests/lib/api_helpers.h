/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_helpers.h -- what the API unit tests share: a real rpmad per test
 * case, a device and a peer, a connected pair of connections on one rpmad,
 * a free TCP port and a Check runner in fork mode (the log they capture:
 * th_logcap.h).
 *
 * Every test runs in its own process (Check's fork mode): the library keeps
 * one control connection per process, so tests cannot disturb each other.
 */

#ifndef API_HELPERS_H
#define API_HELPERS_H

#include <check.h>
#include <stddef.h>

#include "librpma.h"
#include "test_daemon.h"
#include "th_logcap.h"
#include "th_suite.h"
#include "th_wait.h"

/*
 * Bound of a test that talks to rpmad, in seconds. Generous: a liveness
 * bound for sanitizer builds on 2 busy cores, not a performance limit.
 */
#define API_TEST_TIMEOUT 60

/* An address of this host that any machine has. */
#define API_LOCAL_ADDR "127.0.0.1"
/* An address that is no host's (TEST-NET-3, RFC 5737). */
#define API_FOREIGN_ADDR "203.0.113.1"
/* A name that never resolves (RFC 6761). */
#define API_UNRESOLVABLE "no-such-host.invalid"

/*
 * Daemon fixtures. api_daemon_setup starts rpmad with the default
 * configuration; api_daemon_setup_limited with small quotas
 * (max_endpoints 1, max_connections 1, max_registered_bytes 64K). Used as
 * unchecked fixtures they run once per test case in the runner; as checked
 * fixtures once per test, in the test's process (for tests that kill it).
 */
void api_daemon_setup(void);
void api_daemon_setup_limited(void);
void api_daemon_teardown(void);

/* api_daemon -- the running daemon (the test fails when it did not start) */
struct test_daemon *api_daemon(void);

/* api_ctx -- the device of API_LOCAL_ADDR (the test fails otherwise) */
struct ibv_context *api_ctx(void);

/* api_peer -- a new peer on api_ctx() */
struct rpma_peer *api_peer(void);

/* api_free_port -- a TCP port of 127.0.0.1 that nobody listens on now */
void api_free_port(char port[16]);

/*
 * A client and a server connection between two endpoints of one rpmad,
 * both in this process, established.
 */
struct api_pair {
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_conn *client;
	struct rpma_conn *server;
	char port[16];
};

/*
 * api_pair_request -- listen, and have the client connect with `cfg` (NULL:
 * defaults) and private data `pdata` (may be NULL); the request waits at
 * p->ep, not accepted (p->server stays NULL)
 */
void api_pair_request(struct api_pair *p, const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata);

/*
 * api_pair_connect -- listen, connect with `cfg` (NULL: defaults) on both
 * sides and the client's private data `pdata` (may be NULL), and wait for
 * RPMA_CONN_ESTABLISHED on both sides.
 */
void api_pair_connect(struct api_pair *p, const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata);

/* api_pair_close -- disconnect both sides, delete everything */
void api_pair_close(struct api_pair *p);

/*
 * api_pair_delete -- delete everything without disconnecting: the
 * connection closed already, or rpmad is gone
 */
void api_pair_delete(struct api_pair *p);

/*
 * A connected pair with two registrations of its peer: `local`, and
 * `target`, which the client also holds as `remote`.
 */
struct api_rma {
	struct api_pair p;
	struct rpma_mr_local *local;
	struct rpma_mr_local *target;
	struct rpma_mr_remote *remote;
};

/*
 * api_rma_open -- api_pair_connect with `cfg`; `local`: size bytes of
 * api_buf for any use; `target`: size bytes at `target` for `usage`
 */
void api_rma_open(struct api_rma *e, const struct rpma_conn_cfg *cfg,
		void *target, size_t size, int usage);

/* api_rma_close -- the registrations, then api_pair_close */
void api_rma_close(struct api_rma *e);

/* api_rma_delete -- the registrations, then api_pair_delete */
void api_rma_delete(struct api_rma *e);

/*
 * api_buf -- size bytes of zeroed private anonymous memory, page-aligned,
 * for registering; it stays mapped until the test's process ends
 */
void *api_buf(size_t size);

/* api_set_nonblock, api_set_block -- O_NONBLOCK on or off on a descriptor
 * of the library */
void api_set_nonblock(int fd);
void api_set_block(int fd);

/* Which rpmad a test case of api_tcase_create gets. */
enum api_daemon_kind {
	API_NO_DAEMON,
	API_SHARED_DAEMON,	/* api_daemon_setup, once per test case */
	API_LIMITED_DAEMON,	/* api_daemon_setup_limited, once per case */
	API_OWN_DAEMON,		/* api_daemon_setup per test, which may kill it */
};

/*
 * api_tcase_create -- a test case with API_TEST_TIMEOUT and the daemon
 * fixture of that kind
 */
TCase *api_tcase_create(const char *name, enum api_daemon_kind daemon);

/* api_tcase_create of each kind, as a th_tcase's .create */
TCase *api_tcase_none(const char *name);
TCase *api_tcase_shared(const char *name);
TCase *api_tcase_limited(const char *name);
TCase *api_tcase_own(const char *name);

/*
 * api_run -- run the suite in fork mode; the exit status for main()
 */
int api_run(Suite *s);

#endif /* API_HELPERS_H */
