// SPDX-License-Identifier: BSD-3-Clause
/*
 * itest_vm.c -- this process's memory as the kernel reports it, and its
 * children's ends, for roles that check what registering did (itest.h)
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "itest.h"

int
it_smaps_field(const void *addr, const char *key, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	IT_ASSERT(f != NULL);
	char line[1024];
	bool in = false;
	int ret = -1;
	uintptr_t a = (uintptr_t) addr;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char c;
		/* a mapping's first line: "lo-hi perms ..." */
		if (sscanf(line, "%lx-%lx %c", &lo, &hi, &c) == 3 &&
				strchr(line, ':') > strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && strncmp(line, key, strlen(key)) == 0) {
			const char *v = line + strlen(key);
			(void) snprintf(out, len, "%s", v + strspn(v, " \t"));
			out[strcspn(out, "\n")] = '\0';
			ret = 0;
			break;
		}
	}
	(void) fclose(f);
	return ret;
}

long
it_smaps_kb(const void *addr, const char *key)
{
	char v[64];
	return it_smaps_field(addr, key, v, sizeof(v)) ? -1 :
							 strtol(v, NULL, 10);
}

bool
it_has_vmflag(const void *addr, const char *flag)
{
	char flags[256];
	IT_EQ(it_smaps_field(addr, "VmFlags:", flags, sizeof(flags)), 0);
	for (char *t = strtok(flags, " "); t; t = strtok(NULL, " "))
		if (strcmp(t, flag) == 0)
			return true;
	return false;
}

long
it_status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "re");
	IT_ASSERT(f != NULL);
	char line[256];
	long v = -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0 &&
				line[strlen(key)] == ':')
			v = strtol(line + strlen(key) + 1, NULL, 10);
	(void) fclose(f);
	IT_ASSERT_MSG(v >= 0, "no %s in /proc/self/status", key);
	return v;
}

int
it_child_status(pid_t pid)
{
	int st;
	IT_EQ(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
