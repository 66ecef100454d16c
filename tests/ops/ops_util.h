/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ops_util.h -- what the operations tests share: child processes talked to
 * through pipes, commands run to completion with their output, rpmactl,
 * JSON documents checked by python3's parser and flattened to key/value
 * lines, log files, bounded waits
 *
 * Bounded waits: every wait here gives up after the timeout it is given
 * (a few seconds; they cover a daemon starting or a client connecting on a
 * loaded 2-core machine) and then fails the test instead of hanging it.
 */

#ifndef OPS_UTIL_H
#define OPS_UTIL_H

#include <search.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* how long a test waits for anything that should happen at once */
#define OPS_WAIT_MS 10000

/* A child process with its standard input and output on pipes. */
struct proc {
	pid_t pid;
	int in;			/* its stdin */
	int out;		/* its stdout (and stderr when merged) */
	char buf[8192];
	size_t len;
};

/*
 * proc_start -- run argv[0] (searched in PATH) with argv, the environment
 * plus `env` ("NAME=value", NULL-terminated, may be NULL), stderr to
 * `err_path` (NULL: merged into stdout). 0 or -1.
 */
int proc_start(struct proc *p, char *const argv[], char *const env[],
		const char *err_path);

/*
 * proc_line -- the next line of output that starts with `prefix` (earlier
 * lines are skipped), without its newline, within timeout_ms. 0 or -1.
 */
int proc_line(struct proc *p, const char *prefix, char *line, size_t len,
		int timeout_ms);

/* proc_send -- write text to its stdin. 0 or -1. */
int proc_send(struct proc *p, const char *text);

/* proc_alive -- whether it still runs */
bool proc_alive(const struct proc *p);

/* proc_end -- send `sig` (0: none, just close stdin), wait; its status */
int proc_end(struct proc *p, int sig);

/* The result of a command run to completion. */
struct run {
	int status;		/* exit status, or 128 + signal, or -1 */
	char *out;		/* its stdout, NUL-terminated */
	char *err;		/* its stderr */
};

/*
 * run_cmd -- run argv (NULL-terminated) as uid/gid with `groups` (when
 * uid != (uid_t)-1; n_groups may be 0) and wait up to timeout_ms.
 * 0, or -1 when it could not be run or took too long (then killed).
 */
int run_cmd(struct run *r, char *const argv[], uid_t uid, gid_t gid,
		const gid_t *groups, size_t n_groups, int timeout_ms);
void run_free(struct run *r);

/*
 * rpmactl -- run $RPMACTL_BIN --socket SOCKET with the NULL-terminated
 * arguments, as root. 0 or -1 (see run_cmd).
 */
int rpmactl(struct run *r, const char *socket, ...)
	__attribute__((sentinel));

/* A JSON document as "path<TAB>value" pairs: "mrs.3.pid", "mrs.#" = count */
struct flat {
	size_t n;
	char **key;
	char **val;
	struct hsearch_data index;	/* key -> value: listings of thousands */
	bool indexed;
};

/*
 * flat_parse -- check `json` with python3's strict parser (one document,
 * valid UTF-8) and flatten it. 0, or -1 when it is not valid JSON.
 */
int flat_parse(struct flat *f, const char *json);

/* flat_get -- the value at the path made from fmt, or NULL */
const char *flat_get(const struct flat *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* flat_len -- the length of the array at `path`, or -1 */
long flat_len(const struct flat *f, const char *path);

void flat_free(struct flat *f);

/* read_text -- a whole file, NUL-terminated (free it), or NULL */
char *read_text(const char *path);

/* write_text -- create or replace a file with text. 0 or -1. */
int write_text(const char *path, const char *text);

/* wait_text -- wait until the file holds `text`. true when it does. */
bool wait_text(const char *path, const char *text, int timeout_ms);

/* count_lines_with -- how many lines of `text` contain every word given */
size_t count_lines_with(const char *text, ...) __attribute__((sentinel));

/* free_port -- a TCP port on 127.0.0.1 nobody listens on right now */
int free_port(void);

/* can_connect -- whether the SEQPACKET socket at path accepts */
bool can_connect(const char *path);

/* wait_socket -- wait until the socket accepts; true when it does */
bool wait_socket(const char *path, int timeout_ms);

/* sleep_ms -- sleep that long */
void sleep_ms(int ms);

/* builddir_path -- $TOP_BUILDDIR/rel (static buffer) */
const char *builddir_path(const char *rel);

/* srcdir_path -- $TOP_SRCDIR/rel (static buffer) */
const char *srcdir_path(const char *rel);

/* A real rpmad of a test, in its own temporary directory. */
struct ops_daemon {
	struct proc p;
	char dir[256];
	char socket[300];
	char log[300];		/* its standard error */
	char config[300];
};

/*
 * ops_daemon_start -- write `config` (NULL: empty) to the daemon's file and
 * run rpmad --foreground --socket ... --transport tcp --config FILE plus
 * extra_args (NULL-terminated, may be NULL) with `env` added; wait until
 * its socket accepts and point RPMAD_SOCKET at it. 0 or -1.
 */
int ops_daemon_start(struct ops_daemon *d, const char *config,
		char *const extra_args[], char *const env[]);

/* ops_daemon_stop -- SIGTERM, wait; its wait status (-1: had to kill) */
int ops_daemon_stop(struct ops_daemon *d);

/*
 * ops_log_capture -- from now on, what librpmaclient logs in this process
 * is appended to ops_logged (a message and a newline each, as much as
 * fits), which starts empty; rpma_log_set_function's result (ops_log.c,
 * for tests linked with librpmaclient)
 */
#define OPS_LOGGED_SIZE 16384
extern char ops_logged[OPS_LOGGED_SIZE];
int ops_log_capture(void);

#endif /* OPS_UTIL_H */
