// SPDX-License-Identifier: BSD-3-Clause
/*
 * pmem_stream.c -- the power cut test's three parts (tests/rxe/powercut.sh):
 *
 *   pmem_stream serve ADDR PORT PMEM OFFSET LENGTH
 *     maps [OFFSET, OFFSET + LENGTH) of PMEM (a device DAX: whole units of
 *     its alignment; or a file, which it fills with zeros and syncs first,
 *     so that the stream changes no block of it but data), registers it
 *     for writes and persistent flushes, declares direct write to pmem,
 *     answers a connection with the descriptors, prints "serving" and
 *     serves until it is killed (or the power goes)
 *   pmem_stream stream ADDR PORT LOG
 *     connects and writes records one after another, each followed by a
 *     persistent flush; when the flush completed, the record is
 *     acknowledged: its number goes to LOG (on the host, written through
 *     at once). Goes on until the target is full, then waits.
 *   pmem_stream check PMEM OFFSET LOG
 *     on the host, after the power cut: every record LOG names is in PMEM
 *     (the NVDIMM's backing file, or the file taken out of the disk
 *     image) at OFFSET, byte for byte. Prints how many were checked.
 *
 * Record k goes to slot k (4 KiB), starting somewhere in its first KiB
 * and 512 to 3071 bytes long, so that records begin and end off cache
 * lines and pages; its bytes are a function of k alone.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <librpma.h>

#define SLOT 4096

#define PROG "pmem_stream"
#include "rpma_fail.h"

/* ------------------------------------------------------------- records */

static size_t
rec_off(uint64_t k)
{
	return (size_t)(k * SLOT + (k * 61) % 1024);
}

static size_t
rec_len(uint64_t k)
{
	return (size_t)(512 + (k * 997) % 2560);
}

/* The record's bytes: its number, then a stream only k determines. */
static void
rec_fill(uint64_t k, uint8_t *p)
{
	size_t len = rec_len(k);
	memcpy(p, &k, sizeof(k));
	uint64_t x = k * 0x9e3779b97f4a7c15ULL + 1;
	for (size_t i = sizeof(k); i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

static uint64_t
parse_u64(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || end == s)
		FAIL("%s: not a number: %s", what, s);
	return v;
}

/* -------------------------------------------------------------- serve */

static uint8_t *
map_target(const char *path, uint64_t off, uint64_t len)
{
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	struct stat st;
	if (fd < 0 || fstat(fd, &st))
		FAIL("%s: %s", path, strerror(errno));
	if (S_ISREG(st.st_mode)) {
		/* every block allocated and on the disk before the stream */
		static uint8_t zeros[1 << 16];
		for (uint64_t done = 0; done < len; done += sizeof(zeros)) {
			size_t n = len - done < sizeof(zeros) ?
				(size_t)(len - done) : sizeof(zeros);
			if (pwrite(fd, zeros, n, (off_t)(off + done)) !=
					(ssize_t)n)
				FAIL("%s: pwrite: %s", path, strerror(errno));
		}
		if (fsync(fd))
			FAIL("%s: fsync: %s", path, strerror(errno));
	}
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			(off_t)off);
	if (p == MAP_FAILED)
		FAIL("%s: mmap: %s", path, strerror(errno));
	(void) close(fd);
	/* a device: nothing of an earlier run may pass for a record */
	if (!S_ISREG(st.st_mode))
		memset(p, 0, len);
	return p;
}

static int
serve(const char *addr, const char *port, const char *path, uint64_t off,
		uint64_t len)
{
	uint8_t *mem = map_target(path, off, len);
	struct ibv_context *dev;
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&dev));
	struct rpma_peer *peer;
	CHECK(rpma_peer_new(dev, &peer));
	struct rpma_mr_local *mr;
	CHECK(rpma_mr_reg(peer, mem, len, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr));
	struct rpma_peer_cfg *pcfg;
	CHECK(rpma_peer_cfg_new(&pcfg));
	CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	/* [MR descriptor][peer config descriptor] */
	uint8_t desc[32];
	size_t mr_size, cfg_size;
	CHECK(rpma_mr_get_descriptor_size(mr, &mr_size));
	CHECK(rpma_peer_cfg_get_descriptor_size(pcfg, &cfg_size));
	CHECK(rpma_mr_get_descriptor(mr, desc));
	CHECK(rpma_peer_cfg_get_descriptor(pcfg, desc + mr_size));

	struct rpma_ep *ep;
	CHECK(rpma_ep_listen(peer, addr, port, &ep));
	struct rpma_conn_req *req;
	CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
	struct rpma_conn_private_data pd = { desc,
		(uint8_t)(mr_size + cfg_size) };
	struct rpma_conn *conn;
	CHECK(rpma_conn_req_connect(&req, &pd, &conn));
	enum rpma_conn_event ev;
	CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED)
		FAIL("%s", rpma_utils_conn_event_2str(ev));
	(void) printf("serving\n");
	(void) fflush(stdout);
	/* the end is the power's */
	for (;;)
		(void) pause();
}

