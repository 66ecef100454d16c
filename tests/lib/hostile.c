// SPDX-License-Identifier: BSD-3-Clause
/*
 * hostile.c -- what the hostile-input tests share (see hostile.h)
 */

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostile.h"

/* ------------------------------------- a queue pair behind the library */

void
hu_qp_find(uint32_t qp_num, const struct qp_sizes *sizes, struct hu_qp *q)
{
	memset(q, 0, sizeof(*q));
	IT_ASSERT(qp_layout_compute(sizes, &q->layout) == 0);
	FILE *f = fopen("/proc/self/maps", "r");
	IT_ASSERT(f != NULL);
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "/memfd:rpmad-qp") == NULL)
			continue;
		uintptr_t start, end;
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &start, &end) != 2)
			continue;
		struct qp_region_header *hdr = (void *)start;
		/* the rings, and the staging bytes when there are any */
		if ((qp_num && hdr->qp_num != qp_num) ||
				end - start < q->layout.size)
			continue;
		q->region = hdr;
		q->size = q->layout.size;
		q->hdr = hdr;
		break;
	}
	(void) fclose(f);
	IT_ASSERT_MSG(q->region != NULL, "no region of queue pair %u mapped",
			qp_num);
	IT_ASSERT(qp_layout_check_header(q->hdr, sizes, q->size) == 0);
}

void
hu_ring_doorbells(void)
{
	DIR *dir = opendir("/proc/self/fd");
	IT_ASSERT(dir != NULL);
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], target[64];
		(void) snprintf(path, sizeof(path), "/proc/self/fd/%s",
				e->d_name);
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, "anon_inode:[eventfd]") != 0)
			continue;
		uint64_t one = 1;
		(void) !write(atoi(e->d_name), &one, sizeof(one));
	}
	(void) closedir(dir);
}

void
hu_qp_post_raw(struct hu_qp *q, const struct qp_sqe *sqe)
{
	uint32_t tail = atomic_load(&q->hdr->sq.tail);
	*qp_sq_slot(q->region, &q->layout, tail) = *sqe;
	atomic_store(&q->hdr->sq.tail, tail + 1);
	hu_ring_doorbells();
}

void
hu_qp_post_recv_raw(struct hu_qp *q, const struct qp_rqe *rqe)
{
	uint32_t tail = atomic_load(&q->hdr->rq.tail);
	*qp_rq_slot(q->region, &q->layout, tail) = *rqe;
	atomic_store(&q->hdr->rq.tail, tail + 1);
	hu_ring_doorbells();
}

/* ------------------------------------------------- the innocent pair */

uint64_t
hu_desc_addr(const uint8_t *desc)
{
	uint64_t v;
	memcpy(&v, desc, sizeof(v));
	return le64toh(v);
}

uint64_t
hu_desc_len(const uint8_t *desc)
{
	uint64_t v;
	memcpy(&v, desc + 8, sizeof(v));
	return le64toh(v);
}

uint32_t
hu_desc_key(const uint8_t *desc)
{
	uint32_t v;
	memcpy(&v, desc + 16, sizeof(v));
	return le32toh(v);
}

#define PAGE 4096
#define SEED_SERVER_GUARD 301
#define SEED_CLIENT_GUARD 302
#define ROUND_LEN 4096

int
hu_innocent_server(const struct it_env *env, void *arg)
{
	const struct hu_pair *p = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	/* three pages: the middle one is registered, the others guard it */
	uint8_t *buf = it_alloc(3 * PAGE);
	uint8_t *ref = it_alloc(3 * PAGE);
	it_fill(buf, 3 * PAGE, SEED_SERVER_GUARD);
	memcpy(ref, buf, 3 * PAGE);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(peer, buf + PAGE, PAGE, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_READ_SRC, &mr));
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, p->port, &ep));
	IT_EQ(it_tell(p->client, HU_TAG_LISTENING, NULL, 0), 0);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(p->client, mr, NULL);

	/* the client's rounds take long: no bound but the role's */
	uint32_t last = 0;
	int n = it_hear(HU_TAG_INNOCENT_DONE, &last, sizeof(last), IT_ROLE_MS);
	IT_EQ(n, sizeof(last));
	IT_ASSERT_MSG(memcmp(buf, ref, PAGE) == 0, "a guard byte before the "
			"registration changed");
	IT_ASSERT_MSG(memcmp(buf + 2 * PAGE, ref + 2 * PAGE, PAGE) == 0,
			"a guard byte after the registration changed");
	IT_ASSERT_MSG(it_check(buf + PAGE, ROUND_LEN, last) < 0,
			"the registration does not hold the client's last "
			"pattern");

	it_server_end(&conn, &mr, &ep, &peer, ref);
	free(buf);
	return 0;
}

