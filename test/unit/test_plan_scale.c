/*
 * Unit tests for plan/plan.c after bootstrap: scale up one learner at a time, promotion,
 * scale down (not-ready members first, then newest; never below a quorum of ready voters), the
 * crash-resume states between the steps (an etcd learner no EtcdMember stands for, an EtcdMember
 * etcd does not list, a pending member etcd already knows, two learners at once), status.isVoter
 * following etcd, and the PodDisruptionBudget.
 *
 * A world is written as a table row: the members (name, creationTimestamp, voter mark,
 * pending, Pod ready) and etcd's member list (which member, learner or not, started or not).
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

#define T0 PWS_T0 /* 2026-06-02T10:00:00Z */


static const struct pws_row rows[] = {
    {"scale up 1->3: create a member",
     3,
     {V("demo-a", A)},
     {EV("demo-a")},
     EO_PLAN_CREATE_MEMBER,
     NULL,
     0},
    {"pending member not in etcd: add it as a learner",
     3,
     {V("demo-a", A), P("demo-b", B)},
     {EV("demo-a")},
     EO_PLAN_ADD_LEARNER,
     "demo-b",
     0},
    {"crash after MemberAddAsLearner: the pending member gets its initial cluster",
     3,
     {V("demo-a", A), P("demo-b", B)},
     {EV("demo-a"), ELNEW("demo-b", 0xb)},
     EO_PLAN_SET_INITIAL_CLUSTER,
     "demo-b",
     0},
    {"learner Pod not ready: wait",
     3,
     {V("demo-a", A), L("demo-b", B, 1)},
     {EV("demo-a"), EL("demo-b", 0xb)},
     EO_PLAN_WAIT,
     NULL,
     0},
    {"learner without Pod yet: wait",
     3,
     {V("demo-a", A), L("demo-b", B, 0)},
     {EV("demo-a"), ELNEW("demo-b", 0xb)},
     EO_PLAN_WAIT,
     NULL,
     0},
    {"learner Pod ready: promote it",
     3,
     {V("demo-a", A), L("demo-b", B, 2)},
     {EV("demo-a"), EL("demo-b", 0xb)},
     EO_PLAN_PROMOTE_LEARNER,
     "demo-b",
     0xb},
    {"learner Pod ready, etcd not serving its clients yet: wait, no promotion",
     3,
     {V("demo-a", A), L("demo-b", B, 3)},
     {EV("demo-a"), EL("demo-b", 0xb)},
     EO_PLAN_WAIT,
     NULL,
     0},
    {"learner Pod ready, its member still says PodNotReady: wait for the member's look",
     3,
     {V("demo-a", A), L("demo-b", B, 4)},
     {EV("demo-a"), EL("demo-b", 0xb)},
     EO_PLAN_WAIT,
     NULL,
     0},
    {"learner that answered, its ID not known yet (DiscoveringMemberID): promote it",
     3,
     {V("demo-a", A), L("demo-b", B, 5)},
     {EV("demo-a"), EL("demo-b", 0xb)},
     EO_PLAN_PROMOTE_LEARNER,
     "demo-b",
     0xb},
    {"crash after MemberPromote: mark the voter",
     3,
     {V("demo-a", A), L("demo-b", B, 2)},
     {EV("demo-a"), EV("demo-b")},
     EO_PLAN_SET_VOTER,
     "demo-b",
     0},
    {"then the next member",
     3,
     {V("demo-a", A), V("demo-b", B)},
     {EV("demo-a"), EV("demo-b")},
     EO_PLAN_CREATE_MEMBER,
     NULL,
     0},
    {"a voter not ready: no new member",
     3,
     {V("demo-a", A), VNR("demo-b", B)},
     {EV("demo-a"), EV("demo-b")},
     EO_PLAN_WAIT,
     NULL,
     0},
    {"a voter not ready: no learner added",
     3,
     {V("demo-a", A), VNR("demo-b", B), P("demo-c", C)},
     {EV("demo-a"), EV("demo-b")},
     EO_PLAN_WAIT,
     NULL,
     0},
    {"etcd learner without EtcdMember (never started): remove it",
     3,
     {V("demo-a", A)},
     {EV("demo-a"), ELNEW("demo-x", 0x77)},
     EO_PLAN_REMOVE_STRAY,
     NULL,
     0x77},
    {"etcd learner without EtcdMember (started): remove it",
     3,
     {V("demo-a", A), V("demo-b", B)},
     {EV("demo-a"), EV("demo-b"), EL("demo-x", 0x78)},
     EO_PLAN_REMOVE_STRAY,
     NULL,
     0x78},
    {"stray learner goes before anything else",
     3,
     {V("demo-a", A), P("demo-b", B)},
     {EV("demo-a"), ELNEW("demo-x", 0x79)},
     EO_PLAN_REMOVE_STRAY,
     NULL,
     0x79},
    {"unknown voting member: never removed, wait",
     3,
     {V("demo-a", A)},
     {EV("demo-a"), EV("demo-x")},
     EO_PLAN_WAIT,
     NULL,
     0},
    {"EtcdMember that etcd does not list: delete it to replace it",
     3,
     {V("demo-a", A), V("demo-b", B), L("demo-c", C, 1)},
     {EV("demo-a"), EV("demo-b")},
     EO_PLAN_REMOVE_MEMBER,
     "demo-c",
     0},
    {"etcd lost a voter: its mark goes first",
     3,
     {V("demo-a", A), V("demo-b", B), VNR("demo-c", C)},
     {EV("demo-a"), EV("demo-b")},
     EO_PLAN_SET_VOTER,
     "demo-c",
     0},
    {"a voter's Pod restarts: etcd still lists it, nothing to do",
     3,
     {V("demo-a", A), V("demo-b", B), VNR("demo-c", C)},
     {EV("demo-a"), EV("demo-b"), EV("demo-c")},
     EO_PLAN_NONE,
     NULL,
     0},
    {"two learners: promote the ready one, add nothing",
     5,
     {V("demo-a", A), V("demo-b", B), V("demo-c", C), L("demo-d", D, 1), L("demo-e", D, 2)},
     {EV("demo-a"), EV("demo-b"), EV("demo-c"), EL("demo-d", 0xd), EL("demo-e", 0xe)},
     EO_PLAN_PROMOTE_LEARNER,
     "demo-e",
     0xe},
    {"two learners, none ready: wait",
     5,
     {V("demo-a", A), V("demo-b", B), V("demo-c", C), L("demo-d", D, 1), L("demo-e", D, 1)},
     {EV("demo-a"), EV("demo-b"), EV("demo-c"), EL("demo-d", 0xd), EL("demo-e", 0xe)},
     EO_PLAN_WAIT,
     NULL,
     0},
    {"scale down 5->3: newest first",
     3,
     {V("demo-e", B), V("demo-a", A), V("demo-c", D), V("demo-b", A), V("demo-d", C)},
     {EV("demo-a"), EV("demo-b"), EV("demo-c"), EV("demo-d"), EV("demo-e")},
     EO_PLAN_REMOVE_MEMBER,
     "demo-c",
     0},
    {"scale down: same creationTimestamp, name descending",
     1,
     {V("demo-b", A), V("demo-z", A), V("demo-m", A)},
     {EV("demo-b"), EV("demo-z"), EV("demo-m")},
     EO_PLAN_REMOVE_MEMBER,
     "demo-z",
     0},
    {"scale down: a pending joiner is the newest",
     1,
     {V("demo-a", A), P("demo-b", B)},
     {EV("demo-a")},
     EO_PLAN_REMOVE_MEMBER,
     "demo-b",
     0},
    {"scale down: one removal at a time",
     3,
     {V("demo-a", A), V("demo-b", A), V("demo-c", A), V("demo-d", B), DEL("demo-e", C)},
     {EV("demo-a"), EV("demo-b"), EV("demo-c"), EV("demo-d"), EV("demo-e")},
     EO_PLAN_WAIT,
     NULL,
     0},
    /* Found by test/fuzz/fuzz_plan: a removal must leave a quorum of ready voters. */
    {"scale down 3->2: a member that is not ready goes first",
     2,
     {VNR("demo-a", A), V("demo-b", B), V("demo-c", C)},
     {EV("demo-a"), EV("demo-b"), EV("demo-c")},
     EO_PLAN_REMOVE_MEMBER,
     "demo-a",
     0},
    {"scale down 3->2 with two voters down: removing any would lose quorum, wait",
     2,
     {VNR("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
     {EV("demo-a"), EV("demo-b"), EV("demo-c")},
     EO_PLAN_WAIT,
     NULL,
     0},
    {"an etcd voter that never started, quorum already short: not removed, wait",
     3,
     {V("demo-a", A), VNR("demo-b", B)},
     {EV("demo-a"), EV("demo-b"), {"demo-z", false, false, 0x1f}},
     EO_PLAN_WAIT,
     NULL,
     0},
    {"an etcd voter that never started, the others ready: removed",
     3,
     {V("demo-a", A), V("demo-b", B)},
     {EV("demo-a"), EV("demo-b"), {"demo-z", false, false, 0x1f}},
     EO_PLAN_REMOVE_STRAY,
     NULL,
     0x1f},
    {"a voter whose Pod is ready but etcd does not serve yet: no new member",
     3,
     {V("demo-a", A), {"demo-b", B, true, false, 3, false, false}},
     {EV("demo-a"), EV("demo-b")},
     EO_PLAN_WAIT,
     NULL,
     0},
    {"settled 3: nothing",
     3,
     {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
     {EV("demo-a"), EV("demo-b"), EV("demo-c")},
     EO_PLAN_NONE,
     NULL,
     0},
};

static void test_membership_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct pws_row *r = &rows[i];
		struct pws_world w;
		struct eo_plan_result res;

		pws_world_init(&w, r);
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		if (res.action != r->want)
			fail_msg("%s: action %s, want %s (%s)", r->what,
				 eo_plan_action_name(res.action), eo_plan_action_name(r->want),
				 res.message);
		if (r->want_member != NULL) {
			assert_non_null(res.member);
			if (strcmp(json_string_value(json_object_get(
				       json_object_get(res.member, "metadata"), "name")),
				   r->want_member) != 0)
				fail_msg("%s: member %s, want %s", r->what,
					 json_string_value(json_object_get(
					     json_object_get(res.member, "metadata"), "name")),
					 r->want_member);
		}
		if (r->want_id != 0 && res.etcd_id != r->want_id)
			fail_msg("%s: etcd id %llx, want %llx", r->what,
				 (unsigned long long)res.etcd_id, (unsigned long long)r->want_id);
		/* Every etcd call goes to voters only. */
		for (size_t j = 0; j < res.n_endpoints; j++)
			for (size_t k = 0; k < w.n; k++)
				if (!r->members[k].voter &&
				    strstr(res.endpoints[j], r->members[k].name) != NULL)
					fail_msg("%s: endpoint %s is not a voter", r->what,
						 res.endpoints[j]);
		/* While scaling, Progressing stays True. */
		assert_non_null(res.status);
		if (r->want != EO_PLAN_NONE &&
		    !eo_condition_is_true(res.status, EO_COND_PROGRESSING))
			fail_msg("%s: Progressing is wrong", r->what);
		eo_plan_result_clear(&res);
		pws_world_free(&w);
	}
}

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
		eo_plan_result_clear(&res);
		pws_world_free(&w);
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
		eo_plan_result_clear(&res);
		pws_world_free(&w);
	}
}

