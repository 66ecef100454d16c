// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_units.c -- the systemd files as built: systemd-analyze verify finds
 * nothing to say about rpmad.service (naming the rpmad just built in place
 * of the installed one) and rpmad.socket; they hold what rpmad(8) promises;
 * every setting of the service is explained by a comment; the sysusers.d
 * entry makes the rpma group. Skipped (77) without systemd-analyze.
 */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static char dir[256];

static void
setup(void)
{
	const char *tmp = getenv("TMPDIR");
	(void) snprintf(dir, sizeof(dir), "%s/rpmad-units.XXXXXX",
			tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
	char *rm[] = { "rm", "-rf", dir, NULL };
	struct run r;
	if (run_cmd(&r, rm, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS) == 0)
		run_free(&r);
}

static char *
built_service(void)
{
	char *text = read_text(builddir_path("systemd/rpmad.service"));
	ck_assert_msg(text != NULL, "systemd/rpmad.service was not built");
	return text;
}

/* The service with ExecStart= naming the rpmad just built. */
static void
write_units(const char *service_text)
{
	const char *bin = getenv("RPMAD_BIN");
	ck_assert_ptr_nonnull(bin);
	char *copy = strdup(service_text);
	ck_assert_ptr_nonnull(copy);
	char *exec = strstr(copy, "\nExecStart=");
	ck_assert_ptr_nonnull(exec);
	exec += strlen("\nExecStart=");
	char *args = strstr(exec, "/rpmad ");
	ck_assert_ptr_nonnull(args);
	*exec = '\0';
	char *out = NULL;
	ck_assert_int_gt(asprintf(&out, "%s%s%s", copy, bin,
			args + strlen("/rpmad")), 0);

	char path[400];
	(void) snprintf(path, sizeof(path), "%s/rpmad.service", dir);
	ck_assert_int_eq(write_text(path, out), 0);
	char *sock = read_text(srcdir_path("systemd/rpmad.socket"));
	ck_assert_ptr_nonnull(sock);
	(void) snprintf(path, sizeof(path), "%s/rpmad.socket", dir);
	ck_assert_int_eq(write_text(path, sock), 0);
	free(sock);
	free(out);
	free(copy);
}

/* systemd-analyze verify on files in dir; its output (free it) */
static char *
verify(const char *a, const char *b, int *status)
{
	char pa[400], pb[400];
	(void) snprintf(pa, sizeof(pa), "%s/%s", dir, a);
	(void) snprintf(pb, sizeof(pb), "%s/%s", dir, b ? b : a);
	char *argv[] = { "systemd-analyze", "verify", "--man=no", pa, pb,
		NULL };
	struct run r;
	ck_assert_int_eq(run_cmd(&r, argv, (uid_t) -1, 0, NULL, 0,
					 TH_WAIT_MS * 3),
			0);
	*status = r.status;
	char *all = NULL;
	ck_assert_int_ge(asprintf(&all, "%s%s", r.out, r.err), 0);
	run_free(&r);
	return all;
}

START_TEST(test_verify)
{
	char *service = built_service();
	write_units(service);
	int status;
	char *out = verify("rpmad.socket", "rpmad.service", &status);
	ck_assert_msg(status == 0 && out[0] == '\0',
			"systemd-analyze verify: exit %d:\n%s", status, out);
	free(out);
	free(service);

	/* and it would have spoken up: a misspelt setting is reported */
	char path[400];
	(void) snprintf(path, sizeof(path), "%s/typo.service", dir);
	ck_assert_int_eq(write_text(path, "[Service]\nExecStart=/bin/true\n"
			"ProtectSytem=strict\n"), 0);
	out = verify("typo.service", NULL, &status);
	ck_assert_msg(strstr(out, "ProtectSytem"), "verify said: %s", out);
	free(out);
}
END_TEST

static bool
has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; p && *p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
			return true;
	}
	return false;
}

START_TEST(test_contents)
{
	char *service = built_service();
	static const char *const want[] = {
		"Type=notify", "Restart=on-failure", "RuntimeDirectory=rpmad",
		"ExecReload=/bin/sh -c 'kill -HUP \"$$MAINPID\"'",
		"LimitMEMLOCK=infinity", "RestrictNamespaces=net",
		"Requires=rpmad.socket", "ProtectSystem=strict",
		"PrivateTmp=yes", "NoNewPrivileges=yes",
		"CapabilityBoundingSet=CAP_IPC_LOCK CAP_SETUID CAP_SETGID "
		"CAP_SYS_ADMIN",
		"TasksMax=64",
		"RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK",
		"PrivateDevices=no",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(has_line(service, want[i]), "no %s", want[i]);
	/* the installed daemon, in the foreground; nothing left unsubstituted */
	ck_assert_ptr_nonnull(strstr(service, "/rpmad --foreground\n"));
	ck_assert_ptr_null(strstr(service, "@sbindir@"));

	/* every setting of [Service] comes right after its comment */
	bool in_service = false;
	const char *prev = "";
	for (char *line = service; line && *line; ) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (line[0] == '[')
			in_service = strcmp(line, "[Service]") == 0;
		else if (in_service && line[0] && line[0] != '#')
			ck_assert_msg(prev[0] == '#', "no comment for %s",
					line);
		prev = line;
		line = nl ? nl + 1 : NULL;
	}
	free(service);

	char *sock = read_text(srcdir_path("systemd/rpmad.socket"));
	ck_assert_ptr_nonnull(sock);
	static const char *const want_sock[] = {
		"ListenSequentialPacket=/run/rpmad/rpmad.sock",
		"SocketMode=0660", "SocketGroup=rpma", "WantedBy=sockets.target",
	};
	for (size_t i = 0; i < sizeof(want_sock) / sizeof(want_sock[0]); i++)
		ck_assert_msg(has_line(sock, want_sock[i]), "no %s",
				want_sock[i]);
	free(sock);
}
END_TEST

START_TEST(test_sysusers)
{
	if (!th_ck_have_program("systemd-sysusers"))
		return;
	struct run r;
	/* an empty system: the group is made */
	char etc[300], path[400];
	(void) snprintf(etc, sizeof(etc), "%s/etc", dir);
	char *mk[] = { "mkdir", "-p", etc, NULL };
	ck_assert_int_eq(run_cmd(&r, mk, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	run_free(&r);
	(void) snprintf(path, sizeof(path), "%s/group", etc);
	ck_assert_int_eq(write_text(path, ""), 0);
	(void) snprintf(path, sizeof(path), "%s/passwd", etc);
	ck_assert_int_eq(write_text(path, ""), 0);
	char root[300];
	(void) snprintf(root, sizeof(root), "--root=%s", dir);
	char *argv[] = { "systemd-sysusers", "--dry-run", root,
		(char *)srcdir_path("systemd/rpmad.sysusers.conf"), NULL };
	ck_assert_int_eq(run_cmd(&r, argv, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "Creating group 'rpma'") ||
			strstr(r.err, "Creating group 'rpma'"),
			"out: %s err: %s", r.out, r.err);
	run_free(&r);
}
END_TEST

int
main(void)
{
	if (th_have_program("systemd-analyze") != 1) {
		(void) fprintf(stderr, "systemd-analyze is not installed: "
				"skipped\n");
		return 77;
	}
	const TTest *const tc_units[] = { test_verify, test_contents,
		test_sysusers, NULL };
	const struct th_tcase tcases[] = {
		{ "units", .tests = tc_units, .timeout = 60, .setup = setup,
				.teardown = teardown },
	};
	return check_run(th_suite("units", tcases, TH_N(tcases)), CK_NORMAL);
}
