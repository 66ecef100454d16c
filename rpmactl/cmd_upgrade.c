// SPDX-License-Identifier: BSD-3-Clause
/*
 * cmd_upgrade.c -- rpmactl upgrade: rpmad starts the rpmad binary
 * installed now and hands it the control socket; rpmactl waits until the
 * new one answers at the socket, then says which pid serves and what the
 * old one still serves (it drains: its clients keep their sessions until
 * they end, or drain_timeout_s).
 */

#include <stdio.h>
#include <time.h>

#include "commands.h"
#include "json.h"

/* how often the socket is asked who serves it */
#define POLL_MS 100

static void
sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000 };
	(void) nanosleep(&ts, NULL);
}

/*
 * Whether the rpmad answering at the socket now is `pid` (into *version
 * its version). EXIT_OK with *is set, or an exit code.
 */
static int
serves(const struct client *old, uint32_t pid, bool *is, char *version,
		size_t len)
{
	struct client c;
	int ret = client_open(&c, old->path, old->timeout_ms);
	if (ret) {
		client_close(&c);
		return ret;
	}
	Rpmad__Response *resp;
	ret = client_query(&c, RPMAD__ADMIN_QUERY__KIND__STATUS, &resp);
	client_close(&c);
	if (ret)
		return ret;
	const Rpmad__StatusReply *st = resp->admin ? resp->admin->status :
		NULL;
	*is = st && st->pid == pid;
	if (*is)
		(void) snprintf(version, len, "%s", st->version);
	rpmad__response__free_unpacked(resp, NULL);
	return EXIT_OK;
}

/*
 * Whether the old rpmad still starts `pid` or handed over to it: false
 * when the new one failed (its log lines say why).
 */
static bool
under_way(struct client *c, uint32_t pid)
{
	Rpmad__Response *resp;
	if (client_query(c, RPMAD__ADMIN_QUERY__KIND__STATUS, &resp))
		return false;
	const Rpmad__StatusReply *st = resp->admin ? resp->admin->status :
		NULL;
	bool on = st && (st->draining || st->upgrade_pending_pid == pid);
	rpmad__response__free_unpacked(resp, NULL);
	return on;
}

/* The sessions the old rpmad serves besides ours, and its deadline. */
static void
old_status(struct client *c, uint32_t *pid, uint32_t *sessions,
		uint32_t *deadline_s)
{
	Rpmad__Response *resp;
	*pid = *sessions = *deadline_s = 0;
	if (client_query(c, RPMAD__ADMIN_QUERY__KIND__STATUS, &resp))
		return;
	const Rpmad__StatusReply *st = resp->admin ? resp->admin->status :
		NULL;
	if (st) {
		*pid = st->pid;
		if (st->counts && st->counts->sessions > 0)
			*sessions = st->counts->sessions - 1;
		*deadline_s = st->drain_timeout_s;
	}
	rpmad__response__free_unpacked(resp, NULL);
}

int
cmd_upgrade(struct cmd_ctx *x)
{
	uint32_t pid;
	int ret = client_upgrade(x->client, &pid);
	if (ret)
		return ret;
	/* the new rpmad serves once it found its devices: its deadline */
	long waited = 0, bound = 60000 + x->client->timeout_ms;
	bool is = false;
	char version[64] = "";
	while (!is) {
		ret = serves(x->client, pid, &is, version, sizeof(version));
		if (ret)
			return ret;
		if (is)
			break;
		if (!under_way(x->client, pid)) {
			(void) fprintf(stderr, "rpmactl: the new rpmad (pid %u) "
					"ended before it served: see its log "
					"lines; the old one serves on\n", pid);
			return EXIT_REFUSED;
		}
		if (waited >= bound) {
			(void) fprintf(stderr, "rpmactl: the new rpmad (pid %u) "
					"does not serve %s after %ld s: see its "
					"log lines; the old one serves on\n", pid,
					x->client->path, waited / 1000);
			return EXIT_REFUSED;
		}
		sleep_ms(POLL_MS);
		waited += POLL_MS;
	}
	uint32_t old_pid, sessions, deadline_s;
	old_status(x->client, &old_pid, &sessions, &deadline_s);
	if (x->json) {
		struct json j;
		json_init(&j, x->out);
		json_object_begin(&j);
		json_kv_u64(&j, "pid", pid);
		json_kv_string(&j, "version", version);
		json_kv_u64(&j, "draining_pid", old_pid);
		json_kv_u64(&j, "draining_clients", sessions);
		json_kv_u64(&j, "drain_timeout_s", deadline_s);
		json_object_end(&j);
		json_end(&j);
	} else {
		(void) fprintf(x->out, "rpmad %s (pid %u) serves new clients "
				"at %s\n", version, pid, x->client->path);
		(void) fprintf(x->out, "pid %u serves its %u client%s until "
				"they end (at most %u s, drain_timeout_s), then "
				"exits\n", old_pid, sessions, sessions == 1 ? "" :
				"s", deadline_s);
	}
	return EXIT_OK;
}
