/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transport.h -- what a transport sees of rpmad, and all it sees: a
 * transport (tcp/, verbs/) includes this header alone, besides its own
 * and the system's and common/ (the build checks it:
 * scripts/check-transport.sh).
 *
 * A transport moves the data: rpmad hands it the settings and services of
 * struct transport_env at init, calls it through struct transport_ops
 * (its device's) and struct transport_entry (its line in the table,
 * table.c), and the transport reports back through the functions below,
 * which the objects define (conn*.c, ep.c, srq.c, mr*.c, device.c,
 * peer.c): the upcalls. It builds on the loop, the log and the client
 * memory batches of rpmad, whose headers come with this one.
 *
 * The objects (conn*.c, ep.c, qp.c) own connections, their queue pairs and
 * every work request. Work handed to a transport with post() is completed
 * by it exactly once, in the order it was posted, with conn_work_done()
 * -- unless the connection closes first: then the objects flush whatever
 * is left, and the transport forgets it in release(). What it holds
 * meanwhile the objects keep for it ("in flight", below): works and
 * receives in order, found and completed oldest first. A connection,
 * an endpoint, a peer, a registration and a shared receive queue are
 * opaque to it: it keeps its own state in each (conn_tp(),
 * conn_set_tp(), ...) and reads what else it needs through the
 * functions below. Works, receives and incoming requests are the data
 * handed over, and stay open.
 */

#ifndef RPMAD_TRANSPORT_H
#define RPMAD_TRANSPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <infiniband/verbs.h> /* completion statuses and opcodes */

#include "clients/as_worker.h"
#include "conn_pdata.h"
#include "core/netns.h"
#include "core/random.h"
#include "librpma.h"
#include "log/log.h"
#include "log/origin.h"
#include "log/remote_log.h"
#include "log/rlog.h"
#include "loop/backoff.h"
#include "loop/fairq.h"
#include "loop/loop.h"
#include "qp_region.h" /* a work's opcode: enum qp_sq_opcode */

struct addrspace;
struct conn;
struct device;
struct ep;
struct mr;
struct peer;
struct srq;

/* ------------------------------------------------ what rpmad hands in */

/* rpmad.conf's tls (rpmad.conf(5)): the software transport's TLS */
enum transport_tls {
	TRANSPORT_TLS_OFF,
	TRANSPORT_TLS_ON, /* TLS where the peer speaks it, plain else */
	TRANSPORT_TLS_REQUIRED, /* authenticated TLS, nothing else */
};

/* What rpmad.conf says to the transports (rpmad.conf(5)). */
struct transport_settings {
	uint32_t tcp_timeout_ms; /* a silent peer counts as lost after */
	uint32_t rnr_timeout_ms; /* a send waits this long for a recv */
	/* connection set-up: a step that waits on the other rpmad or CM */
	uint32_t setup_timeout_ms;
	/* an outgoing request waits this long for the server application */
	uint32_t accept_timeout_ms;
	enum transport_tls tls;
	const char *tls_name; /* as rpmad.conf writes it */
	char tls_psk_file[256]; /* its pre-shared keys' file */
};

/*
 * What rpmad gives a transport at init, instead of its own state: the
 * loop everything runs on, the settings (the same struct, updated in
 * place at a reload), and how to charge a log line to whoever caused it
 * (a local user's share, or a remote host's: clients/tenant.h's
 * tenant_vlog_from).
 */
struct transport_env {
	struct loop *loop;
	struct transport_settings set;
	void (*vlog_from)(const struct origin *o, int level, const char *fmt,
			va_list ap) __attribute__((format(printf, 3, 0)));
};

/* ---------------------------------------- the data handed over */

/* A validated work request from the SQ. */
struct work {
	uint32_t sq_index;
	uint8_t opcode; /* enum qp_sq_opcode */
	bool signaled;
	bool persistent;
	uint32_t imm; /* network byte order */
	uint32_t length;
	uint64_t wr_id;
	uint64_t laddr; /* the client's address of its local buffer */
	struct mr *lmr; /* referenced while the work is in flight */
	uint32_t rkey;
	uint64_t raddr;
	uint64_t posted_ns;
	/*
	 * its number once handed over: 1, 2, ... in the order the transport
	 * takes them, set before post() sees it (what a transport matches
	 * answers and completions with)
	 */
	uint64_t tp_seq;
	struct work *next; /* the next one in flight */
};

