/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * upgrade.h -- upgrading rpmad in place: the old rpmad starts the binary
 * installed at its path now and hands it the listening control socket;
 * once the new one serves, new clients go to it and the old one serves
 * the sessions it has until they end (main.c drains). The new rpmad
 * learns its predecessors' pids and watches them until they exit.
 *
 * What goes from old to new, in the environment of the exec:
 *   RPMAD_UPGRADE_FD        the listening socket (a descriptor number)
 *   RPMAD_UPGRADE_SOCKET    "made" (the new rpmad owns the node: removes
 *                           it at its end) or "passed" (the service
 *                           manager's)
 *   RPMAD_UPGRADE_PATH      the socket's path (the name it was bound
 *                           with may be a /proc/self/fd one)
 *   RPMAD_UPGRADE_READY_FD  a pipe: one byte once the new rpmad serves
 *   RPMAD_PREDECESSORS      the pids still draining, comma-separated
 * and, under systemd, WATCHDOG_PID for the new pid. The new rpmad tells
 * the service manager MAINPID= itself (the unit's NotifyAccess=all).
 */

#ifndef RPMAD_UPGRADE_H
#define RPMAD_UPGRADE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* at most this many older rpmads are tracked while they drain */
#define UPGRADE_MAX_PREDECESSORS 8

/*
 * upgrade_init -- at start, before the socket is opened: the path of the
 * binary (upgrades exec what is installed there then), the command line
 * to give it, and what a predecessor handed over (taken out of the
 * environment). 0, or a negative errno (logged).
 */
int upgrade_init(char **argv);

/*
 * upgrade_inherited_socket -- the listening socket a predecessor handed
 * over, or -1; *passed: it is the service manager's (not ours to remove);
 * *path: where clients find it
 */
int upgrade_inherited_socket(bool *passed, const char **path);

/* upgrade_watch_predecessors -- once the loop runs: log when each exits */
void upgrade_watch_predecessors(void);

/* upgrade_ready -- this rpmad serves: tell the predecessor (if any) */
void upgrade_ready(void);

/*
 * upgrade_set_socket -- the socket an upgrade hands over, and whether it
 * is the service manager's
 */
void upgrade_set_socket(int lfd, bool passed);

/*
 * What this rpmad does once the new one serves: stop accepting, give up
 * the socket and the service manager's attention, drain (main.c).
 */
typedef void upgrade_handover_fn(pid_t new_pid);
void upgrade_on_handover(upgrade_handover_fn *fn);

/*
 * upgrade_start -- start the installed binary with the socket; `by` says
 * who asked (log). 0 with *pid the new rpmad's (it serves once it is
 * ready; this rpmad goes on serving meanwhile and if it fails), or a
 * negative errno with `why`: -EBUSY an upgrade is under way, -EALREADY
 * this rpmad drains already, or the errno of pipe/fork.
 */
int upgrade_start(const char *by, pid_t *pid, char *why, size_t len);

/* upgrade_pending -- the new rpmad being started (not serving yet), or 0 */
pid_t upgrade_pending(void);

/* upgrade_draining -- this rpmad handed its socket over and drains */
bool upgrade_draining(void);

/* upgrade_predecessors -- the older rpmads still draining; their count */
size_t upgrade_predecessors(pid_t *out, size_t max);

/* upgrade_reap -- SIGCHLD: collect a new rpmad that exited */
void upgrade_reap(void);

#endif /* RPMAD_UPGRADE_H */
