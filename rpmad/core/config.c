// SPDX-License-Identifier: BSD-3-Clause
/*
 * config.c -- defaults and the "key = value" configuration file
 */

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "log/log.h"
#include "loop/fairq.h"

/*
 * The default of max_registered_bytes: a quarter of the host's physical
 * memory per user ("25%"). Not the client's RLIMIT_MEMLOCK
 * (max_registered_bytes = memlock): rpmad pins for its clients precisely
 * so that they need no memlock limit of their own (an unprivileged
 * container has 64 KiB, or 0).
 */
#define REGISTERED_DEFAULT_PERCENT 25

/* `percent` of the host's physical memory (of 4 GiB if it cannot be told) */
static uint64_t
ram_share(unsigned percent)
{
	long pages = sysconf(_SC_PHYS_PAGES);
	long size = sysconf(_SC_PAGESIZE);
	uint64_t ram = pages > 0 && size > 0 ?
		(uint64_t)pages * (uint64_t)size : 4ull << 30;
	/* exact (a quarter is ram / 4), and no overflow */
	return ram / 100 * percent + ram % 100 * percent / 100;
}

const char *
config_tls_name(enum config_tls tls)
{
	return tls == CONFIG_TLS_REQUIRED ? "required" :
		tls == CONFIG_TLS_ON ? "on" : "off";
}

void
config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	(void) snprintf(cfg->socket_path, sizeof(cfg->socket_path), "%s",
			RPMAD_DEFAULT_SOCKET);
	cfg->socket_mode = 0660;
	(void) snprintf(cfg->file_user, sizeof(cfg->file_user), "%s",
			CONFIG_FILE_USER);
	(void) snprintf(cfg->transport, sizeof(cfg->transport), "auto");
	cfg->log_level = LOG_NOTICE;
	cfg->poll_spin_us = 50;
	cfg->tcp_timeout_ms = 5000;
	cfg->rnr_timeout_ms = 7000;
	cfg->memory_timeout_ms = 5000;
	cfg->reply_timeout_ms = 60000;
	cfg->setup_timeout_ms = 5000;
	cfg->accept_timeout_ms = 60000;
	cfg->drain_timeout_s = 3600;
	cfg->limits.max_connections = 1024;
	cfg->limits.max_endpoints = 64;
	cfg->limits.max_pending_requests = 256;
	cfg->limits.max_descriptors = 16384;
	cfg->limits.max_registered_bytes =
		ram_share(REGISTERED_DEFAULT_PERCENT);
	cfg->limits.weight = FAIRQ_WEIGHT_DEFAULT;
}

static bool (*judge_transport)(const char *name);

void
config_set_transport_check(bool (*known)(const char *name))
{
	judge_transport = known;
}

bool
config_transport_valid(const char *name)
{
	if (judge_transport)
		return judge_transport(name);
	return strcmp(name, "auto") == 0;
}

/*
 * A number with an optional K, M, G or T suffix (powers of 1024): 0,
 * -EINVAL (not a number) or -ERANGE (above max).
 */
static int
parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	/* decimal only: a leading 0 must not turn "010" into eight */
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -errno;
	unsigned shift = 0;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	case 'T': case 't': shift = 40; end++; break;
	}
	if (*end != '\0')
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	v <<= shift;
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* "N%", 1 <= N <= 100: 0, or -EINVAL */
static int
parse_percent(const char *s, unsigned *out)
{
	size_t len = strspn(s, "0123456789");
	if (len == 0 || len > 3 || strcmp(s + len, "%") != 0)
		return -EINVAL;
	unsigned v = (unsigned)strtoul(s, NULL, 10);
	if (v < 1 || v > 100)
		return -EINVAL;
	*out = v;
	return 0;
}

static int
parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;
	int ret = parse_u64(s, UINT32_MAX, &v);
	if (ret)
		return ret;
	*out = (uint32_t)v;
	return 0;
}

/*
 * A comma-separated list of user (or group) names or numbers: 0, or a
 * negative errno (logged).
 */
