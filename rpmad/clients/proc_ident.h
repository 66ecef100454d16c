/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proc_ident.h -- whether the descriptors of `mem` and `maps` a client
 * hands over at hello are its own: those of the process that connected
 * (SO_PEERCRED), not of another process (a child), not of one of its
 * threads (/proc/PID/task/TID/...), and of memory that is still alive
 * (not that of a process which has exec'd or ended since it opened them).
 *
 * The kernel binds an open mem or maps file to the address space of the
 * process named by its path at open time, with the opener's rights then;
 * rpmad keeps using the client's descriptors for that reason (it never
 * opens a client's memory itself: it has no CAP_SYS_PTRACE). What it
 * checks is which procfs file each descriptor is, without opening
 * anything of the client's: see docs/internals.md, "Whose memory a
 * client hands over", for the reasoning about pid reuse and exec.
 */

#ifndef RPMAD_PROC_IDENT_H
#define RPMAD_PROC_IDENT_H

#include <stddef.h>
#include <sys/types.h>

/*
 * proc_ident_check -- whether mem_fd and maps_fd are /proc/`pid`/mem and
 * /proc/`pid`/maps of the process `pid` (rpmad's pid namespace) and the
 * memory behind mem_fd is alive. 0, or a negative errno with the reason
 * in err (-EPERM: another process's or a thread's; -ESRCH: ended or
 * exec'd; -EINVAL: not what it should be at all).
 */
int proc_ident_check(int mem_fd, int maps_fd, pid_t pid, char *err,
		size_t errlen);

/*
 * For the unit tests: the innermost pid of an NSpid line of
 * /proc/PID/status ("NSpid:\t4711\t5\n" -> 5); 0 or -EINVAL
 */
int proc_ident_parse_nspid(const char *status, pid_t *innermost);

#endif /* RPMAD_PROC_IDENT_H */
