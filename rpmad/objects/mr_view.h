/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr_view.h -- one mapping of a client's memfd shared by its registrations
 *
 * librpmaclient puts neighbouring registered pages into neighbouring
 * offsets of one memfd, and an application registers pieces of its own
 * shared memory (a memfd or shm pool, tmpfs, passed by descriptor on the
 * software transport). Mapping each registration on its own would cost
 * rpmad one mapping per registration (and vm.max_map_count caps those at
 * 65,530 by default): instead a registration of one memfd segment points
 * into a mapping of the aligned window of the file around it (MR_VIEW_WINDOW
 * bytes), shared by every registration in that window.
 */

#ifndef RPMAD_MR_VIEW_H
#define RPMAD_MR_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#define MR_VIEW_WINDOW (64ull << 20)

struct mr_view;

/*
 * mr_view_get -- rpmad's address of [offset, offset + len) of the memfd
 * `fd`, in the shared mapping of its window (*view holds a reference), or
 * NULL when the segment does not fit in one window (or the window cannot
 * be mapped as needed): the caller then maps the segment itself.
 * `guarded`: the window's mapping must be guarded against the file's
 * holes (mr_holes.h), as for a client's own shared memory.
 */
uint8_t *mr_view_get(int fd, uint64_t offset, uint64_t len, bool writable,
		bool guarded, struct mr_view **view);

/* mr_view_put -- drop a reference; the last one unmaps the window */
void mr_view_put(struct mr_view *view);

#endif /* RPMAD_MR_VIEW_H */
