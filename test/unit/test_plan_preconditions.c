/*
 * Unit tests for plan/preconditions.c, through eo_plan_cluster: what must hold before anything
 * moves (Services, a valid and supported spec, TLS material, no foreign object in the way).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/names.h"
#include "desired/desired.h"
#include "plan/auth.h"
#include "plan/plan.h"
#include "support/planworld_cluster.h"
#include "support/testutil.h"
#include "plan/internal.h"
#include "support/planworld_step.h"
#include "support/tu_main.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

static void test_services_first(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;

	(void)state;
	pwc_world_init(&w, pwc_cluster(1, NULL), false);
	pwst_plan(&w.in, &r, EO_PLAN_ENSURE_SERVICES);
	assert_null(r.status);
	eo_plan_result_clear(&r);
	/* A drifted Service also counts. */
	w.hsvc = eo_desired_headless_service(w.cluster);
	w.csvc = eo_desired_client_service(w.cluster);
	json_object_set_new(json_object_get(w.hsvc, "spec"), "publishNotReadyAddresses",
			    json_false());
	w.in.headless_svc = w.hsvc;
	w.in.client_svc = w.csvc;
	pwst_plan(&w.in, &r, EO_PLAN_ENSURE_SERVICES);
	pwc_done(&w, &r);
}

/*
 * `kubectl etcd migrate` hands the aenix headless Service (<name>-headless, named by the
 * headless-service-name annotation) to the cluster: ports peer before client, the aenix
 * selector and labels. One repair (a merge patch, as the apiserver applies it) must make it
 * match; before the fix the aenix selector keys survived the merge and the services check
 * failed forever ("service drift repaired" every pass, the target never latched).
 */
static void test_taken_over_legacy_headless_service(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	json_t *legacy = NULL, *patch = NULL, *want = NULL;

	(void)state;
	pwc_world_init(&w, pwc_cluster(1, NULL), false);
	json_object_set_new(
	    json_object_get(w.cluster, "metadata"), "annotations",
	    json_pack("{s:s}", EO_ANNOTATION_HEADLESS_SERVICE_NAME, "demo-headless"));
	w.csvc = eo_desired_client_service(w.cluster);
	legacy = json_pack(
	    "{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:s, s:[s], s:b, s:{s:s, s:s, s:s}, "
	    "s:[{s:s, s:i, s:i, s:s}, {s:s, s:i, s:i, s:s}]}}",
	    "apiVersion", "v1", "kind", "Service", "metadata", "name", "demo-headless", "namespace",
	    "default", "labels", "app.kubernetes.io/name", "etcd", "app.kubernetes.io/instance",
	    "demo", "app.kubernetes.io/managed-by", "etcd-operator", "spec", "clusterIP", "None",
	    "clusterIPs", "None", "publishNotReadyAddresses", 1, "selector",
	    "app.kubernetes.io/name", "etcd", "app.kubernetes.io/instance", "demo",
	    "app.kubernetes.io/managed-by", "etcd-operator", "ports", "name", "peer", "port", 2380,
	    "targetPort", 2380, "protocol", "TCP", "name", "client", "port", 2379, "targetPort",
	    2379, "protocol", "TCP");
	assert_non_null(legacy);
	/* kubectl etcd migrate hands it over with a controller ownerReference (migrate_run.c) */
	json_object_set_new(json_object_get(legacy, "metadata"), "ownerReferences",
			    json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion",
				      EO_API_GROUP_VERSION, "kind", "EtcdCluster", "name", "demo",
				      "uid", "c-uid", "controller", 1));
	w.hsvc = legacy;
	w.in.headless_svc = w.hsvc;
	w.in.client_svc = w.csvc;
	pwst_plan(&w.in, &r, EO_PLAN_ENSURE_SERVICES);
	eo_plan_result_clear(&r);

	/* the controller's repair, applied as the apiserver does */
	want = eo_desired_headless_service(w.cluster);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(want, "metadata"), "name")),
	    "demo-headless");
	patch = eo_desired_service_patch(want, legacy);
	assert_non_null(patch);
	pwc_merge_patch(legacy, patch);
	json_decref(patch);
	assert_null(eo_desired_service_patch(want, legacy));
	assert_null(json_object_get(json_object_get(json_object_get(legacy, "spec"), "selector"),
				    "app.kubernetes.io/instance"));
	json_decref(want);

	/* the plan now goes on: the target latches */
	pwst_plan(&w.in, &r, EO_PLAN_LATCH_TARGET);
	pwc_done(&w, &r);
}

