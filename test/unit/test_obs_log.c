/*
 * Unit tests for obs/log: line format, quoting and escaping, the line cap (with UTF-8 and
 * context pairs), levels, the sink, and whole lines from concurrent writers on stderr.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "obs/log.h"

/* 2023-11-14T22:13:20.123Z */
static const struct timespec TS = {.tv_sec = 1700000000, .tv_nsec = 123456789};

static size_t fmt(char *buf, size_t cap, enum eo_log_level lvl, const struct eo_log_ctx *ctx,
		  const char *msg, const char *const *kv, size_t nkv)
{
	return eo_log_format(buf, cap, &TS, lvl, ctx, msg, kv, nkv, false);
}

static void test_basic_line(void **state)
{
	char buf[EO_LOG_LINE_MAX];
	struct eo_log_ctx ctx;
	const char *kv[] = {"action", "add", "attempt", "3"};
	size_t n;

	(void)state;
	eo_log_ctx_init(&ctx);
	eo_log_ctx_cluster(&ctx, "default", "my-etcd");
	eo_log_ctx_add(&ctx, "member", "my-etcd-7xq2k");
	n = fmt(buf, sizeof(buf), EO_LOG_INFO, &ctx, "member added", kv, 2);
	assert_string_equal(buf, "ts=2023-11-14T22:13:20.123Z level=info msg=\"member added\" "
				 "cluster=default/my-etcd member=my-etcd-7xq2k action=add "
				 "attempt=3\n");
	assert_int_equal(n, strlen(buf));

	n = fmt(buf, sizeof(buf), EO_LOG_ERROR, NULL, "", NULL, 0);
	assert_string_equal(buf, "ts=2023-11-14T22:13:20.123Z level=error msg=\"\"\n");
	assert_int_equal(n, strlen(buf));
}

static void test_value_quoting_and_escaping(void **state)
{
	static const struct {
		const char *value;
		const char *rendered;
	} cases[] = {
	    {"plain", "plain"},
	    {"ns/name", "ns/name"},
	    {"", "\"\""},
	    {NULL, "\"\""},
	    {"two words", "\"two words\""},
	    {"a=b", "\"a=b\""},
	    {"say \"hi\"", "\"say \\\"hi\\\"\""},
	    {"back\\slash", "\"back\\\\slash\""},
	    {"line1\nline2\r\tend", "\"line1\\nline2\\r\\tend\""},
	    {"bell\x01\x7f", "\"bell\\u0001\\u007f\""},
	    {"h\xc3\xa9llo", "\"h\xc3\xa9llo\""},	   /* valid UTF-8 passes through */
	    {"bad\xff\xc3", "\"bad\\ufffd\\ufffd\""},	   /* invalid bytes are replaced */
	    {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""}, /* a UTF-16 surrogate is invalid */
	    {"\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""},  /* 4-byte sequence */
	};
	char buf[EO_LOG_LINE_MAX], want[256];
	const char *kv[2];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		kv[0] = "k";
		kv[1] = cases[i].value;
		fmt(buf, sizeof(buf), EO_LOG_DEBUG, NULL, "m", kv, 1);
		/* msg is always quoted. */
		snprintf(want, sizeof(want),
			 "ts=2023-11-14T22:13:20.123Z level=debug msg=\"m\" k=%s\n",
			 cases[i].rendered);
		assert_string_equal(buf, want);
	}
	/* The message uses the same escaping. */
	fmt(buf, sizeof(buf), EO_LOG_WARN, NULL, "quote \" and\nnewline", NULL, 0);
	assert_string_equal(buf, "ts=2023-11-14T22:13:20.123Z level=warn msg=\"quote \\\" "
				 "and\\nnewline\"\n");
}

static void test_key_sanitising(void **state)
{
	char buf[EO_LOG_LINE_MAX];
	const char *kv[] = {"bad key=\"x\"", "v", "", "w", NULL, "z", "ok.key-1/a_b", "y"};

	(void)state;
	fmt(buf, sizeof(buf), EO_LOG_INFO, NULL, "m", kv, 4);
	assert_string_equal(buf, "ts=2023-11-14T22:13:20.123Z level=info msg=\"m\" "
				 "bad_key__x_=v _=w _=z ok.key-1/a_b=y\n");
}

