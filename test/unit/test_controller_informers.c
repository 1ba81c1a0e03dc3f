/*
 * Unit tests for controller/informers against the fake apiserver: a skipped object becomes a
 * Warning Event on that object (reason, kind, name, uid, the detail in the message), and Events
 * are rate-limited by a token bucket on a fake clock.
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

#include "controller/informers.h"
#include "support/fake_apiserver.h"

struct server {
	pthread_mutex_t mu;
	int posts;
	json_t *last; /* the last Event posted */
};

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct server *s = ud;

	pthread_mutex_lock(&s->mu);
	if (strcmp(rq->method, "POST") == 0 && strstr(rq->path, "/events")) {
		s->posts++;
		json_decref(s->last);
		s->last = json_loads(rq->body, 0, NULL);
		rs->status = 201;
		rs->body = strdup(rq->body);
	} else {
		rs->status = 404;
		rs->body = strdup("{\"kind\":\"Status\",\"code\":404}");
	}
	pthread_mutex_unlock(&s->mu);
}

static int64_t fake_now;

static int64_t now_ms(void *ud)
{
	(void)ud;
	return fake_now;
}

struct fx {
	struct server srv;
	eo_kube_fake *fake;
	eo_kube_client *c;
	eo_kube_recorder *rec;
	struct eo_informer_reporter *r;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	eo_kube_config *cfg = NULL;

	pthread_mutex_init(&f->srv.mu, NULL);
	f->fake = eo_kube_fake_start(handler, &f->srv);
	if (!f->fake ||
	    eo_kube_config_new(eo_kube_fake_url(f->fake), "t", NULL, &cfg, NULL) != EO_KUBE_OK ||
	    eo_kube_client_new(cfg, NULL, &f->c, NULL) != EO_KUBE_OK)
		return -1;
	f->rec = eo_kube_recorder_new(f->c, NULL);
	fake_now = 1000000;
	f->r = eo_informer_reporter_new(
	    &(struct eo_informer_reporter_opts){.rec = f->rec, .now_ms = now_ms});
	*state = f;
	return f->rec && f->r ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	eo_informer_reporter_free(f->r);
	eo_kube_recorder_free(f->rec);
	eo_kube_client_free(f->c);
	eo_kube_fake_stop(f->fake);
	json_decref(f->srv.last);
	pthread_mutex_destroy(&f->srv.mu);
	free(f);
	return 0;
}

static void report(struct fx *f, const char *name, eo_kube_err why)
{
	struct eo_informer_source src = {f->r, "EtcdCluster",
					 "etcd-operator.cozystack.io/v1alpha2"};
	struct eo_kube_objref ref = {.ns = "tenant"};
	struct eo_kube_informer_skip sk = {&ref, why, "object exceeds the 262144-byte cap", 300000};

	snprintf(ref.name, sizeof(ref.name), "%s", name);
	snprintf(ref.uid, sizeof(ref.uid), "uid-%s", name);
	snprintf(ref.rv, sizeof(ref.rv), "7");
	eo_informer_report_skip(&src, &sk);
}

static void test_skip_becomes_warning_event(void **state)
{
	struct fx *f = *state;
	json_t *inv;

	report(f, "huge", EO_KUBE_ETOOLARGE);
	assert_int_equal(f->srv.posts, 1);
	assert_string_equal(json_string_value(json_object_get(f->srv.last, "type")), "Warning");
	assert_string_equal(json_string_value(json_object_get(f->srv.last, "reason")),
			    "ObjectTooLarge");
	assert_non_null(strstr(json_string_value(json_object_get(f->srv.last, "message")),
			       "exceeds the 262144-byte cap"));
	inv = json_object_get(f->srv.last, "involvedObject");
	assert_string_equal(json_string_value(json_object_get(inv, "kind")), "EtcdCluster");
	assert_string_equal(json_string_value(json_object_get(inv, "name")), "huge");
	assert_string_equal(json_string_value(json_object_get(inv, "namespace")), "tenant");
	assert_string_equal(json_string_value(json_object_get(inv, "uid")), "uid-huge");

	report(f, "deep", EO_KUBE_EPROTOCOL);
	assert_int_equal(f->srv.posts, 2);
	assert_string_equal(json_string_value(json_object_get(f->srv.last, "reason")),
			    "ObjectUnreadable");
}

static void test_events_rate_limited(void **state)
{
	struct fx *f = *state;
	char name[32];

	for (int i = 0; i < 25; i++) {
		snprintf(name, sizeof(name), "o-%d", i);
		report(f, name, EO_KUBE_ETOOLARGE);
	}
	assert_int_equal(f->srv.posts, EO_INFORMERS_EVENTS_PER_MIN);
	/* One token comes back every 60 / EVENTS_PER_MIN seconds. */
	fake_now += 60000 / EO_INFORMERS_EVENTS_PER_MIN;
	report(f, "later", EO_KUBE_ETOOLARGE);
	report(f, "later-2", EO_KUBE_ETOOLARGE);
	assert_int_equal(f->srv.posts, EO_INFORMERS_EVENTS_PER_MIN + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_skip_becomes_warning_event, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_events_rate_limited, setup, teardown),
	};

	return cmocka_run_group_tests_name("informer reports", tests, NULL, NULL);
}