static void test_invalid_and_unsupported_specs(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;

	(void)state;
	pwc_world_init(&w, pwc_cluster(1, NULL), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "version", json_string("latest"));
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_INVALID_SPEC);
	assert_string_equal(r.event_type, "Warning");
	pwc_assert_stable(&w, &r);
	pwc_done(&w, &r);

	/* Auth and TLS are both done: a new auth cluster starts like any other. */
	pwc_world_init(&w, pwc_cluster(1, NULL), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "tls",
			    json_pack("{s:{s:{s:s}}}", "client", "serverSecretRef", "name", "s"));
	json_object_set_new(
	    json_object_get(w.cluster, "spec"), "auth",
	    json_pack("{s:b, s:{s:s}}", "enabled", 1, "rootCredentialsSecretRef", "name", "root"));
	pwst_plan(&w.in, &r, EO_PLAN_LATCH_TARGET);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_INITIAL_SNAPSHOT);
	pwc_done(&w, &r);

	pwc_world_init(&w, pwc_cluster(1, NULL), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "tls",
			    json_pack("{s:{s:{s:s}}}", "peer", "secretRef", "name", "p"));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_null(pwc_cond_reason(r.status, EO_COND_DEGRADED));
	assert_true(
	    pwc_cond_reason(r.status, EO_COND_AVAILABLE) == NULL ||
	    strcmp(pwc_cond_reason(r.status, EO_COND_AVAILABLE), EO_PLAN_REASON_UNSUPPORTED) != 0);
	pwc_done(&w, &r);
}

/* A TLS client API: the seed is asked over https, and a TLS failure reads as such. */
static void test_tls_bootstrap_handshake(void **state)
{
	const struct {
		bool tls;
		eo_etcd_err err;
		const char *reason;
	} rows[] = {
	    {true, EO_ETCD_TRANSPORT, EO_REASON_TLS_HANDSHAKE_FAILED},
	    {true, EO_ETCD_UNAVAILABLE, EO_REASON_CLUSTER_UNREACHABLE},
	    {false, EO_ETCD_TRANSPORT, EO_REASON_CLUSTER_UNREACHABLE},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pwc_world w;
		struct eo_plan_result r;
		char *st = pwc_latched_status(1, NULL);
		json_t *m = pwc_member("demo-aaaaa", true, false, NULL);

		pwc_world_init(&w, pwc_cluster(1, st), true);
		free(st);
		if (rows[i].tls) {
			json_object_set_new(
			    json_object_get(w.cluster, "spec"), "tls",
			    tu_jsonq("{'client':{'serverSecretRef':{'name':'s'}}}"));
			json_object_set_new(json_object_get(m, "spec"), "tls",
					    tu_jsonq("{'clientServerSecretRef':{'name':'s'}}"));
		}
		pwc_world_add(&w, m, pwc_pod("demo-aaaaa", true));
		pwst_plan(&w.in, &r, EO_PLAN_QUERY_MEMBERS);
		assert_string_equal(r.endpoints[0],
				    rows[i].tls
					? "https://demo-aaaaa.demo.default.svc.cluster.local:2379"
					: "http://demo-aaaaa.demo.default.svc.cluster.local:2379");
		eo_plan_result_clear(&r);
		pwc_world_etcd(&w, rows[i].err, "demo-aaaaa", 0x248adce0359142baULL, 0);
		pwst_plan(&w.in, &r, EO_PLAN_WAIT);
		pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, rows[i].reason);
		assert_string_equal(r.event_reason, rows[i].reason);
		pwc_done(&w, &r);
	}
}

