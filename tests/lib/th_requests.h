/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * th_requests.h -- rpmad's control requests (proto/rpmad.proto) built
 * for tests that speak the protocol themselves: one struct holds a
 * request, its body and what the body points to, so a test fills in only
 * what its case is about.
 *
 * Every builder starts from a fresh request (id 0: the session numbers
 * it) and returns &q->req; a NULL string stays the empty default.
 * Plain protobuf-c, no Check and no daemon: the fuzz targets and rpmad's
 * core in the verbs tests build with it too.
 */

#ifndef TH_REQUESTS_H
#define TH_REQUESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpmad.pb-c.h"

/* segments a registration built here may have (more than rpmad allows) */
#define TH_REQ_SEGS 70

struct th_req {
	Rpmad__Request req;
	/* the body: the member of its kind (th_req_new sets it up) */
	union {
		Rpmad__Hello hello;
		Rpmad__DeviceGet device_get;
		Rpmad__DeviceQuery device_query;
		Rpmad__PeerNew peer_new;
		Rpmad__PeerDelete peer_delete;
		Rpmad__MrReg mr_reg;
		Rpmad__MrDereg mr_dereg;
		Rpmad__MrAdvise mr_advise;
		Rpmad__EpListen ep_listen;
		Rpmad__EpShutdown ep_shutdown;
		Rpmad__EpNextConnReq ep_next_conn_req;
		Rpmad__ConnReqNew conn_req_new;
		Rpmad__ConnReqDelete conn_req_delete;
		Rpmad__ConnReqConnect conn_req_connect;
		Rpmad__ConnNextEvent conn_next_event;
		Rpmad__ConnDisconnect conn_disconnect;
		Rpmad__ConnDelete conn_delete;
		Rpmad__SrqNew srq_new;
		Rpmad__SrqDelete srq_delete;
		Rpmad__AdminQuery admin_query;
		Rpmad__AdminEvict admin_evict;
		Rpmad__AdminUpgrade admin_upgrade;
	} u;
	/* what the body points to: the queue sizes, the segments */
	Rpmad__ConnCfg cfg;
	Rpmad__Segment seg[TH_REQ_SEGS];
	Rpmad__Segment *segp[TH_REQ_SEGS];
};

/*
 * th_req_new -- a request of this kind with its body all defaults;
 * returns the body (the member of q->u of that kind), or NULL for a kind
 * the protocol does not have
 */
void *th_req_new(struct th_req *q, Rpmad__Request__BodyCase kind);

/*
 * th_req_id -- a request of a kind whose body names one object first
 * (PEER_DELETE, MR_DEREG, MR_ADVISE, EP_SHUTDOWN, EP_NEXT_CONN_REQ,
 * CONN_REQ_DELETE, CONN_REQ_CONNECT, CONN_NEXT_EVENT, CONN_DISCONNECT,
 * CONN_DELETE, SRQ_DELETE, PEER_NEW's device, ...), naming `id`; NULL
 * when the kind's first field is no id
 */
Rpmad__Request *th_req_id(struct th_req *q, Rpmad__Request__BodyCase kind,
		uint64_t id);

/* th_req_hello -- this build's protocol version, client `name` */
Rpmad__Request *th_req_hello(struct th_req *q, const char *name);

/* th_req_device_get -- the device of addr, as a local or remote one */
Rpmad__Request *th_req_device_get(struct th_req *q, const char *addr,
		bool remote);

/*
 * th_req_mr_reg -- a registration of `len` bytes at `addr` (the
 * application's pointer) of one segment: descriptor 0 from offset 0, as
 * the library passes a memfd; q->u.mr_reg and q->seg for more
 */
Rpmad__Request *th_req_mr_reg(struct th_req *q, uint64_t peer, uint64_t addr,
		uint64_t len, uint32_t usage);

/* th_req_mr_advise -- advice on [off, off + len) of a registration */
Rpmad__Request *th_req_mr_advise(struct th_req *q, uint64_t mr, uint64_t off,
		uint64_t len, int32_t advice);

/* th_req_ep_listen -- an endpoint of peer at addr:port */
Rpmad__Request *th_req_ep_listen(struct th_req *q, uint64_t peer,
		const char *addr, const char *port);

/*
 * th_req_ep_next -- the next connection request of an endpoint, with
 * queue sizes q->cfg (all 0: the daemon's defaults; set them after)
 */
Rpmad__Request *th_req_ep_next(struct th_req *q, uint64_t ep);

/* th_req_conn_req_new -- a connection to addr:port, queue sizes q->cfg */
Rpmad__Request *th_req_conn_req_new(struct th_req *q, uint64_t peer,
		const char *addr, const char *port);

/* th_req_connect -- connect a request with `len` bytes of private data */
Rpmad__Request *th_req_connect(struct th_req *q, uint64_t conn,
		const void *pdata, size_t len);

/* th_req_admin -- an admin query of this kind */
Rpmad__Request *th_req_admin(struct th_req *q, Rpmad__AdminQuery__Kind kind);

#endif /* TH_REQUESTS_H */
