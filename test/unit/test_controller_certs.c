/*
 * Unit tests for controller/certs.c through eo_cluster_reconcile, against the fake apiserver:
 *
 * - cert-manager not installed (the discovery document /apis/cert-manager.io/v1 answers 404,
 *   or is served without the certificates resource): the cluster's status says
 *   CertManagerNotInstalled, nothing is created, and the pass comes back after 30 s;
 *   installing cert-manager (the document lists certificates) is picked up on the next pass
 *   without a restart.
 * - cert-manager installed: the three Certificates are created (POST bodies as desired);
 *   then with the peer's ClusterIssuer missing the status says IssuerNotFound.
 * - a Certificate of that name that the cluster does not control: the create is refused and
 *   Degraded says so.
 * - a new cluster without spec.tls.certificateAuthority gets its own CA: the two Issuers and
 *   the CA Certificate are created and every leaf names the CA Issuer; a running cluster whose
 *   Certificates an older operator made from the spec's issuer keeps that issuer (no CA
 *   object created, no issuerRef patched).
 *
 * The apiserver is a map from path to object: GET answers from it, POST adds (409 when the
 * name is taken), PATCH of a status merges nothing and answers the object; every request is
 * logged.
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
#include "controller/certs.h"
#include "controller/controller.h"
#include "desired/certificate.h"
#include "kube/cache.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/events.h"
#include "plan/certs.h"
#include "support/fake_apiserver.h"
#include "support/testutil.h"

#define T0    1780394400
#define CERTS "/apis/cert-manager.io/v1/namespaces/default/certificates"
/* The discovery document of an installed cert-manager (abridged). */
#define DISCOVERY                                                                                  \
	"{'kind':'APIResourceList','groupVersion':'cert-manager.io/v1','resources':["              \
	"{'name':'certificates','namespaced':true,'kind':'Certificate'},"                          \
	"{'name':'issuers','namespaced':true,'kind':'Issuer'}]}"
#define CLUSTER_PATH                                                                               \
	"/apis/etcd-operator.cozystack.io/v1alpha2/namespaces/default/etcdclusters/demo"

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

struct api {
	pthread_mutex_t mu;
	json_t *store; /* path -> object */
	json_t *log;   /* [{method, path, body}] */
};

struct rig {
	struct api api;
	eo_kube_fake *fake;
	eo_kube_config *cfg;
	eo_kube_client *kc;
	eo_kube_recorder *rec;
	eo_kube_cache *clusters, *empty;
	struct eo_controller ctl;
};

static void reply(struct eo_kube_fake_response *rs, int status, const json_t *o)
{
	rs->status = status;
	rs->body = json_dumps(o, JSON_COMPACT);
}

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct api *a = ud;
	json_t *body = json_loads(rq->body, 0, NULL), *have = NULL;
	char key[1024];

	snprintf(key, sizeof(key), "%s", rq->path);
	if (strcmp(rq->method, "POST") == 0 && body != NULL)
		snprintf(
		    key, sizeof(key), "%s/%s", rq->path,
		    json_string_value(json_object_get(json_object_get(body, "metadata"), "name")));
	pthread_mutex_lock(&a->mu);
	json_array_append_new(a->log, json_pack("{s:s, s:s, s:O}", "method", rq->method, "path",
						key, "body", body ? body : json_null()));
	have = json_object_get(a->store, key);
	if (strstr(rq->path, "/events") != NULL) {
		reply(rs, 201, body ? body : json_object());
	} else if (strcmp(rq->method, "GET") == 0 && have != NULL) {
		reply(rs, 200, have);
	} else if (strcmp(rq->method, "GET") == 0) {
		rs->status = 404;
		rs->body = tu_status_body(404, "NotFound", "not found");
	} else if (strcmp(rq->method, "POST") == 0 && have != NULL) {
		rs->status = 409;
		rs->body = tu_status_body(409, "AlreadyExists", "already exists");
	} else if (strcmp(rq->method, "POST") == 0) {
		json_object_set(a->store, key, body);
		reply(rs, 201, body);
	} else if (strcmp(rq->method, "PATCH") == 0) {
		rs->status = 200;
		rs->body = strdup("{}");
	} else {
		rs->status = 405;
		rs->body = tu_status_body(405, "MethodNotAllowed", "no");
	}
	pthread_mutex_unlock(&a->mu);
	json_decref(body);
}

static time_t frozen_now(void)
{
	return T0;
}

