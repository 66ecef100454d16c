// SPDX-License-Identifier: BSD-3-Clause
/*
 * bench_util.c -- an rpmad for the benchmark, peers and small connections
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

/*
 * 0: no limit (rpmad.conf(5)); anyone may connect (the scale run's idle
 * sessions are another user's; the socket's directory is the bench's own)
 */
static const char no_limits[] =
	"max_connections = 0\nmax_endpoints = 0\nmax_pending_requests = 0\n"
	"max_descriptors = 0\nmax_registered_bytes = 0\nsocket_mode = 0666\n";

const char *bench_conf_sections;
const char *bench_conf_global;

static void
config_path(const char *sock, char *buf, size_t len)
{
	(void) snprintf(buf, len, "%s.conf", sock);
}

static int
accepts(const char *sock)
{
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	(void) snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	int ok = connect(s, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	(void) close(s);
	return ok;
}

pid_t
bench_daemon_start(const char *rpmad, const char *sock, int nice_delta)
{
	char config[128];
	config_path(sock, config, sizeof(config));
	FILE *cf = fopen(config, "w");
	/*
	 * RPMA_BENCH_CONF: lines of rpmad.conf of one's own, after our
	 * global ones and before our user sections, where a global key
	 * (poll_spin_us) would be refused
	 */
	const char *extra = getenv("RPMA_BENCH_CONF");
	if (cf == NULL || fputs(no_limits, cf) < 0 ||
			(bench_conf_global &&
					fputs(bench_conf_global, cf) < 0) ||
			(extra && fprintf(cf, "%s\n", extra) < 0) ||
			(bench_conf_sections &&
					fputs(bench_conf_sections, cf) < 0) ||
			fclose(cf)) {
		(void) fprintf(stderr, "rpma-bench: cannot write %s\n", config);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* no daemon outlives an interrupted bench */
		(void) prctl(PR_SET_PDEATHSIG, SIGTERM);
		const char *log = getenv("RPMA_BENCH_RPMAD_LOG");
		int fd = open(log ? log : "/dev/null",
				O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0)
			(void) dup2(fd, STDERR_FILENO);
		errno = 0;
		if (nice_delta && nice(nice_delta) == -1 && errno)
			perror("rpma-bench: nice");
		execlp(rpmad, rpmad, "--foreground", "--socket", sock,
				"--transport", "tcp", "--config", config,
				(char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		if (accepts(sock))
			return pid;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			break;
		(void) usleep(10000);
	}
	(void) fprintf(stderr, "rpma-bench: %s did not start\n", rpmad);
	(void) kill(pid, SIGKILL);
	(void) waitpid(pid, NULL, 0);
	return -1;
}

void
bench_daemon_stop(pid_t pid, const char *sock)
{
	(void) kill(pid, SIGTERM);
	(void) waitpid(pid, NULL, 0);
	char config[128];
	config_path(sock, config, sizeof(config));
	(void) unlink(config);
	(void) unlink(sock);
}

struct rpma_peer *
bench_peer(int type)
{
	struct ibv_context *dev;
	struct rpma_peer *peer;
	BCHECK(rpma_utils_get_ibv_context(BENCH_ADDR,
			(enum rpma_util_ibv_context_type)type, &dev));
	BCHECK(rpma_peer_new(dev, &peer));
	return peer;
}

struct rpma_conn_cfg *
bench_small_cfg(void)
{
	struct rpma_conn_cfg *cfg;
	BCHECK(rpma_conn_cfg_new(&cfg));
	BCHECK(rpma_conn_cfg_set_sq_size(cfg, 4));
	BCHECK(rpma_conn_cfg_set_rq_size(cfg, 4));
	BCHECK(rpma_conn_cfg_set_cq_size(cfg, 8));
	/* a loaded machine must not turn set-up time into failures */
	BCHECK(rpma_conn_cfg_set_timeout(cfg, 30000));
	return cfg;
}

void
bench_conn_server(const char *sock, const char *port, unsigned total,
		int ready, int done)
{
	(void) setenv("RPMAD_SOCKET", sock, 1);
	struct rpma_peer *peer = bench_peer(RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep;
	BCHECK(rpma_ep_listen(peer, BENCH_ADDR, port, &ep));
	char ok = 1;
	if (write(ready, &ok, 1) != 1)
		_exit(1);
	struct rpma_conn_cfg *cfg = bench_small_cfg();
	struct rpma_conn **conns = calloc(total ? total : 1, sizeof(*conns));
	if (conns == NULL)
		_exit(1);
	for (unsigned i = 0; i < total; i++) {
		struct rpma_conn_req *req;
		enum rpma_conn_event ev;
		BCHECK(rpma_ep_next_conn_req(ep, cfg, &req));
		BCHECK(rpma_conn_req_connect(&req, NULL, &conns[i]));
		BCHECK(rpma_conn_next_event(conns[i], &ev));
		if (ev != RPMA_CONN_ESTABLISHED) {
			(void) fprintf(stderr, "rpma-bench: accepting: %s\n",
					rpma_utils_conn_event_2str(ev));
			_exit(1);
		}
	}
	if (read(done, &ok, 1) < 0)
		_exit(1);
	for (unsigned i = 0; i < total; i++) {
		(void) rpma_conn_disconnect(conns[i]);
		(void) rpma_conn_delete(&conns[i]);
	}
	free(conns);
	(void) rpma_ep_shutdown(&ep);
	(void) rpma_peer_delete(&peer);
	_exit(0);
}

struct rpma_conn *
bench_conn_one(struct rpma_peer *peer, struct rpma_conn_cfg *cfg,
		const char *port)
{
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	enum rpma_conn_event ev;
	BCHECK(rpma_conn_req_new(peer, BENCH_ADDR, port, cfg, &req));
	BCHECK(rpma_conn_req_connect(&req, NULL, &conn));
	BCHECK(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		(void) fprintf(stderr, "rpma-bench: connecting: %s\n",
				rpma_utils_conn_event_2str(ev));
		_exit(1);
	}
	return conn;
}

void
bench_become_user(uid_t uid)
{
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid)) {
		perror("rpma-bench: setuid");
		_exit(1);
	}
}
