/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * acceptor.h -- accepting clients on the control socket
 *
 * Each accepted client becomes a session (session_start()), which counts
 * against its user's limits from then on. When accept fails because rpmad
 * is out of descriptors, a waiting administrator is still let in on the
 * descriptors held back for that (fdreserve.h, filled before the socket
 * is made) and everyone else is turned
 * away; when nothing can be accepted at all, the socket is left alone for
 * a while (backoff.h) rather than polled in a spin, and the log says so
 * at most RATELIMIT_BURST times a window.
 */

#ifndef RPMAD_ACCEPTOR_H
#define RPMAD_ACCEPTOR_H

/* acceptor_start -- accept on the listening socket lfd; 0 or -errno */
int acceptor_start(int lfd);

/* acceptor_stop -- no more clients (shutdown) */
void acceptor_stop(void);

#endif /* RPMAD_ACCEPTOR_H */