#define ISSUERS "/apis/cert-manager.io/v1/namespaces/default/issuers"

/* ca: spec.tls.certificateAuthority ("" absent); status: the cluster's status. */
static json_t *cluster_with(const char *ca, const char *status)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdCluster',"
		 "'metadata':{'name':'demo','namespace':'default','uid':'c-uid','generation':1,"
		 "'resourceVersion':'7','labels':{'etcd-operator.cozystack.io/cluster':'demo'}},"
		 "'spec':{'replicas':1,'version':'3.6.11','storage':{'size':'1Gi','medium':''},"
		 "'progressDeadlineSeconds':600,'tls':{%s%s%s'client':{'certManager':{"
		 "'serverIssuerRef':{'name':'ca','kind':'Issuer'},'operatorClientIssuerRef':{"
		 "'name':'ca','kind':'Issuer'}}},'peer':{'certManager':{'issuerRef':{'name':"
		 "'peer-ca','kind':'ClusterIssuer'}}}}},'status':%s}",
		 ca[0] != '\0' ? "'certificateAuthority':'" : "", ca, ca[0] != '\0' ? "'," : "",
		 status);
	return tu_jsonq(buf);
}

/* The cases below about the spec's issuers say so (Issuer); per-cluster ones further down. */
static json_t *cluster(void)
{
	return cluster_with("Issuer", "{}");
}

static void rig_start_with(struct rig *r, json_t *c);

static void rig_start(struct rig *r)
{
	rig_start_with(r, cluster());
}

static void rig_start_with(struct rig *r, json_t *c)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->api.mu, NULL);
	r->api.store = json_object();
	r->api.log = json_array();
	r->fake = eo_kube_fake_start(handler, &r->api);
	assert_non_null(r->fake);
	assert_int_equal(eo_kube_config_new(eo_kube_fake_url(r->fake), NULL, NULL, &r->cfg, NULL),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(r->cfg, NULL, &r->kc, NULL), EO_KUBE_OK);
	r->rec = eo_kube_recorder_new(r->kc, NULL);
	r->clusters = eo_kube_cache_new(EO_LABEL_CLUSTER);
	r->empty = eo_kube_cache_new(EO_LABEL_CLUSTER);
	assert_non_null(r->clusters);
	assert_non_null(r->empty);
	r->ctl = (struct eo_controller){.kc = r->kc,
					.rec = r->rec,
					.clusters = {{r->clusters}, 1},
					.members = {{r->empty}, 1},
					.pods = {{r->empty}, 1},
					.pvcs = {{r->empty}, 1},
					.services = {{r->empty}, 1},
					.pdbs = {{r->empty}, 1},
					.build = OPTS,
					.now = frozen_now};
	assert_int_equal(eo_kube_cache_upsert(r->clusters, c, NULL), EO_KUBE_OK);
	json_decref(c); /* the cache keeps its own reference */
}

static void rig_stop(struct rig *r)
{
	eo_kube_recorder_free(r->rec);
	eo_kube_client_free(r->kc);
	eo_kube_fake_stop(r->fake);
	eo_kube_cache_free(r->clusters);
	eo_kube_cache_free(r->empty);
	json_decref(r->api.store);
	json_decref(r->api.log);
	pthread_mutex_destroy(&r->api.mu);
}

static void store(struct rig *r, const char *path, json_t *o)
{
	pthread_mutex_lock(&r->api.mu);
	json_object_set_new(r->api.store, path, o);
	pthread_mutex_unlock(&r->api.mu);
}

/*
 * Number of logged requests with this method whose path starts with prefix (is prefix, when
 * exact); *last the body of the last one.
 */
static size_t count_of(struct rig *r, const char *method, const char *prefix, bool exact,
		       json_t **last)
{
	size_t i, n = 0;
	json_t *e;

	json_array_foreach(r->api.log, i, e)
	{
		const char *path = json_string_value(json_object_get(e, "path"));

		if (strcmp(json_string_value(json_object_get(e, "method")), method) != 0 ||
		    strncmp(path, prefix, strlen(prefix)) != 0 ||
		    (exact && strlen(path) != strlen(prefix)))
			continue;
		n++;
		if (last != NULL)
			*last = json_object_get(e, "body");
	}
	return n;
}

/* The condition `type` of the last status patch, or NULL. */
static size_t count(struct rig *r, const char *method, const char *prefix, json_t **last)
{
	return count_of(r, method, prefix, false, last);
}

