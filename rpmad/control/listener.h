/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * listener.h -- the control socket clients connect to
 */

#ifndef RPMAD_LISTENER_H
#define RPMAD_LISTENER_H

#include <stdbool.h>

/*
 * listener_open -- take the socket from systemd (socket activation) or
 * create it at the configured path with the configured group and mode.
 * Returns the descriptor, or a negative errno (logged).
 */
int listener_open(bool *from_systemd);

/*
 * listener_apply_access -- give a socket rpmad created the configured group
 * and mode again (after a reload). 0, or a negative errno (logged).
 */
int listener_apply_access(void);

/*
 * listener_adopt -- the socket an older rpmad handed over (upgrade.h) at
 * `path`; `passed`: the service manager made it. Returns fd, or -EINVAL
 * when it is no listening SEQPACKET socket (logged; fd closed).
 */
int listener_adopt(int fd, bool passed, const char *path);

/*
 * listener_hand_over -- close this rpmad's descriptor of the socket and
 * leave the node to the rpmad it was handed to
 */
void listener_hand_over(int fd);

/* listener_close -- close it; remove the path if rpmad created it */
void listener_close(int fd, bool from_systemd);

#endif /* RPMAD_LISTENER_H */
