/*
 * Unit tests for plan/member.c: the member controller's next action and desired status, as a
 * table over the member's world (finalizer, pending, PVC, Pod, ownership, voter label, readiness,
 * etcd answers, dormancy, deletion), plus no-churn once everything is known.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/planworld_step.h"
#include "support/tu_main.h"

#include <string.h>

#include "api/meta.h"
#include "api/conditions.h"
#include "api/names.h"
#include "kube/client.h"
#include "plan/member.h"
#include "plan/needs.h"
#include "plan/plan.h"

#define T0 1780394400

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

static json_t *member(void)
{
	return json_pack(
	    "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:[s]}, s:{s:s, s:s, s:b, s:s, s:s, s:i}, s:{s:b}}",
	    "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdMember", "metadata", "name", "demo-a",
	    "namespace", "default", "uid", "m-uid", "resourceVersion", "7", "finalizers",
	    EO_FINALIZER_MEMBER_CLEANUP, "spec", "clusterName", "demo", "version", "3.6.11",
	    "bootstrap", 1, "initialCluster",
	    "demo-a=http://demo-a.demo.default.svc.cluster.local:2380", "clusterToken", "tok",
	    "replicas", 1, "status", "isVoter", 1);
}

static json_t *owned(const char *name, const char *owner_uid, bool ready, bool voter_label)
{
	json_t *o = json_pack("{s:{s:s, s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:b}], s:{}}, "
			      "s:{s:s, s:[{s:s, s:s}]}}",
			      "metadata", "name", name, "namespace", "default", "uid", "pod-uid-1",
			      "ownerReferences", "apiVersion", EO_API_GROUP_VERSION, "kind",
			      "EtcdMember", "name", "demo-a", "uid", owner_uid, "controller", 1,
			      "labels", "status", "phase", ready ? "Running" : "Pending",
			      "conditions", "type", "Ready", "status", ready ? "True" : "False");

	if (voter_label)
		json_object_set_new(json_object_get(json_object_get(o, "metadata"), "labels"),
				    EO_LABEL_ROLE, json_string(EO_LABEL_ROLE_VOTER));
	return o;
}

static json_t *cluster(bool bootstrapped)
{
	json_t *c =
	    json_pack("{s:{s:s, s:s, s:s}, s:{s:s}, s:{}}", "metadata", "name", "demo", "namespace",
		      "default", "uid", "c-uid", "spec", "version", "3.6.11", "status");

	if (bootstrapped)
		json_object_set_new(json_object_get(c, "status"), "clusterID",
				    json_string("248adce0359142ba"));
	return c;
}

enum mut {
	M_NONE,
	M_NO_FINALIZER,
	M_PENDING,
	M_DELETING,
	M_DORMANT,
	M_HAS_ID,      /* status.memberID known: the member ran */
	M_VOLUME_SAME, /* status.dataVolumeUID is the observed PVC's UID */
	M_VOLUME_OLD,  /* status.dataVolumeUID names a PVC that is gone */
};

static void mutate(json_t *m, enum mut mu)
{
	json_t *md = json_object_get(m, "metadata"), *spec = json_object_get(m, "spec");

	switch (mu) {
	case M_NO_FINALIZER:
		json_object_del(md, "finalizers");
		break;
	case M_PENDING:
		json_object_set_new(spec, "initialCluster", json_string(""));
		break;
	case M_DELETING:
		json_object_set_new(md, "deletionTimestamp", json_string("2026-06-02T10:00:00Z"));
		break;
	case M_DORMANT:
		json_object_set_new(spec, "dormant", json_true());
		break;
	case M_HAS_ID:
		json_object_set_new(json_object_get(m, "status"), "memberID",
				    json_string("8e9e05c52164694d"));
		break;
	case M_VOLUME_SAME:
	case M_VOLUME_OLD:
		json_object_set_new(json_object_get(m, "status"), "dataVolumeUID",
				    json_string(mu == M_VOLUME_SAME ? "pod-uid-1" : "pvc-old"));
		break;
	default:
		break;
	}
}

