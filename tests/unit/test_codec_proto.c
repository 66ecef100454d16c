// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_codec_proto.c -- the control protocol (proto/rpmad.proto, generated
 * protobuf-c code):
 *  - every Request and Response body, every field set (found through the
 *    generated descriptors, so new fields are covered too), survives
 *    pack -> unpack -> compare -> pack again;
 *  - truncated, mutated, random and oversized input never crashes the
 *    decoder (ASan builds check every byte it reads);
 *  - a real rpmad answers hostile but decodable requests with errors and
 *    drops sessions that send undecodable ones, and keeps serving others.
 */

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_socket.h"
#include "librpma.h"
#include "rpmad.pb-c.h"
#include "test_daemon.h"
#include "th_ctl.h"
#include "th_suite.h"
#include "th_wait.h"

/* ------------------------------------------------ an allocation arena */

#define ARENA_MAX 8192
static void *arena[ARENA_MAX];
static int arena_n;

static void *
arena_alloc(size_t size)
{
	ck_assert_int_lt(arena_n, ARENA_MAX);
	void *p = calloc(1, size ? size : 1);
	ck_assert_ptr_nonnull(p);
	arena[arena_n++] = p;
	return p;
}

static void
arena_free(void)
{
	while (arena_n > 0)
		free(arena[--arena_n]);
}

/* -------------------------- filling any message through its descriptor */

static size_t
elem_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(ProtobufCMessage *);
	default:
		return 4;
	}
}

static void fill_message(const ProtobufCMessageDescriptor *d,
		ProtobufCMessage *m, unsigned *seed, int pick);

/* A value that is not the field's default, different for every call. */
static void
fill_value(const ProtobufCFieldDescriptor *f, void *at, unsigned *seed)
{
	unsigned n = ++*seed;
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		*(int32_t *)at = -(int32_t)(n * 7919 % 100000) - 1;
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		*(uint32_t *)at = 0x80000000u + n;
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		*(int64_t *)at = -(int64_t)n * 1000003;
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*(uint64_t *)at = 0x8000000000000000ull + n;
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		*(float *)at = 0.5f + (float)n;
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		*(double *)at = 0.25 + n;
		break;
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)at = 1;
		break;
	case PROTOBUF_C_TYPE_ENUM: {
		/* the last value: never the default 0 in our enums */
		const ProtobufCEnumDescriptor *e = f->descriptor;
		*(int *)at = e->values[e->n_values - 1].value;
		break;
	}
	case PROTOBUF_C_TYPE_STRING: {
		/* numeric addresses: rpmad resolves them without DNS */
		char *s = arena_alloc(32);
		(void) snprintf(s, 32, "127.0.0.%u", n % 250 + 1);
		*(char **)at = s;
		break;
	}
	case PROTOBUF_C_TYPE_BYTES: {
		ProtobufCBinaryData *b = at;
		b->len = 3 + n % 5;
		b->data = arena_alloc(b->len);
		for (size_t i = 0; i < b->len; i++)
			b->data[i] = (uint8_t)(n + i * 31);
		break;
	}
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessageDescriptor *sub = f->descriptor;
		ProtobufCMessage *m = arena_alloc(sub->sizeof_message);
		fill_message(sub, m, seed, 0);
		*(ProtobufCMessage **)at = m;
		break;
	}
	}
}

/*
 * Every field set; of a oneof only the member with id `pick` (0: the
 * first member of each oneof).
 */
static void
fill_message(const ProtobufCMessageDescriptor *d, ProtobufCMessage *m,
		unsigned *seed, int pick)
{
	d->message_init(m);
	char *base = (char *)m;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			uint32_t *which = (uint32_t *)(base +
					f->quantifier_offset);
			if (pick ? f->id != (uint32_t)pick : *which != 0)
				continue;
			*which = f->id;
			fill_value(f, base + f->offset, seed);
			continue;
		}
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = 2 + *seed % 2;
			size_t esz = elem_size(f->type);
			char *arr = arena_alloc(n * esz);
			for (size_t k = 0; k < n; k++)
				fill_value(f, arr + k * esz, seed);
			*(size_t *)(base + f->quantifier_offset) = n;
			*(void **)(base + f->offset) = arr;
			continue;
		}
		if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
				f->type != PROTOBUF_C_TYPE_MESSAGE &&
				f->type != PROTOBUF_C_TYPE_STRING)
			*(protobuf_c_boolean *)(base +
					f->quantifier_offset) = 1;
		fill_value(f, base + f->offset, seed);
	}
}

