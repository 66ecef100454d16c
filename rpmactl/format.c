// SPDX-License-Identifier: BSD-3-Clause
/*
 * format.c -- numbers, durations, usage flags and foreign text for people
 */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "format.h"

const char *
format_bytes(uint64_t v, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB",
		"PiB", "EiB" };
	if (v < 1024) {
		(void) snprintf(buf, len, "%llu B", (unsigned long long)v);
		return buf;
	}
	unsigned u = 0;
	double d = (double)v;
	while (d >= 1024 && u < sizeof(units) / sizeof(units[0]) - 1) {
		d /= 1024;
		u++;
	}
	(void) snprintf(buf, len, "%.1f %s", d, units[u]);
	return buf;
}

const char *
format_duration(uint64_t ms, char *buf, size_t len)
{
	uint64_t s = ms / 1000;
	unsigned long long d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60,
		sec = s % 60;
	if (d)
		(void) snprintf(buf, len, "%llud %02lluh", d, h);
	else if (h)
		(void) snprintf(buf, len, "%lluh %02llum", h, m);
	else if (m)
		(void) snprintf(buf, len, "%llum %02llus", m, sec);
	else
		(void) snprintf(buf, len, "%llu.%01llus", sec,
				(unsigned long long)(ms % 1000 / 100));
	return buf;
}

/* the RPMA_MR_USAGE_* bits, in bit order */
static const char *const usage_names[] = {
	"READ_SRC", "READ_DST", "WRITE_SRC", "WRITE_DST",
	"FLUSH_TYPE_VISIBILITY", "FLUSH_TYPE_PERSISTENT", "SEND", "RECV",
};

const char *
format_usage_name(unsigned bit)
{
	if (bit >= sizeof(usage_names) / sizeof(usage_names[0]))
		return NULL;
	return usage_names[bit];
}

const char *
format_usage(uint32_t usage, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned bit = 0; bit < 32; bit++) {
		if (!(usage & (1u << bit)))
			continue;
		const char *name = format_usage_name(bit);
		char unknown[16];
		if (name == NULL) {
			(void) snprintf(unknown, sizeof(unknown), "0x%x",
					1u << bit);
			name = unknown;
		}
		int n = snprintf(buf + used, len - used, "%s%s",
				used ? "|" : "", name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	if (used == 0)
		(void) snprintf(buf, len, "-");
	return buf;
}

size_t
utf8_seq_len(const unsigned char *s, size_t avail)
{
	if (avail == 0)
		return 0;
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;	/* range of the 2nd byte */
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* no overlong forms */
		else if (c == 0xed)
			hi = 0x9f;	/* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;	/* no overlong forms */
		else if (c == 0xf4)
			hi = 0x8f;	/* nothing past U+10FFFF */
	} else {
		return 0;
	}
	if (avail < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	}
	return n;
}

const char *
format_printable(const char *in, char *buf, size_t len)
{
	if (in == NULL)
		in = "-";
	const unsigned char *s = (const unsigned char *)in;
	size_t avail = strlen(in), out = 0;
	while (avail > 0 && out + 1 < len) {
		size_t n = utf8_seq_len(s, avail);
		bool bad = n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7f));
		if (bad) {
			buf[out++] = '?';
			s++;
			avail--;
			continue;
		}
		if (out + n >= len)
			break;
		memcpy(buf + out, s, n);
		out += n;
		s += n;
		avail -= n;
	}
	buf[out] = '\0';
	return buf;
}

size_t
format_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++) {
		/* count every byte but UTF-8 continuation bytes */
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	}
	return w;
}
