// SPDX-License-Identifier: BSD-3-Clause
/*
 * hostile_cgroup.c -- a tenant cannot make rpmad pay for its memory
 * (issue 20, item 4)
 *
 * The attacker S sits in a memory cgroup of 64 MiB; rpmad A, its rpmad,
 * in a cgroup of its own whose peak is measured. S registers 40 MiB of
 * its private memory, and in a second round 40 MiB of a memfd of its
 * own, hands the pages back to the kernel (MADV_DONTNEED, MADV_REMOVE)
 * and has C, on rpmad B, write into them again and again: 1 GiB in all.
 * Every page those writes fill in of the private memory is S's, charged
 * to S's cgroup (which reclaims its own). The memfd rpmad maps itself,
 * guarded against holes (rpmad/objects/mr_holes.h): writes into the pages
 * S gave back land nowhere, as a NIC's land in the pages it pinned, until
 * S faults them in again. rpmad's cgroup grows with neither.
 *
 * It needs a memory cgroup controller it can make groups in (cgroup v2's
 * memory.peak, Linux 5.19, or v1's memory.max_usage_in_bytes); without
 * one it says so and passes.
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostile.h"
#include "th_suite.h"

#define TENANT_LIMIT (64ull << 20)
#define BUF (40u << 20)
#define TOTAL (1ull << 30)
/* what rpmad may grow by: its own buffers, never the tenant's pages */
#define RPMAD_GROWTH_MAX (16ll << 20)

/* A memory cgroup hierarchy this test may make groups in. */
struct cg {
	char root[256];
	bool v2;
};

static bool
has_memory_controller(const char *controllers)
{
	FILE *f = fopen(controllers, "re");
	if (f == NULL)
		return false;
	char line[512] = "";
	bool yes = fgets(line, sizeof(line), f) && strstr(line, "memory");
	(void) fclose(f);
	return yes;
}

static bool
cg_find(struct cg *cg)
{
	static const char *const v2[] = { "/sys/fs/cgroup",
		"/sys/fs/cgroup/unified" };
	for (size_t i = 0; i < 2; i++) {
		char c[300];
		(void) snprintf(c, sizeof(c), "%s/cgroup.controllers", v2[i]);
		if (has_memory_controller(c)) {
			(void) snprintf(cg->root, sizeof(cg->root), "%s",
					v2[i]);
			cg->v2 = true;
			return true;
		}
	}
	if (access("/sys/fs/cgroup/memory/memory.limit_in_bytes", W_OK) ==
			0) {
		(void) snprintf(cg->root, sizeof(cg->root),
				"/sys/fs/cgroup/memory");
		cg->v2 = false;
		return true;
	}
	return false;
}

static int
cg_write(const char *dir, const char *file, const char *value)
{
	char path[512];
	(void) snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, value, strlen(value));
	(void) close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

static long long
cg_read(const char *dir, const char *file)
{
	char path[512], buf[64] = "";
	(void) snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return -1;
	bool ok = fgets(buf, sizeof(buf), f) != NULL;
	(void) fclose(f);
	return ok ? strtoll(buf, NULL, 10) : -1;
}

static int
cg_join(const char *dir, pid_t pid)
{
	char v[32];
	(void) snprintf(v, sizeof(v), "%d", (int)pid);
	return cg_write(dir, "cgroup.procs", v);
}

/* The peak memory use of a group since it was made (or reset). */
static long long
cg_peak(const struct cg *cg, const char *dir)
{
	return cg_read(dir, cg->v2 ? "memory.peak" : "memory.max_usage_in_bytes");
}

static char tenant_dir[420];

