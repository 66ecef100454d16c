// SPDX-License-Identifier: BSD-3-Clause
/*
 * main.c -- rpmactl: the command line, and printing a command's output
 * only when all of it could be made (one table or one JSON document)
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "commands.h"
#include "ctl_socket.h"

#define DEFAULT_TIMEOUT_S 10

static const struct command {
	const char *name;
	int (*fn)(struct cmd_ctx *x);
	int (*check)(int argc, char **argv);	/* before connecting */
	int nargs;		/* arguments after the command's name */
	const char *help;
} commands[] = {
	{ "status", cmd_status, NULL, 0,
		"version, uptime, socket, transport, devices, totals" },
	{ "clients", cmd_clients, NULL, 0,
		"client processes: pid, user, command, resources" },
	{ "connections", cmd_connections, NULL, 0,
		"connections: addresses, state, queue pair, operations" },
	{ "mrs", cmd_mrs, NULL, 0,
		"memory registrations: owner, size, usage, backing" },
	{ "endpoints", cmd_endpoints, NULL, 0,
		"listening endpoints and their waiting requests" },
	{ "stats", cmd_stats, NULL, 0,
		"operation counters and the flush latency histogram" },
	{ "metrics", cmd_metrics, NULL, 0,
		"all of the above as Prometheus text (for node_exporter)" },
	{ "evict", cmd_evict, cmd_evict_check, 1,
		"PID: close a client's session, release all it holds" },
	{ "upgrade", cmd_upgrade, NULL, 0,
		"start the installed rpmad; the old one drains its clients" },
};

static void
usage(FILE *f)
{
	(void) fprintf(f,
"usage: rpmactl [--socket PATH] [--json] [--timeout SECONDS] COMMAND [ARG]\n"
"\n"
"Shows what a running rpmad holds, evicts clients, upgrades rpmad.\n"
"\n"
"commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		(void) fprintf(f, "  %-12s %s\n", commands[i].name,
				commands[i].help);
	(void) fprintf(f,
"\n"
"options:\n"
"  -s, --socket PATH  rpmad's socket (default: $RPMAD_SOCKET, else %s)\n"
"  -j, --json         print one JSON document instead of tables\n"
"  -t, --timeout SEC  wait this long for each answer (default %d)\n"
"  -h, --help, -V, --version\n"
"\n"
"exit status: 0 done, 1 rpmad refused or failed the request, 2 usage,\n"
"3 cannot reach rpmad, 4 permission denied. See rpmactl(8).\n",
			RPMAD_DEFAULT_SOCKET, DEFAULT_TIMEOUT_S);
}

/* Prints what the command made; false when stdout failed. */
static bool
flush_output(char *text, size_t len)
{
	if (len && fwrite(text, 1, len, stdout) != len)
		return false;
	return fflush(stdout) == 0;
}

int
main(int argc, char *argv[])
{
	const char *path = getenv("RPMAD_SOCKET");
	if (path == NULL || *path == '\0')
		path = RPMAD_DEFAULT_SOCKET;
	bool json = false;
	long timeout_s = DEFAULT_TIMEOUT_S;
	uint32_t page_limit = 0;

	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		/* for tests: small pages exercise the paging */
		{ "page-size", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	/* '+': options end at the command, as in `rpmactl evict -5` */
	while ((c = getopt_long(argc, argv, "+s:jt:hV", longopts,
			NULL)) != -1) {
		char *end;
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 't':
			timeout_s = strtol(optarg, &end, 10);
			if (*end || end == optarg || timeout_s < 1 ||
					timeout_s > 3600) {
				(void) fprintf(stderr, "rpmactl: --timeout "
						"wants 1 to 3600 seconds\n");
				return EXIT_USAGE;
			}
			break;
		case 'P':
			page_limit = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || end == optarg) {
				(void) fprintf(stderr, "rpmactl: bad "
						"--page-size\n");
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			(void) printf("rpmactl %s\n", PACKAGE_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const struct command *cmd = NULL;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[optind], commands[i].name) == 0)
			cmd = &commands[i];
	}
	if (cmd == NULL) {
		(void) fprintf(stderr, "rpmactl: unknown command '%s' (see "
				"rpmactl --help)\n", argv[optind]);
		return EXIT_USAGE;
	}
	int nargs = argc - optind - 1;
	if (nargs != cmd->nargs) {
		(void) fprintf(stderr, "rpmactl: %s takes %d argument%s\n",
				cmd->name, cmd->nargs,
				cmd->nargs == 1 ? "" : "s");
		return EXIT_USAGE;
	}

	if (cmd->check && cmd->check(nargs, argv + optind + 1))
		return EXIT_USAGE;

	struct client client;
	int ret = client_open(&client, path, (int)timeout_s * 1000);
	if (ret) {
		client_close(&client);
		return ret;
	}

	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (out == NULL) {
		perror("rpmactl");
		client_close(&client);
		return EXIT_REFUSED;
	}
	struct cmd_ctx x = {
		.client = &client,
		.json = json,
		.out = out,
		.page_limit = page_limit,
		.argc = nargs,
		.argv = argv + optind + 1,
	};
	ret = cmd->fn(&x);
	client_close(&client);
	if (fclose(out)) {
		perror("rpmactl");
		ret = ret ? ret : EXIT_REFUSED;
	} else if (ret == EXIT_OK && !flush_output(text, len)) {
		perror("rpmactl: stdout");
		ret = EXIT_REFUSED;
	}
	free(text);
	return ret;
}
