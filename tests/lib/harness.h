/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * harness.h -- the generic pieces of the tests' harness at once (none of
 * them speaks librpma): rpmads, waits, programs run, files, JSON, /proc
 * and the Check main(). The harness of tests with applications on rpmads
 * is itest.h; the API tests' is api_helpers.h.
 */

#ifndef HARNESS_H
#define HARNESS_H

#include "test_daemon.h"
#include "th_files.h"
#include "th_json.h"
#include "th_procfs.h"
#include "th_run.h"
#include "th_suite.h"
#include "th_wait.h"

#endif /* HARNESS_H */
