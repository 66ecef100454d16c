/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * itest.h -- the harness of the tests with real rpmads and applications:
 * two rpmads as two "hosts", processes playing server and client on
 * them, messages between those processes, bounded waits on librpma
 * objects and the daemon's admin view (itest_*.c), on top of the generic
 * pieces it includes (daemons, waits, processes, /proc).
 *
 * Model: a Check test (the "parent", which never calls librpma itself)
 * starts the daemons, then forks one process per role. A role process
 * points RPMAD_SOCKET at its daemon before its first librpma call, so each
 * one is an application of its own host. Role processes report a failed
 * expectation through shared memory and exit non-zero; the parent turns
 * that into a Check failure naming the role, file and line.
 */

#ifndef ITEST_H
#define ITEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <check.h>
#include <librpma.h>

#include "test_daemon.h"
#include "th_ctl.h"
#include "th_child.h"
#include "th_procfs.h"
#include "th_wait.h"

/*
 * Bound of a liveness wait (an event, a completion, a message of the
 * other side). Nothing here takes more than milliseconds when it works;
 * the bound only turns a hang into a failure, and is generous because
 * sanitizer builds on two shared cores can stall for a while.
 */
#define IT_WAIT_MS 5000
/* Bound of a whole role process, below the Check timeout of a test. */
#define IT_ROLE_MS 20000
/* The Check timeout every integration test case sets (seconds). */
#define IT_TCASE_TIMEOUT 30

/*
 * The address the server roles listen at: $RPMAD_TEST_ADDR, else
 * 127.0.0.1. With RPMAD_TEST_TRANSPORT=verbs it is one served by an RDMA
 * device (the Soft-RoCE VM: 192.168.100.1, reached from rxe1 by rxe0).
 */
#define IT_ADDR it_addr()
const char *it_addr(void);

/* it_transport_is -- whether the daemons run with --transport `name` */
bool it_transport_is(const char *name);

/*
 * Private data, as the transport's connection manager carries it: up to
 * 255 bytes each way on the software transport; on RDMA (IB, RoCE) at most
 * 56 bytes with a request and 196 with an accept, and the receiver always
 * gets that many, zero-padded -- as with in-process librpma.
 * it_pdata_max -- the most one may send (`accept`: with an accept)
 * it_pdata_seen -- how many bytes the receiver gets when `sent` were sent
 */
size_t it_pdata_max(bool accept);
size_t it_pdata_seen(size_t sent, bool accept);

/*
 * it_peer_gone_event -- the event a connection reports when the other
 * application or its rpmad dies: LOST on the software transport (rpmad
 * knows); CLOSED on RDMA, where the dying side's kernel disconnects its
 * connections, as for in-process librpma
 */
enum rpma_conn_event it_peer_gone_event(void);

/* ---------------------------------------------------------- processes */

enum it_role { IT_PARENT, IT_SERVER, IT_CLIENT, IT_THIRD, IT_FOURTH,
	IT_ROLES };

struct it_env {
	struct test_daemon d[2];
	int ndaemons;
	struct test_daemon *srv;	/* the daemon of the server role */
	struct test_daemon *cli;	/* the daemon of the client role */
	char port[16];			/* a free TCP port for this test */
	char dir[256];			/* a scratch directory for files */
};

/*
 * it_env_start -- it_init, then start `ndaemons` (1 or 2) rpmads: with 2
 * the server role uses the first and the client role the second; with 1
 * both use the same. Picks a free port and makes a scratch directory.
 * Returns 0 or -1.
 */
int it_env_start(struct it_env *env, int ndaemons);

/* it_env_start with a configuration file of this text for the daemons */
int it_env_start_cfg(struct it_env *env, int ndaemons, const char *config);

/* the same with a configuration of its own for each (NULL: none) */
int it_env_start_cfgs(struct it_env *env, int ndaemons, const char *config0,
		const char *config1);

/*
 * it_env_start_nobody -- it_env_start for roles of root and of TH_NOBODY:
 * the daemons let both in (socket_mode, allow_users) and others may
 * search their directories and the scratch directory
 */
int it_env_start_nobody(struct it_env *env, int ndaemons);

/*
 * it_become_nobody -- in a role: become TH_NOBODY (no other groups),
 * dumpable or not (a process that changed its user is not, unless it
 * says so)
 */