/* The learner's add and its initial cluster carry the right URLs. */
static void test_add_learner_details(void **state)
{
	const struct pws_row r = {"",	3, {V("demo-a", A), P("demo-b", B)}, {EV("demo-a")}, 0,
				  NULL, 0};
	const struct pws_row r2 = {
	    "",	  3, {V("demo-a", A), P("demo-b", B)}, {EV("demo-a"), ELNEW("demo-b", 0xb)}, 0,
	    NULL, 0};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &r);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_ADD_LEARNER);
	assert_string_equal(res.peer_url, "http://demo-b.demo.default.svc.cluster.local:2380");
	assert_int_equal(res.n_endpoints, 1);
	assert_string_equal(res.endpoints[0], "http://demo-a.demo.default.svc.cluster.local:2379");
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	pws_world_init(&w, &r2);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_SET_INITIAL_CLUSTER);
	assert_string_equal(res.initial_cluster,
			    "demo-a=http://demo-a.demo.default.svc.cluster.local:2380,"
			    "demo-b=http://demo-b.demo.default.svc.cluster.local:2380");
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/* The first pass asks etcd through the voters only; a steady cluster does not ask at all. */
static void test_query_through_voters(void **state)
{
	const struct pws_row r = {
	    "", 3, {V("demo-a", A), V("demo-b", B), L("demo-c", C, 2)}, {{0}}, 0, NULL, 0};
	const struct pws_row steady = {
	    "", 3, {V("demo-a", A), V("demo-b", B), V("demo-c", C)}, {{0}}, 0, NULL, 0};
	struct pws_world w;
	struct eo_plan_result res, again;

	(void)state;
	pws_world_init(&w, &r);
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_QUERY_MEMBERS);
	assert_int_equal(res.n_endpoints, 2);
	assert_null(res.status);
	eo_plan_result_clear(&res);
	/* A voter whose Pod ended (or is being deleted) is not dialled: it would only time out. */
	json_object_set_new(json_object_get((json_t *)w.pm[1].pod, "status"), "phase",
			    json_string("Succeeded"));
	assert_false(eo_plan_pod_running(w.pm[1].pod));
	assert_true(eo_plan_pod_running(w.pm[0].pod));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_QUERY_MEMBERS);
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
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_int_equal(res.requeue_ms, EO_PLAN_REQUEUE_ETCD_MS);
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* Settled: the deadline drops, no etcd query, and the status does not move. */
	pws_world_init(&w, &steady);
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	assert_null(json_object_get(res.status, "progressDeadline"));
	assert_true(eo_condition_matches(res.status, EO_COND_PROGRESSING, EO_COND_FALSE,
					 EO_REASON_RECONCILED));
	assert_true(eo_condition_matches(res.status, EO_COND_AVAILABLE, EO_COND_TRUE,
					 EO_REASON_QUORUM_HEALTHY));
	assert_int_equal(json_integer_value(json_object_get(res.status, "readyMembers")), 3);
	json_object_set(w.cluster, "status", res.status);
	w.in.now += 600;
	assert_int_equal(eo_plan_cluster(&w.in, &again), 0);
	assert_int_equal(again.action, EO_PLAN_NONE);
	assert_false(again.status_changed);
	eo_plan_result_clear(&again);
	eo_plan_result_clear(&res);
	pws_world_free(&w);

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
		eo_plan_result_clear(&res);
		pws_world_free(&w);
	}
}

/*
 * etcd is asked through the oldest Pods first: a voter promoted a moment ago refuses a member
 * add for 5 s (its peer connections are new), the oldest accepts it at once.
 */
static void test_endpoints_oldest_pod_first(void **state)
{
	const struct pws_row r = {
	    "",	  5, {V("demo-a", A), V("demo-b", B), V("demo-c", C), V("demo-d", D)}, {{0}}, 0,
	    NULL, 0};
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
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_QUERY_MEMBERS);
	assert_int_equal(res.n_endpoints, 4);
	for (size_t i = 0; i < 4; i++)
		assert_non_null(strstr(res.endpoints[i], want[i]));
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/* A learner joining a 1-member cluster does not count for quorum. */
static void test_health_counts_voters(void **state)
{
	const struct pws_row r = {
	    "",	  3, {V("demo-a", A), L("demo-b", B, 1)}, {EV("demo-a"), EL("demo-b", 2)}, 0,
	    NULL, 0};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &r);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_true(eo_condition_matches(res.status, EO_COND_AVAILABLE, EO_COND_TRUE,
					 EO_REASON_QUORUM_HEALTHY));
	assert_true(eo_condition_matches(res.status, EO_COND_PROGRESSING, EO_COND_TRUE,
					 EO_REASON_INITIAL_SNAPSHOT));
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

static void test_pdb_math(void **state)
{
	static const int cases[][3] = {
	    /* voters, target, minAvailable */
	    {1, 1, 1}, {3, 3, 2}, {4, 4, 3}, {5, 5, 3}, {7, 7, 4},
	    {1, 3, 2}, {3, 5, 3}, {5, 3, 3}, {4, 3, 3}, {2, 1, 2},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (eo_desired_pdb_min_available(cases[i][0], cases[i][1]) != cases[i][2])
			fail_msg("voters %d target %d: minAvailable %d, want %d", cases[i][0],
				 cases[i][1],
				 eo_desired_pdb_min_available(cases[i][0], cases[i][1]),
				 cases[i][2]);
}

static void test_pdb_plan(void **state)
{
	const struct pws_row r = {"",
				  3,
				  {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				  {EV("demo-a"), EV("demo-b"), EV("demo-c")},
				  0,
				  NULL,
				  0};
	const struct pws_row none = {"", 1, {P("demo-a", A)}, {{0}}, 0, NULL, 0};
	struct pws_world w;
	struct eo_plan_result res;
	json_t *sel = NULL;

	(void)state;
	/* Missing: created with minAvailable 2 over the voters. */
	pws_world_init(&w, &r);
	json_decref(w.pdb);
	w.pdb = NULL;
	w.in.pdb = NULL;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_ENSURE_PDB);
	assert_null(res.patch);
	assert_int_equal(json_integer_value(
			     json_object_get(json_object_get(res.object, "spec"), "minAvailable")),
			 2);
	sel = json_object_get(json_object_get(json_object_get(res.object, "spec"), "selector"),
			      "matchLabels");
	assert_string_equal(json_string_value(json_object_get(sel, EO_LABEL_ROLE)), "voter");
	assert_string_equal(json_string_value(json_object_get(sel, EO_LABEL_CLUSTER)), "demo");
	eo_plan_result_clear(&res);
	/* Drifted (maxUnavailable set by hand, wrong minAvailable): patched back. */
	w.pdb = eo_desired_pdb(w.cluster, 1);
	json_object_set_new(json_object_get(w.pdb, "spec"), "maxUnavailable", json_integer(1));
	w.in.pdb = w.pdb;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_ENSURE_PDB);
	assert_non_null(res.patch);
	assert_true(
	    json_is_null(json_object_get(json_object_get(res.patch, "spec"), "maxUnavailable")));
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* No voter left: the PDB goes. */
	pws_world_init(&w, &none);
	w.pdb = eo_desired_pdb(w.cluster, 1);
	w.in.pdb = w.pdb;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_DELETE_PDB);
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/* 3 -> 0: the staged descent, newest first, never below one member. */
static void test_pause_descends(void **state)
{
	const struct pws_row three = {"",
				      0,
				      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
				      0,
				      NULL,
				      0};
	const struct pws_row two = {
	    "", 0, {V("demo-a", A), V("demo-b", B)}, {EV("demo-a"), EV("demo-b")}, 0, NULL, 0};
	const struct pws_row deleting = {
	    "", 0, {V("demo-a", A), DEL("demo-b", B)}, {EV("demo-a"), EV("demo-b")}, 0, NULL, 0};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &three);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-c");
	assert_true(eo_condition_is_true(res.status, EO_COND_PROGRESSING));
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	pws_world_init(&w, &two);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-b");
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* The last member is not paused while another one is still leaving. */
	pws_world_init(&w, &deleting);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/* 1 -> 0: the last member goes dormant; then the PDB goes; then nothing moves. */