/* ------------------------------------------------------------- stream */

static int
stream(const char *addr, const char *port, const char *log_path)
{
	FILE *log = fopen(log_path, "we");
	if (log == NULL)
		FAIL("%s: %s", log_path, strerror(errno));
	struct ibv_context *dev;
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE,
			&dev));
	struct rpma_peer *peer;
	CHECK(rpma_peer_new(dev, &peer));
	uint8_t *src = aligned_alloc(SLOT, SLOT);
	if (src == NULL)
		FAIL("out of memory");
	struct rpma_mr_local *mr;
	CHECK(rpma_mr_reg(peer, src, SLOT, RPMA_MR_USAGE_WRITE_SRC, &mr));
	struct rpma_conn_req *req;
	CHECK(rpma_conn_req_new(peer, addr, port, NULL, &req));
	struct rpma_conn *conn;
	CHECK(rpma_conn_req_connect(&req, NULL, &conn));
	enum rpma_conn_event ev;
	CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED)
		FAIL("%s", rpma_utils_conn_event_2str(ev));
	struct rpma_conn_private_data pd;
	CHECK(rpma_conn_get_private_data(conn, &pd));
	if (pd.len < 22)
		FAIL("private data of %u bytes", pd.len);
	struct rpma_mr_remote *dst;
	CHECK(rpma_mr_remote_from_descriptor(pd.ptr, 21, &dst));
	struct rpma_peer_cfg *pcfg;
	CHECK(rpma_peer_cfg_from_descriptor((uint8_t *)pd.ptr + 21, 1,
			&pcfg));
	CHECK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	size_t size;
	CHECK(rpma_mr_remote_get_size(dst, &size));
	struct rpma_cq *cq;
	CHECK(rpma_conn_get_cq(conn, &cq));

	uint64_t k;
	for (k = 0; (k + 1) * SLOT <= size; k++) {
		rec_fill(k, src);
		CHECK(rpma_write(conn, dst, rec_off(k), mr, 0, rec_len(k),
				RPMA_F_COMPLETION_ON_ERROR, NULL));
		CHECK(rpma_flush(conn, dst, rec_off(k), rec_len(k),
				RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)k));
		struct ibv_wc wc;
		int ret;
		do {
			CHECK(rpma_cq_wait(cq));
			ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		} while (ret == RPMA_E_NO_COMPLETION);
		CHECK(ret);
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != k)
			FAIL("record %" PRIu64 ": %s", k,
					ibv_wc_status_str(wc.status));
		/* acknowledged: said where it survives the cut */
		if (fprintf(log, "%" PRIu64 "\n", k) < 0 || fflush(log))
			FAIL("%s: %s", log_path, strerror(errno));
	}
	(void) fprintf(stderr, "pmem_stream: the target is full after %" PRIu64
			" records\n", k);
	for (;;)
		(void) pause();
}

/* -------------------------------------------------------------- check */

static int
check(const char *path, uint64_t off, const char *log_path)
{
	int fd = open(path, O_RDONLY);
	FILE *log = fopen(log_path, "re");
	if (fd < 0 || log == NULL)
		FAIL("%s, %s: %s", path, log_path, strerror(errno));
	uint8_t want[SLOT], got[SLOT];
	uint64_t n = 0, k;
	while (fscanf(log, "%" SCNu64, &k) == 1) {
		size_t len = rec_len(k);
		rec_fill(k, want);
		ssize_t r = pread(fd, got, len, (off_t)(off + rec_off(k)));
		if (r != (ssize_t)len)
			FAIL("record %" PRIu64 ": %s ends before it", k, path);
		for (size_t i = 0; i < len; i++) {
			if (got[i] != want[i])
				FAIL("record %" PRIu64 " was acknowledged, "
						"byte %zu of it is lost", k, i);
		}
		n++;
	}
	if (n == 0)
		FAIL("%s acknowledges no record", log_path);
	(void) printf("%" PRIu64 " acknowledged records, all there\n", n);
	return 0;
}

int
main(int argc, char *argv[])
{
	if (argc == 7 && strcmp(argv[1], "serve") == 0)
		return serve(argv[2], argv[3], argv[4],
				parse_u64(argv[5], "OFFSET"),
				parse_u64(argv[6], "LENGTH"));
	if (argc == 5 && strcmp(argv[1], "stream") == 0)
		return stream(argv[2], argv[3], argv[4]);
	if (argc == 5 && strcmp(argv[1], "check") == 0)
		return check(argv[2], parse_u64(argv[3], "OFFSET"), argv[4]);
	(void) fprintf(stderr, "usage: pmem_stream serve ADDR PORT PMEM OFFSET "
			"LENGTH\n       pmem_stream stream ADDR PORT LOG\n"
			"       pmem_stream check PMEM OFFSET LOG\n");
	return 2;
}