void it_become_nobody(bool dumpable);

/*
 * it_env_stop -- SIGTERM the daemons still running, remove the scratch
 * dir. Returns 0 when each of them exited with 0 (a crash, a hang or a
 * sanitizer report in rpmad makes it -1; the log's tail goes to stderr).
 */
int it_env_stop(struct it_env *env);

/*
 * it_tcase_create -- a Check test case for integration tests: the
 * IT_TCASE_TIMEOUT, and a fixture that removes what a failed test left
 * (showing the end of its daemons' logs first; TEST_KEEP_LOGS keeps it)
 */
TCase *it_tcase_create(const char *name);

/*
 * it_init -- prepare the shared failure reports and the message pipes of
 * this test (it_env_start calls it).
 */
void it_init(void);

/* The role of the calling process. */
enum it_role it_role(void);
const char *it_role_name(enum it_role role);

typedef int it_fn(const struct it_env *env, void *arg);

/*
 * it_spawn -- fork a process for `role` that uses daemon `d` and exits
 * with fn's result. Returns its pid or -1.
 */
pid_t it_spawn(enum it_role role, const struct it_env *env,
		const struct test_daemon *d, it_fn *fn, void *arg);

/*
 * it_run_pair -- run server (on env->srv) and client (on env->cli) and
 * wait for both (IT_ROLE_MS); when one fails the other is killed after a
 * short grace period. Returns 0 when both exited with 0; otherwise
 * it_report() says what happened.
 */
int it_run_pair(const struct it_env *env, it_fn *server, it_fn *client,
		void *arg);

/*
 * it_pair_test -- the body of most pair tests: start `ndaemons` rpmads
 * (see it_env_start), run server and client with it_run_pair, stop the
 * daemons; each step a Check assertion
 */
void it_pair_test(int ndaemons, it_fn *server, it_fn *client, void *arg);
/* it_pair_test_cfg -- the same with rpmad.conf text (it_env_start_cfg) */
void it_pair_test_cfg(int ndaemons, const char *config, it_fn *server,
		it_fn *client, void *arg);

/* What the last it_run_pair/it_group_* found (for ck_assert_msg). */
const char *it_report(void);

/*
 * A group of role processes the parent runs and coordinates itself
 * (it_group_init also clears it_report()).
 */
struct it_group {
	int n;
	enum it_role role[IT_ROLES];
	pid_t pid[IT_ROLES];
	int code[IT_ROLES];	/* -2 while running */
};

void it_group_init(struct it_group *g);
int it_group_spawn(struct it_group *g, enum it_role role,
		const struct it_env *env, const struct test_daemon *d,
		it_fn *fn, void *arg);
pid_t it_group_pid(const struct it_group *g, enum it_role role);

/* SIGKILL a role on purpose (its end does not count as a failure). */
void it_group_kill(struct it_group *g, enum it_role role);

/*
 * it_group_hear -- in the parent: `count` messages `tag` (IT_WAIT_MS
 * each). On a timeout the roles are joined briefly so that it_report()
 * says why; returns -1 then.
 */
int it_group_hear(struct it_group *g, uint32_t tag, int count);

/* it_group_hear_within -- the same with timeout_ms for each message */
int it_group_hear_within(struct it_group *g, uint32_t tag, int count,
		int timeout_ms);

/*
 * it_group_join -- wait for every role (after one failed, the others get
 * a 2 s grace, then SIGKILL). Returns 0 when all exited with 0.
 */
int it_group_join(struct it_group *g, int timeout_ms);

/* ------------------------------------------------- failing in a role */

void it_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

#define IT_ASSERT(cond) do { \
	if (!(cond)) \
		it_fail(__FILE__, __LINE__, "%s", #cond); \
} while (0)

#define IT_ASSERT_MSG(cond, ...) do { \
	if (!(cond)) \
		it_fail(__FILE__, __LINE__, __VA_ARGS__); \
} while (0)

#define IT_EQ(a, b) do { \
	long long it_a_ = (long long)(a), it_b_ = (long long)(b); \
	if (it_a_ != it_b_) \
		it_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", \
				#a, #b, it_a_, it_b_); \
} while (0)