/* ------------------------------------ comparing through the descriptor */

static int equal_message(const ProtobufCMessageDescriptor *d,
		const ProtobufCMessage *a, const ProtobufCMessage *b);

static int
equal_value(const ProtobufCFieldDescriptor *f, const void *a, const void *b)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING: {
		const char *x = *(char *const *)a, *y = *(char *const *)b;
		return x && y ? strcmp(x, y) == 0 : x == y;
	}
	case PROTOBUF_C_TYPE_BYTES: {
		const ProtobufCBinaryData *x = a, *y = b;
		return x->len == y->len &&
			(x->len == 0 || memcmp(x->data, y->data, x->len) == 0);
	}
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessage *x = *(ProtobufCMessage *const *)a;
		const ProtobufCMessage *y = *(ProtobufCMessage *const *)b;
		if (x == NULL || y == NULL)
			return x == y;
		return equal_message(f->descriptor, x, y);
	}
	default:
		return memcmp(a, b, elem_size(f->type)) == 0;
	}
}

static int
equal_message(const ProtobufCMessageDescriptor *d, const ProtobufCMessage *a,
		const ProtobufCMessage *b)
{
	if (a->descriptor != d || b->descriptor != d)
		return 0;
	if (a->n_unknown_fields != 0 || b->n_unknown_fields != 0)
		return 0;
	const char *pa = (const char *)a, *pb = (const char *)b;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			uint32_t wa = *(const uint32_t *)(pa +
					f->quantifier_offset);
			uint32_t wb = *(const uint32_t *)(pb +
					f->quantifier_offset);
			if (wa != wb)
				return 0;
			if (wa == f->id && !equal_value(f, pa + f->offset,
					pb + f->offset))
				return 0;
			continue;
		}
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t na = *(const size_t *)(pa +
					f->quantifier_offset);
			size_t nb = *(const size_t *)(pb +
					f->quantifier_offset);
			if (na != nb)
				return 0;
			const char *xa = *(char *const *)(pa + f->offset);
			const char *xb = *(char *const *)(pb + f->offset);
			size_t esz = elem_size(f->type);
			for (size_t k = 0; k < na; k++) {
				if (!equal_value(f, xa + k * esz, xb + k * esz))
					return 0;
			}
			continue;
		}
		if (!equal_value(f, pa + f->offset, pb + f->offset))
			return 0;
	}
	return 1;
}

/* ------------------------------------------------------- round trips */

