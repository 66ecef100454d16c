// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_api_mr.c -- rpma_mr_reg / rpma_mr_dereg, the local getters, the
 * 21-byte descriptor, rpma_mr_advise; memory that cannot be shared; the
 * registration quota; 100,000 registrations
 */

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "api_helpers.h"

#define UNTOUCHED_MR ((struct rpma_mr_local *)(uintptr_t)0x5a5a5a5a)
#define ALL_USAGE 0xff

static size_t
page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static uint64_t
get_le(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* a file of `size` bytes in /tmp (unlinked), filled with `fill` */
static int
temp_file(size_t size, int fill)
{
	char path[] = "/tmp/rpma-unit-mr.XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	(void) unlink(path);
	char *buf = malloc(size);
	ck_assert_ptr_nonnull(buf);
	memset(buf, fill, size);
	ck_assert_int_eq(pwrite(fd, buf, size, 0), (ssize_t)size);
	free(buf);
	return fd;
}

/* ---------------------------------------------------------------- reg */

START_TEST(reg_args)
{
	struct rpma_peer *peer = api_peer();
	char *buf = api_buf(4096);
	struct rpma_mr_local *mr = UNTOUCHED_MR;

	ck_assert_int_eq(rpma_mr_reg(NULL, buf, (4096),
			RPMA_MR_USAGE_READ_SRC, &mr), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_reg(peer, NULL, (4096),
			RPMA_MR_USAGE_READ_SRC, &mr), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_reg(peer, buf, (4096),
			RPMA_MR_USAGE_READ_SRC, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_reg(peer, buf, 0, RPMA_MR_USAGE_READ_SRC,
			&mr), RPMA_E_INVAL);
	/* our decision: a usage must be a non-empty set of usage bits */
	ck_assert_int_eq(rpma_mr_reg(peer, buf, (4096), 0, &mr),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_reg(peer, buf, (4096), 0x100, &mr),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_reg(peer, buf, (4096), -1, &mr),
			RPMA_E_INVAL);
	/* a range that wraps around the address space */
	ck_assert_int_eq(rpma_mr_reg(peer, (void *)(UINTPTR_MAX - 100), 4096,
			RPMA_MR_USAGE_READ_SRC, &mr), RPMA_E_INVAL);
	ck_assert_ptr_eq(mr, UNTOUCHED_MR);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/* Memory rpmad cannot share: refused, with the reason logged. */
START_TEST(reg_unshareable)
{
	struct rpma_peer *peer = api_peer();
	struct rpma_mr_local *mr = UNTOUCHED_MR;
	size_t ps = page();
	ck_assert_int_eq(th_log_capture(), 0);

	/* a range with an unmapped hole */
	char *area = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(area, MAP_FAILED);
	ck_assert_int_eq(munmap(area + ps, ps), 0);
	th_log_clear();
	ck_assert_int_eq(rpma_mr_reg(peer, area, 3 * ps, RPMA_MR_USAGE_READ_SRC,
			&mr), RPMA_E_PROVIDER);
	ck_assert_ptr_nonnull(th_log_find("not mapped"));
	/* nothing mapped at all */
	ck_assert_int_eq(rpma_mr_reg(peer, area + ps, ps,
			RPMA_MR_USAGE_READ_SRC, &mr), RPMA_E_PROVIDER);

	/* memory that cannot be read */
	ck_assert_int_eq(mprotect(area, ps, PROT_NONE), 0);
	ck_assert_int_eq(rpma_mr_reg(peer, area, ps, RPMA_MR_USAGE_READ_SRC,
			&mr), RPMA_E_PROVIDER);
	ck_assert_int_eq(munmap(area, 3 * ps), 0);

	/* a write usage on read-only memory, as ibv_reg_mr refuses it */
	static const char constant[64] = "read-only data";
	th_log_clear();
	ck_assert_int_eq(rpma_mr_reg(peer, (void *)constant, sizeof(constant),
			RPMA_MR_USAGE_WRITE_DST, &mr), RPMA_E_PROVIDER);
	ck_assert_ptr_nonnull(th_log_find("read-only"));
	/* the kernel's own mappings */
	char *vdso = (char *)getauxval(AT_SYSINFO_EHDR);
	if (vdso)
		ck_assert_int_eq(rpma_mr_reg(peer, vdso, 64,
				RPMA_MR_USAGE_READ_SRC, &mr), RPMA_E_PROVIDER);

	ck_assert_ptr_eq(mr, UNTOUCHED_MR);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/*
 * A private (copy-on-write) file mapping and a global variable: registered
 * like anonymous memory, pointer and contents kept, the file itself never
 * written.
 */
static char global_buffer[3 * 4096] = "global data";

START_TEST(reg_private_file_and_globals)
{
	struct rpma_peer *peer = api_peer();
	struct rpma_mr_local *mr = NULL;
	size_t ps = page();
	ck_assert_int_eq(th_log_capture(), 0);

	int fd = temp_file(4 * ps, 'p');
	char *priv = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE,
			fd, 0);
	ck_assert_ptr_ne(priv, MAP_FAILED);
	priv[1] = 'q';
	ck_assert_int_eq(rpma_mr_reg(peer, priv, 4 * ps, RPMA_MR_USAGE_READ_SRC,
			&mr), 0);
	ck_assert_int_eq(priv[0], 'p');
	ck_assert_int_eq(priv[1], 'q');
	priv[2] = 'r';
	ck_assert_int_eq(rpma_mr_dereg(&mr), 0);
	/* the file saw none of it */
	char byte;
	ck_assert_int_eq(pread(fd, &byte, 1, 1), 1);
	ck_assert_int_eq(byte, 'p');
	ck_assert_int_eq(munmap(priv, 4 * ps), 0);
	(void) close(fd);

	ck_assert_int_eq(rpma_mr_reg(peer, global_buffer, sizeof(global_buffer),
			RPMA_MR_USAGE_READ_SRC, &mr), 0);
	ck_assert_str_eq(global_buffer, "global data");
	ck_assert_int_eq(rpma_mr_dereg(&mr), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/* Heap and anonymous memory: registered in place, contents kept. */
START_TEST(reg_private_memory)
{
	struct rpma_peer *peer = api_peer();
	size_t ps = page();

	char *heap = malloc(10000);
	ck_assert_ptr_nonnull(heap);
	for (int i = 0; i < 10000; i++)
		heap[i] = (char)(i * 7);
	char *anon = mmap(NULL, 5 * ps, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(anon, MAP_FAILED);
	memset(anon, 'a', 5 * ps);

	struct rpma_mr_local *mr_heap = NULL, *mr_anon = NULL, *mr_part = NULL;
	ck_assert_int_eq(rpma_mr_reg(peer, heap + 3, 9000, ALL_USAGE,
			&mr_heap), 0);
	ck_assert_int_eq(rpma_mr_reg(peer, anon, 5 * ps,
			RPMA_MR_USAGE_WRITE_DST, &mr_anon), 0);
	/* overlapping registrations of the same pages */
	ck_assert_int_eq(rpma_mr_reg(peer, anon + ps + 10, ps,
			RPMA_MR_USAGE_READ_SRC, &mr_part), 0);

	for (int i = 0; i < 10000; i++)
		ck_assert_int_eq(heap[i], (char)(i * 7));
	for (size_t i = 0; i < 5 * ps; i++)
		ck_assert_int_eq(anon[i], 'a');
	/* and the memory is still the application's to use */
	memset(anon, 'b', 5 * ps);
	heap[0] = 1;

	ck_assert_int_eq(rpma_mr_dereg(&mr_part), 0);
	ck_assert_int_eq(rpma_mr_dereg(&mr_anon), 0);
	ck_assert_int_eq(rpma_mr_dereg(&mr_heap), 0);
	ck_assert_ptr_null(mr_heap);

	/* the calling thread's own stack, as librpma takes it */
	char on_stack[64] = "on the stack";
	ck_assert_int_eq(rpma_mr_reg(peer, on_stack, sizeof(on_stack),
			RPMA_MR_USAGE_READ_SRC, &mr_part), 0);
	ck_assert_str_eq(on_stack, "on the stack");
	ck_assert_int_eq(rpma_mr_dereg(&mr_part), 0);
	ck_assert_int_eq(munmap(anon, 5 * ps), 0);
	free(heap);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/* A shared file mapping is passed as the file: stores still reach it. */
START_TEST(reg_shared_file)
{
	struct rpma_peer *peer = api_peer();
	size_t ps = page();
	int fd = temp_file(4 * ps, 'f');
	char *map = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, 0);
	ck_assert_ptr_ne(map, MAP_FAILED);

	struct rpma_mr_local *mr = NULL;
	ck_assert_int_eq(rpma_mr_reg(peer, map + ps, 2 * ps, ALL_USAGE, &mr),
			0);
	ck_assert_int_eq(map[ps], 'f');
	map[ps] = 'g';
	ck_assert_int_eq(msync(map, 4 * ps, MS_SYNC), 0);
	char c = 0;
	ck_assert_int_eq(pread(fd, &c, 1, (off_t)ps), 1);
	ck_assert_int_eq(c, 'g');

	ck_assert_int_eq(rpma_mr_dereg(&mr), 0);
	ck_assert_int_eq(munmap(map, 4 * ps), 0);
	(void) close(fd);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

START_TEST(dereg_args)
{
	ck_assert_int_eq(rpma_mr_dereg(NULL), RPMA_E_INVAL);
	struct rpma_mr_local *mr = NULL;
	ck_assert_int_eq(rpma_mr_dereg(&mr), 0);
	ck_assert_ptr_null(mr);
}
END_TEST

/* ------------------------------------------------- getters, descriptor */

START_TEST(getters)
{
	struct rpma_peer *peer = api_peer();
	char *buf = api_buf(3 * 4096);
	int usage = RPMA_MR_USAGE_READ_SRC |
		RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	struct rpma_mr_local *mr = NULL;
	ck_assert_int_eq(rpma_mr_reg(peer, buf + 5, 5000, usage, &mr), 0);

	void *ptr = NULL;
	size_t size = 0;
	ck_assert_int_eq(rpma_mr_get_ptr(mr, &ptr), 0);
	ck_assert_ptr_eq(ptr, buf + 5);
	ck_assert_int_eq(rpma_mr_get_size(mr, &size), 0);
	ck_assert_uint_eq(size, 5000);

	void *p2 = UNTOUCHED_MR;
	size_t s2 = 77;
	ck_assert_int_eq(rpma_mr_get_ptr(NULL, &p2), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_get_ptr(mr, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_get_size(NULL, &s2), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_get_size(mr, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_get_descriptor_size(NULL, &s2), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_get_descriptor_size(mr, NULL), RPMA_E_INVAL);
	ck_assert_ptr_eq(p2, UNTOUCHED_MR);
	ck_assert_uint_eq(s2, 77);

	ck_assert_int_eq(rpma_mr_get_descriptor_size(mr, &size), 0);
	ck_assert_uint_eq(size, 21);

	uint8_t desc[24];
	memset(desc, 0xee, sizeof(desc));
	ck_assert_int_eq(rpma_mr_get_descriptor(NULL, desc), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_get_descriptor(mr, NULL), RPMA_E_INVAL);
	ck_assert_uint_eq(desc[0], 0xee);

	ck_assert_int_eq(rpma_mr_dereg(&mr), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/* The 21 bytes: addr LE u64, length LE u64, rkey LE u32, usage u8. */
START_TEST(descriptor_layout)
{
	struct rpma_peer *peer = api_peer();
	char *buf = api_buf(2 * 4096);
	int usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
		RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
	struct rpma_mr_local *mr = NULL, *other = NULL;
	ck_assert_int_eq(rpma_mr_reg(peer, buf + 100, 1234, usage, &mr), 0);
	ck_assert_int_eq(rpma_mr_reg(peer, buf, 100, RPMA_MR_USAGE_SEND,
			&other), 0);

	uint8_t desc[24], desc2[24];
	memset(desc, 0xee, sizeof(desc));
	ck_assert_int_eq(rpma_mr_get_descriptor(mr, desc), 0);
	ck_assert_uint_eq(get_le(desc, 8), (uint64_t)(uintptr_t)(buf + 100));
	ck_assert_uint_eq(get_le(desc + 8, 8), 1234);
	ck_assert_uint_eq(desc[20], (unsigned)usage);
	/* exactly 21 bytes are written */
	ck_assert_uint_eq(desc[21], 0xee);
	/* each registration has its own key */
	ck_assert_int_eq(rpma_mr_get_descriptor(other, desc2), 0);
	ck_assert_uint_ne(get_le(desc + 16, 4), get_le(desc2 + 16, 4));

	/* the other side decodes it */
	struct rpma_mr_remote *remote = NULL;
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, 21, &remote), 0);
	size_t size = 0;
	int flush_type = -1;
	ck_assert_int_eq(rpma_mr_remote_get_size(remote, &size), 0);
	ck_assert_uint_eq(size, 1234);
	ck_assert_int_eq(rpma_mr_remote_get_flush_type(remote, &flush_type), 0);
	ck_assert_int_eq(flush_type, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	ck_assert_int_eq(rpma_mr_remote_delete(&remote), 0);

	ck_assert_int_eq(rpma_mr_dereg(&other), 0);
	ck_assert_int_eq(rpma_mr_dereg(&mr), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/* ------------------------------------------------------------- advise */

START_TEST(advise_validation)
{
	struct rpma_peer *peer = api_peer();
	char *buf = api_buf(4 * 4096);
	struct rpma_mr_local *ro = NULL, *rw = NULL;
	ck_assert_int_eq(rpma_mr_reg(peer, buf, 8192, RPMA_MR_USAGE_READ_SRC,
			&ro), 0);
	ck_assert_int_eq(rpma_mr_reg(peer, buf + 8192, 8192,
			RPMA_MR_USAGE_WRITE_DST, &rw), 0);
	const int pf = IBV_ADVISE_MR_ADVICE_PREFETCH;

	ck_assert_int_eq(rpma_mr_advise(NULL, 0, 1, pf, 0), RPMA_E_INVAL);
	/* the range must lie within the registration */
	ck_assert_int_eq(rpma_mr_advise(ro, 8193, 0, pf, 0), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_advise(ro, 0, 8193, pf, 0), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_advise(ro, 4096, 4097, pf, 0), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_advise(ro, 1, SIZE_MAX, pf, 0), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_advise(ro, SIZE_MAX, 2, pf, 0), RPMA_E_INVAL);
	/* unknown advice */
	ck_assert_int_eq(rpma_mr_advise(ro, 0, 1, 99, 0), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_advise(ro, 0, 1, -1, 0), RPMA_E_INVAL);
	/* flags other than IBV_ADVISE_MR_FLAG_FLUSH */
	ck_assert_int_eq(rpma_mr_advise(ro, 0, 1, pf,
			IBV_ADVISE_MR_FLAG_FLUSH << 1), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_advise(ro, 0, 1, pf, 0x80000000u),
			RPMA_E_INVAL);
	/* prefetching for writing needs a usage that writes into it */
	ck_assert_int_eq(rpma_mr_advise(ro, 0, 1,
			IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0), RPMA_E_INVAL);

	ck_assert_int_eq(rpma_mr_dereg(&rw), 0);
	ck_assert_int_eq(rpma_mr_dereg(&ro), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

START_TEST(advise_success)
{
	struct rpma_peer *peer = api_peer();
	char *buf = api_buf(4 * 4096);
	struct rpma_mr_local *ro = NULL, *rw = NULL;
	ck_assert_int_eq(rpma_mr_reg(peer, buf, 8192, RPMA_MR_USAGE_READ_SRC,
			&ro), 0);
	ck_assert_int_eq(rpma_mr_reg(peer, buf + 8192, 8192,
			RPMA_MR_USAGE_WRITE_DST, &rw), 0);

	ck_assert_int_eq(rpma_mr_advise(ro, 0, 8192,
			IBV_ADVISE_MR_ADVICE_PREFETCH, 0), 0);
	ck_assert_int_eq(rpma_mr_advise(ro, 100, 200,
			IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
			IBV_ADVISE_MR_FLAG_FLUSH), 0);
	ck_assert_int_eq(rpma_mr_advise(ro, 8192, 0,
			IBV_ADVISE_MR_ADVICE_PREFETCH, 0), 0);
	ck_assert_int_eq(rpma_mr_advise(rw, 4096, 4096,
			IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			IBV_ADVISE_MR_FLAG_FLUSH), 0);

	ck_assert_int_eq(rpma_mr_dereg(&rw), 0);
	ck_assert_int_eq(rpma_mr_dereg(&ro), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/* ------------------------------------------------------------- quota */

/* max_registered_bytes = 64K: the client's pinned bytes are bounded */
START_TEST(reg_quota)
{
	struct rpma_peer *peer = api_peer();
	size_t ps = page();
	size_t quota = 64 * 1024;
	char *area = mmap(NULL, 2 * quota, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(area, MAP_FAILED);

	struct rpma_mr_local *half = NULL, *more = NULL, *mr = UNTOUCHED_MR;
	ck_assert_int_eq(rpma_mr_reg(peer, area, quota / 2,
			RPMA_MR_USAGE_READ_SRC, &half), 0);
	ck_assert_int_eq(rpma_mr_reg(peer, area + quota, quota,
			RPMA_MR_USAGE_READ_SRC, &mr), RPMA_E_NOMEM);
	ck_assert_ptr_eq(mr, UNTOUCHED_MR);
	ck_assert_int_eq(rpma_mr_reg(peer, area + quota, quota / 2,
			RPMA_MR_USAGE_READ_SRC, &more), 0);
	/* one page more than the quota allows */
	ck_assert_int_eq(rpma_mr_reg(peer, area + quota + quota / 2, ps,
			RPMA_MR_USAGE_READ_SRC, &mr), RPMA_E_NOMEM);

	/* deregistering gives the bytes back */
	ck_assert_int_eq(rpma_mr_dereg(&half), 0);
	ck_assert_int_eq(rpma_mr_dereg(&more), 0);
	mr = NULL;
	ck_assert_int_eq(rpma_mr_reg(peer, area, quota,
			RPMA_MR_USAGE_READ_SRC, &mr), 0);
	ck_assert_int_eq(rpma_mr_dereg(&mr), 0);

	ck_assert_int_eq(munmap(area, 2 * quota), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/* ------------------------------------------------------------- scale */

#define MANY_REGS 100000

static unsigned
maps_lines(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	ck_assert_ptr_nonnull(f);
	unsigned n = 0;
	int c;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	(void) fclose(f);
	return n;
}

/*
 * 100,000 registrations of single pages of one buffer, half of them
 * upwards and half downwards: all work, the data stays, and the pages do
 * not become a mapping each (the process's mappings stay few).
 */
START_TEST(reg_many)
{
	struct rpma_peer *peer = api_peer();
	size_t ps = page();
	size_t len = (size_t)MANY_REGS * ps;
	uint8_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(buf, MAP_FAILED);
	for (size_t i = 0; i < MANY_REGS; i++)
		buf[i * ps] = (uint8_t)(i * 13);
	unsigned lines_before = maps_lines();

	struct rpma_mr_local **mrs = calloc(MANY_REGS, sizeof(*mrs));
	ck_assert_ptr_nonnull(mrs);
	size_t half = MANY_REGS / 2;
	for (size_t i = half; i < MANY_REGS; i++)
		ck_assert_int_eq(rpma_mr_reg(peer, buf + i * ps, ps,
				RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST,
				&mrs[i]), 0);
	for (size_t i = half; i-- > 0;)
		ck_assert_int_eq(rpma_mr_reg(peer, buf + i * ps, ps,
				RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST,
				&mrs[i]), 0);

	/* one memfd holds tens of MiB of neighbours: a handful of mappings */
	unsigned lines_after = maps_lines();
	ck_assert_msg(lines_after < lines_before + 64, "%u mappings, %u before",
			lines_after, lines_before);
	for (size_t i = 0; i < MANY_REGS; i++)
		ck_assert_uint_eq(buf[i * ps], (uint8_t)(i * 13));

	uint8_t desc[21];
	ck_assert_int_eq(rpma_mr_get_descriptor(mrs[MANY_REGS - 1], desc), 0);
	ck_assert_uint_eq(get_le(desc, 8),
			(uint64_t)(uintptr_t)(buf + (MANY_REGS - 1) * ps));

	for (size_t i = 0; i < MANY_REGS; i++)
		ck_assert_int_eq(rpma_mr_dereg(&mrs[i]), 0);
	free(mrs);
	/* still the application's memory, with its data */
	for (size_t i = 0; i < MANY_REGS; i++) {
		ck_assert_uint_eq(buf[i * ps], (uint8_t)(i * 13));
		buf[i * ps] = 0;
	}
	ck_assert_int_eq(munmap(buf, len), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/*
 * Page-aligned buffers of posix_memalign lie a page apart (malloc's header
 * between them): registering each still keeps the mappings few.
 */
START_TEST(reg_many_separate)
{
	struct rpma_peer *peer = api_peer();
	size_t ps = page();
	enum { N = 2000 };
	void *bufs[N];
	struct rpma_mr_local *mrs[N];
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(posix_memalign(&bufs[i], ps, ps), 0);
		memset(bufs[i], i & 0xff, ps);
	}
	unsigned lines_before = maps_lines();
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(rpma_mr_reg(peer, bufs[i], ps,
				RPMA_MR_USAGE_READ_SRC, &mrs[i]), 0);
	unsigned lines_after = maps_lines();
	ck_assert_msg(lines_after < lines_before + 64, "%u mappings, %u before",
			lines_after, lines_before);
	for (int i = 0; i < N; i++) {
		ck_assert_uint_eq(((uint8_t *)bufs[i])[ps - 1],
				(uint8_t)(i & 0xff));
		ck_assert_int_eq(rpma_mr_dereg(&mrs[i]), 0);
	}
	for (int i = 0; i < N; i++)
		free(bufs[i]);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_reg[] = { reg_args, reg_unshareable,
		reg_private_memory, reg_private_file_and_globals,
		reg_shared_file, dereg_args, getters, descriptor_layout,
		advise_validation, advise_success, NULL };
	const TTest *const tc_scale[] = { reg_many, reg_many_separate, NULL };
	const TTest *const tc_quota[] = { reg_quota, NULL };
	const struct th_tcase tcases[] = {
		{ "reg", .tests = tc_reg, .create = api_tcase_shared },
		/* functional, not timed: sanitizers on a busy machine */
		{ "scale", .tests = tc_scale, .create = api_tcase_shared,
				.timeout = 600 },
		{ "quota", .tests = tc_quota, .create = api_tcase_limited },
	};
	return api_run(th_suite("api_mr", tcases, TH_N(tcases)));
}
