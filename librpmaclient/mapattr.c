// SPDX-License-Identifier: BSD-3-Clause
/*
 * mapattr.c -- reading a mapping's attributes from /proc/self/smaps and
 * get_mempolicy(2), and giving them to another mapping (mapattr.h)
 */

#include <errno.h>
#include <linux/mempolicy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mapattr.h"
#include "proc_maps.h"

#define NODE_BITS (MAPATTR_NODE_WORDS * 8 * sizeof(unsigned long))

/* The VmFlags line: two letters per flag (fs/proc/task_mmu.c). */
static void
parse_vmflags(const char *p, struct mapattr *a)
{
	while (p[0] && p[1]) {
		if (p[0] == ' ') {
			p++;
			continue;
		}
		char f[3] = { p[0], p[1], 0 };
		if (!strcmp(f, "lo"))
			a->locked = true;
		else if (!strcmp(f, "lf"))
			a->lock_on_fault = true;
		else if (!strcmp(f, "dd"))
			a->dontdump = true;
		else if (!strcmp(f, "dc"))
			a->dontfork = true;
		else if (!strcmp(f, "wf"))
			a->wipeonfork = true;
		else if (!strcmp(f, "hg"))
			a->hugepage = true;
		else if (!strcmp(f, "nh"))
			a->nohugepage = true;
		else if (!strcmp(f, "mg"))
			a->mergeable = true;
		else if (!strcmp(f, "um") || !strcmp(f, "uw"))
			a->userfault = true;
		p += 2;
	}
}

/* The NUMA policy of the mapping at addr (MPOL_DEFAULT where none). */
static void
read_policy(uintptr_t addr, struct mapattr *a)
{
	int mode = MPOL_DEFAULT;
	if (syscall(SYS_get_mempolicy, &mode, a->nodes, NODE_BITS,
			(void *)addr, MPOL_F_ADDR))
		mode = MPOL_DEFAULT;	/* a kernel without NUMA */
	a->policy = mode;
}

int
mapattr_read(uintptr_t start, uintptr_t end, struct mapattr_range **out)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	if (f == NULL)
		return -1;
	struct mapattr_range *r = NULL;
	int count = 0, cap = 0;
	bool in = false;
	char *line = NULL;
	size_t linecap = 0;
	struct maps_entry e;
	int ret = 0;
	while (getline(&line, &linecap, f) > 0) {
		/*
		 * a mapping's line starts with its address in lower-case hex,
		 * its fields' with a capital: only those are parsed (a read
		 * is some 25 lines per mapping of the whole process)
		 */
		bool head = (line[0] >= '0' && line[0] <= '9') ||
			(line[0] >= 'a' && line[0] <= 'f');
		if (head && maps_parse_line(line, &e) == 0) {
			if (e.start >= end)
				break;
			in = e.end > start;
			if (!in)
				continue;
			if (count == cap) {
				cap = cap ? cap * 2 : 4;
				struct mapattr_range *n = realloc(r,
						(size_t)cap * sizeof(*n));
				if (n == NULL) {
					errno = ENOMEM;
					ret = -1;
					break;
				}
				r = n;
			}
			struct mapattr_range *m = &r[count++];
			memset(m, 0, sizeof(*m));
			m->start = e.start > start ? e.start : start;
			m->end = e.end < end ? e.end : end;
			m->map = e;
			m->attr.prot = (e.read ? PROT_READ : 0) |
				(e.write ? PROT_WRITE : 0) |
				(e.exec ? PROT_EXEC : 0);
			read_policy(m->start, &m->attr);
			continue;
		}
		if (!in || !strchr("PKASFV", line[0]))
			continue;
		struct mapattr *a = &r[count - 1].attr;
		unsigned long v;
		if (sscanf(line, "ProtectionKey: %lu", &v) == 1)
			a->pkey = (int)v;
		else if (sscanf(line, "KernelPageSize: %lu", &v) == 1)
			a->page_kb = v;
		else if (sscanf(line, "AnonHugePages: %lu", &v) == 1 ||
				sscanf(line, "ShmemPmdMapped: %lu", &v) == 1 ||
				sscanf(line, "FilePmdMapped: %lu", &v) == 1)
			a->huge_now |= v > 0;
		else if (!strncmp(line, "VmFlags:", 8))
			parse_vmflags(line + 8, a);
	}
	int err = errno;
	free(line);
	(void) fclose(f);
	if (ret) {
		free(r);
		errno = err;
		return -1;
	}
	*out = r;
	return count;
}