/* the ids of the members of the oneof of a message */
static unsigned
oneof_ids(const ProtobufCMessageDescriptor *d, uint32_t *ids, unsigned cap)
{
	unsigned n = 0;
	for (unsigned i = 0; i < d->n_fields && n < cap; i++) {
		if (d->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
			ids[n++] = d->fields[i].id;
	}
	return n;
}

/*
 * A message of descriptor d with every field set and oneof member `pick`,
 * packed into a new buffer (arena). Returns its length.
 */
static size_t
filled_packed(const ProtobufCMessageDescriptor *d, int pick, unsigned seed,
		ProtobufCMessage **msg, uint8_t **buf)
{
	*msg = arena_alloc(d->sizeof_message);
	fill_message(d, *msg, &seed, pick);
	size_t len = protobuf_c_message_get_packed_size(*msg);
	*buf = arena_alloc(len);
	ck_assert_uint_eq(protobuf_c_message_pack(*msg, *buf), len);
	return len;
}

static void
round_trip(const ProtobufCMessageDescriptor *d, int pick)
{
	ProtobufCMessage *msg;
	uint8_t *buf;
	size_t len = filled_packed(d, pick, 1000u * (unsigned)pick, &msg, &buf);
	ck_assert_uint_gt(len, 0);

	ProtobufCMessage *back = protobuf_c_message_unpack(d, NULL, len, buf);
	ck_assert_ptr_nonnull(back);
	ck_assert_msg(equal_message(d, msg, back), "%s body %d differs",
			d->name, pick);

	/* and it packs to the very same bytes */
	size_t len2 = protobuf_c_message_get_packed_size(back);
	ck_assert_uint_eq(len2, len);
	uint8_t *buf2 = arena_alloc(len2);
	ck_assert_uint_eq(protobuf_c_message_pack(back, buf2), len2);
	ck_assert_mem_eq(buf2, buf, len);
	protobuf_c_message_free_unpacked(back, NULL);
	arena_free();
}

#define MAX_BODIES 64
static uint32_t request_ids[MAX_BODIES], response_ids[MAX_BODIES];
static unsigned n_request_ids, n_response_ids;

START_TEST(request_round_trip)
{
	round_trip(&rpmad__request__descriptor, (int)request_ids[_i]);
}
END_TEST

START_TEST(response_round_trip)
{
	/* every body also carries the error: each field round-trips */
	round_trip(&rpmad__response__descriptor, (int)response_ids[_i]);
}
END_TEST

START_TEST(specific_values)
{
	/* a request as the library builds it, checked field by field */
	Rpmad__Segment seg = RPMAD__SEGMENT__INIT;
	seg.fd_index = 2;
	seg.offset = 1ull << 40;
	seg.length = 3ull << 30;
	seg.file_backed = 1;
	Rpmad__Segment *segs[] = { &seg, &seg };
	Rpmad__MrReg reg = RPMAD__MR_REG__INIT;
	reg.peer_id = UINT64_MAX;
	reg.addr = 0x7fffdeadb000ull;
	reg.length = 12345;
	reg.usage = 0xff;
	reg.n_segments = 2;
	reg.segments = segs;
	reg.fd_count = 3;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.id = 42;
	req.body_case = RPMAD__REQUEST__BODY_MR_REG;
	req.mr_reg = &reg;

	uint8_t buf[256];
	size_t len = rpmad__request__pack(&req, buf);
	ck_assert_uint_le(len, sizeof(buf));
	Rpmad__Request *r = rpmad__request__unpack(NULL, len, buf);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->id, 42);
	ck_assert_int_eq(r->body_case, RPMAD__REQUEST__BODY_MR_REG);
	ck_assert_uint_eq(r->mr_reg->peer_id, UINT64_MAX);
	ck_assert_uint_eq(r->mr_reg->addr, 0x7fffdeadb000ull);
	ck_assert_uint_eq(r->mr_reg->n_segments, 2);
	ck_assert_uint_eq(r->mr_reg->segments[1]->offset, 1ull << 40);
	ck_assert(r->mr_reg->segments[1]->file_backed);
	ck_assert_uint_eq(r->mr_reg->fd_count, 3);
	rpmad__request__free_unpacked(r, NULL);

	/* negative RPMA_E_* codes survive the sint32 encoding */
	Rpmad__Error err = RPMAD__ERROR__INIT;
	err.code = RPMA_E_AGAIN;
	err.errnum = EINVAL;
	err.message = "why";
	Rpmad__Response resp = RPMAD__RESPONSE__INIT;
	resp.id = 7;
	resp.error = &err;
	len = rpmad__response__pack(&resp, buf);
	Rpmad__Response *p = rpmad__response__unpack(NULL, len, buf);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(p->error);
	ck_assert_int_eq(p->error->code, RPMA_E_AGAIN);
	ck_assert_str_eq(p->error->message, "why");
	ck_assert_int_eq(p->body_case, RPMAD__RESPONSE__BODY__NOT_SET);
	rpmad__response__free_unpacked(p, NULL);

	/* an empty request: id 0, no body */
	Rpmad__Request *e = rpmad__request__unpack(NULL, 0, buf);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->body_case, RPMAD__REQUEST__BODY__NOT_SET);
	rpmad__request__free_unpacked(e, NULL);
}
END_TEST