static int
parse_ids(const char *value, bool groups, unsigned *ids, unsigned *n,
		const char *path, int line)
{
	char copy[1024];
	(void) snprintf(copy, sizeof(copy), "%s", value);
	*n = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ", \t", &save); tok;
			tok = strtok_r(NULL, ", \t", &save)) {
		if (*n == CONFIG_MAX_IDS) {
			log_err("%s:%d: more than %d names", path, line,
					CONFIG_MAX_IDS);
			return -E2BIG;
		}
		uint64_t num;
		if (parse_u64(tok, UINT32_MAX - 1, &num) == 0) {
			ids[(*n)++] = (unsigned)num;
			continue;
		}
		if (groups) {
			struct group *gr = getgrnam(tok);
			if (gr == NULL) {
				log_err("%s:%d: unknown group '%s'", path,
						line, tok);
				return -ENOENT;
			}
			ids[(*n)++] = gr->gr_gid;
		} else {
			struct passwd *pw = getpwnam(tok);
			if (pw == NULL) {
				log_err("%s:%d: unknown user '%s'", path, line,
						tok);
				return -ENOENT;
			}
			ids[(*n)++] = pw->pw_uid;
		}
	}
	return 0;
}

static char *
trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/*
 * One limit key into `l`: the LIMIT_SET_* bit it set, 0 when the key is no
 * limit, -EINVAL for a bad value (not logged: the caller says where).
 */
static int
apply_limit(struct limits *l, const char *key, const char *value)
{
	if (strcmp(key, "max_connections") == 0)
		return parse_u32(value, &l->max_connections) ? -EINVAL :
			LIMIT_SET_CONNECTIONS;
	if (strcmp(key, "max_endpoints") == 0)
		return parse_u32(value, &l->max_endpoints) ? -EINVAL :
			LIMIT_SET_ENDPOINTS;
	if (strcmp(key, "max_pending_requests") == 0)
		return parse_u32(value, &l->max_pending_requests) ? -EINVAL :
			LIMIT_SET_PENDING;
	if (strcmp(key, "max_descriptors") == 0)
		return parse_u32(value, &l->max_descriptors) ? -EINVAL :
			LIMIT_SET_DESCRIPTORS;
	if (strcmp(key, "max_registered_bytes") == 0) {
		if (strcmp(value, "memlock") == 0) {
			l->max_registered_bytes = LIMIT_MEMLOCK;
			return LIMIT_SET_BYTES;
		}
		unsigned percent;
		if (parse_percent(value, &percent) == 0) {
			l->max_registered_bytes = ram_share(percent);
			return LIMIT_SET_BYTES;
		}
		return parse_u64(value, UINT64_MAX - 1,
				&l->max_registered_bytes) ? -EINVAL :
			LIMIT_SET_BYTES;
	}
	if (strcmp(key, "weight") == 0)
		return parse_u32(value, &l->weight) || l->weight == 0 ||
			l->weight > FAIRQ_WEIGHT_MAX ? -EINVAL :
			LIMIT_SET_WEIGHT;
	if (strcmp(key, "max_bandwidth") == 0)
		return parse_u64(value, UINT64_MAX - 1, &l->max_bandwidth) ?
			-EINVAL : LIMIT_SET_BANDWIDTH;
	return 0;
}

/*
 * allow_connect / allow_listen into their lists: 1 when applied, 0 when
 * the key is neither, -EINVAL when the value is wrong (logged).
 */
static int
apply_rules(const char *key, const char *value, struct net_rules *connect,
		struct net_rules *listen, const char *path, int line)
{
	struct net_rules *r;
	if (strcmp(key, "allow_connect") == 0)
		r = connect;
	else if (strcmp(key, "allow_listen") == 0)
		r = listen;
	else
		return 0;
	char err[256];
	int ret = net_rules_parse(value, r, err, sizeof(err));
	if (ret) {
		log_err("%s:%d: %s: %s", path, line, key, err);
		return ret;
	}
	return 1;
}

/*
 * "[user NAME]" or "[group NAME]" (names or numbers): starts a section.
 * 0, or a negative errno (logged).
 */
