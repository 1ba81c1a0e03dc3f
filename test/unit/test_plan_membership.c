/*
 * Unit tests for plan/membership.c, through eo_plan_cluster on a running cluster
 * (support/planworld_scale.h): absence decided only from the leader's list, voter marks, the
 * query through the voters, endpoints oldest Pod first, and another cluster's answer.
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
#include "api/member.h"
#include "api/names.h"
#include "desired/desired.h"
#include "plan/forcenew.h"
#include "plan/plan.h"
#include "plan/roll.h"
#include "support/planworld_scale.h"
#include "support/planworld_scale_rows.h"
#include "support/testutil.h"
#include "support/tu_main.h"
#include "support/planworld_step.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

/*
 * Absence is never decided from one unverified answer. A member missing from a list read
 * through any voter (etcd 3.4 serves its local, possibly stale, member map; a lagging member
 * has not applied the latest change) is neither unmarked nor deleted until etcd's leader
 * confirms the list: the plan asks for it (QUERY_MEMBERS with want_leader), waits with
 * Degraded=True/MemberListUnverified when the leader could not confirm it, and acts on the
 * leader's own list.
 */
static void test_absence_needs_the_leader(void **state)
{
	static const struct {
		const char *what;
		struct pws_row r;
		enum eo_plan_action on_leader; /* with the leader's list */
		bool voter_mark;	       /* on_leader is SET_VOTER false */
	} rows_[] = {
	    {"an EtcdMember etcd does not list",
	     {"",
	      3,
	      {V("demo-a", A), V("demo-b", B), L("demo-c", C, 1)},
	      {EV("demo-a"), EV("demo-b")},
	      0,
	      NULL,
	      0},
	     EO_PLAN_REMOVE_MEMBER,
	     false},
	    {"a voter etcd does not list",
	     {"",
	      3,
	      {V("demo-a", A), V("demo-b", B), VNR("demo-c", C)},
	      {EV("demo-a"), EV("demo-b")},
	      0,
	      NULL,
	      0},
	     EO_PLAN_SET_VOTER,
	     true},
	    {"a voter etcd lists as a learner",
	     {"",
	      3,
	      {V("demo-a", A), V("demo-b", B), VNR("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EL("demo-c", 0xc)},
	      0,
	      NULL,
	      0},
	     EO_PLAN_SET_VOTER,
	     true},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows_) / sizeof(rows_[0]); i++) {
		struct pws_world w;
		struct eo_plan_result res;

		/* Not confirmed yet: ask the leader, act on nothing. */
		pws_world_init(&w, &rows_[i].r);
		w.in.etcd_leader_checked = false;
		w.in.etcd_from_leader = false;
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		if (res.action != EO_PLAN_QUERY_MEMBERS || !res.want_leader)
			fail_msg("%s: unconfirmed: action %s (%s)", rows_[i].what,
				 eo_plan_action_name(res.action), res.message);
		assert_non_null(strstr(res.message, "demo-c"));
		eo_plan_result_clear(&res);

		/* The leader could not confirm it: wait, and say which check failed. */
		w.in.etcd_leader_checked = true;
		w.in.etcd_leader_why = "the member at http://x knows no leader";
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		if (res.action != EO_PLAN_WAIT)
			fail_msg("%s: unverified: action %s (%s)", rows_[i].what,
				 eo_plan_action_name(res.action), res.message);
		assert_false(res.want_leader);
		assert_non_null(strstr(res.message, "knows no leader"));
		assert_non_null(strstr(res.message, "demo-c"));
		assert_string_equal(res.event_type, "Warning");
		assert_string_equal(res.event_reason, EO_PLAN_REASON_LIST_UNVERIFIED);
		assert_true(res.requeue_ms > 0);
		eo_plan_result_clear(&res);

		/* The leader's own list: act. */
		w.in.etcd_from_leader = true;
		w.in.etcd_leader_why = "";
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		if (res.action != rows_[i].on_leader)
			fail_msg("%s: leader's list: action %s (%s)", rows_[i].what,
				 eo_plan_action_name(res.action), res.message);
		assert_string_equal(pws_name_of(res.member), "demo-c");
		if (rows_[i].voter_mark)
			assert_false(res.voter);
		pws_done(&w, &res);
	}
}

/*
 * A voter mark (PROMOTE_LEARNER, SET_VOTER) asks for the Pod's voter label in the same pass
 * when the Pod's label does not already match, with the Pod's UID; no Pod, no label patch.
 */
static void test_voter_label_with_the_mark(void **state)
{
	static const struct {
		const char *what;
		struct pws_row r;
		const char *member; /* the member concerned */
		int pod_label;	    /* -1: no Pod; 0: Pod unlabelled; 1: Pod labelled */
		enum eo_plan_action want;
		bool want_label;
	} rows2[] = {
	    {"promote: the learner's Pod gets the label",
	     {"",
	      3,
	      {V("demo-a", A), L("demo-b", B, 2)},
	      {EV("demo-a"), EL("demo-b", 0xb)},
	      0,
	      NULL,
	      0},
	     "demo-b",
	     0,
	     EO_PLAN_PROMOTE_LEARNER,
	     true},
	    {"promote: a label already there is not patched again",
	     {"",
	      3,
	      {V("demo-a", A), L("demo-b", B, 2)},
	      {EV("demo-a"), EL("demo-b", 0xb)},
	      0,
	      NULL,
	      0},
	     "demo-b",
	     1,
	     EO_PLAN_PROMOTE_LEARNER,
	     false},
	    {"marked after MemberPromote: the label with the mark",
	     {"", 3, {V("demo-a", A), L("demo-b", B, 2)}, {EV("demo-a"), EV("demo-b")}, 0, NULL, 0},
	     "demo-b",
	     0,
	     EO_PLAN_SET_VOTER,
	     true},
	    {"marked after MemberPromote, no Pod: nothing to label",
	     {"", 3, {V("demo-a", A), L("demo-b", B, 0)}, {EV("demo-a"), EV("demo-b")}, 0, NULL, 0},
	     "demo-b",
	     -1,
	     EO_PLAN_SET_VOTER,
	     false},
	    {"etcd lost a voter: the label goes with the mark",
	     {"",
	      3,
	      {V("demo-a", A), V("demo-b", B), VNR("demo-c", C)},
	      {EV("demo-a"), EV("demo-b")},
	      0,
	      NULL,
	      0},
	     "demo-c",
	     1,
	     EO_PLAN_SET_VOTER,
	     true},
	    {"etcd lost a voter whose Pod has no label: nothing to patch",
	     {"",
	      3,
	      {V("demo-a", A), V("demo-b", B), VNR("demo-c", C)},
	      {EV("demo-a"), EV("demo-b")},
	      0,
	      NULL,
	      0},
	     "demo-c",
	     0,
	     EO_PLAN_SET_VOTER,
	     false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows2) / sizeof(rows2[0]); i++) {
		struct pws_world w;
		struct eo_plan_result res;

		pws_world_init(&w, &rows2[i].r);
		for (size_t k = 0; k < w.n; k++)
			if (strcmp(pws_name_of(w.pm[k].member), rows2[i].member) == 0 &&
			    rows2[i].pod_label == 1)
				json_object_set_new(
				    json_object_get((json_t *)w.pm[k].pod, "metadata"), "labels",
				    json_pack("{s:s}", EO_LABEL_ROLE, EO_LABEL_ROLE_VOTER));
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		if (res.action != rows2[i].want)
			fail_msg("%s: action %s, want %s (%s)", rows2[i].what,
				 eo_plan_action_name(res.action),
				 eo_plan_action_name(rows2[i].want), res.message);
		assert_string_equal(pws_name_of(res.member), rows2[i].member);
		if (res.label_pod != rows2[i].want_label)
			fail_msg("%s: label_pod %d, want %d", rows2[i].what, res.label_pod,
				 rows2[i].want_label);
		if (res.label_pod)
			assert_string_equal(res.pod_uid, "pod-uid");
		pws_done(&w, &res);
	}
}

/* The first pass asks etcd through the voters only; a steady cluster does not ask at all. */
static void test_query_through_voters(void **state)
{
	const struct pws_row r = {.target = 3,
				  .members = {V("demo-a", A), V("demo-b", B), L("demo-c", C, 2)},
				  .etcd = {{0}}};
	const struct pws_row steady = {.target = 3,
				       .members = {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				       .etcd = {{0}}};
	struct pws_world w;
	struct eo_plan_result res, again;

	(void)state;
	pws_world_init(&w, &r);
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	pwst_plan(&w.in, &res, EO_PLAN_QUERY_MEMBERS);
	assert_int_equal(res.n_endpoints, 2);
	assert_null(res.status);
	eo_plan_result_clear(&res);
	/* A voter whose Pod ended (or is being deleted) is not dialled: it would only time out. */
	json_object_set_new(json_object_get((json_t *)w.pm[1].pod, "status"), "phase",
			    json_string("Succeeded"));
	assert_false(eo_plan_pod_running(w.pm[1].pod));
	assert_true(eo_plan_pod_running(w.pm[0].pod));
	pwst_plan(&w.in, &res, EO_PLAN_QUERY_MEMBERS);
	assert_int_equal(res.n_endpoints, 1);
	assert_non_null(strstr(res.endpoints[0], "demo-a"));
	eo_plan_result_clear(&res);
	json_object_set_new(json_object_get((json_t *)w.pm[1].pod, "status"), "phase",
			    json_string("Running"));
	json_object_set_new(json_object_get((json_t *)w.pm[0].pod, "metadata"), "deletionTimestamp",
			    json_string("2026-06-02T10:00:00Z"));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.n_endpoints, 1);
	assert_non_null(strstr(res.endpoints[0], "demo-b"));
	eo_plan_result_clear(&res);
	json_object_del(json_object_get((json_t *)w.pm[0].pod, "metadata"), "deletionTimestamp");
	/* etcd cannot be listed: wait, health still from the Pods. */
	w.in.etcd_queried = true;
	w.in.etcd_err = EO_ETCD_UNAVAILABLE;
	pwst_plan(&w.in, &res, EO_PLAN_WAIT);
	assert_int_equal(res.requeue_ms, EO_PLAN_REQUEUE_ETCD_MS);
	pws_done(&w, &res);

	/* Settled: the deadline drops, no etcd query, and the status does not move. */
	pws_world_init(&w, &steady);
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	pwst_plan(&w.in, &res, EO_PLAN_NONE);
	assert_null(json_object_get(res.status, "progressDeadline"));
	assert_true(eo_condition_matches(res.status, EO_COND_PROGRESSING, EO_COND_FALSE,
					 EO_REASON_RECONCILED));
	assert_true(eo_condition_matches(res.status, EO_COND_AVAILABLE, EO_COND_TRUE,
					 EO_REASON_QUORUM_HEALTHY));
	assert_int_equal(json_integer_value(json_object_get(res.status, "readyMembers")), 3);
	json_object_set(w.cluster, "status", res.status);
	w.in.now += 600;
	pwst_plan(&w.in, &again, EO_PLAN_NONE);
	assert_false(again.status_changed);
	eo_plan_result_clear(&again);
	pws_done(&w, &res);

	/*
	 * A ready Pod whose etcd does not serve its clients yet (its EtcdMember says
	 * Ready=False/NotServing) is not counted: readyMembers 2, Degraded, not QuorumHealthy.
	 */
	{
		struct pws_row one = steady;

		one.members[2].pod = 3;
		pws_world_init(&w, &one);
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		assert_int_equal(json_integer_value(json_object_get(res.status, "readyMembers")),
				 2);
		assert_true(eo_condition_matches(res.status, EO_COND_AVAILABLE, EO_COND_TRUE,
						 EO_REASON_QUORUM_AVAILABLE));
		assert_true(eo_condition_matches(res.status, EO_COND_DEGRADED, EO_COND_TRUE,
						 EO_REASON_MEMBERS_UNHEALTHY));
		pws_done(&w, &res);
	}
}

/*
 * etcd is asked through the oldest Pods first: a voter promoted a moment ago refuses a member
 * add for 5 s (its peer connections are new), the oldest accepts it at once.
 */
static void test_endpoints_oldest_pod_first(void **state)
{
	const struct pws_row r = {
	    .target = 5,
	    .members = {V("demo-a", A), V("demo-b", B), V("demo-c", C), V("demo-d", D)},
	    .etcd = {{0}}};
	/* Pod ages: d oldest, then b, c, a (a's Pod was recreated last). */
	const char *created[] = {"2026-06-01T10:09:00Z", "2026-06-01T10:02:00Z",
				 "2026-06-01T10:03:00Z", "2026-06-01T10:01:00Z"};
	const char *want[] = {"demo-d", "demo-b", "demo-c", "demo-a"};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &r);
	for (size_t i = 0; i < 4; i++)
		json_object_set_new(json_object_get((json_t *)w.pm[i].pod, "metadata"),
				    "creationTimestamp", json_string(created[i]));
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	pwst_plan(&w.in, &res, EO_PLAN_QUERY_MEMBERS);
	assert_int_equal(res.n_endpoints, 4);
	for (size_t i = 0; i < 4; i++)
		assert_non_null(strstr(res.endpoints[i], want[i]));
	pws_done(&w, &res);
}

