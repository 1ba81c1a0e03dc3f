/*
 * Unit tests for plan/forcenew.c: the quorum-loss recovery's next step, as a table, and the
 * recovery through eo_plan_cluster on a running cluster (support/planworld_scale.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "plan/forcenew.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/names.h"
#include "desired/desired.h"
#include "plan/plan.h"
#include "plan/roll.h"
#include "support/planworld_scale.h"
#include "support/planworld_scale_rows.h"
#include "support/testutil.h"
#include "plan/internal.h"
#include "support/planworld_step.h"
#include "support/tu_main.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

/*
 * Member flags: V voter, L lost its data, M memory, J still joining (pending), Z dormant,
 * D being deleted, P Pod present, R Pod ready, F Pod runs with --force-new-cluster; its etcd's
 * Status: A answered, X with another cluster ID, E naming a leader.
 */
struct mrow {
	const char *name;
	const char *flags;
	const char *step; /* force-new-cluster step annotation, NULL: none */
};

struct row {
	const char *what;
	const char *request;
	struct mrow m[5];
	bool unchecked;	      /* the live reads and Status answers were not made (default: made) */
	uint64_t fresh[5][2]; /* each member's answer: raftTerm, raftIndex */
	bool whole;
	bool queried, etcd_ok;
	size_t etcd_n;
	bool listed;
	bool foreign_list; /* the survivor's member list carries another cluster ID */
	enum eo_fnc_step want;
	const char *want_member; /* NULL: not checked */
	const char *why_has;
	const char *want_reason; /* REFUSE: NULL means ForceNewClusterRefused */
	bool want_unmark;
};

#define UP    "VPR"    /* a voter with its data and a ready Pod */
#define DOWN  "VP"     /* a voter with its data, Pod not ready (no quorum) */
#define GONE  "VL"     /* a voter whose PVC and Pod are gone */
#define FUP   "VPRF"   /* the survivor's Pod, ready, with the flag */
#define DOWNA DOWN "A" /* ... its etcd answers Status, no leader */
/* b and c lost their PVCs and Pods: the usual loss of quorum around the survivor a */
/* clang-format off */
#define BC_GONE {"b", GONE, NULL}, {"c", GONE, NULL}
/* clang-format on */

static bool has(const char *flags, char f)
{
	return strchr(flags, f) != NULL;
}