static int
start_section(struct config *c, char *s, const char *path, int line)
{
	size_t len = strlen(s);
	if (len < 3 || s[len - 1] != ']')
		goto bad;
	s[len - 1] = '\0';
	char *kind = trim(s + 1);
	char *name = kind + strcspn(kind, " \t");
	if (*name == '\0')
		goto bad;
	*name++ = '\0';
	name = trim(name);
	bool group;
	if (strcmp(kind, "user") == 0)
		group = false;
	else if (strcmp(kind, "group") == 0)
		group = true;
	else
		goto bad;
	if (c->n_sections == CONFIG_MAX_SECTIONS) {
		log_err("%s:%d: more than %d sections", path, line,
				CONFIG_MAX_SECTIONS);
		return -E2BIG;
	}
	unsigned id, n = 0;
	int ret = parse_ids(name, group, &id, &n, path, line);
	if (ret || n != 1) {
		if (n != 1)
			log_err("%s:%d: one name per section", path, line);
		return ret ? ret : -EINVAL;
	}
	struct config_section *sec = &c->sections[c->n_sections++];
	memset(sec, 0, sizeof(*sec));
	sec->group = group;
	sec->id = id;
	(void) snprintf(sec->name, sizeof(sec->name), "%s", name);
	return 0;
bad:
	log_err("%s:%d: expected [user NAME] or [group NAME]", path, line);
	return -EINVAL;
}

/*
 * One "key = value" inside a section: limits and networks only. 0, or a
 * negative errno (logged).
 */
static int
apply_in_section(struct config_section *sec, const char *key,
		const char *value, const char *path, int line)
{
	int v = apply_limit(&sec->limits, key, value);
	if (v > 0) {
		sec->limits_set |= (unsigned)v;
		return 0;
	}
	if (v < 0) {
		log_err("%s:%d: bad value '%s' for %s", path, line, value,
				key);
		return v;
	}
	v = apply_rules(key, value, &sec->allow_connect,
			&sec->allow_listen, path, line);
	if (v != 0)
		return v < 0 ? v : 0;
	log_err("%s:%d: '%s' cannot be set for one %s (only the max_* "
			"limits, weight, allow_connect and allow_listen)", path,
			line, key, sec->group ? "group" : "user");
	return -EINVAL;
}

/*
 * Applies one "key = value"; logs and returns a negative errno when it is
 * wrong.
 */
