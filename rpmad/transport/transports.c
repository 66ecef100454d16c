// SPDX-License-Identifier: BSD-3-Clause
/*
 * registry.c -- choosing and running transports from the one table
 *
 * The rest of rpmad never names a transport: it asks here which device
 * serves an address, and main.c sets every transport up and down here.
 */

#include <string.h>

#include "transport/transport.h"

/* which entries transports_init() set up, by table index */
#define TRANSPORTS_MAX 8
static bool running[TRANSPORTS_MAX];

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

int
transports_init(const char *choice)
{
	for (unsigned i = 0; transport_table[i] && i < TRANSPORTS_MAX; i++) {
		const struct transport_entry *e = transport_table[i];
		if (!e->fallback && !chosen(e, choice))
			continue;
		int ret = e->init();
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
