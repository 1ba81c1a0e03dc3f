#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/strbuf.h"
#include "core/util.h"

static void test_appends_and_takes(void **state)
{
	struct eo_strbuf b = EO_STRBUF_INIT(1024);
	size_t len = 0;
	char *s;

	(void)state;
	eo_strbuf_add(&b, "abc");
	eo_strbuf_add_n(&b, "defgh", 2);
	s = eo_strbuf_take(&b, &len);
	assert_non_null(s);
	assert_string_equal(s, "abcde");
	assert_int_equal(len, 5);
	assert_null(b.p);
	free(s);
}

static void test_empty_take_is_empty_string(void **state)
{
	struct eo_strbuf b = EO_STRBUF_INIT(16);
	char *s;

	(void)state;
	s = eo_strbuf_take(&b, NULL);
	assert_non_null(s);
	assert_string_equal(s, "");
	free(s);
}

static void test_cap_counts_the_terminator(void **state)
{
	struct eo_strbuf b = EO_STRBUF_INIT(8);
	char *s;

	(void)state;
	eo_strbuf_add(&b, "1234567"); /* 7 bytes + NUL = 8: fits exactly */
	assert_false(b.failed);
	eo_strbuf_add(&b, "8"); /* would need 9 */
	assert_true(b.failed);
	eo_strbuf_add(&b, ""); /* ignored once failed */
	s = eo_strbuf_take(&b, NULL);
	assert_null(s);
	assert_null(b.p);
}

static void test_growth_past_initial_capacity(void **state)
{
	struct eo_strbuf b = EO_STRBUF_INIT(1 << 20);
	char chunk[100];
	size_t len = 0;
	char *s;
	int i;

	(void)state;
	memset(chunk, 'x', sizeof(chunk));
	for (i = 0; i < 1000; i++)
		eo_strbuf_add_n(&b, chunk, sizeof(chunk));
	s = eo_strbuf_take(&b, &len);
	assert_non_null(s);
	assert_int_equal(len, 100000);
	assert_int_equal(strlen(s), 100000);
	free(s);
}

/* The last non-empty line, blanks and line ends trimmed, cut to the buffer. */
static void test_last_line(void **state)
{
	static const struct {
		const char *in;
		size_t cap;
		const char *want;
	} cases[] = {
	    {NULL, 16, ""},
	    {"", 16, ""},
	    {"\n \r\n", 16, ""},
	    {"one", 16, "one"},
	    {"first\nsecond\n", 16, "second"},
	    {"first\nsecond \r\n\n", 16, "second"},
	    {"a\nlonger line here", 7, "longer"},
	    {"x", 1, ""},
	};
	char out[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(out, 'j', sizeof(out));
		eo_last_line(cases[i].in, out, cases[i].cap);
		if (strcmp(out, cases[i].want) != 0)
			fail_msg("case %zu: got '%s', want '%s'", i, out, cases[i].want);
	}
}

/* EO_FMT takes the size from the array: a long text is cut to fit, NUL included. */
static void test_fmt_into_array_cuts_to_fit(void **state)
{
	struct {
		char message[8];
		char after;
	} r = {.after = 'x'};

	(void)state;
	EO_FMT(r.message, "%s-%d", "member", 42);
	assert_string_equal(r.message, "member-");
	assert_int_equal(r.after, 'x');
}

/* eo_enum_name: the table's entry, the fallback past either end and at a hole. */
static void test_enum_name_falls_back(void **state)
{
	static const char *const names[] = {[0] = "zero", [2] = "two"};

	(void)state;
	assert_string_equal(EO_ENUM_NAME(names, 0, "other"), "zero");
	assert_string_equal(EO_ENUM_NAME(names, 2, "other"), "two");
	assert_string_equal(EO_ENUM_NAME(names, 1, "other"), "other");
	assert_string_equal(EO_ENUM_NAME(names, 3, "other"), "other");
	assert_string_equal(EO_ENUM_NAME(names, -1, "other"), "other");
}

/* eo_capbuf_append: grows past its first allocation, keeps a NUL, refuses past max. */
static void test_capbuf_caps_and_flags_overflow(void **state)
{
	struct eo_capbuf b = {.max = 40000};
	char chunk[30000];

	(void)state;
	memset(chunk, 'a', sizeof(chunk));
	assert_int_equal(eo_capbuf_append(&b, "{}", 2), 2);
	assert_string_equal(b.data, "{}");
	assert_int_equal(eo_capbuf_append(&b, chunk, sizeof(chunk)), sizeof(chunk));
	assert_int_equal(b.len, 2 + sizeof(chunk));
	assert_int_equal(b.data[b.len], '\0');
	assert_false(b.overflow);
	assert_int_equal(eo_capbuf_append(&b, chunk, sizeof(chunk)), 0);
	assert_true(b.overflow);
	assert_int_equal(b.len, 2 + sizeof(chunk));
	assert_true(b.cap <= b.max + 1);
	free(b.data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_last_line),
	    cmocka_unit_test(test_appends_and_takes),
	    cmocka_unit_test(test_empty_take_is_empty_string),
	    cmocka_unit_test(test_cap_counts_the_terminator),
	    cmocka_unit_test(test_growth_past_initial_capacity),
	    cmocka_unit_test(test_fmt_into_array_cuts_to_fit),
	    cmocka_unit_test(test_enum_name_falls_back),
	    cmocka_unit_test(test_capbuf_caps_and_flags_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
