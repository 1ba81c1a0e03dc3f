/*
 * Unit tests for plan/running.c: the pass of a bootstrapped cluster (the PodDisruptionBudget,
 * the steady state that writes nothing, members being deleted and the wait), through
 * eo_plan_cluster on the worlds of support/planworld_cluster.h and planworld_scale.h.
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
#include "api/names.h"
#include "desired/desired.h"
#include "plan/auth.h"
#include "plan/plan.h"
#include "support/planworld_cluster.h"
#include "support/testutil.h"
#include "api/member.h"
#include "plan/forcenew.h"
#include "plan/roll.h"
#include "support/planworld_scale.h"
#include "support/planworld_scale_rows.h"
#include "support/tu_main.h"
#include "support/planworld_step.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

/* After discovery: steady state is reached, the deadline dropped and nothing moves. */
static void test_steady_state_no_churn(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;

	(void)state;
	pwc_formed_world(&w, 1, true, 1);
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
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
	pwc_done(&w, &r);
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
	pwst_plan(&w.in, &r, EO_PLAN_WAIT);
	assert_int_equal(r.requeue_ms, EO_PLAN_REQUEUE_SHORT_MS);
	eo_plan_result_clear(&r);
	/* A cluster being deleted: nothing, no status. */
	json_object_set_new(json_object_get(w.cluster, "metadata"), "deletionTimestamp",
			    json_string("2026-06-02T10:00:00Z"));
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	assert_null(r.status);
	pwc_done(&w, &r);
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
	const struct pws_row none = {.target = 1, .members = {P("demo-a", A)}, .etcd = {{0}}};
	struct pws_world w;
	struct eo_plan_result res;
	json_t *sel = NULL;

	(void)state;
	/* Missing: created with minAvailable 2 over the voters. */
	pws_world_init(&w, &pws_rolled3);
	json_decref(w.pdb);
	w.pdb = NULL;
	w.in.pdb = NULL;
	pwst_plan(&w.in, &res, EO_PLAN_ENSURE_PDB);
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
	pwst_plan(&w.in, &res, EO_PLAN_ENSURE_PDB);
	assert_non_null(res.patch);
	assert_true(
	    json_is_null(json_object_get(json_object_get(res.patch, "spec"), "maxUnavailable")));
	pws_done(&w, &res);

	/* No voter left: the PDB goes. */
	pws_world_init(&w, &none);
	w.pdb = eo_desired_pdb(w.cluster, 1);
	w.in.pdb = w.pdb;
	pwst_plan(&w.in, &res, EO_PLAN_DELETE_PDB);
	pws_done(&w, &res);
}

TU_MAIN(test_steady_state_no_churn, test_deleting_and_waiting, test_pdb_math, test_pdb_plan)
