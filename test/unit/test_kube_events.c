/*
 * Unit tests for kube/events: the Event builder (golden JSON, message cap at
 * a UTF-8 boundary, bad types) and the recorder's create / dedup-patch /
 * window / fallback behaviour against the fake apiserver.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "kube/events.h"
#include "support/fake_apiserver.h"
#include "support/testutil.h"
#include "support/tu_main.h"

static json_t *cluster(void)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s}}", "apiVersion",
			 "etcd-operator.cozystack.io/v1alpha2", "kind", "EtcdCluster", "metadata",
			 "name", "main", "namespace", "db", "uid", "uid-1", "resourceVersion",
			 "42");
}

static void test_desired_golden(void **state)
{
	json_t *inv = cluster();
	json_t *ev = eo_kube_event_build(inv, "Normal", "MemberAdded", "added member main-abcde",
					 "etcd-operator", "op-0_1", 1700000000123LL);
	json_t *want = json_loads(
	    "{\"apiVersion\":\"v1\",\"kind\":\"Event\","
	    "\"metadata\":{\"name\":\"main.17979cfe3d7ed4c0\",\"namespace\":\"db\"},"
	    "\"involvedObject\":{\"apiVersion\":\"etcd-operator.cozystack.io/v1alpha2\","
	    "\"kind\":\"EtcdCluster\",\"name\":\"main\",\"namespace\":\"db\",\"uid\":\"uid-1\","
	    "\"resourceVersion\":\"42\"},"
	    "\"reason\":\"MemberAdded\",\"message\":\"added member main-abcde\","
	    "\"type\":\"Normal\",\"source\":{\"component\":\"etcd-operator\"},"
	    "\"firstTimestamp\":\"2023-11-14T22:13:20Z\","
	    "\"lastTimestamp\":\"2023-11-14T22:13:20Z\",\"count\":1,"
	    "\"reportingComponent\":\"etcd-operator\",\"reportingInstance\":\"op-0_1\"}",
	    0, NULL);

	(void)state;
	assert_non_null(ev);
	assert_non_null(want);
	tu_assert_json_equal(ev, want, "event");
	json_decref(ev);
	json_decref(want);

	/* Only Normal and Warning are valid types. */
	assert_null(eo_kube_event_build(inv, "Error", "X", "m", "c", NULL, 0));
	assert_null(eo_kube_event_build(inv, "Normal", NULL, "m", "c", NULL, 0));
	json_decref(inv);
}

static void test_build_caps_message_at_utf8_boundary(void **state)
{
	json_t *inv = cluster(), *ev;
	char msg[EO_KUBE_EVENT_MESSAGE_MAX + 16];
	const char *got;

	(void)state;
	/* 1023 ASCII bytes then a 3-byte character crossing the cap. */
	memset(msg, 'a', EO_KUBE_EVENT_MESSAGE_MAX - 1);
	strcpy(msg + EO_KUBE_EVENT_MESSAGE_MAX - 1, "\xe2\x82\xac tail");
	ev = eo_kube_event_build(inv, "Warning", "R", msg, "c", NULL, 0);
	assert_non_null(ev);
	got = json_string_value(json_object_get(ev, "message"));
	assert_int_equal(strlen(got), EO_KUBE_EVENT_MESSAGE_MAX - 1);
	/* Cluster-scoped objects get their events in "default". */
	json_object_del(json_object_get(inv, "metadata"), "namespace");
	json_decref(ev);
	ev = eo_kube_event_build(inv, "Warning", "R", "m", "c", NULL, 0);
	assert_string_equal(eo_meta_namespace(ev), "default");
	json_decref(ev);
	json_decref(inv);
}

