// SPDX-License-Identifier: BSD-3-Clause
/*
 * caps.c -- raising and dropping one of rpmad's own capabilities
 * (capget/capset: libcap is not worth a dependency for this)
 */

#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/caps.h"

static int
caps_get(struct __user_cap_header_struct *h,
		struct __user_cap_data_struct data[2])
{
	h->version = _LINUX_CAPABILITY_VERSION_3;
	h->pid = 0;
	return syscall(SYS_capget, h, data) ? -errno : 0;
}

bool
caps_effective(int cap)
{
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct data[2];
	return caps_get(&h, data) == 0 &&
		(data[(unsigned)cap / 32].effective &
		 (1u << ((unsigned)cap % 32))) != 0;
}

int
caps_change(int cap, bool on, bool permitted_too)
{
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct data[2];
	int ret = caps_get(&h, data);
	if (ret)
		return ret;
	unsigned i = (unsigned)cap / 32;
	uint32_t bit = 1u << ((unsigned)cap % 32);
	if (on) {
		data[i].effective |= bit & data[i].permitted;
	} else {
		data[i].effective &= ~bit;
		if (permitted_too)
			data[i].permitted &= ~bit;
	}
	return syscall(SYS_capset, &h, data) ? -errno : 0;
}