static void test_pause_last_member(void **state)
{
	const struct pws_row one = {"", 0, {V("demo-a", A)}, {EV("demo-a")}, 0, NULL, 0};
	const struct pws_row dormant = {"", 0, {DORM("demo-a", A)}, {EV("demo-a")}, 0, NULL, 0};
	const char *msg = "data is preserved on PVC data-demo-a";
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &one);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_SET_DORMANT);
	assert_string_equal(pws_name_of(res.member), "demo-a");
	assert_string_equal(res.event_reason, EO_REASON_PAUSED);
	pws_want_paused(res.status, msg);
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* Dormant, the PDB still there: it goes (no voter Pod is left to protect). */
	pws_world_init(&w, &dormant);
	assert_non_null(w.pdb);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_DELETE_PDB);
	pws_want_paused(res.status, msg);
	eo_plan_result_clear(&res);

	/* Paused and settled: no action, the deadline dropped, readyMembers 0. */
	json_decref(w.pdb);
	w.pdb = NULL;
	w.in.pdb = NULL;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	pws_want_paused(res.status, msg);
	assert_null(json_object_get(res.status, "progressDeadline"));
	assert_int_equal(json_integer_value(json_object_get(res.status, "readyMembers")), 0);
	assert_string_equal(json_string_value(json_object_get(res.status, "clusterID")),
			    "248adce0359142ba");
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/* Resume: a new target is latched, then the dormant member is woken before anything else. */
static void test_resume(void **state)
{
	const struct pws_row dormant = {"", 0, {DORM("demo-a", A)}, {EV("demo-a")}, 0, NULL, 0};
	const struct pws_row woken_target = {"",   3, {DORM("demo-a", A)}, {EV("demo-a")}, 0,
					     NULL, 0};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	/* spec.replicas 0 -> 3 on a paused cluster: the target is latched first. */
	pws_world_init(&w, &dormant);
	json_decref(w.pdb);
	w.pdb = NULL;
	w.in.pdb = NULL;
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	json_object_set_new(json_object_get(w.cluster, "spec"), "replicas", json_integer(3));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
	assert_int_equal(json_integer_value(
			     json_object_get(json_object_get(res.status, "observed"), "replicas")),
			 3);
	pws_want_cond(res.status, EO_COND_PROGRESSING, "True", EO_REASON_SPEC_CHANGED, NULL);
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* With the target latched: wake the dormant member (same member, same PVC). */
	pws_world_init(&w, &woken_target);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WAKE_DORMANT);
	assert_string_equal(pws_name_of(res.member), "demo-a");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_RESUMED);
	assert_string_equal(json_string_value(json_object_get(res.status, "clusterID")),
			    "248adce0359142ba");
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* Woken, its Pod not ready yet: still Paused (resuming), not QuorumLost. */
	pws_world_init(&w, &woken_target);
	json_object_del(json_object_get((json_t *)w.pm[0].member, "spec"), "dormant");
	json_object_set_new(json_object_get(w.cluster, "status"), "conditions",
			    json_pack("[{s:s, s:s, s:s, s:s, s:s, s:i}]", "type", "Available",
				      "status", "False", "reason", "Paused", "message", "",
				      "lastTransitionTime", "2026-06-02T09:00:00Z",
				      "observedGeneration", 2));
	json_decref((json_t *)w.pm[0].pod);
	w.pm[0].pod = NULL;
	w.in.etcd_queried = false;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	pws_want_cond(
	    res.status, EO_COND_AVAILABLE, "False", EO_REASON_PAUSED,
	    "resuming: member demo-a is starting again; data is preserved on PVC data-demo-a");
	pws_want_cond(res.status, EO_COND_DEGRADED, "False", EO_REASON_PAUSED, "resuming");
	eo_plan_result_clear(&res);
	/* Without a Paused past the same world is an outage. */
	json_object_del(json_object_get(w.cluster, "status"), "conditions");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST, NULL);
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/* replicas 0 from the start: paused, nothing written; scaling up bootstraps a fresh cluster. */
static void test_paused_from_start(void **state)
{
	const struct pws_row none = {"", 0, {{0}}, {{0}}, 0, NULL, 0};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &none);
	json_object_del(json_object_get(w.cluster, "status"), "clusterID");
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	pws_want_paused(res.status, "no data has been written (cluster never bootstrapped)");
	eo_plan_result_clear(&res);
	/* Scaled up: a new target, then the seed. */
	json_object_set_new(json_object_get(w.cluster, "spec"), "replicas", json_integer(1));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
	json_object_set(w.cluster, "status", res.status);
	eo_plan_result_clear(&res);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_CREATE_SEED);
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/* A memory member that lost its Pod is removed (then replaced by the scale-up path). */
static void test_memory_member_replaced(void **state)
{
	const struct pws_row r = {"",
				  3,
				  {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				  {EV("demo-a"), EV("demo-b"), EV("demo-c")},
				  0,
				  NULL,
				  0};
	const struct pws_row two = {
	    "", 3, {V("demo-a", A), V("demo-c", C)}, {EV("demo-a"), EV("demo-c")}, 0, NULL, 0};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &r);
	for (size_t i = 0; i < 3; i++)
		pws_make_memory(&w, i, i == 1);
	assert_true(eo_plan_memory_member_lost(w.pm[1].member, w.pm[1].pod));
	assert_false(eo_plan_memory_member_lost(w.pm[0].member, w.pm[0].pod));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-b");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_MEMBER_REPLACED);
	/* Etcd calls only through the members that still have a Pod. */
	for (size_t j = 0; j < res.n_endpoints; j++)
		assert_null(strstr(res.endpoints[j], "demo-b"));
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* A PVC-backed member without a Pod is not replaced (its Pod comes back). */
	pws_world_init(&w, &r);
	json_decref((json_t *)w.pm[1].pod);
	w.pm[1].pod = NULL;
	json_object_set_new(json_object_get((json_t *)w.pm[1].member, "status"), "podUID",
			    json_string("old-pod-uid"));
	assert_false(eo_plan_memory_member_lost(w.pm[1].member, w.pm[1].pod));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* Once it is gone: back to 3 through the scale-up path. */
	pws_world_init(&w, &two);
	for (size_t i = 0; i < 2; i++)
		pws_make_memory(&w, i, false);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_CREATE_MEMBER);
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/*
 * A PVC-backed member whose PVC is gone or replaced is removed through the others at once and
 * replaced by the scale-up path; it never comes back under its member ID.
 */
static void test_pvc_member_replaced(void **state)
{
	const struct pws_row r = {"",
				  3,
				  {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				  {EV("demo-a"), EV("demo-b"), EV("demo-c")},
				  0,
				  NULL,
				  0};
	const struct {
		const char *what;
		const char *pvc_b; /* demo-b's PVC UID, NULL: gone */
		bool pod_b;	   /* demo-b keeps its Pod */
		bool remove;
	} cases[] = {
	    {"PVC and Pod deleted", NULL, false, true},
	    {"PVC deleted, Pod still running", NULL, true, true},
	    {"PVC replaced by another one", "pvc-2", false, true},
	    {"PVC being deleted, Pod still running", "deleting", true, true},
	    {"same PVC, Pod deleted: it comes back on its data", "pvc-1", false, false},
	};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		pws_world_init(&w, &r);
		for (size_t i = 0; i < 3; i++)
			pws_make_ran_on_pvc(&w, i, i == 1 ? cases[k].pvc_b : "pvc-1");
		if (!cases[k].pod_b) {
			json_decref((json_t *)w.pm[1].pod);
			w.pm[1].pod = NULL;
		}
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		if ((res.action == EO_PLAN_REMOVE_MEMBER) != cases[k].remove)
			fail_msg("%s: action %s (%s)", cases[k].what,
				 eo_plan_action_name(res.action), res.message);
		if (cases[k].remove) {
			assert_string_equal(pws_name_of(res.member), "demo-b");
			assert_string_equal(res.event_reason, EO_PLAN_REASON_MEMBER_REPLACED);
			assert_non_null(strstr(res.message, "lost its data volume"));
			assert_int_equal(
			    json_integer_value(json_object_get(res.status, "brokenMembers")), 1);
		}
		eo_plan_result_clear(&res);
		pws_world_free(&w);
	}

	/* Two of three voters lost their volumes: the quorum is gone for good. */
	pws_world_init(&w, &r);
	for (size_t i = 0; i < 3; i++)
		pws_make_ran_on_pvc(&w, i, i == 0 ? "pvc-1" : NULL);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST,
		      "2 of 3 voting member(s) lost their data");
	eo_plan_result_clear(&res);
	pws_world_free(&w);
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
		eo_plan_result_clear(&res);
		pws_world_free(&w);
	}
}

/*
 * Creates are idempotent: the name of the next member is recorded in the cluster's status
 * before the create, so a retried create (crash, slow cache) collides instead of making a
 * second member.
 */
static void test_creates_are_idempotent(void **state)
{
	const struct pws_row r = {"", 3, {V("demo-a", A)}, {EV("demo-a")}, 0, NULL, 0};
	char first[EO_PLAN_NAME_MAX], second[EO_PLAN_NAME_MAX], other[EO_PLAN_NAME_MAX];
	struct pws_world w;
	struct eo_plan_result res, again;
	json_t *st = NULL;

	(void)state;
	/* The name: "<cluster>-" and 5 characters of generateName's alphabet, deterministic. */
	assert_int_equal(eo_plan_next_member_name("demo", "c-uid", NULL, 0, first, sizeof(first)),
			 0);
	assert_int_equal(strlen(first), 10);
	assert_int_equal(strncmp(first, "demo-", 5), 0);
	assert_int_equal(strspn(first + 5, "bcdfghjklmnpqrstvwxz2456789"), 5);
	assert_int_equal(eo_plan_next_member_name("demo", "c-uid", "", 0, other, sizeof(other)), 0);
	assert_string_equal(first, other);
	assert_int_equal(
	    eo_plan_next_member_name("demo", "c-uid", first, 0, second, sizeof(second)), 0);
	assert_string_not_equal(first, second);
	assert_int_equal(eo_plan_next_member_name("demo", "c-uid", NULL, 1, other, sizeof(other)),
			 0);
	assert_string_not_equal(first, other);
	assert_int_equal(eo_plan_next_member_name("demo", "c-uid2", NULL, 0, other, sizeof(other)),
			 0);
	assert_string_not_equal(first, other);
	assert_int_equal(eo_plan_next_member_name("demo", "c-uid", NULL, 0, other, 6), -1);

	/* Recorded: the create uses that name, and a retry on the same world the same one. */
	pws_world_init(&w, &r);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_CREATE_MEMBER);
	assert_string_equal(res.member_name, first);
	assert_int_equal(eo_plan_cluster(&w.in, &again), 0);
	assert_int_equal(again.action, EO_PLAN_CREATE_MEMBER);
	assert_string_equal(again.member_name, first);
	eo_plan_result_clear(&again);
	eo_plan_result_clear(&res);

	/* Not recorded yet (an older operator's status): write it first, create nothing. */
	st = json_object_get(w.cluster, "status");
	json_object_del(st, "nextMemberName");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
	assert_string_equal(res.member_name, "");
	assert_true(res.status_changed);
	assert_string_equal(json_string_value(json_object_get(res.status, "nextMemberName")),
			    first);
	json_object_set(w.cluster, "status", res.status);
	eo_plan_result_clear(&res);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_CREATE_MEMBER);
	assert_string_equal(res.member_name, first);
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* Once the member exists the status moves on to the next name, used by the next create. */
	{
		const struct pws_row r2 = {"",	 3, {V("demo-a", A), P(NULL, B)}, {EV("demo-a")}, 0,
					   NULL, 0};
		struct pws_row rr = r2;

		rr.members[1].name = first;
		pws_world_init(&w, &rr);
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		assert_int_equal(res.action, EO_PLAN_ADD_LEARNER);
		assert_string_equal(
		    json_string_value(json_object_get(res.status, "nextMemberName")), second);
		assert_true(res.status_changed);
		eo_plan_result_clear(&res);
		pws_world_free(&w);
	}
}

