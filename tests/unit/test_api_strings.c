// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_api_strings.c -- rpma_err_2str and rpma_utils_conn_event_2str for
 * every value and for values they do not know (1.x's, the default symbol
 * version; test_abi.c has 0.12's)
 */

#include <limits.h>
#include <string.h>

#include "api_helpers.h"

/* the texts of rpma_err_2str(3) */
static const struct {
	int code;
	const char *text;
} errors[] = {
	{ RPMA_E_UNKNOWN, "Unknown error" },
	{ RPMA_E_NOSUPP, "Not supported" },
	{ RPMA_E_PROVIDER, "Provider error occurred" },
	{ RPMA_E_NOMEM, "Out of memory" },
	{ RPMA_E_INVAL, "Invalid argument" },
	{ RPMA_E_NO_COMPLETION, "No next completion available" },
	{ RPMA_E_NO_EVENT, "No next event available" },
	{ RPMA_E_AGAIN, "Temporary error" },
	{ RPMA_E_SHARED_CHANNEL, "Completion channel is shared" },
	{ RPMA_E_NOT_SHARED_CHNL, "Completion channel is not shared" },
};
#define N_ERRORS (sizeof(errors) / sizeof(errors[0]))

START_TEST(err_values_are_abi)
{
	ck_assert_int_eq(RPMA_E_UNKNOWN, -100000);
	ck_assert_int_eq(RPMA_E_NOSUPP, -100001);
	ck_assert_int_eq(RPMA_E_PROVIDER, -100002);
	ck_assert_int_eq(RPMA_E_NOMEM, -100003);
	ck_assert_int_eq(RPMA_E_INVAL, -100004);
	ck_assert_int_eq(RPMA_E_NO_COMPLETION, -100005);
	ck_assert_int_eq(RPMA_E_NO_EVENT, -100006);
	ck_assert_int_eq(RPMA_E_AGAIN, -100007);
	ck_assert_int_eq(RPMA_E_SHARED_CHANNEL, -100008);
	ck_assert_int_eq(RPMA_E_NOT_SHARED_CHNL, -100009);
}
END_TEST

START_TEST(err_every_code)
{
	for (size_t i = 0; i < N_ERRORS; i++) {
		const char *s = rpma_err_2str(errors[i].code);
		ck_assert_ptr_nonnull(s);
		/*
		 * RPMA_E_AGAIN: the man page says "Temporary error", the
		 * library adds ", try again"; only the common start is
		 * checked (reported as a doc/code difference)
		 */
		if (errors[i].code == RPMA_E_AGAIN)
			ck_assert_msg(strncmp(s, errors[i].text,
					strlen(errors[i].text)) == 0,
					"%d: \"%s\"", errors[i].code, s);
		else
			ck_assert_str_eq(s, errors[i].text);
		/* every code has its own text */
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(s, rpma_err_2str(errors[j].code));
	}
}
END_TEST

START_TEST(err_unknown_codes)
{
	const int unknown[] = { 1, -1, 42, INT_MAX, INT_MIN, -99999,
		-100010, -100100, RPMA_E_NOT_SHARED_CHNL - 1,
		RPMA_E_UNKNOWN + 1 };
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		const char *s = rpma_err_2str(unknown[i]);
		ck_assert_ptr_nonnull(s);
		ck_assert_msg(strcmp(s, "Unknown error") == 0, "%d: \"%s\"",
				unknown[i], s);
	}
	/* 0 is no error; any text will do, but never NULL */
	ck_assert_ptr_nonnull(rpma_err_2str(0));
}
END_TEST

/* the texts of rpma_utils_conn_event_2str(3) */
static const struct {
	enum rpma_conn_event event;
	const char *text;
} events[] = {
	{ RPMA_CONN_UNDEFINED, "Undefined connection event" },
	{ RPMA_CONN_ESTABLISHED, "Connection established" },
	{ RPMA_CONN_CLOSED, "Connection closed" },
	{ RPMA_CONN_LOST, "Connection lost" },
	{ RPMA_CONN_REJECTED, "Connection rejected" },
	{ RPMA_CONN_UNREACHABLE, "Connection unreachable" },
};
#define N_EVENTS (sizeof(events) / sizeof(events[0]))

START_TEST(event_values_are_abi)
{
	ck_assert_int_eq(RPMA_CONN_UNDEFINED, -1);
	ck_assert_int_eq(RPMA_CONN_ESTABLISHED, 0);
	ck_assert_int_eq(RPMA_CONN_CLOSED, 1);
	ck_assert_int_eq(RPMA_CONN_LOST, 2);
	ck_assert_int_eq(RPMA_CONN_REJECTED, 3);
	ck_assert_int_eq(RPMA_CONN_UNREACHABLE, 4);
	/* nothing beyond 1.x's values: 5 is not an event */
	ck_assert_str_eq(rpma_utils_conn_event_2str((enum rpma_conn_event)5),
			"Unsupported connection event");
}
END_TEST

START_TEST(event_every_value)
{
	for (size_t i = 0; i < N_EVENTS; i++) {
		const char *s = rpma_utils_conn_event_2str(events[i].event);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(s, events[i].text);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(s, events[j].text);
	}
}
END_TEST

START_TEST(event_unknown_values)
{
	const int unknown[] = { -2, 5, 6, 100, INT_MAX, INT_MIN };
	const char *first = NULL;
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		const char *s = rpma_utils_conn_event_2str(
				(enum rpma_conn_event)unknown[i]);
		ck_assert_ptr_nonnull(s);
		/* one fixed text, different from every known event's */
		if (first == NULL)
			first = s;
		ck_assert_str_eq(s, first);
		for (size_t j = 0; j < N_EVENTS; j++)
			ck_assert_str_ne(s, events[j].text);
		ck_assert_ptr_nonnull(strstr(s, "upported"));
	}
}
END_TEST

int
main(void)
{
	const TTest *const tc_err_2str[] = { err_values_are_abi, err_every_code,
		err_unknown_codes, NULL };
	const TTest *const tc_conn_event_2str[] = { event_values_are_abi,
		event_every_value, event_unknown_values, NULL };
	const struct th_tcase tcases[] = {
		{ "err_2str", .tests = tc_err_2str },
		{ "conn_event_2str", .tests = tc_conn_event_2str },
	};
	return api_run(th_suite("api_strings", tcases, TH_N(tcases)));
}