/* Unusable TLS material: nothing is touched, the condition and a Warning Event say why. */
static void test_tls_problem_stops(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	char *st = pwc_latched_status(1, "\"clusterID\":\"248adce0359142ba\"");

	(void)state;
	/* Not formed yet: Available=False with the reason, no seed created. */
	pwc_world_init(&w, pwc_cluster(1, NULL), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "tls",
			    json_pack("{s:{s:{s:s}}}", "client", "serverSecretRef", "name", "s"));
	w.in.tls_reason = EO_REASON_TLS_SECRET_NOT_FOUND;
	w.in.tls_message = "the server Secret default/s does not exist";
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_TLS_SECRET_NOT_FOUND);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE,
			EO_REASON_TLS_SECRET_NOT_FOUND);
	assert_string_equal(r.event_type, "Warning");
	assert_string_equal(r.event_reason, EO_REASON_TLS_SECRET_NOT_FOUND);
	assert_string_equal(r.message, "the server Secret default/s does not exist");
	pwc_assert_stable(&w, &r);
	pwc_done(&w, &r);

	/* Formed and healthy: Available still tells the members, Degraded says what is wrong. */
	pwc_world_init(&w, pwc_cluster(1, st), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "tls",
			    json_pack("{s:{s:{s:s}}}", "client", "serverSecretRef", "name", "s"));
	pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, VOTER),
		      pwc_pod("demo-aaaaa", true));
	w.in.tls_reason = EO_REASON_TLS_SECRET_INVALID;
	w.in.tls_message = "the server Secret default/s: the server certificate expired on ...";
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_TLS_SECRET_INVALID);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_TLS_SECRET_INVALID);
	pwc_done(&w, &r);
	free(st);
}

/*
 * Clusters x and x-client in one namespace (review H2): x's client Service x-client is
 * x-client's headless Service. Neither patches the other's Service (before, each pass of
 * either cluster planned ENSURE_SERVICES and flipped its selector): the plan stops with
 * ForeignObject naming the Service and its controller, a Warning Event, no action.
 */
static void test_foreign_service_refused(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	json_t *other = NULL;

	(void)state;
	/* x, created second: its client Service name is held by cluster x-client. */
	other = pwc_cluster_named("x-client", "xc-uid", NULL);
	pwc_world_init(&w, pwc_cluster_named("x", "x-uid", NULL), false);
	w.csvc = eo_desired_headless_service(other);
	w.in.client_svc = w.csvc;
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	assert_int_equal(r.requeue_ms, EO_PLAN_REQUEUE_STEADY_MS);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_FOREIGN_OBJECT);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_FOREIGN_OBJECT);
	assert_null(eo_condition_status(r.status, EO_COND_DEGRADED));
	pwc_assert_cond_says(
	    r.status, EO_COND_AVAILABLE,
	    "Service x-client is not controlled by this EtcdCluster (its controller: "
	    "EtcdCluster x-client, uid xc-uid)");
	assert_null(json_object_get(r.status, "observed")); /* nothing latched, no seed */
	assert_string_equal(r.event_type, "Warning");
	assert_string_equal(r.event_reason, EO_REASON_FOREIGN_OBJECT);
	pwc_assert_stable(&w, &r);
	eo_plan_result_clear(&r);

	/* The other cluster renamed or deleted, x's own Services made: x latches and seeds. */
	json_decref(w.csvc);
	w.hsvc = eo_desired_headless_service(w.cluster);
	w.csvc = eo_desired_client_service(w.cluster);
	w.in.headless_svc = w.hsvc;
	w.in.client_svc = w.csvc;
	for (int pass = 0; pass < 2; pass++) {
		assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
		json_object_set(w.cluster, "status", r.status);
		eo_plan_result_clear(&r);
	}
	pwst_plan(&w.in, &r, EO_PLAN_CREATE_SEED);
	assert_string_not_equal(pwc_cond_reason(r.status, EO_COND_AVAILABLE),
				EO_REASON_FOREIGN_OBJECT);
	assert_string_not_equal(pwc_cond_reason(r.status, EO_COND_PROGRESSING),
				EO_REASON_FOREIGN_OBJECT);
	pwc_done(&w, &r);

	/* x-client, created second: its headless Service name is x's client Service. */
	pwc_world_init(&w, other, false);
	other = pwc_cluster_named("x", "x-uid", NULL);
	w.hsvc = eo_desired_client_service(other);
	w.in.headless_svc = w.hsvc;
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_FOREIGN_OBJECT);
	pwc_assert_cond_says(
	    r.status, EO_COND_AVAILABLE,
	    "Service x-client is not controlled by this EtcdCluster (its controller: "
	    "EtcdCluster x, uid x-uid)");
	pwc_done(&w, &r);

	/* The owner cluster itself goes on: its own Services are in line, it latches. */
	pwc_world_init(&w, other, true);
	pwst_plan(&w.in, &r, EO_PLAN_LATCH_TARGET);
	pwc_done(&w, &r);
}

