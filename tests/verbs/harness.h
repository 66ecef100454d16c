/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * harness.h -- rpmad's core in the test process, driven like a client
 * would: requests go straight to the daemon's handlers, work and receives
 * into the shared rings, completions and events are read back, and the
 * daemon's loop runs when the test says so
 */

#ifndef VERBS_HARNESS_H
#define VERBS_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "objects/conn.h"
#include "objects/qp.h"
#include "qp_region.h"
#include "rpmad.pb-c.h"

struct session;

/* What a request answered. */
struct h_reply {
	int code;		/* 0 or RPMA_E_* */
	char msg[512];
	uint64_t id;		/* peer, mr, ep or conn */
	uint32_t key;		/* a registration's rkey */
	uint32_t lkey;
	uint32_t device_id;
	char name[64], transport[16];
	bool odp;
	int event;
	bool has_pdata;
	uint8_t pdata[255];
	size_t pdata_len;
};

/* h_setup -- rpmad's state, loop and software device, transport auto */
void h_setup(void);

/* h_configure -- rpmad.cfg's settings (changed by a test) to the transports */
void h_configure(void);

/*
 * h_teardown -- every session destroyed, the verbs transport closed; fails
 * the test when a fake device object is still alive
 */
void h_teardown(void);

struct session *h_session(void);

/* h_run -- run the daemon's loop for about `ms` milliseconds */
void h_run(unsigned ms);

/* ---- requests ---- */

/*
 * h_by_id -- a request of a kind that names one object (tests/lib's
 * th_req_id), through rpmad's handler of that kind
 */
void h_by_id(struct session *s, Rpmad__Request__BodyCase kind, uint64_t id,
		struct h_reply *r);

#define h_peer_new(s, device_id, r) \
	h_by_id(s, RPMAD__REQUEST__BODY_PEER_NEW, device_id, r)
#define h_peer_delete(s, peer, r) \
	h_by_id(s, RPMAD__REQUEST__BODY_PEER_DELETE, peer, r)
#define h_mr_dereg(s, mr, r) h_by_id(s, RPMAD__REQUEST__BODY_MR_DEREG, mr, r)
#define h_ep_shutdown(s, ep, r) \
	h_by_id(s, RPMAD__REQUEST__BODY_EP_SHUTDOWN, ep, r)
#define h_next_event(s, conn, r) \
	h_by_id(s, RPMAD__REQUEST__BODY_CONN_NEXT_EVENT, conn, r)
#define h_disconnect(s, conn, r) \
	h_by_id(s, RPMAD__REQUEST__BODY_CONN_DISCONNECT, conn, r)
#define h_conn_delete(s, conn, r) \
	h_by_id(s, RPMAD__REQUEST__BODY_CONN_DELETE, conn, r)
#define h_req_delete(s, conn, r) \
	h_by_id(s, RPMAD__REQUEST__BODY_CONN_REQ_DELETE, conn, r)

void h_device_get(struct session *s, const char *addr, bool remote,
		struct h_reply *r);

/* The client's memory: a sealed memfd mapped into the test. */
struct h_mem {
	uint8_t *ptr;
	size_t len;
	int fd;
	uint64_t mr_id;
	uint32_t key;		/* the rkey */
	uint32_t lkey;
};
void h_mem_new(struct h_mem *m, size_t len);
void h_mem_free(struct h_mem *m);
void h_mr_reg(struct session *s, uint64_t peer, struct h_mem *m,
		uint32_t usage, struct h_reply *r);
void h_mr_advise(struct session *s, uint64_t mr, uint64_t off, uint64_t len,
		int advice, struct h_reply *r);
struct mr *h_mr(struct session *s, uint64_t id);

void h_ep_listen(struct session *s, uint64_t peer, const char *addr,
		const char *port, struct h_reply *r);
/* the next request at the endpoint (cfg: sq, rq, cq, rcq sizes) */
void h_ep_next(struct session *s, uint64_t ep, const uint32_t cfg[4],
		struct h_reply *r);

void h_conn_req_new(struct session *s, uint64_t peer, const char *addr,
		const char *port, const uint32_t cfg[4], struct h_reply *r);
void h_connect(struct session *s, uint64_t conn, const void *pdata,
		size_t len, struct h_reply *r);
struct conn *h_conn(struct session *s, uint64_t id);

/* h_info -- the connection as rpmactl would show it (its state, names,
 * counters) */
struct conn_info h_info(const struct conn *c);

/*
 * h_wait_event -- run the loop until the connection has an event (at most
 * `ms`); the event or -1
 */
int h_wait_event(struct session *s, uint64_t conn, unsigned ms,
		struct h_reply *r);

/* ---- the shared rings, as the client library uses them ---- */
void h_post(struct conn *c, uint8_t opcode, bool signaled, uint64_t wr_id,
		const struct h_mem *local, size_t loff, uint32_t len,
		uint64_t raddr, uint32_t rkey, uint32_t imm);
void h_post_flush(struct conn *c, bool persistent, uint64_t wr_id,
		uint64_t raddr, uint32_t rkey, uint32_t len);
void h_post_recv(struct conn *c, uint64_t wr_id, const struct h_mem *m,
		size_t off, uint32_t len);
/* the next completion (of the RCQ when `rcq`); 1 or 0 */
int h_cq_take(struct conn *c, bool rcq, struct qp_cqe *out);
/* runs the loop until a completion arrives (at most `ms`); 1 or 0 */
int h_wait_cqe(struct conn *c, bool rcq, struct qp_cqe *out, unsigned ms);

#endif /* VERBS_HARNESS_H */
