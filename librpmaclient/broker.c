// SPDX-License-Identifier: BSD-3-Clause
/*
 * broker.c -- the control connection to rpmad: connecting, one request and
 * its response at a time (the round trip is common/ctl_call.c), sessions
 * and their generations, rpmad's errors as RPMA_E_* and log lines
 *
 * A slow rpmad is not a dead one. A call whose answer does not come within
 * the reply time-out fails alone; its request is remembered (late.c) and
 * its answer, when it comes, is recognized by its id and put right, so the
 * session stays in step and every object stays. Only the end of the
 * socket (rpmad exited, was killed, or evicted this process) or an answer
 * that makes no sense ends a session.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "api_seen.h"
#include "broker.h"
#include "daemon_cred.h"
#include "late.h"
#include "log_internal.h"

/*
 * How long a call waits for rpmad's answer before it fails alone, unless
 * rpmad says otherwise at hello (its reply_timeout_ms): it is the
 * operator's to set, never the application's environment's. What rpmad
 * says is held within these bounds.
 */
#define REPLY_TIMEOUT_MS 60000
#define REPLY_TIMEOUT_MIN_MS 100
#define REPLY_TIMEOUT_MAX_MS 3600000

static struct {
	pthread_mutex_t lock;
	int sock;
	pid_t pid;		/* the process that opened sock */
	uint64_t next_id;
	int timeout_ms;		/* of this session's replies */
	_Atomic uint64_t generation;
	bool addrspace;		/* rpmad has this process's address space */
	bool maps_shared; /* rpmad maps shared memory (memshare.h) */
	/* the session rpmad itself ended (closed or reset), if any */
	bool ended_by_rpmad;
} broker = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.sock = -1,
};

/* this session's requests answered late (late.c) */
static const struct ctl_late late_answers = { .answer = late_answer };

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
	late_reset();
}

/*
 * One round trip (common/ctl_call.c); the lock is held. Returns 0 or a
 * negative errno with the step it failed at in *step.
 */
static int
exchange_locked(Rpmad__Request *req, const int *fds, unsigned nfds,
		struct broker_reply *reply, enum ctl_step *step)
{
	req->id = ++broker.next_id;
	struct ctl_answer ans = { .fds = reply->fds, .late = &late_answers };
	int ret = ctl_call(broker.sock, req, fds, nfds, broker.timeout_ms,
			&ans);
	*step = ans.failed;
	reply->resp = ans.resp;
	reply->nfds = ans.nfds;
	return ret;
}

/*
 * Sends what undoes the objects late answers made (late.c), without
 * waiting: their answers are taken as late ones too. The lock is held.
 */
static void
send_undos_locked(void)
{
	struct late_undo u;
	while (late_undo_next(&u)) {
		u.req.id = ++broker.next_id;
		size_t len = rpmad__request__get_packed_size(&u.req);
		uint8_t buf[64];	/* a delete: an id and a few tags */
		if (len > sizeof(buf))
			break;
		rpmad__request__pack(&u.req, buf);
		/* no room now (rpmad is slow again): the next call tries */
		if (ctl_send_flags(broker.sock, buf, len, NULL, 0,
				MSG_DONTWAIT))
			break;
		late_undo_sent();
		late_add(&u.req);
	}
}

/*
 * Takes the late answers that came meanwhile; the lock is held. rpmad
 * never speaks unasked: anything else readable between requests is the
 * end of the session (rpmad went away) or a session out of step, and the
 * session ends here.
 */
static void
catch_up_locked(void)
{
	int ret = ctl_drain(broker.sock, &late_answers);
	if (ret == 0) {
		send_undos_locked();
		return;
	}
	if (ret != -ECONNRESET)
		RLOG_ERROR("rpmad at %s sent what answers nothing asked: %s; "
				"the session ends", socket_path(),
				strerror(-ret));
	broker.ended_by_rpmad = ret == -ECONNRESET;
	disconnect_locked();
}

