// SPDX-License-Identifier: BSD-3-Clause
/*
 * mr_holes.c -- a userfaultfd that turns rpmad's faults on holes of a
 * client's shared memory into errors (see mr_holes.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log/log.h"
#include "objects/mr_holes.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

/* kept open for rpmad's life: closing it would drop every guard */
static int uffd = -2;

/* Makes the userfaultfd, or -1 (logged once). */
static int
make_uffd(void)
{
	int fd = (int) syscall(SYS_userfaultfd,
			O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd < 0) {
		log_info("shared memory of clients is reached through their "
			 "address space: no userfaultfd (%s)",
				strerror(errno));
		return -1;
	}
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_SIGBUS,
	};
	if (ioctl(fd, UFFDIO_API, &api) ||
			!(api.features & UFFD_FEATURE_SIGBUS)) {
		log_info("shared memory of clients is reached through their "
			 "address space: the userfaultfd cannot raise SIGBUS");
		(void) close(fd);
		return -1;
	}
	return fd;
}

bool
mr_holes_available(void)
{
	if (uffd == -2)
		uffd = make_uffd();
	return uffd >= 0;
}

int
mr_holes_guard(void *addr, uint64_t len)
{
	if (!mr_holes_available())
		return -EOPNOTSUPP;
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t) addr, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	return ioctl(uffd, UFFDIO_REGISTER, &reg) ? -errno : 0;
}