/* A posted receive taken for an incoming message. */
struct recv_slot {
	uint64_t wr_id;
	uint64_t addr; /* the client's address of the buffer */
	uint32_t length;
	struct mr *mr; /* referenced until conn_recv_done() */
	uint64_t tp_seq; /* its number once handed over, as a work's */
	uint32_t rq_index; /* its entry's index in the connection's RQ */
	bool shared; /* from a shared RQ: rq_index means nothing */
};

/* A connection request that arrived and waits for the application. */
struct incoming {
	struct ep *ep;
	void *tp_state; /* the transport's connection state */
	uint8_t pdata[CONN_PDATA_MAX];
	uint8_t pdata_len;
	struct sockaddr_storage local, remote;
	socklen_t remote_len;
	/*
	 * The transport sets these when the connecting end is a client of
	 * this very rpmad: the request is then that user's doing, not its
	 * address's (every local client shares the address).
	 */
	bool from_local;
	uid_t from_uid;
	struct origin origin; /* ep.c's: whose share it is */
	struct incoming *prev, *next; /* its origin's, oldest first */
};

/* ----------------------------------------- what a transport provides */

struct transport_ops {
	const char *name;
	/*
	 * receives go to the transport as soon as the client posts them
	 * (recv_posted() whenever the RQ has entries), not only when a
	 * message waits for one (verbs: the device holds them)
	 */
	bool eager_recv;
	/*
	 * its devices are the kernel's (RDMA): they take commands only from
	 * the credentials that opened them, so rpmad keeps its identity
	 */
	bool kernel_devices;
	/*
	 * its device carries a persistent flush itself (verbs: an RDMA read
	 * after the writes) and the target's rpmad never hears of it: only
	 * memory the device writes into the persistence domain directly
	 * (DAX) can be made persistent there, not a page cache to write back
	 */
	bool device_flushes;

	/*
	 * optional: protection domains and memory registration (verbs).
	 * mr_register may name the registration's remote key itself
	 * (mr_set_rkey(): the device's rkey, which remote peers use, unique
	 * on the device; 0 for none); rpmad's lkey stays its own.
	 */
	int (*pd_alloc)(struct peer *peer, char *err, size_t errlen);
	void (*pd_free)(struct peer *peer);
	int (*mr_register)(struct mr *mr, char *err, size_t errlen);
	void (*mr_deregister)(struct mr *mr);
	int (*mr_advise)(struct mr *mr, uint64_t offset, uint64_t len,
			int advice, uint32_t flags, char *err, size_t errlen);

	/* endpoints: listen at an address; incoming requests arrive with
	 * ep_incoming() */
	int (*listen)(struct ep *ep, const struct sockaddr_storage *ss,
			socklen_t len, char *err, size_t errlen);
	void (*unlisten)(struct ep *ep);

	/* an incoming request: nobody will take it (reject, free) */
	void (*incoming_drop)(struct incoming *inc, bool reject);
	/* the request becomes the transport state of a passive conn */
	int (*adopt)(struct conn *conn, struct incoming *inc, char *err,
			size_t errlen);

	/* connection set-up and tear-down; outcomes via conn_established()
	 * and conn_ended() */
	int (*connect)(struct conn *conn, const void *pdata, uint8_t pdata_len,
			char *err, size_t errlen);
	int (*accept)(struct conn *conn, const void *pdata, uint8_t pdata_len,
			char *err, size_t errlen);
	void (*reject)(struct conn *conn);
	void (*disconnect)(struct conn *conn);
	/* forget the connection; `abort`: close without the orderly goodbye */
	void (*release)(struct conn *conn, bool abort);

	/*
	 * data path: 0 (completed already, or kept: conn_work_handed()), or
	 * -EAGAIN when it cannot take more now
	 */
	int (*post)(struct conn *conn, struct work *w);
	/* the client posted receives: a message waiting for one may land */
	void (*recv_posted)(struct conn *conn);

