/*
 * Unit tests for plan/plan.c: the cluster controller's next action and desired status, as a
 * table of observed worlds, plus the no-churn property (an unchanged world yields an identical
 * status) and the locking pattern (latch, deadline, SpecChanged, BootstrapFailed,
 * DeadlineExceeded, RetryAfterDeadline).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/names.h"
#include "desired/desired.h"
#include "plan/auth.h"
#include "plan/plan.h"
#include "support/planworld_cluster.h"
#include "support/testutil.h"

#define T0    1780394400 /* 2026-06-02T10:00:00Z */

/* --- cases --- */

static void test_services_first(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;

	(void)state;
	pwc_world_init(&w, pwc_cluster(1, NULL), false);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENSURE_SERVICES);
	assert_null(r.status);
	eo_plan_result_clear(&r);
	/* A drifted Service also counts. */
	w.hsvc = eo_desired_headless_service(w.cluster);
	w.csvc = eo_desired_client_service(w.cluster);
	json_object_set_new(json_object_get(w.hsvc, "spec"), "publishNotReadyAddresses",
			    json_false());
	w.in.headless_svc = w.hsvc;
	w.in.client_svc = w.csvc;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENSURE_SERVICES);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
}

static void test_latch_target(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	json_t *st;

	(void)state;
	pwc_world_init(&w, pwc_cluster(1, NULL), true);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_LATCH_TARGET);
	assert_true(r.status_changed);
	st = r.status;
	assert_string_equal(json_string_value(json_object_get(st, "clusterToken")),
			    "default-demo-c-uid");
	assert_string_equal(json_string_value(json_object_get(st, "progressDeadline")),
			    "2026-06-02T10:10:00Z");
	assert_string_equal(json_string_value(json_object_get(st, "selector")),
			    "etcd-operator.cozystack.io/cluster=demo");
	assert_int_equal(json_integer_value(json_object_get(st, "readyMembers")), 0);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(st, "observed"), "replicas")), 1);
	pwc_assert_cond(st, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_INITIAL_SNAPSHOT);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
}