/* A librpma call that must succeed. */
#define IT_OK(call) do { \
	int it_ret_ = (call); \
	if (it_ret_ != 0) \
		it_fail(__FILE__, __LINE__, "%s: %d (%s)", #call, it_ret_, \
				rpma_err_2str(it_ret_)); \
} while (0)

/*
 * IT_REG(peer, buf, size, usage) -- rpma_mr_reg of buf, checked where it
 * stands as IT_OK is; the registration
 */
#define IT_REG(peer, buf, size, usage) \
	({ \
		struct rpma_mr_local *it_mr_ = NULL; \
		IT_OK(rpma_mr_reg((peer), (buf), (size), (usage), &it_mr_)); \
		it_mr_; \
	})

/*
 * IT_OKS(call, ...) -- IT_OK of each of up to six calls, in their order
 * (a role's releases on one line)
 */
/* clang-format off */
#define IT_OKS(...) IT_OKS_PICK_(__VA_ARGS__, IT_OKS6_, IT_OKS5_, IT_OKS4_, \
		IT_OKS3_, IT_OKS2_, IT_OK)(__VA_ARGS__)
#define IT_OKS_PICK_(a, b, c, d, e, f, which, ...) which
#define IT_OKS2_(a, b) do { IT_OK(a); IT_OK(b); } while (0)
#define IT_OKS3_(a, ...) do { IT_OK(a); IT_OKS2_(__VA_ARGS__); } while (0)
#define IT_OKS4_(a, ...) do { IT_OK(a); IT_OKS3_(__VA_ARGS__); } while (0)
#define IT_OKS5_(a, ...) do { IT_OK(a); IT_OKS4_(__VA_ARGS__); } while (0)
#define IT_OKS6_(a, ...) do { IT_OK(a); IT_OKS5_(__VA_ARGS__); } while (0)
/* clang-format on */

/* A librpma call that must fail with `code`. */
#define IT_ERR(code, call) do { \
	int it_ret_ = (call); \
	if (it_ret_ != (code)) \
		it_fail(__FILE__, __LINE__, "%s: %d (%s), wanted %s", #call, \
				it_ret_, rpma_err_2str(it_ret_), #code); \
} while (0)

/* ---------------------------------------------------------- messages */

/*
 * Every role has an inbox (a pipe made by it_init). A message is a tag
 * and up to IT_MSG_MAX bytes; it is written in one piece, so several
 * writers may share an inbox.
 */
#define IT_MSG_MAX 1000

/* it_tell -- send a message to `to`; 0 or -1 */
int it_tell(enum it_role to, uint32_t tag, const void *data, size_t len);

/* it_tell_both -- it_tell the server, then the client: 0 when both were */
int it_tell_both(uint32_t tag, const void *data, size_t len);

/*
 * it_hear -- take the next message of this role's inbox, waiting at most
 * timeout_ms. Returns its length, or -1 on timeout, a tag other than
 * `tag` or a message longer than cap.
 */
int it_hear(uint32_t tag, void *data, size_t cap, int timeout_ms);

/* In a role: hear `tag` within IT_WAIT_MS or fail. Returns the length. */
size_t it_expect(uint32_t tag, void *data, size_t cap);

/* Tags the helpers use themselves; tests number theirs from 100. */
enum {
	IT_TAG_LISTENING = 1,	/* the server's endpoint listens */
	IT_TAG_DESC = 2,	/* MR descriptor (+ peer cfg descriptor) */
	IT_TAG_DONE = 3,
	IT_TAG_GO = 4,
	IT_TAG_RESULT = 5,
	IT_TAG_READY = 6,
};

/* ---------------------------------------------- librpma, in a role */

/* it_peer -- a peer for the device serving addr (fails the role) */
struct rpma_peer *it_peer(const char *addr, enum rpma_util_ibv_context_type t);

/*
 * it_role_peer -- it_peer on addr with the context of this role's side:
 * local for IT_SERVER, remote for the others
 */
struct rpma_peer *it_role_peer(const char *addr);

/*
 * it_listen -- listen at IT_ADDR:env->port and tell the client role
 * (IT_TAG_LISTENING) that it may connect.
 */
struct rpma_ep *it_listen(struct rpma_peer *peer, const struct it_env *env);

/* it_next_req -- wait (bounded) for an incoming connection request */
struct rpma_conn_req *it_next_req(struct rpma_ep *ep,
		const struct rpma_conn_cfg *cfg);

