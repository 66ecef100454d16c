// SPDX-License-Identifier: BSD-3-Clause
/*
 * guard.c -- SIGBUS-safe access to registered memory (see guard.h)
 *
 * A guarded access sets a jump buffer; the handler jumps back to it when a
 * fault happens while one is set and otherwise restores the default action
 * and lets the fault kill rpmad as it would have (a bug of rpmad's own).
 */

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "core/guard.h"

/* rpmad is single-threaded; thread-local keeps it right if that changes */
static __thread sigjmp_buf *volatile guard_jmp;

static void
fault_handler(int sig, siginfo_t *info, void *ucontext)
{
	(void) info;
	(void) ucontext;
	sigjmp_buf *jmp = guard_jmp;
	if (jmp != NULL) {
		guard_jmp = NULL;
		siglongjmp(*jmp, 1);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

int
guard_init(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault_handler;
	/* NODEFER: the jump leaves the handler without sigreturn */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		return -errno;
	return 0;
}

int
guarded_call(void (*fn)(void *arg), void *arg)
{
	sigjmp_buf jmp;
	/* 0: do not save the signal mask, which would cost a system call */
	if (sigsetjmp(jmp, 0)) {
		guard_jmp = NULL;
		return -EFAULT;
	}
	guard_jmp = &jmp;
	fn(arg);
	guard_jmp = NULL;
	return 0;
}

struct copy_args {
	void *dst;
	const void *src;
	size_t len;
};

static void
do_copy(void *arg)
{
	struct copy_args *a = arg;
	memcpy(a->dst, a->src, a->len);
}

int
guarded_memcpy(void *dst, const void *src, size_t len)
{
	struct copy_args a = { dst, src, len };
	return guarded_call(do_copy, &a);
}

struct probe_args {
	const volatile uint8_t *p;
	size_t len;
};

static void
do_probe(void *arg)
{
	struct probe_args *a = arg;
	const size_t page = 4096;
	for (size_t off = 0; off < a->len; off += page)
		(void) a->p[off];
	(void) a->p[a->len - 1];
}

int
guarded_probe(const void *p, size_t len)
{
	if (len == 0)
		return 0;
	struct probe_args a = { p, len };
	return guarded_call(do_probe, &a);
}

struct store_args {
	uint64_t *dst;
	uint64_t value;
};

static void
do_store(void *arg)
{
	struct store_args *a = arg;
	__atomic_store_n(a->dst, a->value, __ATOMIC_RELEASE);
}

int
guarded_store64(uint64_t *dst, uint64_t value)
{
	struct store_args a = { dst, value };
	return guarded_call(do_store, &a);
}
