/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * th_files.h -- files of a test: whole texts read and written, waiting
 * for a text to appear, counting lines, the tree's paths, scratch
 * directories removed, the end of a log shown
 */

#ifndef TH_FILES_H
#define TH_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* read_text -- a whole file, NUL-terminated (free it), or NULL */
char *read_text(const char *path);

/* write_text -- create or replace a file with text. 0 or -1. */
int write_text(const char *path, const char *text);

/* wait_text -- wait until the file holds `text`. true when it does. */
bool wait_text(const char *path, const char *text, int timeout_ms);

/*
 * count_lines_with -- how many lines of `text` contain every word given,
 * each as a word of its own (a pid is not found inside a larger number)
 */
size_t count_lines_with(const char *text, ...) __attribute__((sentinel));

/* builddir_path -- $TOP_BUILDDIR/rel (one of two static buffers) */
const char *builddir_path(const char *rel);

/* srcdir_path -- $TOP_SRCDIR/rel (one of two static buffers) */
const char *srcdir_path(const char *rel);

/*
 * th_mkdtemp -- a new directory $TMPDIR/<prefix>.XXXXXX (/tmp without
 * TMPDIR) into buf; 0 or -1 (buf then empty)
 */
int th_mkdtemp(char *buf, size_t len, const char *prefix);

/*
 * th_path -- dir/rel in one of four static buffers: as many paths may
 * stand in one call's arguments
 */
const char *th_path(const char *dir, const char *rel);

/*
 * th_mkdir_owned -- a new directory of exactly `mode` (the umask aside)
 * owned by `owner` ((uid_t)-1: this process); 0 or -1
 */
int th_mkdir_owned(const char *path, mode_t mode, uid_t owner);

/* th_remove_tree -- remove a directory and everything below it */
void th_remove_tree(const char *path);

/*
 * th_show_tail -- the last `lines` lines (at most 20) of a file to
 * stderr, each after `prefix`; nothing when it cannot be read
 */
void th_show_tail(const char *path, const char *prefix, unsigned lines);

#endif /* TH_FILES_H */