/* it_next_event -- wait (bounded) for the next connection event */
enum rpma_conn_event it_next_event(struct rpma_conn *conn, int timeout_ms);

/* it_expect_event -- the next event must be `want` */
void it_expect_event(struct rpma_conn *conn, enum rpma_conn_event want);

/*
 * it_accept -- connect an incoming request (with optional private data)
 * and wait for RPMA_CONN_ESTABLISHED.
 */
struct rpma_conn *it_accept(struct rpma_conn_req **req,
		const struct rpma_conn_private_data *pdata);

/* it_accept_next -- it_next_req, then it_accept of what came */
struct rpma_conn *it_accept_next(struct rpma_ep *ep,
		const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata);

/*
 * it_connect -- wait for IT_TAG_LISTENING, then connect to the server at
 * IT_ADDR:env->port and wait for RPMA_CONN_ESTABLISHED.
 */
struct rpma_conn *it_connect(struct rpma_peer *peer, const struct it_env *env,
		const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata);

/*
 * it_connect_mr -- it_connect, then the remote MR of the descriptor the
 * server sends (it_expect_desc) and the connection's CQ
 */
struct rpma_conn *it_connect_mr(struct rpma_peer *peer,
		const struct it_env *env, struct rpma_mr_remote **rmr,
		struct rpma_cq **cq);

/* it_connect_to -- connect to IT_ADDR:port at once (no message first) */
struct rpma_conn *it_connect_to(struct rpma_peer *peer, const char *port,
		const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata);

/*
 * it_get_wc -- one completion from cq within timeout_ms; 0, or
 * RPMA_E_NO_COMPLETION when none came. Polls with short sleeps, so that
 * it neither relies on nor disturbs the CQ's notification arming.
 */
int it_get_wc(struct rpma_cq *cq, struct ibv_wc *wc, int timeout_ms);

/* it_wc -- a completion must come (IT_WAIT_MS) */
void it_wc(struct rpma_cq *cq, struct ibv_wc *wc);

/*
 * it_wc_ok -- a successful completion with this wr_id and opcode must
 * come; checks qp_num against the connection.
 */
void it_wc_ok(struct rpma_conn *conn, struct rpma_cq *cq, uint64_t wr_id,
		enum ibv_wc_opcode opcode, struct ibv_wc *wc);

/* it_no_wc -- no completion may come within ms */
void it_no_wc(struct rpma_cq *cq, int ms);

/* it_close -- disconnect, wait for RPMA_CONN_CLOSED and delete */
void it_close(struct rpma_conn **conn);

/*
 * it_await_close -- the other side disconnects: wait for
 * RPMA_CONN_CLOSED, then disconnect (as upstream servers do) and delete
 */
void it_await_close(struct rpma_conn **conn);

/*
 * it_client_end -- the usual end of a client role: it_close, then the
 * remote registration, the local one, the peer and the buffer, each
 * release checked
 */
void it_client_end(struct rpma_conn **conn, struct rpma_mr_remote **rmr,
		struct rpma_mr_local **mr, struct rpma_peer **peer, void *buf);

/*
 * it_server_end -- the usual end of a server role: it_await_close, then
 * the registration, the endpoint, the peer and the buffer, each checked
 */
void it_server_end(struct rpma_conn **conn, struct rpma_mr_local **mr,
		struct rpma_ep **ep, struct rpma_peer **peer, void *buf);

/*
 * This process's memory as the kernel reports it (itest_vm.c), for roles
 * that check what registering did to it; each fails the role when /proc
 * cannot be read.
 *
 * it_smaps_field -- the value of `key` ("VmFlags:", "ProtectionKey:",
 * ...) of the mapping holding addr in /proc/self/smaps, into out; 0, or
 * -1 when there is none
 */
int it_smaps_field(const void *addr, const char *key, char *out, size_t len);

/* it_smaps_kb -- it_smaps_field of a size in kB: the number, or -1 */
long it_smaps_kb(const void *addr, const char *key);

/* it_has_vmflag -- whether the mapping at addr has the VmFlags `flag` */
bool it_has_vmflag(const void *addr, const char *flag);

/* it_status_kb -- a value in kB of /proc/self/status (VmLck, RssAnon...) */
long it_status_kb(const char *key);

