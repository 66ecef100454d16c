/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_async.h -- an RDMA device's asynchronous events
 */

#ifndef RPMAD_VERBS_ASYNC_H
#define RPMAD_VERBS_ASYNC_H

struct verbs_dev;

/*
 * verbs_async_watch -- hear the device's events from now on (a warning
 * when they cannot be watched); verbs_dev_forget() stops it
 */
void verbs_async_watch(struct verbs_dev *vd);

#endif /* RPMAD_VERBS_ASYNC_H */