static void test_member_table(void **state)
{
	struct {
		const char *what;
		enum mut mu;
		bool has_cluster, has_pvc, pvc_ours, has_pod, pod_ours, ready, voter_label;
		enum eo_mplan_action want;
		const char *ready_status, *ready_reason;
	} cases[] = {
	    {"no finalizer", M_NO_FINALIZER, true, false, false, false, false, false, false,
	     EO_MPLAN_ADD_FINALIZER, NULL, NULL},
	    {"pending", M_PENDING, true, false, false, false, false, false, false, EO_MPLAN_WAIT,
	     NULL, NULL},
	    {"deleting, cluster gone", M_DELETING, false, true, true, true, true, true, true,
	     EO_MPLAN_DROP_FINALIZER, NULL, NULL},
	    {"deleting", M_DELETING, true, true, true, true, true, true, true,
	     EO_MPLAN_REMOVE_MEMBER, NULL, NULL},
	    {"no PVC, never ran", M_NONE, true, false, false, false, false, false, false,
	     EO_MPLAN_CREATE_PVC, NULL, NULL},
	    /* A member that ran never gets an empty PVC under its member ID. */
	    {"no PVC, member ID known", M_HAS_ID, true, false, false, false, false, false, false,
	     EO_MPLAN_WAIT, "False", EO_REASON_DATA_VOLUME_LOST},
	    {"no PVC, volume recorded", M_VOLUME_SAME, true, false, false, false, false, false,
	     false, EO_MPLAN_WAIT, "False", EO_REASON_DATA_VOLUME_LOST},
	    {"PVC replaced (other UID)", M_VOLUME_OLD, true, true, true, false, false, false, false,
	     EO_MPLAN_WAIT, "False", EO_REASON_DATA_VOLUME_LOST},
	    {"PVC replaced, Pod still there", M_VOLUME_OLD, true, true, true, true, true, true,
	     true, EO_MPLAN_WAIT, "False", EO_REASON_DATA_VOLUME_LOST},
	    {"same PVC, no Pod", M_VOLUME_SAME, true, true, true, false, false, false, false,
	     EO_MPLAN_CREATE_POD, NULL, NULL},
	    {"dormant, no PVC: nothing", M_DORMANT, true, false, false, false, false, false, false,
	     EO_MPLAN_NONE, "False", EO_REASON_PAUSED},
	    {"foreign PVC", M_NONE, true, true, false, false, false, false, false, EO_MPLAN_REFUSE,
	     "False", EO_REASON_POD_NOT_READY},
	    {"no Pod", M_NONE, true, true, true, false, false, false, false, EO_MPLAN_CREATE_POD,
	     NULL, NULL},
	    {"foreign Pod", M_NONE, true, true, true, true, false, false, false, EO_MPLAN_REFUSE,
	     "False", EO_REASON_POD_NOT_READY},
	    {"voter label missing", M_NONE, true, true, true, true, true, false, false,
	     EO_MPLAN_PATCH_POD, NULL, NULL},
	    {"Pod not ready", M_NONE, true, true, true, true, true, false, true, EO_MPLAN_NONE,
	     "False", EO_REASON_POD_NOT_READY},
	    {"Pod ready, ask etcd", M_NONE, true, true, true, true, true, true, true,
	     EO_MPLAN_QUERY_ETCD, NULL, NULL},
	    {"dormant with Pod", M_DORMANT, true, true, true, true, true, true, true,
	     EO_MPLAN_DELETE_POD, "False", EO_REASON_PAUSED},
	    {"dormant without Pod", M_DORMANT, true, true, true, false, false, false, false,
	     EO_MPLAN_NONE, "False", EO_REASON_PAUSED},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *m = member(), *c = cases[i].has_cluster ? cluster(false) : NULL;
		json_t *pvc =
		    cases[i].has_pvc
			? owned("data-demo-a", cases[i].pvc_ours ? "m-uid" : "x", false, false)
			: NULL;
		json_t *pod = cases[i].has_pod ? owned("demo-a", cases[i].pod_ours ? "m-uid" : "x",
						       cases[i].ready, cases[i].voter_label)
					       : NULL;
		struct eo_mplan_input in = {
		    .member = m, .cluster = c, .pod = pod, .pvc = pvc, .build = &OPTS, .now = T0};
		struct eo_mplan_result r;

		mutate(m, cases[i].mu);
		if (eo_member_plan(&in, &r) != 0)
			fail_msg("%s: plan failed", cases[i].what);
		if (r.action != cases[i].want)
			fail_msg("%s: action %s, want %s", cases[i].what,
				 eo_mplan_action_name(r.action),
				 eo_mplan_action_name(cases[i].want));
		if (cases[i].ready_status != NULL) {
			assert_non_null(r.status);
			assert_true(eo_condition_matches(
			    r.status, EO_COND_READY, cases[i].ready_status, cases[i].ready_reason));
		}
		if (r.action == EO_MPLAN_CREATE_PVC)
			assert_string_equal(eo_meta_name(r.object), "data-demo-a");
		if (r.action == EO_MPLAN_WAIT && cases[i].mu != M_PENDING)
			assert_null(r.object);
		if (r.action == EO_MPLAN_CREATE_POD)
			assert_string_equal(eo_meta_name(r.object), "demo-a");
		if (r.action == EO_MPLAN_QUERY_ETCD)
			assert_string_equal(r.endpoint,
					    "http://demo-a.demo.default.svc.cluster.local:2379");
		eo_member_plan_clear(&r);
		json_decref(m);
		json_decref(c);
		json_decref(pvc);
		json_decref(pod);
	}
}