/* Every line is well formed: starts with ts=, one newline at the end, balanced quotes. */
static void assert_well_formed(const char *line, size_t n)
{
	size_t i, quotes = 0;

	assert_true(n > 0);
	assert_int_equal(line[n - 1], '\n');
	assert_memory_equal(line, "ts=", 3);
	for (i = 0; i + 1 < n; i++) {
		assert_int_not_equal(line[i], '\n');
		if (line[i] == '\\') {
			i++;
			continue;
		}
		if (line[i] == '"')
			quotes++;
	}
	assert_int_equal(quotes % 2, 0);
}

static void test_cap_long_message(void **state)
{
	static char msg[10000];
	char buf[EO_LOG_LINE_MAX + 64];
	const char *kv[] = {"after", "lost"};
	const char *suffix = "\" truncated=true\n";
	size_t n;

	(void)state;
	memset(msg, 'a', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	/* A cap beyond EO_LOG_LINE_MAX is clamped. */
	n = eo_log_format(buf, sizeof(buf), &TS, EO_LOG_INFO, NULL, msg, kv, 1, false);
	assert_true(n <= EO_LOG_LINE_MAX - 1);
	assert_true(n > EO_LOG_LINE_MAX - 40);
	assert_int_equal(strlen(buf), n);
	assert_string_equal(buf + n - strlen(suffix), suffix);
	assert_null(strstr(buf, "after="));
	assert_well_formed(buf, n);
}

static void test_cap_small_buffer_and_escapes(void **state)
{
	char buf[128];
	const char *kv[] = {"v",
			    "\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\""
			    "\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\""};
	size_t n;

	(void)state;
	n = eo_log_format(buf, sizeof(buf), &TS, EO_LOG_INFO, NULL, "m", kv, 1, false);
	assert_true(n < sizeof(buf));
	assert_well_formed(buf, n);
	/* An escape is never cut in half: the value ends with a complete \" then the quote. */
	assert_non_null(strstr(buf, "\\\"\" truncated=true\n"));
	/* Below the documented minimum nothing is written. */
	buf[0] = 'X';
	assert_int_equal(eo_log_format(buf, 63, &TS, EO_LOG_INFO, NULL, "m", NULL, 0, false), 0);
	assert_int_equal(buf[0], 'X');
}

static void test_cap_keeps_utf8_whole(void **state)
{
	static char msg[6000];
	char buf[EO_LOG_LINE_MAX];
	const char *start, *end;
	size_t i, n;

	(void)state;
	/* "é" is two bytes; an odd offset would split one. */
	for (i = 0; i + 2 < sizeof(msg); i += 2) {
		msg[i] = (char)0xc3;
		msg[i + 1] = (char)0xa9;
	}
	msg[i] = '\0';
	n = eo_log_format(buf, sizeof(buf), &TS, EO_LOG_INFO, NULL, msg, NULL, 0, false);
	assert_well_formed(buf, n);
	start = strstr(buf, "msg=\"") + 5;
	end = strstr(buf, "\" truncated=true\n");
	assert_non_null(end);
	assert_true(end > start);
	assert_int_equal((size_t)(end - start) % 2, 0);
	for (; start < end; start += 2) {
		assert_int_equal((unsigned char)start[0], 0xc3);
		assert_int_equal((unsigned char)start[1], 0xa9);
	}
}

static void test_ctx_pairs_whole_or_dropped(void **state)
{
	char big[EO_LOG_CTX_MAX];
	char buf[EO_LOG_LINE_MAX];
	struct eo_log_ctx ctx;
	struct eo_log_ctx narrower;
	size_t i;

	(void)state;
	eo_log_ctx_init(&ctx);
	eo_log_ctx_add(&ctx, "cluster", "ns/a");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	eo_log_ctx_add(&ctx, "huge", big); /* cannot fit: dropped whole */
	assert_true(ctx.truncated);
	assert_int_equal(ctx.npairs, 1);
	assert_string_equal(ctx.buf, " cluster=ns/a");
	fmt(buf, sizeof(buf), EO_LOG_INFO, &ctx, "m", NULL, 0);
	assert_string_equal(buf, "ts=2023-11-14T22:13:20.123Z level=info msg=\"m\" cluster=ns/a "
				 "truncated=true\n");

	/* A copy extends independently of the original. */
	eo_log_ctx_init(&ctx);
	eo_log_ctx_addf(&ctx, "member", "m-%d", 7);
	narrower = ctx;
	eo_log_ctx_add(&narrower, "action", "promote learner");
	assert_string_equal(ctx.buf, " member=m-7");
	assert_string_equal(narrower.buf, " member=m-7 action=\"promote learner\"");

	/* Too many pairs: the excess is dropped and flagged. */
	eo_log_ctx_init(&ctx);
	for (i = 0; i < EO_LOG_CTX_PAIRS + 3; i++)
		eo_log_ctx_add(&ctx, "k", "v");
	assert_int_equal(ctx.npairs, EO_LOG_CTX_PAIRS);
	assert_true(ctx.truncated);
}

static void test_ctx_cut_at_pair_boundary(void **state)
{
	static char msg[EO_LOG_LINE_MAX];
	char buf[EO_LOG_LINE_MAX];
	struct eo_log_ctx ctx;
	size_t n, msglen;

	(void)state;
	eo_log_ctx_init(&ctx);
	eo_log_ctx_add(&ctx, "first", "1111111111");
	eo_log_ctx_add(&ctx, "second", "2222222222");
	/*
	 * Leave room for the first pair only: the writer's limit is 4096 - 16 (suffix) - 1 (NUL)
	 * = 4079 bytes; the line holds 44 bytes before the message, the closing quote and then
	 * " first=1111111111" (17 bytes); " second=2222222222" (18) must not fit.
	 */
	msglen = 4010;
	memset(msg, 'm', msglen);
	msg[msglen] = '\0';
	n = fmt(buf, sizeof(buf), EO_LOG_INFO, &ctx, msg, NULL, 0);
	assert_well_formed(buf, n);
	assert_non_null(strstr(buf, " first=1111111111 truncated=true\n"));
	assert_null(strstr(buf, "second"));
}

static void test_level_parse(void **state)
{
	static const struct {
		const char *in;
		int rc;
		enum eo_log_level lvl;
	} cases[] = {
	    {"debug", 0, EO_LOG_DEBUG},	 {"INFO", 0, EO_LOG_INFO},   {"warn", 0, EO_LOG_WARN},
	    {"Warning", 0, EO_LOG_WARN}, {"error", 0, EO_LOG_ERROR}, {"panic", 0, EO_LOG_ERROR},
	    {"0", 0, EO_LOG_INFO},	 {"1", 0, EO_LOG_DEBUG},     {"10", 0, EO_LOG_DEBUG},
	    {"", -1, EO_LOG_INFO},	 {"trace", -1, EO_LOG_INFO}, {"-1", -1, EO_LOG_INFO},
	    {"1x", -1, EO_LOG_INFO},	 {"12345", -1, EO_LOG_INFO},
	};
	enum eo_log_level lvl;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		lvl = EO_LOG_INFO;
		assert_int_equal(eo_log_level_parse(cases[i].in, &lvl), cases[i].rc);
		assert_int_equal(lvl, cases[i].lvl);
	}
	assert_int_equal(eo_log_level_parse(NULL, &lvl), -1);
	assert_string_equal(eo_log_level_name(EO_LOG_WARN), "warn");
}

