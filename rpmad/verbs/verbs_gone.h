/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_gone.h -- letting go of an RDMA device that went away, as the
 * parts that hear of it call it
 */

#ifndef RPMAD_VERBS_GONE_H
#define RPMAD_VERBS_GONE_H

#include <stdbool.h>

struct verbs_dev;

/* verbs_dev_gone -- removed or failed: LOST, let go of everything on it */
void verbs_dev_gone(struct verbs_dev *vd, bool removed);

#endif /* RPMAD_VERBS_GONE_H */
