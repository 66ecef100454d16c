// SPDX-License-Identifier: BSD-3-Clause
/*
 * main.c -- rpmad: command line, start-up, signals, systemd notification,
 * upgrade and drain, orderly shutdown
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "clients/as_worker.h"
#include "clients/client.h"
#include "clients/tenant.h"
#include "control/acceptor.h"
#include "control/admin.h"
#include "control/listener.h"
#include "control/request.h"
#include "control/session.h"
#include "control/upgrade.h"
#include "core/daemon.h"
#include "core/fdreserve.h"
#include "core/guard.h"
#include "core/netns.h"
#include "core/offload.h"
#include "core/registry.h"
#include "fs/fsident.h"
#include "fs/fstype.h"
#include "log/log.h"
#include "log/remote_log.h"
#include "log/rlog.h"
#include "objects/conn.h"
#include "objects/device.h"
#include "objects/mr_holes.h"
#include "transport/transports.h"

struct daemon_state rpmad;

/*
 * The exit status for a bad configuration (sysexits' EX_CONFIG): the
 * service does not restart on it (RestartPreventExitStatus=).
 */
#define EXIT_BAD_CONFIG 78

/* How long SIGTERM waits for goodbyes to reach remote peers. */
#define SHUTDOWN_GRACE_NS (300 * 1000 * 1000ull)

struct options {
	const char *config;
	bool config_given;
	const char *socket;
	const char *transport;
	const char *netns;	/* --network-namespace */
	int log_level;
	bool foreground;
	bool check_config;
};

static void
usage(FILE *f)
{
	(void) fprintf(f,
"usage: rpmad [--foreground] [--config FILE] [--socket PATH]\n"
"             [--transport auto|tcp|verbs] [--network-namespace client|rpmad]\n"
"             [--log-level err|warning|notice|info|debug]\n"
"       rpmad --check-config [--config FILE]\n"
"\n"
"The remote persistent memory access broker: applications linked with\n"
"librpmaclient (-lrpma) reach RDMA devices and remote memory through it.\n"
"\n"
"  --foreground    stay attached: do not detach once ready (the default\n"
"                  under systemd)\n"
"  --config FILE   configuration file (default %s)\n"
"  --socket PATH   control socket (default %s)\n"
"  --transport     auto: RDMA where a device serves the address, else TCP\n"
"  --network-namespace  where a client's listening and connecting happen:\n"
"                  client (its own; the default) or rpmad (rpmad's)\n"
"  --log-level     what to log on stderr (default notice)\n"
"  --check-config  read the configuration, report problems and exit\n"
"  --version, --help\n"
"\n"
"See rpmad(8) and rpmad.conf(5).\n", RPMAD_DEFAULT_CONFIG,
			RPMAD_DEFAULT_SOCKET);
}

/*
 * 0: go on; 1: done, nothing more to do (--version, --help); -EINVAL: the
 * command line is wrong (said on stderr)
 */