/*
 * The finalizer of a member whose cluster is being deleted: dropped at once (no MemberRemove),
 * except while a Retain cluster's finalizer still waits to release this member's PVC: garbage
 * collection would take the PVC with the EtcdMember.
 */
static void test_deleting_cluster_retain(void **state)
{
	static const struct {
		const char *what;
		bool has_cluster;
		const char *policy;
		bool retain_finalizer;
		const char *pvc_owner; /* NULL: no PVC */
		enum eo_mplan_action want;
	} rows[] = {
	    {"Delete: dropped", true, "Delete", false, "m-uid", EO_MPLAN_DROP_FINALIZER},
	    {"no policy: dropped", true, NULL, false, "m-uid", EO_MPLAN_DROP_FINALIZER},
	    {"Retain, PVC still owned: waits", true, "Retain", true, "m-uid", EO_MPLAN_WAIT},
	    {"Retain, PVC released: dropped", true, "Retain", true, "x", EO_MPLAN_DROP_FINALIZER},
	    {"Retain, no PVC: dropped", true, "Retain", true, NULL, EO_MPLAN_DROP_FINALIZER},
	    {"Retain without its finalizer: dropped", true, "Retain", false, "m-uid",
	     EO_MPLAN_DROP_FINALIZER},
	    {"cluster gone: dropped", false, "Retain", true, "m-uid", EO_MPLAN_DROP_FINALIZER},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *m = member(), *c = rows[i].has_cluster ? cluster(true) : NULL;
		json_t *pvc = rows[i].pvc_owner
				  ? owned("data-demo-a", rows[i].pvc_owner, false, false)
				  : NULL;
		struct eo_mplan_input in = {
		    .member = m, .cluster = c, .pvc = pvc, .build = &OPTS, .now = T0};
		struct eo_mplan_result r;

		mutate(m, M_DELETING);
		if (c != NULL) {
			json_t *md = json_object_get(c, "metadata");

			json_object_set_new(md, "deletionTimestamp",
					    json_string("2026-06-02T10:00:00Z"));
			if (rows[i].policy != NULL)
				json_object_set_new(json_object_get(c, "spec"), "deletionPolicy",
						    json_string(rows[i].policy));
			if (rows[i].retain_finalizer)
				json_object_set_new(md, "finalizers",
						    json_pack("[s]", EO_FINALIZER_RETAIN_DATA));
		}
		if (eo_member_plan(&in, &r) != 0)
			fail_msg("%s: plan failed", rows[i].what);
		if (r.action != rows[i].want)
			fail_msg("%s: action %s, want %s", rows[i].what,
				 eo_mplan_action_name(r.action),
				 eo_mplan_action_name(rows[i].want));
		if (r.action == EO_MPLAN_WAIT) {
			assert_true(r.requeue_ms > 0);
			assert_non_null(strstr(r.message, "data-demo-a"));
		}
		eo_member_plan_clear(&r);
		json_decref(m);
		json_decref(c);
		json_decref(pvc);
	}
}

/* A Pod that ended (node shutdown, eviction) is deleted so the member starts
 * again on its PVC; a running Pod, or an ended one already being deleted, is not. */
