/*
 * Unit tests for controller/informers against the fake apiserver: a skipped object becomes a
 * Warning Event on that object (reason, kind, name, uid, the detail in the message), and Events
 * are rate-limited by a token bucket on a fake clock. Failing informers are counted in
 * etcd_operator_watch_restarts_total and turn readiness red only after the grace period, with
 * the kind, namespace and HTTP status in the reason; a recovery turns it green again.
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

#include "api/names.h"
#include "controller/controller.h"
#include "controller/informers.h"
#include "plan/nodeloss.h"
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
	struct eo_metrics *reg;
	struct eo_operator_metrics om;
	struct eo_ready ready;
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
	f->reg = eo_metrics_new();
	if (!f->reg || eo_operator_metrics_init(&f->om, f->reg, "test") != 0)
		return -1;
	eo_ready_init(&f->ready, "starting");
	eo_ready_set(&f->ready, true, NULL);
	f->r = eo_informer_reporter_new(&(struct eo_informer_reporter_opts){
	    .rec = f->rec, .om = &f->om, .ready = &f->ready, .now_ms = now_ms});
	*state = f;
	return f->rec && f->r ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	eo_informer_reporter_free(f->r);
	eo_ready_destroy(&f->ready);
	eo_metrics_free(f->reg);
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

static double restarts(struct fx *f, const char *kind)
{
	const char *v[1] = {kind};

	return eo_metric_value(eo_metrics_series(f->om.watch_restarts, v));
}

/* The informer's view of one failure in a row that started `failing_ms` ago. */
static void fail_watch(struct fx *f, const char *kind, const char *ns, unsigned long n,
		       long long failing_ms, eo_kube_err rc, int http)
{
	struct eo_informer_source src = {f->r, kind, "v1"};
	struct eo_kube_informer_failure fl = {
	    .op = "watch",
	    .ns = ns,
	    .rc = rc,
	    .http_status = http,
	    .reason = http == 403 ? "Forbidden" : "",
	    .message = "pods is forbidden",
	    .consecutive = rc == EO_KUBE_EGONE ? 0 : n,
	    .failing_ms = rc == EO_KUBE_EGONE ? 0 : failing_ms,
	};

	eo_informer_report_failure(&src, &fl);
}

static void test_failing_watch_turns_readiness_red_after_grace(void **state)
{
	struct fx *f = *state;
	struct eo_informer_source pods = {f->r, "Pod", "v1"};
	char why[EO_READY_REASON_MAX];

	/* Expiries are restarts but not failures. */
	fail_watch(f, "Pod", "tenant", 0, 0, EO_KUBE_EGONE, 410);
	assert_true(restarts(f, "Pod") == 1.0);
	assert_true(eo_ready_check(&f->ready, why, sizeof(why)));

	/* 403s inside the grace period: counted, still ready. */
	fail_watch(f, "Pod", "tenant", 1, 0, EO_KUBE_EFORBIDDEN, 403);
	fake_now += 30000;
	fail_watch(f, "Pod", "tenant", 2, 30000, EO_KUBE_EFORBIDDEN, 403);
	assert_true(restarts(f, "Pod") == 3.0);
	assert_true(eo_ready_check(&f->ready, why, sizeof(why)));

	/* Past the grace period: red, and the reason names the watch and the status. */
	fake_now += 31000;
	fail_watch(f, "Pod", "tenant", 3, 61000, EO_KUBE_EFORBIDDEN, 403);
	assert_false(eo_ready_check(&f->ready, why, sizeof(why)));
	assert_non_null(strstr(why, "watch of Pod in tenant failing for 61s"));
	assert_non_null(strstr(why, "403 Forbidden"));

	/* Another kind recovering does not clear it; this one recovering does. */
	eo_informer_report_recover(&(struct eo_informer_source){f->r, "Service", "v1"}, "tenant", 1,
				   100);
	assert_false(eo_ready_check(&f->ready, why, sizeof(why)));
	eo_informer_report_recover(&pods, "tenant", 3, 61000);
	assert_true(eo_ready_check(&f->ready, why, sizeof(why)));

	/* A shutdown wins over a recovery. */
	fail_watch(f, "Pod", "tenant", 1, 0, EO_KUBE_EUNAVAILABLE, 503);
	fake_now += 70000;
	fail_watch(f, "Pod", "tenant", 2, 70000, EO_KUBE_EUNAVAILABLE, 503);
	assert_false(eo_ready_check(&f->ready, why, sizeof(why)));
	assert_non_null(strstr(why, "watch 503"));
	eo_ready_set(&f->ready, false, "shutting down");
	eo_informer_report_recover(&pods, "tenant", 2, 70000);
	assert_false(eo_ready_check(&f->ready, why, sizeof(why)));
	assert_string_equal(why, "shutting down");
	assert_true(restarts(f, "Pod") == 6.0);
}

