/*
 * Unit tests for plan/target.c, called directly (plan/internal.h) on a small world: a cluster
 * object with its stored status and the member counts of the pass, no members. The target latch
 * and the progress deadline: the first latch, a lost token, a reached target dropping its
 * deadline, an edit of a reached target relatched, an expired deadline before the cluster formed
 * (BootstrapFailed) and after (held, the size to heal back to recorded). The whole-planner rows
 * for the same rules stay in test_plan_cluster.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/conditions.h"
#include "api/names.h"
#include "plan/internal.h"
#include "support/testutil.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z; the deadline below is T0 + 600 */

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

/* The cluster as test_plan_cluster.c builds it, spec.replicas and status.clusterID given. */
static json_t *cluster(int replicas, const char *status)
{
	json_t *c = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i}, s:{s:i, s:s, s:{s:s, s:s}, s:i}}",
			      "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdCluster", "metadata",
			      "name", "demo", "namespace", "default", "uid", "c-uid", "generation",
			      1, "spec", "replicas", replicas, "version", "3.6.11", "storage",
			      "size", "1Gi", "medium", "", "progressDeadlineSeconds", 600);

	if (status != NULL)
		json_object_set_new(c, "status", tu_jsonq(status));
	return c;
}

#define OBSERVED(r)                                                                                \
	"'observed':{'replicas':" #r ",'version':'3.6.11','storage':{'size':'1Gi','medium':''}}"
#define TOKEN	 "'clusterToken':'default-demo-c-uid'"
#define DEADLINE "'progressDeadline':'2026-06-02T10:10:00Z'"
#define ID	 "'clusterID':'1a2b'"

struct row {
	const char *name;
	int replicas;	    /* spec.replicas */
	const char *status; /* stored status, NULL: none */
	struct eo__plan_counts c;
	time_t now;
	/* expected */
	bool decided;
	enum eo_plan_action action; /* when decided */
	const char *progressing;    /* reason of Progressing in the status built, NULL: not set */
	const char *available;	    /* reason of Available, NULL: not checked */
	int32_t desired;	    /* when not decided */
	bool complete, has_dl, held;
	bool deadline_kept;	  /* status.progressDeadline still there */
	json_int_t at_deadline;	  /* status.membersAtDeadline, -1: absent */
	json_int_t observed_reps; /* status.observed.replicas after the pass */
};

