/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * th_logcap.h -- what librpmaclient logs in a test process, kept for the
 * test to look at: every message with its level, file, line and function,
 * and all of them as one text (a message and a newline each, as much as
 * fits). Only tests linked with the library use it.
 */

#ifndef TH_LOGCAP_H
#define TH_LOGCAP_H

#include <librpma.h>

#include "test_daemon.h"

#define TH_LOGGED_SIZE 16384
/* the text; th_log_clear empties it */
extern char th_logged[TH_LOGGED_SIZE];

struct th_log_entry {
	enum rpma_log_level level;
	char file[256];
	int line;
	char func[128];
	char msg[1024];
};

/*
 * th_log_capture -- from now on keep what the library logs, starting
 * empty; rpma_log_set_function's result
 */
int th_log_capture(void);

/*
 * th_log_daemon_start -- start d as an operator runs it, with this
 * configuration (test_daemon_start_cfg), and th_log_capture; each a
 * Check assertion
 */
void th_log_daemon_start(struct test_daemon *d, const char *config);

/* th_log_clear -- forget what was kept */
void th_log_clear(void);

/* th_log_count -- how many messages were kept (the first 256) */
unsigned th_log_count(void);

/* th_log_entry -- message i, or NULL */
const struct th_log_entry *th_log_entry(unsigned i);

/* th_log_find -- the first message containing needle, or NULL */
const struct th_log_entry *th_log_find(const char *needle);

#endif /* TH_LOGCAP_H */
