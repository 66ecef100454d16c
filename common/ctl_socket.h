/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_socket.h -- one control packet with passed file descriptors.
 *
 * The control socket is AF_UNIX SOCK_SEQPACKET: a packet is a whole message.
 * These helpers send and receive one packet together with its SCM_RIGHTS
 * file descriptors and enforce the limits both sides rely on.
 */

#ifndef RPMAD_COMMON_CTL_SOCKET_H
#define RPMAD_COMMON_CTL_SOCKET_H

#include <stddef.h>

/* Where rpmad listens unless told otherwise (rpmad, the library, rpmactl). */
#define RPMAD_DEFAULT_SOCKET	"/run/rpmad/rpmad.sock"

/* Largest encoded control message, either direction. */
#define CTL_MAX_MSG	(64 * 1024)
/* Most descriptors one message may carry. */
#define CTL_MAX_FDS	32

/*
 * ctl_send -- send one packet of len bytes with nfds descriptors.
 * Returns 0 or a negative errno. Never raises SIGPIPE.
 */
int ctl_send(int sock, const void *buf, size_t len, const int *fds,
		unsigned nfds);

/*
 * ctl_send_flags -- ctl_send with more sendmsg flags (MSG_DONTWAIT: -EAGAIN
 * rather than waiting for room).
 */
int ctl_send_flags(int sock, const void *buf, size_t len, const int *fds,
		unsigned nfds, int flags);

struct ucred;

/*
 * ctl_send_as -- ctl_send of a packet without descriptors that carries
 * the credentials `as` (SCM_CREDENTIALS): a receiver with SO_PASSCRED on
 * sees them, translated into its user namespace. The kernel lets a
 * sender claim ids other than its own only with CAP_SETUID/CAP_SETGID
 * (-EPERM otherwise).
 */
int ctl_send_as(int sock, const void *buf, size_t len,
		const struct ucred *as);

/*
 * ctl_recv -- receive one packet into buf (cap bytes) and up to max_fds
 * descriptors (close-on-exec). Returns the packet length (> 0), 0 at the end
 * of the stream, or a negative errno: -EMSGSIZE when the packet or its
 * descriptors did not fit (every descriptor that arrived is closed then),
 * -EAGAIN when nothing is pending on a non-blocking socket.
 */
long ctl_recv(int sock, void *buf, size_t cap, int *fds, unsigned max_fds,
		unsigned *nfds);

/* ctl_close_fds -- close n descriptors and set them to -1. */
void ctl_close_fds(int *fds, unsigned n);

#endif /* RPMAD_COMMON_CTL_SOCKET_H */
