// SPDX-License-Identifier: BSD-3-Clause
/*
 * transports.c -- choosing and running transports from the one table
 *
 * The rest of rpmad never names a transport: it asks here which device
 * serves an address, and main.c sets every transport up and down here,
 * with what they are given instead of rpmad's own state (struct
 * transport_env): made here, from the configuration and the loop.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "clients/tenant.h"
#include "core/config.h"
#include "transport/transports.h"

/* which entries transports_init() set up, by table index */
#define TRANSPORTS_MAX 8
static bool running[TRANSPORTS_MAX];

/* what every transport is given, from its start to its end */
static struct transport_env env = { .vlog_from = tenant_vlog_from };

static bool
chosen(const struct transport_entry *e, const char *choice)
{
	return strcmp(choice, "auto") == 0 || strcmp(choice, e->name) == 0;
}

bool
transport_known(const char *choice)
{
	if (strcmp(choice, "auto") == 0)
		return true;
	for (unsigned i = 0; transport_table[i] && i < TRANSPORTS_MAX; i++) {
		if (strcmp(choice, transport_table[i]->name) == 0)
			return true;
	}
	return false;
}

static enum transport_tls
tls_of(enum config_tls tls)
{
	switch (tls) {
	case CONFIG_TLS_ON:
		return TRANSPORT_TLS_ON;
	case CONFIG_TLS_REQUIRED:
		return TRANSPORT_TLS_REQUIRED;
	default:
		return TRANSPORT_TLS_OFF;
	}
}

int
transports_configure(const struct config *cfg, char *err, size_t errlen)
{
	struct transport_settings set = {
		.tcp_timeout_ms = cfg->tcp_timeout_ms,
		.rnr_timeout_ms = cfg->rnr_timeout_ms,
		.setup_timeout_ms = cfg->setup_timeout_ms,
		.accept_timeout_ms = cfg->accept_timeout_ms,
		.tls = tls_of(cfg->tls),
		.tls_name = config_tls_name(cfg->tls),
	};
	(void) snprintf(set.tls_psk_file, sizeof(set.tls_psk_file), "%s",
			cfg->tls_psk_file);
	for (unsigned i = 0; transport_table[i] && i < TRANSPORTS_MAX; i++) {
		const struct transport_entry *e = transport_table[i];
		int ret = e->configure ? e->configure(&set, err, errlen) : 0;
		if (ret)
			return ret;
	}
	env.set = set;
	return 0;
}

const struct transport_env *
transports_env(void)
{
	return &env;
}

int
transports_init(struct loop *loop, const char *choice)
{
	env.loop = loop;
	for (unsigned i = 0; transport_table[i] && i < TRANSPORTS_MAX; i++) {
		const struct transport_entry *e = transport_table[i];
		if (!e->fallback && !chosen(e, choice))
			continue;
		int ret = e->init(&env);
		if (ret)
			return ret;
		running[i] = true;
	}
	return 0;
}

void
transports_fini(void)
{
	for (unsigned i = 0; transport_table[i] && i < TRANSPORTS_MAX; i++) {
		if (running[i])
			transport_table[i]->fini();
		running[i] = false;
	}
}

bool
transports_pending(void)
{
	for (unsigned i = 0; transport_table[i] && i < TRANSPORTS_MAX; i++) {
		const struct transport_entry *e = transport_table[i];
		if (running[i] && e->pending && e->pending())
			return true;
	}
	return false;
}

struct device *
transports_device_for(const char *choice, const struct sockaddr_storage *ss,
		socklen_t len, bool local, const char **noun)
{
	const struct transport_entry *missing = NULL;

	/* a transport that serves the address itself wins over the fallback */
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; transport_table[i] &&
				i < TRANSPORTS_MAX; i++) {
			const struct transport_entry *e = transport_table[i];
			if (e->fallback != (pass == 1) || !chosen(e, choice))
				continue;
			struct device *d = e->device_for(ss, len, local);
			if (d)
				return d;
			missing = e;
		}
	}
	*noun = missing ? missing->device_noun : "device";
	return NULL;
}
