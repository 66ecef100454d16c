// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_persist.c -- what a persistent flush is worth, kind of memory by kind
 * of memory, on the transport under test. A target registers the memory
 * for persistent and visibility flushes and declares direct write to pmem;
 * rpmad grants RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT only where it can make
 * the memory persistent, and says how (librpmaclient(7), rpmactl mrs):
 *
 *   memory              tcp            verbs
 *   device DAX          cache flush    device (the NIC's read after writes)
 *   device DAX, then
 *     anonymous memory  none           none (all of it, or nothing)
 *   fsdax file          cache flush    device with on-demand paging; else
 *                                      rpma_mr_reg fails, saying why
 *   page-cache file     msync          none
 *   tmpfs file          none           none
 *   anonymous memory    none           none
 *
 * The initiator sees the same in the descriptor
 * (rpma_mr_remote_get_flush_type). Where granted, it writes and flushes
 * persistently; then the target application and its rpmad are killed
 * (SIGKILL: nothing gets a chance to write anything later) and the medium
 * holds every byte, and nothing else. Where not, a persistent flush is
 * RPMA_E_NOSUPP and a visibility flush makes the data visible.
 *
 * The device DAX and fsdax cases run where there is such memory (the VM:
 * RPMAD_TEST_DEVDAX=/dev/daxN.M, RPMAD_TEST_FSDAX_DIR=a directory of a
 * file system mounted -o dax); the page-cache file goes to
 * RPMAD_TEST_FILE_DIR, else the build tree (a file system with a disk,
 * where the scratch directory may be tmpfs).
 */

#include <check.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "itest.h"
#include "th_suite.h"

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

enum { TAG_TARGET_UP = 100, TAG_REFUSED, TAG_FLUSHED };

#define PM_SIZE (256 * 1024)

/* The pieces written and flushed (offsets not page aligned on purpose). */
static const struct piece {
	size_t off, len;
	uint32_t seed;
} pieces[] = {
	{ 0, 4096, 201 },
	{ 70001, 12345, 202 },
	{ PM_SIZE - 100, 100, 203 },
};
#define NPIECES (sizeof(pieces) / sizeof(pieces[0]))

enum kind { K_DEVDAX, K_DEVDAX_ANON, K_FSDAX, K_FILE, K_TMPFS, K_ANON };

static const struct kase {
	enum kind kind;
	const char *name;
	bool kill_rpmad_first;	/* else the application first */
} cases[] = {
	{ K_DEVDAX, "device DAX", false },
	{ K_DEVDAX_ANON, "device DAX with anonymous memory after it", false },
	{ K_FSDAX, "fsdax file", true },
	{ K_FILE, "page-cache file", false },
	{ K_FILE, "page-cache file", true },
	{ K_TMPFS, "tmpfs file", false },
	{ K_ANON, "anonymous memory", false },
};

/* ------------------------------------------------ what rpmad should do */

static bool
odp(void)
{
	/* rpmad's verbs transport pages on demand where the device can */
	const char *e = getenv("RPMAD_TEST_ODP");
	return e && strcmp(e, "1") == 0;
}

/* Whether the kind can be registered at all on this transport. */
static bool
registrable(enum kind k)
{
	return !(k == K_FSDAX && it_transport_is("verbs") && !odp());
}

/* How rpmad persists the kind on this transport (rpmactl's words). */
static const char *
persistence(enum kind k)
{
	bool verbs = it_transport_is("verbs");
	switch (k) {
	case K_DEVDAX:
	case K_FSDAX:
		return verbs ? "device" : "cache flush";
	case K_FILE:
		return verbs ? "none" : "msync";
	case K_DEVDAX_ANON:	/* a peer flushes ranges: all or none */
	case K_TMPFS:
	case K_ANON:
		break;
	}
	return "none";
}

static bool
persistable(enum kind k)
{
	return strcmp(persistence(k), "none") != 0;
}

/* ---------------------------------------------------------- the memory */

/* Where a case's memory is, for the target to map and the parent to read. */
struct medium {
	char path[300];		/* "" for anonymous memory */
	off_t offset;		/* of the registration in the file or device */
	size_t map_len;		/* what the target maps */
	off_t map_offset;	/* where in the file or device */
	size_t reg_off;		/* the registration, in the mapping */
	int map_flags;
};

static bool
devdax_alignment(const char *dev, size_t *align)
{
	char path[300], copy[300];
	(void) snprintf(copy, sizeof(copy), "%s", dev);
	(void) snprintf(path, sizeof(path), "/sys/bus/dax/devices/%s/align",
			basename(copy));
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return false;
	unsigned long a = 0;
	bool ok = fscanf(f, "%lu", &a) == 1 && a > 0;
	(void) fclose(f);
	*align = a;
	return ok;
}

/*
 * The medium of a kind, or false where this host has none. A device DAX
 * is mapped as an application must map it (whole units of its alignment,
 * here two from the second one on) and registered in part: from 64 KiB
 * before the boundary of the units to 192 KiB after, at an offset that is
 * not even page aligned. With anonymous memory after it: one unit of the
 * device, then anonymous memory, registered from 128 KiB before their
 * boundary on (two segments, the device's beginning inside a unit).
 */
static bool
medium_of(enum kind k, const struct it_env *env, struct medium *m)
{
	memset(m, 0, sizeof(*m));
	m->map_len = PM_SIZE;
	m->map_flags = MAP_SHARED;
	const char *dir = NULL;
	switch (k) {
	case K_DEVDAX:
	case K_DEVDAX_ANON: {
		const char *dev = getenv("RPMAD_TEST_DEVDAX");
		size_t align;
		if (dev == NULL || !*dev || !devdax_alignment(dev, &align))
			return false;
		(void) snprintf(m->path, sizeof(m->path), "%s", dev);
		m->map_len = 2 * align;
		m->map_offset = (off_t)align;
		if (k == K_DEVDAX_ANON) {
			m->reg_off = align - 128 * 1024 + 100;
			return true;
		}
		m->reg_off = align - 64 * 1024 + 100;
		m->offset = m->map_offset + (off_t)m->reg_off;
		return true;
	}
	case K_FSDAX:
		dir = getenv("RPMAD_TEST_FSDAX_DIR");
		if (dir == NULL || !*dir)
			return false;
		/* as libpmem maps a file of such a file system */
		m->map_flags = MAP_SHARED_VALIDATE | MAP_SYNC;
		break;
	case K_FILE:
		dir = getenv("RPMAD_TEST_FILE_DIR");
		if (dir == NULL || !*dir)
			dir = getenv("TOP_BUILDDIR");
		if (dir == NULL || !*dir)
			dir = env->dir;
		break;
	case K_TMPFS:
		if (access("/dev/shm", W_OK))
			return false;
		dir = "/dev/shm";
		break;
	case K_ANON:
		return true;
	}
	(void) snprintf(m->path, sizeof(m->path), "%s/it_persist.%d.pmem", dir,
			(int)getpid());
	return true;
}

/* What the parent hands its roles: the case and its medium. */
struct role_arg {
	const struct kase *c;
	struct medium m;
};

/*
 * A unit of the device DAX, and anonymous memory right after it: a
 * reservation of three units, the device mapped over the first aligned
 * one and private memory over the next.
 */
static uint8_t *
map_devdax_anon(const struct medium *m, uint8_t **map)
{
	size_t unit = m->map_len / 2;
	uint8_t *raw = mmap(NULL, 3 * unit, PROT_NONE, MAP_PRIVATE |
			MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	IT_ASSERT(raw != MAP_FAILED);
	uint8_t *at = (uint8_t *)(((uintptr_t)raw + unit - 1) & ~(unit - 1));
	int fd = open(m->path, O_RDWR);
	IT_ASSERT_MSG(fd >= 0, "open %s", m->path);
	IT_ASSERT(mmap(at, unit, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			fd, m->map_offset) == at);
	(void) close(fd);
	IT_ASSERT(mmap(at + unit, unit, PROT_READ | PROT_WRITE, MAP_PRIVATE |
			MAP_ANONYMOUS | MAP_FIXED, -1, 0) == at + unit);
	memset(at, 0, 2 * unit);
	*map = raw;
	return at + m->reg_off;
}

/* The target's mapping of the medium, zeroed; the registration's start. */
static uint8_t *
map_medium(enum kind k, const struct medium *m, uint8_t **map)
{
	if (k == K_ANON) {
		*map = it_alloc(PM_SIZE);
		return *map;
	}
	if (k == K_DEVDAX_ANON)
		return map_devdax_anon(m, map);
	bool file = k != K_DEVDAX;
	int fd = open(m->path, O_RDWR | (file ? O_CREAT | O_TRUNC : 0), 0600);
	IT_ASSERT_MSG(fd >= 0, "open %s", m->path);
	if (file)
		IT_EQ(ftruncate(fd, (off_t)m->map_len), 0);
	*map = mmap(NULL, m->map_len, PROT_READ | PROT_WRITE, m->map_flags, fd,
			m->map_offset);
	IT_ASSERT_MSG(*map != MAP_FAILED, "mmap %s", m->path);
	(void) close(fd);
	memset(*map, 0, m->map_len);
	return *map + m->reg_off;
}

/* ------------------------------------------------------------ the roles */

static char last_log[1024];

static void
keep_log(enum rpma_log_level level, const char *file_name, const int line_no,
		const char *function_name, const char *fmt, ...)
{
	(void) level;
	(void) file_name;
	(void) line_no;
	(void) function_name;
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(last_log, sizeof(last_log), fmt, ap);
	va_end(ap);
}

static int
target(const struct it_env *env, void *arg)
{
	const struct role_arg *ra = arg;
	const struct kase *c = ra->c;
	const struct medium *m = &ra->m;
	uint8_t *map;
	uint8_t *pm = map_medium(c->kind, m, &map);

	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_mr_local *mr = NULL;
	const int usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
		RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
		RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	if (!registrable(c->kind)) {
		/* librpma's code, and a reason that says what would work */
		IT_OK(rpma_log_set_function(keep_log));
		IT_ERR(RPMA_E_PROVIDER, rpma_mr_reg(peer, pm, PM_SIZE, usage,
				&mr));
		IT_ASSERT_MSG(strstr(last_log, "on-demand paging") &&
				strstr(last_log, "devdax"), "the log said: %s",
				last_log);
		IT_OK(rpma_peer_delete(&peer));
		IT_EQ(it_tell(IT_PARENT, TAG_REFUSED, NULL, 0), 0);
		return 0;
	}
	IT_OK(rpma_mr_reg(peer, pm, PM_SIZE, usage, &mr));
	struct rpma_peer_cfg *pcfg = NULL;
	IT_OK(rpma_peer_cfg_new(&pcfg));
	IT_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	struct rpma_ep *ep = it_listen(peer, env);
	IT_EQ(it_tell(IT_PARENT, TAG_TARGET_UP, NULL, 0), 0);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, pcfg);

	if (persistable(c->kind)) {
		/* the end comes by SIGKILL, with the connection up */
		(void) it_hear(IT_TAG_DONE, NULL, 0, IT_ROLE_MS);
		IT_ASSERT_MSG(0, "the target was not killed");
	}
	it_await_close(&conn);
	/* visible: the pieces are in the application's memory */
	for (size_t i = 0; i < NPIECES; i++)
		IT_EQ(it_check(pm + pieces[i].off, pieces[i].len,
				pieces[i].seed), -1);
	IT_OKS(rpma_ep_shutdown(&ep), rpma_peer_cfg_delete(&pcfg),
			rpma_mr_dereg(&mr), rpma_peer_delete(&peer));
	if (c->kind == K_ANON)
		free(map);
	else if (c->kind == K_DEVDAX_ANON)
		IT_EQ(munmap(map, 3 * m->map_len / 2), 0);
	else
		IT_EQ(munmap(map, m->map_len), 0);
	return 0;
}

/*
 * Connects to the target, takes the registration it describes (*rmr) and
 * applies its peer configuration, which must declare direct write to
 * pmem; the connection's CQ in *cq.
 */
static struct rpma_conn *
connect_target(const struct it_env *env, struct rpma_peer *peer,
		struct rpma_cq **cq, struct rpma_mr_remote **rmr)
{
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	IT_OK(rpma_conn_get_cq(conn, cq));
	struct it_desc desc;
	it_expect_desc(&desc);
	*rmr = it_desc_mr(&desc);
	struct rpma_peer_cfg *pcfg = NULL;
	IT_OK(rpma_peer_cfg_from_descriptor(desc.pcfg, desc.pcfg_len, &pcfg));
	bool direct = false;
	IT_OK(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct));
	IT_ASSERT(direct);
	IT_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	IT_OK(rpma_peer_cfg_delete(&pcfg));
	return conn;
}