static int
apply(struct config *c, const char *key, const char *value, const char *path,
		int line)
{
	uint64_t u64;
	int v;

	if (strcmp(key, "socket") == 0) {
		if (value[0] != '/' || strlen(value) >= sizeof(c->socket_path))
			goto bad;
		(void) snprintf(c->socket_path, sizeof(c->socket_path), "%s",
				value);
	} else if (strcmp(key, "socket_group") == 0) {
		if (strlen(value) >= sizeof(c->socket_group))
			goto bad;
		uint64_t gid;
		if (value[0] && parse_u64(value, UINT32_MAX - 1, &gid) &&
				getgrnam(value) == NULL) {
			log_err("%s:%d: unknown group '%s'", path, line, value);
			return -ENOENT;
		}
		(void) snprintf(c->socket_group, sizeof(c->socket_group), "%s",
				value);
	} else if (strcmp(key, "file_user") == 0) {
		uint64_t uid;
		if (value[0] == '\0' || strlen(value) >= sizeof(c->file_user))
			goto bad;
		/* the default may be missing: rpmad then picks an id */
		if (parse_u64(value, UINT32_MAX - 1, &uid) &&
				getpwnam(value) == NULL &&
				strcmp(value, CONFIG_FILE_USER) != 0) {
			log_err("%s:%d: unknown user '%s'", path, line, value);
			return -ENOENT;
		}
		(void) snprintf(c->file_user, sizeof(c->file_user), "%s",
				value);
	} else if (strcmp(key, "socket_mode") == 0) {
		char *end;
		unsigned long mode = strtoul(value, &end, 8);
		if (!isdigit((unsigned char)*value) || *end != '\0' ||
				mode > 0777)
			goto bad;
		c->socket_mode = (unsigned)mode;
	} else if (strcmp(key, "transport") == 0) {
		if (!config_transport_valid(value))
			goto bad;
		(void) snprintf(c->transport, sizeof(c->transport), "%s",
				value);
	} else if (strcmp(key, "network_namespace") == 0) {
		if (strcmp(value, "client") && strcmp(value, "rpmad"))
			goto bad;
		c->netns_rpmad = strcmp(value, "rpmad") == 0;
	} else if (strcmp(key, "log_level") == 0) {
		if ((v = log_level_parse(value)) < 0)
			goto bad;
		c->log_level = v;
	} else if (strcmp(key, "poll_spin_us") == 0) {
		if (parse_u64(value, 1000000, &u64))
			goto bad;
		c->poll_spin_us = u64;
	} else if (strcmp(key, "tcp_timeout_ms") == 0) {
		if (parse_u32(value, &c->tcp_timeout_ms) ||
				c->tcp_timeout_ms < 100)
			goto bad;
	} else if (strcmp(key, "rnr_timeout_ms") == 0) {
		if (parse_u32(value, &c->rnr_timeout_ms))
			goto bad;
	} else if (strcmp(key, "memory_timeout_ms") == 0) {
		if (parse_u32(value, &c->memory_timeout_ms) ||
				c->memory_timeout_ms < 10 ||
				c->memory_timeout_ms > 3600000)
			goto bad;
	} else if (strcmp(key, "reply_timeout_ms") == 0) {
		/* the bounds the library holds it to */
		if (parse_u32(value, &c->reply_timeout_ms) ||
				c->reply_timeout_ms < 100 ||
				c->reply_timeout_ms > 3600000)
			goto bad;
	} else if (strcmp(key, "setup_timeout_ms") == 0) {
		if (parse_u32(value, &c->setup_timeout_ms) ||
				c->setup_timeout_ms < 100)
			goto bad;
	} else if (strcmp(key, "drain_timeout_s") == 0) {
		if (parse_u32(value, &c->drain_timeout_s) ||
				c->drain_timeout_s < 1)
			goto bad;
	} else if (strcmp(key, "tls") == 0) {
		if (strcmp(value, "off") == 0)
			c->tls = CONFIG_TLS_OFF;
		else if (strcmp(value, "on") == 0)
			c->tls = CONFIG_TLS_ON;
		else if (strcmp(value, "required") == 0)
			c->tls = CONFIG_TLS_REQUIRED;
		else
			goto bad;
	} else if (strcmp(key, "tls_psk_file") == 0) {
		if (value[0] != '/' || strlen(value) >= sizeof(c->tls_psk_file))
			goto bad;
		(void) snprintf(c->tls_psk_file, sizeof(c->tls_psk_file), "%s",
				value);
	} else if (strcmp(key, "accept_timeout_ms") == 0) {
		if (parse_u32(value, &c->accept_timeout_ms) ||
				c->accept_timeout_ms < 100)
			goto bad;
	} else if ((v = apply_limit(&c->limits, key, value)) != 0) {
		if (v < 0)
			goto bad;
	} else if ((v = apply_rules(key, value, &c->allow_connect,
			&c->allow_listen, path, line)) != 0) {
		return v < 0 ? v : 0;
	} else if (strcmp(key, "allow_users") == 0) {
		return parse_ids(value, false, c->allow_users,
				&c->n_allow_users, path, line);
	} else if (strcmp(key, "allow_groups") == 0) {
		return parse_ids(value, true, c->allow_groups,
				&c->n_allow_groups, path, line);
	} else if (strcmp(key, "admin_groups") == 0) {
		return parse_ids(value, true, c->admin_groups,
				&c->n_admin_groups, path, line);
	} else {
		log_err("%s:%d: unknown key '%s'", path, line, key);
		return -EINVAL;
	}
	return 0;
bad:
	log_err("%s:%d: bad value '%s' for %s", path, line, value, key);
	return -EINVAL;
}

