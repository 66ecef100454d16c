/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_seen.h -- which librpma symbol versions this process runs
 */

#ifndef RPMACLIENT_API_SEEN_H
#define RPMACLIENT_API_SEEN_H

#include <stddef.h>

/*
 * api_seen -- "0.12", "1.0", "0.12+1.0", with "+unversioned" or alone
 * "unversioned" (linked without versions), "dlopen" when no loaded object
 * names the library (it was dlopen'ed)
 */
void api_seen(char *buf, size_t len);

#endif /* RPMACLIENT_API_SEEN_H */
