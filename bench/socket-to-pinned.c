// SPDX-License-Identifier: BSD-3-Clause
/*
 * socket-to-pinned.c -- a model of the one faithful way left to write a
 * process's private memory faster than its landing thread: payloads read
 * from the TCP socket straight into pages pinned through io_uring, as a
 * NIC writes pinned pages (docs/internals.md, "What was measured, and what
 * was chosen").
 *
 * A sender process streams frames of a 64 B header and a 4 KiB payload
 * over loopback, 16 at a time with their headers first (so that the
 * receiver knows where each payload goes before reading it), and waits for
 * an acknowledgement of each batch once it is in place, two batches ahead.
 * The receiver puts each payload at its header's offset in a 100 MiB area:
 *
 *   mapped  a recv of up to 256 KiB and a memcpy of each payload into a
 *           shared mapping (how rpmad writes memory it maps: /dev/shm, a
 *           file, or every registration in 236b7c5's design)
 *   pinned  a recv of the headers and a linked READ_FIXED of each payload
 *           into private memory registered with io_uring (pinned)
 *
 * Each round runs both, and prints the receiver's CPU time a frame (user
 * and system, every thread of it) and their ratio; then the medians. The
 * area is checked afterwards: each 4 KiB slot must hold the last frame
 * sent to it.
 *
 *   bench/socket-to-pinned [--frames N] [--rounds R]
 */

#include <errno.h>
#include <getopt.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAYLOAD 4096u
#define AREA_SIZE (100u << 20)
#define SLOTS (AREA_SIZE / PAYLOAD)
#define BATCH 16
#define WINDOW 2 /* batches the sender keeps in flight */
#define RX_BUF (256u << 10)
#define MAX_ROUNDS 99

struct frame_hdr {
	uint64_t off;
	uint32_t len;
	uint32_t seq;
	uint8_t pad[48];
};

_Static_assert(sizeof(struct frame_hdr) == 64, "a 64 B header");

#define FRAME (sizeof(struct frame_hdr) + PAYLOAD)
#define BATCH_BYTES ((size_t) BATCH * FRAME)

enum mode {
	MAPPED,
	PINNED
};
static const char *const mode_name[] = { "mapped", "pinned" };

static double
cpu_seconds(void)
{
	struct rusage r;
	(void) getrusage(RUSAGE_SELF, &r);
	return (double) (r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
			(double) (r.ru_utime.tv_usec + r.ru_stime.tv_usec) /
			1e6;
}

static int
write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t) w;
	}
	return 0;
}

/* the payload of frame seq: its byte, so the check can tell frames apart */
static uint8_t
payload_byte(uint32_t seq)
{
	return (uint8_t) (seq * 7 + 1);
}

/* the child: frames to fd, WINDOW batches ahead of the acknowledgements */
static int
send_frames(int fd, long frames)
{
	static struct frame_hdr hdr[BATCH];
	static uint8_t payload[BATCH][PAYLOAD];
	long sent = 0, acked = 0;

	while (acked < frames) {
		while (sent < frames && sent - acked < WINDOW * BATCH) {
			struct iovec iov[BATCH + 1];
			iov[0] = (struct iovec){ hdr, sizeof(hdr) };
			for (int i = 0; i < BATCH; i++) {
				uint32_t seq = (uint32_t) (sent + i);
				hdr[i] = (struct frame_hdr){
					.off = (uint64_t) (seq % SLOTS) *
							PAYLOAD,
					.len = PAYLOAD,
					.seq = seq
				};
				memset(payload[i], payload_byte(seq), PAYLOAD);
				iov[i + 1] = (struct iovec){ payload[i],
					PAYLOAD };
			}
			/* a blocking socket takes a whole batch or fails */
			if (writev(fd, iov, BATCH + 1) != (ssize_t) BATCH_BYTES)
				return -1;
			sent += BATCH;
		}
		uint64_t ack;
		if (read(fd, &ack, sizeof(ack)) != (ssize_t) sizeof(ack))
			return -1;
		acked += BATCH;
	}
	return 0;
}

static bool
frame_fits(const struct frame_hdr *h)
{
	return h->len <= PAYLOAD && h->off <= AREA_SIZE - h->len;
}

static int
ack(int fd, long got)
{
	uint64_t a = (uint64_t) got;
	return write_all(fd, &a, sizeof(a));
}