/* What a live read must change before a destructive step, and the decision it changes. */
static void test_live_read_before_removal(void **state)
{
	json_t *a = json_pack("{s:{s:s}}", "metadata", "uid", "u1");
	json_t *a2 = json_pack("{s:{s:s}}", "metadata", "uid", "u1");
	json_t *b = json_pack("{s:{s:s}}", "metadata", "uid", "u2");
	json_t *ad = json_pack("{s:{s:s, s:s}}", "metadata", "uid", "u1", "deletionTimestamp",
			       "2026-06-02T10:00:00Z");
	const struct {
		const char *what;
		const json_t *cached, *live;
		bool differs;
	} cases[] = {
	    {"absent both", NULL, NULL, false},
	    {"cache lacks it (label removed, or lag)", NULL, a, true},
	    {"gone since the cache saw it", a, NULL, true},
	    {"same object", a, a2, false},
	    {"replaced (other UID)", a, b, true},
	    {"being deleted since", a, ad, true},
	};
	const struct pws_row r = {"",
				  3,
				  {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				  {EV("demo-a"), EV("demo-b"), EV("demo-c")},
				  0,
				  NULL,
				  0};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (eo_plan_observed_differs(cases[i].cached, cases[i].live) != cases[i].differs)
			fail_msg("%s: differs %d", cases[i].what, !cases[i].differs);

	/*
	 * The cache lacks a healthy memory member's Pod (its managed-by label was removed): the
	 * plan would remove it; with the live Pod planned again, it does not.
	 */
	pws_world_init(&w, &r);
	for (size_t i = 0; i < 3; i++)
		pws_make_memory(&w, i, false);
	{
		const json_t *live = w.pm[1].pod;

		w.pm[1].pod = NULL;
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
		assert_true(eo_plan_observed_differs(w.pm[1].pod, live));
		eo_plan_result_clear(&res);
		w.pm[1].pod = live;
	}
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	eo_plan_result_clear(&res);
	pws_world_free(&w);
	json_decref(a);
	json_decref(a2);
	json_decref(b);
	json_decref(ad);
}

/* A crash-looping voter is replaced while the other voters hold quorum, and only then. */
static void test_crashloop_member_replaced(void **state)
{
	const struct pws_row r = {"",
				  3,
				  {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
				  {EV("demo-a"), EV("demo-b"), EV("demo-c")},
				  0,
				  NULL,
				  0};
	const struct pws_row two_down = {"",
					 3,
					 {V("demo-a", A), VNR("demo-b", B), VNR("demo-c", C)},
					 {EV("demo-a"), EV("demo-b"), EV("demo-c")},
					 0,
					 NULL,
					 0};
	const struct pws_row alone = {"", 1, {VNR("demo-a", A)}, {EV("demo-a")}, 0, NULL, 0};
	struct pws_world w;
	struct eo_plan_result res;
	char why[128];

	(void)state;
	pws_world_init(&w, &r);
	pws_crash(&w, 1, 3, "CrashLoopBackOff", "Error");
	assert_true(eo_plan_member_crashlooping(w.pm[1].member, w.pm[1].pod, why, sizeof(why)));
	assert_string_equal(why, "3 restarts, last exit code 2 (Error)");
	assert_false(eo_plan_member_crashlooping(w.pm[0].member, w.pm[0].pod, NULL, 0));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-b");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_MEMBER_REPLACED);
	assert_non_null(strstr(res.message, "crash-looping (3 restarts"));
	assert_int_equal(json_integer_value(json_object_get(res.status, "brokenMembers")), 1);
	eo_plan_result_clear(&res);

	/* Not yet: too few restarts, or not in back-off (it is starting again). */
	pws_crash(&w, 1, 2, "CrashLoopBackOff", "Error");
	assert_false(eo_plan_member_crashlooping(w.pm[1].member, w.pm[1].pod, NULL, 0));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_int_equal(json_integer_value(json_object_get(res.status, "brokenMembers")), 0);
	eo_plan_result_clear(&res);
	pws_crash(&w, 1, 7, "ContainerCreating", "Error");
	assert_false(eo_plan_member_crashlooping(w.pm[1].member, w.pm[1].pod, NULL, 0));
	/* Killed for memory: a new member would die the same way. */
	pws_crash(&w, 1, 7, "CrashLoopBackOff", "OOMKilled");
	assert_false(eo_plan_member_crashlooping(w.pm[1].member, w.pm[1].pod, NULL, 0));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* Two of three voters down: removing one would need the quorum that is missing. */
	pws_world_init(&w, &two_down);
	pws_crash(&w, 1, 5, "CrashLoopBackOff", "Error");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST, NULL);
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* The only member is never replaced: its data is all there is. */
	pws_world_init(&w, &alone);
	pws_crash(&w, 0, 9, "CrashLoopBackOff", "Error");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_int_equal(json_integer_value(json_object_get(res.status, "brokenMembers")), 1);
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/*
 * A joined member whose data dir was wiped under its intact PVC: its data guard refuses on the
 * first start (exit 3) and the member is removed through the quorum at once, without waiting
 * for a crash loop, and replaced by the scale-up path; it waits while removing it would need
 * the quorum that is missing. Another exit of the guard (it could not read the dir) is not
 * "data lost".
 */
static void test_wiped_member_replaced(void **state)
{
	const struct pws_row r = {"",
				  3,
				  {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
				  {EV("demo-a"), EV("demo-b"), EV("demo-c")},
				  0,
				  NULL,
				  0};
	const struct pws_row two_down = {"",
					 3,
					 {V("demo-a", A), VNR("demo-b", B), VNR("demo-c", C)},
					 {EV("demo-a"), EV("demo-b"), EV("demo-c")},
					 0,
					 NULL,
					 0};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &r);
	for (size_t i = 0; i < 3; i++)
		pws_make_ran_on_pvc(&w, i, "pvc-1");
	pws_guard_ended(&w, 1, EO_DESIRED_DATA_GUARD_EXIT_NO_WAL);
	assert_true(eo_plan_data_dir_lost(w.pm[1].member, w.pm[1].pod, NULL, 0));
	assert_false(eo_plan_member_crashlooping(w.pm[1].member, w.pm[1].pod, NULL, 0));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-b");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_MEMBER_REPLACED);
	assert_non_null(strstr(res.message, "member demo-b: data directory has no WAL"));
	assert_int_equal(json_integer_value(json_object_get(res.status, "brokenMembers")), 1);
	eo_plan_result_clear(&res);

	/* The guard could not read the dir (exit 1): not a lost member, nothing removed. */
	pws_guard_ended(&w, 1, 1);
	assert_false(eo_plan_data_dir_lost(w.pm[1].member, w.pm[1].pod, NULL, 0));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* Another voter down: removing demo-b would need the quorum that is missing. */
	pws_world_init(&w, &two_down);
	for (size_t i = 0; i < 3; i++)
		pws_make_ran_on_pvc(&w, i, "pvc-1");
	pws_guard_ended(&w, 1, EO_DESIRED_DATA_GUARD_EXIT_NO_WAL);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_null(res.member);
	assert_non_null(strstr(res.message, "waits"));
	assert_non_null(strstr(res.message, "demo-b"));
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/* A memory cluster that lost a majority of its voters says so and stops there. */
static void test_memory_quorum_gone(void **state)
{
	const struct pws_row one = {"", 1, {V("demo-a", A)}, {EV("demo-a")}, 0, NULL, 0};
	const struct pws_row three = {"",
				      3,
				      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
				      0,
				      NULL,
				      0};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &one);
	pws_make_memory(&w, 0, true);
	w.in.etcd_queried = false;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	assert_int_equal(res.requeue_ms, 0);
	assert_string_equal(res.event_reason, EO_REASON_QUORUM_LOST);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST,
		      "1 of 1 voting member(s) lost their data");
	pws_want_cond(res.status, EO_COND_DEGRADED, "True", EO_REASON_QUORUM_LOST, "demo-a");
	pws_want_cond(res.status, EO_COND_PROGRESSING, "False", EO_REASON_QUORUM_LOST,
		      "delete and recreate");
	assert_int_equal(json_integer_value(json_object_get(res.status, "brokenMembers")), 1);
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* Two of three: gone for good. One of three: replaced (test above). */
	pws_world_init(&w, &three);
	for (size_t i = 0; i < 3; i++)
		pws_make_memory(&w, i, i != 0);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST,
		      "2 of 3 voting member(s)");
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/* Conditions the audit of the runbook found wrong, each on its own world. */
static void test_condition_audit(void **state)
{
	const struct pws_row drifted = {"",
					3,
					{V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
					{EV("demo-a"), EV("demo-b"), EV("demo-c")},
					0,
					NULL,
					0};
	const struct pws_row growing = {"",
					5,
					{V("demo-a", A), V("demo-b", B), V("demo-c", C)},
					{EV("demo-a"), EV("demo-b"), EV("demo-c")},
					0,
					NULL,
					0};
	const struct pws_row empty = {"", 3, {{NULL}}, {{NULL}}, 0, NULL, 0};
	struct pws_world w;
	struct eo_plan_result res;
	json_t *st = NULL;

	(void)state;
	/* A spec edit while a member is down and no target is in flight is latched at once. */
	pws_world_init(&w, &drifted);
	st = json_object_get(w.cluster, "status");
	json_object_del(st, "progressDeadline");
	json_object_set_new(json_object_get(w.cluster, "spec"), "replicas", json_integer(5));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
	assert_int_equal(json_integer_value(
			     json_object_get(json_object_get(res.status, "observed"), "replicas")),
			 5);
	assert_non_null(json_object_get(res.status, "progressDeadline"));
	pws_want_cond(res.status, EO_COND_PROGRESSING, "True", EO_REASON_SPEC_CHANGED, NULL);
	pws_want_cond(res.status, EO_COND_DEGRADED, "True", EO_REASON_MEMBERS_UNHEALTHY, "demo-b");
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* DeadlineExceeded owns Available; Degraded still tells about the members. */
	pws_world_init(&w, &drifted);
	st = json_object_get(w.cluster, "status");
	json_object_set_new(st, "progressDeadline", json_string("2026-06-02T09:59:00Z"));
	json_object_set_new(st, "conditions",
			    json_pack("[{s:s, s:s, s:s, s:s, s:s, s:i}]", "type", "Degraded",
				      "status", "False", "reason", "QuorumHealthy", "message", "",
				      "lastTransitionTime", "2026-06-02T09:00:00Z",
				      "observedGeneration", 2));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_DEADLINE_EXCEEDED, NULL);
	pws_want_cond(res.status, EO_COND_DEGRADED, "True", EO_REASON_MEMBERS_UNHEALTHY, "demo-b");
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* etcd does not answer though every Pod is ready: Degraded says so. */
	pws_world_init(&w, &growing);
	w.in.etcd_err = EO_ETCD_UNAVAILABLE;
	w.in.etcd = NULL;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "True", EO_REASON_QUORUM_HEALTHY, NULL);
	pws_want_cond(res.status, EO_COND_DEGRADED, "True", EO_REASON_CLUSTER_UNREACHABLE,
		      "cannot list etcd's members");
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* Every EtcdMember deleted by hand: the data is gone, say so and stop. */
	pws_world_init(&w, &empty);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST,
		      "no member of etcd cluster 248adce0359142ba is left");
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/* --- rolling updates through eo_plan_cluster (plan/roll.h has the step table) --- */

