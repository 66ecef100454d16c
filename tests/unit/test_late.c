// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_late.c -- what the library does with answers that came after it
 * stopped waiting (librpmaclient/late.c): each request kind, answered
 * late with success or an error, and what is undone, kept or dropped.
 */

#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "late.h"
#include "th_requests.h"
#include "th_suite.h"

/* A request of `body` numbered `id`, as the library sent it. */
static void
sent(uint64_t id, Rpmad__Request__BodyCase body, uint64_t conn_id)
{
	struct th_req q;
	Rpmad__Request bare = RPMAD__REQUEST__INIT;
	Rpmad__Request *req = &bare;
	bare.body_case = body; /* the kind is all the library keeps */
	if (body == RPMAD__REQUEST__BODY_CONN_NEXT_EVENT)
		req = th_req_id(&q, body, conn_id);
	req->id = id;
	late_add(req);
}

/*
 * Its answer, packed and unpacked as it comes off the socket: a body of
 * `body` naming `obj` (or an error when `error`), with nfds descriptors.
 */
static bool
answered(uint64_t id, Rpmad__Response__BodyCase body, uint64_t obj,
		bool error, unsigned nfds)
{
	Rpmad__Response r = RPMAD__RESPONSE__INIT;
	Rpmad__Error err = RPMAD__ERROR__INIT;
	Rpmad__PeerReply peer = RPMAD__PEER_REPLY__INIT;
	Rpmad__MrRegReply mr = RPMAD__MR_REG_REPLY__INIT;
	Rpmad__EpReply ep = RPMAD__EP_REPLY__INIT;
	Rpmad__QpReply qp = RPMAD__QP_REPLY__INIT;
	Rpmad__ConnEvent ev = RPMAD__CONN_EVENT__INIT;
	Rpmad__Empty ok = RPMAD__EMPTY__INIT;
	r.id = id;
	if (error) {
		err.code = -100002;
		r.error = &err;
	} else {
		r.body_case = body;
		switch (body) {
		case RPMAD__RESPONSE__BODY_PEER:
			peer.peer_id = obj;
			r.peer = &peer;
			break;
		case RPMAD__RESPONSE__BODY_MR:
			mr.mr_id = obj;
			r.mr = &mr;
			break;
		case RPMAD__RESPONSE__BODY_EP:
			ep.ep_id = obj;
			r.ep = &ep;
			break;
		case RPMAD__RESPONSE__BODY_QP:
			qp.conn_id = obj;
			r.qp = &qp;
			break;
		case RPMAD__RESPONSE__BODY_EVENT:
			ev.event = (int32_t)obj;
			ev.has_private_data = true;
			ev.private_data.data = (uint8_t *)"late";
			ev.private_data.len = 4;
			r.event = &ev;
			break;
		default:
			r.body_case = RPMAD__RESPONSE__BODY_OK;
			r.ok = &ok;
			break;
		}
	}
	uint8_t buf[256];
	size_t len = rpmad__response__pack(&r, buf);
	Rpmad__Response *resp = rpmad__response__unpack(NULL, len, buf);
	ck_assert_ptr_nonnull(resp);
	int fds[4];
	for (unsigned i = 0; i < nfds; i++)
		ck_assert_int_ge(fds[i] = open("/dev/null", O_RDONLY), 0);
	bool taken = late_answer(NULL, resp, fds, nfds);
	if (taken) {
		for (unsigned i = 0; i < nfds; i++)
			ck_assert_int_eq(fds[i], -1);
	} else {
		rpmad__response__free_unpacked(resp, NULL);
		for (unsigned i = 0; i < nfds; i++)
			(void) close(fds[i]);
	}
	return taken;
}

/* The next undo must be `body` of `id`. */
static void
undo_is(Rpmad__Request__BodyCase body, uint64_t id)
{
	struct late_undo u;
	ck_assert(late_undo_next(&u));
	ck_assert_int_eq(u.req.body_case, body);
	uint64_t got = body == RPMAD__REQUEST__BODY_PEER_DELETE ?
		u.req.peer_delete->peer_id :
		body == RPMAD__REQUEST__BODY_MR_DEREG ? u.req.mr_dereg->mr_id :
		body == RPMAD__REQUEST__BODY_EP_SHUTDOWN ?
		u.req.ep_shutdown->ep_id : u.req.conn_req_delete->conn_id;
	ck_assert_uint_eq(got, id);
	/* it packs: it goes out as any request does */
	ck_assert_uint_gt(rpmad__request__get_packed_size(&u.req), 0);
	late_undo_sent();
}

static void
no_undo(void)
{
	struct late_undo u;
	ck_assert(!late_undo_next(&u));
}

static void
setup(void)
{
	late_reset();
}

/* What a late success made is undone, each with its own delete. */
START_TEST(test_made_is_undone)
{
	sent(1, RPMAD__REQUEST__BODY_PEER_NEW, 0);
	sent(2, RPMAD__REQUEST__BODY_MR_REG, 0);
	sent(3, RPMAD__REQUEST__BODY_EP_LISTEN, 0);
	sent(4, RPMAD__REQUEST__BODY_CONN_REQ_NEW, 0);
	sent(5, RPMAD__REQUEST__BODY_EP_NEXT_CONN_REQ, 0);
	ck_assert(answered(1, RPMAD__RESPONSE__BODY_PEER, 0x11, false, 0));
	ck_assert(answered(2, RPMAD__RESPONSE__BODY_MR, 0x22, false, 0));
	ck_assert(answered(3, RPMAD__RESPONSE__BODY_EP, 0x33, false, 1));
	ck_assert(answered(4, RPMAD__RESPONSE__BODY_QP, 0x44, false, 4));
	ck_assert(answered(5, RPMAD__RESPONSE__BODY_QP, 0x55, false, 4));
	undo_is(RPMAD__REQUEST__BODY_PEER_DELETE, 0x11);
	undo_is(RPMAD__REQUEST__BODY_MR_DEREG, 0x22);
	undo_is(RPMAD__REQUEST__BODY_EP_SHUTDOWN, 0x33);
	undo_is(RPMAD__REQUEST__BODY_CONN_REQ_DELETE, 0x44);
	undo_is(RPMAD__REQUEST__BODY_CONN_REQ_DELETE, 0x55);
	no_undo();
}
END_TEST