static int
receive_mapped(int fd, long frames, uint8_t *area)
{
	uint8_t *buf = malloc(RX_BUF);
	size_t have = 0;
	long got = 0;
	int ret = -1;

	if (buf == NULL)
		return -1;
	while (got < frames) {
		ssize_t r = recv(fd, buf + have, RX_BUF - have, 0);
		if (r <= 0)
			goto out;
		have += (size_t) r;
		size_t at = 0;
		for (; have - at >= BATCH_BYTES; at += BATCH_BYTES) {
			struct frame_hdr hdr[BATCH];
			memcpy(hdr, buf + at, sizeof(hdr));
			const uint8_t *payload = buf + at + sizeof(hdr);
			for (int i = 0; i < BATCH; i++) {
				if (!frame_fits(&hdr[i]))
					goto out;
				memcpy(area + hdr[i].off,
						payload + (size_t) i * PAYLOAD,
						hdr[i].len);
			}
			got += BATCH;
			if (ack(fd, got))
				goto out;
		}
		memmove(buf, buf + at, have - at);
		have -= at;
	}
	ret = 0;
out:
	free(buf);
	return ret;
}

/*
 * reads one batch's payloads in order: READ_FIXED on a socket may come
 * back short, which cancels the rest of the chain; those go again
 */
static int
read_batch_pinned(struct io_uring *ring, int fd, uint8_t *dst[], unsigned len[])
{
	int first = 0;
	while (first < BATCH) {
		for (int i = first; i < BATCH; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
			io_uring_prep_read_fixed(sqe, fd, dst[i], len[i], -1,
					0);
			sqe->user_data = (uint64_t) i;
			if (i + 1 < BATCH)
				sqe->flags |= IOSQE_IO_LINK;
		}
		int n = BATCH - first, next = BATCH;
		if (io_uring_submit_and_wait(ring, (unsigned) n) < 0)
			return -1;
		for (int k = 0; k < n; k++) {
			struct io_uring_cqe *cqe;
			if (io_uring_wait_cqe(ring, &cqe))
				return -1;
			int i = (int) cqe->user_data, res = cqe->res;
			io_uring_cqe_seen(ring, cqe);
			if (res == 0 || (res < 0 && res != -ECANCELED))
				return -1; /* the sender went, or an error */
			if (res == -ECANCELED || (unsigned) res < len[i]) {
				if (res > 0) {
					dst[i] += res;
					len[i] -= (unsigned) res;
				}
				if (i < next)
					next = i;
			}
		}
		first = next;
	}
	return 0;
}

static int
receive_pinned(struct io_uring *ring, int fd, long frames, uint8_t *area)
{
	long got = 0;
	while (got < frames) {
		struct frame_hdr hdr[BATCH];
		uint8_t *dst[BATCH];
		unsigned len[BATCH];
		if (recv(fd, hdr, sizeof(hdr), MSG_WAITALL) !=
				(ssize_t) sizeof(hdr))
			return -1;
		for (int i = 0; i < BATCH; i++) {
			if (!frame_fits(&hdr[i]))
				return -1;
			dst[i] = area + hdr[i].off;
			len[i] = hdr[i].len;
		}
		if (read_batch_pinned(ring, fd, dst, len))
			return -1;
		got += BATCH;
		if (ack(fd, got))
			return -1;
	}
	return 0;
}

/* every slot holds the last frame sent to it (all of them if it wrapped) */
static bool
area_checks(const uint8_t *area, long frames)
{
	long slots = frames < (long) SLOTS ? frames : (long) SLOTS;
	for (long s = 0; s < slots; s++) {
		long last = s + (frames - 1 - s) / SLOTS * SLOTS;
		uint8_t want = payload_byte((uint32_t) last);
		const uint8_t *p = area + (size_t) s * PAYLOAD;
		if (p[0] != want || p[PAYLOAD - 1] != want) {
			fprintf(stderr,
					"socket-to-pinned: slot %ld holds %u, "
					"frame %ld sent %u\n",
					s, p[0], last, want);
			return false;
		}
	}
	return true;
}