	/*
	 * optional, for a transport with eager_recv: shared receive queues
	 * of its device. srq_create makes the transport's queue (srq_tp()),
	 * srq_posted hands the client's new receives to it (srq_take),
	 * srq_destroy frees it once no queue pair uses it.
	 */
	int (*srq_create)(struct srq *srq, char *err, size_t errlen);
	void (*srq_posted)(struct srq *srq);
	void (*srq_destroy)(struct srq *srq);
};

/*
 * One transport, as the registry knows it: one entry in the table
 * (table.c). The registry sets transports up and down, asks them which
 * device serves an address and whether work still waits at shutdown; the
 * rest of rpmad reaches a transport only through its device's ops.
 */
struct transport_entry {
	const char *name;		/* as in --transport and rpmad.conf */
	const struct transport_ops *ops;
	/*
	 * the fallback is set up whatever the choice and answers for every
	 * address no other transport serves (the software device)
	 */
	bool fallback;
	/* what its devices are called, for "no RDMA device serves ..." */
	const char *device_noun;

	/*
	 * optional: take rpmad.conf's settings, at start (before init: also
	 * for --check-config) and at every reload; 0, or a negative errno
	 * with the reason in err (nothing changed then)
	 */
	int (*configure)(const struct transport_settings *set, char *err,
			size_t errlen);
	/*
	 * 0, or a negative errno when rpmad cannot start; env stays valid
	 * until fini
	 */
	int (*init)(const struct transport_env *env);
	void (*fini)(void);
	/*
	 * the device serving the address (as the local address of a listener
	 * when `local`, else as a destination), or NULL
	 */
	struct device *(*device_for)(const struct sockaddr_storage *ss,
			socklen_t len, bool local);
	/* optional: whether work still waits to leave (shutdown waits) */
	bool (*pending)(void);
};

/* ------------------------------------------- what rpmad offers: upcalls */

/* Devices (device.c; device_let_go: device_gone.c). */

#define SOFTWARE_DEVICE_NAME "rpmad_tcp"

/* device_add -- a device made by a transport, owned by the list */
struct device *device_add(const char *name, const struct transport_ops *tp,
		bool odp_capable, void *tp_dev);

/* its id, name, whether it pages on demand (ODP), the transport's state */
uint32_t device_id(const struct device *dev);
const char *device_name(const struct device *dev);
bool device_odp(const struct device *dev);
void *device_tp(const struct device *dev);

/*
 * device_let_go -- the device went away: what clients hold on it goes
 * through its transport's ops (unlisten, mr_deregister, pd_free); their
 * endpoints, registrations and peers stay until they delete them
 */
void device_let_go(struct device *dev);

/* device_set_gone -- a removed device: its name says so from now on */
void device_set_gone(struct device *dev);

/* Peers, the protection domains of a client's objects (peer.c). */

/* peer_device -- the device it was made on */
struct device *peer_device(const struct peer *peer);

/* peer_tp, peer_set_tp -- the transport's protection domain, or NULL */
void *peer_tp(const struct peer *peer);
void peer_set_tp(struct peer *peer, void *tp_pd);

/* Registrations: a client's memory as rpmad reaches it (mr*.c). */

/* What an access needs from a registration's usage. */
enum mr_access {
	MR_LOCAL_READ, /* source of a write or send */
	MR_LOCAL_WRITE, /* destination of a read or receive */
	MR_REMOTE_READ, /* a peer reads it (read, flush) */
	MR_REMOTE_WRITE, /* a peer writes it (write, atomic write) */
	MR_REMOTE_PERSIST, /* a peer flushes it to persistence */
};

void mr_get(struct mr *mr);
void mr_put(struct mr *mr);

/* mr_peer -- the peer it was made in */
struct peer *mr_peer(const struct mr *mr);

/* mr_tp, mr_set_tp -- the transport's registration, or NULL */
void *mr_tp(const struct mr *mr);
void mr_set_tp(struct mr *mr, void *tp_mr);

/* the client's range [addr, addr + length), and what its usage grants */
uint64_t mr_addr(const struct mr *mr);
uint64_t mr_length(const struct mr *mr);
uint32_t mr_usage(const struct mr *mr);