/* The bootstrap table: one world per step of the seed flow. */
static void test_bootstrap_table(void **state)
{
	struct {
		const char *what;
		bool has_member, pending, has_pod, pod_ready, queried;
		eo_etcd_err err;
		size_t etcd_n;
		enum eo_plan_action want;
		long want_requeue;
		const char *avail_status, *avail_reason, *prog_reason;
	} cases[] = {
	    {"no members", false, false, false, false, false, EO_ETCD_OK, 0, EO_PLAN_CREATE_SEED, 0,
	     "False", EO_REASON_WAITING_FOR_SEED, EO_REASON_WAITING_FOR_SEED},
	    {"pending seed", true, true, false, false, false, EO_ETCD_OK, 0, EO_PLAN_COMPLETE_SEED,
	     0, "False", EO_REASON_WAITING_FOR_SEED, EO_REASON_WAITING_FOR_SEED},
	    {"seed without Pod", true, false, false, false, false, EO_ETCD_OK, 0, EO_PLAN_WAIT,
	     EO_PLAN_REQUEUE_SHORT_MS, "False", EO_REASON_WAITING_FOR_SEED,
	     EO_REASON_WAITING_FOR_SEED},
	    {"seed Pod not ready", true, false, true, false, false, EO_ETCD_OK, 0, EO_PLAN_WAIT,
	     EO_PLAN_REQUEUE_SHORT_MS, "False", EO_REASON_WAITING_FOR_SEED,
	     EO_REASON_INITIAL_SNAPSHOT},
	    {"seed ready, ask etcd", true, false, true, true, false, EO_ETCD_OK, 0,
	     EO_PLAN_QUERY_MEMBERS, 0, NULL, NULL, NULL},
	    {"etcd unreachable", true, false, true, true, true, EO_ETCD_UNAVAILABLE, 0,
	     EO_PLAN_WAIT, EO_PLAN_REQUEUE_ETCD_MS, "False", EO_REASON_CLUSTER_UNREACHABLE,
	     EO_REASON_INITIAL_SNAPSHOT},
	    {"unexpected member list", true, false, true, true, true, EO_ETCD_OK, 2, EO_PLAN_WAIT,
	     EO_PLAN_REQUEUE_ETCD_MS, "False", EO_REASON_CLUSTER_UNREACHABLE,
	     EO_REASON_INITIAL_SNAPSHOT},
	    {"discovered", true, false, true, true, true, EO_ETCD_OK, 1, EO_PLAN_WRITE_STATUS, 0,
	     "True", EO_REASON_CLUSTER_DISCOVERED, EO_REASON_INITIAL_SNAPSHOT},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pwc_world w;
		struct eo_plan_result r;
		char *st = pwc_latched_status(1, NULL);

		pwc_world_init(&w, pwc_cluster(1, st), true);
		free(st);
		if (cases[i].has_member)
			pwc_world_add(&w, pwc_member("demo-aaaaa", true, cases[i].pending, NULL),
				      cases[i].has_pod ? pwc_pod("demo-aaaaa", cases[i].pod_ready)
						       : NULL);
		if (cases[i].queried)
			pwc_world_etcd(&w, cases[i].err, "demo-aaaaa", 0x248adce0359142baULL,
				       cases[i].etcd_n);
		if (eo_plan_cluster(&w.in, &r) != 0)
			fail_msg("%s: plan failed", cases[i].what);
		if (r.action != cases[i].want)
			fail_msg("%s: action %s, want %s", cases[i].what,
				 eo_plan_action_name(r.action), eo_plan_action_name(cases[i].want));
		assert_int_equal(r.requeue_ms, cases[i].want_requeue);
		if (cases[i].avail_status != NULL) {
			assert_non_null(r.status);
			pwc_assert_cond(r.status, EO_COND_AVAILABLE, cases[i].avail_status,
					cases[i].avail_reason);
			pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE,
					cases[i].prog_reason);
			assert_null(eo_condition_find(r.status, EO_COND_DEGRADED));
			/* The discovery write changes the world (clusterID); others must not. */
			if (r.action != EO_PLAN_WRITE_STATUS)
				pwc_assert_stable(&w, &r);
		} else {
			assert_null(r.status);
		}
		if (r.action == EO_PLAN_CREATE_SEED) {
			/* Under the name the latched status records: a retry collides. */
			char next[EO_PLAN_NAME_MAX];

			assert_int_equal(
			    eo_plan_next_member_name("demo", "c-uid", NULL, 0, next, sizeof(next)),
			    0);
			assert_string_equal(r.member_name, next);
		}
		if (r.action == EO_PLAN_COMPLETE_SEED) {
			assert_string_equal(r.initial_cluster,
					    "demo-aaaaa=http://"
					    "demo-aaaaa.demo.default.svc.cluster.local:2380");
			assert_ptr_equal(r.member, w.members[0].member);
		}
		if (r.action == EO_PLAN_QUERY_MEMBERS) {
			assert_int_equal(r.n_endpoints, 1);
			assert_string_equal(
			    r.endpoints[0],
			    "http://demo-aaaaa.demo.default.svc.cluster.local:2379");
		}
		if (r.action == EO_PLAN_WRITE_STATUS) {
			assert_string_equal(
			    json_string_value(json_object_get(r.status, "clusterID")),
			    "248adce0359142ba");
			assert_string_equal(r.event_reason, EO_REASON_CLUSTER_DISCOVERED);
		}
		eo_plan_result_clear(&r);
		pwc_world_free(&w);
	}
}

/* After discovery: steady state is reached, the deadline dropped and nothing moves. */
static void test_steady_state_no_churn(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	char *st = pwc_latched_status(1, "\"clusterID\":\"248adce0359142ba\"");

	(void)state;
	pwc_world_init(&w, pwc_cluster(1, st), true);
	free(st);
	pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, VOTER),
		      pwc_pod("demo-aaaaa", true));
	pwc_world_pdb(&w, 1);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_int_equal(r.requeue_ms, EO_PLAN_REQUEUE_STEADY_MS);
	assert_true(r.status_changed);
	assert_null(json_object_get(r.status, "progressDeadline"));
	assert_int_equal(json_integer_value(json_object_get(r.status, "readyMembers")), 1);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_RECONCILED);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_FALSE, EO_REASON_QUORUM_HEALTHY);
	pwc_assert_stable(&w, &r);
	/* Even after the deadline would have passed: complete targets have none. */
	w.in.now = T0 + 3600;
	pwc_assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
}

