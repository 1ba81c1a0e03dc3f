/*
 * Unit tests for kube/watch: event type names and streaming against the fake apiserver (query,
 * ERROR 410, HTTP 410, objects over the cap or too deep skipped, garbage, callback stop, cancel
 * from another thread).
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
#include <unistd.h>

#include "api/meta.h"
#include "support/fake_apiserver.h"
#include "kube/watch.h"

/* ---- parsing ---------------------------------------------------------- */

static void test_type_names(void **state)
{
	(void)state;
	assert_string_equal(eo_kube_watch_type_name(EO_KUBE_WATCH_ADDED), "ADDED");
	assert_string_equal(eo_kube_watch_type_name(EO_KUBE_WATCH_DELETED), "DELETED");
	assert_string_equal(eo_kube_watch_type_name(EO_KUBE_WATCH_ERROR), "ERROR");
}

/* ---- streaming against the fake apiserver ----------------------------- */

enum mode { M_TWO_EVENTS, M_ERROR_410, M_HTTP_410, M_BIG_LINE, M_GARBAGE, M_STREAM };

struct server {
	pthread_mutex_t mu;
	enum mode mode;
	char uri[1024];
	char watch[8], bookmarks[8], timeout[8], rv[32], selector[128];
};

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct server *s = ud;
	const char *v;

	pthread_mutex_lock(&s->mu);
	snprintf(s->uri, sizeof(s->uri), "%s", rq->raw_uri);
#define GRAB(field, key)                                                                           \
	v = eo_kube_fake_arg(rq, key);                                                             \
	snprintf(s->field, sizeof(s->field), "%s", v ? v : "")
	GRAB(watch, "watch");
	GRAB(bookmarks, "allowWatchBookmarks");
	GRAB(timeout, "timeoutSeconds");
	GRAB(rv, "resourceVersion");
	GRAB(selector, "labelSelector");
#undef GRAB
	switch (s->mode) {
	case M_TWO_EVENTS:
		rs->body = strdup("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
				  "\"resourceVersion\":\"6\"}}}\n"
				  "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":"
				  "{\"resourceVersion\":\"9\"}}}\n"
				  "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\","
				  "\"resourceVersion\":\"10\"}}}\n");
		break;
	case M_ERROR_410:
		rs->body =
		    strdup("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
			   "\"reason\":\"Expired\",\"message\":\"too old\"}}\n");
		break;
	case M_HTTP_410:
		rs->status = 410;
		rs->body = strdup("{\"kind\":\"Status\",\"code\":410,\"reason\":\"Gone\","
				  "\"message\":\"resource version too old\"}");
		break;
	case M_BIG_LINE: {
		/* A small event, one over the 1 KiB cap, one too deep for jansson, one more. */
		size_t cap = 64u << 10, n = 0;
		char *b = malloc(cap);

		n += (size_t)snprintf(b + n, cap - n,
				      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":"
				      "\"a\",\"resourceVersion\":\"6\"}}}\n"
				      "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":"
				      "\"big\",\"namespace\":\"ns1\",\"uid\":\"u-big\","
				      "\"resourceVersion\":\"7\"},\"spec\":\"");
		memset(b + n, 'x', 4096);
		n += 4096;
		n += (size_t)snprintf(b + n, cap - n,
				      "\"}}\n{\"type\":\"ADDED\",\"object\":{\"metadata\":"
				      "{\"name\":\"deep\",\"resourceVersion\":\"8\"},\"spec\":");
		for (int i = 0; i < 3000; i++)
			b[n++] = '[';
		for (int i = 0; i < 3000; i++)
			b[n++] = ']';
		snprintf(b + n, cap - n,
			 "}}\n{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":"
			 "\"a\",\"resourceVersion\":\"9\"}}}\n");
		rs->body = b;
		break;
	}
	case M_GARBAGE:
		rs->body = strdup("{\"type\":\"ADDED\",\"object\":{}}\nnot json\n");
		break;
	case M_STREAM:
		rs->stream = true;
		break;
	}
	pthread_mutex_unlock(&s->mu);
}

struct events {
	int n;
	enum eo_kube_watch_type types[8];
	char rvs[8][16];
	int stop_after;
};

static int on_event(void *ud, enum eo_kube_watch_type type, json_t *obj)
{
	struct events *e = ud;

	if (e->n < 8) {
		e->types[e->n] = type;
		snprintf(e->rvs[e->n], sizeof(e->rvs[0]), "%s",
			 eo_meta_resource_version(obj) ? eo_meta_resource_version(obj) : "");
	}
	e->n++;
	return e->stop_after && e->n >= e->stop_after;
}

struct fixture {
	struct server srv;
	eo_kube_fake *fake;
	eo_kube_client *c;
	eo_kube_watch *w;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	eo_kube_config *cfg = NULL;