struct server {
	pthread_mutex_t mu;
	int posts, patches;
	bool patch_404;
	char last_path[256];
	json_t *last_body;
};

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct server *s = ud;

	pthread_mutex_lock(&s->mu);
	snprintf(s->last_path, sizeof(s->last_path), "%s", rq->path);
	json_decref(s->last_body);
	s->last_body = json_loads(rq->body, 0, NULL);
	if (strcmp(rq->method, "POST") == 0) {
		s->posts++;
		rs->status = 201;
		rs->body = strdup(rq->body);
	} else if (strcmp(rq->method, "PATCH") == 0) {
		s->patches++;
		if (s->patch_404) {
			rs->status = 404;
			rs->body =
			    strdup("{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}");
		} else {
			rs->body = strdup("{\"kind\":\"Event\"}");
		}
	} else {
		rs->status = 405;
	}
	pthread_mutex_unlock(&s->mu);
}

static void test_recorder_dedup(void **state)
{
	struct server srv = {0};
	eo_kube_fake *fake;
	eo_kube_config *cfg = NULL;
	eo_kube_client *c = NULL;
	eo_kube_recorder *rec;
	int64_t clock_ms = 1700000000000LL;
	struct eo_kube_recorder_opts o = {
	    .instance = "op-0",
	    .dedup_window_ms = 60000,
	    .min_write_interval_ms = -1, /* every repeat is written; see the rate limit test */
	    .max_tracked = 2,
	    .now_ms = tu_clock_now,
	    .clock_ud = &clock_ms,
	};
	json_t *inv = cluster();
	struct eo_kube_error err;
	char first_name[128];

	(void)state;
	pthread_mutex_init(&srv.mu, NULL);
	fake = eo_kube_fake_start(handler, &srv);
	assert_non_null(fake);
	assert_int_equal(eo_kube_config_new(eo_kube_fake_url(fake), NULL, NULL, &cfg, NULL),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(cfg, NULL, &c, NULL), EO_KUBE_OK);
	rec = eo_kube_recorder_new(c, &o);
	assert_non_null(rec);

	/* First event: created in the object's namespace. */
	assert_int_equal(eo_kube_event(rec, inv, "Normal", "MemberAdded", &err, "added %s", "m-1"),
			 EO_KUBE_OK);
	assert_int_equal(srv.posts, 1);
	assert_string_equal(srv.last_path, "/api/v1/namespaces/db/events");
	assert_string_equal(json_string_value(json_object_get(srv.last_body, "message")),
			    "added m-1");
	snprintf(first_name, sizeof(first_name), "%s", eo_meta_name(srv.last_body));

	/* The same event again: a patch of count on the same Event. */
	clock_ms += 5000;
	assert_int_equal(eo_kube_event(rec, inv, "Normal", "MemberAdded", &err, "added %s", "m-1"),
			 EO_KUBE_OK);
	assert_int_equal(srv.posts, 1);
	assert_int_equal(srv.patches, 1);
	assert_int_equal(strncmp(srv.last_path, "/api/v1/namespaces/db/events/", 29), 0);
	assert_string_equal(srv.last_path + 29, first_name);
	assert_int_equal(json_integer_value(json_object_get(srv.last_body, "count")), 2);
	assert_string_equal(json_string_value(json_object_get(srv.last_body, "lastTimestamp")),
			    "2023-11-14T22:13:25Z");
	clock_ms += 5000;
	eo_kube_event(rec, inv, "Normal", "MemberAdded", &err, "added m-1");
	assert_int_equal(json_integer_value(json_object_get(srv.last_body, "count")), 3);

	/* A different message is a different event. */
	assert_int_equal(eo_kube_event(rec, inv, "Normal", "MemberAdded", &err, "added m-2"),
			 EO_KUBE_OK);
	assert_int_equal(srv.posts, 2);

	/* Outside the window a repeat starts a new Event. */
	clock_ms += 61000;
	eo_kube_event(rec, inv, "Normal", "MemberAdded", &err, "added m-2");
	assert_int_equal(srv.posts, 3);

	/* If the Event is gone on the server, the patch falls back to a create. */
	srv.patch_404 = true;
	clock_ms += 1000;
	assert_int_equal(eo_kube_event(rec, inv, "Normal", "MemberAdded", &err, "added m-2"),
			 EO_KUBE_OK);
	assert_int_equal(srv.patches, 3);
	assert_int_equal(srv.posts, 4);

	/* Bad type: rejected before any request. */
	assert_int_equal(eo_kube_event(rec, inv, "Error", "X", &err, "m"), EO_KUBE_EINVALID);
	assert_int_equal(srv.posts, 4);

	eo_kube_recorder_free(rec);
	eo_kube_client_free(c);
	eo_kube_fake_stop(fake);
	json_decref(srv.last_body);
	json_decref(inv);
	pthread_mutex_destroy(&srv.mu);
}