static void test_terminal_pod_is_deleted(void **state)
{
	const struct {
		const char *phase;
		bool terminating, want_delete;
	} cases[] = {
	    {"Failed", false, true},
	    {"Succeeded", false, true},
	    {"Failed", true, false},
	    {"Running", false, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *m = member(), *c = cluster(false);
		json_t *pvc = owned("data-demo-a", "m-uid", false, false);
		json_t *pod = owned("demo-a", "m-uid", true, true);
		struct eo_mplan_input in = {
		    .member = m, .cluster = c, .pod = pod, .pvc = pvc, .build = &OPTS, .now = T0};
		struct eo_mplan_result r;

		json_object_set_new(json_object_get(pod, "status"), "phase",
				    json_string(cases[i].phase));
		if (cases[i].terminating)
			json_object_set_new(json_object_get(pod, "metadata"), "deletionTimestamp",
					    json_string("2026-01-01T00:00:00Z"));
		assert_int_equal(eo_member_plan(&in, &r), 0);
		if ((r.action == EO_MPLAN_DELETE_POD) != cases[i].want_delete)
			fail_msg("case %zu (%s): action %s", i, cases[i].phase,
				 eo_mplan_action_name(r.action));
		if (cases[i].want_delete) {
			assert_non_null(strstr(r.message, cases[i].phase));
			assert_true(eo_condition_matches(r.status, EO_COND_READY, "False",
							 EO_REASON_POD_NOT_READY));
		}
		eo_member_plan_clear(&r);
		json_decref(m);
		json_decref(c);
		json_decref(pvc);
		json_decref(pod);
	}
}

/* etcd answers, then the status is stable and etcd is not asked again. */
static void test_discovery_then_no_churn(void **state)
{
	json_t *m = member(), *c = cluster(true);
	json_t *pvc = owned("data-demo-a", "m-uid", false, false);
	json_t *pod = owned("demo-a", "m-uid", true, true);
	char peer[] = "http://demo-a.demo.default.svc.cluster.local:2380";
	char *peers[] = {peer};
	struct eo_etcd_member em = {.id = 0x96e78c8d1de8ec76ULL,
				    .name = (char *)"demo-a",
				    .peer_urls = peers,
				    .n_peer_urls = 1};
	struct eo_etcd_members list = {.cluster_id = 0x248adce0359142baULL, .v = &em, .n = 1};
	struct eo_etcd_status est = {.version = "3.6.11", .cluster_id = 0x248adce0359142baULL};
	struct eo_mplan_input in = {.member = m,
				    .cluster = c,
				    .pod = pod,
				    .pvc = pvc,
				    .build = &OPTS,
				    .etcd_queried = true,
				    .list = &list,
				    .status = &est,
				    .now = T0};
	struct eo_mplan_result r, again;

	(void)state;
	pwst_mplan(&in, &r, EO_MPLAN_NONE);
	assert_true(r.status_changed);
	assert_string_equal(json_string_value(json_object_get(r.status, "memberID")),
			    "96e78c8d1de8ec76");
	assert_string_equal(json_string_value(json_object_get(r.status, "version")), "3.6.11");
	assert_string_equal(json_string_value(json_object_get(r.status, "pvcName")), "data-demo-a");
	assert_int_equal(json_integer_value(json_object_get(r.status, "replicas")), 1);
	assert_true(eo_condition_matches(r.status, EO_COND_READY, "True", EO_REASON_POD_READY));
	assert_true(eo_condition_matches(r.status, EO_COND_VERSION_DRIFTED, "False",
					 EO_REASON_VERSION_MATCHED));
	json_object_set(m, "status", r.status);
	in.etcd_queried = false;
	in.list = NULL;
	in.status = NULL;
	in.now = T0 + 600;
	pwst_mplan(&in, &again, EO_MPLAN_NONE);
	assert_false(again.status_changed);
	assert_true(json_equal(again.status, r.status));
	eo_member_plan_clear(&again);

	/*
	 * A rolling update moved spec.version and the new Pod's UID was recorded while it
	 * started: once ready, etcd is asked again for the version it runs.
	 */
	json_object_set_new(json_object_get(m, "spec"), "version", json_string("3.6.16"));
	pwst_mplan(&in, &again, EO_MPLAN_QUERY_ETCD);
	eo_member_plan_clear(&again);
	json_object_set_new(json_object_get(m, "spec"), "version", json_string("3.6.11"));

	/*
	 * The member's Pod was not ready a moment ago (a restart, a rolled Pod): Ready=False,
	 * memberID and version known. The Pod's probe passing is not enough: etcd is asked.
	 */
	{
		json_t *st = json_deep_copy(r.status);
		struct eo_condition nr = {EO_COND_READY, EO_COND_FALSE, EO_REASON_POD_NOT_READY,
					  "pod phase: Running", 1};

		assert_true(eo_condition_set(st, &nr, T0 + 300) >= 0);
		json_object_set_new(m, "status", st);
		pwst_mplan(&in, &again, EO_MPLAN_QUERY_ETCD);
		eo_member_plan_clear(&again);
		/* Its client port does not answer (etcd waits to publish itself): not Ready. */
		in.etcd_queried = true;
		in.list_err = EO_ETCD_TIMEOUT;
		in.status_err = EO_ETCD_TIMEOUT;
		pwst_mplan(&in, &again, EO_MPLAN_NONE);
		assert_true(eo_condition_matches(again.status, EO_COND_READY, "False",
						 EO_REASON_NOT_SERVING));
		assert_non_null(strstr(again.message, "does not answer on its client port"));
		assert_int_equal(again.requeue_ms, 2000);
		eo_member_plan_clear(&again);
		/* Another etcd cluster answering is no answer either. */
		in.list_err = EO_ETCD_OK;
		in.status_err = EO_ETCD_OK;
		in.list = &list;
		in.status = &est;
		list.cluster_id = est.cluster_id = 0x1111;
		assert_int_equal(eo_member_plan(&in, &again), 0);
		assert_true(eo_condition_matches(again.status, EO_COND_READY, "False",
						 EO_REASON_NOT_SERVING));
		eo_member_plan_clear(&again);
		/* It answers: Ready=True. */
		list.cluster_id = est.cluster_id = 0x248adce0359142baULL;
		assert_int_equal(eo_member_plan(&in, &again), 0);
		assert_true(
		    eo_condition_matches(again.status, EO_COND_READY, "True", EO_REASON_POD_READY));
		eo_member_plan_clear(&again);
		json_object_set(m, "status", r.status);
	}

	/*
	 * A learner: its own endpoint refuses the member list but answers its status, whose
	 * header names it. The member ID comes from there and it is Ready (it serves).
	 */
	json_object_del(json_object_get(m, "status"), "memberID");
	in.etcd_queried = true;
	in.list = NULL;
	in.list_err = EO_ETCD_LEARNER;
	in.status = &est;
	in.status_err = EO_ETCD_OK;
	est.member_id = 0x96e78c8d1de8ec76ULL;
	assert_int_equal(eo_member_plan(&in, &again), 0);
	assert_string_equal(json_string_value(json_object_get(again.status, "memberID")),
			    "96e78c8d1de8ec76");
	assert_true(eo_condition_matches(again.status, EO_COND_READY, "True", EO_REASON_POD_READY));
	eo_member_plan_clear(&again);

	/*
	 * A learner of an auth cluster: it refuses the list (learner) and the status (no token:
	 * a learner cannot authenticate). Those refusals are answers: it serves, its ID is not
	 * known yet (DiscoveringMemberID, which the cluster planner counts as serving).
	 */
	json_object_del(json_object_get(m, "status"), "memberID");
	{
		struct eo_condition nr = {EO_COND_READY, EO_COND_FALSE, EO_REASON_POD_NOT_READY,
					  "pod phase: Running", 1};

		assert_true(eo_condition_set(json_object_get(m, "status"), &nr, T0 + 400) > 0);
	}
	in.list_err = EO_ETCD_LEARNER;
	in.status = NULL;
	in.status_err = EO_ETCD_AUTH;
	assert_int_equal(eo_member_plan(&in, &again), 0);
	assert_true(eo_condition_matches(again.status, EO_COND_READY, "False",
					 EO_REASON_DISCOVERING_MEMBER_ID));
	eo_member_plan_clear(&again);

	/* A new member whose etcd is silent (timeouts, no connection): NotServing, 2 s. */
	json_object_del(json_object_get(m, "status"), "memberID");
	in.list = NULL;
	in.status = NULL;
	in.etcd_queried = true;
	in.list_err = EO_ETCD_UNAVAILABLE;
	in.status_err = EO_ETCD_TIMEOUT;
	assert_int_equal(eo_member_plan(&in, &again), 0);
	assert_true(
	    eo_condition_matches(again.status, EO_COND_READY, "False", EO_REASON_NOT_SERVING));
	assert_int_equal(again.requeue_ms, 2000);
	eo_member_plan_clear(&again);
	eo_member_plan_clear(&r);
	json_decref(m);
	json_decref(c);
	json_decref(pvc);
	json_decref(pod);
}

/*
 * A member list from another etcd cluster (a reused address) records nothing: no member ID,
 * no version, and the condition says why.
 */
static void test_other_cluster_recorded_nothing(void **state)
{
	json_t *m = member(), *c = cluster(true);
	json_t *pvc = owned("data-demo-a", "m-uid", false, false);
	json_t *pod = owned("demo-a", "m-uid", true, true);
	char peer[] = "http://demo-a.demo.default.svc.cluster.local:2380";
	char *peers[] = {peer};
	struct eo_etcd_member em = {.id = 0x96e78c8d1de8ec76ULL,
				    .name = (char *)"demo-a",
				    .peer_urls = peers,
				    .n_peer_urls = 1};
	struct eo_etcd_members list = {.cluster_id = 0x1111, .v = &em, .n = 1};
	struct eo_etcd_status est = {.version = "3.5.35", .cluster_id = 0x1111};
	struct eo_mplan_input in = {.member = m,
				    .cluster = c,
				    .pod = pod,
				    .pvc = pvc,
				    .build = &OPTS,
				    .etcd_queried = true,
				    .list = &list,
				    .status = &est,
				    .now = T0};
	struct eo_mplan_result r;

	(void)state;
	assert_int_equal(eo_member_plan(&in, &r), 0);
	assert_null(json_object_get(r.status, "memberID"));
	assert_null(json_object_get(r.status, "version"));
	/* Another cluster answering is not this member serving. */
	assert_true(eo_condition_matches(r.status, EO_COND_READY, "False", EO_REASON_NOT_SERVING));
	assert_non_null(strstr(r.message, "another etcd cluster"));
	eo_member_plan_clear(&r);

	/* The same ID in capitals (as a hand-written status might carry): recorded. */
	list.cluster_id = est.cluster_id = 0x248adce0359142baULL;
	json_object_set_new(json_object_get(c, "status"), "clusterID",
			    json_string("248ADCE0359142BA"));
	assert_int_equal(eo_member_plan(&in, &r), 0);
	assert_string_equal(json_string_value(json_object_get(r.status, "memberID")),
			    "96e78c8d1de8ec76");
	eo_member_plan_clear(&r);
	json_decref(m);
	json_decref(c);
	json_decref(pvc);
	json_decref(pod);
}

/*
 * Resume: the seed woken from dormancy (spec.dormant back to false, memberID kept) gets its Pod
 * back on the same PVC, joining the existing cluster (never "new", so the same cluster ID).
 */
static void test_woken_member_gets_its_pod_back(void **state)
{
	json_t *m = member(), *c = cluster(true);
	json_t *pvc = owned("data-demo-a", "m-uid", false, false);
	struct eo_mplan_input in = {
	    .member = m, .cluster = c, .pod = NULL, .pvc = pvc, .build = &OPTS, .now = T0};
	struct eo_mplan_result r;
	json_t *spec = NULL, *vol = NULL, *cmd = NULL, *a = NULL;
	bool existing = false;
	size_t i;

	(void)state;
	json_object_set_new(json_object_get(m, "spec"), "dormant", json_false());
	json_object_set_new(json_object_get(m, "status"), "memberID",
			    json_string("8e9e05c52164694d"));
	json_object_set_new(json_object_get(m, "status"), "replicas", json_integer(0));
	pwst_mplan(&in, &r, EO_MPLAN_CREATE_POD);
	spec = json_object_get(r.object, "spec");
	vol = json_array_get(json_object_get(spec, "volumes"), 0);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(vol, "persistentVolumeClaim"), "claimName")),
			    "data-demo-a");
	cmd = json_object_get(json_array_get(json_object_get(spec, "containers"), 0), "command");
	json_array_foreach(cmd, i, a)
	{
		if (strcmp(json_string_value(a), "--initial-cluster-state=existing") == 0)
			existing = true;
	}
	assert_true(existing);
	eo_member_plan_clear(&r);
	json_decref(pvc);
	json_decref(c);
	json_decref(m);
}

