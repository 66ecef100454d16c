// SPDX-License-Identifier: BSD-3-Clause
/*
 * th_child.c -- children playing other users (see th_child.h)
 */

#include <check.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "th_child.h"
#include "th_logcap.h"

bool
child_can_play_users(void)
{
	if (geteuid() == 0)
		return true;
	(void) fprintf(stderr,
			"not root: other users cannot be played; "
			"skipping\n");
	return false;
}

void
child_start_as(struct child *c, uid_t uid, child_fn *prepare, child_fn *fn,
		void *arg)
{
	/*
	 * a child that ended early (killed by its cgroup, say) leaves its
	 * pipes without a reader: writing to them fails, not kills the test
	 */
	(void) signal(SIGPIPE, SIG_IGN);
	int lp[2];
	ck_assert_int_eq(pipe(lp), 0);
	ck_assert_int_eq(pipe(c->go), 0);
	ck_assert_int_eq(pipe(c->ready), 0);
	c->uid = uid;
	c->pid = fork();
	ck_assert_int_ge(c->pid, 0);
	if (c->pid == 0) {
		(void) close(lp[0]);
		(void) close(c->go[1]);
		(void) close(c->ready[0]);
		if (prepare && prepare(c, arg))
			_exit(90);
		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			_exit(91);
		th_logged[0] = '\0';
		int ret = fn(c, arg);
		(void) write(lp[1], th_logged, strlen(th_logged));
		_exit(ret);
	}
	(void) close(lp[1]);
	(void) close(c->go[0]);
	(void) close(c->ready[1]);
	c->log_fd = lp[0];
}

void
child_start(struct child *c, child_fn *prepare, child_fn *fn, void *arg)
{
	child_start_as(c, TH_NOBODY, prepare, fn, arg);
}

void
child_pause(struct child *c)
{
	char b = 1;
	(void) write(c->ready[1], &b, 1);
	(void) read(c->go[0], &b, 1);
}

void
child_go(struct child *c)
{
	char b = 1;
	ck_assert_int_eq(write(c->go[1], &b, 1), 1);
}

void
child_wait_ready(struct child *c)
{
	char b;
	ck_assert_int_eq(read(c->ready[0], &b, 1), 1);
}

int
child_end(struct child *c, char *log, size_t len)
{
	char b = 1;
	(void) write(c->go[1], &b, 1);
	(void) close(c->go[1]);
	size_t used = 0;
	ssize_t n;
	char sink[4096];
	while ((n = read(c->log_fd, log && used + 1 < len ? log + used : sink,
			log && used + 1 < len ? len - 1 - used :
			sizeof(sink))) > 0) {
		if (log && used + 1 < len)
			used += (size_t)n;
	}
	if (log)
		log[used] = '\0';
	(void) close(c->log_fd);
	(void) close(c->ready[0]);
	int status;
	ck_assert_int_eq(waitpid(c->pid, &status, 0), c->pid);
	return status;
}