static void test_decisions(void **state)
{
	static const struct row rows[] = {
	    /* No request. */
	    {"no request, nothing left behind: none",
	     NULL,
	     {{"a", UP, NULL}, {"b", UP, NULL}, {"c", UP, NULL}},
	     .want = EO_FNC_NONE},
	    {"empty request reads as none", "", {{"a", DOWN, NULL}, BC_GONE}, .want = EO_FNC_NONE},
	    {"request removed after the recovery: the survivor's mark goes",
	     NULL,
	     {{"a", UP, EO_FNC_STEP_FORCED}, {"b", UP, NULL}, {"c", UP, NULL}},
	     .want = EO_FNC_UNMARK,
	     .want_member = "a"},
	    {"request removed while forcing: the mark goes first",
	     NULL,
	     {{"a", FUP, EO_FNC_STEP_FORCING}, BC_GONE},
	     .want = EO_FNC_UNMARK,
	     .want_member = "a"},
	    {"request removed while forcing: then the flag's Pod is restarted",
	     NULL,
	     {{"a", FUP, NULL}, BC_GONE},
	     .want = EO_FNC_RESTART,
	     .want_member = "a",
	     .why_has = "without the flag"},
	    /* Refusals: nothing changes. */
	    {"member unknown: refused",
	     "zz",
	     {{"a", DOWN, NULL}, BC_GONE},
	     .want = EO_FNC_REFUSE,
	     .why_has = "not a member"},
	    {"member being deleted counts as unknown",
	     "a",
	     {{"a", DOWN "D", NULL}, BC_GONE},
	     .want = EO_FNC_REFUSE,
	     .why_has = "not a member"},
	    {"quorum present (all up): refused",
	     "a",
	     {{"a", UP, NULL}, {"b", UP, NULL}, {"c", UP, NULL}},
	     .want = EO_FNC_REFUSE,
	     .want_member = "a",
	     .why_has = "0 of 3"},
	    {"one of three lost: the other two hold quorum, refused",
	     "a",
	     {{"a", UP, NULL}, {"b", UP, NULL}, {"c", GONE, NULL}},
	     .want = EO_FNC_REFUSE,
	     .why_has = "1 of 3"},
	    {"all down but no data lost: the Pods may come back, refused",
	     "a",
	     {{"a", DOWN, NULL}, {"b", "V", NULL}, {"c", "V", NULL}},
	     .want = EO_FNC_REFUSE,
	     .why_has = "bring the quorum back"},
	    {"two of five lost: three keep quorum, refused",
	     "a",
	     {{"a", UP, NULL},
	      {"b", UP, NULL},
	      {"c", UP, NULL},
	      {"d", GONE, NULL},
	      {"e", GONE, NULL}},
	     .want = EO_FNC_REFUSE,
	     .why_has = "2 of 5"},
	    {"the named member lost its data too: refused",
	     "b",
	     {{"a", DOWN, NULL}, BC_GONE},
	     .want = EO_FNC_REFUSE,
	     .why_has = "no data"},
	    {"a memory member has nothing to start from: refused",
	     "a",
	     {{"a", DOWN "M", NULL}, {"b", GONE "M", NULL}, {"c", GONE "M", NULL}},
	     .want = EO_FNC_REFUSE,
	     .why_has = "memory"},
	    {"a learner (not a voter): refused",
	     "d",
	     {{"a", DOWN, NULL}, BC_GONE, {"d", "PR", NULL}},
	     .want = EO_FNC_REFUSE,
	     .why_has = "not a voter"},
	    {"a dormant member: refused",
	     "a",
	     {{"a", "VZ", NULL}, BC_GONE},
	     .want = EO_FNC_REFUSE,
	     .why_has = "dormant"},
	    {"another member's recovery under way: refused",
	     "c",
	     {{"a", FUP, EO_FNC_STEP_FORCING}, {"b", GONE, NULL}, {"c", DOWN, NULL}},
	     .want = EO_FNC_REFUSE,
	     .why_has = "member a is under way"},
	    {"an unknown step value: refused, not guessed",
	     "a",
	     {{"a", UP, "later"}, BC_GONE},
	     .want = EO_FNC_REFUSE,
	     .why_has = "unknown"},
	    /* The recovery. */
	    {"two of three lost, the survivor has its data: mark it",
	     "a",
	     {{"a", DOWN, NULL}, BC_GONE},
	     .want = EO_FNC_MARK,
	     .want_member = "a",
	     .why_has = "--force-new-cluster"},
	    {"the survivor's Pod is gone too (PVC kept): mark it still",
	     "a",
	     {{"a", "V", NULL}, BC_GONE},
	     .want = EO_FNC_MARK,
	     .want_member = "a"},
	    {"three of five lost: mark",
	     "e",
	     {{"a", GONE, NULL}, BC_GONE, {"d", DOWN, NULL}, {"e", DOWN, NULL}},
	     .want = EO_FNC_MARK,
	     .want_member = "e"},
	    {"marked, old Pod without the flag: restart it",
	     "a",
	     {{"a", DOWN, EO_FNC_STEP_FORCING}, BC_GONE},
	     .want = EO_FNC_RESTART,
	     .want_member = "a"},
	    {"marked, Pod deleted, not back yet: wait",
	     "a",
	     {{"a", "V", EO_FNC_STEP_FORCING}, BC_GONE},
	     .want = EO_FNC_WAIT,
	     .want_member = "a"},
	    {"marked, Pod with the flag starting: wait",
	     "a",
	     {{"a", "VPF", EO_FNC_STEP_FORCING}, BC_GONE},
	     .want = EO_FNC_WAIT,
	     .why_has = "to start"},
	    {"marked, Pod with the flag ready: ask etcd",
	     "a",
	     {{"a", FUP, EO_FNC_STEP_FORCING}, BC_GONE},
	     .want = EO_FNC_QUERY,
	     .want_member = "a"},
	    {"etcd unreadable: wait",
	     "a",
	     {{"a", FUP, EO_FNC_STEP_FORCING}, BC_GONE},
	     .queried = true,
	     .want = EO_FNC_WAIT,
	     .why_has = "could not be read"},
	    {"etcd still lists three: wait, not forced yet",
	     "a",
	     {{"a", FUP, EO_FNC_STEP_FORCING}, BC_GONE},
	     .queried = true,
	     .etcd_ok = true,
	     .etcd_n = 3,
	     .listed = true,
	     .want = EO_FNC_WAIT,
	     .why_has = "still lists 3"},
	    {"etcd lists one member that is not the survivor: wait",
	     "a",
	     {{"a", FUP, EO_FNC_STEP_FORCING}, BC_GONE},
	     .queried = true,
	     .etcd_ok = true,
	     .etcd_n = 1,
	     .want = EO_FNC_WAIT},
	    {"etcd lists the survivor alone: forced",
	     "a",
	     {{"a", FUP, EO_FNC_STEP_FORCING}, BC_GONE},
	     .queried = true,
	     .etcd_ok = true,
	     .etcd_n = 1,
	     .listed = true,
	     .want = EO_FNC_MARK_FORCED,
	     .want_member = "a"},
	    {"forced, Pod still has the flag: restart it without",
	     "a",
	     {{"a", FUP, EO_FNC_STEP_FORCED}, BC_GONE},
	     .want = EO_FNC_RESTART,
	     .want_member = "a",
	     .why_has = "without --force-new-cluster"},
	    {"forced, Pod restarting: wait",
	     "a",
	     {{"a", "VP", EO_FNC_STEP_FORCED}, BC_GONE},
	     .want = EO_FNC_WAIT,
	     .why_has = "ready again"},
	    {"forced, flag gone, survivor ready: the usual steps re-add the others",
	     "a",
	     {{"a", UP, EO_FNC_STEP_FORCED}, BC_GONE},
	     .want = EO_FNC_PROCEED,
	     .want_member = "a"},
	    {"forced, quorum 'present' again (lost ones gone): still proceeds, not refused",
	     "a",
	     {{"a", UP, EO_FNC_STEP_FORCED}, {"x", "PR", NULL}},
	     .want = EO_FNC_PROCEED},
	    {"forced and whole again: finish",
	     "a",
	     {{"a", UP, EO_FNC_STEP_FORCED}, {"x", UP, NULL}, {"y", UP, NULL}},
	     .whole = true,
	     .want = EO_FNC_FINISH,
	     .want_member = "a",
	     .why_has = "removing the force-new-cluster annotation"},
	    /* Acting on the truth: live reads and etcd's answers first (issue 17 item 4). */
	    {"cache says two lost, not checked yet: check first, no mark",
	     "a",
	     {{"a", UP, NULL}, BC_GONE},
	     .unchecked = true,
	     .want = EO_FNC_CHECK,
	     .want_member = "a",
	     .why_has = "from the apiserver"},
	    {"checked: the 'lost' members' PVCs exist (labels removed): refused",
	     "a",
	     {{"a", UP "A", NULL}, {"b", UP "AE", NULL}, {"c", UP "AE", NULL}},
	     .want = EO_FNC_REFUSE,
	     .why_has = "0 of 3"},
	    {"a lost member answers Status: refused naming it",
	     "a",
	     {{"a", DOWNA, NULL}, {"b", GONE "PA", NULL}, {"c", GONE, NULL}},
	     .fresh = {{3, 50}, {3, 50}, {0, 0}},
	     .want = EO_FNC_REFUSE,
	     .want_reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_LOST_ANSWERS,
	     .why_has = "member b counts as lost"},
	    {"another member answers with a leader: refused",
	     "a",
	     {{"a", DOWNA, NULL}, BC_GONE, {"d", GONE, NULL}, {"e", DOWN "AE", NULL}},
	     .fresh = {{3, 50}, {0, 0}, {0, 0}, {0, 0}, {3, 40}},
	     .want = EO_FNC_REFUSE,
	     .want_reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_LEADER,
	     .why_has = "member e answers with leader"},
	    {"the survivor itself answers with a leader: refused",
	     "a",
	     {{"a", DOWN "AE", NULL}, BC_GONE},
	     .fresh = {{3, 50}, {0, 0}, {0, 0}},
	     .want = EO_FNC_REFUSE,
	     .want_reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_LEADER,
	     .why_has = "member a answers with leader"},
	    {"a foreign cluster answers at a member's address: refused",
	     "a",
	     {{"a", DOWNA, NULL}, {"b", GONE, NULL}, {"c", GONE "AX", NULL}},
	     .fresh = {{3, 50}, {0, 0}, {0, 0}},
	     .want = EO_FNC_REFUSE,
	     .want_reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_FOREIGN,
	     .why_has = "member c's address is answered by etcd cluster"},
	    {"the survivor's own answer is foreign: refused",
	     "a",
	     {{"a", DOWN "AX", NULL}, BC_GONE},
	     .fresh = {{3, 50}, {0, 0}, {0, 0}},
	     .want = EO_FNC_REFUSE,
	     .want_reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_FOREIGN},
	    {"survivor not the freshest (index): refused naming the freshest",
	     "a",
	     {{"a", DOWNA, NULL}, BC_GONE, {"d", DOWNA, NULL}, {"e", GONE, NULL}},
	     .fresh = {{7, 100}, {0, 0}, {0, 0}, {7, 130}, {0, 0}},
	     .want = EO_FNC_REFUSE,
	     .want_reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_NOT_FRESHEST,
	     .why_has = "member d holds newer writes (raft term 7, index 130)"},
	    {"survivor not the freshest (term beats index): refused",
	     "a",
	     {{"a", DOWNA, NULL}, BC_GONE, {"d", DOWNA, NULL}, {"e", GONE, NULL}},
	     .fresh = {{6, 200}, {0, 0}, {0, 0}, {7, 150}, {0, 0}},
	     .want = EO_FNC_REFUSE,
	     .want_reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_NOT_FRESHEST,
	     .why_has = "name d"},
	    {"survivor silent while another member with data answers: refused",
	     "a",
	     {{"a", DOWN, NULL}, BC_GONE, {"d", DOWNA, NULL}, {"e", GONE, NULL}},
	     .fresh = {{0, 0}, {0, 0}, {0, 0}, {7, 150}, {0, 0}},
	     .want = EO_FNC_REFUSE,
	     .want_reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_NOT_FRESHEST,
	     .why_has = "member a does not answer and member d does"},
	    {"the freshest (a tie counts) with no leader anywhere: mark",
	     "e",
	     {{"a", GONE, NULL}, BC_GONE, {"d", DOWNA, NULL}, {"e", DOWNA, NULL}},
	     .fresh = {{0, 0}, {0, 0}, {0, 0}, {7, 150}, {7, 150}},
	     .want = EO_FNC_MARK,
	     .want_member = "e"},
	    {"all checks pass, the survivor answers alone: mark",
	     "a",
	     {{"a", DOWNA, NULL}, BC_GONE},
	     .fresh = {{3, 50}, {0, 0}, {0, 0}},
	     .want = EO_FNC_MARK,
	     .want_member = "a"},
	    {"marked, old Pod without the flag, not checked: check before the restart",
	     "a",
	     {{"a", DOWN, EO_FNC_STEP_FORCING}, BC_GONE},
	     .unchecked = true,
	     .want = EO_FNC_CHECK,
	     .want_member = "a"},
	    {"marked, old Pod without the flag, a lost member answers: refused and unmarked",
	     "a",
	     {{"a", DOWNA, EO_FNC_STEP_FORCING}, {"b", GONE "PA", NULL}, {"c", GONE, NULL}},
	     .fresh = {{3, 50}, {0, 0}, {0, 0}},
	     .want = EO_FNC_REFUSE,
	     .want_member = "a",
	     .want_reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_LOST_ANSWERS,
	     .want_unmark = true},
	    {"marked, the Pod with the flag is up: no more checks (it leads itself)",
	     "a",
	     {{"a", FUP "AE", EO_FNC_STEP_FORCING}, BC_GONE},
	     .unchecked = true,
	     .want = EO_FNC_QUERY},
	    {"the survivor's member list carries another cluster ID: wait, not forced",
	     "a",
	     {{"a", FUP, EO_FNC_STEP_FORCING}, BC_GONE},
	     .queried = true,
	     .etcd_ok = true,
	     .etcd_n = 1,
	     .listed = true,
	     .foreign_list = true,
	     .want = EO_FNC_WAIT,
	     .why_has = "another cluster ID"},
	    {"no request: no checks asked for",
	     NULL,
	     {{"a", DOWN, NULL}, BC_GONE},
	     .unchecked = true,
	     .want = EO_FNC_NONE},
	    {"names nobody: refused without checks",
	     "zz",
	     {{"a", DOWN, NULL}, BC_GONE},
	     .unchecked = true,
	     .want = EO_FNC_REFUSE,
	     .why_has = "not a member"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct eo_fnc_member m[5];
		struct eo_fnc_input in = {.request = r->request,
					  .m = m,
					  .checked = !r->unchecked,
					  .whole = r->whole,
					  .etcd_queried = r->queried,
					  .etcd_foreign = r->foreign_list,
					  .etcd_ok = r->etcd_ok,
					  .etcd_n = r->etcd_n,
					  .survivor_listed = r->listed};
		struct eo_fnc_decision d;

		for (; in.n < 5 && r->m[in.n].name != NULL; in.n++) {
			const struct mrow *x = &r->m[in.n];

			m[in.n] = (struct eo_fnc_member){
			    .name = x->name,
			    .voter = has(x->flags, 'V'),
			    .lost = has(x->flags, 'L'),
			    .memory = has(x->flags, 'M'),
			    .pending = has(x->flags, 'J'),
			    .dormant = has(x->flags, 'Z'),
			    .deleting = has(x->flags, 'D'),
			    .pod_present = has(x->flags, 'P'),
			    .pod_ready = has(x->flags, 'R'),
			    .pod_forces = has(x->flags, 'F'),
			    .step = x->step,
			    .answered = has(x->flags, 'A'),
			    .foreign = has(x->flags, 'X'),
			    .cluster_id = has(x->flags, 'X') ? 0xf00dULL : 0,
			    .leader = has(x->flags, 'E') ? 0xbeefULL : 0,
			    .raft_term = r->fresh[in.n][0],
			    .raft_index = r->fresh[in.n][1],
			};
		}
		assert_int_equal(eo_plan_force_new_cluster_decide(&in, &d), 0);
		if (d.step != r->want)
			fail_msg("%s: step %s, want %s (%s)", r->what, eo_fnc_step_name(d.step),
				 eo_fnc_step_name(r->want), d.why);
		if (r->want_member != NULL &&
		    (!d.has_member || strcmp(m[d.member].name, r->want_member) != 0))
			fail_msg("%s: member %s, want %s", r->what,
				 d.has_member ? m[d.member].name : "(none)", r->want_member);
		if (r->why_has != NULL && strstr(d.why, r->why_has) == NULL)
			fail_msg("%s: \"%s\" does not say \"%s\"", r->what, d.why, r->why_has);
		if (d.step != EO_FNC_NONE && d.step != EO_FNC_PROCEED && d.why[0] == '\0')
			fail_msg("%s: no message", r->what);
		if (d.step == EO_FNC_REFUSE &&
		    (d.reason == NULL ||
		     strcmp(d.reason, r->want_reason != NULL
					  ? r->want_reason
					  : EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED) != 0))
			fail_msg("%s: reason %s, want %s", r->what, d.reason ? d.reason : "(none)",
				 r->want_reason ? r->want_reason : "ForceNewClusterRefused");
		if (d.step == EO_FNC_REFUSE && d.unmark != r->want_unmark)
			fail_msg("%s: unmark %d, want %d", r->what, d.unmark, r->want_unmark);
	}
}

static void test_bad_input(void **state)
{
	struct eo_fnc_decision d;
	struct eo_fnc_input in = {.n = 2, .request = "a"};

	(void)state;
	assert_int_equal(eo_plan_force_new_cluster_decide(NULL, &d), -1);
	assert_int_equal(eo_plan_force_new_cluster_decide(&in, &d), -1); /* n without rows */
	in.n = 0;
	assert_int_equal(eo_plan_force_new_cluster_decide(&in, NULL), -1);
	assert_int_equal(eo_plan_force_new_cluster_decide(&in, &d), 0);
	assert_int_equal(d.step, EO_FNC_REFUSE); /* names nobody */
	assert_string_equal(eo_fnc_step_name(EO_FNC_MARK_FORCED), "mark-forced");
	assert_string_equal(eo_fnc_step_name((enum eo_fnc_step)99), "unknown");
}

/* A memory cluster that lost a majority of its voters says so and stops there. */
static void test_memory_quorum_gone(void **state)
{
	const struct pws_row one = {
	    .target = 1, .members = {V("demo-a", A)}, .etcd = {EV("demo-a")}};
	const struct pws_row three = {.target = 3,
				      .members = {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				      .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &one);
	pws_make_memory(&w, 0, true);
	w.in.etcd_queried = false;
	pwst_plan(&w.in, &res, EO_PLAN_NONE);
	assert_int_equal(res.requeue_ms, 0);
	assert_string_equal(res.event_reason, EO_REASON_QUORUM_LOST);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST,
		      "1 of 1 voting member(s) lost their data");
	pws_want_cond(res.status, EO_COND_DEGRADED, "True", EO_REASON_QUORUM_LOST, "demo-a");
	pws_want_cond(res.status, EO_COND_PROGRESSING, "False", EO_REASON_QUORUM_LOST,
		      "delete and recreate");
	assert_int_equal(json_integer_value(json_object_get(res.status, "brokenMembers")), 1);
	pws_done(&w, &res);

	/* Two of three: gone for good. One of three: replaced (test above). */
	pws_world_init(&w, &three);
	for (size_t i = 0; i < 3; i++)
		pws_make_memory(&w, i, i != 0);
	pwst_plan(&w.in, &res, EO_PLAN_NONE);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST,
		      "2 of 3 voting member(s)");
	pws_done(&w, &res);
}

