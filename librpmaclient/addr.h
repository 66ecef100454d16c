/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * addr.h -- host names and services become numbers in the application
 *
 * rpmad never resolves names: a slow resolver must not stall a daemon that
 * serves everyone, and a container's names are the container's business.
 */

#ifndef RPMACLIENT_ADDR_H
#define RPMACLIENT_ADDR_H

#include <stddef.h>

#define ADDR_HOST_MAX 64
#define ADDR_SERV_MAX 16

/*
 * addr_numeric -- the numeric form of addr (and of port, unless NULL).
 * Returns 0, or RPMA_E_PROVIDER (logged) when it does not resolve, or
 * RPMA_E_INVAL for an empty address.
 */
int addr_numeric(const char *addr, const char *port,
		char host[ADDR_HOST_MAX], char serv[ADDR_SERV_MAX]);

#endif /* RPMACLIENT_ADDR_H */
