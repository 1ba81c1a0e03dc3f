/*
 * Unit tests for plan/roll.c: etcd's version rules and the roll's next step, as tables, and the
 * rolling update through eo_plan_cluster on a running cluster (support/planworld_scale.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "plan/roll.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/names.h"
#include "desired/desired.h"
#include "plan/forcenew.h"
#include "plan/plan.h"
#include "support/planworld_scale.h"
#include "support/planworld_scale_rows.h"
#include "support/testutil.h"
#include "plan/internal.h"
#include "support/planworld_step.h"
#include "support/tu_main.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

struct vrow {
	const char *what;
	const char *from[4];
	const char *to;
	bool allowed;
	const char *why_has; /* a word the refusal names, NULL when allowed */
};

static void test_version_rules(void **state)
{
	static const char *const names[] = {"m-0", "m-1", "m-2", "m-3"};
	static const struct vrow rows[] = {
	    {"same version", {"3.6.11"}, "3.6.11", true, NULL},
	    {"patch upgrade", {"3.6.11", "3.6.11", "3.6.11"}, "3.6.16", true, NULL},
	    {"patch downgrade", {"3.6.16"}, "3.6.11", true, NULL},
	    {"one minor up", {"3.5.35", "3.5.35", "3.5.35"}, "3.6.16", true, NULL},
	    {"one minor up from an older patch", {"3.5.0"}, "3.6.0", true, NULL},
	    {"skipped minor", {"3.4.30", "3.4.30"}, "3.6.11", false, "one minor version"},
	    {"minor downgrade", {"3.6.11", "3.6.11", "3.6.11"}, "3.5.35", false, "downgrading"},
	    {"two minors down", {"3.6.11"}, "3.4.30", false, "downgrading"},
	    {"major change", {"3.6.11"}, "4.0.0", false, "major"},
	    {"half-rolled 3.5->3.6 may go back to 3.5",
	     {"3.5.35", "3.6.16", "3.6.16"},
	     "3.5.35",
	     true,
	     NULL},
	    {"half-rolled 3.5->3.6 may go on to 3.6", {"3.5.35", "3.6.16"}, "3.6.11", true, NULL},
	    {"half-rolled 3.5->3.6 may not jump to 3.7",
	     {"3.5.35", "3.6.16"},
	     "3.7.0",
	     false,
	     "skips"},
	    {"3.6 to 3.7 from the guide's floor",
	     {"3.6.11", "3.6.11", "3.6.11"},
	     "3.7.3",
	     true,
	     NULL},
	    {"3.6 to 3.7 from the newest 3.6", {"3.6.16"}, "3.7.0", true, NULL},
	    {"3.6 to 3.7 from a patch the guide refuses",
	     {"3.6.16", "3.6.10", "3.6.16"},
	     "3.7.3",
	     false,
	     "m-1 runs 3.6.10"},
	    {"3.6.0 to 3.7 names the floor", {"3.6.0"}, "3.7.3", false, "3.6.11 or later"},
	    {"a patch roll below the floor stays free", {"3.6.5"}, "3.6.10", true, NULL},
	    {"half-rolled 3.6->3.7 may go on to 3.7", {"3.6.16", "3.7.3"}, "3.7.3", true, NULL},
	    {"half-rolled 3.6->3.7 may go back to 3.6", {"3.6.16", "3.7.3"}, "3.6.16", true, NULL},
	    {"3.7 patch upgrade and downgrade", {"3.7.3", "3.7.3"}, "3.7.1", true, NULL},
	    {"3.7 to 3.6 is a minor downgrade",
	     {"3.7.3", "3.7.3", "3.7.3"},
	     "3.6.16",
	     false,
	     "downgrading"},
	    {"3.6 to 3.8 skips 3.7", {"3.6.16"}, "3.8.0", false, "skips 3.7"},
	    {"nothing runs yet", {NULL}, "3.6.11", true, NULL},
	    {"unparsable target", {"3.6.11"}, "latest", false, "not an etcd release"},
	    {"unparsable member version", {"v3.6.11"}, "3.6.11", false, "not a release"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct vrow *r = &rows[i];
		size_t n = 0;
		char why[256];
		bool got;

		while (n < 4 && r->from[n] != NULL)
			n++;
		got = eo_plan_version_change_allowed(r->from, names, n, r->to, why, sizeof(why));
		if (got != r->allowed)
			fail_msg("%s: allowed %d, want %d (%s)", r->what, got, r->allowed, why);
		if (r->why_has != NULL && strstr(why, r->why_has) == NULL)
			fail_msg("%s: refusal \"%s\" does not say \"%s\"", r->what, why,
				 r->why_has);
		if (r->allowed && why[0] != '\0')
			fail_msg("%s: allowed but says \"%s\"", r->what, why);
	}
}

/*
 * Member flags in a row: T on target, P Pod present, C Pod current, R ready, M memory, X no
 * status from etcd.
 */
struct mrow {
	const char *name;
	uint64_t id;
	const char *flags;
	uint64_t applied;
};

struct drow {
	const char *what;
	struct mrow m[5];
	bool unsettled;
	enum eo_roll_pdb pdb; /* ALLOWS unless said */
	bool want_refused;
	uint64_t leader, leader_index;
	enum eo_roll_step want;
	const char *want_member; /* the member acted on (or waited for), NULL: none */
	const char *want_to;	 /* MOVE_LEADER: the transferee */
	size_t want_updated;
	const char *why_has;
};

#define OLD  "PR"    /* spec off target, old Pod, ready */
#define NEW  "TPCR"  /* on target, current Pod, ready */
#define HALF "TPR"   /* spec updated, old Pod still running */
#define DOWN "TP"    /* on target, new Pod, not ready yet */
#define GONE "T"     /* on target, Pod deleted, not recreated yet */
#define MOLD "PRM"   /* memory member, old */
#define MNEW "TPCRM" /* memory member, current */

static bool has(const char *flags, char f)
{
	return strchr(flags, f) != NULL;
}

static void test_roll_decisions(void **state)
{
	static const struct drow rows[] = {
	    {"every member on target: done",
	     {{"a", 1, NEW, 100}, {"b", 2, NEW, 100}, {"c", 3, NEW, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_DONE,
	     .want_updated = 3},
	    {"followers first, by name: b before c, the leader a last",
	     {{"a", 1, OLD, 100}, {"c", 3, OLD, 100}, {"b", 2, OLD, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_UPDATE_SPEC,
	     .want_member = "b",
	     .why_has = "target spec"},
	    {"a half-rolled follower is finished first",
	     {{"a", 1, OLD, 100}, {"b", 2, OLD, 100}, {"c", 3, HALF, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_RESTART,
	     .want_member = "c",
	     .why_has = "restarting member c"},
	    {"never a second member down: waits for the restarted one",
	     {{"a", 1, OLD, 100}, {"b", 2, DOWN "X", 0}, {"c", 3, OLD, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_WAIT,
	     .want_member = "b",
	     .why_has = "member b to become ready"},
	    {"a deleted Pod not recreated yet: waits",
	     {{"a", 1, NEW, 100}, {"b", 2, GONE "X", 0}, {"c", 3, OLD, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_WAIT,
	     .want_member = "b",
	     .want_updated = 1},
	    {"another member down (not rolled): waits, quorum is not risked",
	     {{"a", 1, OLD, 100}, {"b", 2, "P", 100}, {"c", 3, OLD, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_WAIT,
	     .why_has = "member b"},
	    {"a member behind the leader: waits for it to catch up",
	     {{"a", 1, OLD, 5000}, {"b", 2, NEW, 4800}, {"c", 3, OLD, 5000}},
	     .leader = 1,
	     .leader_index = 5000,
	     .want = EO_ROLL_WAIT,
	     .want_updated = 1,
	     .why_has = "catch up"},
	    {"within the lag allowance: goes on",
	     {{"a", 1, OLD, 5000}, {"b", 2, NEW, 4950}, {"c", 3, OLD, 5000}},
	     .leader = 1,
	     .leader_index = 5000,
	     .want = EO_ROLL_UPDATE_SPEC,
	     .want_member = "c",
	     .want_updated = 1},
	    {"a member without a status: waits",
	     {{"a", 1, OLD, 100}, {"b", 2, OLD "X", 0}, {"c", 3, OLD, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_WAIT,
	     .why_has = "did not answer"},
	    {"no leader known: waits",
	     {{"a", 1, OLD, 100}, {"b", 2, OLD, 100}, {"c", 3, OLD, 100}},
	     .leader = 0,
	     .want = EO_ROLL_WAIT,
	     .why_has = "leader"},
	    {"membership change in flight: waits",
	     {{"a", 1, OLD, 100}, {"b", 2, OLD, 100}},
	     .unsettled = true,
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_WAIT,
	     .why_has = "membership"},
	    {"only the leader left: leadership moves to an updated follower first",
	     {{"a", 1, OLD, 100}, {"c", 3, NEW, 100}, {"b", 2, NEW, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_MOVE_LEADER,
	     .want_member = "a",
	     .want_to = "b",
	     .want_updated = 2,
	     .why_has = "moving leadership"},
	    {"leadership moved: the old leader, now a follower, is rolled",
	     {{"a", 1, OLD, 100}, {"c", 3, NEW, 100}, {"b", 2, NEW, 100}},
	     .leader = 2,
	     .leader_index = 100,
	     .want = EO_ROLL_UPDATE_SPEC,
	     .want_member = "a",
	     .want_updated = 2},
	    {"the leader's spec was updated before a crash: still moved first",
	     {{"a", 1, HALF, 100}, {"b", 2, NEW, 100}, {"c", 3, NEW, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_MOVE_LEADER,
	     .want_member = "a",
	     .want_to = "b",
	     .want_updated = 2},
	    {"operator upgrade (on target, old Pods): followers restarted first",
	     {{"a", 1, HALF, 100}, {"b", 2, HALF, 100}, {"c", 3, HALF, 100}},
	     .leader = 2,
	     .leader_index = 100,
	     .want = EO_ROLL_RESTART,
	     .want_member = "a"},
	    {"one member: restarted in place, no one to move leadership to",
	     {{"a", 1, OLD, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_UPDATE_SPEC,
	     .want_member = "a"},
	    {"memory member: replaced, not restarted",
	     {{"a", 1, MOLD, 100}, {"b", 2, MOLD, 100}, {"c", 3, MNEW, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_REPLACE,
	     .want_member = "b",
	     .want_updated = 1,
	     .why_has = "replacing memory member b"},
	    {"the PDB allows no disruption: a restart waits",
	     {{"a", 1, OLD, 100}, {"b", 2, NEW, 100}, {"c", 3, HALF, 100}},
	     .pdb = EO_ROLL_PDB_BLOCKS,
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_WAIT,
	     .want_member = "c",
	     .want_updated = 1,
	     .why_has = "disruptionsAllowed is 0"},
	    {"the PDB's status lags its spec: a restart waits",
	     {{"a", 1, OLD, 100}, {"b", 2, NEW, 100}, {"c", 3, HALF, 100}},
	     .pdb = EO_ROLL_PDB_STALE,
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_WAIT,
	     .want_updated = 1,
	     .why_has = "older than its spec"},
	    {"no PDB observed: a restart waits",
	     {{"a", 1, OLD, 100}, {"b", 2, NEW, 100}, {"c", 3, HALF, 100}},
	     .pdb = EO_ROLL_PDB_ABSENT,
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_WAIT,
	     .want_updated = 1,
	     .why_has = "no PodDisruptionBudget"},
	    {"the PDB blocks a memory member's replacement too",
	     {{"a", 1, MOLD, 100}, {"b", 2, MOLD, 100}, {"c", 3, MNEW, 100}},
	     .pdb = EO_ROLL_PDB_BLOCKS,
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_WAIT,
	     .want_updated = 1,
	     .why_has = "member b down"},
	    {"a blocking PDB does not stop a spec patch (nothing goes down)",
	     {{"a", 1, OLD, 100}, {"b", 2, OLD, 100}, {"c", 3, OLD, 100}},
	     .pdb = EO_ROLL_PDB_BLOCKS,
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_UPDATE_SPEC,
	     .want_member = "b"},
	    {"a blocking PDB does not stop moving leadership",
	     {{"a", 1, HALF, 100}, {"b", 2, NEW, 100}, {"c", 3, NEW, 100}},
	     .pdb = EO_ROLL_PDB_BLOCKS,
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_MOVE_LEADER,
	     .want_member = "a",
	     .want_to = "b",
	     .want_updated = 2},
	    {"one member: its PDB (minAvailable 1) is not consulted",
	     {{"a", 1, HALF, 100}},
	     .pdb = EO_ROLL_PDB_BLOCKS,
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_RESTART,
	     .want_member = "a"},
	    {"two members: refused, either restart loses quorum",
	     {{"a", 1, OLD, 100}, {"b", 2, OLD, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_WAIT,
	     .want_refused = true,
	     .why_has = "spec.replicas to 3"},
	    {"two members half rolled: still refused, no second restart",
	     {{"a", 1, OLD, 100}, {"b", 2, NEW, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_WAIT,
	     .want_refused = true,
	     .want_updated = 1,
	     .why_has = "2 members"},
	    {"memory leader: leadership moves first",
	     {{"a", 1, MOLD, 100}, {"b", 2, MNEW, 100}, {"c", 3, MNEW, 100}},
	     .leader = 1,
	     .leader_index = 100,
	     .want = EO_ROLL_MOVE_LEADER,
	     .want_member = "a",
	     .want_to = "b",
	     .want_updated = 2},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct drow *r = &rows[i];
		struct eo_roll_member m[5];
		struct eo_roll_input in = {.m = m,
					   .settled = !r->unsettled,
					   .pdb = r->pdb,
					   .leader = r->leader,
					   .leader_index = r->leader_index};
		struct eo_roll_decision d;

		for (; in.n < 5 && r->m[in.n].name != NULL; in.n++) {
			const struct mrow *x = &r->m[in.n];

			m[in.n] = (struct eo_roll_member){
			    .name = x->name,
			    .id = x->id,
			    .on_target = has(x->flags, 'T'),
			    .pod_present = has(x->flags, 'P'),
			    .pod_current = has(x->flags, 'C'),
			    .ready = has(x->flags, 'R'),
			    .memory = has(x->flags, 'M'),
			    .has_status = !has(x->flags, 'X'),
			    .applied = x->applied,
			};
		}
		assert_int_equal(eo_plan_roll_decide(&in, &d), 0);
		if (d.step != r->want)
			fail_msg("%s: step %s, want %s (%s)", r->what, eo_roll_step_name(d.step),
				 eo_roll_step_name(r->want), d.why);
		if (r->want_member != NULL &&
		    (d.rolling < 0 || strcmp(m[d.rolling].name, r->want_member) != 0))
			fail_msg("%s: rolling %s, want %s", r->what,
				 d.rolling < 0 ? "(none)" : m[d.rolling].name, r->want_member);
		if (r->want_member != NULL && r->want != EO_ROLL_WAIT &&
		    strcmp(m[d.member].name, r->want_member) != 0)
			fail_msg("%s: member %s, want %s", r->what, m[d.member].name,
				 r->want_member);
		if (r->want_to != NULL && strcmp(m[d.transferee].name, r->want_to) != 0)
			fail_msg("%s: transferee %s, want %s", r->what, m[d.transferee].name,
				 r->want_to);
		if (d.refused != r->want_refused)
			fail_msg("%s: refused %d, want %d", r->what, d.refused, r->want_refused);
		if (d.updated != r->want_updated)
			fail_msg("%s: updated %zu, want %zu", r->what, d.updated, r->want_updated);
		if (r->why_has != NULL && strstr(d.why, r->why_has) == NULL)
			fail_msg("%s: \"%s\" does not say \"%s\"", r->what, d.why, r->why_has);
	}
}

static void test_bad_input(void **state)
{
	struct eo_roll_decision d;
	struct eo_roll_input in = {.n = 2};

	(void)state;
	assert_int_equal(eo_plan_roll_decide(NULL, &d), -1);
	assert_int_equal(eo_plan_roll_decide(&in, &d), -1); /* n without rows */
	in.n = 0;
	assert_int_equal(eo_plan_roll_decide(&in, NULL), -1);
	assert_int_equal(eo_plan_roll_decide(&in, &d), 0);
	assert_int_equal(d.step, EO_ROLL_DONE);
	assert_string_equal(eo_roll_step_name(EO_ROLL_MOVE_LEADER), "move-leader");
	assert_string_equal(eo_roll_step_name((enum eo_roll_step)99), "unknown");
}

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
	pwst_plan(&w.in, &res, EO_PLAN_NONE);
	assert_int_equal(json_integer_value(json_object_get(res.status, "updatedMembers")), 3);
	assert_null(json_object_get(res.status, "rollingMember"));
	eo_plan_result_clear(&res);

	/* spec.version 3.6.16 on a reached target: latched (SpecChanged), nothing else. */
	pws_set_version(w.cluster, "spec", "3.6.16");
	pwst_plan(&w.in, &res, EO_PLAN_WRITE_STATUS);
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
	pwst_plan(&w.in, &res, EO_PLAN_QUERY_MEMBERS);
	assert_true(res.want_status);
	assert_int_equal(res.n_endpoints, 3);
	eo_plan_result_clear(&res);
	w.in.etcd_queried = true;
	w.in.etcd = &w.etcd;

	/* No status answered (no leader known): the roll waits. */
	pwst_plan(&w.in, &res, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "no member knows a leader"));
	eo_plan_result_clear(&res);

	/* demo-a leads: the first follower by name, demo-b, gets the target spec. */
	pws_world_statuses(&w, st, w.ev[0].id);
	pwst_plan(&w.in, &res, EO_PLAN_UPDATE_MEMBER);
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
	pwst_plan(&w.in, &res, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "disruptionsAllowed is 0"));
	eo_plan_result_clear(&res);
	json_object_set_new(json_object_get(w.pdb, "status"), "disruptionsAllowed",
			    json_integer(1));
	json_object_set_new(json_object_get(w.pdb, "metadata"), "generation", json_integer(2));
	json_object_set_new(json_object_get(w.pdb, "status"), "observedGeneration",
			    json_integer(1));
	pwst_plan(&w.in, &res, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "older than its spec"));
	eo_plan_result_clear(&res);
	json_object_set_new(json_object_get(w.pdb, "status"), "observedGeneration",
			    json_integer(2));
	pwst_plan(&w.in, &res, EO_PLAN_RESTART_MEMBER);
	assert_string_equal(eo_member_name(res.member), "demo-b");
	assert_string_equal(res.pod_uid, "pod-uid");
	eo_plan_result_clear(&res);

	/* Its new Pod is not ready yet: nothing else is touched. */
	pws_rebuild_pod(&w, 1, false);
	pwst_plan(&w.in, &res, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "demo-b to become ready"));
	assert_string_equal(json_string_value(json_object_get(res.status, "rollingMember")),
			    "demo-b");
	eo_plan_result_clear(&res);

	/* Ready but behind the leader: still waits. */
	pws_rebuild_pod(&w, 1, true);
	st[1].raft_applied_index = 100;
	pwst_plan(&w.in, &res, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "catch up"));
	assert_int_equal(json_integer_value(json_object_get(res.status, "updatedMembers")), 1);
	eo_plan_result_clear(&res);

	/* Caught up: demo-c next; then only the leader is left: leadership moves to demo-b. */
	st[1].raft_applied_index = 500;
	pwst_plan(&w.in, &res, EO_PLAN_UPDATE_MEMBER);
	assert_string_equal(eo_member_name(res.member), "demo-c");
	eo_plan_result_clear(&res);
	pws_set_version((json_t *)w.pm[2].member, "spec", "3.6.16");
	pws_rebuild_pod(&w, 2, true);
	pwst_plan(&w.in, &res, EO_PLAN_MOVE_LEADER);
	assert_string_equal(eo_member_name(res.member), "demo-a");
	assert_int_equal(res.n_endpoints, 1);
	assert_string_equal(res.endpoints[0], "http://demo-a.demo.default.svc.cluster.local:2379");
	assert_int_equal(res.etcd_id, w.ev[1].id);
	assert_string_equal(res.event_reason, EO_PLAN_REASON_LEADER_MOVED);
	eo_plan_result_clear(&res);

	/* demo-b leads now: demo-a is rolled; once it is back the target is reached. */
	pws_world_statuses(&w, st, w.ev[1].id);
	pwst_plan(&w.in, &res, EO_PLAN_UPDATE_MEMBER);
	assert_string_equal(eo_member_name(res.member), "demo-a");
	eo_plan_result_clear(&res);
	pws_set_version((json_t *)w.pm[0].member, "spec", "3.6.16");
	pws_rebuild_pod(&w, 0, true);
	pwst_plan(&w.in, &res, EO_PLAN_NONE);
	assert_true(res.status_changed);
	assert_null(json_object_get(res.status, "progressDeadline"));
	assert_null(json_object_get(res.status, "rollingMember"));
	assert_int_equal(json_integer_value(json_object_get(res.status, "updatedMembers")), 3);
	pws_want_cond(res.status, EO_COND_PROGRESSING, "False", EO_REASON_RECONCILED, NULL);
	pws_done(&w, &res);
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
		pws_done(&w, &res);
	}
}

/*
 * A steady 3.6.10 cluster asked for 3.7.3: refused (etcd's upgrade guide wants 3.6.11 or later
 * first), naming a member and its version, nothing latched; the newest 3.6 is latched instead.
 */
static void test_version_floor_refused(void **state)
{
	struct pws_world w;
	struct eo_plan_result res;
	struct eo_etcd_status st[PWS_MAXM];

	(void)state;
	pws_world_init(&w, &pws_rolled3);
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	pws_set_version(w.cluster, "spec", "3.6.10");
	pws_set_version(json_object_get(w.cluster, "status"), "observed", "3.6.10");
	for (size_t i = 0; i < 3; i++) {
		pws_set_version((json_t *)w.pm[i].member, "spec", "3.6.10");
		pws_rebuild_pod(&w, i, true);
	}
	pws_world_statuses(&w, st, w.ev[0].id);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	eo_plan_result_clear(&res);

	pws_set_version(w.cluster, "spec", "3.7.3");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_NONE);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(res.status, "observed"), "version")),
	    "3.6.10");
	pws_want_cond(res.status, EO_COND_PROGRESSING, "False", EO_PLAN_REASON_VERSION_REFUSED,
		      "demo-a runs 3.6.10");
	pws_want_cond(res.status, EO_COND_PROGRESSING, "False", EO_PLAN_REASON_VERSION_REFUSED,
		      "3.6.11 or later");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_VERSION_REFUSED);
	eo_plan_result_clear(&res);

	pws_set_version(w.cluster, "spec", "3.6.16");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(res.status, "observed"), "version")),
	    "3.6.16");
	pws_want_cond(res.status, EO_COND_PROGRESSING, "True", EO_REASON_SPEC_CHANGED, NULL);
	eo_plan_result_clear(&res);
	pws_world_free(&w);
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
	pwst_plan(&w.in, &res, EO_PLAN_WRITE_STATUS);
	assert_non_null(json_object_get(res.status, "progressDeadline"));
	pws_want_cond(res.status, EO_COND_PROGRESSING, "True", EO_PLAN_REASON_ROLLING,
		      "3 member(s)");
	json_object_set_new(w.cluster, "status", json_incref(res.status));
	eo_plan_result_clear(&res);
	pwst_plan(&w.in, &res, EO_PLAN_RESTART_MEMBER);
	assert_string_equal(eo_member_name(res.member), "demo-b");
	pws_want_cond(res.status, EO_COND_PROGRESSING, "True", EO_PLAN_REASON_ROLLING,
		      "restarting");
	pws_done(&w, &res);
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
	pwst_plan(&w.in, &res, EO_PLAN_WRITE_STATUS);
	assert_string_equal(json_string_value(json_object_get(res.status, "caBundleDigest")), CA2);
	assert_non_null(json_object_get(res.status, "progressDeadline"));
	pws_want_cond(res.status, EO_COND_PROGRESSING, "True", EO_PLAN_REASON_ROLLING,
		      "the CA bundle of the TLS Secrets changed");
	json_object_set_new(w.cluster, "status", json_incref(res.status));
	eo_plan_result_clear(&res);

	/* A follower first. */
	pwst_plan(&w.in, &res, EO_PLAN_RESTART_MEMBER);
	assert_string_equal(eo_member_name(res.member), "demo-b");
	json_object_set_new(w.cluster, "status", json_incref(res.status));
	eo_plan_result_clear(&res);

	/* Its new Pod (new digest) is not ready yet: nothing else is touched. */
	pws_tls_member(&w, 1, CA2, false);
	pwst_plan(&w.in, &res, EO_PLAN_WAIT);
	assert_string_equal(json_string_value(json_object_get(res.status, "rollingMember")),
			    "demo-b");
	json_object_set_new(w.cluster, "status", json_incref(res.status));
	eo_plan_result_clear(&res);

	/* Ready: the next follower; demo-b is not restarted again. */
	pws_tls_member(&w, 1, CA2, true);
	pwst_plan(&w.in, &res, EO_PLAN_RESTART_MEMBER);
	assert_string_equal(eo_member_name(res.member), "demo-c");
	json_object_set_new(w.cluster, "status", json_incref(res.status));
	eo_plan_result_clear(&res);

	/* The leader last, after moving leadership away. */
	pws_tls_member(&w, 2, CA2, true);
	pwst_plan(&w.in, &res, EO_PLAN_MOVE_LEADER);
	json_object_set_new(w.cluster, "status", json_incref(res.status));
	eo_plan_result_clear(&res);
	pws_tls_member(&w, 0, CA2, true);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_true(res.action == EO_PLAN_NONE || res.action == EO_PLAN_WAIT ||
		    res.action == EO_PLAN_WRITE_STATUS);
	assert_null(json_object_get(res.status, "rollingMember"));
	pws_done(&w, &res);

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
	pws_done(&w, &res);
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
		pws_done(&w, &res);
	}
	json_decref(storage);
}

struct roll_row {
	struct pws_row w;    /* the world; the action and member wanted */
	const char *version; /* status.observed.version, NULL: as the members' */
	int leader;	     /* index of the member etcd says leads, -1: no status */
	bool held;	     /* past the deadline */
	bool decided;	     /* the step's return */
	const char *message; /* a part of out.message, NULL: not checked */
};

/* The observed version and etcd's statuses (from the leader named) of a roll row. */
static void roll_prepare(struct pws_world *w, const void *row)
{
	static struct eo_etcd_status st[PWS_MAXM];
	const struct roll_row *r = row;

	if (r->version != NULL)
		pws_set_version(json_object_get(w->cluster, "status"), "observed", r->version);
	if (r->leader >= 0)
		pws_world_statuses(w, st, w->ev[r->leader].id);
}

static bool roll(struct eo__plan_ctx *x, struct eo__plan_counts *c, const void *row)
{
	const struct roll_row *r = row;

	x->held = r->held;
	return eo__plan_step_roll(x, c, r->w.target, pwst_learners(x->in), pwst_pending(x->in));
}

/*
 * The step itself (eo__plan_step_roll), called directly on a running cluster of three
 * (support/planworld_scale.h) whose target (status.observed.version) may be a new version:
 * nothing to roll on target; else it waits for a leader, and updates the followers first by
 * name; never while held past the deadline or before the membership is settled.
 */
static void test_roll_step(void **state)
{
	static const struct roll_row rows[] = {
	    {{"every member on target: nothing to roll",
	      3,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     NULL,
	     0,
	     false,
	     false,
	     NULL},
	    {{"a new version, no leader known: wait",
	      3,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_WAIT,
	      NULL,
	      0},
	     "3.6.16",
	     -1,
	     false,
	     true,
	     "no member knows a leader"},
	    {{"a new version, demo-a leads: the first follower by name",
	      3,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_UPDATE_MEMBER,
	      "demo-b",
	      0},
	     "3.6.16",
	     0,
	     false,
	     true,
	     NULL},
	    {{"a new version, demo-b leads: demo-a first",
	      3,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_UPDATE_MEMBER,
	      "demo-a",
	      0},
	     "3.6.16",
	     1,
	     false,
	     true,
	     NULL},
	    {{"held past the deadline: no roll",
	      3,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     "3.6.16",
	     0,
	     true,
	     false,
	     NULL},
	    {{"a learner joins: the membership goes first",
	      3,
	      {V("demo-a", A), V("demo-b", B), L("demo-c", C, 2)},
	      {EV("demo-a"), EV("demo-b"), EL("demo-c", 0xc)},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     "3.6.16",
	     0,
	     false,
	     false,
	     NULL},
	    {{"a voter missing: the membership goes first",
	      3,
	      {V("demo-a", A), V("demo-b", B)},
	      {EV("demo-a"), EV("demo-b")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     "3.6.16",
	     0,
	     false,
	     false,
	     NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		pwst_run(&rows[i].w, roll_prepare, roll, &rows[i],
			 (struct pwst_want){rows[i].decided, rows[i].w.want, rows[i].w.want_member,
					    0, rows[i].message});
}

TU_MAIN(test_version_rules, test_roll_decisions, test_bad_input, test_rolling_update,
	test_version_change_refused, test_version_floor_refused, test_pod_drift_rolls,
	test_ca_bundle_rolls, test_memory_roll_evicts, test_roll_step)