/*
 * A cluster adopted from the legacy operator (docs/migration.md): held while the migration
 * runs; then its adopted Pod, which carries no Pod hash, is left running until the target
 * changes; the same Pod not marked adopted is rolled.
 */
static void test_adopted_cluster(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	char *st = pwc_latched_status(1, "\"clusterID\":\"248adce0359142ba\"");
	json_t *m = NULL, *p = NULL;

	(void)state;
	for (int adopted = 1; adopted >= 0; adopted--) {
		pwc_world_init(&w, pwc_cluster(1, st), true);
		m = pwc_member("demo-aaaaa", true, false, VOTER);
		p = pwc_pod("demo-aaaaa", true);
		/* a Pod the member controller did not build: no hash */
		json_object_set_new(json_object_get(p, "metadata"), "annotations", json_object());
		if (adopted)
			json_object_set_new(
			    json_object_get(m, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_ADOPTED_POD_UID, "pod-uid"));
		pwc_world_add(&w, m, p);
		pwc_world_pdb(&w, 1);
		pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
		assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
		if (adopted) {
			assert_int_equal(r.action, EO_PLAN_NONE);
			pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE,
					EO_REASON_RECONCILED);
		} else {
			/* outdated: the roll starts (it first reads the members' progress) */
			assert_int_not_equal(r.action, EO_PLAN_NONE);
			assert_string_equal(eo_condition_status(r.status, EO_COND_PROGRESSING),
					    EO_COND_TRUE);
		}
		eo_plan_result_clear(&r);

		/* while `kubectl etcd migrate` holds it: nothing at all, no status */
		json_object_set_new(json_object_get(w.cluster, "metadata"), "annotations",
				    json_pack("{s:s}", EO_ANNOTATION_MIGRATING, "true"));
		assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
		assert_int_equal(r.action, EO_PLAN_WAIT);
		assert_null(r.status);
		assert_false(r.status_changed);
		assert_non_null(strstr(r.message, "held by kubectl etcd migrate"));
		eo_plan_result_clear(&r);
		pwc_world_free(&w);
	}
	free(st);
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
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENSURE_SERVICES);
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
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_LATCH_TARGET);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
}

static void test_member_not_ready_after_bootstrap(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	char *st = pwc_latched_status(1, "\"clusterID\":\"248adce0359142ba\"");

	(void)state;
	pwc_world_init(&w, pwc_cluster(1, st), true);
	free(st);
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, VOTER),
		      pwc_pod("demo-aaaaa", false));
	pwc_world_pdb(&w, 1);
	/* A member not ready: etcd is asked whether it still lists it; it does. */
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_QUERY_MEMBERS);
	eo_plan_result_clear(&r);
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_QUORUM_LOST);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_QUORUM_LOST);
	/* No target in flight: not Progressing, and no deadline can expire. */
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_RECONCILED);
	w.in.now = T0 + 7200;
	pwc_assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
}

static void test_spec_changed_relatches(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	char *st = pwc_latched_status(1, "\"clusterID\":\"248adce0359142ba\"");

	(void)state;
	pwc_world_init(&w, pwc_cluster(3, st), true); /* spec says 3, observed 1 */
	free(st);
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, VOTER),
		      pwc_pod("demo-aaaaa", true));
	pwc_world_pdb(&w, 1);
	w.in.now = T0 + 1000;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_WRITE_STATUS);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_SPEC_CHANGED);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(r.status, "observed"), "replicas")),
	    3);
	assert_string_equal(json_string_value(json_object_get(r.status, "progressDeadline")),
			    "2026-06-02T10:26:40Z");
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	/* Next pass with the new target: the PDB follows the target (3 -> minAvailable 2)... */
	json_object_set(w.cluster, "status", r.status);
	eo_plan_result_clear(&r);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENSURE_PDB);
	assert_non_null(r.patch);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(r.patch, "spec"), "minAvailable")),
	    2);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_SPEC_CHANGED);
	eo_plan_result_clear(&r);
	/* ... then etcd's member list is read through the voter, and a member is created. */
	pwc_world_pdb(&w, 2);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_QUERY_MEMBERS);
	assert_int_equal(r.n_endpoints, 1);
	assert_string_equal(r.endpoints[0],
			    "http://demo-aaaaa.demo.default.svc.cluster.local:2379");
	eo_plan_result_clear(&r);
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_CREATE_MEMBER);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_SPEC_CHANGED);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	pwc_assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
}

