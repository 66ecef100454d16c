// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_mr_io.c -- which way rpmad's writes into a registration go
 * (rpmad/objects/mr_io.c): into a page-cache segment a persist has
 * covered, a write of MR_IO_FD_WRITE_MIN or more goes through the
 * segment's write descriptor, decided by the whole write's size even for
 * a piece of it (a slice the arbiter cut short); a smaller write stores
 * through rpmad's mapping.
 *
 * The registration here is made by hand: a private mapping of a file
 * stands for rpmad's mapping, so a store through it never reaches the
 * file, and only a write through the descriptor does.
 */

#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clients/addrspace.h"
#include "core/daemon.h"
#include "objects/mr.h"
#include "objects/mr_io.h"
#include "th_suite.h"

struct daemon_state rpmad;

/* no segment here is the client's address space */
size_t
addrspace_read(struct addrspace *as, uint64_t addr, void *buf, size_t len)
{
	(void) as;
	(void) addr;
	(void) buf;
	ck_abort_msg("a file segment read through the address space");
	return len;
}

size_t
addrspace_write(struct addrspace *as, uint64_t addr, const void *buf,
		size_t len)
{
	(void) as;
	(void) addr;
	(void) buf;
	ck_abort_msg("a file segment written through the address space");
	return len;
}

#define FILE_LEN (256u << 10)
#define DST_ADDR 0x7f0000000000ull	/* the clients' addresses */
#define SRC_ADDR 0x7f1000000000ull
#define WHOLE_WRITE (1u << 20)
#define PIECE 4096u

static char path[] = "/tmp/test_mr_io.XXXXXX";
static int file_fd = -1;
static struct mr dst, src;
static struct mr_segment dst_seg, src_seg;
static uint8_t *src_buf;

static void
setup(void)
{
	file_fd = mkstemp(path);
	ck_assert_int_ge(file_fd, 0);
	ck_assert_int_eq(ftruncate(file_fd, FILE_LEN), 0);

	memset(&dst, 0, sizeof(dst));
	dst.base = mmap(NULL, FILE_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE,
			file_fd, 0);
	ck_assert_ptr_ne(dst.base, MAP_FAILED);
	dst.span_start = dst.addr = DST_ADDR;
	dst.span_len = dst.length = FILE_LEN;
	dst_seg = (struct mr_segment){
		.kind = MR_SEG_FILE, .fd = -1, .length = FILE_LEN,
		.page_cache = true, .persisted = true,
		.write_fd = open(path, O_RDWR | O_CLOEXEC),
	};
	ck_assert_int_ge(dst_seg.write_fd, 0);
	dst.segs = &dst_seg;
	dst.nsegs = 1;

	memset(&src, 0, sizeof(src));
	src_buf = malloc(FILE_LEN);
	ck_assert_ptr_nonnull(src_buf);
	for (size_t i = 0; i < FILE_LEN; i++)
		src_buf[i] = (uint8_t)(i * 7 + 1);
	src.base = src_buf;
	src.span_start = src.addr = SRC_ADDR;
	src.span_len = src.length = FILE_LEN;
	src_seg = (struct mr_segment){
		.kind = MR_SEG_FILE, .fd = -1, .length = FILE_LEN,
		.write_fd = -1,
	};
	src.segs = &src_seg;
	src.nsegs = 1;
}

static void
teardown(void)
{
	(void) munmap(dst.base, FILE_LEN);
	(void) close(dst_seg.write_fd);
	(void) close(file_fd);
	(void) unlink(path);
	free(src_buf);
	strcpy(path + strlen(path) - 6, "XXXXXX");
}

/* whether the file holds src's bytes at off */
static bool
file_has(uint64_t off, size_t len)
{
	uint8_t *got = malloc(len);
	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(pread(file_fd, got, len, (off_t)off), (ssize_t)len);
	bool same = memcmp(got, src_buf + off, len) == 0;
	free(got);
	return same;
}

/* a piece of a large copy: through the descriptor, like the whole */
START_TEST(test_copy_piece_of_large_write)
{
	mr_io_copy(&dst, DST_ADDR, &src, SRC_ADDR, PIECE, WHOLE_WRITE);
	ck_assert(file_has(0, PIECE));
	ck_assert_uint_eq(dst.lost_bytes, 0);
}
END_TEST

/* a piece of a large write handed over in parts (tcp_rx) */
START_TEST(test_write_piece_of_large_write)
{
	mr_io_write_part(&dst, DST_ADDR + PIECE, src_buf + PIECE, PIECE,
			WHOLE_WRITE);
	ck_assert(file_has(PIECE, PIECE));
	ck_assert_uint_eq(dst.lost_bytes, 0);
	ck_assert_ptr_null(mr_io_direct_write(&dst, DST_ADDR, PIECE,
			WHOLE_WRITE));
}
END_TEST

/* a small write stores through the mapping */
START_TEST(test_small_write_takes_mapping)
{
	mr_io_copy(&dst, DST_ADDR, &src, SRC_ADDR, PIECE, PIECE);
	ck_assert_mem_eq(dst.base, src_buf, PIECE);
	ck_assert(!file_has(0, PIECE));
	ck_assert_ptr_eq(mr_io_direct_write(&dst, DST_ADDR, PIECE, PIECE),
			dst.base);
}
END_TEST

/* before any persist covered the segment, large writes map too */
START_TEST(test_not_persisted_takes_mapping)
{
	dst_seg.persisted = false;
	mr_io_copy(&dst, DST_ADDR, &src, SRC_ADDR, WHOLE_WRITE / 16,
			WHOLE_WRITE);
	ck_assert_mem_eq(dst.base, src_buf, WHOLE_WRITE / 16);
	ck_assert(!file_has(0, WHOLE_WRITE / 16));
	mr_io_note_persist(&dst, DST_ADDR, PIECE);
	ck_assert(dst_seg.persisted);
}
END_TEST

int
main(void)
{
	const TTest *const tc_write_path[] = { test_copy_piece_of_large_write,
		test_write_piece_of_large_write, test_small_write_takes_mapping,
		test_not_persisted_takes_mapping, NULL };
	const struct th_tcase tcases[] = {
		{ "write path", .tests = tc_write_path, .setup = setup,
				.teardown = teardown },
	};
	return check_run(th_suite("mr_io", tcases, TH_N(tcases)), CK_NORMAL);
}
