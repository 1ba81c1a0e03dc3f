/*
 * Unit tests for the act layer's refused writes (controller/act_kube.c and the reconcilers,
 * against a fake apiserver scripted here): a Service create answered 422 and a member Pod create
 * answered 403 become a Warning Event (CreateFailed, with the kind, name, HTTP status and the
 * apiserver's message) and a status write carrying the refusal; a refusal repeated on every retry
 * writes its Event once per interval; a name taken by an object we do not control is a refusal too
 * (and, seen before the create, ForeignObject without a create).
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

#include "api/conditions.h"
#include "api/names.h"
#include "controller/controller.h"
#include "kube/cache.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/events.h"
#include "support/fake_apiserver.h"
#include "support/testutil.h"
#include "support/tu_main.h"

#define QUOTA_MSG                                                                                  \
	"pods \\\"demo-a\\\" is forbidden: exceeded quota: no-pods, requested: pods=1, used: "     \
	"pods=0, limited: pods=0"

struct server {
	pthread_mutex_t mu;
	int event_posts, event_patches, status_patches, creates;
	json_t *events;	     /* every Event POSTed */
	json_t *last_status; /* body of the last status PATCH */
	char status_path[256];
	bool foreign_service; /* services: 409 AlreadyExists, GET returns a foreign one */
	bool foreign_early;   /* ... from the start; else only once a create was answered 409 */
};

static void reply(struct eo_kube_fake_response *rs, int status, const char *body)
{
	rs->status = status;
	rs->body = strdup(body);
}

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct server *s = ud;
	size_t n = strlen(rq->path);

	pthread_mutex_lock(&s->mu);
	if (strcmp(rq->method, "POST") == 0 && strstr(rq->path, "/events") != NULL) {
		s->event_posts++;
		json_array_append_new(s->events, json_loads(rq->body, 0, NULL));
		reply(rs, 201, rq->body);
	} else if (strcmp(rq->method, "PATCH") == 0 && strstr(rq->path, "/events/") != NULL) {
		s->event_patches++;
		reply(rs, 200, "{\"kind\":\"Event\"}");
	} else if (strcmp(rq->method, "PATCH") == 0 && n > 7 &&
		   strcmp(rq->path + n - 7, "/status") == 0) {
		s->status_patches++;
		snprintf(s->status_path, sizeof(s->status_path), "%s", rq->path);
		json_decref(s->last_status);
		s->last_status = json_loads(rq->body, 0, NULL);
		reply(rs, 200, "{}");
	} else if (strcmp(rq->method, "POST") == 0 && strstr(rq->path, "/services") != NULL) {
		s->creates++;
		if (s->foreign_service)
			reply(rs, 409,
			      "{\"kind\":\"Status\",\"code\":409,\"reason\":\"AlreadyExists\","
			      "\"message\":\"services \\\"demo\\\" already exists\"}");
		else
			reply(
			    rs, 422,
			    "{\"kind\":\"Status\",\"code\":422,\"reason\":\"Invalid\",\"message\":"
			    "\"Service \\\"demo\\\" is invalid: metadata.labels: Invalid value: "
			    "\\\"bad key!\\\"\"}");
	} else if (strcmp(rq->method, "GET") == 0 && strstr(rq->path, "/services/demo") != NULL &&
		   s->foreign_service && (s->foreign_early || s->creates > 0)) {
		reply(rs, 200,
		      "{\"kind\":\"Service\",\"metadata\":{\"name\":\"demo\",\"namespace\":"
		      "\"default\",\"uid\":\"someone-else\"}}");
	} else if (strcmp(rq->method, "POST") == 0 && strstr(rq->path, "/pods") != NULL) {
		s->creates++;
		reply(rs, 403,
		      "{\"kind\":\"Status\",\"code\":403,\"reason\":\"Forbidden\",\"message\":"
		      "\"" QUOTA_MSG "\"}");
	} else {
		reply(rs, 404, "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}");
	}
	pthread_mutex_unlock(&s->mu);
}

#define CLUSTER                                                                                    \
	"{\"apiVersion\":\"" EO_API_GROUP_VERSION "\",\"kind\":\"EtcdCluster\",\"metadata\":{"     \
	"\"name\":\"demo\",\"namespace\":\"default\",\"uid\":\"c-uid\",\"generation\":1,"          \
	"\"resourceVersion\":\"5\"},\"spec\":{\"replicas\":1,\"version\":\"3.6.11\","              \
	"\"storage\":{\"size\":\"1Gi\",\"medium\":\"\"},\"progressDeadlineSeconds\":600}}"

struct rig {
	struct server srv;
	eo_kube_fake *fake;
	eo_kube_config *cfg;
	eo_kube_client *kc;
	eo_kube_recorder *rec;
	eo_kube_cache *caches[6];
	struct eo_controller ctl;
};