/*
 * A formed cluster whose PodDisruptionBudget or NetworkPolicy name is held by an object with
 * no controller: the members keep serving (Available from them), Degraded says ForeignObject,
 * nothing is acted on.
 */
static void test_foreign_pdb_and_netpol_refused(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	json_t *np =
	    json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "networking.k8s.io/v1", "kind",
		      "NetworkPolicy", "metadata", "name", "demo", "namespace", "default");

	(void)state;
	pwc_formed_world(&w, 1, true, 1);
	json_object_del(json_object_get(w.pdb, "metadata"), "ownerReferences");
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_FOREIGN_OBJECT);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_FOREIGN_OBJECT);
	pwc_assert_cond_says(r.status, EO_COND_DEGRADED,
			     "PodDisruptionBudget demo is not controlled by this EtcdCluster (its "
			     "controller: none)");
	eo_plan_result_clear(&r);

	/* Our PDB back, a user's NetworkPolicy under the cluster's name. */
	pwc_world_pdb(&w, 1);
	w.in.netpol = np;
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_FOREIGN_OBJECT);
	pwc_assert_cond_says(r.status, EO_COND_DEGRADED, "NetworkPolicy demo is not controlled");
	eo_plan_result_clear(&r);

	/* Ours: nothing to say any more. */
	json_object_set_new(json_object_get(np, "metadata"), "ownerReferences",
			    json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion",
				      EO_API_GROUP_VERSION, "kind", "EtcdCluster", "name", "demo",
				      "uid", "c-uid", "controller", 1));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_FALSE, EO_REASON_QUORUM_HEALTHY);
	assert_string_not_equal(pwc_cond_reason(r.status, EO_COND_PROGRESSING),
				EO_REASON_FOREIGN_OBJECT);
	eo_plan_result_clear(&r);
	json_decref(np);
	pwc_world_free(&w);
}

struct precond_row {
	const char *what;
	bool formed;	     /* a clusterID and one ready voter (running) */
	bool services;	     /* the Services are there */
	const char *version; /* spec.version, NULL: as built */
	const char *tls;     /* in.tls_reason, NULL: none */
	bool stop;	     /* the return */
	enum eo_plan_action action;
	const char *message;   /* a part of out.message, NULL: not checked */
	const char *available; /* reason of Available, NULL: not set */
	const char *degraded;  /* reason of Degraded, NULL: not set */
};

