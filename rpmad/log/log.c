// SPDX-License-Identifier: BSD-3-Clause
/*
 * log.c -- rpmad's log lines. Under systemd (stderr is the journal stream
 * that JOURNAL_STREAM names) each line goes to the journal with
 * sd_journal_send and fields saying which client and connection it is
 * about, so that `journalctl -u rpmad RPMAD_CLIENT_UID=1000` selects them;
 * should the journal refuse a line, it goes to stderr with the "<N>"
 * priority prefix journald parses. Otherwise each line starts with a
 * timestamp and the level's name.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SD_JOURNAL_SUPPRESS_LOCATION	/* log.c:NN would say nothing */
#include <systemd/sd-journal.h>

#include "log/log.h"

int log_max_level = LOG_NOTICE;
static bool journal;

/* what the lines logged now are about (rpmad has one thread) */
struct subject {
	bool client;
	int pid;
	unsigned uid;
	char comm[32];
	bool conn;
	uint32_t qp_num;
	char local[80], remote[80];
};
static struct subject subject;

/* subjects kept by log_subject_push; deeper pushes keep nothing */
#define SUBJECT_DEPTH 4
static struct subject saved[SUBJECT_DEPTH];
static unsigned depth;

static const char *const names[] = {
	[LOG_EMERG] = "emerg", [LOG_ALERT] = "alert", [LOG_CRIT] = "crit",
	[LOG_ERR] = "err", [LOG_WARNING] = "warning",
	[LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

int
log_level_parse(const char *name)
{
	for (int i = LOG_ERR; i <= LOG_DEBUG; i++) {
		if (strcmp(name, names[i]) == 0)
			return i;
	}
	if (strcmp(name, "error") == 0)
		return LOG_ERR;
	return -EINVAL;
}

const char *
log_level_name(int level)
{
	if (level < LOG_EMERG || level > LOG_DEBUG)
		return "?";
	return names[level];
}

/*
 * systemd sets JOURNAL_STREAM to "DEVICE:INODE" of the stream it connected
 * to stderr; a stderr redirected elsewhere since (a shell in a unit, say)
 * no longer matches, and then the journal is not where the lines go.
 */
static bool
stderr_is_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	if (env == NULL || sscanf(env, "%llu:%llu", &dev, &ino) != 2 ||
			fstat(STDERR_FILENO, &st))
		return false;
	return (unsigned long long)st.st_dev == dev &&
		(unsigned long long)st.st_ino == ino;
}

void
log_init(void)
{
	journal = stderr_is_journal();
}

void
log_subject_client(int pid, unsigned uid, const char *comm)
{
	subject.client = true;
	subject.pid = pid;
	subject.uid = uid;
	(void) snprintf(subject.comm, sizeof(subject.comm), "%s",
			comm ? comm : "");
}

void
log_subject_conn(uint32_t qp_num, const char *local, const char *remote)
{
	subject.conn = true;
	subject.qp_num = qp_num;
	(void) snprintf(subject.local, sizeof(subject.local), "%s",
			local ? local : "");
	(void) snprintf(subject.remote, sizeof(subject.remote), "%s",
			remote ? remote : "");
}

void
log_subject_clear(void)
{
	memset(&subject, 0, sizeof(subject));
}

void
log_subject_push(void)
{
	if (depth < SUBJECT_DEPTH)
		saved[depth] = subject;
	depth++;
	log_subject_clear();
}

void
log_subject_pop(void)
{
	if (depth == 0)
		return;
	depth--;
	if (depth < SUBJECT_DEPTH)
		subject = saved[depth];
	else
		log_subject_clear();
}

#define MAX_FIELDS 12

/* One "NAME=value" field; false when they do not fit (never here). */
static bool
field(struct iovec *iov, size_t *n, char *buf, size_t len, const char *fmt,
		...)
{
	if (*n >= MAX_FIELDS)
		return false;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (w < 0)
		return false;
	iov[*n].iov_base = buf;
	iov[*n].iov_len = (size_t)w < len ? (size_t)w : len - 1;
	(*n)++;
	return true;
}

static int
journal_send(int level, const char *text)
{
	struct iovec iov[MAX_FIELDS];
	char msg[1100], prio[16], pid[32], uid[32], comm[64], qp[32];
	char local[112], remote[112];
	size_t n = 0;
	(void) field(iov, &n, msg, sizeof(msg), "MESSAGE=%s", text);
	(void) field(iov, &n, prio, sizeof(prio), "PRIORITY=%d", level);
	iov[n].iov_base = (char *)"SYSLOG_IDENTIFIER=rpmad";
	iov[n++].iov_len = strlen("SYSLOG_IDENTIFIER=rpmad");
	if (subject.client) {
		(void) field(iov, &n, pid, sizeof(pid), "RPMAD_CLIENT_PID=%d",
				subject.pid);
		(void) field(iov, &n, uid, sizeof(uid), "RPMAD_CLIENT_UID=%u",
				subject.uid);
		if (subject.comm[0])
			(void) field(iov, &n, comm, sizeof(comm),
					"RPMAD_CLIENT_COMM=%s", subject.comm);
	}
	if (subject.conn) {
		(void) field(iov, &n, qp, sizeof(qp), "RPMAD_CONN=%" PRIu32,
				subject.qp_num);
		if (subject.local[0])
			(void) field(iov, &n, local, sizeof(local),
					"RPMAD_LOCAL_ADDRESS=%s",
					subject.local);
		if (subject.remote[0])
			(void) field(iov, &n, remote, sizeof(remote),
					"RPMAD_PEER_ADDRESS=%s",
					subject.remote);
	}
	return sd_journal_sendv(iov, (int)n);
}

bool
log_text(char *text, size_t size, int level, const char *fmt, va_list ap)
{
	if (level > log_max_level)
		return false;
	(void) vsnprintf(text, size, fmt, ap);
	return true;
}

void
log_msg(int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

void
log_vmsg(int level, const char *fmt, va_list ap)
{
	char text[LOG_LINE_MAX];
	if (!log_text(text, sizeof(text), level, fmt, ap))
		return;

	if (journal) {
		if (journal_send(level, text) == 0)
			return;
		(void) fprintf(stderr, "<%d>%s\n", level, text);
		return;
	}
	struct timespec ts;
	struct tm tm;
	char stamp[32] = "";
	(void) clock_gettime(CLOCK_REALTIME, &ts);
	if (localtime_r(&ts.tv_sec, &tm))
		(void) strftime(stamp, sizeof(stamp), "%F %T", &tm);
	(void) fprintf(stderr, "%s.%03ld rpmad[%s] %s\n", stamp,
			ts.tv_nsec / 1000000, log_level_name(level), text);
}