static void test_deadlines(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	char *st = pwc_latched_status(1, NULL);

	(void)state;
	/* Before a clusterID: terminal BootstrapFailed. */
	pwc_world_init(&w, pwc_cluster(1, st), true);
	free(st);
	pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, NULL),
		      pwc_pod("demo-aaaaa", false));
	w.in.now = T0 + 600;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_int_equal(r.requeue_ms, 0);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_BOOTSTRAP_FAILED);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_BOOTSTRAP_FAILED);
	assert_string_equal(r.event_reason, EO_REASON_BOOTSTRAP_FAILED);
	pwc_assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);

	/* After a clusterID: DeadlineExceeded, then a spec edit resumes. */
	st = pwc_latched_status(3, "\"clusterID\":\"248adce0359142ba\"");
	pwc_world_init(&w, pwc_cluster(3, st), true);
	free(st);
	pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, "{\"isVoter\":true}"),
		      pwc_pod("demo-aaaaa", true));
	w.in.now = T0 + 601;
	/* Healing goes on past the deadline: the missing PDB is created first ... */
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENSURE_PDB);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_FALSE, EO_REASON_QUORUM_HEALTHY);
	assert_int_equal(json_integer_value(json_object_get(r.status, "membersAtDeadline")), 1);
	eo_plan_result_clear(&r);
	/* ... but the scale-up 1 -> 3 does not go on: no member is created. */
	pwc_world_pdb(&w, eo_desired_pdb_min_available(1, 3));
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_non_null(strstr(r.message, "not growing beyond the 1 member(s)"));
	assert_string_equal(r.event_reason, EO_REASON_DEADLINE_EXCEEDED);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED);
	pwc_assert_stable(&w, &r);
	json_object_set(w.cluster, "status", r.status);
	eo_plan_result_clear(&r);
	json_object_set_new(json_object_get(w.cluster, "spec"), "replicas", json_integer(1));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_WRITE_STATUS);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE,
			EO_REASON_RETRY_AFTER_DEADLINE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
}

static void test_invalid_and_unsupported_specs(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;

	(void)state;
	pwc_world_init(&w, pwc_cluster(1, NULL), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "version", json_string("latest"));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_INVALID_SPEC);
	assert_string_equal(r.event_type, "Warning");
	pwc_assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);

	/* Auth and TLS are both done: a new auth cluster starts like any other. */
	pwc_world_init(&w, pwc_cluster(1, NULL), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "tls",
			    json_pack("{s:{s:{s:s}}}", "client", "serverSecretRef", "name", "s"));
	json_object_set_new(
	    json_object_get(w.cluster, "spec"), "auth",
	    json_pack("{s:b, s:{s:s}}", "enabled", 1, "rootCredentialsSecretRef", "name", "root"));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_LATCH_TARGET);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_INITIAL_SNAPSHOT);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);

	pwc_world_init(&w, pwc_cluster(1, NULL), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "tls",
			    json_pack("{s:{s:{s:s}}}", "peer", "secretRef", "name", "p"));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_null(pwc_cond_reason(r.status, EO_COND_DEGRADED));
	assert_true(
	    pwc_cond_reason(r.status, EO_COND_AVAILABLE) == NULL ||
	    strcmp(pwc_cond_reason(r.status, EO_COND_AVAILABLE), EO_PLAN_REASON_UNSUPPORTED) != 0);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
}

/*
 * spec.auth on a healthy cluster: ask etcd, turn auth on, latch status.authEnabled once etcd
 * says it is on and the password works; a restored cluster with auth already on is latched
 * without provisioning; a latched steady cluster asks nothing.
 */
