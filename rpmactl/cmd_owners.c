// SPDX-License-Identifier: BSD-3-Clause
/*
 * cmd_owners.c -- the client sessions, for naming the owner of each
 * connection, registration and endpoint in a listing
 */

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

static int
add_page(const Rpmad__AdminReply *r, void *arg)
{
	struct owners *o = arg;
	if (r->n_clients == 0)
		return 0;
	struct owner *list = realloc(o->list,
			(o->n + r->n_clients) * sizeof(*list));
	if (list == NULL) {
		(void) fprintf(stderr, "rpmactl: out of memory\n");
		return EXIT_REFUSED;
	}
	o->list = list;
	for (size_t i = 0; i < r->n_clients; i++) {
		const Rpmad__ClientInfo *ci = r->clients[i];
		struct owner *w = &o->list[o->n++];
		w->session_id = ci->session_id;
		w->pid = ci->pid;
		w->uid = ci->uid;
		(void) snprintf(w->comm, sizeof(w->comm), "%s",
				ci->comm ? ci->comm : "");
	}
	return 0;
}

int
owners_fetch(struct cmd_ctx *x, struct owners *o)
{
	memset(o, 0, sizeof(*o));
	return client_list(x->client, RPMAD__ADMIN_QUERY__KIND__CLIENTS,
			x->page_limit, add_page, o);
}

const struct owner *
owners_find(const struct owners *o, uint64_t session_id)
{
	/* pages come in session order: the list is sorted */
	size_t lo = 0, hi = o->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->list[mid].session_id == session_id)
			return &o->list[mid];
		if (o->list[mid].session_id < session_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void
owners_free(struct owners *o)
{
	free(o->list);
	o->list = NULL;
	o->n = 0;
}

const char *
user_name(uint32_t uid, char *buf, size_t len)
{
	struct passwd pw, *found = NULL;
	char tmp[1024];
	if (getpwuid_r((uid_t)uid, &pw, tmp, sizeof(tmp), &found) ||
			found == NULL)
		return NULL;
	(void) snprintf(buf, len, "%s", pw.pw_name);
	return buf;
}
