/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmad_user.h -- who may serve rpmad's socket: root, and the user rpmad
 * runs as when built to run as another (configure --with-rpmad-user).
 * The library refuses anyone else at the other end of the socket; rpmad
 * warns when it runs as someone else, since every client would refuse it.
 */

#ifndef RPMAD_COMMON_RPMAD_USER_H
#define RPMAD_COMMON_RPMAD_USER_H

#include <stdbool.h>
#include <sys/types.h>

/* rpmad_user_name -- that user as configured ("" when none is: root only) */
const char *rpmad_user_name(void);

/*
 * rpmad_user_is -- whether `uid` is root or that user. A name is looked up
 * (getpwnam_r) only for a uid other than 0; errno is kept.
 */
bool rpmad_user_is(uid_t uid);

#endif /* RPMAD_COMMON_RPMAD_USER_H */
