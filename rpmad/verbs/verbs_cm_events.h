/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_cm_events.h -- the reader of rpmad's RDMA CM event channel
 */

#ifndef RPMAD_VERBS_CM_EVENTS_H
#define RPMAD_VERBS_CM_EVENTS_H

#include <stdint.h>

struct loop_watch;

/* verbs_cm_ready -- the channel's loop handler (verbs_channel_open) */
void verbs_cm_ready(struct loop_watch *w, uint32_t events);

#endif /* RPMAD_VERBS_CM_EVENTS_H */