/* A memory member whose Pod is gone never gets a second Pod on an empty tmpfs. */
static void test_lost_memory_member_waits(void **state)
{
	json_t *m = member(), *c = cluster(true);
	struct eo_mplan_input in = {
	    .member = m, .cluster = c, .pod = NULL, .pvc = NULL, .build = &OPTS, .now = T0};
	struct eo_mplan_result r;

	(void)state;
	json_object_set_new(json_object_get(m, "spec"), "storage",
			    json_pack("{s:s, s:s}", "size", "256Mi", "medium", "Memory"));
	/* Never had a Pod: it gets one (no PVC for memory members). */
	pwst_mplan(&in, &r, EO_MPLAN_CREATE_POD);
	eo_member_plan_clear(&r);
	/* Had one, lost it: wait for the cluster controller to replace the member. */
	json_object_set_new(json_object_get(m, "status"), "podUID", json_string("old-pod-uid"));
	pwst_mplan(&in, &r, EO_MPLAN_WAIT);
	assert_null(r.object);
	eo_member_plan_clear(&r);
	json_decref(c);
	json_decref(m);
}

/* A member whose Pod is missing says so (not a stale Ready=True), with observedGeneration. */
static void test_missing_pod_not_ready(void **state)
{
	json_t *m = member(), *c = cluster(true);
	json_t *pvc = owned("data-demo-a", "m-uid", false, false);
	struct eo_mplan_input in = {
	    .member = m, .cluster = c, .pod = NULL, .pvc = pvc, .build = &OPTS, .now = T0};
	struct eo_mplan_result r;
	json_t *cond = NULL;

	(void)state;
	json_object_set_new(json_object_get(m, "metadata"), "generation", json_integer(4));
	json_object_set_new(json_object_get(m, "status"), "conditions",
			    json_pack("[{s:s, s:s, s:s, s:s, s:s, s:i}]", "type", "Ready", "status",
				      "True", "reason", "PodReady", "message", "",
				      "lastTransitionTime", "2026-06-02T09:00:00Z",
				      "observedGeneration", 3));
	pwst_mplan(&in, &r, EO_MPLAN_CREATE_POD);
	assert_non_null(r.status);
	assert_true(r.status_changed);
	cond = json_array_get(json_object_get(r.status, "conditions"), 0);
	assert_string_equal(json_string_value(json_object_get(cond, "status")), "False");
	assert_string_equal(json_string_value(json_object_get(cond, "reason")),
			    EO_REASON_POD_NOT_READY);
	assert_int_equal(json_integer_value(json_object_get(cond, "observedGeneration")), 4);
	assert_non_null(strstr(r.message, "Pod demo-a is missing"));
	/* The Pod is created on this volume: its identity is recorded with it. */
	assert_string_equal(json_string_value(json_object_get(r.status, "dataVolumeUID")),
			    "pod-uid-1");
	eo_member_plan_clear(&r);

	/* No PVC either: the same, naming the PVC. */
	in.pvc = NULL;
	pwst_mplan(&in, &r, EO_MPLAN_CREATE_PVC);
	assert_non_null(r.status);
	assert_non_null(strstr(r.message, "PVC data-demo-a is missing"));
	eo_member_plan_clear(&r);
	/*
	 * Once the member has a member ID its data is on that volume: a missing PVC is never
	 * recreated empty (it would restart under its old ID without its raft log and vote).
	 */
	json_object_set_new(json_object_get(m, "status"), "memberID",
			    json_string("8e9e05c52164694d"));
	pwst_mplan(&in, &r, EO_MPLAN_WAIT);
	assert_null(r.object);
	assert_true(
	    eo_condition_matches(r.status, EO_COND_READY, "False", EO_REASON_DATA_VOLUME_LOST));
	assert_int_equal(json_integer_value(json_object_get(r.status, "replicas")), 0);
	eo_member_plan_clear(&r);
	json_decref(pvc);
	json_decref(c);
	json_decref(m);
}

