// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_tls.c -- TLS 1.3 with pre-shared keys on the software transport's
 * sockets (tcp.h): OpenSSL's handshake, then the kernel's TLS, or a
 * relay through OpenSSL in the loop where the kernel has none
 *
 * The kernel's TLS (kTLS: TCP_ULP "tls", TLS_TX, TLS_RX) encrypts and
 * decrypts what the receive engine and the senders move with recv and
 * writev on the socket as before. Where the kernel has no TLS, rpmad
 * relays each socket itself: the engine's end is one end of a socketpair,
 * and the loop moves its bytes through OpenSSL to the TCP socket (slower;
 * logged at start).
 *
 * It stands below the sockets' channels (tcp_chan.c) and knows nothing
 * of connections: the file that opens sockets steps a handshake and
 * says what its end means (tcp_open.c).
 */

#include <errno.h>
#include <linux/tls.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utlist.h>

#include "tcp/tcp.h"

#ifndef SOL_TLS
#define SOL_TLS 282
#endif

/* the one suite: AES-128-GCM, which every kTLS and every CPU's AES has */
#define SUITE "TLS_AES_128_GCM_SHA256"
#define SUITE_ID 0x1301
#define SECRET_MAX 48
/* one TLS record's plaintext at most: what the relay moves at a time */
#define RELAY_BUF 16384
/* records a relay moves each way per wake-up, before others get a turn */
#define RELAY_BURST 16

/* What a socket's TLS needs, from its handshake to its end. */
struct tcp_tls {
	struct tcp_chan *ch;		/* NULL once a relay is on its own */
	SSL *ssl;
	bool client;
	/* the application traffic secrets (keylog), for the kernel */
	uint8_t secret[2][SECRET_MAX];	/* [0] client's, [1] server's */
	size_t secret_len[2];
	/* server: the identity the client's key was found by */
	char identity[TCP_PSK_IDENTITY_MAX + 1];
	/* server: an identity the client named that no key has (printable) */
	char unknown[TCP_PSK_IDENTITY_MAX + 1];

	/* a relay: the TCP socket, and our end of the channel's socketpair */
	bool relay;
	int net_fd, app_fd;
	struct loop_watch net_watch, app_watch;
	uint32_t net_events, app_events;
	uint8_t in[RELAY_BUF];		/* decrypted, not yet handed to app */
	size_t in_len, in_off;
	uint8_t out[RELAY_BUF];		/* from app, not yet taken by SSL */
	size_t out_len, out_off;
	bool read_wants_write, write_wants_read;
	bool net_eof, app_eof;
	struct tcp_tls *prev, *next;	/* every relay */
};

static enum transport_tls mode = TRANSPORT_TLS_OFF;
static struct tcp_psk_table keys;
static SSL_CTX *client_ctx, *server_ctx;
static int ex_index = -1;
static bool ktls, ktls_probed;
static struct tcp_tls *relays;

enum transport_tls
tcp_tls_mode(void)
{
	return mode;
}

bool
tcp_tls_kernel(void)
{
	return ktls;
}

/* OpenSSL's reasons, oldest first, as one string */
static void
ssl_reasons(char *buf, size_t len)
{
	buf[0] = '\0';
	unsigned long e;
	size_t used = 0;
	while ((e = ERR_get_error()) != 0 && used + 2 < len) {
		char one[256];
		ERR_error_string_n(e, one, sizeof(one));
		int n = snprintf(buf + used, len - used, "%s%s",
				used ? "; " : "", one);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	if (buf[0] == '\0')
		(void) snprintf(buf, len, "no reason given");
}

/* ------------------------------------------------------ the kernel's TLS */

/*
 * HKDF-Expand-Label (RFC 8446, 7.1) of a traffic secret, SHA-256: the
 * record key and IV the kernel needs.
 */
static int
expand_label(const uint8_t *secret, size_t secret_len, const char *label,
		uint8_t *out, size_t out_len)
{
	uint8_t info[2 + 1 + 32 + 1];
	size_t llen = strlen("tls13 ") + strlen(label);
	info[0] = (uint8_t)(out_len >> 8);
	info[1] = (uint8_t)out_len;
	info[2] = (uint8_t)llen;
	memcpy(info + 3, "tls13 ", 6);
	memcpy(info + 9, label, strlen(label));
	info[3 + llen] = 0;	/* no context */
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *kctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	int hkdf_mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0),
		OSSL_PARAM_construct_octet_string("key", (void *)secret,
				secret_len),
		OSSL_PARAM_construct_octet_string("info", info, 4 + llen),
		OSSL_PARAM_construct_int("mode", &hkdf_mode),
		OSSL_PARAM_construct_end(),
	};
	int ok = kctx && EVP_KDF_derive(kctx, out, out_len, params) == 1;
	EVP_KDF_CTX_free(kctx);
	EVP_KDF_free(kdf);
	return ok ? 0 : -EIO;
}

