// SPDX-License-Identifier: BSD-3-Clause
/*
 * offload.c -- one thread for work that would hold the loop, its results
 * back through an eventfd the loop watches (offload.h)
 */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/offload.h"
#include "log/log.h"
#include "loop/loop.h"

static struct {
	struct loop *loop;
	bool started, stopping;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* under lock: to do, oldest first; done, for the loop */
	struct offload_job *todo_head, *todo_tail;
	struct offload_job *done_head, *done_tail;
	int efd;
	struct loop_watch watch;
} ol = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.efd = -1,
};

static void
append(struct offload_job **head, struct offload_job **tail,
		struct offload_job *j)
{
	j->next = NULL;
	if (*tail)
		(*tail)->next = j;
	else
		*head = j;
	*tail = j;
}

static void *
worker(void *arg)
{
	(void) arg;
	(void) pthread_mutex_lock(&ol.lock);
	for (;;) {
		while (ol.todo_head == NULL && !ol.stopping)
			(void) pthread_cond_wait(&ol.wake, &ol.lock);
		struct offload_job *j = ol.todo_head;
		if (j == NULL)
			break;	/* stopping, and nothing left */
		ol.todo_head = j->next;
		if (ol.todo_head == NULL)
			ol.todo_tail = NULL;
		(void) pthread_mutex_unlock(&ol.lock);
		j->result = j->run(j);
		(void) pthread_mutex_lock(&ol.lock);
		append(&ol.done_head, &ol.done_tail, j);
		uint64_t one = 1;
		/* a full counter still wakes the loop: nothing to retry */
		(void) !write(ol.efd, &one, sizeof(one));
	}
	(void) pthread_mutex_unlock(&ol.lock);
	return NULL;
}

/* Runs the done() of every finished job, oldest first. */
static void
reap(void)
{
	(void) pthread_mutex_lock(&ol.lock);
	struct offload_job *j = ol.done_head;
	ol.done_head = ol.done_tail = NULL;
	(void) pthread_mutex_unlock(&ol.lock);
	while (j) {
		struct offload_job *next = j->next;
		j->done(j, j->result);
		j = next;
	}
}

static void
efd_ready(struct loop_watch *w, uint32_t events)
{
	(void) events;
	uint64_t n;
	(void) !read(w->fd, &n, sizeof(n));
	reap();
}

/* The eventfd and the thread, which takes no signal of rpmad's. */
static int
start(void)
{
	ol.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ol.efd < 0)
		return -errno;
	ol.watch.fd = ol.efd;
	ol.watch.fn = efd_ready;
	int ret = loop_add(ol.loop, &ol.watch, EPOLLIN);
	if (ret)
		goto err;
	sigset_t all, old;
	(void) sigfillset(&all);
	(void) pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&ol.thread, NULL, worker, NULL);
	(void) pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		loop_del(ol.loop, &ol.watch);
		goto err;
	}
	ol.started = true;
	return 0;
err:
	(void) close(ol.efd);
	ol.efd = -1;
	log_err("cannot start the thread for long work (%s): it runs on "
			"the loop", strerror(-ret));
	return ret;
}

int
offload_submit(struct offload_job *j)
{
	if (!ol.started || ol.stopping)
		return -ENOTSUP;
	(void) pthread_mutex_lock(&ol.lock);
	append(&ol.todo_head, &ol.todo_tail, j);
	(void) pthread_cond_signal(&ol.wake);
	(void) pthread_mutex_unlock(&ol.lock);
	return 0;
}

void
offload_init(struct loop *loop)
{
	ol.loop = loop;
	/* from the start: what rpmad holds idle is what it holds at rest */
	(void) start();
}

void
offload_fini(void)
{
	if (!ol.started)
		return;
	(void) pthread_mutex_lock(&ol.lock);
	ol.stopping = true;
	(void) pthread_cond_signal(&ol.wake);
	(void) pthread_mutex_unlock(&ol.lock);
	(void) pthread_join(ol.thread, NULL);
	reap();
	loop_del(ol.loop, &ol.watch);
	(void) close(ol.efd);
	ol.efd = -1;
	ol.started = false;
}