static void test_rolling_update(void **state)
{
	struct pws_world w;
	struct eo_plan_result res;
	struct eo_etcd_status st[PWS_MAXM];
	json_t *cst = NULL;

	(void)state;
	/* A steady cluster: nothing to roll, etcd is not even asked for statuses. */
	pws_world_init(&w, &pws_rolled3);
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	assert_int_equal(json_integer_value(json_object_get(res.status, "updatedMembers")), 3);
	assert_null(json_object_get(res.status, "rollingMember"));
	eo_plan_result_clear(&res);

	/* spec.version 3.6.16 on a reached target: latched (SpecChanged), nothing else. */
	pws_set_version(w.cluster, "spec", "3.6.16");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(res.status, "observed"), "version")),
	    "3.6.16");
	pws_want_cond(res.status, EO_COND_PROGRESSING, "True", EO_REASON_SPEC_CHANGED, NULL);
	cst = json_incref(res.status);
	eo_plan_result_clear(&res);
	json_object_set_new(w.cluster, "status", cst);

	/* The first pass asks etcd for its members and every member's status. */
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_QUERY_MEMBERS);
	assert_true(res.want_status);
	assert_int_equal(res.n_endpoints, 3);
	eo_plan_result_clear(&res);
	w.in.etcd_queried = true;
	w.in.etcd = &w.etcd;

	/* No status answered (no leader known): the roll waits. */
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "no member knows a leader"));
	eo_plan_result_clear(&res);

	/* demo-a leads: the first follower by name, demo-b, gets the target spec. */
	pws_world_statuses(&w, st, w.ev[0].id);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_UPDATE_MEMBER);
	assert_string_equal(eo_member_name(res.member), "demo-b");
	{
		json_t *want = tu_jsonq("{'spec':{'version':'3.6.16'}}");

		tu_assert_json_equal(res.patch, want, "roll patch");
		json_decref(want);
	}
	assert_string_equal(json_string_value(json_object_get(res.status, "rollingMember")),
			    "demo-b");
	assert_int_equal(json_integer_value(json_object_get(res.status, "updatedMembers")), 0);
	assert_string_equal(res.event_reason, EO_PLAN_REASON_ROLLING);
	eo_plan_result_clear(&res);

	/* Its spec carries the target: its Pod is deleted (UID precondition) ... */
	pws_set_version((json_t *)w.pm[1].member, "spec", "3.6.16");
	/* ... once the PodDisruptionBudget allows it: 0 allowed, or a status behind, waits. */
	json_object_set_new(json_object_get(w.pdb, "status"), "disruptionsAllowed",
			    json_integer(0));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "disruptionsAllowed is 0"));
	eo_plan_result_clear(&res);
	json_object_set_new(json_object_get(w.pdb, "status"), "disruptionsAllowed",
			    json_integer(1));
	json_object_set_new(json_object_get(w.pdb, "metadata"), "generation", json_integer(2));
	json_object_set_new(json_object_get(w.pdb, "status"), "observedGeneration",
			    json_integer(1));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "older than its spec"));
	eo_plan_result_clear(&res);
	json_object_set_new(json_object_get(w.pdb, "status"), "observedGeneration",
			    json_integer(2));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_RESTART_MEMBER);
	assert_string_equal(eo_member_name(res.member), "demo-b");
	assert_string_equal(res.pod_uid, "pod-uid");
	eo_plan_result_clear(&res);

	/* Its new Pod is not ready yet: nothing else is touched. */
	pws_rebuild_pod(&w, 1, false);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "demo-b to become ready"));
	assert_string_equal(json_string_value(json_object_get(res.status, "rollingMember")),
			    "demo-b");
	eo_plan_result_clear(&res);

	/* Ready but behind the leader: still waits. */
	pws_rebuild_pod(&w, 1, true);
	st[1].raft_applied_index = 100;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "catch up"));
	assert_int_equal(json_integer_value(json_object_get(res.status, "updatedMembers")), 1);
	eo_plan_result_clear(&res);

	/* Caught up: demo-c next; then only the leader is left: leadership moves to demo-b. */
	st[1].raft_applied_index = 500;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_UPDATE_MEMBER);
	assert_string_equal(eo_member_name(res.member), "demo-c");
	eo_plan_result_clear(&res);
	pws_set_version((json_t *)w.pm[2].member, "spec", "3.6.16");
	pws_rebuild_pod(&w, 2, true);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_MOVE_LEADER);
	assert_string_equal(eo_member_name(res.member), "demo-a");
	assert_int_equal(res.n_endpoints, 1);
	assert_string_equal(res.endpoints[0], "http://demo-a.demo.default.svc.cluster.local:2379");
	assert_int_equal(res.etcd_id, w.ev[1].id);
	assert_string_equal(res.event_reason, EO_PLAN_REASON_LEADER_MOVED);
	eo_plan_result_clear(&res);

	/* demo-b leads now: demo-a is rolled; once it is back the target is reached. */
	pws_world_statuses(&w, st, w.ev[1].id);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_UPDATE_MEMBER);
	assert_string_equal(eo_member_name(res.member), "demo-a");
	eo_plan_result_clear(&res);
	pws_set_version((json_t *)w.pm[0].member, "spec", "3.6.16");
	pws_rebuild_pod(&w, 0, true);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	assert_true(res.status_changed);
	assert_null(json_object_get(res.status, "progressDeadline"));
	assert_null(json_object_get(res.status, "rollingMember"));
	assert_int_equal(json_integer_value(json_object_get(res.status, "updatedMembers")), 3);
	pws_want_cond(res.status, EO_COND_PROGRESSING, "False", EO_REASON_RECONCILED, NULL);
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/* A minor downgrade or a skipped minor is refused: nothing latched, nothing touched. */
static void test_version_change_refused(void **state)
{
	static const char *const bad[] = {"3.5.35", "3.8.0", "4.0.0"};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pws_world w;
		struct eo_plan_result res;
		struct eo_etcd_status st[PWS_MAXM];

		pws_world_init(&w, &pws_rolled3);
		json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
		pws_world_statuses(&w, st, w.ev[0].id);
		pws_set_version(w.cluster, "spec", bad[i]);
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		if (res.action != EO_PLAN_NONE)
			fail_msg("%s: action %s", bad[i], eo_plan_action_name(res.action));
		assert_string_equal(json_string_value(json_object_get(
					json_object_get(res.status, "observed"), "version")),
				    "3.6.11");
		assert_null(json_object_get(res.status, "progressDeadline"));
		pws_want_cond(res.status, EO_COND_PROGRESSING, "False",
			      EO_PLAN_REASON_VERSION_REFUSED, "3.6");
		pws_want_cond(res.status, EO_COND_AVAILABLE, "True", EO_REASON_QUORUM_HEALTHY,
			      NULL);
		assert_string_equal(res.event_reason, EO_PLAN_REASON_VERSION_REFUSED);
		eo_plan_result_clear(&res);
		pws_world_free(&w);
	}
}

/*
 * The Pods differ from what the members' specs give (an operator upgrade): a deadline is set
 * (RollingUpdate) and the members are restarted one at a time, followers first.
 */