static void test_auth_enable_and_latch(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;

	(void)state;
	pwc_auth_world(&w, true, false);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_QUERY_MEMBERS);
	assert_int_equal(r.n_endpoints, 1);
	assert_non_null(
	    strstr(r.endpoints[0], "://demo-aaaaa.demo.default.svc.cluster.local:2379"));
	eo_plan_result_clear(&r);
	/* etcd: auth off -> enable it through the voters. */
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_status_err = EO_ETCD_OK;
	w.in.auth_on = false;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENABLE_AUTH);
	assert_int_equal(r.n_endpoints, 1);
	assert_non_null(strstr(r.message, "Secret default/root"));
	assert_null(json_object_get(r.status, "authEnabled"));
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	eo_plan_result_clear(&r);
	/* etcd: auth on, the password works -> latch (also what a restored snapshot gets). */
	w.in.auth_on = true;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_WRITE_STATUS);
	assert_true(json_is_true(json_object_get(r.status, "authEnabled")));
	assert_string_equal(r.event_reason, EO_PLAN_REASON_AUTH_ENABLED);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	json_object_set(w.cluster, "status", r.status);
	eo_plan_result_clear(&r);
	/* Latched and steady: no etcd query, nothing to do. */
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_true(json_is_true(json_object_get(r.status, "authEnabled")));
	eo_plan_result_clear(&r);
	/* The Secret's password changed (or the operator restarted): etcd is asked at once. */
	w.in.auth_unverified = true;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_QUERY_MEMBERS);
	eo_plan_result_clear(&r);
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_login_err = EO_ETCD_AUTH;
	w.in.auth_login_message = "etcdserver: authentication failed";
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE,
			EO_REASON_AUTH_CREDENTIALS_REJECTED);
	assert_string_equal(r.event_reason, EO_REASON_AUTH_CREDENTIALS_REJECTED);
	eo_plan_result_clear(&r);
	w.in.auth_login_err = EO_ETCD_OK;
	w.in.auth_unverified = false;
	/* Unknown auth state (3.4 refusing, etcd down): nothing is provisioned. */
	pwc_world_free(&w);
	pwc_auth_world(&w, true, false);
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_status_err = EO_ETCD_UNAVAILABLE;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_not_equal(r.action, EO_PLAN_ENABLE_AUTH);
	assert_null(json_object_get(r.status, "authEnabled"));
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
}

/* etcd has auth on and the spec none: AuthRequiredNotConfigured, nothing done, asked again. */
static void test_auth_required_not_configured(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;

	(void)state;
	pwc_auth_world(&w, false, false);
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_on = true;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE,
			EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE,
			EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	assert_string_equal(r.event_type, "Warning");
	assert_string_equal(r.event_reason, EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	assert_non_null(strstr(r.message, "delete and recreate"));
	json_object_set(w.cluster, "status", r.status);
	eo_plan_result_clear(&r);
	/* The next pass asks etcd again rather than reporting a healthy cluster. */
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	w.in.auth_on = false;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_QUERY_MEMBERS);
	eo_plan_result_clear(&r);
	/* Still on: the same status, no write. */
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_on = true;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_false(r.status_changed);
	eo_plan_result_clear(&r);
	/* Bootstrapping a restored seed: refused before the cluster ID is latched. */
	pwc_world_free(&w);
	{
		char *st = pwc_latched_status(1, NULL);

		pwc_world_init(&w, pwc_cluster(1, st), true);
		free(st);
	}
	pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, NULL), pwc_pod("demo-aaaaa", true));
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_on = true;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_null(json_object_get(r.status, "clusterID"));
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE,
			EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	eo_plan_result_clear(&r);
	/* The same when etcd refused the anonymous member list itself. */
	w.in.etcd_err = EO_ETCD_AUTH;
	w.in.etcd = NULL;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE,
			EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
}

