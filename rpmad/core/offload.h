/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * offload.h -- work that would hold rpmad's loop for long (an msync that
 * writes back hundreds of megabytes, and waits for the disk), done by one
 * thread of rpmad's own, with its end reported on the loop
 *
 * The thread runs a job's run() and nothing else: no logging, no
 * registry, nothing the loop changes. Jobs run one at a time, in order.
 */

#ifndef RPMAD_OFFLOAD_H
#define RPMAD_OFFLOAD_H

struct loop;

struct offload_job {
	/* in the thread: the result done() gets (0 or a negative errno) */
	int (*run)(struct offload_job *j);
	/* on the loop, once run() returned; may free the job */
	void (*done)(struct offload_job *j, int result);
	int result;
	struct offload_job *next;
};

/*
 * offload_submit -- j's run() in the thread, then its done() on the loop;
 * 0, or a negative errno when there is no thread (the caller does the
 * work itself)
 */
int offload_submit(struct offload_job *j);

/*
 * offload_init -- start the thread (a failure is logged: jobs then run on
 * the loop, offload_submit refusing them)
 */
void offload_init(struct loop *loop);
/*
 * offload_fini -- at shutdown, after the loop: the thread finishes what it
 * has and goes; the jobs' done() run here
 */
void offload_fini(void);

#endif /* RPMAD_OFFLOAD_H */
