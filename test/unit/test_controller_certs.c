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
 * The apiserver is the rig's store (support/rig.h); the cluster is in the informer cache only,
 * and every PATCH is answered {} without changing the store.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "api/conditions.h"
#include "api/names.h"
#include "controller/certs.h"
#include "controller/controller.h"
#include "desired/certificate.h"
#include "kube/client.h"
#include "plan/certs.h"
#include "support/rig.h"
#include "support/testutil.h"
#include "support/tu_main.h"

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

/* The cluster c (stolen) is in the cache only: status patches are answered {}. */
static void start_with(struct rig *r, json_t *c)
{
	rig_start(r, T0);
	fs_patch_mode(r->api, NULL, FS_PATCH_EMPTY);
	rig_cache_put(r, RIG_CLUSTERS, c);
}

static void start(struct rig *r)
{
	start_with(r, cluster());
}

/* Requests with this method whose path starts with prefix; *last the last one's body. */
static size_t count(struct rig *r, const char *method, const char *prefix, json_t **last)
{
	return fs_count_path(r->api, method, prefix, false, last);
}

/* The condition `type` of the last status patch, or NULL. */
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
	start(&r);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(out.requeue_ms, EO_PLAN_REQUEUE_CERTS_MISSING_MS);
	assert_int_equal(fs_count_path(r.api, "GET", EO_CERT_MANAGER_DISCOVERY_PATH, true, NULL),
			 1);
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
	fs_put_path(r.api, EO_CERT_MANAGER_DISCOVERY_PATH,
		    tu_jsonq("{'kind':'APIResourceList','groupVersion':'cert-manager.io/v1',"
			     "'resources':[{'name':'issuers'},{'name':'clusterissuers'},"
			     "{'name':'certificaterequests'}]}"));
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(out.requeue_ms, EO_PLAN_REQUEUE_CERTS_MISSING_MS);
	assert_int_equal(fs_count_path(r.api, "GET", EO_CERT_MANAGER_DISCOVERY_PATH, true, NULL),
			 2);
	assert_int_equal(count(&r, "POST", CERTS, NULL), 0);
	assert_reason(&r, EO_COND_AVAILABLE, EO_REASON_CERT_MANAGER_NOT_INSTALLED,
		      "does not serve cert-manager.io/v1 Certificates");

	/* cert-manager gets installed: the next pass creates the Certificates. */
	fs_put_path(r.api, EO_CERT_MANAGER_DISCOVERY_PATH, tu_jsonq(DISCOVERY));
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
	start(&r);
	fs_put_path(r.api, EO_CERT_MANAGER_DISCOVERY_PATH, tu_jsonq(DISCOVERY));
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
	fs_put_path(r.api, "/apis/cert-manager.io/v1/namespaces/default/issuers/ca",
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
	start(&r);
	fs_put_path(r.api, EO_CERT_MANAGER_DISCOVERY_PATH, tu_jsonq(DISCOVERY));
	fs_put_path(r.api, CERTS "/demo-server",
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
	start_with(&r, cluster_with("", "{}"));
	fs_put_path(r.api, EO_CERT_MANAGER_DISCOVERY_PATH, tu_jsonq(DISCOVERY));
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
	start_with(&r, json_incref(c));
	fs_put_path(r.api, EO_CERT_MANAGER_DISCOVERY_PATH, tu_jsonq(DISCOVERY));
	for (int role = 0; role < EO_CERT_CA; role++) {
		json_t *old = eo_desired_certificate(c, (enum eo_cert_role)role, false, &OPTS);
		char path[256];

		assert_non_null(old);
		if (role == EO_CERT_OPERATOR_CLIENT) /* as older operators made it */
			json_object_del(json_object_get(old, "spec"), "dnsNames");
		json_object_set_new(old, "status",
				    tu_jsonq("{'conditions':[{'type':'Ready','status':'True'}]}"));
		snprintf(path, sizeof(path), CERTS "/%s", eo_meta_name(old));
		fs_put_path(r.api, path, old);
	}
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_int_equal(count(&r, "POST", ISSUERS, NULL), 0);
	assert_int_equal(count(&r, "POST", CERTS, NULL), 0);
	assert_int_equal(count(&r, "PATCH", CERTS "/demo-operator-client", &body), 1);
	assert_null(json_object_get(json_object_get(body, "spec"), "issuerRef"));
	json_array_foreach(fs_log(r.api), i, e)
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

TU_MAIN(test_not_installed_then_installed, test_created_then_issuer_missing, test_name_taken,
	test_new_cluster_per_cluster_ca, test_old_cluster_keeps_issuer)
