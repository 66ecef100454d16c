/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transport.h -- what moves the data: one interface, two implementations
 *
 *   transport_tcp    the software transport, daemon to daemon over TCP
 *   transport_verbs  rdma-core (librdmacm, libibverbs) on RDMA NICs
 *
 * The core (conn.c, ep.c, qp.c) owns connections, their queue pairs and
 * every work request; a transport moves bytes and reports back through the
 * conn_* and ep_* functions named below. Work handed to a transport with
 * post() is completed by it exactly once, in the order it was posted, with
 * conn_work_done() -- unless the connection closes first: then the core
 * flushes whatever is left, and the transport forgets it in release().
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
struct work;

struct transport_ops {
	const char *name;
	/*
	 * receives go to the transport as soon as the client posts them
	 * (recv_posted() whenever the RQ has entries), not only when a
	 * message waits for one (verbs: the device holds them)
	 */
	bool eager_recv;

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

	/* data path: 0, or -EAGAIN when it cannot take more now */
	int (*post)(struct conn *conn, struct work *w);
	/* the client posted receives: a message waiting for one may land */
	void (*recv_posted)(struct conn *conn);
};

extern const struct transport_ops transport_tcp;
extern const struct transport_ops transport_verbs;

/* transport_tcp_init -- set up the software transport; 0 or -1 */
int transport_tcp_init(void);
void transport_tcp_fini(void);

/*
 * transport_verbs_init -- find the RDMA devices there are (none is not an
 * error: every address then goes to the software transport)
 */
void transport_verbs_init(void);

/* transport_verbs_fini -- release rpmad's CM channel and devices */
void transport_verbs_fini(void);

/* transport_tcp_pending -- whether frames still wait to be sent */
bool transport_tcp_pending(void);

/*
 * transport_verbs_device_for -- the RDMA device serving the address (as
 * the local address of a listener when `local`, else as a destination), or
 * NULL when no RDMA device does (or verbs support is unavailable).
 */
struct device *transport_verbs_device_for(const struct sockaddr_storage *ss,
		socklen_t len, bool local);

#endif /* RPMAD_TRANSPORT_H */
