/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * format.h -- how rpmactl shows numbers, durations, usage flags and text
 * that came from elsewhere (command names, file paths)
 */

#ifndef RPMACTL_FORMAT_H
#define RPMACTL_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* format_bytes -- "512 B", "64.0 KiB", "1.5 GiB" */
const char *format_bytes(uint64_t v, char *buf, size_t len);

/* format_duration -- "45s", "2m 13s", "3h 02m", "4d 07h" */
const char *format_duration(uint64_t ms, char *buf, size_t len);

/* format_usage -- "READ_SRC|WRITE_DST" for RPMA_MR_USAGE_* bits ("-": none) */
const char *format_usage(uint32_t usage, char *buf, size_t len);

/*
 * format_usage_name -- the name of usage bit `bit` (0..31): the suffix of
 * its RPMA_MR_USAGE_* constant, or NULL for a bit librpma does not define
 */
const char *format_usage_name(unsigned bit);

/*
 * utf8_seq_len -- the length of the valid UTF-8 sequence at s (1..4), or 0
 * when the bytes there are not valid UTF-8 (overlong forms, surrogates and
 * code points past U+10FFFF are not). `avail`: bytes readable at s.
 */
size_t utf8_seq_len(const unsigned char *s, size_t avail);

/*
 * format_printable -- `in` made safe for a terminal: control characters
 * and invalid UTF-8 bytes become '?'; NULL becomes "-"
 */
const char *format_printable(const char *in, char *buf, size_t len);

/* format_width -- how many columns a printable string takes */
size_t format_width(const char *s);

#endif /* RPMACTL_FORMAT_H */