/* A wrong password or a missing Secret: a condition and a Warning, no action, no latch. */
static void test_auth_problems(void **state)
{
	const struct {
		bool latched;
		const char *creds_reason;
		eo_etcd_err login;
		const char *want;
	} rows[] = {
	    {false, NULL, EO_ETCD_AUTH, EO_REASON_AUTH_CREDENTIALS_REJECTED},
	    {true, NULL, EO_ETCD_AUTH, EO_REASON_AUTH_CREDENTIALS_REJECTED},
	    {false, EO_REASON_AUTH_SECRET_NOT_FOUND, EO_ETCD_OK, EO_REASON_AUTH_SECRET_NOT_FOUND},
	    {true, EO_REASON_AUTH_SECRET_INVALID, EO_ETCD_OK, EO_REASON_AUTH_SECRET_INVALID},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pwc_world w;
		struct eo_plan_result r;

		pwc_auth_world(&w, true, rows[i].latched);
		pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
		w.in.auth_on = true;
		w.in.auth_login_err = rows[i].login;
		w.in.auth_login_message = "etcdserver: authentication failed";
		w.in.auth_reason = rows[i].creds_reason;
		w.in.auth_message = "the root credentials Secret default/root does not exist";
		assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
		assert_int_equal(r.action, EO_PLAN_NONE);
		pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, rows[i].want);
		/* The members are fine: Available still says so. */
		pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE,
				EO_REASON_QUORUM_HEALTHY);
		assert_string_equal(r.event_reason, rows[i].want);
		assert_int_equal(json_is_true(json_object_get(r.status, "authEnabled")),
				 rows[i].latched);
		if (rows[i].login == EO_ETCD_AUTH)
			assert_non_null(strstr(r.message, "authentication failed"));
		assert_null(strstr(r.message, "s3cret"));
		eo_plan_result_clear(&r);
		pwc_world_free(&w);
	}
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
		assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
		assert_int_equal(r.action, EO_PLAN_QUERY_MEMBERS);
		assert_string_equal(r.endpoints[0],
				    rows[i].tls
					? "https://demo-aaaaa.demo.default.svc.cluster.local:2379"
					: "http://demo-aaaaa.demo.default.svc.cluster.local:2379");
		eo_plan_result_clear(&r);
		pwc_world_etcd(&w, rows[i].err, "demo-aaaaa", 0x248adce0359142baULL, 0);
		assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
		assert_int_equal(r.action, EO_PLAN_WAIT);
		pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, rows[i].reason);
		assert_string_equal(r.event_reason, rows[i].reason);
		eo_plan_result_clear(&r);
		pwc_world_free(&w);
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
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_TLS_SECRET_NOT_FOUND);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE,
			EO_REASON_TLS_SECRET_NOT_FOUND);
	assert_string_equal(r.event_type, "Warning");
	assert_string_equal(r.event_reason, EO_REASON_TLS_SECRET_NOT_FOUND);
	assert_string_equal(r.message, "the server Secret default/s does not exist");
	pwc_assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);

	/* Formed and healthy: Available still tells the members, Degraded says what is wrong. */
	pwc_world_init(&w, pwc_cluster(1, st), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "tls",
			    json_pack("{s:{s:{s:s}}}", "client", "serverSecretRef", "name", "s"));
	pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, VOTER),
		      pwc_pod("demo-aaaaa", true));
	w.in.tls_reason = EO_REASON_TLS_SECRET_INVALID;
	w.in.tls_message = "the server Secret default/s: the server certificate expired on ...";
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_TLS_SECRET_INVALID);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_TLS_SECRET_INVALID);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
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
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
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
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_CREATE_SEED);
	assert_string_not_equal(pwc_cond_reason(r.status, EO_COND_AVAILABLE),
				EO_REASON_FOREIGN_OBJECT);
	assert_string_not_equal(pwc_cond_reason(r.status, EO_COND_PROGRESSING),
				EO_REASON_FOREIGN_OBJECT);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);

	/* x-client, created second: its headless Service name is x's client Service. */
	pwc_world_init(&w, other, false);
	other = pwc_cluster_named("x", "x-uid", NULL);
	w.hsvc = eo_desired_client_service(other);
	w.in.headless_svc = w.hsvc;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_FOREIGN_OBJECT);
	pwc_assert_cond_says(
	    r.status, EO_COND_AVAILABLE,
	    "Service x-client is not controlled by this EtcdCluster (its controller: "
	    "EtcdCluster x, uid x-uid)");
	eo_plan_result_clear(&r);
	pwc_world_free(&w);

	/* The owner cluster itself goes on: its own Services are in line, it latches. */
	pwc_world_init(&w, other, true);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_LATCH_TARGET);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
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
	char *st = pwc_latched_status(1, "\"clusterID\":\"248adce0359142ba\"");
	json_t *np =
	    json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "networking.k8s.io/v1", "kind",
		      "NetworkPolicy", "metadata", "name", "demo", "namespace", "default");

	(void)state;
	pwc_world_init(&w, pwc_cluster(1, st), true);
	pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, VOTER),
		      pwc_pod("demo-aaaaa", true));
	pwc_world_pdb(&w, 1);
	json_object_del(json_object_get(w.pdb, "metadata"), "ownerReferences");
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
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
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
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
	free(st);
}