/* it_child_status -- wait for a child: its exit status, or 128 + signal */
int it_child_status(pid_t pid);

/* it_alloc -- size bytes, page aligned, zeroed (fails the role) */
void *it_alloc(size_t size);

/*
 * it_anon -- a private anonymous mapping of len bytes, each `byte` (fails
 * the role): memory of the process's own, not the allocator's
 */
uint8_t *it_anon(size_t len, int byte);

/*
 * it_write_protect -- [p, p + len) write-protected by a userfaultfd of the
 * process's own, as a dirty-page tracker does: the kernel's copies into
 * it fail (EFAULT); the userfaultfd, to close (fails the role)
 */
int it_write_protect(void *p, size_t len);

/* The descriptors one side sends the other (IT_TAG_DESC). */
struct it_desc {
	uint8_t mr[32];
	uint8_t mr_len;
	uint8_t pcfg[8];
	uint8_t pcfg_len;	/* 0: no peer configuration sent */
};

/* Send the descriptor of mr (and of pcfg when not NULL) to `to`. */
void it_send_desc(enum it_role to, const struct rpma_mr_local *mr,
		const struct rpma_peer_cfg *pcfg);

/* Wait (bounded) for the descriptors the other side sent. */
void it_expect_desc(struct it_desc *desc);

/* The remote registration of a received descriptor. */
struct rpma_mr_remote *it_desc_mr(const struct it_desc *desc);

/*
 * Memory rpmad makes persistent on the transport under test, as a target
 * maps it (itest_pmem.c): a file of RPMAD_TEST_FILE_DIR (else the build
 * tree, else the scratch directory) on the software transport; on RDMA,
 * where a page cache cannot be made persistent, the device DAX
 * RPMAD_TEST_DEVDAX (the Soft-RoCE VM has one).
 */
struct it_pmem {
	uint8_t *ptr;		/* size bytes, zeroed, mapped shared */
	size_t size;
	size_t map_len;		/* a device's: whole units of its alignment */
	int fd;			/* a file's (for pread), or -1 */
	char path[300];
};

/* it_pmem_available -- whether the transport has such memory here */
bool it_pmem_available(void);

/* it_pmem_map -- map size bytes of it (fails the role) */
void it_pmem_map(const struct it_env *env, size_t size, struct it_pmem *pm);

/* it_pmem_unmap -- unmap it; a file goes too */
void it_pmem_unmap(struct it_pmem *pm);

/*
 * it_file_map -- a new file `name` of size bytes in env's directory
 * (emptied if it was there), mapped shared; its descriptor into *fd
 * (fails the role). Whatever the transport: a file rpmad is to see.
 */
uint8_t *it_file_map(const struct it_env *env, const char *name, size_t size,
		int *fd);

/*
 * Remote accesses on request, for tests about the server's memory: the
 * server role calls it_remote_open (listen, take the client's
 * connection) and then asks the client role, running it_remote_helper,
 * to write the pattern of a seed into a registration of its own or to
 * read and check it there, each followed by a visibility flush;
 * it_remote_close ends it. Up to IT_REMOTE_MAX bytes at a time.
 */
#define IT_REMOTE_MAX (48u << 20)

/* the usage of a registration the client writes, reads and flushes */
#define IT_REMOTE_USAGE \
	(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC | \
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY)

/* it_page -- the size of a page, what such tests cut memory by */
size_t it_page(void);

enum it_remote_kind { IT_OP_END, IT_OP_WRITE, IT_OP_READ };

struct it_remote {
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_conn *conn;
	const struct it_env *env; /* it_remote_open's */
	void *arg; /* it_remote_server's: its case's */
};

/* what the client reports */
struct it_remote_res {
	int32_t status;		/* enum ibv_wc_status, -1: not done */
	int64_t mismatch;	/* IT_OP_READ: first byte not of the seed */
};

int it_remote_helper(const struct it_env *env, void *arg);
void it_remote_open(struct it_remote *r, const struct it_env *env);
void it_remote_close(struct it_remote *r);
struct it_remote_res it_remote_do(enum it_remote_kind kind,
		const struct rpma_mr_local *mr, size_t off, size_t len,
		uint32_t seed);
