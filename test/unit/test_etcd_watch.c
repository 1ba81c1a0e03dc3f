/*
 * Unit tests of etcd/watch: the response line decoder (created, PUT with its type omitted,
 * DELETE, prev_kv, progress, compaction, error lines, malformed input) and the stream against
 * the fake gateway: responses handed over one by one, the callback ending the watch, a line
 * over the cap, a compacted start, an error line and a refused request, and the end of the
 * stream reported as UNAVAILABLE.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd/watch.h"
#include "support/fake_etcd.h"

#define EP "http://demo-a.demo.ns.svc:2379"

#define HDR	"\"header\":{\"cluster_id\":\"14841639068965178418\",\"revision\":\"12\"}"
#define CREATED "{\"result\":{" HDR ",\"created\":true}}"
/* rev 10: a put of foo=bar (type omitted) and a delete of "gone", one revision */
#define EVENTS                                                                                     \
	"{\"result\":{" HDR ",\"events\":[{\"kv\":{\"key\":\"Zm9v\",\"create_revision\":\"3\","    \
	"\"mod_revision\":\"10\",\"version\":\"2\",\"value\":\"YmFy\",\"lease\":\"7\"}},"          \
	"{\"type\":\"DELETE\",\"kv\":{\"key\":\"Z29uZQ==\",\"mod_revision\":\"10\"},"              \
	"\"prev_kv\":{\"key\":\"Z29uZQ==\",\"create_revision\":\"4\",\"mod_revision\":\"5\","      \
	"\"version\":\"1\",\"value\":\"eA==\"}}]}}"
#define COMPACTED                                                                                  \
	"{\"result\":{" HDR ",\"compact_revision\":\"9\",\"canceled\":true,"                       \
	"\"cancel_reason\":\"mvcc: required revision has been compacted\"}}"
#define ERRLINE                                                                                    \
	"{\"error\":{\"grpc_code\":14,\"http_code\":503,\"message\":\"etcdserver: no leader\"}}"

static void test_parse_lines(void **state)
{
	struct eo_etcd_watch_resp r;
	struct eo_etcd_detail d = {0};
	bool empty;

	(void)state;
	assert_int_equal(eo_etcd_watch_parse_line(CREATED, strlen(CREATED), &r, &empty, &d),
			 EO_ETCD_OK);
	assert_false(empty);
	assert_true(r.created);
	assert_int_equal(r.revision, 12);
	assert_int_equal(r.cluster_id, 14841639068965178418ULL);
	assert_int_equal(r.n, 0);
	eo_etcd_watch_resp_clear(&r);

	assert_int_equal(eo_etcd_watch_parse_line(EVENTS, strlen(EVENTS), &r, &empty, &d),
			 EO_ETCD_OK);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.events[0].type, EO_ETCD_EVENT_PUT);
	assert_string_equal((char *)r.events[0].kv.key, "foo");
	assert_string_equal((char *)r.events[0].kv.value, "bar");
	assert_int_equal(r.events[0].kv.create_revision, 3);
	assert_int_equal(r.events[0].kv.mod_revision, 10);
	assert_int_equal(r.events[0].kv.version, 2);
	assert_int_equal(r.events[0].kv.lease, 7);
	assert_false(r.events[0].has_prev);
	assert_int_equal(r.events[1].type, EO_ETCD_EVENT_DELETE);
	assert_string_equal((char *)r.events[1].kv.key, "gone");
	assert_int_equal(r.events[1].kv.value_len, 0);
	assert_true(r.events[1].has_prev);
	assert_string_equal((char *)r.events[1].prev.value, "x");
	eo_etcd_watch_resp_clear(&r);

	assert_int_equal(eo_etcd_watch_parse_line(COMPACTED, strlen(COMPACTED), &r, &empty, &d),
			 EO_ETCD_OK);
	assert_int_equal(r.compact_revision, 9);
	assert_true(r.canceled);
	assert_string_equal(r.cancel_reason, "mvcc: required revision has been compacted");
	eo_etcd_watch_resp_clear(&r);

	assert_int_equal(eo_etcd_watch_parse_line(ERRLINE, strlen(ERRLINE), &r, &empty, &d),
			 EO_ETCD_UNAVAILABLE);
	assert_int_equal(d.grpc_code, 14);
	assert_string_equal(d.message, "etcdserver: no leader");

	assert_int_equal(eo_etcd_watch_parse_line(" \r", 2, &r, &empty, &d), EO_ETCD_OK);
	assert_true(empty);
}

static void test_parse_refusals(void **state)
{
	static const char *const bad[] = {
	    "not json",
	    "[]",
	    "{}",
	    "{\"result\":[]}",
	    "{\"result\":{\"header\":{\"revision\":\"x\"}}}",
	    "{\"result\":{\"created\":\"yes\"}}",
	    "{\"result\":{\"events\":{}}}",
	    "{\"result\":{\"events\":[{\"type\":\"MOVE\",\"kv\":{}}]}}",
	    "{\"result\":{\"events\":[{\"kv\":{\"key\":\"!!\"}}]}}",
	    "{\"result\":{\"events\":[{}]}}",
	    /* events out of revision order */
	    "{\"result\":{\"events\":[{\"kv\":{\"key\":\"YQ==\",\"mod_revision\":\"5\"}},"
	    "{\"kv\":{\"key\":\"Yg==\",\"mod_revision\":\"4\"}}]}}",
	    "{\"error\":\"flat\"}",
	};
	struct eo_etcd_watch_resp r;
	struct eo_etcd_detail d = {0};
	bool empty;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		eo_etcd_err e = eo_etcd_watch_parse_line(bad[i], strlen(bad[i]), &r, &empty, &d);

		if (e != EO_ETCD_PROTOCOL)
			fail_msg("row %zu: %s", i, eo_etcd_strerror(e));
		assert_int_equal(r.n, 0);
		assert_null(r.events);
	}
}