struct mapattr
mapattr_fresh(int prot)
{
	return (struct mapattr){ .prot = prot, .policy = MPOL_DEFAULT };
}

static bool
same_policy(const struct mapattr *a, const struct mapattr *b)
{
	return a->policy == b->policy &&
		memcmp(a->nodes, b->nodes, sizeof(a->nodes)) == 0;
}

/* Keeps the first error. */
static void
note(int *ret, int failed)
{
	if (failed && *ret == 0)
		*ret = -errno;
}

int
mapattr_shape(uintptr_t start, uintptr_t end, const struct mapattr *from,
		const struct mapattr *to, bool shared, bool *asked_huge)
{
	void *p = (void *)start;
	size_t len = end - start;
	int ret = 0;
	if (!same_policy(from, to)) {
		bool none = to->policy == MPOL_DEFAULT;
		int failed = (int)syscall(SYS_mbind, p, len, to->policy,
				none ? NULL : to->nodes, none ? 0 : NODE_BITS,
				0);
		/* none to set: a kernel without NUMA has none to clear */
		if (!none)
			note(&ret, failed);
	}
	/*
	 * shared memory in place of private memory that had huge pages
	 * without asking: asked for, to keep them where the kernel gives
	 * shmem huge pages when asked (shmem_enabled "advise")
	 */
	bool asked = shared && to->huge_now && !to->hugepage &&
		!to->nohugepage && !from->hugepage;
	if (asked_huge)
		*asked_huge = asked;
	if (asked)
		(void) madvise(p, len, MADV_HUGEPAGE);
	else if (to->hugepage && !from->hugepage)
		note(&ret, madvise(p, len, MADV_HUGEPAGE));
	if (to->nohugepage && !from->nohugepage)
		note(&ret, madvise(p, len, MADV_NOHUGEPAGE));
	/* neither: no madvise takes a wish back; `from` has none by then */
	return ret;
}

static int
set_prot(void *p, size_t len, const struct mapattr *from,
		const struct mapattr *to)
{
	if (to->pkey || from->pkey) {
		if (pkey_mprotect(p, len, to->prot, to->pkey) == 0)
			return 0;
		if (errno != ENOSYS || to->pkey)
			return -1;
	} else if (to->prot == from->prot) {
		return 0;
	}
	return mprotect(p, len, to->prot);
}

int
mapattr_finish(uintptr_t start, uintptr_t end, const struct mapattr *from,
		const struct mapattr *to, bool shared)
{
	void *p = (void *)start;
	size_t len = end - start;
	int ret = 0;
	note(&ret, set_prot(p, len, from, to));
	if (to->locked != from->locked ||
			to->lock_on_fault != from->lock_on_fault)
		note(&ret, to->locked ? mlock2(p, len, to->lock_on_fault ?
				MLOCK_ONFAULT : 0) : munlock(p, len));
	if (to->dontdump != from->dontdump)
		note(&ret, madvise(p, len, to->dontdump ? MADV_DONTDUMP :
				MADV_DODUMP));
	if (to->dontfork != from->dontfork)
		note(&ret, madvise(p, len, to->dontfork ? MADV_DONTFORK :
				MADV_DOFORK));
	if (shared)	/* wipe-on-fork and KSM are for private memory only */
		return ret;
	if (to->wipeonfork != from->wipeonfork)
		note(&ret, madvise(p, len, to->wipeonfork ? MADV_WIPEONFORK :
				MADV_KEEPONFORK));
	if (to->mergeable != from->mergeable)	/* KSM may be off */
		(void) madvise(p, len, to->mergeable ? MADV_MERGEABLE :
				MADV_UNMERGEABLE);
	return ret;
}