static int
parse_options(int argc, char *argv[], struct options *o)
{
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "transport", required_argument, NULL, 't' },
		{ "network-namespace", required_argument, NULL, 'n' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof(*o));
	o->config = RPMAD_DEFAULT_CONFIG;
	o->log_level = -1;

	int c;
	while ((c = getopt_long(argc, argv, "fc:s:t:l:Vh", longopts,
			NULL)) != -1) {
		switch (c) {
		case 'f':
			o->foreground = true;
			break;
		case 'C':
			o->check_config = true;
			break;
		case 'c':
			o->config = optarg;
			o->config_given = true;
			break;
		case 's':
			o->socket = optarg;
			break;
		case 't':
			o->transport = optarg;
			if (!config_transport_valid(optarg)) {
				(void) fprintf(stderr, "rpmad: unknown "
						"transport '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case 'n':
			if (strcmp(optarg, "client") && strcmp(optarg, "rpmad")) {
				(void) fprintf(stderr, "rpmad: "
						"--network-namespace is client "
						"or rpmad, not '%s'\n", optarg);
				return -EINVAL;
			}
			o->netns = optarg;
			break;
		case 'l':
			o->log_level = log_level_parse(optarg);
			if (o->log_level < 0) {
				(void) fprintf(stderr, "rpmad: unknown log "
						"level '%s'\n", optarg);
				return -EINVAL;
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
			return -EINVAL;
		}
	}
	if (optind < argc) {
		(void) fprintf(stderr, "rpmad: unexpected argument '%s'\n",
				argv[optind]);
		return -EINVAL;
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
	if (o->transport)
		(void) snprintf(cfg->transport, sizeof(cfg->transport), "%s",
				o->transport);
	if (o->netns)
		cfg->netns_rpmad = strcmp(o->netns, "rpmad") == 0;
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
/* the socket path as configured (a passed socket may be elsewhere) */
static char configured_socket[sizeof(rpmad.cfg.socket_path)];
static bool socket_from_systemd;
/* the listening control socket; -1 once handed to a newer rpmad */
static int lfd = -1;

/* ------------------------------------------------ service manager status */

static bool
env_set(const char *name)
{
	const char *v = getenv(name);
	return v && *v;
}

/* STATUS= goes out at most this often, and only when it changed. */
#define STATUS_PERIOD_NS (1000 * 1000 * 1000ull)

static bool notify_enabled;		/* NOTIFY_SOCKET is set */
/* Whether rpmad drives an RDMA device (through the verbs transport). */
static bool
rdma_devices_in_use(void)
{
	for (struct device *d = device_list(); d; d = d->next) {
		if (d->tp->kernel_devices)
			return true;
	}
	return false;
}

static bool reload_failed;		/* the last reload found a bad file */
static struct loop_timer status_timer;
static struct loop_timer watchdog_timer;
static uint64_t watchdog_ns;
static char status_sent[192];

static void
human_bytes(uint64_t v, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB",
		"TiB", "PiB" };
	unsigned u = 0;
	double d = (double)v;
	while (d >= 1024 && u < sizeof(units) / sizeof(units[0]) - 1) {
		d /= 1024;
		u++;
	}
	if (u == 0)
		(void) snprintf(buf, len, "%llu B", (unsigned long long)v);
	else
		(void) snprintf(buf, len, "%.1f %s", d, units[u]);
}

/* The one-line summary systemctl status shows. */
static void
status_line(char *buf, size_t len)
{
	uint32_t sessions = 0, conns = 0, mrs = 0, eps = 0;
	uint64_t pinned = 0;
	for (struct session *s = session_first(); s; s = session_next(s)) {
		struct client_counts c;
		client_counts(session_client(s), &c);
		sessions++;
		conns += c.conns;
		mrs += c.mrs;
		eps += c.eps;
		pinned += c.pinned_bytes;
	}
	char bytes[32];
	human_bytes(pinned, bytes, sizeof(bytes));
	/* older rpmads serving their sessions after an upgrade */
	char older[96] = "";
	pid_t pids[UPGRADE_MAX_PREDECESSORS];
	size_t n = upgrade_predecessors(pids, UPGRADE_MAX_PREDECESSORS);
	for (size_t i = 0, off = 0; i < n && off < sizeof(older); i++)
		off += (size_t)snprintf(older + off, sizeof(older) - off,
				"%s%d", i ? ", " : "; draining: pid ",
				(int)pids[i]);
	(void) snprintf(buf, len, "%u client%s, %u connection%s, %u "
			"endpoint%s, %u registration%s (%s pinned); "
			"transport %s%s%s", sessions, sessions == 1 ? "" : "s",
			conns, conns == 1 ? "" : "s", eps, eps == 1 ? "" : "s",
			mrs, mrs == 1 ? "" : "s", bytes,
			rpmad.cfg.transport, older,
			reload_failed ? "; the last reload failed, the "
			"configuration before it is in use" : "");
}

/* Sends `what` plus STATUS= when the status changed (or `force`). */
static void
notify_with_status(const char *what, bool force)
{
	if (!notify_enabled)
		return;
	char now[sizeof(status_sent)];
	status_line(now, sizeof(now));
	bool changed = strcmp(now, status_sent) != 0;
	/* the service manager's socket may be reachable by root only */
	fsident_root();
	if (changed || force) {
		(void) sd_notifyf(0, "%s%sSTATUS=%s", what ? what : "",
				what ? "\n" : "", now);
		memcpy(status_sent, now, sizeof(status_sent));
	} else if (what) {
		(void) sd_notify(0, what);
	}
	fsident_restore();
}

static void
status_fire(struct loop_timer *t)
{
	notify_with_status(NULL, false);
	loop_timer_arm(rpmad.loop, t, STATUS_PERIOD_NS);
}

static void
watchdog_fire(struct loop_timer *t)
{
	notify_with_status("WATCHDOG=1", false);
	loop_timer_arm(rpmad.loop, t, watchdog_ns);
}

static void
notify_start(void)
{
	notify_enabled = env_set("NOTIFY_SOCKET");
	if (!notify_enabled)
		return;
	uint64_t usec;
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
		/* ping at half the period, as sd_watchdog_enabled(3) says */
		watchdog_ns = usec * 1000 / 2;
		watchdog_timer.fn = watchdog_fire;
		loop_timer_arm(rpmad.loop, &watchdog_timer, watchdog_ns);
		log_info("watchdog: pinging the service manager every %llu ms",
				(unsigned long long)(watchdog_ns / 1000000));
	}
	status_timer.fn = status_fire;
	loop_timer_arm(rpmad.loop, &status_timer, STATUS_PERIOD_NS);
}

/*
 * After an upgrade the newer rpmad is the service's main process: it
 * pings the watchdog and keeps the status; this one says nothing more
 * (not even STOPPING=1 at its end, which would stop the service).
 */
static void
notify_stop(void)
{
	loop_timer_cancel(rpmad.loop, &watchdog_timer);
	loop_timer_cancel(rpmad.loop, &status_timer);
	notify_enabled = false;
}

/* ------------------------------------------------------------ reload */

static void
reload(void)
{
	uint64_t now_us = loop_now_ns() / 1000;
	char what[64];
	(void) snprintf(what, sizeof(what), "RELOADING=1\nMONOTONIC_USEC=%llu",
			(unsigned long long)now_us);
	/* rpmad's own files and the service manager's socket, as root */
	fsident_root();
	if (notify_enabled)
		(void) sd_notify(0, what);

	struct config next;
	config_defaults(&next);
	bool absent;
	int loaded = config_load(&next, opts.config, !opts.config_given,
			&absent);
	/* the keys' file is root's to read too */
	char why[512];
	if (loaded == 0 && transports_configure(&next, why, sizeof(why))) {
		log_err("reload: %s", why);
		loaded = -EINVAL;
	}
	fsident_restore();
	if (loaded < 0) {
		log_err("reload: %s has errors; keeping the old configuration",
				opts.config);
		admin_note_reload(false);
		reload_failed = true;
		notify_with_status("READY=1", true);
		return;
	}
	apply_options(&next, &opts);
	if (strcmp(next.socket_path, configured_socket) ||
			strcmp(next.transport, rpmad.cfg.transport))
		log_notice("reload: socket and transport changes take effect "
				"after a restart");
	(void) snprintf(next.socket_path, sizeof(next.socket_path), "%s",
			rpmad.cfg.socket_path);
	(void) snprintf(next.transport, sizeof(next.transport), "%s",
			rpmad.cfg.transport);

	char changes[512];
	config_describe_changes(&rpmad.cfg, &next, changes, sizeof(changes));
	bool access_changed = strcmp(next.socket_group,
			rpmad.cfg.socket_group) ||
		next.socket_mode != rpmad.cfg.socket_mode;
	rpmad.cfg = next;
	rpmad.config_absent = absent;
	apply_runtime_settings();
	if (access_changed && !socket_from_systemd) {
		fsident_root();
		(void) listener_apply_access();
		fsident_restore();
	}
	admin_note_reload(true);
	reload_failed = false;
	log_notice("reload: configuration from %s%s applied: %s", opts.config,
			rpmad.config_absent ? " (absent: built-in defaults)" :
			"", changes);
	notify_with_status("READY=1", true);
}

/* ------------------------------------------------------------ drain */

/* how often a draining rpmad looks whether its last session ended */
#define DRAIN_CHECK_NS (200 * 1000 * 1000ull)

static struct loop_timer drain_check;
static struct loop_timer drain_deadline;

static unsigned
session_count(void)
{
	unsigned n = 0;
	for (struct session *s = session_first(); s; s = session_next(s))
		n++;
	return n;
}

static void
drain_check_fire(struct loop_timer *t)
{
	if (session_first() == NULL) {
		log_notice("upgrade: the last session of this rpmad ended: "
				"exiting");
		loop_stop(rpmad.loop);
		return;
	}
	loop_timer_arm(rpmad.loop, t, DRAIN_CHECK_NS);
}

static void
drain_deadline_fire(struct loop_timer *t)
{
	(void) t;
	log_notice("upgrade: drain_timeout_s (%u s) is over: ending the %u "
			"session(s) left", rpmad.cfg.drain_timeout_s,
			session_count());
	loop_stop(rpmad.loop);
}

/*
 * The newer rpmad serves: new clients go to it. This one stops accepting,
 * leaves the socket to it and serves the sessions it has, with their
 * connections and registrations, until they end or the deadline.
 */
static void
handed_over(pid_t new_pid)
{
	acceptor_stop();
	listener_hand_over(lfd);
	lfd = -1;
	notify_stop();
	log_notice("upgrade: pid %d serves new clients now; this rpmad (pid "
			"%d) serves its %u session(s) until they end, at most "
			"%u s (drain_timeout_s)", (int)new_pid, (int)getpid(),
			session_count(), rpmad.cfg.drain_timeout_s);
	drain_check.fn = drain_check_fire;
	loop_timer_arm(rpmad.loop, &drain_check, 0);
	drain_deadline.fn = drain_deadline_fire;
	loop_timer_arm(rpmad.loop, &drain_deadline,
			(uint64_t)rpmad.cfg.drain_timeout_s * 1000000000ull);
}

static void
upgrade_by_signal(void)
{
	pid_t pid;
	char why[256];
	if (upgrade_start("SIGUSR2", &pid, why, sizeof(why)))
		log_warning("SIGUSR2: no upgrade: %s", why);
}

/* ------------------------------------------------------------ loop */

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
		} else if (si.ssi_signo == SIGUSR2) {
			upgrade_by_signal();
		} else if (si.ssi_signo == SIGCHLD) {
			upgrade_reap();
		} else {
			log_notice("%s: shutting down",
					strsignal((int)si.ssi_signo));
			sw->terminate = true;
			loop_stop(rpmad.loop);
		}
	}
}