static void test_paused_from_start(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	char *st = pwc_latched_status(0, NULL);

	(void)state;
	pwc_world_init(&w, pwc_cluster(0, st), true);
	free(st);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_PAUSED);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_PAUSED);
	assert_null(json_object_get(r.status, "progressDeadline"));
	pwc_assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
}

static void test_deleting_and_waiting(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	char *st = pwc_latched_status(1, NULL);
	json_t *m = pwc_member("demo-aaaaa", true, false, NULL);

	(void)state;
	json_object_set_new(json_object_get(m, "metadata"), "deletionTimestamp",
			    json_string("2026-06-02T10:00:00Z"));
	pwc_world_init(&w, pwc_cluster(1, st), true);
	free(st);
	pwc_world_add(&w, m, NULL);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_WAIT);
	assert_int_equal(r.requeue_ms, EO_PLAN_REQUEUE_SHORT_MS);
	eo_plan_result_clear(&r);
	/* A cluster being deleted: nothing, no status. */
	json_object_set_new(json_object_get(w.cluster, "metadata"), "deletionTimestamp",
			    json_string("2026-06-02T10:00:00Z"));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_null(r.status);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
}

static void test_helpers(void **state)
{
	char buf[24];
	json_t *p = pwc_pod("x", true);

	(void)state;
	eo_plan_format_id(0x248adce0359142baULL, buf, sizeof(buf));
	assert_string_equal(buf, "248adce0359142ba");
	assert_true(eo_plan_pod_ready(p));
	json_object_set_new(json_object_get(p, "metadata"), "deletionTimestamp",
			    json_string("2026-06-02T10:00:00Z"));
	assert_false(eo_plan_pod_ready(p));
	assert_false(eo_plan_pod_ready(NULL));
	assert_string_equal(eo_plan_action_name(EO_PLAN_CREATE_SEED), "create-seed");
	assert_string_equal(eo_plan_action_name((enum eo_plan_action)99), "unknown");
	json_decref(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_services_first),
	    cmocka_unit_test(test_taken_over_legacy_headless_service),
	    cmocka_unit_test(test_latch_target),
	    cmocka_unit_test(test_bootstrap_table),
	    cmocka_unit_test(test_steady_state_no_churn),
	    cmocka_unit_test(test_adopted_cluster),
	    cmocka_unit_test(test_member_not_ready_after_bootstrap),
	    cmocka_unit_test(test_spec_changed_relatches),
	    cmocka_unit_test(test_deadlines),
	    cmocka_unit_test(test_invalid_and_unsupported_specs),
	    cmocka_unit_test(test_auth_enable_and_latch),
	    cmocka_unit_test(test_auth_required_not_configured),
	    cmocka_unit_test(test_auth_problems),
	    cmocka_unit_test(test_tls_problem_stops),
	    cmocka_unit_test(test_tls_bootstrap_handshake),
	    cmocka_unit_test(test_foreign_service_refused),
	    cmocka_unit_test(test_foreign_pdb_and_netpol_refused),
	    cmocka_unit_test(test_paused_from_start),
	    cmocka_unit_test(test_deleting_and_waiting),
	    cmocka_unit_test(test_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
