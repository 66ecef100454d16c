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
		if (maps_parse_line(line, &e) == 0) {
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
			m->attr.prot = (e.read ? PROT_READ : 0) |
				(e.write ? PROT_WRITE : 0) |
				(e.exec ? PROT_EXEC : 0);
			read_policy(m->start, &m->attr);
			continue;
		}
		if (!in)
			continue;
		struct mapattr *a = &r[count - 1].attr;
		unsigned long v;
		if (sscanf(line, "ProtectionKey: %lu", &v) == 1)
			a->pkey = (int)v;
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

int
mapattr_policy_apply(uintptr_t start, uintptr_t end, const struct mapattr *a)
{
	if (a->policy == MPOL_DEFAULT)
		return 0;
	if (syscall(SYS_mbind, (void *)start, end - start, a->policy, a->nodes,
			NODE_BITS, 0))
		return -errno;
	return 0;
}

/* Keeps the first error. */
static void
note(int *ret, int failed)
{
	if (failed && *ret == 0)
		*ret = -errno;
}

int
mapattr_apply(uintptr_t start, uintptr_t end, const struct mapattr *a,
		bool shared)
{
	void *p = (void *)start;
	size_t len = end - start;
	int ret = 0;
	if (a->pkey)
		note(&ret, pkey_mprotect(p, len, a->prot, a->pkey));
	else
		note(&ret, mprotect(p, len, a->prot));
	if (a->locked)
		note(&ret, mlock2(p, len, a->lock_on_fault ? MLOCK_ONFAULT : 0));
	if (a->dontdump)
		note(&ret, madvise(p, len, MADV_DONTDUMP));
	if (a->dontfork)
		note(&ret, madvise(p, len, MADV_DONTFORK));
	if (a->nohugepage)
		note(&ret, madvise(p, len, MADV_NOHUGEPAGE));
	/*
	 * asked for, or (shared memory in place of memory that had them) to
	 * keep them; shmem gets them only where shmem_enabled allows
	 */
	if (a->hugepage || (shared && a->huge_now && !a->nohugepage))
		(void) madvise(p, len, MADV_HUGEPAGE);
	if (!shared && a->wipeonfork)
		note(&ret, madvise(p, len, MADV_WIPEONFORK));
	if (!shared && a->mergeable)
		(void) madvise(p, len, MADV_MERGEABLE);	/* KSM may be off */
	return ret;
}
