/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * caps.h -- raising and dropping one of rpmad's own capabilities
 *
 * rpmad keeps CAP_SETUID and CAP_SETGID permitted but not effective: its
 * file-system identity (fsident.c) and its proof of identity to clients
 * in other user namespaces (vouch.c) raise one for a moment.
 */

#ifndef RPMAD_CAPS_H
#define RPMAD_CAPS_H

#include <stdbool.h>

/*
 * caps_change -- sets (on: only if permitted) or clears capability `cap`
 * in the effective set; off with `permitted_too` clears it in the
 * permitted set as well, for good. 0 or a negative errno.
 */
int caps_change(int cap, bool on, bool permitted_too);

/* caps_effective -- whether `cap` is in the effective set now */
bool caps_effective(int cap);

#endif /* RPMAD_CAPS_H */
