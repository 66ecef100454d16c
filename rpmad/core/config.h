/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.h -- rpmad's settings: defaults, the configuration file
 * (/etc/rpmad/rpmad.conf, see rpmad.conf(5)) and the command line
 */

#ifndef RPMAD_CONFIG_H
#define RPMAD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/netrules.h"
#include "ctl_socket.h"

#define RPMAD_DEFAULT_CONFIG "/etc/rpmad/rpmad.conf"
/* file_user's default (fsident.h): the system user the package makes */
#define CONFIG_FILE_USER "rpmad"
#define CONFIG_MAX_IDS 32
#define CONFIG_MAX_SECTIONS 32

/* tls = off | on | required: the software transport's TLS (tcp_tls.c) */
enum config_tls {
	CONFIG_TLS_OFF,
	CONFIG_TLS_ON,		/* TLS where the peer speaks it, plain else */
	CONFIG_TLS_REQUIRED,	/* authenticated TLS, nothing else */
};

/* max_registered_bytes = memlock: the client's own RLIMIT_MEMLOCK */
#define LIMIT_MEMLOCK UINT64_MAX

/*
 * What one user (uid, as the host sees it) may hold in rpmad, summed over
 * all its clients; 0 = unlimited.
 */
struct limits {
	uint32_t max_connections;	/* connection requests included */
	uint32_t max_endpoints;
	uint32_t max_pending_requests;	/* requests not connected yet */
	uint32_t max_descriptors;	/* rpmad's descriptors for the user */
	uint64_t max_registered_bytes;	/* or LIMIT_MEMLOCK */
	/* not a limit: the user's share of the data path (fairq.h) */
	uint32_t weight;		/* 1..FAIRQ_WEIGHT_MAX */
	/* bytes a second its connections may move through rpmad */
	uint64_t max_bandwidth;
};

/* which fields of a section's limits it sets */
enum {
	LIMIT_SET_CONNECTIONS = 1 << 0,
	LIMIT_SET_ENDPOINTS = 1 << 1,
	LIMIT_SET_PENDING = 1 << 2,
	LIMIT_SET_DESCRIPTORS = 1 << 3,
	LIMIT_SET_BYTES = 1 << 4,
	LIMIT_SET_WEIGHT = 1 << 5,
	LIMIT_SET_BANDWIDTH = 1 << 6,
};

/* A [user NAME] or [group NAME] section: overrides for its members. */
struct config_section {
	bool group;
	unsigned id;			/* uid or gid */
	char name[64];			/* as written, for messages */
	struct limits limits;
	unsigned limits_set;		/* LIMIT_SET_* */
	struct net_rules allow_connect, allow_listen;
};

struct config {
	char socket_path[108];
	char socket_group[64];		/* "" = leave the group alone */
	/* the identity rpmad writes clients' files with (fsident.h) */
	char file_user[64];
	unsigned socket_mode;
	char transport[16];		/* "auto", or a transport's name */
	/* network work in rpmad's namespace, not each client's (netns.h) */
	bool netns_rpmad;
	int log_level;			/* syslog priority */
	uint64_t poll_spin_us;		/* keep polling this long after work */
	uint32_t tcp_timeout_ms;	/* a silent peer counts as lost after */
	uint32_t rnr_timeout_ms;	/* a send waits this long for a recv */
	/* a client's memory answers within this, or its work fails */
	uint32_t memory_timeout_ms;
	uint32_t reply_timeout_ms;	/* clients wait this long for answers */
	/* connection set-up: a step that waits on the other rpmad or CM */
	uint32_t setup_timeout_ms;
	/* an outgoing request waits this long for the server application */
	uint32_t accept_timeout_ms;
	/* after an upgrade, the old rpmad serves its sessions this long */
	uint32_t drain_timeout_s;
	/* the software transport's TLS and its pre-shared keys' file */
	enum config_tls tls;
	char tls_psk_file[256];

	/* per-user limits (see struct limits) and networks */
	struct limits limits;
	struct net_rules allow_connect, allow_listen;
	/* [user] and [group] sections, in the order of the file */
	struct config_section sections[CONFIG_MAX_SECTIONS];
	unsigned n_sections;

	/* who may connect: empty lists = everyone */
	uid_t allow_users[CONFIG_MAX_IDS];
	unsigned n_allow_users;
	gid_t allow_groups[CONFIG_MAX_IDS];
	unsigned n_allow_groups;
	/* who may run admin commands besides root */
	gid_t admin_groups[CONFIG_MAX_IDS];
	unsigned n_admin_groups;
};

/* config_tls_name -- "off", "on", "required" */
const char *config_tls_name(enum config_tls tls);

/* config_defaults -- the settings without any file or option */
void config_defaults(struct config *cfg);

/*
 * config_load -- read a configuration file over `cfg`. A missing file is
 * fine when `missing_ok`: 0 then, with *absent set and cfg unchanged.
 * Every problem is logged with file and line; returns 0, or a negative
 * errno (the file cannot be read, or -EINVAL: it has errors; cfg is then
 * unchanged).
 */
int config_load(struct config *cfg, const char *path, bool missing_ok,
		bool *absent);

/*
 * config_describe_changes -- what differs between two configurations, for
 * the reload log line ("log_level notice -> debug, allow_users", or
 * "nothing changed")
 */
void config_describe_changes(const struct config *old,
		const struct config *next, char *buf, size_t len);

/*
 * config_set_transport_check -- how a transport name is judged: the
 * transport registry's answer, handed down by main.c before any file is
 * read (the transports sit above the configuration). Without one, only
 * "auto" passes.
 */
void config_set_transport_check(bool (*known)(const char *name));

/* config_transport_valid -- whether `name` may be the transport setting */
bool config_transport_valid(const char *name);

#endif /* RPMAD_CONFIG_H */