/* Says goodbye on every connection and lets the frames go out. */
static void
shutdown_connections(void)
{
	if (conn_shutdown_all() == 0)
		return;
	uint64_t until = loop_now_ns() + SHUTDOWN_GRACE_NS;
	while (loop_now_ns() < until && transports_pending())
		(void) loop_run_once(rpmad.loop, 10);
}

/* ------------------------------------------------------------ start-up */

/*
 * Every registration and connection holds descriptors (segments, shared
 * regions, doorbells, notification sockets): the soft limit of 1024 that
 * services usually get would cap a busy daemon, so take the hard limit.
 */
static void
raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rlim_t old = rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		log_debug("descriptor limit raised from %llu to %llu",
				(unsigned long long)old,
				(unsigned long long)rl.rlim_max);
}

/* Whether a service manager runs us (then we never detach). */
static bool
under_service_manager(void)
{
	return env_set("NOTIFY_SOCKET") || env_set("LISTEN_FDS") ||
		env_set("INVOCATION_ID");
}

/*
 * Detaching: the parent stays until the child is ready (or failed), so
 * that `rpmad && use-it` works and a failed start gives a failed status.
 * Returns the descriptor the child reports readiness on (main keeps -1
 * there when it does not detach). Only returns in the child.
 */
static int
detach(void)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC)) {
		log_err("pipe: %s", strerror(errno));
		exit(1);
	}
	pid_t pid = fork();
	if (pid < 0) {
		log_err("fork: %s", strerror(errno));
		exit(1);
	}
	if (pid > 0) {
		(void) close(p[1]);
		char c;
		ssize_t n;
		do {
			n = read(p[0], &c, 1);
		} while (n < 0 && errno == EINTR);
		if (n == 1)
			exit(0);
		int status;
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status))
			exit(WEXITSTATUS(status) ? WEXITSTATUS(status) : 1);
		exit(1);
	}
	(void) close(p[0]);
	(void) setsid();
	if (chdir("/"))
		log_warning("chdir /: %s", strerror(errno));
	return p[1];
}