static int
crypto_info(const uint8_t *secret, size_t len,
		struct tls12_crypto_info_aes_gcm_128 *ci)
{
	uint8_t key[TLS_CIPHER_AES_GCM_128_KEY_SIZE], iv[12];
	memset(ci, 0, sizeof(*ci));
	ci->info.version = TLS_1_3_VERSION;
	ci->info.cipher_type = TLS_CIPHER_AES_GCM_128;
	int ret = expand_label(secret, len, "key", key, sizeof(key));
	if (ret == 0)
		ret = expand_label(secret, len, "iv", iv, sizeof(iv));
	if (ret == 0) {
		memcpy(ci->key, key, sizeof(ci->key));
		/* the kernel's salt and iv are the 12-byte IV's two parts */
		memcpy(ci->salt, iv, sizeof(ci->salt));
		memcpy(ci->iv, iv + sizeof(ci->salt), sizeof(ci->iv));
		/* the first record of application data is number 0 */
	}
	explicit_bzero(key, sizeof(key));
	explicit_bzero(iv, sizeof(iv));
	return ret;
}

/* The kernel's TLS on fd, with these secrets: 0 or a negative errno. */
static int
ktls_install(int fd, const uint8_t *tx, size_t tx_len, const uint8_t *rx,
		size_t rx_len)
{
	struct tls12_crypto_info_aes_gcm_128 ci;
	int ret = 0;
	if (setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tls", sizeof("tls")))
		return -errno;
	if ((ret = crypto_info(tx, tx_len, &ci)) == 0 &&
			setsockopt(fd, SOL_TLS, TLS_TX, &ci, sizeof(ci)))
		ret = -errno;
	if (ret == 0 && (ret = crypto_info(rx, rx_len, &ci)) == 0 &&
			setsockopt(fd, SOL_TLS, TLS_RX, &ci, sizeof(ci)))
		ret = -errno;
	explicit_bzero(&ci, sizeof(ci));
	return ret;
}

/*
 * Whether the kernel takes TLS on a TCP socket (CONFIG_TLS, the tls
 * module loaded: rpmad has no right to load it), tried on a connection to
 * itself over loopback with a key of zeros.
 */
static bool
ktls_works(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int s = -1;
	bool ok = false;
	if (l >= 0 && c >= 0 &&
			bind(l, (struct sockaddr *)&a, sizeof(a)) == 0 &&
			listen(l, 1) == 0 &&
			getsockname(l, (struct sockaddr *)&a, &alen) == 0 &&
			connect(c, (struct sockaddr *)&a, sizeof(a)) == 0 &&
			(s = accept4(l, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		uint8_t zero[32] = { 0 };
		ok = ktls_install(c, zero, sizeof(zero), zero,
				sizeof(zero)) == 0;
	}
	if (s >= 0)
		(void) close(s);
	if (c >= 0)
		(void) close(c);
	if (l >= 0)
		(void) close(l);
	return ok;
}

/* ------------------------------------------------------------ contexts */

/*
 * OpenSSL names the traffic secrets in key-log lines; rpmad keeps the
 * two of application data for the kernel, and never logs them.
 */
static void
keylog(const SSL *ssl, const char *line)
{
	struct tcp_tls *t = SSL_get_ex_data(ssl, ex_index);
	if (t == NULL)
		return;
	int which;
	if (strncmp(line, "CLIENT_TRAFFIC_SECRET_0 ", 24) == 0)
		which = 0;
	else if (strncmp(line, "SERVER_TRAFFIC_SECRET_0 ", 24) == 0)
		which = 1;
	else
		return;
	const char *hex = strrchr(line, ' ');
	size_t n = 0;
	for (hex++; hex[0] && hex[1] && n < SECRET_MAX; hex += 2) {
		unsigned v;
		if (sscanf(hex, "%2x", &v) != 1)
			break;
		t->secret[which][n++] = (uint8_t)v;
	}
	t->secret_len[which] = n;
}

/* A session holding a pre-shared key, as TLS 1.3 uses one. */
static SSL_SESSION *
psk_session(SSL *ssl, const struct tcp_psk *k)
{
	const unsigned char id[2] = { SUITE_ID >> 8, SUITE_ID & 0xff };
	const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, id);
	SSL_SESSION *sess = cipher ? SSL_SESSION_new() : NULL;
	if (sess == NULL)
		return NULL;
	if (!SSL_SESSION_set1_master_key(sess, k->key, k->key_len) ||
			!SSL_SESSION_set_cipher(sess, cipher) ||
			!SSL_SESSION_set_protocol_version(sess,
				TLS1_3_VERSION)) {
		SSL_SESSION_free(sess);
		return NULL;
	}
	return sess;
}

/* client: this rpmad's own key, the file's first */
static int
use_psk(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
		SSL_SESSION **sess)
{
	(void) md;
	*sess = NULL;
	if (keys.n == 0)
		return 0;
	*sess = psk_session(ssl, &keys.keys[0]);
	*id = (const unsigned char *)keys.keys[0].identity;
	*idlen = strlen(keys.keys[0].identity);
	return *sess != NULL;
}

/* server: the key of the identity the client names, if it is known */
static int
find_psk(SSL *ssl, const unsigned char *id, size_t idlen, SSL_SESSION **sess)
{
	*sess = NULL;
	const struct tcp_psk *k = tcp_psk_find(&keys, id, idlen);
	struct tcp_tls *t = SSL_get_ex_data(ssl, ex_index);
	if (t && k == NULL) {
		/* for the log line: what the peer said, made printable */
		size_t n = idlen < TCP_PSK_IDENTITY_MAX ? idlen :
			TCP_PSK_IDENTITY_MAX;
		for (size_t i = 0; i < n; i++)
			t->unknown[i] = id[i] >= 0x20 && id[i] < 0x7f ?
				(char)id[i] : '?';
		t->unknown[n] = '\0';
	}
	if (k == NULL || t == NULL)
		return 1;	/* unknown: no key, the handshake fails */
	*sess = psk_session(ssl, k);
	if (*sess == NULL)
		return 0;
	(void) snprintf(t->identity, sizeof(t->identity), "%s", k->identity);
	return 1;
}

static SSL_CTX *
make_ctx(bool client, char *err, size_t len)
{
	SSL_CTX *ctx = SSL_CTX_new(client ? TLS_client_method() :
			TLS_server_method());
	if (ctx == NULL ||
			!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
			!SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) ||
			!SSL_CTX_set_ciphersuites(ctx, SUITE) ||
			!SSL_CTX_set_num_tickets(ctx, 0)) {
		char why[256];
		ssl_reasons(why, sizeof(why));
		(void) snprintf(err, len, "cannot make a TLS context: %s",
				why);
		SSL_CTX_free(ctx);
		return NULL;
	}
	/*
	 * No tickets: nothing may follow the handshake on the socket that the
	 * kernel would have to decrypt with the wrong record number. No
	 * read-ahead (OpenSSL's default): the handshake reads no byte beyond
	 * its own, so the first record of data is the kernel's to read.
	 */
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
	SSL_CTX_set_read_ahead(ctx, 0);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
			SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_keylog_callback(ctx, keylog);
	if (client)
		SSL_CTX_set_psk_use_session_callback(ctx, use_psk);
	else
		SSL_CTX_set_psk_find_session_callback(ctx, find_psk);
	return ctx;
}

int
tcp_tls_setup(const struct transport_settings *set, char *err, size_t len)
{
	if (set->tls == TRANSPORT_TLS_OFF) {
		tcp_psk_free(&keys);
		mode = TRANSPORT_TLS_OFF;
		return 0;
	}
	if (ex_index < 0)
		ex_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
	struct tcp_psk_table next;
	int ret = tcp_psk_load(set->tls_psk_file, &next, err, len);
	if (ret)
		return ret;
	SSL_CTX *c = make_ctx(true, err, len);
	SSL_CTX *s = c ? make_ctx(false, err, len) : NULL;
	if (s == NULL) {
		SSL_CTX_free(c);
		tcp_psk_free(&next);
		return -EIO;
	}
	/* handshakes under way keep the old contexts (OpenSSL counts) */
	SSL_CTX_free(client_ctx);
	SSL_CTX_free(server_ctx);
	client_ctx = c;
	server_ctx = s;
	tcp_psk_free(&keys);
	keys = next;
	mode = set->tls;
	if (!ktls_probed) {
		ktls_probed = true;
		ktls = ktls_works();
		if (ktls)
			log_notice("tls: the kernel encrypts (kTLS)");
		else
			log_notice("tls: the kernel has no TLS (CONFIG_TLS, "
					"modprobe tls): rpmad encrypts in its "
					"loop, which costs more");
	}
	log_info("tls = %s, %zu key(s), this rpmad's identity '%s'",
			set->tls_name, keys.n, keys.keys[0].identity);
	return 0;
}

/* ------------------------------------------------------------- relays */

static void relay_free(struct tcp_tls *t, bool abort);

static void
relay_set_events(struct tcp_tls *t)
{
	uint32_t net = EPOLLRDHUP, app = EPOLLRDHUP;
	if (!t->net_eof && t->in_len == 0)
		net |= EPOLLIN;
	if (t->read_wants_write || t->out_len)
		net |= EPOLLOUT;
	if (t->write_wants_read)
		net |= EPOLLIN;
	if (!t->app_eof && t->out_len == 0)
		app |= EPOLLIN;
	if (t->in_len)
		app |= EPOLLOUT;
	if (net != t->net_events &&
			loop_mod(tcp_env->loop, &t->net_watch, net) == 0)
		t->net_events = net;
	if (t->app_fd >= 0 && app != t->app_events &&
			loop_mod(tcp_env->loop, &t->app_watch, app) == 0)
		t->app_events = app;
}

/* Decrypted bytes to the receive engine's end; false when it is gone. */
static bool
relay_to_app(struct tcp_tls *t)
{
	while (t->in_off < t->in_len) {
		ssize_t n = send(t->app_fd, t->in + t->in_off,
				t->in_len - t->in_off, MSG_DONTWAIT |
				MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n < 0)
			return false;	/* the channel closed its end */
		t->in_off += (size_t)n;
	}
	t->in_len = t->in_off = 0;
	return true;
}

/*
 * Moves what it can each way, RELAY_BURST records at most. Returns false
 * when the relay is over (freed).
 */
static bool
relay_pump(struct tcp_tls *t)
{
	for (int i = 0; i < RELAY_BURST; i++) {
		bool moved = false;
		/* the network's records, decrypted, to the engine */
		if (t->in_len && !relay_to_app(t))
			t->app_eof = true;
		if (!t->net_eof && t->in_len == 0 && !t->write_wants_read) {
			int n = SSL_read(t->ssl, t->in, sizeof(t->in));
			t->read_wants_write = false;
			if (n > 0) {
				t->in_len = (size_t)n;
				moved = true;
				if (!t->app_eof && !relay_to_app(t))
					t->app_eof = true;
				if (t->app_eof)
					t->in_len = t->in_off = 0;
			} else {
				int e = SSL_get_error(t->ssl, n);
				if (e == SSL_ERROR_WANT_WRITE) {
					t->read_wants_write = true;
				} else if (e != SSL_ERROR_WANT_READ) {
					/* the peer ended, or broke TLS */
					t->net_eof = true;
					ERR_clear_error();
					if (t->app_fd >= 0)
						(void) shutdown(t->app_fd,
								SHUT_WR);
				}
			}
		}
		/* the engine's bytes, encrypted, to the network */
		if (t->out_len == 0 && !t->app_eof) {
			ssize_t n = recv(t->app_fd, t->out, sizeof(t->out),
					MSG_DONTWAIT);
			if (n > 0) {
				t->out_len = (size_t)n;
				t->out_off = 0;
			} else if (n == 0 || (errno != EAGAIN &&
					errno != EWOULDBLOCK &&
					errno != EINTR)) {
				t->app_eof = true;
			}
		}
		if (t->out_len && !t->read_wants_write) {
			int n = SSL_write(t->ssl, t->out + t->out_off,
					(int)(t->out_len - t->out_off));
			t->write_wants_read = false;
			if (n > 0) {
				t->out_off += (size_t)n;
				if (t->out_off == t->out_len)
					t->out_len = t->out_off = 0;
				moved = true;
			} else {
				int e = SSL_get_error(t->ssl, n);
				if (e == SSL_ERROR_WANT_READ) {
					t->write_wants_read = true;
				} else if (e != SSL_ERROR_WANT_WRITE) {
					ERR_clear_error();
					relay_free(t, true);
					return false;
				}
			}
		}
		/* both ends done: the engine's last bytes are out */
		if (t->app_eof && t->out_len == 0) {
			relay_free(t, false);
			return false;
		}
		if (t->net_eof && t->app_eof) {
			relay_free(t, false);
			return false;
		}
		if (!moved)
			break;
	}
	relay_set_events(t);
	return true;
}

static void
relay_event(struct loop_watch *w, uint32_t events)
{
	(void) events;
	(void) relay_pump(w->arg);
}

static void
relay_free(struct tcp_tls *t, bool abort)
{
	if (t->ch)
		t->ch->tls = NULL;
	loop_del(tcp_env->loop, &t->net_watch);
	if (t->app_fd >= 0) {
		loop_del(tcp_env->loop, &t->app_watch);
		(void) close(t->app_fd);
	}
	if (abort) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };
		(void) setsockopt(t->net_fd, SOL_SOCKET, SO_LINGER, &lg,
				sizeof(lg));
	}
	(void) close(t->net_fd);
	SSL_free(t->ssl);
	DL_DELETE(relays, t);
	explicit_bzero(t, sizeof(*t));
	free(t);
}

