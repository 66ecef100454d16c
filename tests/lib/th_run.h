/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * th_run.h -- programs a test runs: a child with its standard input and
 * output on pipes, a command run to completion with its output, rpmactl.
 * Every child dies with the test process (a failed check ends that at
 * once), so that none outlives its test.
 */

#ifndef TH_RUN_H
#define TH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * th_exec -- in a child: execvp argv with the environment plus `env`
 * ("NAME=value", NULL-terminated, may be NULL; it wins), after asking for
 * SIGKILL when the parent ends. Returns only by exiting with 127.
 */
void th_exec(char *const argv[], char *const env[]) __attribute__((noreturn));

/* A child process with its standard input and output on pipes. */
struct proc {
	pid_t pid;
	int in; /* its stdin */
	int out; /* its stdout (and stderr when merged) */
	char buf[8192];
	size_t len;
};

/*
 * proc_start -- run argv[0] (searched in PATH) with argv, the environment
 * plus `env` (see th_exec), stderr to `err_path` (NULL: merged into
 * stdout). 0 or -1.
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

/*
 * proc_end -- send `sig` (0: none, just close stdin), wait (TH_WAIT_MS);
 * its wait status, -1 when it had to be killed
 */
int proc_end(struct proc *p, int sig);

/* The result of a command run to completion. */
struct run {
	int status; /* exit status, or 128 + signal, or -1 */
	char *out; /* its stdout, NUL-terminated */
	char *err; /* its stderr */
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
 * th_have_program -- whether `name` is a command here (`command -v`): 1
 * or 0, -1 when sh could not be run to ask
 */
int th_have_program(const char *name);

/*
 * th_ck_have_program -- the same in a test: whether it is, and a failed
 * Check assertion when sh could not be run
 */
bool th_ck_have_program(const char *name);

/*
 * rpmactl -- run $RPMACTL_BIN --socket SOCKET with the NULL-terminated
 * arguments, as root. 0 or -1 (see run_cmd).
 */
int rpmactl(struct run *r, const char *socket, ...) __attribute__((sentinel));

#endif /* TH_RUN_H */