static int
initiator(const struct it_env *env, void *arg)
{
	const struct kase *c = ((const struct role_arg *)arg)->c;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(PM_SIZE);
	for (size_t i = 0; i < NPIECES; i++)
		it_fill(buf + pieces[i].off, pieces[i].len, pieces[i].seed);
	uint8_t *back = it_alloc(PM_SIZE);
	struct rpma_mr_local *mr = NULL, *back_mr = NULL;
	IT_OK(rpma_mr_reg(peer, buf, PM_SIZE, RPMA_MR_USAGE_WRITE_SRC, &mr));
	IT_OK(rpma_mr_reg(peer, back, PM_SIZE, RPMA_MR_USAGE_READ_DST,
			&back_mr));
	struct rpma_cq *cq = NULL;
	struct rpma_mr_remote *rmr = NULL;
	struct rpma_conn *conn = connect_target(env, peer, &cq, &rmr);

	/* the truth, as a remote peer sees it */
	bool persistent = persistable(c->kind);
	int ftype = 0;
	IT_OK(rpma_mr_remote_get_flush_type(rmr, &ftype));
	IT_EQ(ftype, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			(persistent ? RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT : 0));

	/* write, flush; only the last flush reports its success */
	enum rpma_flush_type type = persistent ? RPMA_FLUSH_TYPE_PERSISTENT :
		RPMA_FLUSH_TYPE_VISIBILITY;
	for (size_t i = 0; i < NPIECES; i++) {
		const struct piece *p = &pieces[i];
		int last = i == NPIECES - 1;
		IT_OK(rpma_write(conn, rmr, p->off, mr, p->off, p->len,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
		if (!persistent)
			IT_ERR(RPMA_E_NOSUPP, rpma_flush(conn, rmr, p->off,
					p->len, RPMA_FLUSH_TYPE_PERSISTENT,
					RPMA_F_COMPLETION_ALWAYS, NULL));
		IT_OK(rpma_flush(conn, rmr, p->off, p->len, type,
				last ? RPMA_F_COMPLETION_ALWAYS :
				RPMA_F_COMPLETION_ON_ERROR, (void *)0xf1));
	}
	struct ibv_wc wc;
	it_wc_ok(conn, cq, 0xf1, IBV_WC_RDMA_READ, &wc);

	if (persistent) {
		IT_EQ(it_tell(IT_PARENT, TAG_FLUSHED, NULL, 0), 0);
		/* the target's host goes away */
		enum rpma_conn_event ev = it_next_event(conn, IT_WAIT_MS);
		IT_ASSERT_MSG(ev == it_peer_gone_event(), "event %s",
				rpma_utils_conn_event_2str(ev));
		IT_OK(rpma_conn_delete(&conn));
	} else {
		/* visible: what a read finds */
		for (size_t i = 0; i < NPIECES; i++) {
			const struct piece *p = &pieces[i];
			IT_OK(rpma_read(conn, back_mr, p->off, rmr, p->off,
					p->len, RPMA_F_COMPLETION_ALWAYS,
					(void *)0xbe));
			it_wc_ok(conn, cq, 0xbe, IBV_WC_RDMA_READ, &wc);
			IT_EQ(it_check(back + p->off, p->len, p->seed), -1);
		}
		IT_EQ(it_tell(IT_PARENT, TAG_FLUSHED, NULL, 0), 0);
		it_close(&conn);
	}
	IT_OKS(rpma_mr_remote_delete(&rmr), rpma_mr_dereg(&mr),
			rpma_mr_dereg(&back_mr), rpma_peer_delete(&peer));
	free(buf);
	free(back);
	return 0;
}

/* ------------------------------------------------------------ the parent */

/* The medium holds every piece, and nothing else of the registration. */
static void
check_medium(const struct medium *m)
{
	int fd = open(m->path, O_RDONLY);
	ck_assert_msg(fd >= 0, "open %s", m->path);
	/* a device DAX cannot be read(2), only mapped */
	uint8_t *map = mmap(NULL, m->map_len, PROT_READ, MAP_SHARED, fd,
			m->map_offset);
	ck_assert_msg(map != MAP_FAILED, "mmap %s", m->path);
	(void) close(fd);
	uint8_t *copy = malloc(PM_SIZE);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, map + m->reg_off, PM_SIZE);
	(void) munmap(map, m->map_len);
	for (size_t i = 0; i < NPIECES; i++) {
		const struct piece *p = &pieces[i];
		long bad = it_check(copy + p->off, p->len, p->seed);
		ck_assert_msg(bad < 0, "piece %zu: byte %ld is not in %s", i,
				bad, m->path);
		memset(copy + p->off, 0, p->len);
	}
	size_t stray = 0;
	while (stray < PM_SIZE && copy[stray] == 0)
		stray++;
	ck_assert_msg(stray == PM_SIZE, "byte %zu was written", stray);
	free(copy);
}

START_TEST(test_persistent_flush_by_kind)
{
	struct role_arg ra = { .c = &cases[_i] };
	const struct kase *c = ra.c;
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 2), 0);
	if (!medium_of(c->kind, &env, &ra.m)) {
		(void) fprintf(stderr, "it_persist: no %s here: skipped\n",
				c->name);
		ck_assert_int_eq(it_env_stop(&env), 0);
		return;
	}
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv, target,
			&ra), 0);
	if (!registrable(c->kind)) {
		ck_assert_msg(it_group_hear(&g, TAG_REFUSED, 1) == 0, "%s",
				it_report());
		goto done;
	}
	ck_assert_msg(it_group_hear(&g, TAG_TARGET_UP, 1) == 0, "%s",
			it_report());

	/* the operator's view: what it grants, and how it persists */
	struct it_admin a;
	ck_assert_int_eq(it_admin_open(&a, env.srv), 0);
	uint32_t usage = 0;
	char how[32];
	ck_assert_int_eq(it_admin_mr(&a, it_group_pid(&g, IT_SERVER), &usage,
			how, sizeof(how)), 1);
	it_admin_close(&a);
	ck_assert_str_eq(how, persistence(c->kind));
	ck_assert_int_eq(!!(usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT),
			persistable(c->kind));
	ck_assert(usage & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);

	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			initiator, &ra), 0);
	ck_assert_msg(it_group_hear(&g, TAG_FLUSHED, 1) == 0, "%s",
			it_report());
	if (persistable(c->kind)) {
		if (c->kill_rpmad_first) {
			test_daemon_kill(env.srv);
			it_group_kill(&g, IT_SERVER);
		} else {
			it_group_kill(&g, IT_SERVER);
			test_daemon_kill(env.srv);
		}
		check_medium(&ra.m);
	}