/*
 * The channel's socket becomes one end of a socketpair; the relay keeps
 * the TCP socket and moves the bytes between them through OpenSSL.
 */
static int
relay_start(struct tcp_chan *ch, struct tcp_tls *t)
{
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
			sp))
		return -errno;
	loop_del(tcp_env->loop, &ch->watch);
	t->relay = true;
	t->net_fd = ch->fd;
	t->app_fd = sp[1];
	ch->fd = sp[0];
	ch->watch.fd = sp[0];
	ch->events = 0;
	t->net_watch = (struct loop_watch){ .fd = t->net_fd,
		.fn = relay_event, .arg = t };
	t->app_watch = (struct loop_watch){ .fd = t->app_fd,
		.fn = relay_event, .arg = t };
	t->net_events = EPOLLIN | EPOLLRDHUP;
	t->app_events = EPOLLIN | EPOLLRDHUP;
	if (loop_add(tcp_env->loop, &t->net_watch, t->net_events) ||
			loop_add(tcp_env->loop, &t->app_watch, t->app_events)) {
		loop_del(tcp_env->loop, &t->net_watch);
		ch->fd = t->net_fd;
		ch->watch.fd = t->net_fd;
		(void) close(sp[0]);
		(void) close(sp[1]);
		t->relay = false;
		return -EIO;
	}
	DL_APPEND(relays, t);
	return 0;
}

