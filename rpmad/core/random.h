/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * random.h -- random numbers: the base of object ids, keys, tokens
 */

#ifndef RPMAD_RANDOM_H
#define RPMAD_RANDOM_H

#include <stddef.h>
#include <stdint.h>

/* random_bytes -- fill buf with random bytes */
void random_bytes(void *buf, size_t len);

/* random32 -- a random number (keys, tokens) */
uint32_t random32(void);

#endif /* RPMAD_RANDOM_H */