struct capture {
	char lines[64][EO_LOG_LINE_MAX];
	size_t n;
};

static void capture_sink(void *ud, const char *line, size_t len)
{
	struct capture *c = ud;

	if (c->n < 64) {
		memcpy(c->lines[c->n], line, len);
		c->lines[c->n][len] = '\0';
		c->n++;
	}
}

static void test_levels_and_sink(void **state)
{
	static struct capture cap;
	struct eo_log_ctx ctx;

	(void)state;
	memset(&cap, 0, sizeof(cap));
	eo_log_set_sink(capture_sink, &cap);
	eo_log_set_level(EO_LOG_WARN);
	assert_false(eo_log_enabled(EO_LOG_INFO));
	assert_true(eo_log_enabled(EO_LOG_ERROR));

	eo_log_ctx_init(&ctx);
	eo_log_ctx_cluster(&ctx, "ns", "c");
	eo_log_info(&ctx, "dropped %d", 1);
	eo_log_debug(NULL, "dropped too");
	eo_log_kv(EO_LOG_INFO, NULL, "dropped", "k", "v", NULL);
	assert_int_equal(cap.n, 0);

	eo_log_warn(&ctx, "retrying in %ds", 42);
	eo_log_kv(EO_LOG_ERROR, &ctx, "member remove failed", "member", "c-1", "error",
		  "etcdserver: unhealthy cluster", NULL);
	assert_int_equal(cap.n, 2);
	assert_non_null(strstr(cap.lines[0], " level=warn msg=\"retrying in 42s\" cluster=ns/c\n"));
	assert_non_null(strstr(cap.lines[1], " level=error msg=\"member remove failed\" "
					     "cluster=ns/c member=c-1 error=\"etcdserver: "
					     "unhealthy cluster\"\n"));

	/* More pairs than EO_LOG_KV_MAX: the rest is dropped and flagged. */
	eo_log_kv(EO_LOG_ERROR, NULL, "many", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5", "f",
		  "6", "g", "7", "h", "8", "i", "9", "j", "10", "k", "11", "l", "12", "m", "13",
		  "n", "14", "o", "15", "p", "16", "q", "17", NULL);
	assert_int_equal(cap.n, 3);
	assert_non_null(strstr(cap.lines[2], " p=16 truncated=true\n"));
	assert_null(strstr(cap.lines[2], "q=17"));

	/* A NULL value ends the list. */
	eo_log_kv(EO_LOG_ERROR, NULL, "odd", "lonely", NULL);
	assert_non_null(strstr(cap.lines[3], "msg=\"odd\" lonely=\"\"\n"));

	/* Past the cap too: an odd list's NULL value is its end, nothing after it is read. */
	eo_log_kv(EO_LOG_ERROR, NULL, "many odd", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5",
		  "f", "6", "g", "7", "h", "8", "i", "9", "j", "10", "k", "11", "l", "12", "m",
		  "13", "n", "14", "o", "15", "p", "16", "q", NULL);
	assert_int_equal(cap.n, 5);
	assert_non_null(strstr(cap.lines[4], " p=16 truncated=true\n"));

	eo_log_set_sink(NULL, NULL);
	eo_log_set_level(EO_LOG_INFO);
}

