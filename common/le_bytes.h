/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * le_bytes.h -- little-endian integers at unaligned places in a byte
 * buffer: the memory descriptor and the TCP transport's frames are laid out
 * byte by byte, the same on every host.
 */

#ifndef RPMAD_LE_BYTES_H
#define RPMAD_LE_BYTES_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline void
le_put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
le_put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
le_put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint16_t
le_get16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline uint32_t
le_get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t
le_get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

#endif /* RPMAD_LE_BYTES_H */
