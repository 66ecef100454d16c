// SPDX-License-Identifier: BSD-3-Clause
/*
 * fdreserve.c -- spare descriptors, held back for administrators
 */

#include <fcntl.h>
#include <unistd.h>

#include "core/fdreserve.h"

static int spares[FDRESERVE_SPARES];
static unsigned held;

void
fdreserve_fill(void)
{
	while (held < FDRESERVE_SPARES) {
		/* /dev/null: openable with any file-system identity */
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;	/* none free now: refilled later */
		spares[held++] = fd;
	}
}

unsigned
fdreserve_release(unsigned n)
{
	unsigned done = 0;
	while (done < n && held > 0) {
		(void) close(spares[--held]);
		done++;
	}
	return done;
}

unsigned
fdreserve_held(void)
{
	return held;
}

void
fdreserve_fini(void)
{
	(void) fdreserve_release(held);
}
