/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr_segments.h -- the segments of a registration being made: checked,
 * taken, mapped (mr_segments.c, for mr.c alone)
 */

#ifndef RPMAD_MR_SEGMENTS_H
#define RPMAD_MR_SEGMENTS_H

#include <stddef.h>

struct call;
struct client;
struct mr;
struct mr_reg_args;
struct transport_ops;

/*
 * mr_take_segments -- checks the range, the usage and the segments'
 * shape; fills mr. 0, or a negative errno with the call failed.
 */
int mr_take_segments(struct call *call, const struct mr_reg_args *m,
		struct mr *mr);

/*
 * mr_map_segments -- maps the segments passed by descriptor into one
 * reserved span, each at its place; the places of the others stay
 * inaccessible; `moves_bytes` when rpmad itself reads and writes them
 * (the software transport: shared memory's holes are then guarded,
 * mr_holes.h). 0, or a negative errno with the reason in err.
 */
int mr_map_segments(struct mr *mr, bool moves_bytes, char *err, size_t errlen);

/*
 * mr_open_write_fds -- the write descriptors of mr.h for the page-cache
 * segments rpmad writes into on the software transport
 */
void mr_open_write_fds(struct mr *mr, const struct client *c,
		const struct transport_ops *tp);

/* mr_describe_backing -- names the backing of a registration for rpmactl */
void mr_describe_backing(struct mr *mr);

#endif /* RPMAD_MR_SEGMENTS_H */