	pthread_mutex_init(&fx->srv.mu, NULL);
	fx->fake = eo_kube_fake_start(handler, &fx->srv);
	if (!fx->fake ||
	    eo_kube_config_new(eo_kube_fake_url(fx->fake), "t", NULL, &cfg, NULL) != EO_KUBE_OK ||
	    eo_kube_client_new(cfg, NULL, &fx->c, NULL) != EO_KUBE_OK)
		return -1;
	fx->w = eo_kube_watch_new(fx->c);
	*state = fx;
	return fx->w ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	eo_kube_watch_free(fx->w);
	eo_kube_client_free(fx->c);
	eo_kube_fake_stop(fx->fake);
	pthread_mutex_destroy(&fx->srv.mu);
	free(fx);
	return 0;
}

static const struct eo_kube_resource pods = {"v1", "pods", "ns1", NULL};

static void test_stream_events_and_query(void **state)
{
	struct fixture *fx = *state;
	struct eo_kube_watch_opts o = {
	    .resource_version = "5", .timeout_seconds = 7, .label_selector = "app in (etcd)"};
	struct events ev = {0};
	struct eo_kube_error err;

	fx->srv.mode = M_TWO_EVENTS;
	/* The server ends the stream after the events: a normal end. */
	assert_int_equal(eo_kube_watch_run(fx->w, &pods, &o, on_event, &ev, &err), EO_KUBE_OK);
	assert_int_equal(ev.n, 3);
	assert_int_equal(ev.types[0], EO_KUBE_WATCH_ADDED);
	assert_int_equal(ev.types[1], EO_KUBE_WATCH_BOOKMARK);
	assert_int_equal(ev.types[2], EO_KUBE_WATCH_DELETED);
	assert_string_equal(ev.rvs[1], "9");
	assert_string_equal(fx->srv.watch, "1");
	assert_string_equal(fx->srv.bookmarks, "true");
	assert_string_equal(fx->srv.timeout, "7");
	assert_string_equal(fx->srv.rv, "5");
	assert_string_equal(fx->srv.selector, "app in (etcd)");
	assert_non_null(strstr(fx->srv.uri, "/api/v1/namespaces/ns1/pods?watch=1&"));
	assert_non_null(strstr(fx->srv.uri, "labelSelector=app%20in%20%28etcd%29"));
}

static void test_error_event_410_is_gone(void **state)
{
	struct fixture *fx = *state;
	struct eo_kube_watch_opts o = {.resource_version = "1"};
	struct events ev = {0};
	struct eo_kube_error err;

	fx->srv.mode = M_ERROR_410;
	assert_int_equal(eo_kube_watch_run(fx->w, &pods, &o, on_event, &ev, &err), EO_KUBE_EGONE);
	assert_int_equal(ev.n, 0); /* ERROR events never reach the callback */
	assert_int_equal(err.code, 410);
	assert_string_equal(err.reason, "Expired");
}

static void test_http_410_is_gone(void **state)
{
	struct fixture *fx = *state;
	struct events ev = {0};
	struct eo_kube_error err;

	fx->srv.mode = M_HTTP_410;
	assert_int_equal(eo_kube_watch_run(fx->w, &pods, NULL, on_event, &ev, &err), EO_KUBE_EGONE);
	assert_int_equal(err.http_status, 410);
	assert_string_equal(err.reason, "Gone");
	/* Without a version the query carries none. */
	assert_string_equal(fx->srv.rv, "");
	assert_string_equal(fx->srv.timeout, "300");
}

struct skips {
	int n, opened;
	enum eo_kube_watch_type types[4];
	eo_kube_err why[4];
	struct eo_kube_objref refs[4];
};

static struct skips skipped;

static void on_skip(void *ud, const struct eo_kube_watch_skip *sk)
{
	(void)ud;
	if (skipped.n < 4) {
		skipped.types[skipped.n] = sk->type;
		skipped.why[skipped.n] = sk->why;
		skipped.refs[skipped.n] = *sk->ref;
	}
	skipped.n++;
}

static void on_open(void *ud)
{
	(void)ud;
	skipped.opened++;
}

/* An object over the cap and one too deep to decode are skipped, with their identity; the
 * events around them still arrive and the stream is not ended. */
