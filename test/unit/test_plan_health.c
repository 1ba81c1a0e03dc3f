/*
 * Unit tests for plan/health.c, through eo_plan_cluster on a running cluster
 * (support/planworld_scale.h): Available and Degraded count the voters, and voters that share a
 * node.
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

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

/* A learner joining a 1-member cluster does not count for quorum. */
static void test_health_counts_voters(void **state)
{
	const struct pws_row r = {.target = 3,
				  .members = {V("demo-a", A), L("demo-b", B, 1)},
				  .etcd = {EV("demo-a"), EL("demo-b", 2)}};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &r);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_true(eo_condition_matches(res.status, EO_COND_AVAILABLE, EO_COND_TRUE,
					 EO_REASON_QUORUM_HEALTHY));
	assert_true(eo_condition_matches(res.status, EO_COND_PROGRESSING, EO_COND_TRUE,
					 EO_REASON_INITIAL_SNAPSHOT));
	pws_done(&w, &res);
}

/*
 * A majority of a memory cluster's voters on one node is told in Degraded (VotersShareNode,
 * naming the node) while every member is ready; nothing waits on it, and a more urgent reason
 * (a member not ready) wins. PVC members on one node are not reported: their data outlives it.
 */
static void test_voters_share_node(void **state)
{
	const struct pws_row one_down = {
	    .target = 3,
	    .members = {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
	    .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};
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
		pws_done(&w, &res);
	}

	/* PVC members, all on one node: not reported. */
	pws_world_init(&w, &pws_rolled3);
	for (size_t i = 0; i < 3; i++)
		pws_on_node(&w, i, "node-1");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	pws_want_cond(res.status, EO_COND_DEGRADED, "False", EO_REASON_QUORUM_HEALTHY, NULL);
	pws_done(&w, &res);

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
	pws_done(&w, &res);
	json_decref(storage);
}

TU_MAIN(test_health_counts_voters, test_voters_share_node)