static void
detach_done(int ready_fd)
{
	if (ready_fd < 0)
		return;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		(void) dup2(null, STDIN_FILENO);
		(void) dup2(null, STDOUT_FILENO);
		(void) close(null);
	}
	(void) write(ready_fd, "r", 1);
	(void) close(ready_fd);
}

int
main(int argc, char *argv[])
{
	/* transport names are the table's: the configuration asks it */
	config_set_transport_check(transport_known);
	int ret = parse_options(argc, argv, &opts);
	if (ret)
		return ret > 0 ? 0 : 2;

	log_init();
	if (!opts.check_config && upgrade_init(argv))
		return 1;
	config_defaults(&rpmad.cfg);
	bool absent;
	int loaded = config_load(&rpmad.cfg, opts.config, !opts.config_given,
			&absent);
	if (loaded < 0) {
		log_err("%s: not %s: the configuration has errors",
				opts.config, opts.check_config ?
				"valid" : "starting");
		return EXIT_BAD_CONFIG;
	}
	apply_options(&rpmad.cfg, &opts);
	char why[512];
	if (transports_configure(&rpmad.cfg, why, sizeof(why))) {
		log_err("%s: not %s: %s", opts.config,
				opts.check_config ? "valid" : "starting", why);
		return EXIT_BAD_CONFIG;
	}
	if (opts.check_config) {
		(void) printf(absent ? "%s: absent; the "
				"built-in defaults apply\n" :
				"%s: configuration is valid\n", opts.config);
		return 0;
	}
	rpmad.config_path = opts.config;
	rpmad.config_absent = absent;
	(void) snprintf(configured_socket, sizeof(configured_socket), "%s",
			rpmad.cfg.socket_path);
	log_max_level = rpmad.cfg.log_level;

	/* a predecessor's socket: it waits for us in the foreground */
	bool passed = false;
	const char *inherited_path;
	int inherited = upgrade_inherited_socket(&passed, &inherited_path);
	int ready_fd = -1;
	if (!opts.foreground && !under_service_manager() && inherited < 0)
		ready_fd = detach();

	/* a vanished client must not kill rpmad with SIGPIPE */
	(void) signal(SIGPIPE, SIG_IGN);
	ret = guard_init();
	if (ret) {
		log_err("cannot install the SIGBUS handler: %s",
				strerror(-ret));
		return 1;
	}
	raise_fd_limit();

	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);	/* upgrade */
	sigaddset(&mask, SIGCHLD);	/* a newer rpmad that ended */
	(void) sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

	rpmad.loop = loop_new();
	if (rpmad.loop == NULL || sfd < 0) {
		log_err("cannot set up the event loop: %s", strerror(errno));
		return 1;
	}
	loop_set_log(rpmad.loop, log_msg);
	rlog_set_loop(rpmad.loop);
	rpmad.start_ns = loop_now_ns();
	upgrade_watch_predecessors();
	apply_runtime_settings();
	registry_init();
	conn_init();
	/* devices are known from the start, for rpmactl and the log */
	if (transports_init(rpmad.loop, rpmad.cfg.transport))
		return 1;

	session_set_handler(request_handle);
	/*
	 * The kernel's RDMA interface (rdma_cm, uverbs) takes commands only
	 * from the credentials that opened it (ib_safe_file_access): where
	 * rpmad drives RDMA devices it keeps its file-system identity, and
	 * what charges clients' pages and blocks to them is the library's
	 * populate before registering. Otherwise the identity is taken
	 * before anyone can connect: no client is served with root's.
	 */
	if (rdma_devices_in_use())
		log_info("RDMA devices in use: the file-system identity stays "
				"uid 0 (the kernel's RDMA interface refuses a "
				"process whose credentials changed)");
	else
		fsident_drop(rpmad.cfg.file_user);
	/*
	 * CAP_SYS_ADMIN is for joining clients' network namespaces, in a
	 * thread of its own (netns.c); out of the effective set otherwise,
	 * unless RDMA devices are in use (credentials stay as they are)
	 */
	netns_init(rdma_devices_in_use());
	/*
	 * The thread for long work (persists) is made after that: a thread
	 * has its own file-system identity and capabilities, and it works on
	 * clients' files too
	 */
	offload_init(rpmad.loop);
	as_workers_init(rpmad.loop);
	/*
	 * The mount table rpmad keeps open to judge clients' files, and the
	 * descriptors held back for administrators, before anyone can
	 * connect: from then on rpmad's count of descriptors is what it keeps
	 */
	if (fstype_init())
		log_warning("cannot read /proc/self/mountinfo: clients' files "
				"will be refused until it can be read");
	/* the userfaultfd that guards mappings of clients' shared memory */
	(void) mr_holes_available();
	fdreserve_fill();
	/* the socket and its directory are rpmad's own files */
	fsident_root();
	if (inherited >= 0) {
		socket_from_systemd = passed;
		lfd = listener_adopt(inherited, passed, inherited_path);
	} else {
		lfd = listener_open(&socket_from_systemd);
	}
	fsident_restore();
	if (lfd < 0)
		return 1;
	admin_note_socket(socket_from_systemd);
	upgrade_set_socket(lfd, socket_from_systemd);
	upgrade_on_handover(handed_over);

	struct signal_watch sw = { .watch = { .fd = sfd, .fn = signal_ready } };
	sw.watch.arg = &sw;
	if (loop_add(rpmad.loop, &sw.watch, EPOLLIN) || acceptor_start(lfd))
		return 1;

	notify_start();
	log_notice("rpmad %s ready on %s (transport %s)", PACKAGE_VERSION,
			rpmad.cfg.socket_path,
			rpmad.cfg.transport);
	char ready[32];
	(void) snprintf(ready, sizeof(ready), "READY=1\nMAINPID=%d",
			(int)getpid());
	notify_with_status(ready, true);
	detach_done(ready_fd);
	upgrade_ready();

	ret = loop_run(rpmad.loop);

	fsident_root();
	if (notify_enabled)
		(void) sd_notify(0, "STOPPING=1\nSTATUS=shutting down");
	/* a draining rpmad stopped accepting and gave its socket up already */
	if (lfd >= 0) {
		acceptor_stop();
		listener_close(lfd, socket_from_systemd);
	}
	shutdown_connections();
	session_destroy_all();
	offload_fini();
	as_workers_fini();
	tenant_destroy_all();
	transports_fini();
	remote_log_fini();
	device_fini();
	loop_delete(rpmad.loop);
	(void) close(sfd);
	log_notice("rpmad stopped");
	return ret ? 1 : 0;
}
