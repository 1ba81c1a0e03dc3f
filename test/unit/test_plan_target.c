/*
 * Unit tests for plan/target.c, called directly (plan/internal.h) on a small world: a cluster
 * object with its stored status and the member counts of the pass, no members. The target latch
 * and the progress deadline: the first latch, a lost token, a reached target dropping its
 * deadline, an edit of a reached target relatched, an expired deadline before the cluster formed
 * (BootstrapFailed) and after (held, the size to heal back to recorded). The whole-planner rows
 * for the same rules follow, through eo_plan_cluster (support/planworld_cluster.h and
 * planworld_scale.h).
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
#include "desired/desired.h"
#include "plan/auth.h"
#include "plan/plan.h"
#include "support/planworld_cluster.h"
#include "api/member.h"
#include "plan/forcenew.h"
#include "plan/roll.h"
#include "support/planworld_scale.h"
#include "support/planworld_scale_rows.h"
#include "support/tu_main.h"
#include "support/planworld_step.h"

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

static void test_latch_target(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	json_t *st;

	(void)state;
	pwc_world_init(&w, pwc_cluster(1, NULL), true);
	pwst_plan(&w.in, &r, EO_PLAN_LATCH_TARGET);
	assert_true(r.status_changed);
	st = r.status;
	assert_string_equal(json_string_value(json_object_get(st, "clusterToken")),
			    "default-demo-c-uid");
	assert_string_equal(json_string_value(json_object_get(st, "progressDeadline")),
			    "2026-06-02T10:10:00Z");
	assert_string_equal(json_string_value(json_object_get(st, "selector")),
			    "etcd-operator.cozystack.io/cluster=demo");
	assert_int_equal(json_integer_value(json_object_get(st, "readyMembers")), 0);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(st, "observed"), "replicas")), 1);
	pwc_assert_cond(st, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_INITIAL_SNAPSHOT);
	pwc_done(&w, &r);
}

static void test_spec_changed_relatches(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;

	(void)state;
	pwc_formed_world(&w, 3, true, 1); /* spec says 3, observed 1 */
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	w.in.now = T0 + 1000;
	pwst_plan(&w.in, &r, EO_PLAN_WRITE_STATUS);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_SPEC_CHANGED);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(r.status, "observed"), "replicas")),
	    3);
	assert_string_equal(json_string_value(json_object_get(r.status, "progressDeadline")),
			    "2026-06-02T10:26:40Z");
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	/* Next pass with the new target: the PDB follows the target (3 -> minAvailable 2)... */
	json_object_set(w.cluster, "status", r.status);
	eo_plan_result_clear(&r);
	pwst_plan(&w.in, &r, EO_PLAN_ENSURE_PDB);
	assert_non_null(r.patch);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(r.patch, "spec"), "minAvailable")),
	    2);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_SPEC_CHANGED);
	eo_plan_result_clear(&r);
	/* ... then etcd's member list is read through the voter, and a member is created. */
	pwc_world_pdb(&w, 2);
	pwst_plan(&w.in, &r, EO_PLAN_QUERY_MEMBERS);
	assert_int_equal(r.n_endpoints, 1);
	assert_string_equal(r.endpoints[0],
			    "http://demo-aaaaa.demo.default.svc.cluster.local:2379");
	eo_plan_result_clear(&r);
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	pwst_plan(&w.in, &r, EO_PLAN_CREATE_MEMBER);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_SPEC_CHANGED);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	pwc_assert_stable(&w, &r);
	pwc_done(&w, &r);
}

static void test_deadlines(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	char *st = pwc_latched_status(1, NULL);

	(void)state;
	/* Before a clusterID: terminal BootstrapFailed. */
	pwc_world_init(&w, pwc_cluster(1, st), true);
	free(st);
	pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, NULL),
		      pwc_pod("demo-aaaaa", false));
	w.in.now = T0 + 600;
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	assert_int_equal(r.requeue_ms, 0);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_BOOTSTRAP_FAILED);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_BOOTSTRAP_FAILED);
	assert_string_equal(r.event_reason, EO_REASON_BOOTSTRAP_FAILED);
	pwc_assert_stable(&w, &r);
	pwc_done(&w, &r);

	/* After a clusterID: DeadlineExceeded, then a spec edit resumes. */
	st = pwc_latched_status(3, "\"clusterID\":\"248adce0359142ba\"");
	pwc_world_init(&w, pwc_cluster(3, st), true);
	free(st);
	pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, "{\"isVoter\":true}"),
		      pwc_pod("demo-aaaaa", true));
	w.in.now = T0 + 601;
	/* Healing goes on past the deadline: the missing PDB is created first ... */
	pwst_plan(&w.in, &r, EO_PLAN_ENSURE_PDB);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_FALSE, EO_REASON_QUORUM_HEALTHY);
	assert_int_equal(json_integer_value(json_object_get(r.status, "membersAtDeadline")), 1);
	eo_plan_result_clear(&r);
	/* ... but the scale-up 1 -> 3 does not go on: no member is created. */
	pwc_world_pdb(&w, eo_desired_pdb_min_available(1, 3));
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	assert_non_null(strstr(r.message, "not growing beyond the 1 member(s)"));
	assert_string_equal(r.event_reason, EO_REASON_DEADLINE_EXCEEDED);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED);
	pwc_assert_stable(&w, &r);
	json_object_set(w.cluster, "status", r.status);
	eo_plan_result_clear(&r);
	json_object_set_new(json_object_get(w.cluster, "spec"), "replicas", json_integer(1));
	pwst_plan(&w.in, &r, EO_PLAN_WRITE_STATUS);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE,
			EO_REASON_RETRY_AFTER_DEADLINE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	pwc_done(&w, &r);
}