/* mr_writable -- whether rpmad may store into it (a read-only file not) */
bool mr_writable(const struct mr *mr);

/*
 * mr_map -- rpmad's address of the client's addr, where a device
 * registers it: all of it is mapped then (the library moves a client's
 * private pages into its memfd for RDMA devices)
 */
void *mr_map(const struct mr *mr);

/* mr_dax -- whether some of it is DAX memory (the CPU flushes its caches) */
bool mr_dax(const struct mr *mr);

/*
 * mr_rkey, mr_set_rkey -- what remote peers name it by: the lkey on the
 * software device, the device's rkey on an RDMA device (its mr_register
 * sets it; 0 when remote access is not granted, as in verbs)
 */
uint32_t mr_rkey(const struct mr *mr);
void mr_set_rkey(struct mr *mr, uint32_t rkey);

/* mr_on_demand, mr_set_on_demand -- whether the NIC faults pages in (ODP) */
bool mr_on_demand(const struct mr *mr);
void mr_set_on_demand(struct mr *mr, bool on_demand);

/* mr_addrspace -- the client's memory its in-process segments are in */
struct addrspace *mr_addrspace(const struct mr *mr);

/*
 * Persisting the client's [addr, addr + len) (pages the client no longer
 * has have nothing to persist), in two parts:
 * mr_persist_cpu -- the DAX segments' cache flushes: CPU work of about
 * the length, on the loop (the caller cuts it into slices)
 * mr_persist_needs_msync -- whether the range has page-cache segments,
 * which mr_sync_start() writes back
 */
void mr_persist_cpu(struct mr *mr, uint64_t addr, uint64_t len);
bool mr_persist_needs_msync(const struct mr *mr, uint64_t addr, uint64_t len);

/* on the loop, once the range was written back: 0 or msync's -errno */
struct mr_sync;
typedef void mr_sync_done_fn(void *arg, int result);

/*
 * mr_sync_start -- msync the page-cache segments of mr's [addr, addr +
 * len) in the thread of core/offload.h; done(arg, result) follows on the
 * loop. The registration is held meanwhile. NULL when it was done at
 * once, here (the thread cannot run): *result is its outcome then.
 */
struct mr_sync *mr_sync_start(struct mr *mr, uint64_t addr, uint64_t len,
		mr_sync_done_fn *done, void *arg, int *result);

/* mr_sync_forget -- its owner goes first: done is not called */
void mr_sync_forget(struct mr_sync *s);

/*
 * The bytes of a registration, either way (mr_io.c, whose header says
 * how): addresses are the client's, the caller has checked that the range
 * lies inside the registration and that the usage allows the access.
 * Pages the client no longer has do not fail an access: writes into them
 * are dropped and reads return zeros, as an RDMA NIC's.
 */

/* mr_io_read -- the client's [addr, addr + len) into buf */
void mr_io_read(struct mr *mr, uint64_t addr, void *buf, size_t len);

/*
 * mr_io_write_part -- buf into the client's [addr, addr + len), a part of
 * a write of op_len bytes, which arrives in pieces: the whole write's size
 * decides the way it goes, so that its pieces all take the same
 */
void mr_io_write_part(struct mr *mr, uint64_t addr, const void *buf, size_t len,
		uint64_t op_len);

/* mr_io_store64 -- one aligned 8-byte store at the client's addr */
void mr_io_store64(struct mr *mr, uint64_t addr, uint64_t value);

/*
 * mr_io_copy -- len bytes from one registration to another, a part of a
 * write of op_len bytes (as mr_io_write_part: a copy goes in slices, and
 * a slice the arbiter shortened takes the way of the whole write)
 */
void mr_io_copy(struct mr *dst, uint64_t daddr, struct mr *src, uint64_t saddr,
		size_t len, uint64_t op_len);

/*
 * mr_io_direct -- rpmad's own address of the client's [addr, addr + len)
 * when all of it is mapped in rpmad, for system calls that move bytes
 * straight out of it (writev: EFAULT tells them of a lost page, and the
 * caller then goes through mr_io_read); NULL when part of it is reached
 * only through the client's address space.
 * mr_io_direct_write -- the same for storing len bytes of a write of
 * op_len into it (recv, then mr_io_write_part after EFAULT): NULL also
 * where that write goes through a write descriptor.
 */
