// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_psk.c -- the software transport's pre-shared keys file
 * (rpmad/transport/tcp/tcp_psk.c): its lines, and who may read the file
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tcp/tcp.h"
#include "th_suite.h"

#define HEX32 "00112233445566778899aabbccddeeff" \
	"00112233445566778899AABBCCDDEEFF"

START_TEST(test_lines)
{
	struct tcp_psk k;
	char why[128];
	ck_assert_int_eq(tcp_psk_parse_line("host-a:" HEX32 "\n", &k, why,
			sizeof(why)), 0);
	ck_assert_str_eq(k.identity, "host-a");
	ck_assert_uint_eq(k.key_len, 32);
	ck_assert_uint_eq(k.key[1], 0x11);
	ck_assert_uint_eq(k.key[31], 0xff);
	/* NVMe/TCP's identities have spaces; a comment may follow the key */
	ck_assert_int_eq(tcp_psk_parse_line("NVMe0R01 nqn.host nqn.subsys:"
			HEX32 " # rotated in May", &k, why, sizeof(why)), 0);
	ck_assert_str_eq(k.identity, "NVMe0R01 nqn.host nqn.subsys");
	/* nothing there */
	ck_assert_int_eq(tcp_psk_parse_line("  # a comment\n", &k, why,
			sizeof(why)), 1);
	ck_assert_int_eq(tcp_psk_parse_line("\n", &k, why, sizeof(why)), 1);
	/* broken */
	static const char *const bad[] = {
		"no-colon " HEX32, ":" HEX32, "host:", "host:0011",
		"host:" HEX32 "0", "host:" HEX32 "zz", "host:" HEX32 " junk",
		"h\x01st:" HEX32,
		"host:" HEX32 HEX32 "00",	/* 65 bytes */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(tcp_psk_parse_line(bad[i], &k, why,
				sizeof(why)) == -EINVAL, "%s", bad[i]);
}
END_TEST

static char dir[64];

static const char *
write_file(const char *name, const char *text, mode_t mode)
{
	static char path[128];
	(void) snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	(void) close(fd);
	return path;
}

START_TEST(test_files)
{
	(void) snprintf(dir, sizeof(dir), "/tmp/rpmad-psk.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	struct tcp_psk_table t = { 0 };
	char err[512];
	const char *p = write_file("good", "# ours first\na:" HEX32 "\n\nb:"
			HEX32 "\n", 0600);
	ck_assert_int_eq(tcp_psk_load(p, &t, err, sizeof(err)), 0);
	ck_assert_uint_eq(t.n, 2);
	ck_assert_str_eq(t.keys[0].identity, "a");
	ck_assert_ptr_nonnull(tcp_psk_find(&t, (const uint8_t *)"b", 1));
	ck_assert_ptr_null(tcp_psk_find(&t, (const uint8_t *)"bb", 2));
	ck_assert_ptr_null(tcp_psk_find(&t, (const uint8_t *)"", 0));
	tcp_psk_free(&t);

	/* readable by others: refused, and the table stays empty */
	p = write_file("open", "a:" HEX32 "\n", 0644);
	ck_assert_int_eq(tcp_psk_load(p, &t, err, sizeof(err)), -EPERM);
	ck_assert_ptr_nonnull(strstr(err, "chmod 600"));
	ck_assert_uint_eq(t.n, 0);
	/* one identity twice, a bad line (named), no key at all */
	p = write_file("twice", "a:" HEX32 "\na:" HEX32 "\n", 0600);
	ck_assert_int_eq(tcp_psk_load(p, &t, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":2: identity 'a' again"));
	p = write_file("bad", "a:" HEX32 "\nb:beef\n", 0600);
	ck_assert_int_eq(tcp_psk_load(p, &t, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":2:"));
	p = write_file("empty", "# nothing\n", 0600);
	ck_assert_int_eq(tcp_psk_load(p, &t, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(tcp_psk_load("/nonexistent/psk", &t, err,
			sizeof(err)), -ENOENT);
	if (geteuid() == 0) {
		p = write_file("theirs", "a:" HEX32 "\n", 0600);
		ck_assert_int_eq(chown(p, 65534, 65534), 0);
		ck_assert_int_eq(tcp_psk_load(p, &t, err, sizeof(err)),
				-EPERM);
	}
	char cmd[96];
	(void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void) system(cmd);
}
END_TEST

int
main(void)
{
	const TTest *const tc_psk[] = { test_lines, test_files, NULL };
	const struct th_tcase tcases[] = {
		{ "psk", .tests = tc_psk },
	};
	return check_run(th_suite("psk", tcases, TH_N(tcases)), CK_NORMAL);
}