static void test_pod_drift_rolls(void **state)
{
	struct pws_world w;
	struct eo_plan_result res;
	struct eo_etcd_status st[PWS_MAXM];

	(void)state;
	pws_world_init(&w, &pws_rolled3);
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	for (size_t i = 0; i < 3; i++)
		json_object_set_new(
		    json_object_get(json_object_get((json_t *)w.pm[i].pod, "metadata"),
				    "annotations"),
		    EO_ANNOTATION_POD_HASH, json_string("0000000000000000"));
	pws_world_statuses(&w, st, w.ev[0].id);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
	assert_non_null(json_object_get(res.status, "progressDeadline"));
	pws_want_cond(res.status, EO_COND_PROGRESSING, "True", EO_PLAN_REASON_ROLLING,
		      "3 member(s)");
	json_object_set_new(w.cluster, "status", json_incref(res.status));
	eo_plan_result_clear(&res);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_RESTART_MEMBER);
	assert_string_equal(eo_member_name(res.member), "demo-b");
	pws_want_cond(res.status, EO_COND_PROGRESSING, "True", EO_PLAN_REASON_ROLLING,
		      "restarting");
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/*
 * A changed CA bundle (status.caBundleDigest) rolls the members that mount a TLS Secret, one
 * at a time through the roll path: followers first, each waiting for the one before to be
 * ready. The same digest (a leaf rotated under the same CA) rolls nothing.
 */
static void test_ca_bundle_rolls(void **state)
{
	struct pws_world w;
	struct eo_plan_result res;
	struct eo_etcd_status st[PWS_MAXM];
	json_t *cst = NULL;

	(void)state;
	pws_world_init(&w, &pws_rolled3);
	cst = json_object_get(w.cluster, "status");
	json_object_del(cst, "progressDeadline");
	json_object_set_new(cst, "caBundleDigest", json_string(CA1));
	for (size_t i = 0; i < 3; i++)
		pws_tls_member(&w, i, CA1, true);
	pws_world_statuses(&w, st, w.ev[0].id);
	w.in.ca_bundle_digest = CA1;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_true(res.action == EO_PLAN_NONE || res.action == EO_PLAN_WAIT);
	assert_null(res.status != NULL ? json_object_get(res.status, "rollingMember") : NULL);
	assert_null(res.status != NULL ? json_object_get(res.status, "progressDeadline") : NULL);
	eo_plan_result_clear(&res);

	/* The bundle changed: recorded, a deadline set, the roll announced. */
	w.in.ca_bundle_digest = CA2;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
	assert_string_equal(json_string_value(json_object_get(res.status, "caBundleDigest")), CA2);
	assert_non_null(json_object_get(res.status, "progressDeadline"));
	pws_want_cond(res.status, EO_COND_PROGRESSING, "True", EO_PLAN_REASON_ROLLING,
		      "the CA bundle of the TLS Secrets changed");
	json_object_set_new(w.cluster, "status", json_incref(res.status));
	eo_plan_result_clear(&res);

	/* A follower first. */
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_RESTART_MEMBER);
	assert_string_equal(eo_member_name(res.member), "demo-b");
	json_object_set_new(w.cluster, "status", json_incref(res.status));
	eo_plan_result_clear(&res);

	/* Its new Pod (new digest) is not ready yet: nothing else is touched. */
	pws_tls_member(&w, 1, CA2, false);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_string_equal(json_string_value(json_object_get(res.status, "rollingMember")),
			    "demo-b");
	json_object_set_new(w.cluster, "status", json_incref(res.status));
	eo_plan_result_clear(&res);

	/* Ready: the next follower; demo-b is not restarted again. */
	pws_tls_member(&w, 1, CA2, true);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_RESTART_MEMBER);
	assert_string_equal(eo_member_name(res.member), "demo-c");
	json_object_set_new(w.cluster, "status", json_incref(res.status));
	eo_plan_result_clear(&res);

	/* The leader last, after moving leadership away. */
	pws_tls_member(&w, 2, CA2, true);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_MOVE_LEADER);
	json_object_set_new(w.cluster, "status", json_incref(res.status));
	eo_plan_result_clear(&res);
	pws_tls_member(&w, 0, CA2, true);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_true(res.action == EO_PLAN_NONE || res.action == EO_PLAN_WAIT ||
		    res.action == EO_PLAN_WRITE_STATUS);
	assert_null(json_object_get(res.status, "rollingMember"));
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* Members without TLS Secrets carry no digest: recording one rolls nothing. */
	pws_world_init(&w, &pws_rolled3);
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	pws_world_statuses(&w, st, w.ev[0].id);
	w.in.ca_bundle_digest = CA2;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_string_equal(json_string_value(json_object_get(res.status, "caBundleDigest")), CA2);
	assert_null(json_object_get(res.status, "progressDeadline"));
	assert_null(json_object_get(res.status, "rollingMember"));
	assert_int_not_equal(res.action, EO_PLAN_RESTART_MEMBER);
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

static void test_initial_cluster_helper(void **state)
{
	char a[EO_DESIRED_URL_MAX] = "http://a:2380", b[EO_DESIRED_URL_MAX] = "http://b:2380";
	char *pa = a, *pb = b, buf[64], small[8];
	struct eo_etcd_member v[2] = {
	    {.id = 1, .name = (char *)"a", .peer_urls = &pa, .n_peer_urls = 1},
	    {.id = 2, .name = (char *)"", .peer_urls = &pb, .n_peer_urls = 1, .is_learner = true}};
	struct eo_etcd_members list = {.v = v, .n = 2};

	(void)state;
	assert_int_equal(eo_plan_initial_cluster(&list, "b", "http://b:2380", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "a=http://a:2380,b=http://b:2380");
	assert_int_equal(eo_plan_initial_cluster(&list, "c", "http://c:2380", buf, sizeof(buf)),
			 -1);
	assert_int_equal(eo_plan_initial_cluster(&list, "b", "http://b:2380", small, sizeof(small)),
			 -1);
	assert_string_equal(small, "");
	assert_string_equal(eo_plan_action_name(EO_PLAN_PROMOTE_LEARNER), "promote-learner");
	assert_string_equal(eo_plan_action_name(EO_PLAN_DELETE_PDB), "delete-pdb");
}

/*
 * Quorum-loss recovery: two of three PVC members lost their volumes. Without the annotation
 * nothing happens (the lost-PVC path cannot act without quorum); a bad annotation is refused
 * once, with an Event; the annotation naming the survivor walks it through
 * --force-new-cluster and back, then the usual steps replace the others.
 */
static void test_force_new_cluster(void **state)
{
	const struct pws_row r = {"",
				  3,
				  {VNR("demo-a", A), V("demo-b", B), V("demo-c", C)},
				  {EV("demo-a"), EV("demo-b"), EV("demo-c")},
				  0,
				  NULL,
				  0};
	struct pws_world w;
	struct eo_plan_result res;
	const char *step = EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP;

	(void)state;
	pws_world_init(&w, &r);
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	pws_make_ran_on_pvc(&w, 0, "pvc-1");
	for (size_t i = 1; i < 3; i++) {
		pws_make_ran_on_pvc(&w, i, NULL);
		json_decref((json_t *)w.pm[i].pod);
		w.pm[i].pod = NULL;
	}

	/* No annotation: QuorumLost, nothing removed; the message says what may be done. */
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST,
		      EO_ANNOTATION_FORCE_NEW_CLUSTER "=<member>");
	assert_null(json_object_get(json_object_get(res.status, "conditions"), "x"));
	pws_adopt_status(&w, &res);

	/* A member that does not exist: refused once, with a Warning; then plain QuorumLost. */
	pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-zz");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
	pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
		      EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED, "not a member");
	assert_string_equal(res.event_type, "Warning");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED);
	pws_adopt_status(&w, &res);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	assert_false(res.status_changed);
	eo_plan_result_clear(&res);

	/* A member that lost its data: refused too. */
	pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-b");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
	pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
		      EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED, "no data");
	pws_adopt_status(&w, &res);

	/* The survivor: marked "forcing"; its Pod would now carry the flag. */
	pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-a");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_MARK_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-a");
	pws_want_patch(res.patch, step, "forcing");
	pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "True",
		      EO_PLAN_REASON_FORCE_NEW_CLUSTER, "--force-new-cluster");
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_PLAN_REASON_FORCE_NEW_CLUSTER,
		      NULL);
	assert_string_equal(res.event_reason, EO_PLAN_REASON_FORCE_NEW_CLUSTER);
	pws_adopt_status(&w, &res);
	assert_false(eo_desired_member_forces_new_cluster(w.pm[0].member));
	pws_annotate((json_t *)w.pm[0].member, step, "forcing");
	assert_true(eo_desired_member_forces_new_cluster(w.pm[0].member));

	/* Its old Pod (no flag) is deleted, UID as precondition. */
	assert_false(eo_desired_pod_forces_new_cluster(w.pm[0].pod));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_RESTART_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-a");
	assert_string_equal(res.pod_uid, "pod-uid");
	pws_adopt_status(&w, &res);

	/* The new Pod carries the flag; not ready yet: wait. */
	pws_pod_from_member(&w, 0, false);
	assert_true(eo_desired_pod_forces_new_cluster(w.pm[0].pod));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	pws_adopt_status(&w, &res);

	/* Ready: etcd's members are listed through the survivor alone. */
	pws_pod_from_member(&w, 0, true);
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_QUERY_MEMBERS);
	assert_int_equal(res.n_endpoints, 1);
	assert_non_null(strstr(res.endpoints[0], "demo-a."));
	eo_plan_result_clear(&res);

	/* etcd still lists three: not forced yet. */
	w.in.etcd_queried = true;
	w.in.etcd = &w.etcd;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "still lists 3"));
	pws_adopt_status(&w, &res);

	/* The survivor alone: marked "forced". */
	w.etcd.n = 1;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_MARK_MEMBER);
	pws_want_patch(res.patch, step, "forced");
	pws_adopt_status(&w, &res);
	pws_annotate((json_t *)w.pm[0].member, step, "forced");
	assert_false(eo_desired_member_forces_new_cluster(w.pm[0].member));

	/* The Pod with the flag goes; the next one has none. */
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_RESTART_MEMBER);
	assert_string_equal(res.pod_uid, "pod-uid-2");
	pws_adopt_status(&w, &res);
	pws_pod_from_member(&w, 0, true);
	assert_false(eo_desired_pod_forces_new_cluster(w.pm[0].pod));

	/*
	 * The usual steps, the quorum-lost stop lifted: the lost members etcd no longer lists
	 * lose their voter mark, then go (their finalizer finds nothing to remove).
	 */
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_SET_VOTER);
	assert_string_equal(pws_name_of(res.member), "demo-b");
	assert_false(res.voter);
	pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "True",
		      EO_PLAN_REASON_FORCE_NEW_CLUSTER, "re-adding");
	pws_adopt_status(&w, &res);
	for (size_t i = 1; i < 3; i++)
		json_object_set_new(json_object_get((json_t *)w.pm[i].member, "status"), "isVoter",
				    json_false());
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-b");
	pws_adopt_status(&w, &res);
	pws_world_free(&w);

	/* Whole again (the survivor and two new members): the annotation is removed. */
	{
		const struct pws_row whole = {"",
					      3,
					      {V("demo-a", A), V("demo-x", B), V("demo-y", C)},
					      {EV("demo-a"), EV("demo-x"), EV("demo-y")},
					      0,
					      NULL,
					      0};

		pws_world_init(&w, &whole);
		json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
		pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-a");
		pws_annotate((json_t *)w.pm[0].member, step, "forced");
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		assert_int_equal(res.action, EO_PLAN_CLEAR_FORCE_REQUEST);
		pws_want_patch(res.patch, EO_ANNOTATION_FORCE_NEW_CLUSTER, NULL);
		pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
			      EO_PLAN_REASON_FORCE_NEW_CLUSTER_DONE, "every member is ready");
		pws_want_cond(res.status, EO_COND_AVAILABLE, "True", EO_REASON_QUORUM_HEALTHY,
			      NULL);
		assert_string_equal(res.event_reason, EO_PLAN_REASON_FORCE_NEW_CLUSTER_DONE);
		pws_adopt_status(&w, &res);

		/* No request left: the survivor's mark goes, the Done record stays. */
		pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, NULL);
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		assert_int_equal(res.action, EO_PLAN_MARK_MEMBER);
		assert_string_equal(pws_name_of(res.member), "demo-a");
		pws_want_patch(res.patch, step, NULL);
		pws_adopt_status(&w, &res);
		pws_annotate((json_t *)w.pm[0].member, step, NULL);
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		assert_int_equal(res.action, EO_PLAN_NONE);
		pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
			      EO_PLAN_REASON_FORCE_NEW_CLUSTER_DONE, NULL);
		eo_plan_result_clear(&res);

		/* A healthy cluster refuses the request (quorum present) and keeps running. */
		pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-a");
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
		pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
			      EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED, "0 of 3");
		pws_adopt_status(&w, &res);
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		assert_int_equal(res.action, EO_PLAN_NONE);
		assert_false(res.status_changed);
		eo_plan_result_clear(&res);

		/* Removing the refused request removes its condition. */
		pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, NULL);
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		assert_true(res.status_changed);
		assert_null(eo_condition_find(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER));
		eo_plan_result_clear(&res);
		pws_world_free(&w);
	}
}

