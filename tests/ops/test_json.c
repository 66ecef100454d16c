// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_json.c -- rpmactl's own output helpers: the JSON writer (escaping,
 * invalid UTF-8, nesting; checked against python3's parser), the number,
 * duration and usage formats, terminal-safe text and aligned tables
 */

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "harness.h"
#include "json.h"
#include "table.h"

/* what the writer made of one string */
static char *
json_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	json_write_string(f, s);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

static void
expect_json(const char *in, const char *want)
{
	char *got = json_of(in);
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_escapes)
{
	expect_json("plain", "\"plain\"");
	expect_json("", "\"\"");
	expect_json("q\"b\\s/", "\"q\\\"b\\\\s/\"");
	expect_json("\n\t\r", "\"\\n\\t\\r\"");
	expect_json("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	/* valid UTF-8 passes as it is: 2, 3 and 4 bytes */
	expect_json("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
			"\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
	/* every byte of something invalid becomes U+FFFD */
	expect_json("a\xff" "b", "\"a\\ufffdb\"");
	expect_json("\xc0\xaf", "\"\\ufffd\\ufffd\"");		/* overlong */
	expect_json("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");	/* surrogate */
	expect_json("\xf4\x90\x80\x80",					/* > U+10FFFF */
			"\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	expect_json("\xe2\x82", "\"\\ufffd\\ufffd\"");		/* cut short */
	expect_json("\x80z", "\"\\ufffdz\"");
}
END_TEST

START_TEST(test_document)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	struct json j;
	json_init(&j, f);
	json_object_begin(&j);
	json_kv_string(&j, "name", "pmem \"q\" \\ \t\xc3\xa9\xff");
	json_kv_u64(&j, "max", UINT64_MAX);
	json_key(&j, "neg");
	json_i64(&j, INT64_MIN);
	json_kv_bool(&j, "yes", true);
	json_key(&j, "nothing");
	json_string(&j, NULL);
	json_key(&j, "empty_object");
	json_object_begin(&j);
	json_object_end(&j);
	json_key(&j, "empty_array");
	json_array_begin(&j);
	json_array_end(&j);
	json_key(&j, "list");
	json_array_begin(&j);
	for (int i = 0; i < 3; i++) {
		json_object_begin(&j);
		json_kv_u64(&j, "i", (uint64_t)i);
		json_key(&j, "inner");
		json_array_begin(&j);
		json_u64(&j, 7);
		json_null(&j);
		json_array_end(&j);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_end(&j);
	ck_assert_int_eq(fclose(f), 0);

	struct flat fl;
	ck_assert_msg(flat_parse(&fl, buf) == 0, "not JSON:\n%s", buf);
	ck_assert_str_eq(flat_get(&fl, "name"),
			"pmem \"q\" \\\\ \\t\\xe9\\ufffd");
	ck_assert_str_eq(flat_get(&fl, "max"), "18446744073709551615");
	ck_assert_str_eq(flat_get(&fl, "neg"), "-9223372036854775808");
	ck_assert_str_eq(flat_get(&fl, "yes"), "true");
	ck_assert_str_eq(flat_get(&fl, "nothing"), "null");
	ck_assert_int_eq(flat_len(&fl, "empty_array"), 0);
	ck_assert_int_eq(flat_len(&fl, "list"), 3);
	ck_assert_str_eq(flat_get(&fl, "list.2.i"), "2");
	ck_assert_str_eq(flat_get(&fl, "list.1.inner.0"), "7");
	ck_assert_str_eq(flat_get(&fl, "list.1.inner.1"), "null");
	flat_free(&fl);
	/* indented two spaces a level, nothing after the last member */
	ck_assert_ptr_nonnull(strstr(buf, "{\n  \"name\": "));
	ck_assert_ptr_nonnull(strstr(buf, "\"empty_object\": {},\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\"empty_array\": [],\n"));
	ck_assert_ptr_null(strstr(buf, ",\n}"));
	ck_assert_ptr_null(strstr(buf, ",\n  ]"));
	ck_assert(len > 2 && buf[len - 1] == '\n' && buf[len - 2] == '}');
	free(buf);
}
END_TEST

START_TEST(test_formats)
{
	char b[64];
	ck_assert_str_eq(format_bytes(0, b, sizeof(b)), "0 B");
	ck_assert_str_eq(format_bytes(1023, b, sizeof(b)), "1023 B");
	ck_assert_str_eq(format_bytes(1024, b, sizeof(b)), "1.0 KiB");
	ck_assert_str_eq(format_bytes(1536, b, sizeof(b)), "1.5 KiB");
	ck_assert_str_eq(format_bytes(1ull << 30, b, sizeof(b)), "1.0 GiB");
	ck_assert_str_eq(format_bytes(UINT64_MAX, b, sizeof(b)), "16.0 EiB");

	ck_assert_str_eq(format_duration(0, b, sizeof(b)), "0.0s");
	ck_assert_str_eq(format_duration(999, b, sizeof(b)), "0.9s");
	ck_assert_str_eq(format_duration(61000, b, sizeof(b)), "1m 01s");
	ck_assert_str_eq(format_duration(3600000, b, sizeof(b)), "1h 00m");
	ck_assert_str_eq(format_duration(25 * 3600000ull, b, sizeof(b)),
			"1d 01h");

	ck_assert_str_eq(format_usage(0, b, sizeof(b)), "-");
	ck_assert_str_eq(format_usage(0x29, b, sizeof(b)),
			"READ_SRC|WRITE_DST|FLUSH_TYPE_PERSISTENT");
	ck_assert_str_eq(format_usage(0xc0 | 0x200, b, sizeof(b)),
			"SEND|RECV|0x200");
	ck_assert_str_eq(format_usage_name(7), "RECV");
	ck_assert_ptr_null(format_usage_name(8));

	ck_assert_str_eq(format_printable("a\tb\xff" "c\x1b[31m", b,
			sizeof(b)), "a?b?c?[31m");
	ck_assert_str_eq(format_printable("\xc3\xa9t\xc3\xa9", b, sizeof(b)),
			"\xc3\xa9t\xc3\xa9");
	ck_assert_str_eq(format_printable(NULL, b, sizeof(b)), "-");
	/* a short buffer never splits a character */
	ck_assert_str_eq(format_printable("ab\xc3\xa9", b, 4), "ab");
	ck_assert_uint_eq(format_width("\xc3\xa9t\xc3\xa9"), 3);
}
END_TEST

START_TEST(test_table)
{
	static const struct table_column cols[] = {
		{ "NAME", false }, { "SIZE", true }, { "LAST", false },
	};
	struct table *t = table_new(cols, 3);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(table_cell(t, "%s", "\xc3\xa9t\xc3\xa9"), 0);
	ck_assert_int_eq(table_cell(t, "%d", 5), 0);
	ck_assert_int_eq(table_cell(t, "%s", "x"), 0);
	ck_assert_int_eq(table_cell(t, "%s", "longer name"), 0);
	ck_assert_int_eq(table_cell(t, "%d", 12345), 0);
	ck_assert_int_eq(table_cell(t, "%s", "a\tb"), 0);
	ck_assert_uint_eq(table_rows(t), 2);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	table_print(t, f);
	ck_assert_int_eq(fclose(f), 0);
	table_free(t);
	ck_assert_str_eq(buf,
			"NAME          SIZE  LAST\n"
			"\xc3\xa9t\xc3\xa9              5  x\n"
			"longer name  12345  a?b\n");
	free(buf);
}
END_TEST

int
main(void)
{
	const TTest *const tc_output[] = { test_escapes, test_document,
		test_formats, test_table, NULL };
	const struct th_tcase tcases[] = {
		{ "output", .tests = tc_output, .timeout = 30 },
	};
	return check_run(th_suite("rpmactl output", tcases, TH_N(tcases)),
			CK_NORMAL);
}
