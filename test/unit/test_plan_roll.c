/*
 * Unit tests for plan/roll.c: etcd's version rules and the roll's next step, as tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "plan/roll.h"

struct vrow {
	const char *what;
	const char *from[4];
	const char *to;
	bool allowed;
	const char *why_has; /* a word the refusal names, NULL when allowed */
};

static void test_version_rules(void **state)
{
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
		got = eo_plan_version_change_allowed(r->from, n, r->to, why, sizeof(why));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_version_rules),
	    cmocka_unit_test(test_roll_decisions),
	    cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
