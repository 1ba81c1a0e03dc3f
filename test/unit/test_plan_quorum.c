/*
 * Unit tests for plan/quorum.c: the counts a removal that must keep the quorum tells about
 * (eo_plan_removal_keeps_quorum) on a set of members (support/planworld_scale_down.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/names.h"
#include "desired/desired.h"
#include "plan/plan.h"
#include "support/planworld_scale_down.h"
#include "support/tu_main.h"

/* The counts the wait message tells about. */
static void test_quorum_counts(void **state)
{
	const struct pwd_m ms[] = {PWD_V("demo-a", A),	 PWD_VNR("demo-b", B), PWD_V("demo-c", C),
				   PWD_DEL("demo-d", D), PWD_L("demo-e", E),   {0}};
	struct pwd_set s;
	size_t ready = 99, voters = 99;

	(void)state;
	pwd_set_init(&s, ms);
	/* Without a ready voter: 1 of 2 ready (the deleting one and the learner do not count). */
	assert_false(eo_plan_removal_keeps_quorum(s.pm, s.n, &s.pm[0], &ready, &voters));
	assert_int_equal(ready, 1);
	assert_int_equal(voters, 2);
	/* Without the down voter: 2 of 2. */
	assert_true(eo_plan_removal_keeps_quorum(s.pm, s.n, &s.pm[1], &ready, &voters));
	assert_int_equal(ready, 2);
	assert_int_equal(voters, 2);
	/* Nobody removed: 2 of 3 ready is a quorum. */
	assert_true(eo_plan_removal_keeps_quorum(s.pm, s.n, NULL, &ready, &voters));
	assert_int_equal(voters, 3);
	pwd_set_free(&s);
}

TU_MAIN(test_quorum_counts)
