/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_psk.h -- the pre-shared keys of the software transport's TLS
 * (rpmad.conf's tls_psk_file): one line per key, IDENTITY:HEXKEY, as
 * NVMe/TCP's retained keys are; '#' starts a comment. The first key is
 * the one this rpmad presents when it connects; every key is one it
 * accepts from a connecting rpmad.
 */

#ifndef RPMAD_TCP_PSK_H
#define RPMAD_TCP_PSK_H

#include <stddef.h>
#include <stdint.h>

#define TCP_PSK_IDENTITY_MAX 128
#define TCP_PSK_KEY_MIN 16	/* bytes: 128 bits */
#define TCP_PSK_KEY_MAX 64

struct tcp_psk {
	char identity[TCP_PSK_IDENTITY_MAX + 1];
	uint8_t key[TCP_PSK_KEY_MAX];
	size_t key_len;
};

struct tcp_psk_table {
	struct tcp_psk *keys;
	size_t n;
};

/*
 * tcp_psk_parse_line -- one line: 0 with the key in *out, 1 when it holds
 * none (blank, a comment), or -EINVAL with the reason in why
 */
int tcp_psk_parse_line(const char *line, struct tcp_psk *out, char *why,
		size_t len);

/*
 * tcp_psk_load -- the keys of the file at path, which must be a regular
 * file of root's (or of the user rpmad runs as) that nobody else may read
 * or write, with at least one key and no identity twice. 0, or a negative
 * errno with the reason (naming file and line) in err; t is untouched
 * then.
 */
int tcp_psk_load(const char *path, struct tcp_psk_table *t, char *err,
		size_t len);

/* tcp_psk_find -- the key of an identity (as sent: not NUL-terminated) */
const struct tcp_psk *tcp_psk_find(const struct tcp_psk_table *t,
		const uint8_t *identity, size_t len);

/* tcp_psk_free -- forget the keys (their bytes are wiped) */
void tcp_psk_free(struct tcp_psk_table *t);

#endif /* RPMAD_TCP_PSK_H */
