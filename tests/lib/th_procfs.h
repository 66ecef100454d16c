/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * th_procfs.h -- a process seen from outside, through /proc: its
 * descriptors, mappings, memory and CPU time
 */

#ifndef TH_PROCFS_H
#define TH_PROCFS_H

#include <sys/types.h>

/* it_proc_fds -- entries of /proc/PID/fd; -1 on error */
int it_proc_fds(pid_t pid);

/*
 * it_proc_wait_fds -- wait (at most timeout_ms) until pid holds `want`
 * descriptors or fewer; returns the last count seen
 */
int it_proc_wait_fds(pid_t pid, int want, int timeout_ms);

/* it_proc_fds_of -- how many descriptors pid holds of the file at path */
int it_proc_fds_of(pid_t pid, const char *path);

/* Which lines of /proc/PID/maps it_proc_maps counts. */
enum it_maps {
	IT_MAPS_ALL,
	/* shared mappings only: client registrations, queue-pair regions */
	IT_MAPS_SHARED,
};

/* it_proc_maps -- the lines of /proc/PID/maps of a kind; -1 on error */
int it_proc_maps(pid_t pid, enum it_maps which);

/* it_proc_rss_kb -- VmRSS of a process in KiB; -1 on error */
long it_proc_rss_kb(pid_t pid);

/* it_proc_cpu_ticks -- CPU time (user + system) so far in clock ticks */
long it_proc_cpu_ticks(pid_t pid);

/* it_proc_cpu_ms -- the same in milliseconds; -1 on error */
long it_proc_cpu_ms(pid_t pid);

#endif /* TH_PROCFS_H */
