// SPDX-License-Identifier: BSD-3-Clause
/*
 * th_wait.c -- the clock, sleeps, bounded waits and free ports (see
 * th_wait.h)
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_daemon.h"
#include "th_wait.h"

uint64_t
it_now_ms(void)
{
	struct timespec ts;
	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

void
it_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int
th_wait_pid(pid_t pid, int timeout_ms, int *status)
{
	uint64_t end = it_now_ms() + (uint64_t) timeout_ms;
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		if (it_now_ms() >= end) {
			(void) kill(pid, SIGKILL);
			(void) waitpid(pid, status, 0);
			return -1;
		}
		it_sleep_ms(2);
	}
}

int
exit_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int
it_join(pid_t pid, int timeout_ms)
{
	int status;
	return th_wait_pid(pid, timeout_ms, &status) ? -1 : exit_code(status);
}

bool
th_socket_accepts(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path))
		return false;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return false;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	bool ok = connect(s, (struct sockaddr *) &sun, sizeof(sun)) == 0;
	(void) close(s);
	return ok;
}

bool
th_wait_socket(const char *path, int timeout_ms)
{
	uint64_t end = it_now_ms() + (uint64_t) timeout_ms;
	while (!th_socket_accepts(path)) {
		if (it_now_ms() >= end)
			return false;
		it_sleep_ms(10);
	}
	return true;
}

/* ------------------------------------------------------------- ports */

/*
 * Test endpoints listen on ports below the kernel's ephemeral range
 * (net.ipv4.ip_local_port_range): a port of that range may be given to
 * any outgoing connection (rpmad's own among them, under make -j2) before
 * the test listens on it. Tests running side by side coordinate through a
 * lock file per port, held (flock) until the process exits.
 */
#define LOWEST_PORT 10000
#define PORT_TRIES 200
#define PORT_LOCK_DIR "/tmp/rpmad-test-ports"

static unsigned
ephemeral_low(void)
{
	unsigned low = 0, high = 0;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%u %u", &low, &high) != 2)
		low = 0;
	(void) fclose(f);
	return low;
}

/* Claims `port` for this process among the tests; the fd stays open. */
static int
claim(unsigned port)
{
	char path[64];
	(void) mkdir(PORT_LOCK_DIR, 0777);
	(void) snprintf(path, sizeof(path), PORT_LOCK_DIR "/%u", port);
	int fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0666);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		(void) close(fd);
		return 0;
	}
	return 1;
}

static int
bindable(unsigned port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t) port) };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int ok = bind(s, (struct sockaddr *) &sin, sizeof(sin)) == 0;
	(void) close(s);
	return ok;
}

int
it_free_port(char *buf, size_t len)
{
	unsigned low = ephemeral_low();
	if (low > LOWEST_PORT + 1000) {
		/* one sequence per process: two calls never repeat a port */
		static unsigned seed;
		if (seed == 0)
			seed = (unsigned) getpid() ^ (unsigned) time(NULL) ^
					(unsigned) it_now_ms();
		for (int i = 0; i < PORT_TRIES; i++) {
			unsigned port = LOWEST_PORT +
					(unsigned) rand_r(&seed) %
							(low - LOWEST_PORT);
			if (bindable(port) && claim(port)) {
				(void) snprintf(buf, len, "%u", port);
				return 0;
			}
		}
	}
	/* no room below the range: a port the kernel picks will do */
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t sl = sizeof(sin);
	int ret = -1;
	if (bind(s, (struct sockaddr *) &sin, sizeof(sin)) == 0 &&
			getsockname(s, (struct sockaddr *) &sin, &sl) == 0) {
		(void) snprintf(buf, len, "%u", ntohs(sin.sin_port));
		ret = 0;
	}
	(void) close(s);
	return ret;
}

/* Whether /proc/net/<table> has a socket in LISTEN on port. */
static int
listening_in(const char *table, unsigned port)
{
	char path[64];
	(void) snprintf(path, sizeof(path), "/proc/net/%s", table);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return 0;
	char line[512];
	int found = 0;
	/* "sl local_address rem_address st ...": address is HEX:PORT */
	while (!found && fgets(line, sizeof(line), f)) {
		char local[128];
		unsigned st;
		if (sscanf(line, " %*s %127s %*s %x", local, &st) != 2)
			continue;
		const char *colon = strrchr(local, ':');
		if (colon && strtoul(colon + 1, NULL, 16) == port && st == 0x0A)
			found = 1;
	}
	(void) fclose(f);
	return found;
}

/*
 * Whether an RDMA CM id listens on port: rdma_cm's port space is its own,
 * so iproute2's `rdma resource show cm_id` tells, not /proc/net/tcp.
 */
static int
listening_rdma(unsigned port)
{
	FILE *f = popen("rdma resource show cm_id 2>/dev/null", "r");
	if (f == NULL)
		return 0;
	char line[512], want[32];
	(void) snprintf(want, sizeof(want), ":%u ", port);
	int found = 0;
	while (fgets(line, sizeof(line), f)) {
		const char *src = strstr(line, "src-addr ");
		if (strstr(line, "state LISTEN") && src && strstr(src, want))
			found = 1;
	}
	(void) pclose(f);
	return found;
}

int
it_wait_listening(const char *port, int timeout_ms)
{
	unsigned p = (unsigned) strtoul(port, NULL, 10);
	bool rdma = strcmp(test_daemon_transport(), "tcp") != 0;
	uint64_t end = it_now_ms() + (uint64_t) timeout_ms;
	for (;;) {
		if (listening_in("tcp", p) || listening_in("tcp6", p) ||
				(rdma && listening_rdma(p)))
			return 0;
		if (it_now_ms() >= end)
			return -1;
		it_sleep_ms(5);
	}
}