/*
 * A missed deadline stops progress, not healing: past status.progressDeadline with the spec
 * unchanged (here a scale-up 3 -> 5 that never got its fourth member), lost and crash-looping
 * members are still replaced, strays removed, learners promoted and the PDB kept; growing
 * beyond the members the cluster had, scaling down and rolling wait.
 */
static void test_deadline_heals(void **state)
{
	const struct pws_row three = {.target = 5,
				      .members = {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				      .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};
	const struct pws_row two = {.target = 5,
				    .members = {V("demo-a", A), V("demo-c", C)},
				    .etcd = {EV("demo-a"), EV("demo-c")}};
	const struct pws_row crashing = {
	    .target = 5,
	    .members = {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
	    .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};
	const struct pws_row learner = {
	    .target = 5,
	    .members = {V("demo-a", A), V("demo-b", B), V("demo-c", C), L("demo-d", D, 2)},
	    .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c"), EL("demo-d", 0xd)}};
	const struct pws_row stray = {
	    .target = 5,
	    .members = {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	    .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c"), EL("demo-x", 0x77)}};
	const struct pws_row down = {.target = 1,
				     .members = {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				     .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};
	struct pws_world w;
	struct eo_plan_result res;
	struct eo_etcd_status st[PWS_MAXM];

	(void)state;
	/* A member that lost its PVC is removed ... */
	pws_world_init(&w, &three);
	for (size_t i = 0; i < 3; i++)
		pws_make_ran_on_pvc(&w, i, i == 1 ? NULL : "pvc-1");
	pws_want_held(&w, "lost PVC", EO_PLAN_REMOVE_MEMBER, "demo-b");
	pws_world_free(&w);
	/* ... and replaced, back up to the 3 members it had, not beyond. */
	pws_world_init(&w, &two);
	json_object_set_new(json_object_get(w.cluster, "status"), "membersAtDeadline",
			    json_integer(3));
	pws_want_held(&w, "replacement", EO_PLAN_CREATE_MEMBER, NULL);
	pws_world_free(&w);
	pws_world_init(&w, &three);
	pws_want_held(&w, "back at 3", EO_PLAN_NONE, NULL);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(json_integer_value(json_object_get(res.status, "membersAtDeadline")), 3);
	assert_non_null(strstr(res.message, "not growing beyond the 3 member(s)"));
	assert_string_equal(res.event_reason, EO_REASON_DEADLINE_EXCEEDED);
	pws_done(&w, &res);

	/* A crash-looping voter is replaced. */
	pws_world_init(&w, &crashing);
	pws_crash(&w, 1, 3, "CrashLoopBackOff", "Error");
	pws_want_held(&w, "crash loop", EO_PLAN_REMOVE_MEMBER, "demo-b");
	pws_world_free(&w);

	/* A learner that serves is promoted. */
	pws_world_init(&w, &learner);
	pws_want_held(&w, "learner", EO_PLAN_PROMOTE_LEARNER, "demo-d");
	pws_world_free(&w);

	/* A learner no EtcdMember stands for is removed. */
	pws_world_init(&w, &stray);
	pws_want_held(&w, "stray", EO_PLAN_REMOVE_STRAY, NULL);
	pws_world_free(&w);

	/* The PodDisruptionBudget is kept. */
	pws_world_init(&w, &three);
	json_decref(w.pdb);
	w.pdb = NULL;
	w.in.pdb = NULL;
	pws_want_held(&w, "PDB", EO_PLAN_ENSURE_PDB, NULL);
	pws_world_free(&w);

	/* A scale-down waits. */
	pws_world_init(&w, &down);
	pws_want_held(&w, "scale-down", EO_PLAN_NONE, NULL);
	pws_world_free(&w);

	/* A roll step waits: the members run 3.6.11, the target says 3.6.16. */
	pws_world_init(&w, &pws_rolled3);
	pws_set_version(w.cluster, "spec", "3.6.16");
	pws_set_version(json_object_get(w.cluster, "status"), "observed", "3.6.16");
	pws_world_statuses(&w, st, w.ev[0].id);
	pws_want_held(&w, "roll", EO_PLAN_NONE, NULL);
	pws_world_free(&w);
}

TU_MAIN(test_target_table, test_latch_target, test_spec_changed_relatches, test_deadlines,
	test_deadline_heals)
