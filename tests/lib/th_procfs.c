// SPDX-License-Identifier: BSD-3-Clause
/*
 * th_procfs.c -- a process seen through /proc (see th_procfs.h)
 */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "th_procfs.h"
#include "th_wait.h"

int
it_proc_fds(pid_t pid)
{
	char path[64];
	(void) snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
	DIR *dir = opendir(path);
	if (dir == NULL)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (e->d_name[0] != '.')
			n++;
	}
	(void) closedir(dir);
	return n;
}

int
it_proc_wait_fds(pid_t pid, int want, int timeout_ms)
{
	uint64_t end = it_now_ms() + (uint64_t) timeout_ms;
	int n = it_proc_fds(pid);
	while (n > want && it_now_ms() < end) {
		it_sleep_ms(10);
		n = it_proc_fds(pid);
	}
	return n;
}

int
it_proc_fds_of(pid_t pid, const char *path)
{
	char dir[64];
	(void) snprintf(dir, sizeof(dir), "/proc/%d/fd", (int) pid);
	DIR *fds = opendir(dir);
	if (fds == NULL)
		return -1;
	int n = 0;
	for (struct dirent *de; (de = readdir(fds)) != NULL;) {
		char link[400], target[400];
		(void) snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		ssize_t len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += strcmp(target, path) == 0;
	}
	(void) closedir(fds);
	return n;
}

int
it_proc_maps(pid_t pid, enum it_maps which)
{
	char path[64];
	(void) snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	int n = 0;
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		/* "start-end perms offset dev inode [path]" */
		char perms[8] = "";
		(void) sscanf(line, "%*s %7s", perms);
		if (which == IT_MAPS_SHARED && perms[3] != 's')
			continue;
		n++;
	}
	(void) fclose(f);
	return n;
}

long
it_proc_rss_kb(pid_t pid)
{
	char path[64], line[256];
	(void) snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	long kb = -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	}
	(void) fclose(f);
	return kb;
}

long
it_proc_cpu_ticks(pid_t pid)
{
	char path[64], buf[1024];
	(void) snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	(void) fclose(f);
	buf[n] = '\0';
	/* the fields after the command, which may hold anything but ')' */
	char *p = strrchr(buf, ')');
	unsigned long utime, stime;
	if (p == NULL ||
			sscanf(p + 2,
					"%*c %*d %*d %*d %*d %*d %*u %*u %*u "
					"%*u %*u %lu %lu",
					&utime, &stime) != 2)
		return -1;
	return (long) (utime + stime);
}

long
it_proc_cpu_ms(pid_t pid)
{
	long ticks = it_proc_cpu_ticks(pid);
	long hz = sysconf(_SC_CLK_TCK);
	return ticks < 0 ? -1 : ticks * 1000 / hz;
}