void *mr_io_direct(const struct mr *mr, uint64_t addr, uint64_t len);
void *mr_io_direct_write(const struct mr *mr, uint64_t addr, uint64_t len,
		uint64_t op_len);

/*
 * mr_io_in_process -- whether any of the client's [addr, addr + len) is
 * reached through the client's address space: such bytes are moved by
 * the client's thread (clients/as_worker.h), never on the loop
 */
bool mr_io_in_process(const struct mr *mr, uint64_t addr, uint64_t len);

/* Listening endpoints and the requests waiting at them (ep.c). */

/*
 * Most requests that may wait at one endpoint for the application. They
 * are shared fairly between their origins (origin.h: the remote hosts,
 * or the users of this rpmad they come from): the application is handed
 * one origin's request after another's, and a request arriving at a full
 * queue takes the place of the newest of the origin with the most, as
 * long as that one has more than its own; else it is refused. So one
 * origin's flood cannot keep another's requests out or behind it.
 */
#define EP_BACKLOG 1024

/* ep_tp -- the transport's own state of the endpoint, or NULL */
void *ep_tp(const struct ep *ep);

/* ep_set_tp -- set it (NULL: the transport let go, in unlisten()) */
void ep_set_tp(struct ep *ep, void *tp_ep);

/* ep_peer -- the client's peer the endpoint listens on */
struct peer *ep_peer(const struct ep *ep);

/* ep_addr, ep_port -- where it listens, as the client said (log lines) */
const char *ep_addr(const struct ep *ep);
const char *ep_port(const struct ep *ep);

/* ep_netns -- its client's network namespace (core/netns.h; -1: rpmad's) */
int ep_netns(const struct ep *ep);

/*
 * ep_incoming -- a transport's new request for the endpoint. Returns 0
 * (it may have taken the place of another origin's, which the transport
 * was told to drop, rejecting it), or -ENOBUFS when the queue is full and
 * its origin has its share already (logged, charged to its origin; the
 * transport rejects it then).
 */
int ep_incoming(struct ep *ep, struct incoming *inc);

/* Connections (conn.c, conn_work.c, conn_poll.c, conn_life.c). */

/*
 * conn_activate -- put the connection on the poller's list (its transport
 * made progress or changed its state); every conn_* call below does it
 */
void conn_activate(struct conn *conn);

/* conn_established -- the connection is up; the active side gets pdata */
void conn_established(struct conn *conn, const void *pdata, uint8_t len,
		bool has_pdata);

/*
 * Two outcomes that rpmad tells apart in its log and in rpmactl, beyond
 * librpma 0.12's events; the application sees what 0.12 shows for them
 * (docs/internals.md, "Connection outcomes"):
 * CONN_END_REFUSED      nothing listens at the address: RPMA_CONN_REJECTED,
 *                       as an RDMA CM peer without a listener answers;
 * CONN_END_UNREACHABLE  no route, or no answer within the timeout: 0.12
 *                       has no event for RDMA_CM_EVENT_UNREACHABLE and its
 *                       rpma_conn_next_event fails with RPMA_E_UNKNOWN.
 * Values outside the enum's: never compare them in a switch.
 */
#define CONN_END_REFUSED ((enum rpma_conn_event) 100)
#define CONN_END_UNREACHABLE ((enum rpma_conn_event) 101)

/*
 * conn_ended -- the connection is over (CLOSED, LOST, REJECTED, or one of
 * the CONN_END_* above). The transport must not touch the connection's
 * work after this; release() follows from the poller.
 */
void conn_ended(struct conn *conn, enum rpma_conn_event event);

/*
 * In flight: what a transport took and has not completed yet, kept here
 * for every transport. post() offers one work at a time, in SQ order; the
 * transport that keeps it says so with conn_work_handed(), then completes
 * the oldest (conn_work_oldest(), conn_work_done()) until none is left,
 * or all of them at once when its queue pair fails (conn_work_flush()).
 * Receives go the same way (conn_take_recv(), conn_recv_handed(),
 * conn_recv_oldest(), conn_recv_done(), conn_recv_flush()). What it
 * completes at once it never hands over. When the connection ends, the
 * core flushes what is still in flight after release().
 */

