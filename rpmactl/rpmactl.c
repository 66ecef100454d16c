// SPDX-License-Identifier: BSD-3-Clause
/*
 * rpmactl.c -- inspecting a running rpmad (first cut: status)
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_socket.h"
#include "rpmad.pb-c.h"

#define DEFAULT_SOCKET "/run/rpmad/rpmad.sock"

static int
call(int sock, Rpmad__Request *req, Rpmad__Response **resp)
{
	static uint64_t id;
	req->id = ++id;
	uint8_t *buf = malloc(CTL_MAX_MSG);
	if (buf == NULL)
		return -ENOMEM;
	size_t len = rpmad__request__get_packed_size(req);
	rpmad__request__pack(req, buf);
	int ret = ctl_send(sock, buf, len, NULL, 0);
	if (ret == 0) {
		int fds[CTL_MAX_FDS];
		unsigned nfds;
		long n = ctl_recv(sock, buf, CTL_MAX_MSG, fds, CTL_MAX_FDS,
				&nfds);
		ctl_close_fds(fds, nfds);
		if (n <= 0)
			ret = n == 0 ? -ECONNRESET : (int)n;
		else if ((*resp = rpmad__response__unpack(NULL, (size_t)n,
				buf)) == NULL)
			ret = -EBADMSG;
	}
	free(buf);
	return ret;
}

int
main(int argc, char *argv[])
{
	const char *path = getenv("RPMAD_SOCKET");
	if (path == NULL || *path == '\0')
		path = DEFAULT_SOCKET;
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "s:", longopts, NULL)) != -1) {
		if (c == 's')
			path = optarg;
		else
			return 2;
	}
	if (optind >= argc || strcmp(argv[optind], "status") != 0) {
		(void) fprintf(stderr, "usage: rpmactl [--socket PATH] status\n");
		return 2;
	}

	int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	(void) snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (sock < 0 || connect(sock, (struct sockaddr *)&sun, sizeof(sun))) {
		(void) fprintf(stderr, "rpmactl: cannot reach rpmad at %s: %s\n",
				path, strerror(errno));
		return 3;
	}

	Rpmad__Hello hello = RPMAD__HELLO__INIT;
	hello.version = RPMAD__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT;
	hello.client_name = "rpmactl";
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_HELLO;
	req.hello = &hello;
	Rpmad__Response *resp = NULL;
	if (call(sock, &req, &resp) || resp->error) {
		(void) fprintf(stderr, "rpmactl: rpmad refused: %s\n",
				resp && resp->error ? resp->error->message : "?");
		return 3;
	}
	rpmad__response__free_unpacked(resp, NULL);

	Rpmad__AdminQuery q = RPMAD__ADMIN_QUERY__INIT;
	q.kind = RPMAD__ADMIN_QUERY__KIND__STATUS;
	req.body_case = RPMAD__REQUEST__BODY_ADMIN_QUERY;
	req.admin_query = &q;
	if (call(sock, &req, &resp) || resp->error) {
		(void) fprintf(stderr, "rpmactl: %s\n",
				resp && resp->error ? resp->error->message : "?");
		return 1;
	}
	const Rpmad__StatusReply *st = resp->admin->status;
	const Rpmad__ResourceCounts *cnt = st->counts;
	(void) printf("rpmad %s, pid %u, up %llu ms, transport %s\n",
			st->version, st->pid,
			(unsigned long long)st->uptime_ms, st->transport);
	(void) printf("clients %u  peers %u  mrs %u  endpoints %u  "
			"requests %u  connections %u  pinned %llu\n",
			cnt->sessions, cnt->peers, cnt->mrs, cnt->endpoints,
			cnt->conn_reqs, cnt->connections,
			(unsigned long long)cnt->pinned_bytes);
	rpmad__response__free_unpacked(resp, NULL);
	(void) close(sock);
	return 0;
}
