/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin.h -- what rpmactl asks: status, listings, statistics, evict
 *
 * Listings come in pages that fit one control packet (CTL_MAX_MSG), in
 * (session id, object id) order; a page ends with a cursor to ask for the
 * next one. Only root and members of admin_groups get here (request.c).
 */

#ifndef RPMAD_ADMIN_H
#define RPMAD_ADMIN_H

#include <stdbool.h>

#include "clients/reply.h"

void admin_handle_query(struct req_ctx *rc);
void admin_handle_evict(struct req_ctx *rc);
/* start an upgrade (upgrade.h); answers with the new rpmad's pid */
void admin_handle_upgrade(struct req_ctx *rc);

/* admin_note_socket -- whether the control socket came from systemd */
void admin_note_socket(bool activated);

/* admin_note_reload -- a SIGHUP reload succeeded (true) or failed */
void admin_note_reload(bool ok);

#endif /* RPMAD_ADMIN_H */