/* conn_work_handed -- the transport took w (given by post()) */
void conn_work_handed(struct conn *conn, struct work *w);

/* conn_work_oldest -- the oldest work in flight, or NULL */
struct work *conn_work_oldest(const struct conn *conn);

/*
 * conn_work_refused -- in post(): the transport cannot start w (say, the
 * client's memory cannot be read); it completes with `status` in its
 * turn, once the work in flight before it completed, and the queue pair
 * fails then. Nothing after it is offered.
 */
void conn_work_refused(struct conn *conn, struct work *w,
		enum ibv_wc_status status);

/* conn_works_in_flight -- how many works are in flight */
uint32_t conn_works_in_flight(const struct conn *conn);

/* conn_work_last_seq -- the newest handed work's number (0: none yet) */
uint64_t conn_work_last_seq(const struct conn *conn);

/*
 * conn_work_done -- complete a work: the oldest in flight (it leaves the
 * list), or one that post() was given and the transport did not hand
 * over while nothing is in flight. After completing one with an error,
 * the transport completes every later work it holds with
 * IBV_WC_WR_FLUSH_ERR (conn_work_flush()).
 */
void conn_work_done(struct conn *conn, struct work *w,
		enum ibv_wc_status status);

/*
 * conn_work_flush -- complete every work in flight, oldest first, with
 * IBV_WC_WR_FLUSH_ERR (the transport's queue pair failed)
 */
void conn_work_flush(struct conn *conn);

/*
 * conn_qp_error -- the queue pair failed but the connection stays up
 * (the transport has completed its own work already): flush the rest.
 */
void conn_qp_error(struct conn *conn);

/*
 * conn_take_recv -- the next posted receive for a message of `len` bytes
 * (0: any), in *rs (the connection's; valid until it is completed or the
 * next one is taken). Returns 0; -EAGAIN when none is posted (the
 * transport hears recv_posted() when one is); -EPROTO when the receive is
 * invalid or too small (it was completed with an error and the queue pair
 * failed).
 */
int conn_take_recv(struct conn *conn, uint32_t len, struct recv_slot **rs);

/* conn_recv_handed -- the transport holds the receive it just took */
void conn_recv_handed(struct conn *conn, struct recv_slot *rs);

/* conn_recv_oldest -- the oldest receive in flight, or NULL */
struct recv_slot *conn_recv_oldest(const struct conn *conn);

/* conn_recvs_in_flight -- how many receives are in flight */
uint32_t conn_recvs_in_flight(const struct conn *conn);

/*
 * conn_recv_filled -- the first `bytes` of a message are in the receive's
 * buffer: the client may copy them out of its staging before the
 * completion (common/qp_region.h, rq_filled)
 */
void conn_recv_filled(struct conn *conn, const struct recv_slot *rs,
		uint32_t bytes);

/*
 * conn_recv_done -- complete a receive: the oldest in flight, or the one
 * just taken and not handed over
 */
void conn_recv_done(struct conn *conn, struct recv_slot *rs,
		enum ibv_wc_status status, uint32_t byte_len,
		enum ibv_wc_opcode opcode, bool with_imm, uint32_t imm);

/*
 * conn_recv_flush -- complete every receive in flight, oldest first, with
 * IBV_WC_WR_FLUSH_ERR
 */
void conn_recv_flush(struct conn *conn);

/*
 * conn_target_access -- check a remote access to this connection's peer
 * (key, bounds, usage) and find its registration. 0, or -EACCES.
 */
int conn_target_access(struct conn *conn, uint32_t rkey, uint64_t raddr,
		uint64_t len, enum mr_access access, struct mr **mrp);

/*
 * conn_count_served -- the peer's operation (enum qp_sq_opcode) on this
 * connection's memory succeeded here, the target
 */
void conn_count_served(struct conn *conn, uint8_t opcode, uint64_t len);

