/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin.h -- what rpmactl asks: status, listings, statistics, evict
 */

#ifndef RPMAD_ADMIN_H
#define RPMAD_ADMIN_H

#include "request.h"

void admin_handle_query(struct req_ctx *rc);
void admin_handle_evict(struct req_ctx *rc);

#endif /* RPMAD_ADMIN_H */
