/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * table.h -- aligned text tables for rpmactl's listings
 */

#ifndef RPMACTL_TABLE_H
#define RPMACTL_TABLE_H

#include <stdbool.h>
#include <stdio.h>

struct table_column {
	const char *head;
	bool right;		/* numbers: aligned to the right */
};

struct table;

/* table_new -- a table with these columns (the array must outlive it) */
struct table *table_new(const struct table_column *cols, unsigned ncols);

/*
 * table_cell -- the next cell (rows fill left to right, then a new row
 * starts). The text is made printable first. Returns 0 or -1 (no memory).
 */
int table_cell(struct table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* table_rows -- how many rows the table has */
unsigned table_rows(const struct table *t);

/* table_print -- the header and every row, columns padded to fit */
void table_print(const struct table *t, FILE *f);

void table_free(struct table *t);

#endif /* RPMACTL_TABLE_H */
