/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proc_maps.h -- reading a process's memory map from a descriptor of its
 * /proc/PID/maps
 *
 * Both sides use it: the library on its own /proc/self/maps, rpmad on the
 * one a client handed over (bound to that client's memory).
 */

#ifndef COMMON_PROC_MAPS_H
#define COMMON_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MAPS_PATH_MAX 512

struct maps_entry {
	uintptr_t start, end;
	bool read, write, exec, shared;
	uint64_t offset;
	unsigned dev_major, dev_minor;
	uint64_t inode;
	char path[MAPS_PATH_MAX];	/* "" for anonymous memory */
};

/*
 * maps_parse_line -- parse one line of a maps file. Returns 0, or -1 when
 * the line is not in the kernel's format.
 */
int maps_parse_line(const char *line, struct maps_entry *e);

/*
 * maps_scan -- one pass over the maps file `fd`: the entries that overlap
 * [start, end), in address order, into a malloc'ed array (*out), and every
 * entry of the process shown to `seen` (may be NULL). Returns how many
 * entries overlap, or -1 (errno set).
 */
int maps_scan(int fd, uintptr_t start, uintptr_t end, struct maps_entry **out,
		void (*seen)(const struct maps_entry *e, void *arg), void *arg);

/*
 * maps_query -- the entries that overlap [start, end), in address order,
 * into a malloc'ed array (*out): asked of the kernel one mapping at a time
 * (PROCMAP_QUERY) where it can answer, else by maps_scan. Returns how many
 * entries overlap, or -1 (errno set).
 */
int maps_query(int fd, uintptr_t start, uintptr_t end, struct maps_entry **out);

/*
 * maps_find -- the mapping holding addr, or the first above it: 1 found,
 * 0 none, -1 error (errno). It allocates nothing, so a child of fork()
 * may use it before it may use malloc.
 */
int maps_find(int fd, uintptr_t addr, struct maps_entry *e);

/* maps_open_self -- a descriptor of this process's maps, or -1 (errno) */
int maps_open_self(void);

#endif /* COMMON_PROC_MAPS_H */
