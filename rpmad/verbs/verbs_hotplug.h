/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_hotplug.h -- noticing that an RDMA device is being removed
 */

#ifndef RPMAD_VERBS_HOTPLUG_H
#define RPMAD_VERBS_HOTPLUG_H

/* start watching for devices being removed (once; a warning if it fails) */
void verbs_hotplug_watch(void);
void verbs_hotplug_fini(void);

#endif /* RPMAD_VERBS_HOTPLUG_H */