/* a connected pair over loopback: *rx for this process, *tx for the sender */
static int
connect_loopback(int *rx, int *tx)
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	int one = 1, ret = -1;
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	*rx = *tx = -1;
	if (lfd < 0)
		return -1;
	if (bind(lfd, (struct sockaddr *) &addr, len) || listen(lfd, 1) ||
			getsockname(lfd, (struct sockaddr *) &addr, &len))
		goto out;
	/* the backlog completes the connection: nobody waits for anybody */
	*tx = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*tx < 0 || connect(*tx, (struct sockaddr *) &addr, len))
		goto out;
	if ((*rx = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
		goto out;
	(void) setsockopt(*rx, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void) setsockopt(*tx, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ret = 0;
out:
	if (ret && *tx >= 0) {
		close(*tx);
		*tx = -1;
	}
	close(lfd);
	return ret;
}

/*
 * one mode's run: the receiver's CPU us a frame, or < 0. The sender is
 * forked before the area exists (a private area would be shared
 * copy-on-write with it), and the area is in place and registered before
 * the clock starts.
 */
static double
run_mode(enum mode mode, long frames)
{
	double us = -1;
	int rx, tx, status = 0;
	bool ring_up = false;
	struct io_uring ring;
	uint8_t *area = MAP_FAILED;

	if (connect_loopback(&rx, &tx))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(rx);
		_exit(send_frames(tx, frames) ? 1 : 0);
	}
	close(tx);
	if (pid < 0)
		goto out;

	if (mode == MAPPED) {
		int mfd = memfd_create("socket-to-pinned", MFD_CLOEXEC);
		if (mfd >= 0 && ftruncate(mfd, AREA_SIZE) == 0)
			area = mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE,
					MAP_SHARED, mfd, 0);
		if (mfd >= 0)
			close(mfd);
	} else {
		area = mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (area == MAP_FAILED)
		goto out;
	memset(area, 0, AREA_SIZE); /* both start with every page in */
	if (mode == PINNED) {
		if (io_uring_queue_init(2 * BATCH, &ring, 0))
			goto out;
		ring_up = true;
		struct iovec reg = { area, AREA_SIZE };
		int e = io_uring_register_buffers(&ring, &reg, 1);
		if (e) {
			fprintf(stderr,
					"socket-to-pinned: registering the "
					"area: %s (RLIMIT_MEMLOCK?)\n",
					strerror(-e));
			goto out;
		}
	}

	double cpu0 = cpu_seconds();
	int r = mode == MAPPED ? receive_mapped(rx, frames, area) :
				 receive_pinned(&ring, rx, frames, area);
	double cpu1 = cpu_seconds();
	close(rx);
	rx = -1;
	if (waitpid(pid, &status, 0) == pid)
		pid = -1;
	if (r || pid > 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "socket-to-pinned: %s run failed\n",
				mode_name[mode]);
		goto out;
	}
	if (area_checks(area, frames))
		us = (cpu1 - cpu0) / (double) frames * 1e6;
out:
	if (rx >= 0)
		close(rx);
	if (pid > 0) {
		(void) kill(pid, SIGKILL);
		(void) waitpid(pid, NULL, 0);
	}
	if (ring_up)
		io_uring_queue_exit(&ring);
	if (area != MAP_FAILED)
		munmap(area, AREA_SIZE);
	return us;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t) n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "frames", required_argument, NULL, 'f' },
		{ "rounds", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	long frames = 300000;
	int rounds = 3, c;
	while ((c = getopt_long(argc, argv, "f:r:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			frames = strtol(optarg, NULL, 10);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		default:
			fprintf(stderr,
					"usage: %s [--frames N] "
					"[--rounds R]\n",
					argv[0]);
			return 2;
		}
	}
	if (frames < BATCH || frames % BATCH || rounds < 1 ||
			rounds > MAX_ROUNDS) {
		fprintf(stderr,
				"socket-to-pinned: --frames a multiple of "
				"%d, --rounds 1-%d\n",
				BATCH, MAX_ROUNDS);
		return 2;
	}

	double us[2][MAX_ROUNDS], ratio[MAX_ROUNDS];
	for (int i = 0; i < rounds; i++) {
		for (int m = MAPPED; m <= PINNED; m++)
			if ((us[m][i] = run_mode((enum mode) m, frames)) < 0)
				return 1;
		ratio[i] = us[PINNED][i] / us[MAPPED][i];
		printf("round %d: mapped %.2f us, pinned %.2f us of the "
		       "receiver's CPU a frame: %.2fx\n",
				i + 1, us[MAPPED][i], us[PINNED][i], ratio[i]);
	}
	printf("median: mapped %.2f us, pinned %.2f us, per round %.2fx\n",
			median(us[MAPPED], rounds), median(us[PINNED], rounds),
			median(ratio, rounds));
	return 0;
}