/* two members of the oneof in one message: the last one counts */
START_TEST(oneof_twice)
{
	Rpmad__Hello hello = RPMAD__HELLO__INIT;
	hello.version = 1;
	hello.client_name = "first";
	Rpmad__PeerNew pn = RPMAD__PEER_NEW__INIT;
	pn.device_id = 9;
	Rpmad__Request a = RPMAD__REQUEST__INIT;
	a.body_case = RPMAD__REQUEST__BODY_HELLO;
	a.hello = &hello;
	Rpmad__Request b = RPMAD__REQUEST__INIT;
	b.body_case = RPMAD__REQUEST__BODY_PEER_NEW;
	b.peer_new = &pn;
	uint8_t buf[256];
	size_t la = rpmad__request__pack(&a, buf);
	size_t lb = rpmad__request__pack(&b, buf + la);

	Rpmad__Request *r = rpmad__request__unpack(NULL, la + lb, buf);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->body_case, RPMAD__REQUEST__BODY_PEER_NEW);
	ck_assert_uint_eq(r->peer_new->device_id, 9);
	rpmad__request__free_unpacked(r, NULL);	/* ASan: nothing leaks */
}
END_TEST

/* --------------------------------------------------- malformed input */

/* decoding may fail or succeed; it must not crash, overread or leak */
static void
try_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *buf,
		size_t len)
{
	/* an exact-size copy, so that ASan sees any read past the end */
	uint8_t *copy = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(copy);
	if (len)
		memcpy(copy, buf, len);
	ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, len, copy);
	if (m != NULL) {
		/* whatever came out packs again */
		size_t n = protobuf_c_message_get_packed_size(m);
		uint8_t *out = malloc(n ? n : 1);
		ck_assert_ptr_nonnull(out);
		ck_assert_uint_eq(protobuf_c_message_pack(m, out), n);
		free(out);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	free(copy);
}

static const ProtobufCMessageDescriptor *
envelope(int i)
{
	return i ? &rpmad__response__descriptor : &rpmad__request__descriptor;
}

/*
 * fn of every body kind of both envelopes, packed and filled (the arena
 * freed after each)
 */
static void
each_packed(void (*fn)(const ProtobufCMessageDescriptor *d, const uint8_t *buf,
		size_t len))
{
	for (int which = 0; which < 2; which++) {
		const ProtobufCMessageDescriptor *d = envelope(which);
		uint32_t *ids = which ? response_ids : request_ids;
		unsigned n = which ? n_response_ids : n_request_ids;
		for (unsigned b = 0; b < n; b++) {
			ProtobufCMessage *msg;
			uint8_t *buf;
			size_t len = filled_packed(d, (int)ids[b], b, &msg,
					&buf);
			fn(d, buf, len);
			arena_free();
		}
	}
}

/* every prefix of it */
static void
cut_short(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len)
{
	for (size_t cut = 0; cut < len; cut++)
		try_unpack(d, buf, cut);
}

START_TEST(truncated)
{
	each_packed(cut_short);
}
END_TEST

/* 1500 copies of it with one to four bytes changed */
static void
flip_bytes(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len)
{
	uint8_t *work = malloc(len);
	ck_assert_ptr_nonnull(work);
	for (int round = 0; round < 1500; round++) {
		memcpy(work, buf, len);
		int flips = 1 + rand() % 4;
		for (int k = 0; k < flips; k++) {
			size_t at = (size_t) rand() % len;
			uint8_t r = (uint8_t) rand();
			work[at] = rand() % 3 ? r : (uint8_t) (work[at] ^ 0x80);
		}
		try_unpack(d, work, len);
	}
	free(work);
}

START_TEST(mutated)
{
	srand(4242);
	each_packed(flip_bytes);
}
END_TEST

START_TEST(random_bytes)
{
	srand(777);
	uint8_t buf[512];
	for (int round = 0; round < 30000; round++) {
		size_t len = (size_t)rand() % sizeof(buf);
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rand();
		try_unpack(envelope(round & 1), buf, len);
	}
}
END_TEST

