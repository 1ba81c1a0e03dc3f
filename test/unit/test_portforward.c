/* The WebSocket framing of kube/portforward.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/portforward.h"

static void test_accept_rfc6455(void **state)
{
	char out[64];

	(void)state;
	/* The example of RFC 6455 section 1.3. */
	eo_ws_accept("dGhlIHNhbXBsZSBub25jZQ==", out);
	assert_string_equal(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

static void test_frame_roundtrip(void **state)
{
	static const size_t sizes[] = {0, 1, 124, 125, 126, 65534, 65535, 65536, 70000};
	static const uint8_t mask[4] = {0x11, 0x22, 0x33, 0x44}, ch = 0;
	size_t i, j, cap = 70000 + 32;
	uint8_t *p = malloc(cap), *f = malloc(cap);

	(void)state;
	assert_non_null(p);
	assert_non_null(f);
	for (i = 0; i < cap; i++)
		p[i] = (uint8_t)(i * 7);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct eo_ws_parsed pf;
		size_t n = sizes[i], len = eo_ws_frame(EO_WS_OP_BINARY, mask, &ch, 1, p, n, f, cap);
		size_t want_h = n + 1 < 126 ? 6 : n + 1 <= 0xffff ? 8 : 14;

		assert_int_equal(len, want_h + n + 1);
		assert_int_equal(f[0], 0x82);
		/* Every prefix of the frame is "need more". */
		assert_int_equal(eo_ws_parse(f, len - 1, 1u << 20, &pf), 0);
		assert_int_equal(eo_ws_parse(f, 1, 1u << 20, &pf), 0);
		assert_int_equal(eo_ws_parse(f, len, 1u << 20, &pf), 1);
		assert_int_equal(pf.opcode, EO_WS_OP_BINARY);
		assert_true(pf.fin && pf.masked);
		assert_int_equal(pf.header_len, want_h);
		assert_int_equal(pf.len, n + 1);
		for (j = 0; j < n + 1; j++) {
			uint8_t b = f[pf.header_len + j] ^ pf.mask[j & 3];

			if (b != (j == 0 ? ch : p[j - 1]))
				fail_msg("size %zu: byte %zu is %u", n, j, b);
		}
		/* Over the cap: refused, not waited for. */
		if (n > 10)
			assert_int_equal(eo_ws_parse(f, len, 10, &pf), -1);
	}
	/* Too small an output buffer. */
	assert_int_equal(eo_ws_frame(EO_WS_OP_BINARY, mask, NULL, 0, p, 100, f, 50), 0);
	free(p);
	free(f);
}

static void test_parse_server_frames(void **state)
{
	static const struct {
		const char *hex_name;
		uint8_t bytes[16];
		size_t n;
		int rc;
		uint8_t op;
		uint64_t len;
	} cases[] = {
	    {"unmasked binary 3", {0x82, 0x03, 0x00, 'h', 'i'}, 5, 1, EO_WS_OP_BINARY, 3},
	    {"close with status", {0x88, 0x02, 0x03, 0xe8}, 4, 1, EO_WS_OP_CLOSE, 2},
	    {"ping, no payload", {0x89, 0x00}, 2, 1, EO_WS_OP_PING, 0},
	    {"16-bit length, header cut", {0x82, 0x7e, 0x01}, 3, 0, 0, 0},
	    {"reserved bit", {0xc2, 0x00}, 2, -1, 0, 0},
	    {"control frame over 125", {0x89, 0x7e, 0x00, 0x7e}, 4, -1, 0, 0},
	    {"fragmented control frame", {0x09, 0x00}, 2, -1, 0, 0},
	    {"one byte", {0x82}, 1, 0, 0, 0},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct eo_ws_parsed f;
		int rc = eo_ws_parse(cases[i].bytes, cases[i].n, 1u << 20, &f);

		if (rc != cases[i].rc)
			fail_msg("%s: rc %d", cases[i].hex_name, rc);
		if (rc == 1 && (f.opcode != cases[i].op || f.len != cases[i].len || f.masked))
			fail_msg("%s: op %u len %llu", cases[i].hex_name, f.opcode,
				 (unsigned long long)f.len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_accept_rfc6455),
	    cmocka_unit_test(test_frame_roundtrip),
	    cmocka_unit_test(test_parse_server_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
