// SPDX-License-Identifier: BSD-3-Clause
/*
 * cmd_evict.c -- rpmactl evict PID: end a client's session; rpmad releases
 * everything it held (its connections close, its endpoints stop, its
 * registrations are unpinned). The process itself keeps running and its
 * next call into rpmad fails.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "json.h"

/* The process id argument, or 0 when it is not one. */
static uint32_t
parse_pid(const char *arg)
{
	char *end;
	errno = 0;
	unsigned long pid = strtoul(arg, &end, 10);
	if (errno || *end != '\0' || end == arg || arg[0] == '-' ||
			arg[0] == '+' || pid == 0 || pid > 0x7fffffff)
		return 0;
	return (uint32_t)pid;
}

int
cmd_evict_check(int argc, char **argv)
{
	if (argc != 1 || parse_pid(argv[0]) == 0) {
		(void) fprintf(stderr, "rpmactl: evict wants one process id, "
				"not '%s'\n", argc ? argv[0] : "");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int
cmd_evict(struct cmd_ctx *x)
{
	int ret = cmd_evict_check(x->argc, x->argv);
	if (ret)
		return ret;
	uint32_t pid = parse_pid(x->argv[0]);
	ret = client_evict(x->client, pid);
	if (ret)
		return ret;
	if (x->json) {
		struct json j;
		json_init(&j, x->out);
		json_object_begin(&j);
		json_kv_u64(&j, "evicted", pid);
		json_object_end(&j);
		json_end(&j);
	} else {
		(void) fprintf(x->out, "evicted pid %u: its session is closed "
				"and its resources are released\n", pid);
	}
	return EXIT_OK;
}