/*
 * Quorum-loss recovery: two of three PVC members lost their volumes. Without the annotation
 * nothing happens (the lost-PVC path cannot act without quorum); a bad annotation is refused
 * once, with an Event; the annotation naming the survivor walks it through
 * --force-new-cluster and back, then the usual steps replace the others.
 */
static void test_force_new_cluster(void **state)
{
	const struct pws_row r = {.target = 3,
				  .members = {VNR("demo-a", A), V("demo-b", B), V("demo-c", C)},
				  .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};
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
	pwst_plan(&w.in, &res, EO_PLAN_NONE);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST,
		      EO_ANNOTATION_FORCE_NEW_CLUSTER "=<member>");
	assert_null(json_object_get(json_object_get(res.status, "conditions"), "x"));
	pws_adopt_status(&w, &res);

	/* A member that does not exist: refused once, with a Warning; then plain QuorumLost. */
	pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-zz");
	pwst_plan(&w.in, &res, EO_PLAN_WRITE_STATUS);
	pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
		      EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED, "not a member");
	assert_string_equal(res.event_type, "Warning");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED);
	pws_adopt_status(&w, &res);
	pwst_plan(&w.in, &res, EO_PLAN_NONE);
	assert_false(res.status_changed);
	eo_plan_result_clear(&res);

	/* A member that lost its data: refused too. */
	pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-b");
	pwst_plan(&w.in, &res, EO_PLAN_WRITE_STATUS);
	pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
		      EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED, "no data");
	pws_adopt_status(&w, &res);

	/* The survivor: marked "forcing"; its Pod would now carry the flag. */
	pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-a");
	pwst_plan(&w.in, &res, EO_PLAN_MARK_MEMBER);
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
	pwst_plan(&w.in, &res, EO_PLAN_RESTART_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-a");
	assert_string_equal(res.pod_uid, "pod-uid");
	pws_adopt_status(&w, &res);

	/* The new Pod carries the flag; not ready yet: wait. */
	pws_pod_from_member(&w, 0, false);
	assert_true(eo_desired_pod_forces_new_cluster(w.pm[0].pod));
	pwst_plan(&w.in, &res, EO_PLAN_WAIT);
	pws_adopt_status(&w, &res);

	/* Ready: etcd's members are listed through the survivor alone. */
	pws_pod_from_member(&w, 0, true);
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	pwst_plan(&w.in, &res, EO_PLAN_QUERY_MEMBERS);
	assert_int_equal(res.n_endpoints, 1);
	assert_non_null(strstr(res.endpoints[0], "demo-a."));
	eo_plan_result_clear(&res);

	/* etcd still lists three: not forced yet. */
	w.in.etcd_queried = true;
	w.in.etcd = &w.etcd;
	pwst_plan(&w.in, &res, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "still lists 3"));
	pws_adopt_status(&w, &res);

	/* The survivor alone: marked "forced". */
	w.etcd.n = 1;
	pwst_plan(&w.in, &res, EO_PLAN_MARK_MEMBER);
	pws_want_patch(res.patch, step, "forced");
	pws_adopt_status(&w, &res);
	pws_annotate((json_t *)w.pm[0].member, step, "forced");
	assert_false(eo_desired_member_forces_new_cluster(w.pm[0].member));

	/* The Pod with the flag goes; the next one has none. */
	pwst_plan(&w.in, &res, EO_PLAN_RESTART_MEMBER);
	assert_string_equal(res.pod_uid, "pod-uid-2");
	pws_adopt_status(&w, &res);
	pws_pod_from_member(&w, 0, true);
	assert_false(eo_desired_pod_forces_new_cluster(w.pm[0].pod));

	/*
	 * The usual steps, the quorum-lost stop lifted: the lost members etcd no longer lists
	 * lose their voter mark, then go (their finalizer finds nothing to remove).
	 */
	pwst_plan(&w.in, &res, EO_PLAN_SET_VOTER);
	assert_string_equal(pws_name_of(res.member), "demo-b");
	assert_false(res.voter);
	pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "True",
		      EO_PLAN_REASON_FORCE_NEW_CLUSTER, "re-adding");
	pws_adopt_status(&w, &res);
	for (size_t i = 1; i < 3; i++)
		json_object_set_new(json_object_get((json_t *)w.pm[i].member, "status"), "isVoter",
				    json_false());
	pwst_plan(&w.in, &res, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-b");
	pws_adopt_status(&w, &res);
	pws_world_free(&w);

	/* Whole again (the survivor and two new members): the annotation is removed. */
	{
		const struct pws_row whole = {
		    .target = 3,
		    .members = {V("demo-a", A), V("demo-x", B), V("demo-y", C)},
		    .etcd = {EV("demo-a"), EV("demo-x"), EV("demo-y")}};

		pws_world_init(&w, &whole);
		json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
		pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-a");
		pws_annotate((json_t *)w.pm[0].member, step, "forced");
		pwst_plan(&w.in, &res, EO_PLAN_CLEAR_FORCE_REQUEST);
		pws_want_patch(res.patch, EO_ANNOTATION_FORCE_NEW_CLUSTER, NULL);
		pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
			      EO_PLAN_REASON_FORCE_NEW_CLUSTER_DONE, "every member is ready");
		pws_want_cond(res.status, EO_COND_AVAILABLE, "True", EO_REASON_QUORUM_HEALTHY,
			      NULL);
		assert_string_equal(res.event_reason, EO_PLAN_REASON_FORCE_NEW_CLUSTER_DONE);
		pws_adopt_status(&w, &res);

		/* No request left: the survivor's mark goes, the Done record stays. */
		pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, NULL);
		pwst_plan(&w.in, &res, EO_PLAN_MARK_MEMBER);
		assert_string_equal(pws_name_of(res.member), "demo-a");
		pws_want_patch(res.patch, step, NULL);
		pws_adopt_status(&w, &res);
		pws_annotate((json_t *)w.pm[0].member, step, NULL);
		pwst_plan(&w.in, &res, EO_PLAN_NONE);
		pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
			      EO_PLAN_REASON_FORCE_NEW_CLUSTER_DONE, NULL);
		eo_plan_result_clear(&res);

		/* A healthy cluster refuses the request (quorum present) and keeps running. */
		pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-a");
		pwst_plan(&w.in, &res, EO_PLAN_WRITE_STATUS);
		pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
			      EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED, "0 of 3");
		pws_adopt_status(&w, &res);
		pwst_plan(&w.in, &res, EO_PLAN_NONE);
		assert_false(res.status_changed);
		eo_plan_result_clear(&res);

		/* Removing the refused request removes its condition. */
		pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, NULL);
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		assert_true(res.status_changed);
		assert_null(eo_condition_find(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER));
		pws_done(&w, &res);
	}
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
	struct pws_world w;
	struct eo_plan_result res;
	json_t *kept[3] = {NULL, NULL, NULL};
	char url[3][EO_DESIRED_URL_MAX];
	const char *from[3];
	struct eo_etcd_status st[3];

	(void)state;
	pws_world_init(&w, &pws_rolled3);
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
	pwst_plan(&w.in, &res, EO_PLAN_QUERY_MEMBERS);
	assert_true(res.want_live);
	assert_true(res.want_status);
	assert_int_equal(res.n_endpoints, 3);
	assert_null(strstr(res.message, EO_ANNOTATION_FORCE_NEW_CLUSTER));
	eo_plan_result_clear(&res);

	/* The request naming a: no mark on the cache alone either. */
	pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-a");
	pwst_plan(&w.in, &res, EO_PLAN_QUERY_MEMBERS);
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
	pwst_plan(&w.in, &res, EO_PLAN_WRITE_STATUS);
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
	pwst_plan(&w.in, &res, EO_PLAN_WRITE_STATUS);
	pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
		      EO_PLAN_REASON_FORCE_NEW_CLUSTER_LOST_ANSWERS,
		      "member demo-b counts as lost");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_FORCE_NEW_CLUSTER_LOST_ANSWERS);
	pws_adopt_status(&w, &res);
	pwst_plan(&w.in, &res, EO_PLAN_NONE);
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
	pwst_plan(&w.in, &res, EO_PLAN_MARK_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-a");
	eo_plan_result_clear(&res);

	/* Marked, old Pod still without the flag, and now a leader shows up: refused, unmarked. */
	pws_annotate((json_t *)w.pm[0].member, EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP, "forcing");
	st[0].leader = 0x8e9e05c52164694dULL;
	pwst_plan(&w.in, &res, EO_PLAN_MARK_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-a");
	pws_want_patch(res.patch, EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP, NULL);
	pws_want_cond(res.status, EO_PLAN_COND_FORCE_NEW_CLUSTER, "False",
		      EO_PLAN_REASON_FORCE_NEW_CLUSTER_LEADER, "member demo-a answers with leader");
	eo_plan_result_clear(&res);
	/* Without a leader it restarts as before. */
	st[0].leader = 0;
	pwst_plan(&w.in, &res, EO_PLAN_RESTART_MEMBER);
	eo_plan_result_clear(&res);
	/* ... but only on the live view: the cache alone asks for the checks first. */
	w.in.live_checked = false;
	w.in.etcd_queried = false;
	pwst_plan(&w.in, &res, EO_PLAN_QUERY_MEMBERS);
	assert_true(res.want_live);
	pws_done(&w, &res);
}

struct fnc_row {
	const char *what;
	bool lost;	     /* demo-b and demo-c lost their data (else all ready) */
	const char *request; /* the annotation's value, NULL: none */
	bool decided;	     /* the step's return */
	enum eo_plan_action action;
	const char *member; /* out.member's name, NULL: none */
	const char *reason; /* reason of the ForceNewCluster condition, NULL: none */
};

static bool fnc_step(struct eo__plan_ctx *x, struct eo__plan_counts *c, const void *row)
{
	bool lift = false;

	(void)row;
	return eo__plan_step_force_new_cluster(x, c, 3, &lift);
}

/* The reason of the ForceNewCluster condition of a force-new-cluster row. */
static void fnc_after(const char *what, const struct eo__plan_ctx *x,
		      const struct eo_plan_result *out, const void *row)
{
	const struct fnc_row *r = row;

	(void)out;
	pwst_check_str(what, "ForceNewCluster",
		       eo_condition_reason(x->st, EO_PLAN_COND_FORCE_NEW_CLUSTER), r->reason);
}

/*
 * The step itself (eo__plan_step_force_new_cluster), called directly on a cluster of three
 * (support/planworld_scale.h) that lost its quorum (demo-a kept its data, its Pod not ready;
 * demo-b and demo-c lost their PVCs and Pods) or that has it: the request
 * (annotation force-new-cluster=<member>) on a member that does not exist, on one without data,
 * on the survivor, and while the quorum holds.
 */
static void test_force_new_cluster_step(void **state)
{
	static const struct fnc_row rows[] = {
	    {"quorum lost, no request: nothing", true, NULL, false, EO_PLAN_NONE, NULL, NULL},
	    {"not a member: refused", true, "demo-zz", true, EO_PLAN_WRITE_STATUS, NULL,
	     EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED},
	    {"a member without data: refused", true, "demo-b", true, EO_PLAN_WRITE_STATUS, NULL,
	     EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED},
	    {"the survivor: marked forcing", true, "demo-a", true, EO_PLAN_MARK_MEMBER, "demo-a",
	     EO_PLAN_REASON_FORCE_NEW_CLUSTER},
	    {"quorum holds, no request: nothing", false, NULL, false, EO_PLAN_NONE, NULL, NULL},
	    {"quorum holds: refused", false, "demo-a", true, EO_PLAN_WRITE_STATUS, NULL,
	     EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED},
	};
	const struct pws_row lost = {.target = 3,
				     .members = {VNR("demo-a", A), V("demo-b", B), V("demo-c", C)},
				     .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pws_world w;

		pws_world_init(&w, rows[i].lost ? &lost : &pws_rolled3);
		json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
		for (size_t k = 0; k < 3; k++)
			pws_make_ran_on_pvc(&w, k, k == 0 || !rows[i].lost ? "pvc-1" : NULL);
		for (size_t k = 1; rows[i].lost && k < 3; k++) {
			json_decref((json_t *)w.pm[k].pod);
			w.pm[k].pod = NULL;
		}
		if (rows[i].request != NULL)
			pws_annotate(w.cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER, rows[i].request);
		pwst_call(
		    rows[i].what, &w.in, true, fnc_step, fnc_after, &rows[i],
		    (struct pwst_want){rows[i].decided, rows[i].action, rows[i].member, 0, NULL});
		pws_world_free(&w);
	}
}

TU_MAIN(test_decisions, test_bad_input, test_force_new_cluster, test_force_new_cluster_live_truth,
	test_memory_quorum_gone, test_force_new_cluster_step)