/*
 * A failure that repeats on every retry: repeats within the write interval are only counted,
 * and the first repeat after it writes their total, so the apiserver sees one call per interval.
 */
static void test_recorder_rate_limit(void **state)
{
	struct server srv = {0};
	eo_kube_fake *fake;
	eo_kube_config *cfg = NULL;
	eo_kube_client *c = NULL;
	eo_kube_recorder *rec;
	int64_t clock_ms = 1700000000000LL;
	struct eo_kube_recorder_opts o = {
	    .min_write_interval_ms = 30000,
	    .now_ms = tu_clock_now,
	    .clock_ud = &clock_ms,
	};
	json_t *inv = cluster();

	(void)state;
	pthread_mutex_init(&srv.mu, NULL);
	fake = eo_kube_fake_start(handler, &srv);
	assert_non_null(fake);
	assert_int_equal(eo_kube_config_new(eo_kube_fake_url(fake), NULL, NULL, &cfg, NULL),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(cfg, NULL, &c, NULL), EO_KUBE_OK);
	rec = eo_kube_recorder_new(c, &o);
	assert_non_null(rec);

	assert_int_equal(eo_kube_event(rec, inv, "Warning", "CreateFailed", NULL, "quota"),
			 EO_KUBE_OK);
	assert_int_equal(srv.posts, 1);
	/* Ten fast retries: counted, not written. */
	for (int i = 0; i < 10; i++) {
		clock_ms += 2000;
		assert_int_equal(eo_kube_event(rec, inv, "Warning", "CreateFailed", NULL, "quota"),
				 EO_KUBE_OK);
	}
	assert_int_equal(srv.posts, 1);
	assert_int_equal(srv.patches, 0);
	/* A different message is not held back by the first one's interval. */
	assert_int_equal(eo_kube_event(rec, inv, "Warning", "CreateFailed", NULL, "other"),
			 EO_KUBE_OK);
	assert_int_equal(srv.posts, 2);
	/* 32 s after the write: one patch carrying all eleven (+1) occurrences. */
	clock_ms += 12000;
	assert_int_equal(eo_kube_event(rec, inv, "Warning", "CreateFailed", NULL, "quota"),
			 EO_KUBE_OK);
	assert_int_equal(srv.patches, 1);
	assert_int_equal(json_integer_value(json_object_get(srv.last_body, "count")), 12);
	/* And the interval starts again from that write. */
	clock_ms += 1000;
	eo_kube_event(rec, inv, "Warning", "CreateFailed", NULL, "quota");
	assert_int_equal(srv.patches, 1);
	clock_ms += 30000;
	eo_kube_event(rec, inv, "Warning", "CreateFailed", NULL, "quota");
	assert_int_equal(srv.patches, 2);
	assert_int_equal(json_integer_value(json_object_get(srv.last_body, "count")), 14);

	eo_kube_recorder_free(rec);
	eo_kube_client_free(c);
	eo_kube_fake_stop(fake);
	json_decref(srv.last_body);
	json_decref(inv);
	pthread_mutex_destroy(&srv.mu);
}

TU_MAIN(test_desired_golden, test_build_caps_message_at_utf8_boundary, test_recorder_dedup,
	test_recorder_rate_limit)
