/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr.h -- memory registrations: how rpmad reaches a client's pages
 *
 * A registration arrives as a list of segments that together cover the
 * page-aligned span of the client's range [addr, addr + length):
 *  - files passed by descriptor (the application's own files such as
 *    pmem, and the memfd into which the library moves private pages for
 *    RDMA devices), which rpmad maps back to back into one reserved span,
 *    so that a mapped piece of the client's range corresponds to the same
 *    piece of rpmad's; the application's files are described to libpmem2
 *    (pmem2_map_from_existing) so that persisting a range reaches the
 *    persistence domain the right way (cache flush on real pmem, msync on
 *    page-cache files);
 *  - the client's own memory, reached through its address space
 *    (addrspace.h): nothing of it is mapped in rpmad.
 * mr_io.h moves the bytes either way. What a transport may call of a
 * registration stands in transport/transport.h.
 */

#ifndef RPMAD_MR_H
#define RPMAD_MR_H

#include <stdbool.h>
#include <stdint.h>
#include <uthash.h>

#include "clients/call.h"
#include "core/registry.h"
#include "transport/transport.h"

struct addrspace;
struct mr_view;
struct peer;
struct pmem2_map;
struct transport_ops;

enum mr_seg_kind {
	MR_SEG_FILE,		/* a file of the application's: mapped, persisted */
	MR_SEG_MEMFD,		/* pages the library moved into its memfd: mapped */
	MR_SEG_PROCESS,		/* the client's memory, through its address space */
};

struct mr_segment {
	enum mr_seg_kind kind;
	int fd;			/* until mapped; -1 for MR_SEG_PROCESS */
	uint64_t offset;	/* in the file */
	uint64_t length;
	uint64_t span_offset;	/* where it starts in the registration's span */
	struct pmem2_map *map;	/* MR_SEG_FILE: libpmem2's view */
	/* DAX: libpmem2's cache flushes; NULL for anonymous memory */
	void (*persist)(const void *ptr, size_t size);
	bool page_cache;	/* persisted by msync instead */
	/*
	 * A page-cache file's own descriptor (opened anew, O_RDWR) for the
	 * writes rpmad makes into it on the software transport, or -1
	 * (mr_io.h says which, and why)
	 */
	int write_fd;
	bool persisted;		/* a persist has covered it (mr_io.h) */
};

/*
 * How a persistent flush into a registration reaches the persistence
 * domain, on its device's transport; the registration grants
 * RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT only where one does.
 */
enum mr_persistence {
	MR_PERSIST_NONE,	/* nothing keeps it: memory, or a page cache
				 * the device's flush cannot write back */
	MR_PERSIST_CPU_FLUSH,	/* DAX: rpmad flushes the CPU caches */
	MR_PERSIST_MSYNC,	/* a page cache: rpmad writes it back */
	MR_PERSIST_DEVICE,	/* DAX the NIC writes into: its read after
				 * the writes, as far as the platform keeps
				 * what reaches the memory (the server's
				 * direct write to pmem) */
};

/* What the remote-key index is keyed by: keys are unique per device. */
struct mr_rkey_id {
	uint32_t dev_id;
	uint32_t rkey;
};

struct mr {
	struct obj obj;
	struct peer *peer;
	/*
	 * lkey: rpmad's own name of the registration, unique in rpmad, which
	 * the client puts in its ring entries; rkey: what remote peers name it
	 * by (the MR descriptor): the lkey on the software device, the
	 * device's rkey on an RDMA device (0 when remote access is not
	 * granted, as in verbs)
	 */
	uint32_t lkey;
	struct mr_rkey_id rkey_id;
	uint64_t addr, length;		/* the client's registration */
	uint64_t span_start, span_len;	/* page-aligned cover of it */
	/*
	 * rpmad's address of span_start, where the mapped segments are (the
	 * others' places stay inaccessible); NULL when none is mapped
	 */
	uint8_t *base;
	struct mr_view *view;		/* base is in this shared mapping */
	struct addrspace *as;		/* MR_SEG_PROCESS segments' memory */
	/* else rpmad's own mapping: the span, with the whole units of a DAX
	 * device's alignment its first and last segments begin and end in */
	uint8_t *resv;
	uint64_t resv_len;
	uint32_t usage;			/* what it grants (mr_persistence) */
	enum mr_persistence persistence;
	bool writable;			/* rpmad may store into it */
	struct mr_segment *segs;
	unsigned nsegs;
	unsigned write_fds;		/* segments' write_fd, its user's */
	unsigned refs;			/* 1 for the registration + work */
	bool deregistered;
	uint64_t lost_bytes;		/* of pages the client no longer had */
	char backing[256];		/* "anonymous" or the file's path */
	void *tp_mr;			/* the transport's registration */
	bool on_demand;			/* the NIC faults pages in (ODP) */
	UT_hash_handle hh_lkey;
	UT_hash_handle hh_rkey;		/* only with a non-zero rkey */
};