/*
 * Right after hello: rpmad does this process's network work (listening,
 * connecting, addresses, routes) in the namespace handed over here, the
 * process's own. 0, or -1 with the reason logged.
 */
static int
hand_over_netns_locked(const char *path)
{
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* rpmad then serves it only if it shares rpmad's namespace */
		RLOG_INFO("cannot open /proc/self/ns/net (%s): rpmad does "
				"network work for this process only in its own "
				"network namespace", strerror(errno));
		return 0;
	}
	Rpmad__NetNamespace body = RPMAD__NET_NAMESPACE__INIT;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_NET_NAMESPACE;
	req.net_namespace = &body;
	struct broker_reply reply = { .resp = NULL };
	enum ctl_step step;
	int ret = exchange_locked(&req, &fd, 1, &reply, &step);
	(void) close(fd);
	if (ret) {
		RLOG_ERROR("rpmad at %s did not take the network namespace: %s",
				path, strerror(-ret));
		return -1;
	}
	ret = 0;
	if (reply.resp->error != NULL &&
			reply.resp->error->code == RPMA_E_NOSUPP) {
		/* an rpmad older than this library: its namespace for all */
		RLOG_INFO("rpmad at %s does not take network namespaces",
				path);
	} else if (reply.resp->error != NULL) {
		RLOG_ERROR("rpmad at %s refused the network namespace: %s",
				path, reply.resp->error->message);
		ret = -1;
	}
	broker_reply_fini(&reply);
	return ret;
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
	broker.timeout_ms = REPLY_TIMEOUT_MS;

	Rpmad__Hello hello;
	Rpmad__Request req;
	ctl_hello(&req, &hello, program_invocation_short_name);
	char api[32];
	api_seen(api, sizeof(api));
	hello.library = "librpmaclient " PACKAGE_VERSION;
	hello.api = api;
	/*
	 * rpmad reaches this process's private memory through these
	 * (memshare.h); rpmad keeps its own copies, the library none
	 */
	int saved_errno = errno;	/* a refusal is no error of the call */
	int as_fds[2] = {
		open("/proc/self/mem", O_RDWR | O_CLOEXEC),
		open("/proc/self/maps", O_RDONLY | O_CLOEXEC),
	};
	bool addrspace = as_fds[0] >= 0 && as_fds[1] >= 0;
	if (!addrspace)
		RLOG_INFO("without /proc/self/mem and /proc/self/maps (%s), "
				"registered private memory is moved into "
				"shared memory", strerror(errno));
	errno = saved_errno;
	hello.fd_count = addrspace ? 2 : 0;

	struct broker_reply reply = { .resp = NULL };
	enum ctl_step step;
	int ret = exchange_locked(&req, as_fds, hello.fd_count, &reply,
			&step);
	for (int i = 0; i < 2; i++)
		if (as_fds[i] >= 0)
			(void) close(as_fds[i]);
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
	bool maps_shared = false;
	if (reply.resp->body_case == RPMAD__RESPONSE__BODY_HELLO) {
		maps_shared = reply.resp->hello->maps_shared_memory;
		uint32_t ms = reply.resp->hello->reply_timeout_ms;
		if (ms)
			broker.timeout_ms = ms < REPLY_TIMEOUT_MIN_MS ?
				REPLY_TIMEOUT_MIN_MS : ms > REPLY_TIMEOUT_MAX_MS ?
				REPLY_TIMEOUT_MAX_MS : (int)ms;
	}
	broker_reply_fini(&reply);
	if (hand_over_netns_locked(path)) {
		disconnect_locked();
		return RPMA_E_PROVIDER;
	}

	broker.addrspace = addrspace;
	broker.maps_shared = maps_shared;
	broker.ended_by_rpmad = false;
	atomic_fetch_add(&broker.generation, 1);
	return 0;
}