static int64_t frozen_ms(void *ud)
{
	(void)ud;
	return 1780394400000LL;
}

static void rig_start(struct rig *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->srv.mu, NULL);
	r->srv.events = json_array();
	r->fake = eo_kube_fake_start(handler, &r->srv);
	assert_non_null(r->fake);
	assert_int_equal(eo_kube_config_new(eo_kube_fake_url(r->fake), NULL, NULL, &r->cfg, NULL),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(r->cfg, NULL, &r->kc, NULL), EO_KUBE_OK);
	/* The clock stands still: every repeat falls within the write interval. */
	r->rec = eo_kube_recorder_new(r->kc, &(struct eo_kube_recorder_opts){.now_ms = frozen_ms});
	assert_non_null(r->rec);
	for (size_t i = 0; i < 6; i++) {
		r->caches[i] = eo_kube_cache_new(EO_LABEL_CLUSTER);
		assert_non_null(r->caches[i]);
	}
	r->ctl = (struct eo_controller){
	    .kc = r->kc,
	    .rec = r->rec,
	    .clusters = {{r->caches[0]}, 1},
	    .members = {{r->caches[1]}, 1},
	    .pods = {{r->caches[2]}, 1},
	    .pvcs = {{r->caches[3]}, 1},
	    .services = {{r->caches[4]}, 1},
	    .pdbs = {{r->caches[5]}, 1},
	    .build = {.cluster_domain = "cluster.local"},
	};
}

static void rig_stop(struct rig *r)
{
	eo_kube_recorder_free(r->rec);
	eo_kube_client_free(r->kc);
	eo_kube_fake_stop(r->fake);
	for (size_t i = 0; i < 6; i++)
		eo_kube_cache_free(r->caches[i]);
	json_decref(r->srv.events);
	json_decref(r->srv.last_status);
	pthread_mutex_destroy(&r->srv.mu);
}

static void upsert(eo_kube_cache *c, const char *s)
{
	json_t *o = tu_json(s);

	assert_int_equal(eo_kube_cache_upsert(c, o, NULL), EO_KUBE_OK);
	json_decref(o);
}

static const json_t *status_cond(const json_t *patch, const char *type)
{
	return eo_condition_find(json_object_get(patch, "status"), type);
}

/* The Service create is refused on the very first pass: Event, and a status all the same. */
static void test_service_create_refused(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	const json_t *ev = NULL, *d = NULL;

	(void)state;
	rig_start(&r);
	upsert(r.caches[0], CLUSTER);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_true(out.error);
	assert_int_equal(r.srv.event_posts, 1);
	ev = json_array_get(r.srv.events, 0);
	assert_string_equal(json_string_value(json_object_get(ev, "type")), "Warning");
	assert_string_equal(json_string_value(json_object_get(ev, "reason")), "CreateFailed");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(ev, "involvedObject"), "kind")),
	    "EtcdCluster");
	assert_string_equal(json_string_value(json_object_get(ev, "message")),
			    "creating Service demo failed: HTTP 422: Service \"demo\" is invalid: "
			    "metadata.labels: Invalid value: \"bad key!\"");
	assert_int_equal(r.srv.status_patches, 1);
	assert_non_null(strstr(r.srv.status_path, "/etcdclusters/demo/status"));
	d = status_cond(r.srv.last_status, EO_COND_DEGRADED);
	assert_non_null(d);
	assert_string_equal(json_string_value(json_object_get(d, "reason")), "CreateFailed");
	assert_string_equal(json_string_value(json_object_get(d, "status")), "True");
	assert_non_null(
	    json_object_get(json_object_get(r.srv.last_status, "status"), "readyMembers"));

	/* Ten more refusals in a row: one more create each, no new Event write. */
	for (int i = 0; i < 10; i++)
		eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_int_equal(r.srv.creates, 11);
	assert_int_equal(r.srv.event_posts, 1);
	assert_int_equal(r.srv.event_patches, 0);
	rig_stop(&r);
}

/*
 * A Service of the same name that is not ours, created between the read and the create (a
 * race): a refusal, not "the cache lags" forever.
 */
static void test_service_name_taken(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	const json_t *ev = NULL;

	(void)state;
	rig_start(&r);
	r.srv.foreign_service = true;
	upsert(r.caches[0], CLUSTER);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_true(out.error);
	assert_int_equal(r.srv.event_posts, 1);
	ev = json_array_get(r.srv.events, 0);
	assert_string_equal(json_string_value(json_object_get(ev, "message")),
			    "creating Service demo failed: HTTP 409: Service demo already exists "
			    "and is not controlled by this EtcdCluster (its controller: none); "
			    "delete or rename it");
	assert_int_equal(r.srv.status_patches, 1);
	rig_stop(&r);
}

