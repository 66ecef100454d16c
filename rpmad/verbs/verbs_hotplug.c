// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_hotplug.c -- noticing that an RDMA device is being removed
 *
 * The kernel removes a device (rdma link delete, a hot-unplugged NIC, a
 * driver unloaded) only once every process let go of what it had open
 * there. Drivers that cannot take a context away from its process (rxe,
 * siw, many NICs) send that process nothing: no async event, and no CM
 * event unless a CM id is bound to the device. What they do send, before
 * the removal starts waiting, is the uevent that the device's verbs node
 * (infiniband_verbs/uverbsN) is gone. rpmad listens for it on the
 * kernel's uevent group (not udev's: it must work where no udevd runs)
 * and lets go of the device at once (verbs_gone.c), so the removal
 * completes and the clients' connections on it are LOST.
 */

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

#include <libudev.h>

#include "verbs/verbs.h"

/* uevents handled per wake-up before others get a turn */
#define UEVENT_BUDGET 32

static struct udev *udev;
static struct udev_monitor *monitor;
static struct loop_watch watch;

static void
uevent_one(struct udev_device *ud)
{
	const char *action = udev_device_get_action(ud);
	const char *subsystem = udev_device_get_subsystem(ud);
	const char *name = udev_device_get_sysname(ud);
	if (action == NULL || subsystem == NULL || name == NULL ||
			strcmp(subsystem, "infiniband_verbs") ||
			strcmp(action, "remove"))
		return;
	struct verbs_dev *vd = verbs_dev_of_node(name);
	if (vd)
		verbs_dev_gone(vd, true);
}

static void
uevent_ready(struct loop_watch *w, uint32_t events)
{
	(void) w;
	(void) events;
	for (int i = 0; i < UEVENT_BUDGET; i++) {
		struct udev_device *ud = udev_monitor_receive_device(monitor);
		if (ud == NULL)
			break;	/* none left (or one that was not well formed) */
		uevent_one(ud);
		udev_device_unref(ud);
	}
	loop_kick(verbs_env->loop);
}

/* libudev answers NULL with errno, or a negative errno */
static int
made(const void *p)
{
	return p ? 0 : -(errno ? errno : ENOMEM);
}

void
verbs_hotplug_watch(void)
{
	if (monitor)
		return;
	const char *what = "udev_new";
	udev = udev_new();
	int ret = made(udev);
	if (ret)
		goto err;
	what = "udev_monitor_new_from_netlink";
	monitor = udev_monitor_new_from_netlink(udev, "kernel");
	if ((ret = made(monitor)))
		goto err;
	what = "udev_monitor_filter_add_match_subsystem_devtype";
	if ((ret = udev_monitor_filter_add_match_subsystem_devtype(monitor,
			"infiniband_verbs", NULL)) < 0)
		goto err;
	what = "udev_monitor_enable_receiving";
	if ((ret = udev_monitor_enable_receiving(monitor)) < 0)
		goto err;
	/* libudev's socket is non-blocking already */
	watch.fd = udev_monitor_get_fd(monitor);
	watch.fn = uevent_ready;
	watch.arg = NULL;
	what = "loop_add";
	ret = watch.fd < 0 ? watch.fd :
			     loop_add(verbs_env->loop, &watch, EPOLLIN);
	if (ret < 0)
		goto err;
	return;

err:
	log_warning("verbs: %s: %s; the removal of an RDMA device will wait "
			"until rpmad exits", what, strerror(-ret));
	verbs_hotplug_fini();
}

void
verbs_hotplug_fini(void)
{
	if (watch.added)
		loop_del(verbs_env->loop, &watch);
	if (monitor)
		udev_monitor_unref(monitor);
	if (udev)
		udev_unref(udev);
	monitor = NULL;
	udev = NULL;
}
