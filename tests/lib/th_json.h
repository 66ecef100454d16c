/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * th_json.h -- a JSON document (rpmactl's, rpmad's) checked by python3's
 * strict parser and flattened to "path<TAB>value" pairs: "mrs.3.pid",
 * and "mrs.#" for an array's length
 */

#ifndef TH_JSON_H
#define TH_JSON_H

#include <search.h>
#include <stdbool.h>
#include <stddef.h>

struct flat {
	size_t n;
	char **key;
	char **val;
	struct hsearch_data index; /* key -> value: listings of thousands */
	bool indexed;
};

/*
 * flat_parse -- check `json` with python3's strict parser (one document,
 * valid UTF-8) and flatten it. 0, or -1 when it is not valid JSON.
 */
int flat_parse(struct flat *f, const char *json);

/* flat_get -- the value at the path made from fmt, or NULL */
const char *flat_get(const struct flat *f, const char *fmt, ...)
		__attribute__((format(printf, 2, 3)));

/* flat_len -- the length of the array at `path`, or -1 */
long flat_len(const struct flat *f, const char *path);

/*
 * flat_find -- the index of the nth element (0: the first) of the array
 * at `array` whose `field` is `value`, or -1
 */
long flat_find(const struct flat *f, const char *array, const char *field,
		const char *value, long nth);

void flat_free(struct flat *f);

/*
 * rpmactl_json -- `rpmactl --socket SOCKET --json CMD` into f: it must
 * exit 0 with valid JSON (Check assertions); flat_free it
 */
void rpmactl_json(struct flat *f, const char *socket, const char *cmd);

#endif /* TH_JSON_H */
