/*
 * Unit tests for plan/plan.c, end to end through eo_plan_cluster on a fresh cluster
 * (support/planworld_cluster.h): an adopted cluster and the small exported helpers. The rows of
 * each decision are in the test file of that decision (test_plan_<decision>.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/names.h"
#include "desired/desired.h"
#include "plan/auth.h"
#include "plan/plan.h"
#include "support/planworld_cluster.h"
#include "support/testutil.h"
#include "support/tu_main.h"
#include "support/planworld_step.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

/* --- cases --- */

/*
 * A cluster adopted from the legacy operator (docs/migration.md): held while the migration
 * runs; then its adopted Pod, which carries no Pod hash, is left running until the target
 * changes; the same Pod not marked adopted is rolled.
 */
static void test_adopted_cluster(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	char *st = pwc_latched_status(1, "\"clusterID\":\"248adce0359142ba\"");
	json_t *m = NULL, *p = NULL;

	(void)state;
	for (int adopted = 1; adopted >= 0; adopted--) {
		pwc_world_init(&w, pwc_cluster(1, st), true);
		m = pwc_member("demo-aaaaa", true, false, VOTER);
		p = pwc_pod("demo-aaaaa", true);
		/* a Pod the member controller did not build: no hash */
		json_object_set_new(json_object_get(p, "metadata"), "annotations", json_object());
		if (adopted)
			json_object_set_new(
			    json_object_get(m, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_ADOPTED_POD_UID, "pod-uid"));
		pwc_world_add(&w, m, p);
		pwc_world_pdb(&w, 1);
		pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
		assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
		if (adopted) {
			assert_int_equal(r.action, EO_PLAN_NONE);
			pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE,
					EO_REASON_RECONCILED);
		} else {
			/* outdated: the roll starts (it first reads the members' progress) */
			assert_int_not_equal(r.action, EO_PLAN_NONE);
			assert_string_equal(eo_condition_status(r.status, EO_COND_PROGRESSING),
					    EO_COND_TRUE);
		}
		eo_plan_result_clear(&r);

		/* while `kubectl etcd migrate` holds it: nothing at all, no status */
		json_object_set_new(json_object_get(w.cluster, "metadata"), "annotations",
				    json_pack("{s:s}", EO_ANNOTATION_MIGRATING, "true"));
		pwst_plan(&w.in, &r, EO_PLAN_WAIT);
		assert_null(r.status);
		assert_false(r.status_changed);
		assert_non_null(strstr(r.message, "held by kubectl etcd migrate"));
		pwc_done(&w, &r);
	}
	free(st);
}

/*
 * Every status the plan writes carries the cluster's generation at the top level
 * (status.observedGeneration, read by Argo CD and Flux), and a bumped generation counts as a
 * status change even when nothing else moved.
 */
static void test_observed_generation(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	char *st = pwc_latched_status(1, "\"clusterID\":\"248adce0359142ba\"");

	(void)state;
	pwc_world_init(&w, pwc_cluster(1, st), true);
	pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, VOTER),
		      pwc_pod("demo-aaaaa", true));
	pwc_world_pdb(&w, 1);
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	json_object_set_new(json_object_get(w.cluster, "metadata"), "generation", json_integer(7));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_non_null(r.status);
	assert_true(r.status_changed);
	assert_int_equal(json_integer_value(json_object_get(r.status, "observedGeneration")), 7);
	eo_plan_result_clear(&r);
	pwc_world_free(&w);
	free(st);
}

static void test_helpers(void **state)
{
	char buf[24];
	json_t *p = pwc_pod("x", true);

	(void)state;
	eo_plan_format_id(0x248adce0359142baULL, buf, sizeof(buf));
	assert_string_equal(buf, "248adce0359142ba");
	assert_true(eo_plan_pod_ready(p));
	json_object_set_new(json_object_get(p, "metadata"), "deletionTimestamp",
			    json_string("2026-06-02T10:00:00Z"));
	assert_false(eo_plan_pod_ready(p));
	assert_false(eo_plan_pod_ready(NULL));
	assert_string_equal(eo_plan_action_name(EO_PLAN_CREATE_SEED), "create-seed");
	assert_string_equal(eo_plan_action_name((enum eo_plan_action)99), "unknown");
	json_decref(p);
}

TU_MAIN(test_adopted_cluster, test_observed_generation, test_helpers)
