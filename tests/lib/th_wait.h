/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * th_wait.h -- time and bounded waits: the clock, sleeping, waiting for a
 * process, for a Unix socket that accepts, for a TCP port that listens,
 * and picking free ports
 *
 * Every wait gives up after the time it is given and says so: a bound
 * turns a hang into a failure, it is not a performance limit, so bounds
 * are generous (two loaded cores, sanitizer builds).
 */

#ifndef TH_WAIT_H
#define TH_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* how long a test waits for anything that should happen at once */
#define TH_WAIT_MS 10000

/* it_now_ms -- milliseconds of CLOCK_MONOTONIC */
uint64_t it_now_ms(void);

/* it_sleep_ms -- sleep that long (signals do not cut it short) */
void it_sleep_ms(int ms);

/*
 * th_wait_pid -- reap pid within timeout_ms; SIGKILL (and reap) it after
 * that. Returns 0 with its wait status in *status, or -1 when it had to
 * be killed or is not our child.
 */
int th_wait_pid(pid_t pid, int timeout_ms, int *status);

/* exit_code -- a wait status as an exit code (128 + signal when killed) */
int exit_code(int status);

/*
 * it_join -- wait at most timeout_ms for pid (SIGKILL after that).
 * Returns its exit code, 128 + signal when a signal ended it, -1 when it
 * had to be killed.
 */
int it_join(pid_t pid, int timeout_ms);

/* th_socket_accepts -- whether the SEQPACKET socket at path accepts */
bool th_socket_accepts(const char *path);

/* th_wait_socket -- wait until it accepts; true when it does */
bool th_wait_socket(const char *path, int timeout_ms);

/*
 * it_free_port -- a TCP port nothing uses now, as a string; below the
 * ephemeral range where there is room, so no outgoing connection takes
 * it, and claimed among the tests running side by side until this process
 * exits. 0 or -1.
 */
int it_free_port(char *buf, size_t len);

/*
 * it_wait_listening -- until something listens on TCP port (or, on RDMA,
 * an RDMA CM id on it), within timeout_ms; 0 or -1
 */
int it_wait_listening(const char *port, int timeout_ms);

#endif /* TH_WAIT_H */