bool
tcp_tls_pending(void)
{
	for (struct tcp_tls *t = relays; t; t = t->next) {
		int queued = 0;
		if (t->in_len || t->out_len || (t->app_fd >= 0 &&
				ioctl(t->app_fd, FIONREAD, &queued) == 0 &&
				queued > 0))
			return true;
	}
	return false;
}

void
tcp_tls_move(struct tcp_chan *ch)
{
	if (ch->tls)
		ch->tls->ch = ch;
}

int
tcp_tls_net_fd(const struct tcp_chan *ch)
{
	return ch->tls && ch->tls->relay ? ch->tls->net_fd : ch->fd;
}

void
tcp_tls_chan_close(struct tcp_chan *ch, bool abort)
{
	struct tcp_tls *t = ch->tls;
	if (t == NULL)
		return;
	ch->tls = NULL;
	t->ch = NULL;
	if (!t->relay) {
		/* a handshake under way: the channel closes the socket */
		SSL_free(t->ssl);
		explicit_bzero(t, sizeof(*t));
		free(t);
		return;
	}
	if (abort) {
		relay_free(t, true);
		return;
	}
	/*
	 * the engine's end closes now (after this): what it wrote still goes
	 * out, then the relay reads its end and closes the TCP socket
	 */
}

void
tcp_tls_fini(void)
{
	while (relays)
		relay_free(relays, false);
	SSL_CTX_free(client_ctx);
	SSL_CTX_free(server_ctx);
	client_ctx = server_ctx = NULL;
	tcp_psk_free(&keys);
	mode = TRANSPORT_TLS_OFF;
}

