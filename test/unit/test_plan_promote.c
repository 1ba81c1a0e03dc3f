/*
 * Unit tests for plan/promote.c, called directly (plan/internal.h) on a small world: the promotion
 * of a learner. The whole-planner rows for promotion stay in test_plan_scale.c
 * (test_membership_table).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/member.h"
#include "plan/internal.h"
#include "support/planworld_scale.h"
#include "support/planworld_scale_rows.h"
#include "support/planworld_step.h"
#include "support/tu_main.h"

/*
 * The step itself (eo__plan_step_promote), called directly on a running cluster
 * (support/planworld_scale.h): a learner is promoted once it serves (its Pod ready and its
 * member's Ready saying etcd answered); else the pass waits for it; no learner, no decision.
 */
struct promote_row {
	struct pws_row w;    /* the world; the action, member and etcd ID wanted */
	bool decided;	     /* the step's return */
	const char *message; /* a part of out.message, NULL: not checked */
};

static bool promote(struct eo__plan_ctx *x, struct eo__plan_counts *c, const void *row)
{
	(void)c;
	(void)row;
	return eo__plan_step_promote(x, pwst_learners(x->in));
}

static void test_promote_step(void **state)
{
	static const struct promote_row rows[] = {

	    {{"no learner: nothing to promote",
	      2,
	      {V("demo-a", A), V("demo-b", B)},
	      {EV("demo-a"), EV("demo-b")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     false,
	     NULL},
	    {{"a ready learner is promoted",
	      3,
	      {V("demo-a", A), L("demo-b", B, 2)},
	      {EV("demo-a"), EL("demo-b", 0xb)},
	      EO_PLAN_PROMOTE_LEARNER,
	      "demo-b",
	      0xb},
	     true,
	     "promoting learner demo-b"},
	    {{"a learner that answered (DiscoveringMemberID) is promoted",
	      3,
	      {V("demo-a", A), L("demo-b", B, 5)},
	      {EV("demo-a"), EL("demo-b", 0xb)},
	      EO_PLAN_PROMOTE_LEARNER,
	      "demo-b",
	      0xb},
	     true,
	     "promoting learner demo-b"},
	    {{"its Pod not ready: wait",
	      3,
	      {V("demo-a", A), L("demo-b", B, 1)},
	      {EV("demo-a"), EL("demo-b", 0xb)},
	      EO_PLAN_WAIT,
	      NULL,
	      0},
	     true,
	     "waiting for learner demo-b to become ready"},
	    {{"ready but etcd not serving yet: wait",
	      3,
	      {V("demo-a", A), L("demo-b", B, 3)},
	      {EV("demo-a"), EL("demo-b", 0xb)},
	      EO_PLAN_WAIT,
	      NULL,
	      0},
	     true,
	     "waiting for learner demo-b to become ready"},
	    {{"two learners: the ready one",
	      5,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C), L("demo-d", D, 1),
	       L("demo-e", D, 2)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c"), EL("demo-d", 0xd), EL("demo-e", 0xe)},
	      EO_PLAN_PROMOTE_LEARNER,
	      "demo-e",
	      0xe},
	     true,
	     "promoting learner demo-e"},
	    {{"the only learner is being deleted: wait",
	      3,
	      {V("demo-a", A), {"demo-b", B, false, false, 2, true, false}},
	      {EV("demo-a"), EL("demo-b", 0xb)},
	      EO_PLAN_WAIT,
	      NULL,
	      0},
	     true,
	     "waiting for learner (being deleted) to become ready"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct pws_row *r = &rows[i].w;

		pwst_run(r, NULL, promote, &rows[i],
			 (struct pwst_want){rows[i].decided, r->want, r->want_member, r->want_id,
					    rows[i].message});
	}
}

TU_MAIN(test_promote_step)
