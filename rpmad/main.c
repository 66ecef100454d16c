// SPDX-License-Identifier: BSD-3-Clause
/*
 * main.c -- rpmad: command line, start-up, signals, systemd notification,
 * orderly shutdown
 */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>
#include <utlist.h>

#include "conn.h"
#include "daemon.h"
#include "device.h"
#include "guard.h"
#include "listener.h"
#include "log.h"
#include "registry.h"
#include "session.h"
#include "transport.h"

struct daemon_state rpmad;

/* How long SIGTERM waits for goodbyes to reach remote peers. */
#define SHUTDOWN_GRACE_NS (300 * 1000 * 1000ull)

struct options {
	const char *config;
	bool config_given;
	const char *socket;
	int transport;
	int log_level;
	bool foreground;
};

static void
usage(FILE *f)
{
	(void) fprintf(f,
"usage: rpmad [--foreground] [--config FILE] [--socket PATH]\n"
"             [--transport auto|tcp|verbs]\n"
"             [--log-level err|warning|notice|info|debug]\n"
"\n"
"The remote persistent memory access broker: applications linked with\n"
"librpmaclient (-lrpma) reach RDMA devices and remote memory through it.\n"
"\n"
"  --foreground   stay attached to the terminal (the default under systemd)\n"
"  --config FILE  configuration file (default %s)\n"
"  --socket PATH  control socket (default %s)\n"
"  --transport    auto: RDMA where a device serves the address, else TCP\n"
"  --log-level    what to log on stderr (default notice)\n"
"  --version, --help\n", RPMAD_DEFAULT_CONFIG, RPMAD_DEFAULT_SOCKET);
}

static int
parse_options(int argc, char *argv[], struct options *o)
{
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "transport", required_argument, NULL, 't' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof(*o));
	o->config = RPMAD_DEFAULT_CONFIG;
	o->transport = -1;
	o->log_level = -1;

	int c;
	while ((c = getopt_long(argc, argv, "fc:s:t:l:Vh", longopts,
			NULL)) != -1) {
		switch (c) {
		case 'f':
			o->foreground = true;
			break;
		case 'c':
			o->config = optarg;
			o->config_given = true;
			break;
		case 's':
			o->socket = optarg;
			break;
		case 't':
			o->transport = config_transport_parse(optarg);
			if (o->transport < 0) {
				(void) fprintf(stderr, "rpmad: unknown "
						"transport '%s'\n", optarg);
				return 2;
			}
			break;
		case 'l':
			o->log_level = log_level_parse(optarg);
			if (o->log_level < 0) {
				(void) fprintf(stderr, "rpmad: unknown log "
						"level '%s'\n", optarg);
				return 2;
			}
			break;
		case 'V':
			(void) printf("rpmad %s\n", PACKAGE_VERSION);
			return 1;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		(void) fprintf(stderr, "rpmad: unexpected argument '%s'\n",
				argv[optind]);
		return 2;
	}
	return 0;
}

/* Options win over the file, on start and on every reload. */
static void
apply_options(struct config *cfg, const struct options *o)
{
	if (o->socket)
		(void) snprintf(cfg->socket_path, sizeof(cfg->socket_path),
				"%s", o->socket);
	if (o->transport >= 0)
		cfg->transport = (enum transport_choice)o->transport;
	if (o->log_level >= 0)
		cfg->log_level = o->log_level;
}

static void
apply_runtime_settings(void)
{
	log_max_level = rpmad.cfg.log_level;
	loop_set_spin(rpmad.loop, rpmad.cfg.poll_spin_us * 1000);
}

static struct options opts;

static void
reload(void)
{
	struct config next;
	config_defaults(&next);
	if (config_load(&next, opts.config, !opts.config_given)) {
		log_err("reload: %s has errors; keeping the old configuration",
				opts.config);
		(void) sd_notify(0, "STATUS=configuration reload failed, "
				"running with the old one");
		return;
	}
	apply_options(&next, &opts);
	if (strcmp(next.socket_path, rpmad.cfg.socket_path) ||
			next.transport != rpmad.cfg.transport)
		log_notice("reload: socket and transport changes take effect "
				"after a restart");
	(void) snprintf(next.socket_path, sizeof(next.socket_path), "%s",
			rpmad.cfg.socket_path);
	next.transport = rpmad.cfg.transport;
	rpmad.cfg = next;
	apply_runtime_settings();
	log_notice("reload: configuration from %s applied", opts.config);
}

struct signal_watch {
	struct loop_watch watch;
	bool terminate;
};

