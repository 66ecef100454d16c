// SPDX-License-Identifier: BSD-3-Clause
/*
 * broker.c -- the control connection to rpmad: connecting, one request and
 * its response at a time (the round trip is common/ctl_call.c), sessions
 * and their generations, rpmad's errors as RPMA_E_* and log lines
 */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker.h"
#include "daemon_cred.h"
#include "log_internal.h"

/* How long a request may stay unanswered before the daemon counts as hung. */
#define REPLY_TIMEOUT_MS 60000

static struct {
	pthread_mutex_t lock;
	int sock;
	pid_t pid;		/* the process that opened sock */
	uint64_t next_id;
	_Atomic uint64_t generation;
} broker = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.sock = -1,
};

static const char *
socket_path(void)
{
	/* not in a program that gained privileges (setuid, capabilities) */
	const char *path = secure_getenv("RPMAD_SOCKET");
	return (path && *path) ? path : RPMAD_DEFAULT_SOCKET;
}

static void
disconnect_locked(void)
{
	if (broker.sock >= 0)
		(void) close(broker.sock);
	broker.sock = -1;
}

/*
 * One round trip (common/ctl_call.c); the lock is held. Returns 0 or a
 * negative errno; *sent says whether the request left (a SEQPACKET send is
 * all or nothing).
 */
static int
exchange_locked(Rpmad__Request *req, const int *fds, unsigned nfds,
		struct broker_reply *reply, bool *sent)
{
	req->id = ++broker.next_id;
	struct ctl_answer ans = { .fds = reply->fds };
	int ret = ctl_call(broker.sock, req, fds, nfds, REPLY_TIMEOUT_MS, &ans);
	*sent = ret == 0 || ans.failed >= CTL_STEP_WAIT;
	reply->resp = ans.resp;
	reply->nfds = ans.nfds;
	return ret;
}

/*
 * Whether rpmad closed its end; the lock is held. It never speaks unasked,
 * so anything readable between requests is the end too.
 */
static bool
hung_up_locked(void)
{
	struct pollfd pfd = { .fd = broker.sock, .events = POLLIN };
	int n;
	do {
		n = poll(&pfd, 1, 0);
	} while (n < 0 && errno == EINTR);
	return n > 0;
}

/* Opens the connection and says hello; the lock is held. */
static int
connect_locked(void)
{
	const char *path = socket_path();
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		RLOG_ERROR("rpmad socket path too long: %s", path);
		return RPMA_E_PROVIDER;
	}
	strcpy(sun.sun_path, path);

	int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		RLOG_ERROR("socket(AF_UNIX): %s", strerror(errno));
		return errno == ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
	}
	if (connect(sock, (struct sockaddr *)&sun, sizeof(sun))) {
		int err = errno;
		RLOG_ERROR("cannot reach rpmad at %s: %s (is rpmad running? "
				"RPMAD_SOCKET names another socket)", path,
				strerror(err));
		(void) close(sock);
		return RPMA_E_PROVIDER;
	}
	/* nothing is sent before the kernel says who listens there */
	if (daemon_cred_check(sock, path)) {
		(void) close(sock);
		return RPMA_E_PROVIDER;
	}
	broker.sock = sock;
	broker.pid = getpid();

	Rpmad__Hello hello;
	Rpmad__Request req;
	ctl_hello(&req, &hello, program_invocation_short_name);

	struct broker_reply reply = { .resp = NULL };
	bool sent;
	int ret = exchange_locked(&req, NULL, 0, &reply, &sent);
	if (ret) {
		RLOG_ERROR("rpmad at %s did not answer hello: %s", path,
				strerror(-ret));
		disconnect_locked();
		return RPMA_E_PROVIDER;
	}
	if (reply.resp->error != NULL) {
		RLOG_ERROR("rpmad at %s refused this client: %s", path,
				reply.resp->error->message);
		broker_reply_fini(&reply);
		disconnect_locked();
		return RPMA_E_PROVIDER;
	}
	broker_reply_fini(&reply);

	atomic_fetch_add(&broker.generation, 1);
	return 0;
}

