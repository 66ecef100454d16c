/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * addrspace.h -- a client's memory, reached through its own address space
 *
 * At hello a client hands over descriptors of its /proc/self/mem and
 * /proc/self/maps. The kernel binds both to the memory of the process that
 * opened them: they reach that memory and nothing else, whatever becomes of
 * the process id (it may end and be reused) or of the process (after an
 * exec it has new memory, which they do not reach). rpmad reads and writes
 * the client's private memory through `mem` -- the pages stay the
 * application's own: nothing is moved, shared or pinned, and a page a
 * write fills in is the client's, charged to its memory cgroup -- and
 * checks a registration's range through `maps`.
 */

#ifndef RPMAD_ADDRSPACE_H
#define RPMAD_ADDRSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct addrspace;

/*
 * addrspace_new -- take the client's descriptors of its mem and maps
 * (closed here on failure). 0, or a negative errno with the reason in err.
 */
int addrspace_new(int mem_fd, int maps_fd, struct addrspace **out,
		char *err, size_t errlen);

/* addrspace_get, addrspace_put -- references: the last put closes both */
struct addrspace *addrspace_get(struct addrspace *as);
void addrspace_put(struct addrspace *as);

/*
 * addrspace_check -- whether rpmad may reach the client's [addr, addr +
 * len) through its address space: every page mapped and readable, and
 * writable when `write`; no special kernel mapping; no file mapping on a
 * file system that could make rpmad wait (judged in the mounts of `pid`,
 * the client, as fstype_of_dev does). 0, or a negative errno with the
 * reason in err.
 */
int addrspace_check(struct addrspace *as, pid_t pid, uint64_t addr,
		uint64_t len, bool write, char *err, size_t errlen);

/*
 * addrspace_read -- the client's [addr, addr + len) into buf. Bytes of
 * pages the client no longer has (unmapped, or cut off its file) read as
 * zeros; returns how many bytes that was (0 normally).
 */
size_t addrspace_read(struct addrspace *as, uint64_t addr, void *buf,
		size_t len);

/*
 * addrspace_write -- buf into the client's [addr, addr + len); bytes for
 * pages the client no longer has are dropped: returns how many (0
 * normally).
 */
size_t addrspace_write(struct addrspace *as, uint64_t addr, const void *buf,
		size_t len);

/*
 * addrspace_pread, addrspace_pwrite -- the same through a descriptor of
 * its mem of one's own (a thread that must not touch the loop's objects)
 */
size_t addrspace_pread(int mem_fd, uint64_t addr, void *buf, size_t len);
size_t addrspace_pwrite(int mem_fd, uint64_t addr, const void *buf,
		size_t len);

/* addrspace_mem_fd -- its mem descriptor (for such a thread to dup) */
int addrspace_mem_fd(const struct addrspace *as);

/*
 * What of rpmad's serves an address space and ends with it (a thread for
 * its memory, a landing area) hangs on it by a hook, as a notifier hangs
 * on a kernel's mm: the address space knows nothing of it, and its last
 * put calls the hook's release. Each finds its own again by its ops.
 */
struct as_hook;

struct as_hook_ops {
	/* the address space goes: let go of what serves it */
	void (*release)(struct as_hook *h);
};

struct as_hook {
	const struct as_hook_ops *ops;
	struct as_hook *next;
};

/* addrspace_hook_add -- hang h (the caller's memory) on the address space */
void addrspace_hook_add(struct addrspace *as, struct as_hook *h);

/* addrspace_hook_find -- its hook of these ops, or NULL */
struct as_hook *addrspace_hook_find(const struct addrspace *as,
		const struct as_hook_ops *ops);

#endif /* RPMAD_ADDRSPACE_H */