/*
 * A missed deadline stops progress, not healing: past status.progressDeadline with the spec
 * unchanged (here a scale-up 3 -> 5 that never got its fourth member), lost and crash-looping
 * members are still replaced, strays removed, learners promoted and the PDB kept; growing
 * beyond the members the cluster had, scaling down and rolling wait.
 */
static void test_deadline_heals(void **state)
{
	const struct pws_row three = {"",
				      5,
				      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
				      0,
				      NULL,
				      0};
	const struct pws_row two = {
	    "", 5, {V("demo-a", A), V("demo-c", C)}, {EV("demo-a"), EV("demo-c")}, 0, NULL, 0};
	const struct pws_row crashing = {"",
					 5,
					 {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
					 {EV("demo-a"), EV("demo-b"), EV("demo-c")},
					 0,
					 NULL,
					 0};
	const struct pws_row learner = {
	    "",
	    5,
	    {V("demo-a", A), V("demo-b", B), V("demo-c", C), L("demo-d", D, 2)},
	    {EV("demo-a"), EV("demo-b"), EV("demo-c"), EL("demo-d", 0xd)},
	    0,
	    NULL,
	    0};
	const struct pws_row stray = {
	    "",
	    5,
	    {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	    {EV("demo-a"), EV("demo-b"), EV("demo-c"), EL("demo-x", 0x77)},
	    0,
	    NULL,
	    0};
	const struct pws_row down = {"",
				     1,
				     {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				     {EV("demo-a"), EV("demo-b"), EV("demo-c")},
				     0,
				     NULL,
				     0};
	struct pws_world w;
	struct eo_plan_result res;
	struct eo_etcd_status st[PWS_MAXM];

	(void)state;
	/* A member that lost its PVC is removed ... */
	pws_world_init(&w, &three);
	for (size_t i = 0; i < 3; i++)
		pws_make_ran_on_pvc(&w, i, i == 1 ? NULL : "pvc-1");
	pws_want_held(&w, "lost PVC", EO_PLAN_REMOVE_MEMBER, "demo-b");
	pws_world_free(&w);
	/* ... and replaced, back up to the 3 members it had, not beyond. */
	pws_world_init(&w, &two);
	json_object_set_new(json_object_get(w.cluster, "status"), "membersAtDeadline",
			    json_integer(3));
	pws_want_held(&w, "replacement", EO_PLAN_CREATE_MEMBER, NULL);
	pws_world_free(&w);
	pws_world_init(&w, &three);
	pws_want_held(&w, "back at 3", EO_PLAN_NONE, NULL);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(json_integer_value(json_object_get(res.status, "membersAtDeadline")), 3);
	assert_non_null(strstr(res.message, "not growing beyond the 3 member(s)"));
	assert_string_equal(res.event_reason, EO_REASON_DEADLINE_EXCEEDED);
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* A crash-looping voter is replaced. */
	pws_world_init(&w, &crashing);
	pws_crash(&w, 1, 3, "CrashLoopBackOff", "Error");
	pws_want_held(&w, "crash loop", EO_PLAN_REMOVE_MEMBER, "demo-b");
	pws_world_free(&w);

	/* A learner that serves is promoted. */
	pws_world_init(&w, &learner);
	pws_want_held(&w, "learner", EO_PLAN_PROMOTE_LEARNER, "demo-d");
	pws_world_free(&w);

	/* A learner no EtcdMember stands for is removed. */
	pws_world_init(&w, &stray);
	pws_want_held(&w, "stray", EO_PLAN_REMOVE_STRAY, NULL);
	pws_world_free(&w);

	/* The PodDisruptionBudget is kept. */
	pws_world_init(&w, &three);
	json_decref(w.pdb);
	w.pdb = NULL;
	w.in.pdb = NULL;
	pws_want_held(&w, "PDB", EO_PLAN_ENSURE_PDB, NULL);
	pws_world_free(&w);

	/* A scale-down waits. */
	pws_world_init(&w, &down);
	pws_want_held(&w, "scale-down", EO_PLAN_NONE, NULL);
	pws_world_free(&w);

	/* A roll step waits: the members run 3.6.11, the target says 3.6.16. */
	pws_world_init(&w, &pws_rolled3);
	pws_set_version(w.cluster, "spec", "3.6.16");
	pws_set_version(json_object_get(w.cluster, "status"), "observed", "3.6.16");
	pws_world_statuses(&w, st, w.ev[0].id);
	pws_want_held(&w, "roll", EO_PLAN_NONE, NULL);
	pws_world_free(&w);
}

/*
 * A majority of a memory cluster's voters on one node is told in Degraded (VotersShareNode,
 * naming the node) while every member is ready; nothing waits on it, and a more urgent reason
 * (a member not ready) wins. PVC members on one node are not reported: their data outlives it.
 */
static void test_voters_share_node(void **state)
{
	const struct pws_row one_down = {"",
					 3,
					 {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
					 {EV("demo-a"), EV("demo-b"), EV("demo-c")},
					 0,
					 NULL,
					 0};
	const char *nodes[][3] = {
	    {"node-1", "node-1", "node-2"}, /* 2 of 3 on node-1 */
	    {"node-1", "node-2", "node-3"}, /* spread */
	};
	struct pws_world w;
	struct eo_plan_result res;
	json_t *storage = json_pack("{s:s, s:s}", "size", "256Mi", "medium", "Memory");

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		pws_world_init(&w, &pws_rolled3);
		json_object_set(json_object_get(w.cluster, "spec"), "storage", storage);
		json_object_set(json_object_get(json_object_get(w.cluster, "status"), "observed"),
				"storage", storage);
		for (size_t i = 0; i < 3; i++) {
			pws_make_memory(&w, i, false);
			pws_rebuild_pod(&w, i, true);
			pws_on_node(&w, i, nodes[k][i]);
		}
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		pws_want_cond(res.status, EO_COND_AVAILABLE, "True", EO_REASON_QUORUM_HEALTHY,
			      NULL);
		if (k == 0)
			pws_want_cond(res.status, EO_COND_DEGRADED, "True",
				      EO_PLAN_REASON_VOTERS_SHARE_NODE,
				      "2 of 3 voting memory member(s) run on node node-1");
		else
			pws_want_cond(res.status, EO_COND_DEGRADED, "False",
				      EO_REASON_QUORUM_HEALTHY, NULL);
		eo_plan_result_clear(&res);
		pws_world_free(&w);
	}

	/* PVC members, all on one node: not reported. */
	pws_world_init(&w, &pws_rolled3);
	for (size_t i = 0; i < 3; i++)
		pws_on_node(&w, i, "node-1");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	pws_want_cond(res.status, EO_COND_DEGRADED, "False", EO_REASON_QUORUM_HEALTHY, NULL);
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* A member not ready is the more urgent news. */
	pws_world_init(&w, &one_down);
	json_object_set(json_object_get(w.cluster, "spec"), "storage", storage);
	json_object_set(json_object_get(json_object_get(w.cluster, "status"), "observed"),
			"storage", storage);
	for (size_t i = 0; i < 3; i++) {
		pws_make_memory(&w, i, false);
		pws_rebuild_pod(&w, i, i != 1);
		pws_on_node(&w, i, "node-1");
	}
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	pws_want_cond(res.status, EO_COND_DEGRADED, "True", EO_REASON_MEMBERS_UNHEALTHY, NULL);
	eo_plan_result_clear(&res);
	pws_world_free(&w);
	json_decref(storage);
}

/*
 * A roll replaces a memory member of three by evicting its Pod (the PDB decides in the
 * apiserver, atomically with a drain); the lost-member step then removes it. While a member
 * has not answered its status the roll waits and nothing is evicted.
 */
static void test_memory_roll_evicts(void **state)
{
	struct pws_world w;
	struct eo_plan_result res;
	struct eo_etcd_status st[PWS_MAXM];
	json_t *storage = json_pack("{s:s, s:s}", "size", "256Mi", "medium", "Memory");

	(void)state;
	for (int down = 0; down < 2; down++) {
		pws_world_init(&w, &pws_rolled3);
		json_object_set(json_object_get(w.cluster, "spec"), "storage", storage);
		json_object_set(json_object_get(json_object_get(w.cluster, "status"), "observed"),
				"storage", storage);
		for (size_t i = 0; i < 3; i++) {
			pws_make_memory(&w, i, false);
			pws_rebuild_pod(&w, i, true);
		}
		pws_set_version(w.cluster, "spec", "3.6.16");
		pws_set_version(json_object_get(w.cluster, "status"), "observed", "3.6.16");
		pws_world_statuses(&w, st, w.ev[0].id);
		if (down)
			w.in.n_statuses = 2;
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		if (!down) {
			if (res.action != EO_PLAN_RESTART_MEMBER)
				fail_msg("action %s (%s)", eo_plan_action_name(res.action),
					 res.message);
			assert_true(res.evict);
			assert_string_equal(pws_name_of(res.member), "demo-b");
			assert_string_equal(res.pod_uid, "pod-uid");
			assert_non_null(strstr(res.message, "evicting its Pod"));
		} else {
			assert_int_not_equal(res.action, EO_PLAN_RESTART_MEMBER);
			assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
		}
		eo_plan_result_clear(&res);
		pws_world_free(&w);
	}
	json_decref(storage);
}

/*
 * Force-new-cluster acts on the truth (issue 17 item 4). The caches hold only labelled objects:
 * two PVCs whose managed-by label was removed look gone. Neither QuorumLost nor a recovery is
 * decided on that view: the plan asks for live reads and every member's Status first; on the
 * live view nothing is lost, so the request is refused and no QuorumLost advice is given. When
 * the data really is gone but a "lost" member's etcd still answers, the request is refused
 * and the QuorumLost message says so instead of advising the annotation.
 */
static void test_force_new_cluster_live_truth(void **state)
{
	const struct pws_row r = {"",
				  3,
				  {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				  {EV("demo-a"), EV("demo-b"), EV("demo-c")},
				  0,
				  NULL,
				  0};
	struct pws_world w;
	struct eo_plan_result res;
	json_t *kept[3] = {NULL, NULL, NULL};
	char url[3][EO_DESIRED_URL_MAX];
	const char *from[3];
	struct eo_etcd_status st[3];

	(void)state;
	pws_world_init(&w, &r);
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	for (size_t i = 0; i < 3; i++) {
		pws_make_ran_on_pvc(&w, i, "pvc-1");
		from[i] = pws_client_url(pws_name_of(w.pm[i].member), url[i]);
		st[i] = (struct eo_etcd_status){.cluster_id = 0x248adce0359142baULL,
						.member_id = 0x8e9e05c52164694dULL,
						.leader = 0xb,
						.raft_term = 4,
						.raft_index = 120};
	}
	/* The cache's view: the PVCs of b and c lost their label, so they are not in it. */
	for (size_t i = 1; i < 3; i++) {
		kept[i] = (json_t *)w.pm[i].pvc;
		w.pm[i].pvc = NULL;
	}
	w.in.live_checked = false;
	w.in.etcd_queried = false;
	w.in.etcd = NULL;

	/* No request: no QuorumLost on the cache alone; live reads and etcd first. */
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_QUERY_MEMBERS);
	assert_true(res.want_live);
	assert_true(res.want_status);
	assert_int_equal(res.n_endpoints, 3);
	assert_null(strstr(res.message, EO_ANNOTATION_FORCE_NEW_CLUSTER));
	eo_plan_result_clear(&res);

	/* The request naming a: no mark on the cache alone either. */
	pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-a");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_QUERY_MEMBERS);
	assert_true(res.want_live);
	assert_int_equal(res.n_endpoints, 3);
	eo_plan_result_clear(&res);

	/* The live view: every PVC is there, every member answers (b leads). Refused. */
	for (size_t i = 1; i < 3; i++)
		w.pm[i].pvc = kept[i];
	w.in.live_checked = true;
	w.in.etcd_queried = true;
	w.in.etcd = &w.etcd;
	w.in.statuses = st;
	w.in.n_statuses = 3;
	w.in.status_from = from;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
	pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
		      EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED, "0 of 3");
	assert_string_equal(res.event_type, "Warning");
	pws_adopt_status(&w, &res);
	{
		const char *av =
		    eo_condition_reason(json_object_get(w.cluster, "status"), EO_COND_AVAILABLE);

		assert_true(av == NULL || strcmp(av, EO_REASON_QUORUM_LOST) != 0);
	}

	/*
	 * The data of b and c is really gone (their PVCs deleted) but b's Pod still runs and its
	 * etcd answers: refused, and QuorumLost does not advise the annotation.
	 */
	for (size_t i = 1; i < 3; i++) {
		w.pm[i].pvc = NULL;
		st[i].leader = 0;
	}
	st[0].leader = 0;
	json_decref(kept[1]);
	json_decref(kept[2]);
	w.in.n_statuses = 2; /* a and b answer, c does not */
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
	pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
		      EO_PLAN_REASON_FORCE_NEW_CLUSTER_LOST_ANSWERS,
		      "member demo-b counts as lost");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_FORCE_NEW_CLUSTER_LOST_ANSWERS);
	pws_adopt_status(&w, &res);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	pws_want_cond(
	    res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST,
	    "forcing a new cluster would be refused now: check lost-members-silent failed");
	{
		const char *m = json_string_value(
		    json_object_get(eo_condition_find(res.status, EO_COND_AVAILABLE), "message"));

		assert_null(strstr(m, "=<member>"));
	}
	pws_adopt_status(&w, &res);

	/* b stops answering: the checks pass, QuorumLost names a, and a is marked. */
	w.in.n_statuses = 1;
	pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, NULL);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST,
		      EO_ANNOTATION_FORCE_NEW_CLUSTER "=<member>; writes it had not replicated are "
						      "lost): member demo-a");
	pws_adopt_status(&w, &res);
	pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-a");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_MARK_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-a");
	eo_plan_result_clear(&res);

	/* Marked, old Pod still without the flag, and now a leader shows up: refused, unmarked. */
	pws_annotate((json_t *)w.pm[0].member, EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP, "forcing");
	st[0].leader = 0x8e9e05c52164694dULL;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_MARK_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-a");
	pws_want_patch(res.patch, EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP, NULL);
	pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
		      EO_PLAN_REASON_FORCE_NEW_CLUSTER_LEADER, "member demo-a answers with leader");
	eo_plan_result_clear(&res);
	/* Without a leader it restarts as before. */
	st[0].leader = 0;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_RESTART_MEMBER);
	eo_plan_result_clear(&res);
	/* ... but only on the live view: the cache alone asks for the checks first. */
	w.in.live_checked = false;
	w.in.etcd_queried = false;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_QUERY_MEMBERS);
	assert_true(res.want_live);
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_membership_table),
	    cmocka_unit_test(test_other_cluster_decides_nothing),
	    cmocka_unit_test(test_absence_needs_the_leader),
	    cmocka_unit_test(test_voter_label_with_the_mark),
	    cmocka_unit_test(test_add_learner_details),
	    cmocka_unit_test(test_query_through_voters),
	    cmocka_unit_test(test_endpoints_oldest_pod_first),
	    cmocka_unit_test(test_health_counts_voters),
	    cmocka_unit_test(test_pdb_math),
	    cmocka_unit_test(test_pdb_plan),
	    cmocka_unit_test(test_pause_descends),
	    cmocka_unit_test(test_pause_last_member),
	    cmocka_unit_test(test_resume),
	    cmocka_unit_test(test_paused_from_start),
	    cmocka_unit_test(test_memory_member_replaced),
	    cmocka_unit_test(test_pvc_member_replaced),
	    cmocka_unit_test(test_live_read_before_removal),
	    cmocka_unit_test(test_creates_are_idempotent),
	    cmocka_unit_test(test_crashloop_member_replaced),
	    cmocka_unit_test(test_wiped_member_replaced),
	    cmocka_unit_test(test_memory_quorum_gone),
	    cmocka_unit_test(test_condition_audit),
	    cmocka_unit_test(test_initial_cluster_helper),
	    cmocka_unit_test(test_rolling_update),
	    cmocka_unit_test(test_version_change_refused),
	    cmocka_unit_test(test_pod_drift_rolls),
	    cmocka_unit_test(test_ca_bundle_rolls),
	    cmocka_unit_test(test_force_new_cluster),
	    cmocka_unit_test(test_deadline_heals),
	    cmocka_unit_test(test_voters_share_node),
	    cmocka_unit_test(test_memory_roll_evicts),
	    cmocka_unit_test(test_force_new_cluster_live_truth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