int
broker_call(uint64_t generation, Rpmad__Request *req, const int *fds,
		unsigned nfds, Rpmad__Response__BodyCase expect,
		struct broker_reply *reply)
{
	memset(reply, 0, sizeof(*reply));
	for (unsigned i = 0; i < CTL_MAX_FDS; i++)
		reply->fds[i] = -1;

	pthread_mutex_lock(&broker.lock);

	/* a forked child must not talk over its parent's session */
	if (broker.sock >= 0 && broker.pid != getpid())
		disconnect_locked();
	/*
	 * an rpmad that went away (restarted) ended the session: its objects
	 * are dead, and new ones must not fail once on the old socket
	 */
	if (broker.sock >= 0 && hung_up_locked())
		disconnect_locked();

	int ret = 0;
	if (generation != 0 && (broker.sock < 0 ||
			generation != atomic_load(&broker.generation))) {
		RLOG_ERROR("this object belonged to an earlier session with "
				"rpmad, which has ended (rpmad restarted or the "
				"connection broke)");
		ret = RPMA_E_PROVIDER;
		goto unlock;
	}
	if (broker.sock < 0 && (ret = connect_locked()) != 0)
		goto unlock;

	reply->generation = atomic_load(&broker.generation);
	bool sent;
	int err = exchange_locked(req, fds, nfds, reply, &sent);
	if (err) {
		RLOG_ERROR("request to rpmad at %s failed: %s", socket_path(),
				strerror(-err));
		/*
		 * the session is gone or out of step: start afresh next time;
		 * a request that never left for want of memory changed nothing
		 */
		if (sent || (err != -ENOMEM && err != -EMSGSIZE))
			disconnect_locked();
		ret = err == -ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
		goto unlock;
	}

unlock:
	pthread_mutex_unlock(&broker.lock);
	if (ret)
		return ret;

	Rpmad__Response *resp = reply->resp;
	if (resp->error != NULL) {
		int code = resp->error->code;
		if (code > RPMA_E_UNKNOWN || code < RPMA_E_AGAIN)
			code = RPMA_E_UNKNOWN;
		/* "nothing pending" answers are normal, not worth a log line */
		if (code != RPMA_E_NO_EVENT)
			RLOG_ERROR("rpmad: %s", resp->error->message);
		broker_reply_fini(reply);
		return code;
	}
	if (resp->body_case != expect) {
		RLOG_ERROR("rpmad sent an unexpected answer (%d, wanted %d)",
				(int)resp->body_case, (int)expect);
		broker_reply_fini(reply);
		return RPMA_E_PROVIDER;
	}
	return 0;
}

int
broker_call_simple(uint64_t generation, Rpmad__Request *req)
{
	struct broker_reply reply;
	int ret = broker_call(generation, req, NULL, 0,
			RPMAD__RESPONSE__BODY_OK, &reply);
	if (ret == 0)
		broker_reply_fini(&reply);
	return ret;
}

void
broker_reply_fini(struct broker_reply *reply)
{
	ctl_close_fds(reply->fds, reply->nfds);
	reply->nfds = 0;
	if (reply->resp)
		rpmad__response__free_unpacked(reply->resp, NULL);
	reply->resp = NULL;
}

int
broker_take_fd(struct broker_reply *reply, unsigned i)
{
	if (i >= reply->nfds)
		return -1;
	int fd = reply->fds[i];
	reply->fds[i] = -1;
	return fd;
}

int
broker_session_alive(uint64_t generation)
{
	pthread_mutex_lock(&broker.lock);
	int alive = broker.sock >= 0 && broker.pid == getpid() &&
			generation == atomic_load(&broker.generation);
	pthread_mutex_unlock(&broker.lock);
	return alive;
}