static bool precond_step(struct eo__plan_ctx *x, struct eo__plan_counts *c, const void *row)
{
	const struct precond_row *r = row;

	return eo__plan_preconditions(x, c, r->formed);
}

/* Available, Degraded, and a Warning Event when the preconditions stop the pass quietly. */
static void precond_after(const char *what, const struct eo__plan_ctx *x,
			  const struct eo_plan_result *out, const void *row)
{
	const struct precond_row *r = row;

	pwst_check_str(what, "Available", eo_condition_reason(x->st, EO_COND_AVAILABLE),
		       r->available);
	pwst_check_str(what, "Degraded", eo_condition_reason(x->st, EO_COND_DEGRADED), r->degraded);
	if (r->stop && r->action == EO_PLAN_NONE &&
	    (out->event_reason == NULL || out->event_type == NULL ||
	     strcmp(out->event_type, "Warning") != 0))
		fail_msg("%s: no Warning event", what);
}

/*
 * The preconditions themselves (eo__plan_preconditions), called directly on a small world
 * (support/planworld_cluster.h): a valid spec with its Services goes on; an invalid spec, a TLS
 * problem (before the cluster formed: Available says it; after: Degraded does, Available still
 * tells the members) and missing Services stop the pass.
 */
static void test_preconditions_step(void **state)
{
	static const struct precond_row rows[] = {
	    {"all holds: go on", false, true, NULL, NULL, false, EO_PLAN_NONE, NULL, NULL, NULL},
	    {"all holds, formed: go on", true, true, NULL, NULL, false, EO_PLAN_NONE, NULL, NULL,
	     NULL},
	    {"an invalid spec: stop", false, true, "latest", NULL, true, EO_PLAN_NONE,
	     "invalid spec: ", EO_REASON_INVALID_SPEC, NULL},
	    {"TLS Secret missing before forming: Available says so", false, true, NULL,
	     EO_REASON_TLS_SECRET_NOT_FOUND, true, EO_PLAN_NONE, "the TLS problem",
	     EO_REASON_TLS_SECRET_NOT_FOUND, NULL},
	    {"TLS Secret invalid when formed: Degraded says so", true, true, NULL,
	     EO_REASON_TLS_SECRET_INVALID, true, EO_PLAN_NONE, "the TLS problem",
	     EO_REASON_QUORUM_HEALTHY, EO_REASON_TLS_SECRET_INVALID},
	    {"no Services: ensure them", false, false, NULL, NULL, true, EO_PLAN_ENSURE_SERVICES,
	     "ensuring Services demo and demo-client", NULL, NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pwc_world w;
		char *st = pwc_latched_status(1, "\"clusterID\":\"248adce0359142ba\"");

		pwc_world_init(&w, pwc_cluster(1, rows[i].formed ? st : NULL), rows[i].services);
		free(st);
		if (rows[i].formed)
			pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, VOTER),
				      pwc_pod("demo-aaaaa", true));
		if (rows[i].version != NULL)
			json_object_set_new(json_object_get(w.cluster, "spec"), "version",
					    json_string(rows[i].version));
		if (rows[i].tls != NULL) {
			json_object_set_new(
			    json_object_get(w.cluster, "spec"), "tls",
			    json_pack("{s:{s:{s:s}}}", "client", "serverSecretRef", "name", "s"));
			w.in.tls_reason = rows[i].tls;
			w.in.tls_message = "the TLS problem";
		}
		pwst_call(
		    rows[i].what, &w.in, false, precond_step, precond_after, &rows[i],
		    (struct pwst_want){rows[i].stop, rows[i].action, NULL, 0, rows[i].message});
		pwc_world_free(&w);
	}
}

TU_MAIN(test_services_first, test_taken_over_legacy_headless_service,
	test_invalid_and_unsupported_specs, test_tls_bootstrap_handshake, test_tls_problem_stops,
	test_foreign_service_refused, test_foreign_pdb_and_netpol_refused, test_preconditions_step)
