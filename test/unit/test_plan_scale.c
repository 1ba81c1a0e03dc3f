/*
 * Unit tests for plan/plan.c after bootstrap, end to end through eo_plan_cluster: the table of
 * running-cluster worlds (scale up one learner at a time, promotion, scale down, the
 * crash-resume states between the steps, status.isVoter following etcd) and the audit of the
 * conditions. The rows of each decision are in the test file of that decision
 * (test_plan_<decision>.c); the world is support/planworld_scale.h.
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
#include "support/tu_main.h"
#include "support/planworld_step.h"

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
		pws_done(&w, &res);
	}
}

/* Conditions the audit of the runbook found wrong, each on its own world. */
static void test_condition_audit(void **state)
{
	const struct pws_row drifted = {
	    .target = 3,
	    .members = {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
	    .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};
	const struct pws_row growing = {.target = 5,
					.members = {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
					.etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};
	const struct pws_row empty = {.target = 3, .members = {{NULL}}, .etcd = {{NULL}}};
	struct pws_world w;
	struct eo_plan_result res;
	json_t *st = NULL;

	(void)state;
	/* A spec edit while a member is down and no target is in flight is latched at once. */
	pws_world_init(&w, &drifted);
	st = json_object_get(w.cluster, "status");
	json_object_del(st, "progressDeadline");
	json_object_set_new(json_object_get(w.cluster, "spec"), "replicas", json_integer(5));
	pwst_plan(&w.in, &res, EO_PLAN_WRITE_STATUS);
	assert_int_equal(json_integer_value(
			     json_object_get(json_object_get(res.status, "observed"), "replicas")),
			 5);
	assert_non_null(json_object_get(res.status, "progressDeadline"));
	pws_want_cond(res.status, EO_COND_PROGRESSING, "True", EO_REASON_SPEC_CHANGED, NULL);
	pws_want_cond(res.status, EO_COND_DEGRADED, "True", EO_REASON_MEMBERS_UNHEALTHY, "demo-b");
	pws_done(&w, &res);

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
	pws_done(&w, &res);

	/* etcd does not answer though every Pod is ready: Degraded says so. */
	pws_world_init(&w, &growing);
	w.in.etcd_err = EO_ETCD_UNAVAILABLE;
	w.in.etcd = NULL;
	pwst_plan(&w.in, &res, EO_PLAN_WAIT);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "True", EO_REASON_QUORUM_HEALTHY, NULL);
	pws_want_cond(res.status, EO_COND_DEGRADED, "True", EO_REASON_CLUSTER_UNREACHABLE,
		      "cannot list etcd's members");
	pws_done(&w, &res);

	/* Every EtcdMember deleted by hand: the data is gone, say so and stop. */
	pws_world_init(&w, &empty);
	pwst_plan(&w.in, &res, EO_PLAN_NONE);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST,
		      "no member of etcd cluster 248adce0359142ba is left");
	pws_done(&w, &res);
}

/* --- rolling updates through eo_plan_cluster (plan/roll.h has the step table) --- */

TU_MAIN(test_membership_table, test_condition_audit)