/* The Pod's data-guard init container ended with exit code `code` (state or lastState). */
static void guard_ended(json_t *pod, int code, bool last)
{
	json_t *cs = json_pack("{s:s, s:i}", "name", EO_DESIRED_DATA_GUARD_CONTAINER,
			       "restartCount", last ? 1 : 0);
	json_t *t = json_pack("{s:i, s:s, s:s}", "exitCode", code, "reason", "Error", "message",
			      "data directory has no WAL: member demo-a (etcd member ID "
			      "8e9e05c52164694d) finds no write-ahead log\n");

	if (last) {
		json_object_set_new(cs, "lastState", json_pack("{s:o}", "terminated", t));
		json_object_set_new(
		    cs, "state", json_pack("{s:{s:s}}", "waiting", "reason", "CrashLoopBackOff"));
	} else {
		json_object_set_new(cs, "state", json_pack("{s:o}", "terminated", t));
	}
	json_object_set_new(json_object_get(pod, "status"), "initContainerStatuses",
			    json_pack("[o]", cs));
}

/*
 * A member with an ID whose data guard found no WAL (its data wiped under an intact PVC): the
 * member waits, Ready=False/DataDirLost with the guard's message, for the cluster controller to
 * replace it. Another exit code, or a member without an ID, is not "data lost".
 */