static void test_oversized_and_deep_objects_skipped(void **state)
{
	struct fixture *fx = *state;
	struct eo_kube_watch_opts o = {.max_object = 1024, .on_skip = on_skip, .on_open = on_open};
	struct events ev = {0};
	struct eo_kube_error err;

	memset(&skipped, 0, sizeof(skipped));
	fx->srv.mode = M_BIG_LINE;
	assert_int_equal(eo_kube_watch_run(fx->w, &pods, &o, on_event, &ev, &err), EO_KUBE_OK);
	assert_int_equal(ev.n, 2);
	assert_int_equal(ev.types[0], EO_KUBE_WATCH_ADDED);
	assert_int_equal(ev.types[1], EO_KUBE_WATCH_DELETED);
	assert_string_equal(ev.rvs[1], "9");
	assert_int_equal(skipped.n, 2);
	assert_int_equal(skipped.types[0], EO_KUBE_WATCH_MODIFIED);
	assert_int_equal(skipped.why[0], EO_KUBE_ETOOLARGE);
	assert_string_equal(skipped.refs[0].name, "big");
	assert_string_equal(skipped.refs[0].ns, "ns1");
	assert_string_equal(skipped.refs[0].uid, "u-big");
	assert_string_equal(skipped.refs[0].rv, "7");
	assert_int_equal(skipped.types[1], EO_KUBE_WATCH_ADDED);
	assert_int_equal(skipped.why[1], EO_KUBE_ETOOLARGE); /* 6 KiB of brackets */
	assert_string_equal(skipped.refs[1].name, "deep");
	assert_string_equal(skipped.refs[1].rv, "8");

	/* The same deep object fits when the cap allows it but still does not decode. */
	memset(&skipped, 0, sizeof(skipped));
	ev = (struct events){0};
	o.max_object = 0;
	assert_int_equal(eo_kube_watch_run(fx->w, &pods, &o, on_event, &ev, &err), EO_KUBE_OK);
	assert_int_equal(ev.n, 3);
	assert_int_equal(ev.types[1], EO_KUBE_WATCH_MODIFIED);
	assert_int_equal(skipped.n, 1);
	assert_string_equal(skipped.refs[0].name, "deep");
	assert_int_equal(skipped.why[0], EO_KUBE_EPROTOCOL); /* jansson stops at depth 2048 */
	assert_int_equal(skipped.opened, 1);
}

/* Text that is not a JSON event breaks the stream's framing: the run ends with EPROTOCOL. */
static void test_garbage_ends_stream(void **state)
{
	struct fixture *fx = *state;
	struct events ev = {0};
	struct eo_kube_error err;

	fx->srv.mode = M_GARBAGE;
	assert_int_equal(eo_kube_watch_run(fx->w, &pods, NULL, on_event, &ev, &err),
			 EO_KUBE_EPROTOCOL);
	assert_int_equal(ev.n, 1);
}

static void test_callback_stop(void **state)
{
	struct fixture *fx = *state;
	struct events ev = {.stop_after = 1};
	struct eo_kube_error err;

	fx->srv.mode = M_TWO_EVENTS;
	assert_int_equal(eo_kube_watch_run(fx->w, &pods, NULL, on_event, &ev, &err),
			 EO_KUBE_ECANCELED);
	assert_int_equal(ev.n, 1);
}

static void *cancel_later(void *p)
{
	struct fixture *fx = p;

	/* Wait until the stream is open and has delivered the pushed event. */
	for (int i = 0; i < 500 && eo_kube_fake_open_streams(fx->fake) == 0; i++)
		usleep(2000);
	eo_kube_fake_push(fx->fake, "{\"type\":\"ADDED\",\"object\":{\"metadata\":"
				    "{\"name\":\"live\",\"resourceVersion\":\"3\"}}}\n");
	usleep(100000);
	eo_kube_watch_cancel(fx->w);
	return NULL;
}

/* Runs last: cancellation is sticky. */
static void test_cancel_from_other_thread(void **state)
{
	struct fixture *fx = *state;
	struct events ev = {0};
	struct eo_kube_error err;
	pthread_t th;

	fx->srv.mode = M_STREAM;
	assert_int_equal(pthread_create(&th, NULL, cancel_later, fx), 0);
	assert_int_equal(eo_kube_watch_run(fx->w, &pods, NULL, on_event, &ev, &err),
			 EO_KUBE_ECANCELED);
	pthread_join(th, NULL);
	assert_int_equal(ev.n, 1);
	assert_string_equal(ev.rvs[0], "3");
	/* Later runs return at once. */
	assert_int_equal(eo_kube_watch_run(fx->w, &pods, NULL, on_event, &ev, &err),
			 EO_KUBE_ECANCELED);
}

int main(void)
{
	const struct CMUnitTest pure[] = {
	    cmocka_unit_test(test_type_names),
	};
	const struct CMUnitTest streams[] = {
	    cmocka_unit_test(test_stream_events_and_query),
	    cmocka_unit_test(test_error_event_410_is_gone),
	    cmocka_unit_test(test_http_410_is_gone),
	    cmocka_unit_test(test_oversized_and_deep_objects_skipped),
	    cmocka_unit_test(test_garbage_ends_stream),
	    cmocka_unit_test(test_callback_stop),
	    cmocka_unit_test(test_cancel_from_other_thread),
	};
	int failed = cmocka_run_group_tests_name("watch parsing", pure, NULL, NULL);

	failed += cmocka_run_group_tests_name("watch streams", streams, setup, teardown);
	return failed;
}