static const json_t *patched_condition(struct rig *r, const char *type)
{
	json_t *body = NULL;

	if (count(r, "PATCH", CLUSTER_PATH "/status", &body) == 0)
		return NULL;
	return eo_condition_find(json_object_get(body, "status"), type);
}

static void assert_reason(struct rig *r, const char *type, const char *reason, const char *msg)
{
	const json_t *c = patched_condition(r, type);

	if (c == NULL)
		fail_msg("no %s condition was written", type);
	assert_string_equal(json_string_value(json_object_get(c, "reason")), reason);
	if (msg != NULL && strstr(json_string_value(json_object_get(c, "message")), msg) == NULL)
		fail_msg("%s message '%s' lacks '%s'", type,
			 json_string_value(json_object_get(c, "message")), msg);
}

static void test_not_installed_then_installed(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;

	(void)state;
	rig_start(&r);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(out.requeue_ms, EO_PLAN_REQUEUE_CERTS_MISSING_MS);
	assert_int_equal(count_of(&r, "GET", EO_CERT_MANAGER_DISCOVERY_PATH, true, NULL), 1);
	assert_int_equal(count(&r, "POST", CERTS, NULL), 0);
	assert_reason(&r, EO_COND_AVAILABLE, EO_REASON_CERT_MANAGER_NOT_INSTALLED,
		      "does not serve cert-manager.io/v1");
	assert_reason(&r, EO_COND_PROGRESSING, EO_REASON_CERT_MANAGER_NOT_INSTALLED, NULL);
	assert_true(count(&r, "POST", "/api/v1/namespaces/default/events", NULL) +
			count(&r, "POST", "/apis/events.k8s.io", NULL) >=
		    1);

	/*
	 * The group comes back without its certificates resource (only the Certificate CRD is
	 * missing): still not installed, still nothing created.
	 */
	store(&r, EO_CERT_MANAGER_DISCOVERY_PATH,
	      tu_jsonq("{'kind':'APIResourceList','groupVersion':'cert-manager.io/v1',"
		       "'resources':[{'name':'issuers'},{'name':'clusterissuers'},"
		       "{'name':'certificaterequests'}]}"));
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(out.requeue_ms, EO_PLAN_REQUEUE_CERTS_MISSING_MS);
	assert_int_equal(count_of(&r, "GET", EO_CERT_MANAGER_DISCOVERY_PATH, true, NULL), 2);
	assert_int_equal(count(&r, "POST", CERTS, NULL), 0);
	assert_reason(&r, EO_COND_AVAILABLE, EO_REASON_CERT_MANAGER_NOT_INSTALLED,
		      "does not serve cert-manager.io/v1 Certificates");

	/* cert-manager gets installed: the next pass creates the Certificates. */
	store(&r, EO_CERT_MANAGER_DISCOVERY_PATH, tu_jsonq(DISCOVERY));
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(count(&r, "POST", CERTS, NULL), 3);
	rig_stop(&r);
}

static void test_created_then_issuer_missing(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *c = cluster(), *body = NULL, *want = NULL;

	(void)state;
	rig_start(&r);
	store(&r, EO_CERT_MANAGER_DISCOVERY_PATH, tu_jsonq(DISCOVERY));
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(count(&r, "POST", CERTS "/demo-server", NULL), 1);
	assert_int_equal(count(&r, "POST", CERTS "/demo-operator-client", NULL), 1);
	assert_int_equal(count(&r, "POST", CERTS "/demo-peer", &body), 1);
	want = eo_desired_certificate(c, EO_CERT_PEER, false, &OPTS);
	tu_assert_json_equal(body, want, "the peer Certificate sent");
	json_decref(want);
	/* An ensure pass writes no status. */
	assert_int_equal(count(&r, "PATCH", CLUSTER_PATH "/status", NULL), 0);

	/* cert-manager could not issue them: the Issuer exists, the ClusterIssuer does not. */
	store(&r, "/apis/cert-manager.io/v1/namespaces/default/issuers/ca",
	      tu_jsonq("{'metadata':{'name':'ca'}}"));
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(count(&r, "POST", CERTS, NULL), 3); /* nothing created again */
	assert_int_equal(count(&r, "GET", "/apis/cert-manager.io/v1/clusterissuers/peer-ca", NULL),
			 1);
	assert_reason(&r, EO_COND_AVAILABLE, EO_REASON_ISSUER_NOT_FOUND,
		      "ClusterIssuer peer-ca referenced by Certificate demo-peer does not exist");
	assert_int_equal(out.requeue_ms, EO_PLAN_REQUEUE_CERTS_MS);
	json_decref(c);
	rig_stop(&r);
}

