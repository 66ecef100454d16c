// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_fidelity.c -- remote access where the application changed its
 * registered memory behaves as on a NIC, and huge pages register and stay
 * huge (issue 32, items 1 and 2, on the software transport)
 *
 * S registers its memory and asks C (it_remote_helper, on the other
 * rpmad or the same) to write or read it. A NIC writes the pages it
 * pinned whatever the application did to them since. rpmad reaches
 * private memory through the application's address space: where the
 * application made it unwritable (its own userfaultfd write-protection,
 * memory unmapped) the write fails (IBV_WC_REM_ACCESS_ERR at the
 * initiator), never a success for bytes that did not land, and S finds
 * its memory as it left it. Shared memory rpmad maps itself, as a NIC
 * pins pages: made read-only, the write lands; cut short, it completes
 * into no page, as a NIC's into pages the file no longer has.
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/memfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "itest.h"
#include "th_suite.h"

#define LEN (64u << 10)
#define HUGE (2u << 20)

static const int RW = IT_REMOTE_USAGE;

/* Runs `server` against it_remote_helper, on one rpmad or two. */
static void
run(it_remote_fn *server, int ndaemons)
{
	it_remote_test(ndaemons, NULL,
			&(struct it_remote_case){ .body = server });
}

/* C writes seed's pattern over [off, off + len) of mr: its status. */
static int
remote_write(const struct rpma_mr_local *mr, size_t off, size_t len,
		uint32_t seed)
{
	return it_remote_do(IT_OP_WRITE, mr, off, len, seed).status;
}

/* ------------------------------------- 1. pages the application locked */

/*
 * Write-protected by the application's own userfaultfd (a dirty-page
 * tracker's way): the write into that page fails, the others land.
 */
static void
uffd_wp_server(struct it_remote *r)
{
	uint8_t *buf = it_anon(LEN, 0x11);
	struct rpma_mr_local *mr = IT_REG(r->peer, buf, LEN, RW);
	IT_EQ(remote_write(mr, 0, it_page(), 5), IBV_WC_SUCCESS);
	IT_EQ(it_check(buf, it_page(), 5), -1);

	uint8_t *wp = buf + 4 * it_page();
	int uffd = it_write_protect(wp, it_page());

	/* the protected page: an error, and its bytes are as they were */
	IT_EQ(remote_write(mr, 4 * it_page(), it_page(), 6),
			IBV_WC_REM_ACCESS_ERR);
	for (size_t i = 0; i < it_page(); i++)
		IT_ASSERT(wp[i] == 0x11);
	(void) close(uffd);
	IT_OK(rpma_mr_dereg(&mr));
	IT_EQ(munmap(buf, LEN), 0);
}

START_TEST(test_userfaultfd_write_protected)
{
	if (!it_transport_is("tcp"))
		return;	/* a NIC writes pinned pages: this is the address space */
	run(uffd_wp_server, _i + 1);
}
END_TEST

/*
 * A memfd of LEN bytes mapped shared and registered, which C has written
 * all over with seed's pattern: the registration, the memfd and the
 * mapping.
 */
static struct rpma_mr_local *
memfd_written(struct it_remote *r, uint32_t seed, int *fd, uint8_t **buf)
{
	*fd = memfd_create("it_fidelity", MFD_CLOEXEC);
	IT_ASSERT(*fd >= 0 && ftruncate(*fd, LEN) == 0);
	*buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	IT_ASSERT(*buf != MAP_FAILED);
	memset(*buf, 0x22, LEN);
	struct rpma_mr_local *mr = IT_REG(r->peer, *buf, LEN, RW);
	IT_EQ(remote_write(mr, 0, LEN, seed), IBV_WC_SUCCESS);
	IT_EQ(it_check(*buf, LEN, seed), -1);
	return mr;
}

/*
 * Shared memory (a memfd) made read-only (or inaccessible) after it was
 * registered: rpmad reaches it through its own mapping of the memfd, as a
 * NIC through the pages it pinned, so a write still lands (the
 * application sees it once it may read again) and a read still works.
 */