/* A late refusal made nothing; deletes and the rest are only dropped. */
START_TEST(test_nothing_to_undo)
{
	sent(1, RPMAD__REQUEST__BODY_MR_REG, 0);
	sent(2, RPMAD__REQUEST__BODY_MR_DEREG, 0);
	sent(3, RPMAD__REQUEST__BODY_CONN_REQ_CONNECT, 0);
	sent(4, RPMAD__REQUEST__BODY_DEVICE_GET, 0);
	ck_assert(answered(1, RPMAD__RESPONSE__BODY_MR, 0x22, true, 0));
	ck_assert(answered(2, RPMAD__RESPONSE__BODY_OK, 0, false, 0));
	ck_assert(answered(3, RPMAD__RESPONSE__BODY_OK, 0, false, 0));
	ck_assert(answered(4, RPMAD__RESPONSE__BODY_OK, 0, false, 0));
	no_undo();
	/* each answer once: a second is nobody's */
	ck_assert(!answered(2, RPMAD__RESPONSE__BODY_OK, 0, false, 0));
	/* nor is an answer to what was never given up on */
	ck_assert(!answered(9, RPMAD__RESPONSE__BODY_OK, 0, false, 2));
}
END_TEST

/* A connection's event is kept for it, and only for it. */
START_TEST(test_event_kept)
{
	struct late_event ev;
	ck_assert_uint_eq(late_events_owed(), 0);
	sent(1, RPMAD__REQUEST__BODY_CONN_NEXT_EVENT, 0xc1);
	ck_assert_uint_eq(late_events_owed(), 1);
	ck_assert_int_eq(late_event_take(0xc1, &ev), -1);
	ck_assert_int_eq(late_event_take(0xc2, &ev), 0);
	ck_assert(answered(1, RPMAD__RESPONSE__BODY_EVENT, 2, false, 0));
	ck_assert_uint_eq(late_events_owed(), 1);
	ck_assert_int_eq(late_event_take(0xc2, &ev), 0);
	ck_assert_int_eq(late_event_take(0xc1, &ev), 1);
	ck_assert_int_eq(ev.event, 2);
	ck_assert(ev.has_pdata);
	ck_assert_uint_eq(ev.pdata_len, 4);
	ck_assert_mem_eq(ev.pdata, "late", 4);
	ck_assert_int_eq(late_event_take(0xc1, &ev), 0);
	ck_assert_uint_eq(late_events_owed(), 0);

	/* a late error: nothing owed any more, nothing kept */
	sent(2, RPMAD__REQUEST__BODY_CONN_NEXT_EVENT, 0xc1);
	ck_assert(answered(2, RPMAD__RESPONSE__BODY_EVENT, 0, true, 0));
	ck_assert_int_eq(late_event_take(0xc1, &ev), 0);
	ck_assert_uint_eq(late_events_owed(), 0);

	/* a deleted connection's events go, kept or still to come */
	sent(3, RPMAD__REQUEST__BODY_CONN_NEXT_EVENT, 0xc1);
	sent(4, RPMAD__REQUEST__BODY_CONN_NEXT_EVENT, 0xc3);
	ck_assert(answered(3, RPMAD__RESPONSE__BODY_EVENT, 1, false, 0));
	late_event_forget(0xc1);
	late_event_forget(0xc3);
	ck_assert_uint_eq(late_events_owed(), 0);
	ck_assert(answered(4, RPMAD__RESPONSE__BODY_EVENT, 1, false, 0));
	ck_assert_int_eq(late_event_take(0xc3, &ev), 0);
}
END_TEST

/* Room is shared and bounded; an ended session forgets everything. */
START_TEST(test_bounded)
{
	for (uint64_t id = 1; id <= LATE_MAX; id++) {
		ck_assert(!late_full());
		sent(id, RPMAD__REQUEST__BODY_MR_REG, 0);
	}
	ck_assert(late_full());
	sent(LATE_MAX + 1, RPMAD__REQUEST__BODY_MR_REG, 0);
	ck_assert(!answered(LATE_MAX + 1, RPMAD__RESPONSE__BODY_MR, 1, false,
			0));
	/* answers turn into undos: still full until they are sent */
	ck_assert(answered(1, RPMAD__RESPONSE__BODY_MR, 0x1, false, 0));
	ck_assert(late_full());
	undo_is(RPMAD__REQUEST__BODY_MR_DEREG, 0x1);
	late_reset();
	ck_assert(!late_full());
	no_undo();
	ck_assert(!answered(2, RPMAD__RESPONSE__BODY_MR, 0x2, false, 0));
}
END_TEST

int
main(void)
{
	const TTest *const tc_answers[] = { test_made_is_undone,
		test_nothing_to_undo, test_event_kept, test_bounded, NULL };
	const struct th_tcase tcases[] = {
		{ "answers", .tests = tc_answers, .setup = setup },
	};
	return check_run(th_suite("late", tcases, TH_N(tcases)), CK_NORMAL);
}
