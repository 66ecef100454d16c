/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * th_child.h -- forked children that play other users of rpmad: a child
 * drops to a uid/gid of its own (after an optional preparation as root),
 * runs a function whose return is its exit status, and sends back what
 * librpmaclient logged in it (th_logcap.h). Two pipes let it pause until
 * the parent says go on. A program that starts one ignores SIGPIPE.
 */

#ifndef TH_CHILD_H
#define TH_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* nobody: the tests' usual other user */
#define TH_NOBODY 65534

struct child {
	pid_t pid;
	uid_t uid;		/* the user it plays (its gid is the same) */
	int log_fd;		/* read end: the child's log at its end */
	int go[2];		/* parent -> child */
	int ready[2];		/* child -> parent */
};

typedef int child_fn(struct child *c, void *arg);

/*
 * child_can_play_users -- true as root; else says on stderr that the
 * test is skipped (other users cannot be played) and returns false
 */
bool child_can_play_users(void);

/*
 * child_start_as -- fork a child that runs `prepare` (as root, when not
 * NULL), becomes uid/gid `uid` without supplementary groups and runs
 * `fn`; a failed preparation or switch exits with 90 or 91. Fails the
 * test when it cannot fork.
 */
void child_start_as(struct child *c, uid_t uid, child_fn *prepare,
		child_fn *fn, void *arg);

/* child_start -- child_start_as for TH_NOBODY */
void child_start(struct child *c, child_fn *prepare, child_fn *fn,
		void *arg);

/* in the child: tell the parent, then wait for its word */
void child_pause(struct child *c);

/* in the parent: wait until the child paused (fails the test otherwise) */
void child_wait_ready(struct child *c);

/* in the parent: let the paused child go on (child_end collects it) */
void child_go(struct child *c);

/*
 * child_end -- in the parent: let it go on, collect its log into `log`
 * (may be NULL) and wait; its wait status
 */
int child_end(struct child *c, char *log, size_t len);

#endif /* TH_CHILD_H */
