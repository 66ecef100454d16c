/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transport.h -- what moves the data: one interface, one table of
 * implementations (table.c), each in its own folder:
 *
 *   tcp/    the software transport, daemon to daemon over TCP
 *   verbs/  rdma-core (librdmacm, libibverbs) on RDMA NICs
 *
 * The core (conn.c, ep.c, qp.c) owns connections, their queue pairs and
 * every work request; a transport moves bytes and reports back through the
 * conn_* and ep_* functions named below. Work handed to a transport with
 * post() is completed by it exactly once, in the order it was posted, with
 * conn_work_done() -- unless the connection closes first: then the core
 * flushes whatever is left, and the transport forgets it in release().
 * What it holds meanwhile the core keeps for it ("in flight", conn.h):
 * works and receives in order, found and completed oldest first. A
 * connection is opaque to it: it keeps its own state there (conn_tp(),
 * conn_set_tp()) and reads what else it needs through conn.h's functions.
 */

#ifndef RPMAD_TRANSPORT_H
#define RPMAD_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct conn;
struct device;
struct ep;
struct incoming;
struct mr;
struct peer;
struct srq;
struct work;

/* rpmad.conf's tls (rpmad.conf(5)): the software transport's TLS */
enum transport_tls {
	TRANSPORT_TLS_OFF,
	TRANSPORT_TLS_ON,	/* TLS where the peer speaks it, plain else */
	TRANSPORT_TLS_REQUIRED,	/* authenticated TLS, nothing else */
};

/* What rpmad.conf says to the transports (rpmad.conf(5)). */
struct transport_settings {
	uint32_t tcp_timeout_ms;	/* a silent peer counts as lost after */
	uint32_t rnr_timeout_ms;	/* a send waits this long for a recv */
	/* connection set-up: a step that waits on the other rpmad or CM */
	uint32_t setup_timeout_ms;
	/* an outgoing request waits this long for the server application */
	uint32_t accept_timeout_ms;
	enum transport_tls tls;
	const char *tls_name;		/* as rpmad.conf writes it */
	char tls_psk_file[256];		/* its pre-shared keys' file */
};

struct origin;

/*
 * What rpmad gives a transport at init, instead of its own state: the
 * loop everything runs on, the settings (the same struct, updated in
 * place at a reload), and how to charge a log line to whoever caused it
 * (a local user's share, or a remote host's: clients/tenant.h).
 */
struct transport_env {
	struct loop *loop;
	struct transport_settings set;
	void (*log_origin)(const struct origin *o, int level,
			const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));
};

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
	 * (mr->rkey_id.rkey: the device's rkey, which remote peers use, unique
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
	 * of its device (srq.h). srq_create makes srq->tp_srq, srq_posted
	 * hands the client's new receives to it (srq_take), srq_destroy
	 * frees it once no queue pair uses it.
	 */
	int (*srq_create)(struct srq *srq, char *err, size_t errlen);
	void (*srq_posted)(struct srq *srq);
	void (*srq_destroy)(struct srq *srq);
};

/*
 * One transport, as the registry knows it: one entry in the table
 * (table.c). The registry sets transports up and down, asks them which
 * device serves an address and whether work still waits at shutdown; the
 * rest of rpmad reaches a transport only through device->tp.
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

#endif /* RPMAD_TRANSPORT_H */