/* lengths and varints that promise more than there is */
START_TEST(oversized)
{
	static const uint8_t cases[][16] = {
		/* body "hello" (field 10, length-delimited), 2^32 bytes */
		{ 0x52, 0x80, 0x80, 0x80, 0x80, 0x10, 0x08, 0x01 },
		/* a length of 2^63 */
		{ 0x52, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f },
		/* a varint of 11 bytes for the id */
		{ 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		  0xff, 0x01 },
		/* a nested length beyond the outer one */
		{ 0x52, 0x03, 0x12, 0x7f, 0x41 },
		/* an unknown field of 1 GiB */
		{ 0xfa, 0x3f, 0x80, 0x80, 0x80, 0x80, 0x04 },
	};
	static const size_t lens[] = { 8, 10, 12, 5, 7 };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (int which = 0; which < 2; which++) {
			ck_assert_ptr_null(protobuf_c_message_unpack(
					envelope(which), NULL, lens[i],
					cases[i]));
		}
	}

	/* a big but honest message is fine */
	size_t big = CTL_MAX_MSG - 64;
	char *name = malloc(big + 1);
	ck_assert_ptr_nonnull(name);
	memset(name, 'n', big);
	name[big] = '\0';
	Rpmad__Hello hello = RPMAD__HELLO__INIT;
	hello.client_name = name;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_HELLO;
	req.hello = &hello;
	size_t len = rpmad__request__get_packed_size(&req);
	uint8_t *buf = malloc(len);
	ck_assert_ptr_nonnull(buf);
	rpmad__request__pack(&req, buf);
	Rpmad__Request *r = rpmad__request__unpack(NULL, len, buf);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(strlen(r->hello->client_name), big);
	rpmad__request__free_unpacked(r, NULL);
	free(buf);
	free(name);
}
END_TEST

/* -------------------------------------- the dispatcher of a real rpmad */

static struct test_daemon daemon_state;
static int daemon_ok;

/*
 * The rpmads an AdminUpgrade request started: the test's process (a fork)
 * notes them in a shared page, the teardown (in the runner's, their
 * subreaper once the rpmad that started them is gone) stops them.
 */
#define MAX_SUCCESSORS 8
static pid_t *successors;

static void
note_successor(const Rpmad__Response *r)
{
	if (r->body_case != RPMAD__RESPONSE__BODY_ADMIN ||
			r->admin->upgrade_pid == 0 || successors == NULL ||
			successors == MAP_FAILED)
		return;
	for (unsigned i = 0; i < MAX_SUCCESSORS; i++) {
		if (successors[i] == 0) {
			successors[i] = (pid_t)r->admin->upgrade_pid;
			return;
		}
	}
	ck_abort_msg("more than %d upgrades", MAX_SUCCESSORS);
}

static void
report_status(const char *who, int status)
{
	if (status != 0)
		fprintf(stderr, "%s exited with status 0x%x\n", who, status);
}

static void
daemon_setup(void)
{
	successors = mmap(NULL, MAX_SUCCESSORS * sizeof(*successors),
			PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
			0);
	daemon_ok = successors != MAP_FAILED &&
		prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 &&
		test_daemon_start(&daemon_state, NULL) == 0;
}

static void
daemon_teardown(void)
{
	if (daemon_ok) {
		report_status("rpmad", test_daemon_stop(&daemon_state));
		for (unsigned i = 0; i < MAX_SUCCESSORS && successors[i]; i++)
			report_status("the upgraded rpmad",
					test_daemon_stop_pid(successors[i]));
	}
	if (successors != MAP_FAILED)
		(void) munmap(successors, MAX_SUCCESSORS *
				sizeof(*successors));
	daemon_ok = 0;
}

static void
session_open(struct th_ctl *s)
{
	ck_assert_msg(daemon_ok, "rpmad did not start");
	ck_assert_int_eq(th_ctl_connect(s, daemon_state.socket), 0);
}

/*
 * An answer (bounded wait: rpmad answers at once): the response, or NULL
 * at the end of the session. An AdminUpgrade upgrades: the rpmad it
 * started is noted, to be stopped too.
 */
static Rpmad__Response *
checked(int ret, Rpmad__Response *r)
{
	if (ret == -ECONNRESET)
		return NULL;
	ck_assert_int_eq(ret, 0);
	note_successor(r);
	return r;
}

/* the next packet from rpmad */
static Rpmad__Response *
answer(struct th_ctl *s)
{
	Rpmad__Response *r;
	int ret = th_ctl_answer(s->fd, TH_WAIT_MS, &r, NULL, NULL);
	return checked(ret, r);
}