static void test_name_taken(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;

	(void)state;
	rig_start(&r);
	store(&r, EO_CERT_MANAGER_DISCOVERY_PATH, tu_jsonq(DISCOVERY));
	store(&r, CERTS "/demo-server",
	      tu_jsonq("{'metadata':{'name':'demo-server','ownerReferences':[{'uid':'other',"
		       "'controller':true}]}}"));
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_true(out.error);
	assert_reason(&r, EO_COND_DEGRADED, "CreateFailed",
		      "Certificate demo-server already exists and is not controlled by this "
		      "EtcdCluster");
	rig_stop(&r);
}

/* A new cluster gets its own CA; the spec's issuers sign nothing. */
static void test_new_cluster_per_cluster_ca(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *body = NULL;

	(void)state;
	rig_start_with(&r, cluster_with("", "{}"));
	store(&r, EO_CERT_MANAGER_DISCOVERY_PATH, tu_jsonq(DISCOVERY));
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(count(&r, "POST", ISSUERS "/demo-cluster-ca-bootstrap", &body), 1);
	assert_non_null(json_object_get(json_object_get(body, "spec"), "selfSigned"));
	assert_int_equal(count(&r, "POST", ISSUERS "/demo-cluster-ca", &body), 2); /* prefix */
	assert_int_equal(count(&r, "POST", CERTS "/demo-cluster-ca", &body), 1);
	assert_true(json_is_true(json_object_get(json_object_get(body, "spec"), "isCA")));
	assert_int_equal(count(&r, "POST", CERTS, NULL), 4);
	assert_int_equal(count(&r, "POST", CERTS "/demo-peer", &body), 1);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(body, "spec"), "issuerRef"), "name")),
	    "demo-cluster-ca");
	/* Neither issuer of the spec is looked up, let alone used. */
	assert_int_equal(count(&r, "GET", "/apis/cert-manager.io/v1/clusterissuers", NULL), 0);
	rig_stop(&r);
}

/*
 * A running cluster made by an older operator: its Certificates name the spec's issuers and
 * are Ready. It keeps them: no CA object created, no issuerRef patched (its members trust that
 * CA only); the only patch names the cluster in the operator client certificate.
 */
static void test_old_cluster_keeps_issuer(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *c = cluster_with("", "{'clusterID':'abc','clusterToken':'t'}");
	json_t *body = NULL;
	size_t i;
	json_t *e;

	(void)state;
	rig_start_with(&r, json_incref(c));
	store(&r, EO_CERT_MANAGER_DISCOVERY_PATH, tu_jsonq(DISCOVERY));
	for (int role = 0; role < EO_CERT_CA; role++) {
		json_t *old = eo_desired_certificate(c, (enum eo_cert_role)role, false, &OPTS);
		char path[256];

		assert_non_null(old);
		if (role == EO_CERT_OPERATOR_CLIENT) /* as older operators made it */
			json_object_del(json_object_get(old, "spec"), "dnsNames");
		json_object_set_new(old, "status",
				    tu_jsonq("{'conditions':[{'type':'Ready','status':'True'}]}"));
		snprintf(path, sizeof(path), CERTS "/%s", eo_kube_obj_name(old));
		store(&r, path, old);
	}
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_int_equal(count(&r, "POST", ISSUERS, NULL), 0);
	assert_int_equal(count(&r, "POST", CERTS, NULL), 0);
	assert_int_equal(count(&r, "PATCH", CERTS "/demo-operator-client", &body), 1);
	assert_null(json_object_get(json_object_get(body, "spec"), "issuerRef"));
	json_array_foreach(r.api.log, i, e)
	{
		const char *m = json_string_value(json_object_get(e, "method"));
		const char *p = json_string_value(json_object_get(e, "path"));

		if (strcmp(m, "PATCH") == 0 && strncmp(p, CERTS, strlen(CERTS)) == 0)
			assert_null(json_object_get(
			    json_object_get(json_object_get(e, "body"), "spec"), "issuerRef"));
	}
	json_decref(c);
	rig_stop(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_not_installed_then_installed),
	    cmocka_unit_test(test_created_then_issuer_missing),
	    cmocka_unit_test(test_name_taken),
	    cmocka_unit_test(test_new_cluster_per_cluster_ca),
	    cmocka_unit_test(test_old_cluster_keeps_issuer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