static void test_target_table(void **state)
{
	const struct eo__plan_counts none = {0};
	const struct eo__plan_counts one_ready = {
	    .n = 1, .ready = 1, .voters = 1, .voters_ready = 1};
	const struct eo__plan_counts one_down = {.n = 1, .voters = 1, .deleting = 1};
	const struct row rows[] = {
	    {"first pass latches token and target", 3, NULL, none, T0, true, EO_PLAN_LATCH_TARGET,
	     EO_REASON_INITIAL_SNAPSHOT, NULL, 0, false, false, false, true, -1, 3},
	    {"a status without its token latches the token", 3, "{" OBSERVED(3) "," DEADLINE "}",
	     none, T0, true, EO_PLAN_LATCH_TARGET, NULL, NULL, 0, false, false, false, true, -1, 3},
	    {"in flight before the deadline: go on", 3, "{" TOKEN "," OBSERVED(1) "," DEADLINE "}",
	     none, T0 + 10, false, EO_PLAN_NONE, NULL, NULL, 1, false, true, false, true, -1, 1},
	    {"past the deadline without a cluster ID: BootstrapFailed", 1,
	     "{" TOKEN "," OBSERVED(1) "," DEADLINE "}", none, T0 + 601, true, EO_PLAN_NONE,
	     EO_REASON_BOOTSTRAP_FAILED, EO_REASON_BOOTSTRAP_FAILED, 0, false, false, false, true,
	     -1, 1},
	    {"reached: the deadline goes", 1, "{" TOKEN "," ID "," OBSERVED(1) "," DEADLINE "}",
	     one_ready, T0 + 10, false, EO_PLAN_NONE, NULL, NULL, 1, true, false, false, false, -1,
	     1},
	    {"reached and edited: the edit is the next target", 3,
	     "{" TOKEN "," ID "," OBSERVED(1) "}", one_ready, T0 + 10, true, EO_PLAN_WRITE_STATUS,
	     EO_REASON_SPEC_CHANGED, NULL, 0, false, false, false, true, -1, 3},
	    {"past the deadline after forming, spec unchanged: held", 1,
	     "{" TOKEN "," ID "," OBSERVED(1) "," DEADLINE "}", one_down, T0 + 601, false,
	     EO_PLAN_NONE, NULL, NULL, 1, false, true, true, true, 2, 1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		json_t *c = cluster(r->replicas, r->status);
		const json_t *cur = json_object_get(c, "status");
		struct eo_plan_input in = {.cluster = c, .build = &OPTS, .now = r->now};
		struct eo_plan_result out = {0};
		struct eo__plan_ctx x = {.in = &in, .out = &out, .ok = true, .gen = 1};
		struct eo__plan_target t = {0};
		bool running =
		    r->c.n > 0 && strstr(r->status ? r->status : "", "clusterID") != NULL;
		bool decided;
		const json_t *rec = NULL;

		x.st = cur != NULL ? json_deep_copy(cur) : json_object();
		decided = eo__plan_target(&x, &r->c, running, &t);
		if (!x.ok)
			fail_msg("%s: the pass failed", r->name);
		if (decided != r->decided)
			fail_msg("%s: decided %d, want %d", r->name, decided, r->decided);
		if (decided && out.action != r->action)
			fail_msg("%s: action %s, want %s", r->name, eo_plan_action_name(out.action),
				 eo_plan_action_name(r->action));
		if (!decided && (t.desired != r->desired || t.complete != r->complete ||
				 t.has_dl != r->has_dl || x.held != r->held))
			fail_msg("%s: desired %d complete %d has_dl %d held %d", r->name, t.desired,
				 t.complete, t.has_dl, x.held);
		if (r->progressing != NULL &&
		    (eo_condition_reason(x.st, EO_COND_PROGRESSING) == NULL ||
		     strcmp(eo_condition_reason(x.st, EO_COND_PROGRESSING), r->progressing) != 0))
			fail_msg("%s: Progressing %s, want %s", r->name,
				 eo_condition_reason(x.st, EO_COND_PROGRESSING), r->progressing);
		if (r->available != NULL &&
		    (eo_condition_reason(x.st, EO_COND_AVAILABLE) == NULL ||
		     strcmp(eo_condition_reason(x.st, EO_COND_AVAILABLE), r->available) != 0))
			fail_msg("%s: Available %s, want %s", r->name,
				 eo_condition_reason(x.st, EO_COND_AVAILABLE), r->available);
		if ((json_object_get(x.st, "progressDeadline") != NULL) != r->deadline_kept)
			fail_msg("%s: progressDeadline %s", r->name,
				 r->deadline_kept ? "dropped" : "kept");
		rec = json_object_get(x.st, "membersAtDeadline");
		if ((rec == NULL ? -1 : json_integer_value(rec)) != r->at_deadline)
			fail_msg("%s: membersAtDeadline %lld, want %lld", r->name,
				 rec == NULL ? -1LL : (long long)json_integer_value(rec),
				 (long long)r->at_deadline);
		if (json_integer_value(json_object_get(json_object_get(x.st, "observed"),
						       "replicas")) != r->observed_reps)
			fail_msg("%s: observed.replicas %lld, want %lld", r->name,
				 (long long)json_integer_value(json_object_get(
				     json_object_get(x.st, "observed"), "replicas")),
				 (long long)r->observed_reps);
		if (json_object_get(x.st, "clusterToken") == NULL)
			fail_msg("%s: no clusterToken in the status", r->name);
		json_decref(t.spec_obs);
		json_decref(x.st);
		eo_plan_result_clear(&out);
		json_decref(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_target_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