/* a request (numbered by the session) and its answer */
static Rpmad__Response *
call(struct th_ctl *s, Rpmad__Request *req, const int *fds, unsigned nfds)
{
	Rpmad__Response *r;
	int ret = th_ctl_call(s, req, fds, nfds, &r);
	return checked(ret, r);
}

static void
say_hello(struct th_ctl *s)
{
	struct th_req q;
	Rpmad__Response *r =
			call(s, th_req_hello(&q, "test_codec_proto"), NULL, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_null(r->error);
	ck_assert_int_eq(r->body_case, RPMAD__RESPONSE__BODY_HELLO);
	rpmad__response__free_unpacked(r, NULL);
}

/* the daemon still runs and a new session works */
static void
assert_rpmad_serves(void)
{
	/* (the daemon is the runner's child, not this test's) */
	ck_assert_int_eq(kill(daemon_state.pid, 0), 0);
	struct th_ctl s;
	session_open(&s);
	say_hello(&s);
	th_ctl_close(&s);
}

/* the answer to a request is an error with this code */
static void
expect_error(struct th_ctl *s, Rpmad__Request *req, const int *fds,
		unsigned nfds, int code)
{
	Rpmad__Response *r = call(s, req, fds, nfds);
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_nonnull(r->error);
	ck_assert_int_eq(r->error->code, code);
	ck_assert_ptr_nonnull(r->error->message);
	rpmad__response__free_unpacked(r, NULL);
}

START_TEST(dispatch_hello_first)
{
	struct th_ctl s;
	struct th_req q;
	session_open(&s);
	expect_error(&s, th_req_id(&q, RPMAD__REQUEST__BODY_PEER_NEW, 0), NULL,
			0, RPMA_E_PROVIDER);
	th_ctl_close(&s);

	/* a hello of another protocol version is refused, the session ends */
	session_open(&s);
	th_req_hello(&q, NULL);
	q.u.hello.version = 99;
	expect_error(&s, &q.req, NULL, 0, RPMA_E_NOSUPP);
	ck_assert_ptr_null(answer(&s));
	th_ctl_close(&s);
	assert_rpmad_serves();
}
END_TEST

START_TEST(dispatch_envelope_errors)
{
	struct th_ctl s;
	struct th_req q;
	session_open(&s);
	say_hello(&s);

	/* no body at all */
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	expect_error(&s, &req, NULL, 0, RPMA_E_NOSUPP);

	/* descriptors where none belong: refused, and not kept */
	int fds[2] = { STDIN_FILENO, STDOUT_FILENO };
	expect_error(&s, th_req_id(&q, RPMAD__REQUEST__BODY_PEER_DELETE, 0),
			fds, 2, RPMA_E_INVAL);

	/* a registration that announces descriptors it does not carry */
	th_req_new(&q, RPMAD__REQUEST__BODY_MR_REG);
	q.u.mr_reg.fd_count = 1;
	expect_error(&s, &q.req, NULL, 0, RPMA_E_INVAL);

	/* ... or carries more than it says */
	q.u.mr_reg.fd_count = 0;
	expect_error(&s, &q.req, fds, 1, RPMA_E_INVAL);

	/* the session goes on: no such peer */
	expect_error(&s, th_req_conn_req_new(&q, 0, NULL, NULL), NULL, 0,
			RPMA_E_INVAL);
	th_ctl_close(&s);
	assert_rpmad_serves();
}
END_TEST

/*
 * Every kind of request, every field filled with values no client would
 * send (ids of nothing, odd sizes, bogus addresses): each gets an answer
 * with its id, and rpmad lives on.
 */
START_TEST(dispatch_every_request_filled)
{
	struct th_ctl s;
	session_open(&s);
	say_hello(&s);
	for (unsigned b = 0; b < n_request_ids; b++) {
		if (request_ids[b] == RPMAD__REQUEST__BODY_HELLO)
			continue;	/* a second hello: tested above */
		for (unsigned variant = 0; variant < 3; variant++) {
			unsigned seed = b * 100 + variant;
			Rpmad__Request *req = arena_alloc(sizeof(*req));
			fill_message(&rpmad__request__descriptor,
					&req->base, &seed, (int)request_ids[b]);
			if (req->body_case == RPMAD__REQUEST__BODY_ADMIN_EVICT)
				req->admin_evict->pid = 0x7ffffff0;
			if (req->body_case == RPMAD__REQUEST__BODY_MR_REG &&
					variant == 2)
				req->mr_reg->fd_count = 0;
			/* answered with its id (th_ctl_call checks it) */
			Rpmad__Response *r = call(&s, req, NULL, 0);
			ck_assert_msg(r != NULL, "request %u ended the session",
					request_ids[b]);
			rpmad__response__free_unpacked(r, NULL);
			arena_free();
		}
	}
	th_ctl_close(&s);
	assert_rpmad_serves();
}
END_TEST

/* undecodable packets end the sender's session, nobody else's */
START_TEST(dispatch_garbage)
{
	struct th_ctl bystander, s;
	session_open(&bystander);
	say_hello(&bystander);

	srand(99);
	for (int round = 0; round < 20; round++) {
		session_open(&s);
		say_hello(&s);
		uint8_t junk[64];
		size_t len = 1 + (size_t)rand() % sizeof(junk);
		for (size_t i = 0; i < len; i++)
			junk[i] = (uint8_t)rand();
		junk[0] = 0xff;	/* field 31, wire type 7: never valid */
		ck_assert_int_eq(th_ctl_send_raw(s.fd, junk, len, NULL, 0), 0);
		ck_assert_ptr_null(answer(&s));
		th_ctl_close(&s);
	}

	/* mutated requests: answered or the session ended, never worse */
	session_open(&s);
	say_hello(&s);
	for (int round = 0; round < 300; round++) {
		unsigned pick = request_ids[(unsigned)rand() % n_request_ids];
		if (pick == RPMAD__REQUEST__BODY_HELLO ||
				pick == RPMAD__REQUEST__BODY_ADMIN_EVICT)
			continue;
		ProtobufCMessage *msg;
		uint8_t *buf;
		size_t len = filled_packed(&rpmad__request__descriptor,
				(int)pick, (unsigned)round, &msg, &buf);
		buf[(size_t)rand() % len] = (uint8_t)rand();
		ck_assert_int_eq(th_ctl_send_raw(s.fd, buf, len, NULL, 0), 0);
		Rpmad__Response *r = answer(&s);
		if (r == NULL) {
			th_ctl_close(&s);
			session_open(&s);
			say_hello(&s);
		} else {
			rpmad__response__free_unpacked(r, NULL);
		}
		arena_free();
	}
	th_ctl_close(&s);

	/* the bystander's session still works */
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	expect_error(&bystander, &req, NULL, 0, RPMA_E_NOSUPP);
	th_ctl_close(&bystander);
	assert_rpmad_serves();
}
END_TEST

/* the dispatcher's test case: one rpmad for all of its tests */
static TCase *
dispatcher(const char *name)
{
	TCase *tc = tcase_create(name);
	tcase_add_unchecked_fixture(tc, daemon_setup, daemon_teardown);
	return tc;
}

int
main(void)
{
	n_request_ids = oneof_ids(&rpmad__request__descriptor, request_ids,
			MAX_BODIES);
	n_response_ids = oneof_ids(&rpmad__response__descriptor, response_ids,
			MAX_BODIES);

	const struct th_test tc_round_trip[] = {
		TH_LOOP(request_round_trip, 0, (int) n_request_ids),
		TH_LOOP(response_round_trip, 0, (int) n_response_ids),
		TH_TEST(specific_values), TH_TEST(oneof_twice), TH_END
	};
	const TTest *const tc_malformed[] = { truncated, mutated, random_bytes,
		oversized, NULL };
	const TTest *const tc_dispatcher[] = { dispatch_hello_first,
		dispatch_envelope_errors, dispatch_every_request_filled,
		dispatch_garbage, NULL };
	const struct th_tcase tcases[] = {
		{ "round_trip", .steps = tc_round_trip },
		{ "malformed", .tests = tc_malformed, .timeout = 120 },
		{ "dispatcher", .tests = tc_dispatcher, .create = dispatcher,
				.timeout = 120 },
	};
	return check_run_forked(th_suite("codec_proto", tcases, TH_N(tcases)),
			CK_NORMAL);
}
