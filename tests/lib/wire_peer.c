// SPDX-License-Identifier: BSD-3-Clause
/*
 * wire_peer.c -- speaking the software transport's wire in a test
 */

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "itest.h"
#include "wire_peer.h"

int
wire_connect_from(const char *from, const char *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	struct sockaddr_in src = { .sin_family = AF_INET };
	ck_assert_int_eq(inet_pton(AF_INET, from, &src.sin_addr), 1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
	struct sockaddr_in sin = { .sin_family = AF_INET,
			.sin_port = htons((uint16_t)atoi(port)) };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		(void) close(fd);
		return -1;
	}
	int one = 1;
	(void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int
wire_connect(const char *port)
{
	int fd = wire_connect_from("127.0.0.1", port);
	ck_assert_int_ge(fd, 0);
	return fd;
}

void
wire_send_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;	/* rpmad closed it: what follows will say so */
		p += n;
		len -= (size_t)n;
	}
}

void
wire_send_frame(int fd, const struct tcp_frame *f, const void *payload,
		size_t len)
{
	uint8_t head[TCP_FRAME_SIZE];
	tcp_frame_encode(f, head);
	wire_send_all(fd, head, sizeof(head));
	if (len)
		wire_send_all(fd, payload, len);
}

int
wire_recv_exact(int fd, void *buf, size_t len, int timeout_ms)
{
	uint8_t *p = buf;
	uint64_t end = it_now_ms() + (uint64_t)timeout_ms;
	while (len > 0) {
		uint64_t now = it_now_ms();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int r = poll(&pfd, 1, now >= end ? 0 : (int)(end - now));
		if (r == 0)
			return -1;
		if (r < 0)
			continue;
		ssize_t n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		p += n;
		len -= (size_t)n;
	}
	return 1;
}

int
wire_recv_frame(int fd, struct tcp_frame *f, void *buf, size_t cap,
		int timeout_ms)
{
	uint8_t head[TCP_FRAME_SIZE];
	int r = wire_recv_exact(fd, head, sizeof(head), timeout_ms);
	if (r <= 0)
		return r;
	ck_assert_msg(tcp_frame_decode(head, f) == 0, "rpmad sent a frame "
			"its own decoder refuses (type %u)", head[0]);
	uint32_t n = tcp_frame_payload_len(f);
	ck_assert_uint_le(n, cap);
	return n ? wire_recv_exact(fd, buf, n, timeout_ms) : 1;
}

int
wire_closed_within(int fd, int timeout_ms)
{
	uint64_t end = it_now_ms() + (uint64_t)timeout_ms;
	uint8_t junk[4096];
	for (;;) {
		uint64_t now = it_now_ms();
		if (now >= end)
			return 0;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, (int)(end - now)) <= 0)
			continue;
		ssize_t n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return 1;
	}
}

void
wire_hello_of(int fd, uint16_t version, uint8_t role, const uint8_t *token,
		const void *pdata, uint8_t pdata_len)
{
	struct tcp_hello h = { .magic = TCP_WIRE_MAGIC,
			.version = version, .role = role,
			.pdata_len = pdata_len, .qp_num = 77 };
	memcpy(h.token, token, TCP_TOKEN_SIZE);
	uint8_t buf[TCP_HELLO_SIZE + TCP_PDATA_MAX];
	memset(buf, 0, sizeof(buf));
	uint32_t size = tcp_hello_encode(&h, buf);
	if (pdata)
		memcpy(buf + size, pdata, pdata_len);
	struct tcp_frame f = { .type = TF_HELLO, .length = size + pdata_len };
	wire_send_frame(fd, &f, buf, f.length);
}

void
wire_hello(int fd, uint8_t role, const uint8_t *token, const void *pdata,
		uint8_t pdata_len)
{
	wire_hello_of(fd, TCP_WIRE_VERSION, role, token, pdata, pdata_len);
}

void
wire_token(uint8_t *token)
{
	for (int i = 0; i < TCP_TOKEN_SIZE; i++)
		token[i] = (uint8_t)random();
}