/* S: the tenant. It joins its cgroup first: what it faults is charged. */
static int
tenant(const struct it_env *env, void *arg)
{
	(void) arg;
	IT_EQ(cg_join(tenant_dir, getpid()), 0);
	struct it_remote r;
	it_remote_open(&r, env);
	for (int kind = 0; kind < 2; kind++) {
		uint8_t *p;
		int fd = -1;
		if (kind == 0) {
			p = mmap(NULL, BUF, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		} else {
			fd = memfd_create("tenant", MFD_CLOEXEC);
			IT_ASSERT(fd >= 0 && ftruncate(fd, BUF) == 0);
			p = mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_SHARED,
					fd, 0);
		}
		IT_ASSERT(p != MAP_FAILED);
		struct rpma_mr_local *mr = NULL;
		IT_OK(rpma_mr_reg(r.peer, p, BUF, RPMA_MR_USAGE_WRITE_DST |
				RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr));
		for (uint64_t done = 0; done < TOTAL / 2; done += BUF) {
			/* the pages go back to the kernel; C fills them again */
			IT_EQ(madvise(p, BUF, kind == 0 ? MADV_DONTNEED :
					MADV_REMOVE), 0);
			it_remote_write(mr, 0, BUF, 7);
		}
		if (kind == 1) {
			/* nothing filled the holes: the tenant reads zeros */
			for (size_t i = 0; i < BUF; i += 4096)
				IT_ASSERT_MSG(p[i] == 0,
						"byte %zu of a "
						"hole is %u",
						i, p[i]);
			/* its own pages again, which a write then reaches */
			memset(p, 0, BUF);
			it_remote_write(mr, 0, BUF, 7);
		}
		/* and they are what the tenant sees */
		IT_EQ(it_check(p, BUF, 7), -1);
		IT_OK(rpma_mr_dereg(&mr));
		IT_EQ(munmap(p, BUF), 0);
		if (fd >= 0)
			(void) close(fd);
	}
	it_remote_close(&r);
	return 0;
}

START_TEST(test_tenant_pays_for_its_pages)
{
	struct cg cg;
	if (!cg_find(&cg)) {
		(void) fprintf(stderr, "hostile_cgroup: no memory cgroup "
				"controller to make groups in: not checked\n");
		return;
	}
	char top[400], daemon_dir[420];
	(void) snprintf(top, sizeof(top), "%s/rpmad-hostile-%d", cg.root,
			(int)getpid());
	(void) snprintf(daemon_dir, sizeof(daemon_dir), "%s/daemon", top);
	(void) snprintf(tenant_dir, sizeof(tenant_dir), "%s/tenant", top);
	ck_assert_int_eq(mkdir(top, 0755), 0);
	if (cg.v2)
		ck_assert_int_eq(cg_write(top, "cgroup.subtree_control",
				"+memory"), 0);
	ck_assert_int_eq(mkdir(daemon_dir, 0755), 0);
	ck_assert_int_eq(mkdir(tenant_dir, 0755), 0);
	char limit[32];
	(void) snprintf(limit, sizeof(limit), "%llu", TENANT_LIMIT);
	ck_assert_int_eq(cg_write(tenant_dir, cg.v2 ? "memory.max" :
			"memory.limit_in_bytes", limit), 0);

	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 2), 0);
	ck_assert_int_eq(cg_join(daemon_dir, env.d[0].pid), 0);
	long long before = cg_peak(&cg, daemon_dir);
	ck_assert_msg(before >= 0, "no peak of the daemon's group");
	ck_assert_msg(it_run_pair(&env, tenant, it_remote_helper, NULL) == 0,
			"%s", it_report());
	long long after = cg_peak(&cg, daemon_dir);
	(void) fprintf(stderr, "hostile_cgroup: rpmad's group: peak %lld kB "
			"before, %lld kB after 1 GiB written into the tenant's "
			"punched pages\n", before >> 10, after >> 10);
	ck_assert_msg(after - before < RPMAD_GROWTH_MAX, "rpmad's memory "
			"cgroup grew by %lld kB while the tenant's pages were "
			"filled", (after - before) >> 10);
	ck_assert_int_eq(it_daemon_serves(&env.d[0], env.d[0].pid), 0);

	/* the daemons leave the groups before they go */
	ck_assert_int_eq(cg_join(cg.root, env.d[0].pid), 0);
	ck_assert_int_eq(it_env_stop(&env), 0);
	(void) rmdir(tenant_dir);
	(void) rmdir(daemon_dir);
	(void) rmdir(top);
}
END_TEST

int
main(void)
{
	const TTest *const tc_cgroup[] = { test_tenant_pays_for_its_pages,
		NULL };
	const struct th_tcase tcases[] = {
		{ "cgroup", .tests = tc_cgroup, .create = it_tcase_create,
				.timeout = 120 },
	};
	return check_run(th_suite("hostile: memory cgroups", tcases,
					 TH_N(tcases)),
			CK_ENV);
}
