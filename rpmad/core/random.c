// SPDX-License-Identifier: BSD-3-Clause
/*
 * random.c -- random numbers from the kernel's source
 */

#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "core/random.h"

void
random_bytes(void *buf, size_t len)
{
	uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);
		if (n <= 0) {
			/* no entropy source: fall back to something varying */
			for (size_t i = 0; i < len; i++)
				p[i] = (uint8_t) (rand() ^ (int) time(NULL));
			return;
		}
		p += n;
		len -= (size_t) n;
	}
}

uint32_t
random32(void)
{
	uint32_t v;
	random_bytes(&v, sizeof(v));
	return v;
}