int
config_load(struct config *cfg, const char *path, bool missing_ok,
		bool *absent)
{
	*absent = false;
	FILE *f = fopen(path, "re");
	if (f == NULL) {
		int e = errno;
		if (e == ENOENT && missing_ok) {
			*absent = true;
			return 0;
		}
		log_err("cannot read %s: %s", path, strerror(e));
		return -e;
	}

	struct config next = *cfg;
	char buf[2048];
	int line = 0, errors = 0;
	bool in_section = false;
	/* the file's sections replace the defaults' (there are none) */
	next.n_sections = 0;
	while (fgets(buf, sizeof(buf), f)) {
		line++;
		if (strchr(buf, '\n') == NULL && !feof(f)) {
			log_err("%s:%d: line too long", path, line);
			errors++;
			int ch;
			while ((ch = fgetc(f)) != EOF && ch != '\n')
				;
			continue;
		}
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		char *s = trim(buf);
		if (*s == '\0')
			continue;
		if (*s == '[') {
			if (start_section(&next, s, path, line))
				errors++;
			in_section = true;
			continue;
		}
		char *eq = strchr(s, '=');
		if (eq == NULL) {
			log_err("%s:%d: expected 'key = value'", path, line);
			errors++;
			continue;
		}
		*eq = '\0';
		char *key = trim(s);
		char *value = trim(eq + 1);
		if (in_section) {
			/* (a section that failed to start is counted already) */
			if (next.n_sections && apply_in_section(&next.sections[next.n_sections - 1],
					key, value, path, line))
				errors++;
		} else if (apply(&next, key, value, path, line)) {
			errors++;
		}
	}
	(void) fclose(f);

	if (next.tls != CONFIG_TLS_OFF && next.tls_psk_file[0] == '\0') {
		log_err("%s: tls = %s needs tls_psk_file", path,
				config_tls_name(next.tls));
		errors++;
	}
	if (errors) {
		log_err("%s: %d error%s", path, errors, errors > 1 ? "s" : "");
		return -EINVAL;
	}
	*cfg = next;
	return 0;
}

