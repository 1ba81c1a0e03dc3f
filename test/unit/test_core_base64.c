/*
 * Unit tests of core/base64 (OpenSSL underneath): the RFC 4648 vectors both
 * ways, padding and its absence, invalid characters, '=' in the middle,
 * white space, the URL-safe alphabet, and the decoded length never counting
 * padding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base64.h"

#define STRICT	0u
#define SPACE	EO_BASE64_SPACE
#define LENIENT EO_BASE64_LENIENT

static void test_encode_decode_vectors(void **state)
{
	static const struct {
		const char *plain;
		size_t len;
		const char *b64;
	} cases[] = {
	    {"", 0, ""},
	    {"f", 1, "Zg=="},
	    {"fo", 2, "Zm8="},
	    {"foo", 3, "Zm9v"},
	    {"foob", 4, "Zm9vYg=="},
	    {"fooba", 5, "Zm9vYmE="},
	    {"foobar", 6, "Zm9vYmFy"},
	    {"health", 6, "aGVhbHRo"},
	    {"\0\xff\xfe", 3, "AP/+"},
	    {"\0", 1, "AA=="},
	    {"\0\0", 2, "AAA="},
	};
	static const unsigned modes[] = {STRICT, SPACE, LENIENT, SPACE | LENIENT};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *enc = eo_base64_encode(cases[i].plain, cases[i].len);

		assert_non_null(enc);
		assert_string_equal(enc, cases[i].b64);
		free(enc);
		for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
			unsigned char *out = NULL;
			size_t len = 99;

			assert_int_equal(eo_base64_decode(cases[i].b64, strlen(cases[i].b64),
							  modes[m], &out, &len),
					 0);
			assert_int_equal(len, cases[i].len);
			assert_memory_equal(out, cases[i].plain, len);
			assert_int_equal(out[len], 0);
			free(out);
		}
	}
}

static void test_encode_large_is_one_line(void **state)
{
	unsigned char in[300];
	char *enc;
	unsigned char *out = NULL;
	size_t len = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7);
	enc = eo_base64_encode(in, sizeof(in));
	assert_non_null(enc);
	assert_int_equal(strlen(enc), 400);
	assert_null(strchr(enc, '\n'));
	assert_int_equal(eo_base64_decode(enc, strlen(enc), STRICT, &out, &len), 0);
	assert_int_equal(len, sizeof(in));
	assert_memory_equal(out, in, sizeof(in));
	free(out);
	free(enc);
}

/* One row: input, mode, expected result, and on success the bytes. */
struct row {
	const char *name;
	const char *in;
	unsigned mode;
	int rc;
	const char *want;
	size_t want_len;
};

static const struct row rows[] = {
    /* padding */
    {"strict needs padding", "Zm8", STRICT, -EINVAL, NULL, 0},
    {"strict one char", "Z", STRICT, -EINVAL, NULL, 0},
    {"lenient adds padding", "Zm8", LENIENT, 0, "fo", 2},
    {"lenient one pad of two", "Zg=", LENIENT, 0, "f", 1},
    {"lenient extra padding", "Zm9v=", LENIENT, 0, "foo", 3},
    {"lenient one char", "Z", LENIENT, -EINVAL, NULL, 0},
    {"lenient five chars", "Zm9vY", LENIENT, -EINVAL, NULL, 0},
    {"strict three pads", "Z===", STRICT, -EINVAL, NULL, 0},
    {"strict only padding", "====", STRICT, -EINVAL, NULL, 0},
    {"strict pad in the middle", "Zg==Zm8=", STRICT, -EINVAL, NULL, 0},
    {"strict pad inside a group", "Z=g=", STRICT, -EINVAL, NULL, 0},
    {"lenient pad inside a group", "Z=g=", LENIENT, -EINVAL, NULL, 0},
    /* the alphabet */
    {"invalid char", "Zm9v!", LENIENT, -EINVAL, NULL, 0},
    {"invalid char in a group", "Zm!v", STRICT, -EINVAL, NULL, 0},
    {"high byte", "Zm9\xc3", STRICT, -EINVAL, NULL, 0},
    {"url-safe in strict", "AP_-", STRICT, -EINVAL, NULL, 0},
    {"url-safe in lenient", "AP_-", LENIENT, 0, "\0\xff\xfe", 3},
    /* white space */
    {"space refused by default", "Zm9v Yg==", STRICT, -EINVAL, NULL, 0},
    {"leading space refused", "    Zm9v", STRICT, -EINVAL, NULL, 0},
    {"trailing space refused", "Zm9v    ", STRICT, -EINVAL, NULL, 0},
    {"space skipped", " Zm9v\n Yg==\r\n\t", SPACE, 0, "foob", 4},
    {"only space", " \n ", SPACE, 0, "", 0},
    {"space inside a group", "Zm 9v", SPACE, 0, "foo", 3},
    {"space does not complete a group", "Zm9v Y", SPACE, -EINVAL, NULL, 0},
    /* trailing bits past the last byte are ignored, as OpenSSL does */
    {"non-zero trailing bits", "Zh==", STRICT, 0, "f", 1},
};

static void test_decode_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		unsigned char *out = (unsigned char *)"untouched";
		size_t len = 77;
		int rc = eo_base64_decode(r->in, strlen(r->in), r->mode, &out, &len);

		if (rc != r->rc)
			fail_msg("%s: rc %d, want %d", r->name, rc, r->rc);
		if (rc != 0) {
			if (len != 77 || strcmp((const char *)out, "untouched") != 0)
				fail_msg("%s: outputs changed on error", r->name);
			continue;
		}
		if (len != r->want_len || memcmp(out, r->want, len) != 0 || out[len] != 0)
			fail_msg("%s: wrong bytes (len %zu)", r->name, len);
		free(out);
	}
}

static void test_decode_counted_input(void **state)
{
	unsigned char *out = NULL;
	size_t len = 0;

	(void)state;
	/* Only [s, s+len) is read: a longer string is cut where told. */
	assert_int_equal(eo_base64_decode("Zm9vYmFy", 4, STRICT, &out, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(out, "foo", 3);
	free(out);
	/* An embedded NUL is not base64. */
	assert_int_equal(eo_base64_decode("Zm\0v", 4, LENIENT, &out, &len), -EINVAL);
}

static void test_size_limit(void **state)
{
	unsigned char *out = NULL;
	size_t len = 0;

	(void)state;
	assert_null(eo_base64_encode("x", EO_BASE64_MAX + 1));
	assert_int_equal(eo_base64_decode("x", EO_BASE64_MAX + 1, STRICT, &out, &len), -E2BIG);
	assert_null(out);
}

TU_MAIN(test_encode_decode_vectors, test_encode_large_is_one_line, test_decode_rows,
	test_decode_counted_input, test_size_limit)