static void
shared_prot_server(struct it_remote *r)
{
	int prot = *(const int *) r->arg;
	int fd;
	uint8_t *buf;
	struct rpma_mr_local *mr = memfd_written(r, 7, &fd, &buf);

	IT_EQ(mprotect(buf, LEN, prot), 0);
	if (prot & PROT_READ) {
		struct it_remote_res res = it_remote_do(IT_OP_READ, mr, 0,
				LEN, 7);
		IT_EQ(res.status, IBV_WC_SUCCESS);
		IT_EQ(res.mismatch, -1);
	}
	IT_EQ(remote_write(mr, 0, it_page(), 8), IBV_WC_SUCCESS);
	IT_EQ(mprotect(buf, LEN, PROT_READ), 0);
	IT_EQ(it_check(buf, it_page(), 8), -1);
	uint8_t *want = malloc(LEN);
	IT_ASSERT(want != NULL);
	it_fill(want, LEN, 7);
	IT_EQ(memcmp(buf + it_page(), want + it_page(), LEN - it_page()), 0);
	free(want);

	IT_OK(rpma_mr_dereg(&mr));
	IT_EQ(munmap(buf, LEN), 0);
	(void) close(fd);
}

START_TEST(test_shared_made_unwritable)
{
	if (!it_transport_is("tcp"))
		return;
	/* read-only, inaccessible; on one rpmad and on two */
	static const int prots[] = { PROT_READ, PROT_NONE };
	it_remote_test(_i % 2 + 1, NULL,
			&(struct it_remote_case){ .body = shared_prot_server,
					.arg = (void *) &prots[_i / 2] });
}
END_TEST

/*
 * A memfd shrunk under its registration, then grown back: a NIC keeps
 * the pages it pinned, so a write into the part cut off completes into
 * pages nobody sees. rpmad's mapping has no page there (the kernel
 * raises SIGBUS, which rpmad's guard takes): the write completes without
 * landing, rpmad serves on, the rest of the registration works, and the
 * part grown back reads zeros, as it would natively.
 */
static void
shared_shrunk_server(struct it_remote *r)
{
	int fd;
	uint8_t *buf;
	struct rpma_mr_local *mr = memfd_written(r, 9, &fd, &buf);

	IT_EQ(ftruncate(fd, LEN / 2), 0);
	IT_EQ(remote_write(mr, LEN / 2, LEN / 2, 10), IBV_WC_SUCCESS);
	IT_EQ(it_remote_do(IT_OP_READ, mr, LEN / 2, it_page(), 10).status,
			IBV_WC_SUCCESS);
	IT_EQ(remote_write(mr, 0, it_page(), 11), IBV_WC_SUCCESS);
	IT_EQ(it_check(buf, it_page(), 11), -1);

	IT_EQ(ftruncate(fd, LEN), 0);
	for (size_t i = LEN / 2; i < LEN; i++)
		IT_ASSERT_MSG(buf[i] == 0, "byte %zu grown back is %u", i,
				buf[i]);
	IT_OK(rpma_mr_dereg(&mr));
	IT_EQ(munmap(buf, LEN), 0);
	(void) close(fd);
}

START_TEST(test_shared_shrunk)
{
	if (!it_transport_is("tcp"))
		return;
	run(shared_shrunk_server, _i + 1);
}
END_TEST

/* Unmapped while registered: there is no page to land in, so an error. */
static void
unmapped_server(struct it_remote *r)
{
	uint8_t *buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	IT_ASSERT(buf != MAP_FAILED);
	struct rpma_mr_local *mr = IT_REG(r->peer, buf, LEN, RW);
	IT_EQ(munmap(buf + LEN / 2, LEN / 2), 0);
	IT_EQ(remote_write(mr, 0, LEN / 2, 3), IBV_WC_SUCCESS);
	IT_EQ(it_check(buf, LEN / 2, 3), -1);
	IT_EQ(remote_write(mr, LEN / 2, it_page(), 4), IBV_WC_REM_ACCESS_ERR);
	IT_OK(rpma_mr_dereg(&mr));
	IT_EQ(munmap(buf, LEN / 2), 0);
}

START_TEST(test_unmapped_while_registered)
{
	if (!it_transport_is("tcp"))
		return;
	run(unmapped_server, _i + 1);
}
END_TEST

