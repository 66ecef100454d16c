// SPDX-License-Identifier: BSD-3-Clause
/*
 * transport_tcp.c -- the software transport as the core sees it: its
 * operations table and its line in the transport table, the device it
 * makes
 *
 * Each operation is named from the file that does it; what spans several
 * of them (disconnect, release, post, receives posted) is done here, the
 * one file that stands above them all.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>

#include "tcp/tcp.h"

/* How long a goodbye waits for the peer's. */
#define GOODBYE_TIMEOUT_NS (1000 * 1000 * 1000ull)

/* ------------------------------------------------------------ operations */

static void
goodbye_timeout(struct loop_timer *t)
{
	struct tcp_conn *tc = t->arg;
	tcp_conn_over(tc, RPMA_CONN_CLOSED);
}

static void
tp_disconnect(struct conn *conn)
{
	struct tcp_conn *tc = conn_tp(conn);
	if (tc == NULL)
		return;
	switch (tc->state) {
	case TC_ESTABLISHED:
		tc->state = TC_DISCONNECTING;
		conn_work_flush(conn);
		tcp_conn_send_goodbye(tc);
		tc->timer.fn = goodbye_timeout;
		loop_timer_arm(tcp_env->loop, &tc->timer, GOODBYE_TIMEOUT_NS);
		break;
	case TC_CONNECTING:
	case TC_HELLO:
	case TC_ACCEPTED:
	case TC_WAITING:
		/* not up yet: just go; the core reports the close */
		tcp_chan_close(&tc->chan[0], true);
		tcp_chan_close(&tc->chan[1], true);
		tc->state = TC_OVER;
		break;
	default:
		break;
	}
}

static void
tp_release(struct conn *conn, bool abort)
{
	struct tcp_conn *tc = conn_tp(conn);
	if (tc == NULL)
		return;
	tcp_ops_forget(tc);
	tcp_local_forget(tc);
	if (!abort) {
		if (tc->state == TC_ESTABLISHED)
			tcp_conn_send_goodbye(tc);
		for (int i = 0; i < 2; i++)
			if (tc->chan[i].fd >= 0)
				(void) tcp_chan_flush(&tc->chan[i]);
	}
	for (int i = 0; i < 2; i++) {
		tcp_chan_forget_dirty(&tc->chan[i]);
		tcp_chan_close(&tc->chan[i], abort);
	}
	tc->conn = NULL;
	conn_set_tp(conn, NULL);
	tcp_conn_free(tc);
}

static int
tp_post(struct conn *conn, struct work *w)
{
	struct tcp_conn *tc = conn_tp(conn);
	if (tc == NULL || tc->state != TC_ESTABLISHED)
		return -EAGAIN;
	if (tc->local_peer)
		return tcp_local_post(tc, w);
	return tcp_ops_post(tc, w);
}

static void
tp_recv_posted(struct conn *conn)
{
	struct tcp_conn *tc = conn_tp(conn);
	if (tc == NULL)
		return;
	tcp_rx_resume(tc);
	tcp_local_resume(tc);
}

const struct transport_ops transport_tcp = {
	.name = "tcp",
	.listen = tcp_listen,
	.unlisten = tcp_unlisten,
	.incoming_drop = tcp_incoming_drop,
	.adopt = tcp_adopt,
	.connect = tcp_connect,
	.accept = tcp_accept,
	.reject = tcp_reject,
	.disconnect = tp_disconnect,
	.release = tp_release,
	.post = tp_post,
	.recv_posted = tp_recv_posted,
};

/* ------------------------------------------------------- the transport */

/* rpmad's own device: every address no other transport serves */
static struct device *software_device;

int
transport_tcp_init(const struct transport_env *env)
{
	tcp_env = env;
	tcp_liveness_init(env);
	/* the sockets that open from now on go to the receive engine */
	tcp_open_init(&tcp_rx_engine);
	software_device = device_add(SOFTWARE_DEVICE_NAME, &transport_tcp,
			false, NULL);
	if (software_device == NULL)
		return -ENOMEM;
	return 0;
}

void
transport_tcp_fini(void)
{
	/* connections were released with their sessions, what they sent */
	tcp_tls_fini();
}

bool
transport_tcp_pending(void)
{
	/* the sockets' turns run while the loop runs once at shutdown */
	(void) fairq_round();
	return tcp_conn_any_pending() || tcp_tls_pending();
}

/* the TLS settings: "tls: " names what failed, as rpmad.conf names it */
static int
tcp_configure(const struct transport_settings *set, char *err, size_t len)
{
	char why[512];
	int ret = tcp_tls_setup(set, why, sizeof(why));
	if (ret)
		(void) snprintf(err, len, "tls: %s", why);
	return ret;
}

static struct device *
tcp_device_for(const struct sockaddr_storage *ss, socklen_t len, bool local)
{
	(void) ss;
	(void) len;
	(void) local;
	return software_device;
}

const struct transport_entry transport_tcp_entry = {
	.name = "tcp",
	.ops = &transport_tcp,
	.fallback = true,
	.device_noun = "software device",
	.configure = tcp_configure,
	.init = transport_tcp_init,
	.fini = transport_tcp_fini,
	.device_for = tcp_device_for,
	.pending = transport_tcp_pending,
};
