// SPDX-License-Identifier: BSD-3-Clause
/*
 * table.c -- aligned text tables
 */

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "table.h"

/* between two columns */
#define GAP "  "

struct table {
	const struct table_column *cols;
	unsigned ncols;
	char **cells;		/* row after row */
	size_t ncells, cap;
	size_t *width;		/* per column */
};

struct table *
table_new(const struct table_column *cols, unsigned ncols)
{
	struct table *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->width = calloc(ncols, sizeof(*t->width));
	if (t->width == NULL) {
		free(t);
		return NULL;
	}
	t->cols = cols;
	t->ncols = ncols;
	for (unsigned i = 0; i < ncols; i++)
		t->width[i] = format_width(cols[i].head);
	return t;
}

int
table_cell(struct table *t, const char *fmt, ...)
{
	char raw[1024], clean[1024];
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	format_printable(raw, clean, sizeof(clean));

	if (t->ncells == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **cells = realloc(t->cells, cap * sizeof(*cells));
		if (cells == NULL)
			return -1;
		t->cells = cells;
		t->cap = cap;
	}
	char *copy = strdup(clean);
	if (copy == NULL)
		return -1;
	unsigned col = (unsigned)(t->ncells % t->ncols);
	size_t w = format_width(copy);
	if (w > t->width[col])
		t->width[col] = w;
	t->cells[t->ncells++] = copy;
	return 0;
}

unsigned
table_rows(const struct table *t)
{
	return (unsigned)((t->ncells + t->ncols - 1) / t->ncols);
}

/* One line: the cells padded to their columns, no blanks at the end. */
static void
print_row(const struct table *t, FILE *f, char *const *cells)
{
	char *line = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&line, &len);
	if (m == NULL)
		return;
	for (unsigned col = 0; col < t->ncols; col++) {
		const char *text = cells[col] ? cells[col] : "";
		size_t pad = t->width[col] - format_width(text);
		if (col > 0)
			(void) fputs(GAP, m);
		if (t->cols[col].right)
			(void) fprintf(m, "%*s", (int)pad, "");
		(void) fputs(text, m);
		if (!t->cols[col].right)
			(void) fprintf(m, "%*s", (int)pad, "");
	}
	if (fclose(m) == 0) {
		while (len > 0 && line[len - 1] == ' ')
			line[--len] = '\0';
		(void) fprintf(f, "%s\n", line);
	}
	free(line);
}

void
table_print(const struct table *t, FILE *f)
{
	char **row = calloc(t->ncols, sizeof(*row));
	if (row == NULL)
		return;
	for (unsigned c = 0; c < t->ncols; c++)
		row[c] = (char *)t->cols[c].head;
	print_row(t, f, row);
	for (size_t i = 0; i < t->ncells; i += t->ncols) {
		for (unsigned c = 0; c < t->ncols; c++)
			row[c] = i + c < t->ncells ? t->cells[i + c] : NULL;
		print_row(t, f, row);
	}
	free(row);
}

void
table_free(struct table *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->width);
	free(t);
}