/* -------------------------------------------------------- 2. huge pages */

/*
 * Huge pages three ways (private MAP_HUGETLB, shared MAP_HUGETLB, a
 * MFD_HUGETLB memfd): they register, C writes and reads them, and they
 * are still huge pages after.
 */
static void
huge_server(struct it_remote *r)
{
	for (int kind = 0; kind < 3; kind++) {
		int fd = -1;
		uint8_t *buf;
		if (kind < 2) {
			buf = mmap(NULL, HUGE, PROT_READ | PROT_WRITE,
					(kind ? MAP_SHARED : MAP_PRIVATE) |
					MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		} else {
			fd = memfd_create("it_fidelity", MFD_CLOEXEC |
					MFD_HUGETLB);
			IT_ASSERT(fd >= 0 && ftruncate(fd, HUGE) == 0);
			buf = mmap(NULL, HUGE, PROT_READ | PROT_WRITE,
					MAP_SHARED, fd, 0);
		}
		IT_ASSERT_MSG(buf != MAP_FAILED, "huge pages, kind %d: %s",
				kind, strerror(errno));
		memset(buf, 0, HUGE);
		struct rpma_mr_local *mr = IT_REG(r->peer, buf, HUGE, RW);
		IT_EQ(remote_write(mr, 0, HUGE, 10 + (uint32_t)kind),
				IBV_WC_SUCCESS);
		IT_EQ(it_check(buf, HUGE, 10 + (uint32_t)kind), -1);
		struct it_remote_res res = it_remote_do(IT_OP_READ, mr, 0,
				HUGE, 10 + (uint32_t)kind);
		IT_EQ(res.status, IBV_WC_SUCCESS);
		IT_EQ(res.mismatch, -1);
		IT_EQ(it_smaps_kb(buf, "KernelPageSize:"), (long) (HUGE >> 10));
		IT_OK(rpma_mr_dereg(&mr));
		IT_EQ(it_smaps_kb(buf, "KernelPageSize:"), (long) (HUGE >> 10));
		IT_EQ(munmap(buf, HUGE), 0);
		if (fd >= 0)
			(void) close(fd);
	}
}

/* Huge pages for the test, as many as it needs; the old count after. */
static long
reserve_huge_pages(long n)
{
	FILE *f = fopen("/proc/sys/vm/nr_hugepages", "r+e");
	if (f == NULL)
		return -1;
	long old = -1;
	if (fscanf(f, "%ld", &old) != 1)
		old = -1;
	(void) fclose(f);
	f = fopen("/proc/sys/vm/nr_hugepages", "we");
	if (f == NULL)
		return -1;
	(void) fprintf(f, "%ld\n", old + n);
	(void) fclose(f);
	return old;
}

static void
release_huge_pages(long old)
{
	FILE *f = fopen("/proc/sys/vm/nr_hugepages", "we");
	if (f == NULL)
		return;
	(void) fprintf(f, "%ld\n", old);
	(void) fclose(f);
}

START_TEST(test_huge_pages)
{
	if (!it_transport_is("tcp"))
		return;	/* the moved-pages path is it_moved's */
	long old = reserve_huge_pages(8);
	if (old < 0) {
		(void) fprintf(stderr, "it_fidelity: no huge pages to "
				"reserve (not root?): not checked\n");
		return;
	}
	run(huge_server, _i + 1);
	release_huge_pages(old);
}
END_TEST

int
main(void)
{
	/* 1: one rpmad (memory to memory); 2: two rpmads */
	const struct th_test tc_fidelity[] = {
		TH_LOOP(test_userfaultfd_write_protected, 0, 2),
		TH_LOOP(test_shared_made_unwritable, 0, 4),
		TH_LOOP(test_shared_shrunk, 0, 2),
		TH_LOOP(test_unmapped_while_registered, 0, 2),
		TH_LOOP(test_huge_pages, 0, 2), TH_END
	};
	const struct th_tcase tcases[] = {
		{ "fidelity", .steps = tc_fidelity, .create = it_tcase_create },
	};
	return check_run(th_suite("integration: fidelity", tcases,
					 TH_N(tcases)),
			CK_ENV);
}