done:
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	if (c->kind != K_DEVDAX && c->kind != K_DEVDAX_ANON &&
			c->kind != K_ANON)
		(void) unlink(ra.m.path);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ------------------------------------- large writes after a persist */

enum { TAG_ROUND = 110, TAG_GO };

#define BULK_SIZE (1024 * 1024)

/* A page-cache file of BULK_SIZE, registered for persistent writes. */
static int
bulk_target(const struct it_env *env, void *arg)
{
	const struct medium *m = arg;
	int fd = open(m->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	IT_ASSERT(fd >= 0);
	IT_EQ(ftruncate(fd, BULK_SIZE), 0);
	uint8_t *pm = mmap(NULL, BULK_SIZE, PROT_READ | PROT_WRITE,
			MAP_SHARED, fd, 0);
	IT_ASSERT(pm != MAP_FAILED);
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_mr_local *mr = IT_REG(peer, pm, BULK_SIZE,
			RPMA_MR_USAGE_WRITE_DST |
					RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	struct rpma_peer_cfg *pcfg = NULL;
	IT_OK(rpma_peer_cfg_new(&pcfg));
	IT_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, pcfg);
	it_await_close(&conn);
	IT_EQ(it_check(pm, BULK_SIZE, 2), -1);
	IT_OKS(rpma_ep_shutdown(&ep), rpma_peer_cfg_delete(&pcfg),
			rpma_mr_dereg(&mr), rpma_peer_delete(&peer));
	IT_EQ(munmap(pm, BULK_SIZE), 0);
	IT_EQ(close(fd), 0);
	return 0;
}

/* Two rounds of one 1 MiB write and a persistent flush of it. */
static int
bulk_writer(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(BULK_SIZE);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(peer, buf, BULK_SIZE, RPMA_MR_USAGE_WRITE_SRC,
			&mr));
	struct rpma_cq *cq = NULL;
	struct rpma_mr_remote *rmr = NULL;
	struct rpma_conn *conn = connect_target(env, peer, &cq, &rmr);
	for (uint32_t round = 1; round <= 2; round++) {
		it_fill(buf, BULK_SIZE, round);
		IT_OK(rpma_write(conn, rmr, 0, mr, 0, BULK_SIZE,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
		IT_OK(rpma_flush(conn, rmr, 0, BULK_SIZE,
				RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, (void *)0xf1));
		struct ibv_wc wc;
		it_wc_ok(conn, cq, 0xf1, IBV_WC_RDMA_READ, &wc);
		IT_EQ(it_tell(IT_PARENT, TAG_ROUND, NULL, 0), 0);
		(void) it_expect(TAG_GO, NULL, 0);
	}
	it_client_end(&conn, &rmr, &mr, &peer, buf);
	return 0;
}

/* the page faults process `pid` has taken (minflt + majflt, all threads) */
static unsigned long
faults_of(pid_t pid)
{
	char path[64], text[1024];
	(void) snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	ck_assert_msg(f != NULL, "open %s", path);
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	(void) fclose(f);
	text[n] = '\0';
	/* after "(comm) ": state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt */
	const char *p = strrchr(text, ')');
	ck_assert_ptr_nonnull(p);
	unsigned long minflt, majflt;
	ck_assert_int_eq(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %lu %*u "
			"%lu", &minflt, &majflt), 2);
	return minflt + majflt;
}

/*
 * A persist write-protects the pages rpmad stored into through its
 * mapping; a 1 MiB write after it goes through the file (mr_io.h) and
 * faults on none of its 256 pages (through the mapping: each of them).
 */
START_TEST(test_large_writes_after_persist)
{
	if (!it_transport_is("tcp")) {
		(void) fprintf(stderr, "it_persist: rpmad writes into memory "
				"only on the software transport: skipped\n");
		return;
	}
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 2), 0);
	struct medium m;
	ck_assert(medium_of(K_FILE, &env, &m));
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			bulk_target, &m), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			bulk_writer, NULL), 0);
	ck_assert_msg(it_group_hear(&g, TAG_ROUND, 1) == 0, "%s", it_report());
	unsigned long before = faults_of(env.srv->pid);
	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_GO, NULL, 0), 0);
	ck_assert_msg(it_group_hear(&g, TAG_ROUND, 1) == 0, "%s", it_report());
	unsigned long faults = faults_of(env.srv->pid) - before;
	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_GO, NULL, 0), 0);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	(void) unlink(m.path);
	ck_assert_int_eq(it_env_stop(&env), 0);
	ck_assert_msg(faults < BULK_SIZE / 4096 / 4, "rpmad took %lu page "
			"faults for the second 1 MiB write and persist", faults);
}
END_TEST

int
main(void)
{
	const struct th_test tc_persist[] = {
		TH_LOOP(test_persistent_flush_by_kind, 0,
				sizeof(cases) / sizeof(cases[0])),
		TH_TEST(test_large_writes_after_persist), TH_END
	};
	const struct th_tcase tcases[] = {
		{ "persist", .steps = tc_persist, .create = it_tcase_create },
	};
	return check_run(th_suite("integration: persistence", tcases,
					 TH_N(tcases)),
			CK_ENV);
}
