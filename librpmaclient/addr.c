// SPDX-License-Identifier: BSD-3-Clause
/*
 * addr.c -- resolving addresses and ports on the application's side
 */

#include <netdb.h>
#include <string.h>
#include <sys/socket.h>

#include "addr.h"
#include "librpma.h"
#include "log_internal.h"

int
addr_numeric(const char *addr, const char *port, char host[ADDR_HOST_MAX],
		char serv[ADDR_SERV_MAX])
{
	if (addr[0] == '\0')
		return RPMA_E_INVAL;

	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res = NULL;
	int ret = getaddrinfo(addr, port, &hints, &res);
	if (ret) {
		RLOG_ERROR("cannot resolve %s%s%s: %s", addr, port ? ":" : "",
				port ? port : "", gai_strerror(ret));
		return ret == EAI_MEMORY ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
	}
	ret = getnameinfo(res->ai_addr, res->ai_addrlen, host, ADDR_HOST_MAX,
			serv, ADDR_SERV_MAX, NI_NUMERICHOST | NI_NUMERICSERV);
	freeaddrinfo(res);
	if (ret) {
		RLOG_ERROR("cannot use the address of %s: %s", addr,
				gai_strerror(ret));
		return RPMA_E_PROVIDER;
	}
	return 0;
}