static void test_request_body(void **state)
{
	char *s = eo_etcd_watch_req_create(42, true, false);

	(void)state;
	assert_string_equal(s, "{\"create_request\":{\"key\":\"AA==\",\"range_end\":\"AA==\","
			       "\"start_revision\":\"42\",\"prev_kv\":true,"
			       "\"progress_notify\":false}}");
	free(s);
}

/* ---- the stream, against the fake gateway ---------------------------------------------- */

struct seen {
	size_t responses, events;
	int64_t revs[8];
	int stop_after; /* 0: never */
};

static int on_resp(void *ud, const struct eo_etcd_watch_resp *r, char *err, size_t cap)
{
	struct seen *s = ud;

	(void)err, (void)cap;
	s->revs[s->responses++ % 8] = r->n > 0 ? r->events[0].kv.mod_revision : 0;
	s->events += r->n;
	return s->stop_after > 0 && (int)s->responses >= s->stop_after ? 1 : 0;
}

static int refuse(void *ud, const struct eo_etcd_watch_resp *r, char *err, size_t cap)
{
	(void)ud;
	if (r->n == 0)
		return 0;
	snprintf(err, cap, "disk full");
	return -1;
}

static eo_etcd_err run(eo_fake_etcd *f, int status, const char *body, size_t line_max,
		       eo_etcd_watch_fn fn, struct seen *s, struct eo_etcd_watch_result *res,
		       struct eo_etcd_detail *d)
{
	const char *eps[] = {EP};
	struct eo_etcd_config cfg = {
	    .endpoints = eps, .n_endpoints = 1, .connect_to = eo_fake_etcd_connect_to(f)};
	struct eo_etcd_watch_opts o = {
	    .cfg = &cfg, .start_revision = 10, .line_max = line_max, .max_duration_ms = 5000};

	eo_fake_etcd_script(f, "watch", status, body);
	return eo_etcd_watch(&o, fn, s, res, d);
}

static void test_stream(void **state)
{
	eo_fake_etcd *f = eo_fake_etcd_start();
	struct eo_etcd_watch_result res;
	struct eo_etcd_detail d;
	struct eo_fake_etcd_request rq;
	struct seen s = {0};

	(void)state;
	assert_non_null(f);
	/* Two responses, then the server ends the stream. */
	assert_int_equal(run(f, 200, CREATED "\n" EVENTS "\n", 0, on_resp, &s, &res, &d),
			 EO_ETCD_UNAVAILABLE);
	assert_non_null(strstr(d.message, "ended"));
	assert_int_equal(s.responses, 2);
	assert_int_equal(s.events, 2);
	assert_int_equal(s.revs[1], 10);
	assert_int_equal(res.responses, 2);
	assert_int_equal(res.last_revision, 12);
	assert_true(eo_fake_etcd_request(f, eo_fake_etcd_requests(f) - 1, &rq));
	assert_string_equal(rq.call, "watch");
	assert_non_null(strstr(rq.body, "\"start_revision\":\"10\""));

	/* The callback ends it: OK. */
	s = (struct seen){.stop_after = 1};
	assert_int_equal(run(f, 200, CREATED "\n" EVENTS "\n", 0, on_resp, &s, &res, &d),
			 EO_ETCD_OK);
	assert_int_equal(s.responses, 1);

	/* The callback refuses: INTERNAL with its message. */
	assert_int_equal(run(f, 200, CREATED "\n" EVENTS "\n", 0, refuse, NULL, &res, &d),
			 EO_ETCD_INTERNAL);
	assert_string_equal(d.message, "disk full");

	/* A line over the cap (the events line is ~400 bytes). */
	s = (struct seen){0};
	assert_int_equal(run(f, 200, CREATED "\n" EVENTS "\n", 200, on_resp, &s, &res, &d),
			 EO_ETCD_TOOBIG);
	assert_int_equal(s.responses, 1);
	assert_non_null(strstr(d.message, "longer than 200"));

	/* Compacted away. */
	s = (struct seen){0};
	assert_int_equal(run(f, 200, CREATED "\n" COMPACTED "\n", 0, on_resp, &s, &res, &d),
			 EO_ETCD_COMPACTED);
	assert_int_equal(res.compact_revision, 9);
	assert_non_null(strstr(d.message, "oldest available 9"));

	/* An error line in the stream, and a refused request. */
	assert_int_equal(run(f, 200, CREATED "\n" ERRLINE "\n", 0, on_resp, &s, &res, &d),
			 EO_ETCD_UNAVAILABLE);
	assert_string_equal(d.message, "etcdserver: no leader");
	assert_int_equal(run(f, 400,
			     "{\"error\":\"etcdserver: permission denied\",\"code\":7,"
			     "\"message\":\"etcdserver: permission denied\"}",
			     0, on_resp, &s, &res, &d),
			 EO_ETCD_AUTH);
	assert_int_equal(d.http_status, 400);
	eo_fake_etcd_stop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_lines),
	    cmocka_unit_test(test_parse_refusals),
	    cmocka_unit_test(test_request_body),
	    cmocka_unit_test(test_stream),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