/* Whether a request deletes an object of rpmad's. */
static bool
is_delete(Rpmad__Request__BodyCase body)
{
	return body == RPMAD__REQUEST__BODY_PEER_DELETE ||
		body == RPMAD__REQUEST__BODY_MR_DEREG ||
		body == RPMAD__REQUEST__BODY_EP_SHUTDOWN ||
		body == RPMAD__REQUEST__BODY_CONN_REQ_DELETE ||
		body == RPMAD__REQUEST__BODY_CONN_DELETE;
}

/*
 * Whether a refusal is the caller's to tell: the landing area is the
 * library's own choice, and without one rpmad lands the accesses itself
 * (an older rpmad, or none to spare), which is no error of the
 * application's to read on its stderr.
 */
static bool
is_optional(Rpmad__Request__BodyCase body)
{
	return body == RPMAD__REQUEST__BODY_LANDING_OPEN;
}

/*
 * Turns a failed round trip into the call's result; the lock is held. A
 * request that got no answer in time, or could not even be handed over,
 * fails alone: the session and its objects stay.
 */
static int
exchange_failed_locked(const Rpmad__Request *req, int err,
		enum ctl_step step)
{
	if (err == -ETIMEDOUT && step == CTL_STEP_WAIT) {
		late_add(req);
		RLOG_ERROR("rpmad at %s did not answer within %d ms (stopped "
				"or overloaded?): this call failed, the session "
				"and its objects stay", socket_path(),
				broker.timeout_ms);
		return RPMA_E_PROVIDER;
	}
	if (err == -ETIMEDOUT && step == CTL_STEP_SEND) {
		RLOG_ERROR("rpmad at %s took no request for %d ms (stopped or "
				"overloaded?): this call failed and sent "
				"nothing, the session and its objects stay",
				socket_path(), broker.timeout_ms);
		return RPMA_E_PROVIDER;
	}
	RLOG_ERROR("request to rpmad at %s failed: %s", socket_path(),
			strerror(-err));
	/*
	 * the session is gone or out of step: start afresh next time; a
	 * request that never left for want of memory changed nothing
	 */
	if (step >= CTL_STEP_WAIT || (err != -ENOMEM && err != -EMSGSIZE)) {
		broker.ended_by_rpmad = err == -ECONNRESET || err == -EPIPE;
		disconnect_locked();
	}
	return err == -ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
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

	/*
	 * a child made without the fork handlers (a raw clone) must not talk
	 * over its parent's session, nor close a descriptor by a number it
	 * may have reused: forget it
	 */
	if (broker.sock >= 0 && broker.pid != getpid()) {
		broker.sock = -1;
		late_reset();
		atomic_fetch_add(&broker.generation, 1);
	}
	/*
	 * late answers first; an rpmad that went away (restarted) ended the
	 * session: its objects are dead, and new ones must not fail once on
	 * the old socket
	 */
	if (broker.sock >= 0)
		catch_up_locked();

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
	if (late_full()) {
		RLOG_ERROR("rpmad at %s still owes the answers to %d earlier "
				"requests (stopped or overloaded?): this call "
				"failed and sent nothing, the session and its "
				"objects stay", socket_path(), LATE_MAX);
		ret = RPMA_E_PROVIDER;
		goto unlock;
	}

	reply->generation = atomic_load(&broker.generation);
	enum ctl_step step;
	int err = exchange_locked(req, fds, nfds, reply, &step);
	if (err) {
		ret = exchange_failed_locked(req, err, step);
		goto unlock;
	}
	send_undos_locked();

unlock:
	pthread_mutex_unlock(&broker.lock);
	if (ret)
		return ret;