/* ---------------------------------------------------------- handshakes */

/*
 * The handshake is over: the kernel's TLS on the socket, or a relay (the
 * OpenSSL session then stays for it: tcp_tls_end). 0, or a negative errno
 * with the reason in why.
 */
static int
secure(struct tcp_chan *ch, struct tcp_tls *t, char *why, size_t len)
{
	const SSL_CIPHER *c = SSL_get_current_cipher(t->ssl);
	if (SSL_version(t->ssl) != TLS1_3_VERSION || c == NULL ||
			(SSL_CIPHER_get_id(c) & 0xffff) != SUITE_ID) {
		(void) snprintf(why, len, "not TLS 1.3 with %s", SUITE);
		return -EPROTO;
	}
	/* a pre-shared key authenticated both: no other way was offered */
	if (!SSL_session_reused(t->ssl) || (!t->client &&
			t->identity[0] == '\0')) {
		(void) snprintf(why, len, "no pre-shared key was used");
		return -EACCES;
	}
	if (SSL_has_pending(t->ssl)) {
		(void) snprintf(why, len, "data came with the handshake");
		return -EPROTO;
	}
	if (ktls) {
		int mine = t->client ? 0 : 1;
		if (t->secret_len[0] == 0 || t->secret_len[1] == 0) {
			(void) snprintf(why, len, "no traffic secrets");
			return -EIO;
		}
		int ret = ktls_install(ch->fd, t->secret[mine],
				t->secret_len[mine], t->secret[!mine],
				t->secret_len[!mine]);
		if (ret)
			(void) snprintf(why, len, "the kernel's TLS: %s",
					strerror(-ret));
		return ret;
	}
	int ret = relay_start(ch, t);
	if (ret)
		(void) snprintf(why, len, "cannot relay: %s", strerror(-ret));
	return ret;
}