/*
 * A member list read through the cluster's addresses but carrying another cluster ID (a Pod IP
 * or DNS name now used by another etcd cluster) decides nothing: no stray removed, no member
 * replaced, no learner added; Degraded and a Warning say why. An ID that matches (in any case)
 * or a reply without one goes on as usual.
 */
static void test_other_cluster_decides_nothing(void **state)
{
	const struct pws_row rows_[] = {
	    {"a stray learner",
	     3,
	     {V("demo-a", A)},
	     {EV("demo-a"), ELNEW("demo-x", 0x77)},
	     EO_PLAN_REMOVE_STRAY,
	     NULL,
	     0x77},
	    {"a scale-up",
	     3,
	     {V("demo-a", A), V("demo-b", B)},
	     {EV("demo-a"), EV("demo-b")},
	     EO_PLAN_CREATE_MEMBER,
	     NULL,
	     0},
	    {"a scale-down",
	     2,
	     {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	     {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	     EO_PLAN_REMOVE_MEMBER,
	     NULL,
	     0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows_) / sizeof(rows_[0]); i++) {
		struct pws_world w;
		struct eo_plan_result res;

		pws_world_init(&w, &rows_[i]);
		w.etcd.cluster_id = 0x1111;
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		if (res.action != EO_PLAN_WAIT)
			fail_msg("%s: action %s (%s)", rows_[i].what,
				 eo_plan_action_name(res.action), res.message);
		assert_string_equal(res.event_reason, EO_PLAN_REASON_CLUSTER_ID_MISMATCH);
		assert_string_equal(res.event_type, "Warning");
		assert_non_null(strstr(res.message, "etcd cluster 1111, not 248adce0359142ba"));
		assert_true(eo_condition_matches(res.status, EO_COND_DEGRADED, "True",
						 EO_PLAN_REASON_CLUSTER_ID_MISMATCH));
		eo_plan_result_clear(&res);

		/* The recorded ID in capitals: the same cluster. */
		w.etcd.cluster_id = 0x248adce0359142baULL;
		json_object_set_new(json_object_get(w.cluster, "status"), "clusterID",
				    json_string("248ADCE0359142BA"));
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		if (res.action != rows_[i].want)
			fail_msg("%s (same ID): action %s (%s)", rows_[i].what,
				 eo_plan_action_name(res.action), res.message);
		eo_plan_result_clear(&res);

		/* No ID in the reply's header: not a reason to stop. */
		w.etcd.cluster_id = 0;
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		assert_int_equal(res.action, rows_[i].want);
		pws_done(&w, &res);
	}
}

TU_MAIN(test_other_cluster_decides_nothing, test_absence_needs_the_leader,
	test_voter_label_with_the_mark, test_query_through_voters, test_endpoints_oldest_pod_first)