static void
signal_ready(struct loop_watch *w, uint32_t events)
{
	struct signal_watch *sw = w->arg;
	struct signalfd_siginfo si;
	while (read(w->fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			log_notice("SIGHUP: reloading the configuration");
			reload();
		} else {
			log_notice("%s: shutting down",
					strsignal((int)si.ssi_signo));
			sw->terminate = true;
			loop_stop(rpmad.loop);
		}
	}
}

static void
listener_ready(struct loop_watch *w, uint32_t events)
{
	session_accept_all(w->fd);
}

static struct loop_timer watchdog_timer;
static uint64_t watchdog_ns;

static void
status_line(char *buf, size_t len)
{
	uint32_t sessions = 0, conns = 0;
	uint64_t pinned = 0;
	struct session *s;
	DL_FOREACH(rpmad.sessions, s) {
		sessions++;
		conns += s->counts.conns;
		pinned += s->counts.pinned_bytes;
	}
	(void) snprintf(buf, len, "STATUS=%u clients, %u connections, %llu "
			"bytes registered, transport %s", sessions, conns,
			(unsigned long long)pinned,
			config_transport_name(rpmad.cfg.transport));
}

static void
watchdog_fire(struct loop_timer *t)
{
	char status[160];
	status_line(status, sizeof(status));
	(void) sd_notifyf(0, "WATCHDOG=1\n%s", status);
	loop_timer_arm(rpmad.loop, t, watchdog_ns);
}

/* Says goodbye on every connection and lets the frames go out. */
static void
shutdown_connections(void)
{
	struct conn *conn;
	unsigned n = 0;
	DL_FOREACH2(conn_all(), conn, all_next) {
		if (conn->state == CONN_ESTABLISHED) {
			conn->tp->disconnect(conn);
			n++;
		}
	}
	if (n == 0)
		return;
	uint64_t until = loop_now_ns() + SHUTDOWN_GRACE_NS;
	while (loop_now_ns() < until && transport_tcp_pending())
		(void) loop_run_once(rpmad.loop, 10);
}

int
main(int argc, char *argv[])
{
	int ret = parse_options(argc, argv, &opts);
	if (ret)
		return ret == 1 ? 0 : 2;

	log_init();
	config_defaults(&rpmad.cfg);
	if (config_load(&rpmad.cfg, opts.config, !opts.config_given))
		return 1;
	apply_options(&rpmad.cfg, &opts);
	log_max_level = rpmad.cfg.log_level;

	/* a vanished client must not kill rpmad with SIGPIPE */
	(void) signal(SIGPIPE, SIG_IGN);
	if (guard_init()) {
		log_err("cannot install the SIGBUS handler: %s",
				strerror(errno));
		return 1;
	}

	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	(void) sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

	rpmad.loop = loop_new();
	if (rpmad.loop == NULL || sfd < 0) {
		log_err("cannot set up the event loop: %s", strerror(errno));
		return 1;
	}
	rpmad.start_ns = loop_now_ns();
	apply_runtime_settings();
	registry_init();
	conn_init();
	if (device_init() || transport_tcp_init())
		return 1;

	bool systemd = false;
	int lfd = listener_open(&systemd);
	if (lfd < 0)
		return 1;

	struct signal_watch sw = { .watch = { .fd = sfd, .fn = signal_ready } };
	sw.watch.arg = &sw;
	struct loop_watch lw = { .fd = lfd, .fn = listener_ready };
	if (loop_add(rpmad.loop, &sw.watch, EPOLLIN) ||
			loop_add(rpmad.loop, &lw, EPOLLIN))
		return 1;

	if (sd_watchdog_enabled(0, &watchdog_ns) > 0) {
		watchdog_ns = watchdog_ns * 1000 / 2;
		watchdog_timer.fn = watchdog_fire;
		loop_timer_arm(rpmad.loop, &watchdog_timer, watchdog_ns);
	}

	log_notice("rpmad %s ready on %s (transport %s)", PACKAGE_VERSION,
			rpmad.cfg.socket_path,
			config_transport_name(rpmad.cfg.transport));
	char status[160];
	status_line(status, sizeof(status));
	(void) sd_notifyf(0, "READY=1\n%s\nMAINPID=%d", status, (int)getpid());

	ret = loop_run(rpmad.loop);

	(void) sd_notify(0, "STOPPING=1\nSTATUS=shutting down");
	loop_del(rpmad.loop, &lw);
	listener_close(lfd, systemd);
	shutdown_connections();
	session_destroy_all();
	transport_tcp_fini();
	device_fini();
	loop_delete(rpmad.loop);
	(void) close(sfd);
	log_notice("rpmad stopped");
	return ret ? 1 : 0;
}