/* mr_by_lkey -- the live registration rpmad named so, or NULL */
struct mr *mr_by_lkey(uint32_t lkey);

/* mr_by_rkey -- the live registration with this remote key on the device */
struct mr *mr_by_rkey(uint32_t dev_id, uint32_t rkey);

/* mr_persistence_name -- how rpmactl names a persistence */
const char *mr_persistence_name(enum mr_persistence p);

/*
 * mr_grant_persistence -- once the registration is mapped: how a
 * persistent flush into it persists on the transport tp (mr->persistence),
 * and what its usage grants (mr->usage): RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY
 * in place of RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT where nothing persists the
 * whole of it. Returns why it grants less than asked, for the
 * application's log (a string literal), or NULL.
 */
const char *mr_grant_persistence(struct mr *mr,
		const struct transport_ops *tp);

/* mr_allows -- whether the usage grants the access */
bool mr_allows(const struct mr *mr, enum mr_access access);

/* mr_contains -- whether the client's [addr, addr + len) is inside mr */
bool mr_contains(const struct mr *mr, uint64_t addr, uint64_t len);

/*
 * mr_persist_msync -- the page-cache part of persisting the client's
 * [addr, addr + len) (mr_persist_cpu() does the DAX part): msync writes
 * back and waits for the disk, so the thread of offload.h runs it
 * (mr_sync_start()); 0 or msync's negative errno, logging nothing
 */
int mr_persist_msync(const struct mr *mr, uint64_t addr, uint64_t len);

/*
 * mr_staging_new -- the registration of a queue pair's staging bytes
 * (common/qp_region.h, "Staging"): rpmad's mapping `map` of `len` bytes
 * (the registration owns it from now on), at QP_STAGING_ADDR for the
 * client `owner`'s work on the peer's connections; local access only, no
 * remote key, and neither listed nor deregistered as the client's own.
 * NULL when out of memory (the mapping is then unmapped).
 * mr_staging_end -- its queue pair goes: no ring entry finds it any more;
 * work in flight keeps it mapped until the last reference.
 */
struct mr *mr_staging_new(struct peer *peer, struct obj_owner *owner,
		void *map, uint64_t len);
void mr_staging_end(struct mr *mr);

/* One segment of a registration as the client describes it. */
struct mr_reg_segment {
	uint32_t fd_index; /* of mr_reg_args.fds, unless in_process */
	uint64_t offset; /* in the file */
	uint64_t length;
	bool file_backed; /* a file of the application's, not a memfd */
	bool in_process; /* the client's own memory */
};

/* What a client asks to register: its range, its usage, its segments. */
struct mr_reg_args {
	uint64_t addr; /* the application's pointer */
	uint64_t length;
	uint32_t usage; /* RPMA_MR_USAGE_* */
	/*
	 * n_segments as asked; segments holds them when it is at most
	 * MR_MAX_SEGMENTS (more are refused before any is read)
	 */
	size_t n_segments;
	const struct mr_reg_segment *segments;
	const int *fds; /* received with the request (dup'ed here) */
	unsigned nfds;
};

/*
 * mr_reg -- registers the range on the peer for the calling client;
 * *note is what the library says of the persistence granted (a string
 * literal, or NULL). NULL with the call failed.
 */
struct mr *mr_reg(struct call *call, struct peer *peer,
		const struct mr_reg_args *args, const char **note);

/* mr_find -- the calling client's registration `id`; NULL: call failed */
struct mr *mr_find(struct call *call, uint64_t id);

/* mr_dereg -- deregisters; the mapping goes with the last reference */
void mr_dereg(struct mr *mr);

/*
 * mr_advise -- ibv_advise_mr on the part [offset, offset + length) of
 * the registration (read in early where rpmad maps it): 0, or a negative
 * errno with the call failed
 */
int mr_advise(struct call *call, struct mr *mr, uint64_t offset,
		uint64_t length, int advice, uint32_t flags);

#endif /* RPMAD_MR_H */
