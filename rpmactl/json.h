/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json.h -- a small JSON writer for rpmactl --json
 *
 * Writes one document as the calls come, indented by two spaces. Strings
 * are escaped as RFC 8259 asks ("\"", "\\", control characters); bytes
 * that are not valid UTF-8 (file names and command names may hold any)
 * become U+FFFD, so that the output is always valid JSON.
 */

#ifndef RPMACTL_JSON_H
#define RPMACTL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	unsigned depth;
	bool has_items[JSON_MAX_DEPTH + 1];	/* a comma before the next */
	bool after_key;
};

void json_init(struct json *j, FILE *f);

void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);

/* json_key -- the next value is this member of the open object */
void json_key(struct json *j, const char *key);

/* json_string -- a string; NULL writes null */
void json_string(struct json *j, const char *s);
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

/* shorthands for a member */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_u64(struct json *j, const char *key, uint64_t v);
void json_kv_bool(struct json *j, const char *key, bool v);

/* json_end -- the newline after the document */
void json_end(struct json *j);

/* json_write_string -- an escaped, quoted string to f */
void json_write_string(FILE *f, const char *s);

#endif /* RPMACTL_JSON_H */