/*
 * A Service of the same name that is not ours and that the cache does not see (no operator
 * labels: a user's): read live, refused as ForeignObject before any create; no patch.
 */
static void test_service_name_held(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	const json_t *ev = NULL, *a = NULL;

	(void)state;
	rig_start(&r);
	r.srv.foreign_service = true;
	r.srv.foreign_early = true;
	upsert(r.caches[0], CLUSTER);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(out.requeue_ms, 30000);
	assert_int_equal(r.srv.creates, 0);
	assert_int_equal(r.srv.event_posts, 1);
	ev = json_array_get(r.srv.events, 0);
	assert_string_equal(json_string_value(json_object_get(ev, "reason")), "ForeignObject");
	assert_int_equal(r.srv.status_patches, 1);
	a = status_cond(r.srv.last_status, EO_COND_AVAILABLE);
	assert_non_null(a);
	assert_string_equal(json_string_value(json_object_get(a, "reason")), "ForeignObject");
	assert_non_null(strstr(json_string_value(json_object_get(a, "message")),
			       "Service demo is not controlled by this EtcdCluster (its "
			       "controller: none)"));
	rig_stop(&r);
}

/* A member's Pod create refused by a quota: Events on the member and its cluster, Ready. */
static void test_pod_create_refused(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	const json_t *ready = NULL;
	bool on_member = false, on_cluster = false;
	size_t i;
	json_t *ev = NULL;

	(void)state;
	rig_start(&r);
	upsert(r.caches[0], CLUSTER);
	upsert(r.caches[1],
	       "{\"apiVersion\":\"" EO_API_GROUP_VERSION "\",\"kind\":\"EtcdMember\",\"metadata\":{"
	       "\"name\":\"demo-a\",\"namespace\":\"default\",\"uid\":\"m-uid\",\"generation\":1,"
	       "\"resourceVersion\":\"9\",\"labels\":{\"" EO_LABEL_CLUSTER "\":\"demo\"},"
	       "\"finalizers\":[\"" EO_FINALIZER_MEMBER_CLEANUP "\"],\"ownerReferences\":[{"
	       "\"apiVersion\":\"" EO_API_GROUP_VERSION "\",\"kind\":\"EtcdCluster\",\"name\":"
	       "\"demo\",\"uid\":\"c-uid\",\"controller\":true}]},\"spec\":{\"clusterName\":"
	       "\"demo\",\"version\":\"3.6.11\",\"bootstrap\":true,\"initialCluster\":"
	       "\"demo-a=http://demo-a.demo.default.svc.cluster.local:2380\",\"clusterToken\":"
	       "\"default-demo-c-uid\"},\"status\":{\"isVoter\":true}}");
	upsert(r.caches[3],
	       "{\"metadata\":{\"name\":\"data-demo-a\",\"namespace\":\"default\",\"labels\":{"
	       "\"" EO_LABEL_CLUSTER "\":\"demo\"},\"ownerReferences\":[{\"apiVersion\":"
	       "\"" EO_API_GROUP_VERSION "\",\"kind\":\"EtcdMember\",\"name\":\"demo-a\","
	       "\"uid\":\"m-uid\",\"controller\":true}]},\"status\":{\"phase\":\"Bound\"}}");
	eo_member_reconcile(&r.ctl, "default", "demo-a", &out);
	assert_true(out.error);
	assert_int_equal(r.srv.creates, 1);
	assert_int_equal(r.srv.event_posts, 2);
	json_array_foreach(r.srv.events, i, ev)
	{
		const char *kind = json_string_value(
		    json_object_get(json_object_get(ev, "involvedObject"), "kind"));

		assert_string_equal(json_string_value(json_object_get(ev, "reason")),
				    "CreateFailed");
		assert_string_equal(json_string_value(json_object_get(ev, "message")),
				    "creating Pod demo-a failed: HTTP 403: pods \"demo-a\" is "
				    "forbidden: exceeded quota: no-pods, requested: pods=1, used: "
				    "pods=0, limited: pods=0");
		on_member |= strcmp(kind, "EtcdMember") == 0;
		on_cluster |= strcmp(kind, "EtcdCluster") == 0;
	}
	assert_true(on_member);
	assert_true(on_cluster);
	assert_int_equal(r.srv.status_patches, 1);
	assert_non_null(strstr(r.srv.status_path, "/etcdmembers/demo-a/status"));
	ready = status_cond(r.srv.last_status, EO_COND_READY);
	assert_non_null(ready);
	assert_string_equal(json_string_value(json_object_get(ready, "reason")), "CreateFailed");
	assert_string_equal(json_string_value(json_object_get(ready, "status")), "False");
	rig_stop(&r);
}

TU_MAIN(test_service_create_refused, test_service_name_taken, test_service_name_held,
	test_pod_create_refused)