/* conn_srq -- the shared RQ its receives come from (1.x), or NULL */
struct srq *conn_srq(const struct conn *conn);

/* conn_set_names -- the addresses shown by rpmactl (NULL: unchanged) */
void conn_set_names(struct conn *conn, const struct sockaddr_storage *local,
		const struct sockaddr_storage *remote);

/*
 * The connection's facts a transport needs. Cheap calls: post() and a
 * transport's completions take conn_tp() and conn_qp_failed() for every
 * work.
 */

/* conn_tp -- the transport's own state of the connection, or NULL */
void *conn_tp(const struct conn *conn);

/* conn_set_tp -- set it (NULL: the transport let go, in release()) */
void conn_set_tp(struct conn *conn, void *tp_conn);

/* conn_qp_num -- the queue pair number the client knows it by */
uint32_t conn_qp_num(const struct conn *conn);

/* conn_uid -- the user of the client that owns it */
uid_t conn_uid(const struct conn *conn);

/* conn_netns -- its client's network namespace (core/netns.h; -1: rpmad's) */
int conn_netns(const struct conn *conn);

/* conn_peer -- the client's peer the connection was made on */
struct peer *conn_peer(const struct conn *conn);

/*
 * conn_remote -- where an outgoing request connects to, or where an
 * incoming one came from (its length in *len)
 */
const struct sockaddr_storage *conn_remote(const struct conn *conn,
		socklen_t *len);

/* conn_remote_name -- the remote address as the log and rpmactl show it */
const char *conn_remote_name(const struct conn *conn);

/*
 * conn_log -- a log line about the connection: for one that came in,
 * charged to whoever sent the request, at every level (a remote host's
 * share, remote_log.h, or a local user's, tenant.h; "(from ORIGIN)" is
 * added); for one its client made, a line as any other (bounded by the
 * client's connections)
 */
void conn_log(const struct conn *conn, int level, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));

/* conn_timeout_ms -- the client's connection timeout (0: the default) */
uint32_t conn_timeout_ms(const struct conn *conn);

/*
 * conn_qp_failed -- the queue pair failed: every further work request is
 * flushed (conn_work_flush(), conn_qp_error())
 */
bool conn_qp_failed(const struct conn *conn);

/* conn_qp_layout -- its shared queue pair's layout: the rings' depths */
const struct qp_layout *conn_qp_layout(const struct conn *conn);

/* conn_fairq -- whose share of the data path its work is (fairq.h) */
struct fairq_tenant *conn_fairq(const struct conn *conn);

/*
 * Shared receive queues (srq.c), for a transport that holds receives
 * itself (verbs): its queue of the device, the client's receives in its
 * hands kept by slot until a queue pair's completion names one.
 */

/* srq_peer -- the peer it was made in */
struct peer *srq_peer(const struct srq *srq);

/* srq_tp, srq_set_tp -- the transport's queue, or NULL */
void *srq_tp(const struct srq *srq);
void srq_set_tp(struct srq *srq, void *tp_srq);

/* srq_slots -- how many receives the transport's queue may hold */
uint32_t srq_slots(const struct srq *srq);

/*
 * srq_take -- the client's next posted receive, for the transport's queue:
 * its slot in *rs, the wr_id to give the device in *wr_id. 0, -EAGAIN
 * (none posted, or every slot in the device's hands), -EPROTO (the region
 * is corrupted). A receive naming memory it may not use completes at once
 * with IBV_WC_LOC_PROT_ERR and the next is taken.
 */
int srq_take(struct srq *srq, struct recv_slot **rs, uint64_t *wr_id);

/* srq_untake -- the device refused the receive just taken: it is flushed */
void srq_untake(struct srq *srq, uint64_t wr_id);

/*
 * srq_done -- the device completed receive wr_id on conn's queue pair
 * (conn_recv_done's arguments); an unknown wr_id is ignored
 */
void srq_done(struct srq *srq, uint64_t wr_id, struct conn *conn,
		enum ibv_wc_status status, uint32_t byte_len,
		enum ibv_wc_opcode opcode, bool with_imm, uint32_t imm);
#endif /* RPMAD_TRANSPORT_H */
