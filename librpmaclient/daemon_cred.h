/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * daemon_cred.h -- whether what answers at rpmad's socket may be trusted
 * with the process's memory, before anything is sent to it
 */

#ifndef RPMACLIENT_DAEMON_CRED_H
#define RPMACLIENT_DAEMON_CRED_H

/*
 * daemon_cred_check -- the process at the other end of the connected
 * socket `sock` (reached at `path`) must be root or rpmad's configured
 * user (common/rpmad_user.h), as the kernel reports it (SO_PEERCRED).
 * Returns 0, or RPMA_E_PROVIDER with the reason logged.
 */
int daemon_cred_check(int sock, const char *path);

#endif /* RPMACLIENT_DAEMON_CRED_H */