/* the client writes the pattern of seed into [off, off + len) of mr */
void it_remote_write(const struct rpma_mr_local *mr, size_t off, size_t len,
		uint32_t seed);
/* the client reads [off, off + len): the first byte not of seed, or -1 */
long it_remote_read(const struct rpma_mr_local *mr, size_t off, size_t len,
		uint32_t seed);

/*
 * A server role of such a test: `before` (may be NULL) runs first, to
 * become another user say, and its false skips `body` (the case cannot
 * be had here; it said why); `body` runs with r open (r->arg: the
 * case's arg), closed after it.
 */
typedef bool it_remote_before(const struct it_env *env, void *arg);
typedef void it_remote_fn(struct it_remote *r);

struct it_remote_case {
	it_remote_before *before;
	it_remote_fn *body;
	void *arg;
};

/* it_remote_server -- that role, an it_fn of a struct it_remote_case */
int it_remote_server(const struct it_env *env, void *arg);

/*
 * it_remote_run -- it_run_pair of it_remote_server (the case c) and
 * it_remote_helper on env
 */
int it_remote_run(const struct it_env *env, const struct it_remote_case *c);

/*
 * it_remote_test -- it_pair_test_cfg of it_remote_server (the case c)
 * against it_remote_helper
 */
void it_remote_test(int ndaemons, const char *config,
		const struct it_remote_case *c);

/* Fill and check byte patterns (seeded, position dependent). */
void it_fill(void *buf, size_t len, uint32_t seed);
/* Returns the offset of the first mismatch, or -1. */
long it_check(const void *buf, size_t len, uint32_t seed);

/* where pid's threads are (kernel and user stacks), to stderr: for a hang */
void it_dump_stacks(pid_t pid);

/* ---------------------------------------------- the daemon's view */

struct it_counts {
	uint32_t sessions;	/* clients, not counting the asking one */
	uint32_t peers, mrs, endpoints, conn_reqs, connections;
	uint64_t pinned_bytes;
};

/*
 * One admin session, kept open while a test looks (so that its own
 * descriptor in the daemon is constant rather than coming and going).
 */
struct it_admin {
	struct th_ctl ctl;
};

int it_admin_open(struct it_admin *a, const struct test_daemon *d);
void it_admin_close(struct it_admin *a);

/* it_admin_status -- AdminQuery STATUS; 0 or -1 */
int it_admin_status(struct it_admin *a, struct it_counts *c);

/*
 * it_admin_pids -- AdminQuery STATUS: the pid of the rpmad answering, and
 * the older ones it says still drain (at most max into draining, their
 * count into *n). 0, or -1 on error.
 */
int it_admin_pids(struct it_admin *a, pid_t *pid, pid_t *draining,
		size_t max, size_t *n);

/*
 * it_admin_client -- AdminQuery CLIENTS, the counts of the session of
 * `pid`. Returns 1 when found, 0 when pid has no session, -1 on error.
 */
int it_admin_client(struct it_admin *a, pid_t pid, struct it_counts *c);

/*
 * it_admin_mr -- AdminQuery MRS: the usage a registration of `pid` grants
 * and how a persistent flush into it persists (rpmactl's PERSISTENCE).
 * Returns 1 when found (the first of pid's), 0 when none, -1 on error.
 */
int it_admin_mr(struct it_admin *a, pid_t pid, uint32_t *usage,
		char *persistence, size_t len);

/*
 * it_admin_ep_pending -- the requests waiting at the endpoint on `port`:
 * all of them (origin NULL), or those of one origin among the largest
 * shares ("127.0.0.2", "uid 0"); 0 when none, -1 on error
 */
int it_admin_ep_pending(struct it_admin *a, const char *port,
		const char *origin);

/*
 * it_daemon_serves -- rpmad d still runs (same pid as at the start) and a
 * new admin session gets its status: 0, else -1
 */
int it_daemon_serves(const struct test_daemon *d, pid_t pid_at_start);

/*
 * Whether this is an AddressSanitizer build: its allocator maps regions
 * for itself as it goes, so a daemon's map count only comes back to a
 * baseline in plain builds.
 */
#if defined(__SANITIZE_ADDRESS__)
#define IT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IT_ASAN 1
#endif
#endif
#ifndef IT_ASAN
#define IT_ASAN 0
#endif

#endif /* ITEST_H */