/* One round: a fresh pattern there and back; every step bounded. */
static void
round_trip(struct rpma_conn *conn, struct rpma_cq *cq,
		struct rpma_mr_local *mr, uint8_t *buf,
		struct rpma_mr_remote *rmr, uint32_t seed)
{
	struct ibv_wc wc;
	it_fill(buf, ROUND_LEN, seed);
	IT_OK(rpma_write(conn, rmr, 0, mr, 0, ROUND_LEN,
			RPMA_F_COMPLETION_ALWAYS, (void *)1));
	it_wc_ok(conn, cq, 1, IBV_WC_RDMA_WRITE, &wc);
	memset(buf + ROUND_LEN, 0, ROUND_LEN);
	IT_OK(rpma_read(conn, mr, ROUND_LEN, rmr, 0, ROUND_LEN,
			RPMA_F_COMPLETION_ALWAYS, (void *)2));
	it_wc_ok(conn, cq, 2, IBV_WC_RDMA_READ, &wc);
	long bad = it_check(buf + ROUND_LEN, ROUND_LEN, seed);
	IT_ASSERT_MSG(bad < 0, "round %u: byte %ld read back differs", seed,
			bad);
	IT_ASSERT_MSG(it_check(buf, ROUND_LEN, seed) < 0, "round %u: the "
			"source buffer changed", seed);
}

int
hu_innocent_client(const struct it_env *env, void *arg)
{
	const struct hu_pair *p = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(2 * ROUND_LEN);
	struct rpma_mr_local *mr = IT_REG(peer, buf, 2 * ROUND_LEN,
			RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
	/* never used: every usage, so that only ownership protects it */
	uint8_t *guard = it_alloc(PAGE);
	it_fill(guard, PAGE, SEED_CLIENT_GUARD);
	struct rpma_mr_local *gmr = IT_REG(peer, guard, PAGE,
			RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_READ_DST |
					RPMA_MR_USAGE_WRITE_SRC |
					RPMA_MR_USAGE_WRITE_DST |
					RPMA_MR_USAGE_RECV |
					RPMA_MR_USAGE_SEND);
	if (p->steal_to != IT_PARENT) {
		struct it_desc d[2];
		memset(d, 0, sizeof(d));
		size_t len = 0;
		IT_OK(rpma_mr_get_descriptor_size(mr, &len));
		IT_OK(rpma_mr_get_descriptor(mr, d[0].mr));
		IT_OK(rpma_mr_get_descriptor(gmr, d[1].mr));
		d[0].mr_len = d[1].mr_len = (uint8_t)len;
		IT_EQ(it_tell(p->steal_to, HU_TAG_STOLEN, d, sizeof(d)), 0);
	}

	(void) it_expect(HU_TAG_LISTENING, NULL, 0);
	struct rpma_conn *conn = it_connect_to(peer, p->port, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	struct it_desc desc;
	it_expect_desc(&desc);
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);

	uint32_t seed = 1000;
	round_trip(conn, cq, mr, buf, rmr, seed++);
	IT_EQ(it_tell(IT_PARENT, HU_TAG_INNOCENT_UP, NULL, 0), 0);
	/* until the others are done misbehaving ... */
	while (it_hear(HU_TAG_INNOCENT_STOP, NULL, 0, 0) < 0)
		round_trip(conn, cq, mr, buf, rmr, seed++);
	/* ... then a fixed amount, within a generous bound */
	uint64_t start = it_now_ms();
	for (int i = 0; i < HU_FINAL_ROUNDS; i++)
		round_trip(conn, cq, mr, buf, rmr, seed++);
	uint64_t took = it_now_ms() - start;
	IT_ASSERT_MSG(took < HU_FINAL_MS, "%d rounds took %llu ms",
			HU_FINAL_ROUNDS, (unsigned long long)took);

	long bad = it_check(guard, PAGE, SEED_CLIENT_GUARD);
	IT_ASSERT_MSG(bad < 0, "byte %ld of the unused registration changed",
			bad);
	uint32_t last = seed - 1;
	IT_EQ(it_tell(p->server, HU_TAG_INNOCENT_DONE, &last, sizeof(last)),
			0);
	it_close(&conn);
	IT_OKS(rpma_mr_remote_delete(&rmr), rpma_mr_dereg(&gmr),
			rpma_mr_dereg(&mr), rpma_peer_delete(&peer));
	free(guard);
	free(buf);
	IT_EQ(it_tell(IT_PARENT, HU_TAG_INNOCENT_DONE, NULL, 0), 0);
	return 0;
}