/* Appends ", what" to buf (the first without the comma). */
static void
note(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
note(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	if (used + 3 >= len)
		return;
	if (used) {
		(void) snprintf(buf + used, len - used, ", ");
		used += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static bool
ids_differ(const unsigned *a, unsigned na, const unsigned *b, unsigned nb)
{
	return na != nb || (na && memcmp(a, b, na * sizeof(*a)) != 0);
}

static const char *
bytes_text(uint64_t v, char *buf, size_t len)
{
	if (v == LIMIT_MEMLOCK)
		return "memlock";
	(void) snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

static void
describe_limits(const struct limits *o, const struct limits *n, char *buf,
		size_t len)
{
	if (o->max_connections != n->max_connections)
		note(buf, len, "max_connections %u -> %u", o->max_connections,
				n->max_connections);
	if (o->max_endpoints != n->max_endpoints)
		note(buf, len, "max_endpoints %u -> %u", o->max_endpoints,
				n->max_endpoints);
	if (o->max_pending_requests != n->max_pending_requests)
		note(buf, len, "max_pending_requests %u -> %u",
				o->max_pending_requests,
				n->max_pending_requests);
	if (o->max_descriptors != n->max_descriptors)
		note(buf, len, "max_descriptors %u -> %u", o->max_descriptors,
				n->max_descriptors);
	if (o->weight != n->weight)
		note(buf, len, "weight %u -> %u", o->weight, n->weight);
	char a[32], b[32];
	if (o->max_bandwidth != n->max_bandwidth)
		note(buf, len, "max_bandwidth %s -> %s",
				bytes_text(o->max_bandwidth, a, sizeof(a)),
				bytes_text(n->max_bandwidth, b, sizeof(b)));
	if (o->max_registered_bytes != n->max_registered_bytes)
		note(buf, len, "max_registered_bytes %s -> %s",
				bytes_text(o->max_registered_bytes, a,
					sizeof(a)),
				bytes_text(n->max_registered_bytes, b,
					sizeof(b)));
}

static bool
sections_differ(const struct config *o, const struct config *n)
{
	if (o->n_sections != n->n_sections)
		return true;
	for (unsigned i = 0; i < o->n_sections; i++) {
		const struct config_section *a = &o->sections[i];
		const struct config_section *b = &n->sections[i];
		if (a->group != b->group || a->id != b->id ||
				a->limits_set != b->limits_set ||
				memcmp(&a->limits, &b->limits,
					sizeof(a->limits)) ||
				!net_rules_equal(&a->allow_connect,
					&b->allow_connect) ||
				!net_rules_equal(&a->allow_listen,
					&b->allow_listen))
			return true;
	}
	return false;
}

void
config_describe_changes(const struct config *o, const struct config *n,
		char *buf, size_t len)
{
	buf[0] = '\0';
	if (strcmp(o->socket_path, n->socket_path))
		note(buf, len, "socket %s -> %s", o->socket_path,
				n->socket_path);
	if (strcmp(o->file_user, n->file_user))
		note(buf, len, "file_user '%s' -> '%s' (on restart)",
				o->file_user, n->file_user);
	if (strcmp(o->socket_group, n->socket_group))
		note(buf, len, "socket_group '%s' -> '%s'", o->socket_group,
				n->socket_group);
	if (o->socket_mode != n->socket_mode)
		note(buf, len, "socket_mode %04o -> %04o", o->socket_mode,
				n->socket_mode);
	if (strcmp(o->transport, n->transport))
		note(buf, len, "transport %s -> %s", o->transport,
				n->transport);
	if (o->netns_rpmad != n->netns_rpmad)
		note(buf, len, "network_namespace -> %s (new sessions)",
				n->netns_rpmad ? "rpmad" : "client");
	if (o->log_level != n->log_level)
		note(buf, len, "log_level %s -> %s",
				log_level_name(o->log_level),
				log_level_name(n->log_level));
	if (o->poll_spin_us != n->poll_spin_us)
		note(buf, len, "poll_spin_us %llu -> %llu",
				(unsigned long long)o->poll_spin_us,
				(unsigned long long)n->poll_spin_us);
	if (o->tcp_timeout_ms != n->tcp_timeout_ms)
		note(buf, len, "tcp_timeout_ms %u -> %u", o->tcp_timeout_ms,
				n->tcp_timeout_ms);
	if (o->rnr_timeout_ms != n->rnr_timeout_ms)
		note(buf, len, "rnr_timeout_ms %u -> %u", o->rnr_timeout_ms,
				n->rnr_timeout_ms);
	if (o->memory_timeout_ms != n->memory_timeout_ms)
		note(buf, len, "memory_timeout_ms %u -> %u",
				o->memory_timeout_ms, n->memory_timeout_ms);
	if (o->reply_timeout_ms != n->reply_timeout_ms)
		note(buf, len, "reply_timeout_ms %u -> %u",
				o->reply_timeout_ms, n->reply_timeout_ms);
	if (o->setup_timeout_ms != n->setup_timeout_ms)
		note(buf, len, "setup_timeout_ms %u -> %u",
				o->setup_timeout_ms, n->setup_timeout_ms);
	if (o->accept_timeout_ms != n->accept_timeout_ms)
		note(buf, len, "accept_timeout_ms %u -> %u",
				o->accept_timeout_ms, n->accept_timeout_ms);
	if (o->drain_timeout_s != n->drain_timeout_s)
		note(buf, len, "drain_timeout_s %u -> %u",
				o->drain_timeout_s, n->drain_timeout_s);
	if (o->tls != n->tls)
		note(buf, len, "tls %s -> %s", config_tls_name(o->tls),
				config_tls_name(n->tls));
	if (strcmp(o->tls_psk_file, n->tls_psk_file))
		note(buf, len, "tls_psk_file");
	describe_limits(&o->limits, &n->limits, buf, len);
	if (!net_rules_equal(&o->allow_connect, &n->allow_connect))
		note(buf, len, "allow_connect");
	if (!net_rules_equal(&o->allow_listen, &n->allow_listen))
		note(buf, len, "allow_listen");
	if (sections_differ(o, n))
		note(buf, len, "[user]/[group] sections");
	if (ids_differ(o->allow_users, o->n_allow_users, n->allow_users,
			n->n_allow_users))
		note(buf, len, "allow_users");
	if (ids_differ(o->allow_groups, o->n_allow_groups, n->allow_groups,
			n->n_allow_groups))
		note(buf, len, "allow_groups");
	if (ids_differ(o->admin_groups, o->n_admin_groups, n->admin_groups,
			n->n_admin_groups))
		note(buf, len, "admin_groups");
	if (buf[0] == '\0')
		(void) snprintf(buf, len, "nothing changed");
}