struct keys {
	char v[8][64];
	size_t n;
};

static void collect(void *ud, const char *key)
{
	struct keys *k = ud;

	if (k->n < 8)
		snprintf(k->v[k->n++], sizeof(k->v[0]), "%s", key);
}

static json_t *node_obj(const char *ready, const char *heartbeat, bool cordoned)
{
	json_t *n = json_pack("{s:{s:s}, s:{s:b}, s:{s:[{s:s, s:s, s:s}]}}", "metadata", "name",
			      "n1", "spec", "unschedulable", cordoned, "status", "conditions",
			      "type", "Ready", "status", ready, "lastHeartbeatTime", heartbeat);

	assert_non_null(n);
	return n;
}

/*
 * A Node change enqueues the clusters with a member Pod on that node (from the Pod cache), or
 * a PVC made for it (a member whose Pod is not bound yet), only when something that matters
 * changed: a heartbeat enqueues nothing.
 */
static void test_node_change_enqueues_its_clusters(void **state)
{
	struct eo_cache_set pods = {.n = 1}, pvcs = {.n = 1};
	json_t *o = NULL, *hb = NULL, *down = NULL;
	struct keys k = {0};

	(void)state;
	pods.c[0] = eo_kube_cache_new(EO_LABEL_CLUSTER);
	pvcs.c[0] = eo_kube_cache_new(EO_LABEL_CLUSTER);
	assert_non_null(pods.c[0]);
	assert_non_null(pvcs.c[0]);
	o = json_pack("{s:{s:s, s:s, s:{s:s}}, s:{s:s}}", "metadata", "name", "demo-a", "namespace",
		      "t1", "labels", EO_LABEL_CLUSTER, "demo", "spec", "nodeName", "n1");
	assert_int_equal(eo_kube_cache_upsert(pods.c[0], o, NULL), EO_KUBE_OK);
	json_decref(o);
	o = json_pack("{s:{s:s, s:s, s:{s:s}}, s:{s:s}}", "metadata", "name", "other-a",
		      "namespace", "t1", "labels", EO_LABEL_CLUSTER, "other", "spec", "nodeName",
		      "n2");
	assert_int_equal(eo_kube_cache_upsert(pods.c[0], o, NULL), EO_KUBE_OK);
	json_decref(o);
	o = json_pack("{s:{s:s, s:s, s:{s:s}, s:{s:s}}}", "metadata", "name", "data-late-a",
		      "namespace", "t2", "labels", EO_LABEL_CLUSTER, "late", "annotations",
		      EO_ANNOTATION_SELECTED_NODE, "n1");
	assert_int_equal(eo_kube_cache_upsert(pvcs.c[0], o, NULL), EO_KUBE_OK);
	json_decref(o);

	o = node_obj("True", "2026-06-02T10:00:00Z", false);
	hb = node_obj("True", "2026-06-02T10:00:10Z", false);
	down = node_obj("Unknown", "2026-06-02T10:00:10Z", false);
	assert_int_equal(eo_informer_node_changed(&pods, &pvcs, o, hb, collect, &k), 0);
	assert_int_equal(k.n, 0);
	assert_int_equal(eo_informer_node_changed(&pods, &pvcs, o, down, collect, &k), 2);
	assert_int_equal(k.n, 2);
	assert_string_equal(k.v[0], "t1/demo");
	assert_string_equal(k.v[1], "t2/late");
	k.n = 0;
	assert_int_equal(eo_informer_node_changed(&pods, &pvcs, hb, NULL, collect, &k), 2);
	k.n = 0;
	/* Added healthy (the informer's first list): nothing; added cordoned: its clusters. */
	assert_int_equal(eo_informer_node_changed(&pods, &pvcs, NULL, hb, collect, &k), 0);
	json_decref(hb);
	hb = node_obj("True", "2026-06-02T10:00:10Z", true);
	assert_int_equal(eo_informer_node_changed(&pods, NULL, NULL, hb, collect, &k), 1);
	assert_string_equal(k.v[0], "t1/demo");
	json_decref(o);
	json_decref(hb);
	json_decref(down);
	eo_kube_cache_free(pods.c[0]);
	eo_kube_cache_free(pvcs.c[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_skip_becomes_warning_event, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_events_rate_limited, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failing_watch_turns_readiness_red_after_grace,
					    setup, teardown),
	    cmocka_unit_test(test_node_change_enqueues_its_clusters),
	};

	return cmocka_run_group_tests_name("informer reports", tests, NULL, NULL);
}