#define THREADS		 4
#define LINES_PER_THREAD 300

static void *writer(void *arg)
{
	char id[8];
	struct eo_log_ctx ctx;
	int i;

	snprintf(id, sizeof(id), "t%d", (int)(intptr_t)arg);
	eo_log_ctx_init(&ctx);
	eo_log_ctx_add(&ctx, "thread", id);
	for (i = 0; i < LINES_PER_THREAD; i++)
		eo_log_kv(EO_LOG_INFO, &ctx, "concurrent line with some padding to make it longer",
			  "padding", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
			  NULL);
	return NULL;
}

static void test_concurrent_writers_on_stderr(void **state)
{
	char path[] = "/tmp/eo-log-XXXXXX";
	char line[EO_LOG_LINE_MAX];
	pthread_t th[THREADS];
	int fd, saved, i, per[THREADS] = {0};
	size_t total = 0;
	FILE *f;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, writer, (void *)(intptr_t)i), 0);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	close(fd);

	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		const char *t = strstr(line, " thread=t");

		assert_well_formed(line, strlen(line));
		assert_non_null(t);
		i = t[9] - '0';
		assert_true(i >= 0 && i < THREADS);
		assert_non_null(strstr(line, "msg=\"concurrent line with some padding"));
		per[i]++;
		total++;
	}
	fclose(f);
	unlink(path);
	assert_int_equal(total, THREADS * LINES_PER_THREAD);
	for (i = 0; i < THREADS; i++)
		assert_int_equal(per[i], LINES_PER_THREAD);
}

TU_MAIN(test_basic_line, test_value_quoting_and_escaping, test_key_sanitising,
	test_cap_long_message, test_cap_small_buffer_and_escapes, test_cap_keeps_utf8_whole,
	test_ctx_pairs_whole_or_dropped, test_ctx_cut_at_pair_boundary, test_level_parse,
	test_levels_and_sink, test_concurrent_writers_on_stderr)