int
tcp_tls_start(struct tcp_chan *ch, bool client)
{
	SSL_CTX *ctx = client ? client_ctx : server_ctx;
	struct tcp_tls *t = calloc(1, sizeof(*t));
	SSL *ssl = t && ctx ? SSL_new(ctx) : NULL;
	if (ssl == NULL || !SSL_set_fd(ssl, ch->fd) ||
			!SSL_set_ex_data(ssl, ex_index, t)) {
		SSL_free(ssl);
		free(t);
		ERR_clear_error();
		return -ENOMEM;
	}
	t->ch = ch;
	t->ssl = ssl;
	t->client = client;
	t->net_fd = t->app_fd = -1;
	ch->tls = t;
	if (client)
		SSL_set_connect_state(ssl);
	else
		SSL_set_accept_state(ssl);
	return 0;
}

int
tcp_tls_handshake(struct tcp_chan *ch, uint32_t *wait, char *why, size_t len)
{
	struct tcp_tls *t = ch->tls;
	int r = SSL_do_handshake(t->ssl);
	if (r == 1)
		return secure(ch, t, why, len);
	int e = SSL_get_error(t->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		*wait = EPOLLRDHUP |
				(e == SSL_ERROR_WANT_READ ? EPOLLIN : EPOLLOUT);
		return 1;
	}
	if (!t->client && t->unknown[0]) {
		ERR_clear_error();
		(void) snprintf(why, len,
				"no key of identity '%s' in tls_psk_file",
				t->unknown);
	} else if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)
		(void) snprintf(why, len, "the other end %s",
				errno ? strerror(errno) : "closed the socket");
	else
		ssl_reasons(why, len);
	return -EPROTO;
}

const char *
tcp_tls_identity(const struct tcp_chan *ch)
{
	return ch->tls->client ? keys.keys[0].identity : ch->tls->identity;
}

void
tcp_tls_end(struct tcp_chan *ch, bool ok)
{
	struct tcp_tls *t = ch->tls;
	explicit_bzero(t->secret, sizeof(t->secret));
	if (!ok || !t->relay) {
		/* nothing more of OpenSSL: the kernel has the keys */
		ch->tls = NULL;
		SSL_free(t->ssl);
		explicit_bzero(t, sizeof(*t));
		free(t);
	}
}
