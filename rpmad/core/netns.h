/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netns.h -- doing a client's network work in the client's network
 * namespace
 *
 * A client hands over its network namespace at hello (a descriptor of its
 * /proc/self/ns/net). Whatever rpmad does on its behalf over the network
 * (listening, connecting, checking its addresses and routes, the RDMA CM)
 * happens there, so that a container's addresses, routes and firewall
 * apply and two containers may listen on the same address and port. A
 * descriptor of -1 stands for rpmad's own namespace.
 */

#ifndef RPMAD_NETNS_H
#define RPMAD_NETNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * netns_init -- note rpmad's own namespace and take CAP_SYS_ADMIN out of
 * the effective set (netns_run's thread raises it, to join one), unless
 * `keep_creds`: where the kernel's RDMA interface serves only threads
 * whose credentials never changed, and CAP_SYS_ADMIN stays effective
 */
void netns_init(bool keep_creds);

/*
 * netns_run -- fn(arg) in network namespace `nsfd` (-1: here): in a
 * short-lived thread that joins it, so that no other work of rpmad's
 * ever runs there. Returns fn's result, or a negative errno when the
 * namespace could not be joined.
 */
int netns_run(int nsfd, int (*fn)(void *arg), void *arg);

/* netns_socket -- socket(2) in namespace `nsfd`: a descriptor or -errno */
int netns_socket(int nsfd, int domain, int type, int protocol);

/*
 * netns_cookie -- the kernel's cookie of the namespace socket `fd` is in
 * (SO_NETNS_COOKIE); 0 when the kernel does not tell
 */
uint64_t netns_cookie(int fd);

/* netns_own_cookie -- rpmad's own namespace's (0: unknown) */
uint64_t netns_own_cookie(void);

/*
 * netns_inode -- the number of namespace `nsfd` (-1: rpmad's own), as in
 * net:[INODE]; `known` is the one noted when it was handed over
 */
uint64_t netns_inode(int nsfd, uint64_t known);

/*
 * netns_take -- checks a client's handed-over descriptor `nsfd`: it must
 * be a network namespace, the one the client's control socket `ctl`
 * was made in. Returns 1 when that is rpmad's own (nsfd is not needed),
 * 0 with *inode set (its number, as in net:[INODE]) for another, or -1
 * with the reason in err; the caller keeps nsfd.
 */
int netns_take(int nsfd, int ctl, uint64_t *inode, char *err, size_t errlen);

#endif /* RPMAD_NETNS_H */