	Rpmad__Response *resp = reply->resp;
	if (resp->error != NULL && resp->error->errnum == ENOENT &&
			is_delete(req->body_case)) {
		/* gone already: an earlier delete of it came late */
		broker_reply_fini(reply);
		return 0;
	}
	if (resp->error != NULL) {
		int code = resp->error->code;
		if (code > RPMA_E_UNKNOWN || code < RPMA_E_AGAIN)
			code = RPMA_E_UNKNOWN;
		/* "nothing pending" answers are normal, not worth a log line */
		if (code != RPMA_E_NO_EVENT && !is_optional(req->body_case))
			RLOG_ERROR("rpmad: %s", resp->error->message);
		else if (code != RPMA_E_NO_EVENT)
			RLOG_INFO("rpmad: %s", resp->error->message);
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
	/* what came meanwhile first: it may be the session's end */
	if (broker.sock >= 0 && broker.pid == getpid())
		catch_up_locked();
	int alive = broker.sock >= 0 && broker.pid == getpid() &&
			generation == atomic_load(&broker.generation);
	pthread_mutex_unlock(&broker.lock);
	return alive;
}

int
broker_session_ended_by_rpmad(uint64_t generation)
{
	pthread_mutex_lock(&broker.lock);
	int ended = broker.sock < 0 && broker.ended_by_rpmad &&
			generation == atomic_load(&broker.generation);
	pthread_mutex_unlock(&broker.lock);
	return ended;
}

int
broker_late_event(uint64_t generation, uint64_t conn_id,
		struct late_event *ev)
{
	if (late_events_owed() == 0)
		return 0;
	pthread_mutex_lock(&broker.lock);
	int ret = 0;
	if (broker.sock < 0 || broker.pid != getpid() ||
			generation != atomic_load(&broker.generation))
		goto unlock;
	catch_up_locked();
	/* its answer is owed: wait for it as long as for any answer */
	struct timespec now;
	(void) clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t deadline = now.tv_sec * 1000LL + now.tv_nsec / 1000000 +
			broker.timeout_ms;
	while (broker.sock >= 0 && (ret = late_event_take(conn_id, ev)) < 0) {
		(void) clock_gettime(CLOCK_MONOTONIC, &now);
		int64_t left = deadline - (now.tv_sec * 1000LL +
				now.tv_nsec / 1000000);
		struct pollfd pfd = { .fd = broker.sock, .events = POLLIN };
		int n = left > 0 ? poll(&pfd, 1, (int)left) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			RLOG_ERROR("rpmad at %s still has not answered for this "
					"connection's event (stopped or "
					"overloaded?)", socket_path());
			ret = RPMA_E_PROVIDER;
			break;
		}
		catch_up_locked();
	}
	if (broker.sock < 0)
		ret = 0;	/* the session ended: the event is the end */
unlock:
	pthread_mutex_unlock(&broker.lock);
	return ret;
}

void
broker_late_event_forget(uint64_t generation, uint64_t conn_id)
{
	if (late_events_owed() == 0)
		return;
	pthread_mutex_lock(&broker.lock);
	if (broker.sock >= 0 && broker.pid == getpid() &&
			generation == atomic_load(&broker.generation))
		late_event_forget(conn_id);
	pthread_mutex_unlock(&broker.lock);
}

/* Whether the session of `generation` is the current one and says *flag. */
static bool
session_says(uint64_t generation, const bool *flag)
{
	pthread_mutex_lock(&broker.lock);
	bool says = broker.sock >= 0 && *flag &&
			generation == atomic_load(&broker.generation);
	pthread_mutex_unlock(&broker.lock);
	return says;
}

bool
broker_addrspace(uint64_t generation)
{
	return session_says(generation, &broker.addrspace);
}

bool
broker_maps_shared(uint64_t generation)
{
	return session_says(generation, &broker.maps_shared);
}

void
broker_atfork_child(void)
{
	/*
	 * The parent's session is not the child's. Nothing of the child ran
	 * yet, so the socket is surely still ours to close; another thread
	 * of the parent may have held the lock at the fork.
	 */
	if (broker.sock >= 0)
		(void) close(broker.sock);
	broker.sock = -1;
	broker.addrspace = false;
	broker.maps_shared = false;
	broker.ended_by_rpmad = false;
	late_reset();
	atomic_fetch_add(&broker.generation, 1);
	pthread_mutex_init(&broker.lock, NULL);
}