static void test_data_dir_lost_waits(void **state)
{
	static const struct {
		bool id;
		int code;
		bool last;
		bool lost;
	} cases[] = {
	    {true, EO_DESIRED_DATA_GUARD_EXIT_NO_WAL, false, true},
	    {true, EO_DESIRED_DATA_GUARD_EXIT_NO_WAL, true, true},
	    {true, 1, false, false},
	    {true, 1, true, false},
	    {false, EO_DESIRED_DATA_GUARD_EXIT_NO_WAL, false, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *m = member(), *c = cluster(true);
		json_t *pvc = owned("data-demo-a", "m-uid", false, false);
		json_t *pod = owned("demo-a", "m-uid", false, true);
		struct eo_mplan_input in = {
		    .member = m, .cluster = c, .pod = pod, .pvc = pvc, .build = &OPTS, .now = T0};
		struct eo_mplan_result r;
		char why[256];

		if (cases[i].id)
			mutate(m, M_HAS_ID);
		mutate(m, M_VOLUME_SAME);
		guard_ended(pod, cases[i].code, cases[i].last);
		assert_int_equal(eo_plan_data_dir_lost(m, pod, why, sizeof(why)), cases[i].lost);
		assert_true(eo_plan_member_lost_data(m, pod, pvc) == cases[i].lost);
		assert_int_equal(eo_member_plan(&in, &r), 0);
		if (cases[i].lost) {
			assert_string_equal(why, "data directory has no WAL: member demo-a (etcd "
						 "member ID 8e9e05c52164694d) finds no write-ahead "
						 "log");
			assert_int_equal(r.action, EO_MPLAN_WAIT);
			assert_null(r.object);
			assert_true(eo_condition_matches(r.status, EO_COND_READY, "False",
							 EO_REASON_DATA_DIR_LOST));
			assert_non_null(strstr(r.message, "data directory has no WAL"));
			assert_non_null(strstr(r.message, "demo-a"));
		} else {
			assert_int_equal(r.action, EO_MPLAN_NONE);
			assert_false(eo_condition_matches(r.status, EO_COND_READY, "False",
							  EO_REASON_DATA_DIR_LOST));
		}
		eo_member_plan_clear(&r);
		/* A Pod being deleted tells nothing about the next one. */
		json_object_set_new(json_object_get(pod, "metadata"), "deletionTimestamp",
				    json_string("2026-06-02T10:00:00Z"));
		assert_false(eo_plan_data_dir_lost(m, pod, NULL, 0));
		json_decref(m);
		json_decref(c);
		json_decref(pvc);
		json_decref(pod);
	}
}

/*
 * A PVC not bound yet: its StorageClass is read first; a class that binds immediately (or
 * names no mode: Kubernetes' default is Immediate) holds the Pod until the PVC is bound; a
 * class that waits for the first consumer, a class that could not be read, a PVC that names
 * no class, and a bound PVC let the Pod be created at once.
 */
static void test_unbound_claim_holds_pod(void **state)
{
	json_t *m = member(), *c = cluster(true);
	json_t *pvc = owned("data-demo-a", "m-uid", false, false);
	json_t *immediate = json_pack("{s:{s:s}, s:s}", "metadata", "name", "standard",
				      "volumeBindingMode", "Immediate");
	json_t *wffc = json_pack("{s:{s:s}, s:s}", "metadata", "name", "standard",
				 "volumeBindingMode", "WaitForFirstConsumer");
	json_t *nomode = json_pack("{s:{s:s}}", "metadata", "name", "standard");
	struct eo_mplan_input in = {
	    .member = m, .cluster = c, .pod = NULL, .pvc = pvc, .build = &OPTS, .now = T0};
	struct eo_mplan_result r;

	(void)state;
	json_object_set_new(pvc, "spec", json_pack("{s:s}", "storageClassName", "standard"));
	/* Pending, class not read yet: read it, nothing created. */
	pwst_mplan(&in, &r, EO_MPLAN_READ_CLASS);
	assert_string_equal(r.storage_class, "standard");
	assert_null(r.object);
	assert_int_equal(eo_member_plan_needs(&r, &in, EO_MPLAN_NEED_NONE), EO_MPLAN_NEED_CLASS);
	eo_member_plan_clear(&r);
	/* Immediate: the Pod waits, and says why. */
	in.class_read = true;
	in.storage_class = immediate;
	pwst_mplan(&in, &r, EO_MPLAN_WAIT);
	assert_null(r.object);
	assert_non_null(strstr(r.message, "PVC data-demo-a is not bound yet"));
	assert_true(r.requeue_ms > 0);
	eo_member_plan_clear(&r);
	in.storage_class = nomode;
	pwst_mplan(&in, &r, EO_MPLAN_WAIT);
	eo_member_plan_clear(&r);
	/* WaitForFirstConsumer: the Pod is what binds the claim. */
	in.storage_class = wffc;
	pwst_mplan(&in, &r, EO_MPLAN_CREATE_POD);
	eo_member_plan_clear(&r);
	/* The class could not be read: as before the check. */
	in.storage_class = NULL;
	pwst_mplan(&in, &r, EO_MPLAN_CREATE_POD);
	eo_member_plan_clear(&r);
	/* Bound: no read needed. */
	in.class_read = false;
	json_object_set_new(json_object_get(pvc, "status"), "phase", json_string("Bound"));
	pwst_mplan(&in, &r, EO_MPLAN_CREATE_POD);
	eo_member_plan_clear(&r);
	/* No class named (static binding): no read either. */
	json_object_set_new(json_object_get(pvc, "status"), "phase", json_string("Pending"));
	json_object_del(json_object_get(pvc, "spec"), "storageClassName");
	pwst_mplan(&in, &r, EO_MPLAN_CREATE_POD);
	eo_member_plan_clear(&r);
	json_decref(nomode);
	json_decref(wffc);
	json_decref(immediate);
	json_decref(pvc);
	json_decref(c);
	json_decref(m);
}

TU_MAIN(test_member_table, test_deleting_cluster_retain, test_terminal_pod_is_deleted,
	test_missing_pod_not_ready, test_discovery_then_no_churn,
	test_other_cluster_recorded_nothing, test_woken_member_gets_its_pod_back,
	test_lost_memory_member_waits, test_data_dir_lost_waits, test_unbound_claim_holds_pod)
