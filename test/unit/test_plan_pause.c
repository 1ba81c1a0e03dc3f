/*
 * Unit tests for plan/pause.c, called directly (plan/internal.h) on a small world: the pause
 * step of a cluster scaled to 0 (the last member goes dormant and keeps its PVC, or the cluster
 * stays paused) and the Paused conditions while a paused cluster wakes. The whole-planner rows
 * (the descent to one member, the wake-up, paused from the start) follow, through eo_plan_cluster
 * (support/planworld_scale.h, planworld_cluster.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/conditions.h"
#include "plan/internal.h"
#include "support/testutil.h"
#include "api/names.h"
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

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

/* An EtcdMember named name; dormant: spec.dormant; deleting: a deletionTimestamp. */
static json_t *member(const char *name, bool dormant, bool deleting)
{
	json_t *m = json_pack("{s:s, s:{s:s, s:s}, s:{s:s, s:b}}", "kind", "EtcdMember", "metadata",
			      "name", name, "namespace", "default", "spec", "clusterName", "demo",
			      "dormant", dormant);

	if (deleting)
		json_object_set_new(json_object_get(m, "metadata"), "deletionTimestamp",
				    json_string("2026-06-02T09:59:00Z"));
	return m;
}

struct row {
	const char *name;
	const char *members; /* per member: 'a' awake, 'd' dormant, 'x' being deleted */
	enum eo_plan_action action;
	const char *member;  /* out.member's name, NULL: none */
	const char *message; /* a part of out.message */
	const char *event;   /* out.event_reason, NULL: none */
};

static void test_pause_step(void **state)
{
	static const char *const names[] = {"demo-a", "demo-b", "demo-c"};
	const struct row rows[] = {
	    {"no member left", "", EO_PLAN_NONE, NULL, "no member is left (data is lost)", NULL},
	    {"the last member goes dormant", "a", EO_PLAN_SET_DORMANT, "demo-a",
	     "member demo-a goes dormant; data is preserved on PVC data-demo-a", EO_REASON_PAUSED},
	    {"already dormant: stays paused", "d", EO_PLAN_NONE, NULL,
	     "cluster is paused; data is preserved on PVC data-demo-a", NULL},
	    {"a member being deleted is passed over", "xa", EO_PLAN_SET_DORMANT, "demo-b",
	     "member demo-b goes dormant", EO_REASON_PAUSED},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		json_t *cluster = tu_jsonq("{'metadata':{'name':'demo','namespace':'default'}}");
		struct eo_plan_member pm[3] = {{0}};
		struct eo_plan_input in = {.cluster = cluster, .members = pm, .now = T0};
		struct eo_plan_result out = {0};
		struct eo__plan_ctx x = {.in = &in, .out = &out, .ok = true, .gen = 1};
		struct eo__plan_counts c;
		const char *types[] = {EO_COND_AVAILABLE, EO_COND_PROGRESSING, EO_COND_DEGRADED};

		for (size_t k = 0; r->members[k] != '\0'; k++)
			pm[in.n_members++].member =
			    member(names[k], r->members[k] == 'd', r->members[k] == 'x');
		x.st = json_object();
		eo__plan_count_members(&in, &c);
		eo__plan_step_pause(&x, &c);
		if (!x.ok)
			fail_msg("%s: the pass failed", r->name);
		if (out.action != r->action)
			fail_msg("%s: action %s, want %s", r->name, eo_plan_action_name(out.action),
				 eo_plan_action_name(r->action));
		if ((out.member == NULL) != (r->member == NULL) ||
		    (r->member != NULL &&
		     strcmp(json_string_value(
				json_object_get(json_object_get(out.member, "metadata"), "name")),
			    r->member) != 0))
			fail_msg("%s: the wrong member (or none) was chosen", r->name);
		if (strstr(out.message, r->message) == NULL)
			fail_msg("%s: message \"%s\" lacks \"%s\"", r->name, out.message,
				 r->message);
		if ((out.event_reason == NULL) != (r->event == NULL) ||
		    (r->event != NULL && strcmp(out.event_reason, r->event) != 0))
			fail_msg("%s: event %s, want %s", r->name,
				 out.event_reason ? out.event_reason : "none",
				 r->event ? r->event : "none");
		/* Paused owns all three conditions, False, with the step's message. */
		for (size_t k = 0; k < 3; k++) {
			const char *got = eo_condition_reason(x.st, types[k]);

			if (got == NULL || strcmp(got, EO_REASON_PAUSED) != 0 ||
			    eo_condition_is_true(x.st, types[k]))
				fail_msg("%s: %s is not False/Paused", r->name, types[k]);
		}
		for (size_t k = 0; k < in.n_members; k++)
			json_decref((json_t *)pm[k].member);
		json_decref(x.st);
		eo_plan_result_clear(&out);
		json_decref(cluster);
	}
}

/*
 * While a paused cluster's one member wakes, Available and Degraded keep saying Paused (nothing
 * was lost); once Available is no longer Paused, or is True, nothing is said.
 */
static void test_resuming(void **state)
{
	const struct {
		const char *name;
		const char *status; /* the cluster's stored status */
		bool says;
	} rows[] = {
	    {"woken from paused",
	     "{'conditions':[{'type':'Available','status':'False','reason':"
	     "'Paused','message':'m','lastTransitionTime':'2026-06-02T09:00:00Z'}]}",
	     true},
	    {"not paused before",
	     "{'conditions':[{'type':'Available','status':'False','reason':"
	     "'QuorumLost','message':'m','lastTransitionTime':"
	     "'2026-06-02T09:00:00Z'}]}",
	     false},
	    {"no conditions yet", "{}", false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *cluster = tu_jsonq("{'metadata':{'name':'demo','namespace':'default'}}");
		struct eo_plan_member pm[1] = {{.member = member("demo-a", false, false)}};
		struct eo_plan_input in = {
		    .cluster = cluster, .members = pm, .n_members = 1, .now = T0};
		struct eo_plan_result out = {0};
		struct eo__plan_ctx x = {.in = &in, .out = &out, .ok = true, .gen = 1};
		const char *got = NULL;

		json_object_set_new(cluster, "status", tu_jsonq(rows[i].status));
		x.st = json_object();
		eo__plan_resuming(&x);
		got = eo_condition_reason(x.st, EO_COND_AVAILABLE);
		if (rows[i].says && (got == NULL || strcmp(got, EO_REASON_PAUSED) != 0 ||
				     eo_condition_reason(x.st, EO_COND_DEGRADED) == NULL))
			fail_msg("%s: Available/Degraded do not say Paused", rows[i].name);
		if (!rows[i].says && got != NULL)
			fail_msg("%s: Available says %s", rows[i].name, got);
		if (rows[i].says &&
		    strstr(json_string_value(json_object_get(
			       eo_condition_find(x.st, EO_COND_AVAILABLE), "message")),
			   "resuming: member demo-a is starting again; data is preserved on PVC "
			   "data-demo-a") == NULL)
			fail_msg("%s: the message does not say what happens", rows[i].name);
		json_decref((json_t *)pm[0].member);
		json_decref(x.st);
		eo_plan_result_clear(&out);
		json_decref(cluster);
	}
}

static void test_paused_from_start_cluster(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;
	char *st = pwc_latched_status(0, NULL);

	(void)state;
	pwc_world_init(&w, pwc_cluster(0, st), true);
	free(st);
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_PAUSED);
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_PAUSED);
	assert_null(json_object_get(r.status, "progressDeadline"));
	pwc_assert_stable(&w, &r);
	pwc_done(&w, &r);
}

/* 3 -> 0: the staged descent, newest first, never below one member. */
static void test_pause_descends(void **state)
{
	const struct pws_row three = {.target = 0,
				      .members = {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				      .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};
	const struct pws_row two = {.target = 0,
				    .members = {V("demo-a", A), V("demo-b", B)},
				    .etcd = {EV("demo-a"), EV("demo-b")}};
	const struct pws_row deleting = {.target = 0,
					 .members = {V("demo-a", A), DEL("demo-b", B)},
					 .etcd = {EV("demo-a"), EV("demo-b")}};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &three);
	pwst_plan(&w.in, &res, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-c");
	assert_true(eo_condition_is_true(res.status, EO_COND_PROGRESSING));
	pws_done(&w, &res);

	pws_world_init(&w, &two);
	pwst_plan(&w.in, &res, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-b");
	pws_done(&w, &res);

	/* The last member is not paused while another one is still leaving. */
	pws_world_init(&w, &deleting);
	pwst_plan(&w.in, &res, EO_PLAN_WAIT);
	pws_done(&w, &res);
}

/* 1 -> 0: the last member goes dormant; then the PDB goes; then nothing moves. */
static void test_pause_last_member(void **state)
{
	const struct pws_row one = {
	    .target = 0, .members = {V("demo-a", A)}, .etcd = {EV("demo-a")}};
	const struct pws_row dormant = {
	    .target = 0, .members = {DORM("demo-a", A)}, .etcd = {EV("demo-a")}};
	const char *msg = "data is preserved on PVC data-demo-a";
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &one);
	pwst_plan(&w.in, &res, EO_PLAN_SET_DORMANT);
	assert_string_equal(pws_name_of(res.member), "demo-a");
	assert_string_equal(res.event_reason, EO_REASON_PAUSED);
	pws_want_paused(res.status, msg);
	pws_done(&w, &res);

	/* Dormant, the PDB still there: it goes (no voter Pod is left to protect). */
	pws_world_init(&w, &dormant);
	assert_non_null(w.pdb);
	pwst_plan(&w.in, &res, EO_PLAN_DELETE_PDB);
	pws_want_paused(res.status, msg);
	eo_plan_result_clear(&res);

	/* Paused and settled: no action, the deadline dropped, readyMembers 0. */
	json_decref(w.pdb);
	w.pdb = NULL;
	w.in.pdb = NULL;
	pwst_plan(&w.in, &res, EO_PLAN_NONE);
	pws_want_paused(res.status, msg);
	assert_null(json_object_get(res.status, "progressDeadline"));
	assert_int_equal(json_integer_value(json_object_get(res.status, "readyMembers")), 0);
	assert_string_equal(json_string_value(json_object_get(res.status, "clusterID")),
			    "248adce0359142ba");
	pws_done(&w, &res);
}

/* Resume: a new target is latched, then the dormant member is woken before anything else. */
static void test_resume(void **state)
{
	const struct pws_row dormant = {
	    .target = 0, .members = {DORM("demo-a", A)}, .etcd = {EV("demo-a")}};
	const struct pws_row woken_target = {
	    .target = 3, .members = {DORM("demo-a", A)}, .etcd = {EV("demo-a")}};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	/* spec.replicas 0 -> 3 on a paused cluster: the target is latched first. */
	pws_world_init(&w, &dormant);
	json_decref(w.pdb);
	w.pdb = NULL;
	w.in.pdb = NULL;
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	json_object_set_new(json_object_get(w.cluster, "spec"), "replicas", json_integer(3));
	pwst_plan(&w.in, &res, EO_PLAN_WRITE_STATUS);
	assert_int_equal(json_integer_value(
			     json_object_get(json_object_get(res.status, "observed"), "replicas")),
			 3);
	pws_want_cond(res.status, EO_COND_PROGRESSING, "True", EO_REASON_SPEC_CHANGED, NULL);
	pws_done(&w, &res);

	/* With the target latched: wake the dormant member (same member, same PVC). */
	pws_world_init(&w, &woken_target);
	pwst_plan(&w.in, &res, EO_PLAN_WAKE_DORMANT);
	assert_string_equal(pws_name_of(res.member), "demo-a");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_RESUMED);
	assert_string_equal(json_string_value(json_object_get(res.status, "clusterID")),
			    "248adce0359142ba");
	pws_done(&w, &res);

	/* Woken, its Pod not ready yet: still Paused (resuming), not QuorumLost. */
	pws_world_init(&w, &woken_target);
	json_object_del(json_object_get((json_t *)w.pm[0].member, "spec"), "dormant");
	json_object_set_new(json_object_get(w.cluster, "status"), "conditions",
			    json_pack("[{s:s, s:s, s:s, s:s, s:s, s:i}]", "type", "Available",
				      "status", "False", "reason", "Paused", "message", "",
				      "lastTransitionTime", "2026-06-02T09:00:00Z",
				      "observedGeneration", 2));
	json_decref((json_t *)w.pm[0].pod);
	w.pm[0].pod = NULL;
	w.in.etcd_queried = false;
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	pws_want_cond(
	    res.status, EO_COND_AVAILABLE, "False", EO_REASON_PAUSED,
	    "resuming: member demo-a is starting again; data is preserved on PVC data-demo-a");
	pws_want_cond(res.status, EO_COND_DEGRADED, "False", EO_REASON_PAUSED, "resuming");
	eo_plan_result_clear(&res);
	/* Without a Paused past the same world is an outage. */
	json_object_del(json_object_get(w.cluster, "status"), "conditions");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST, NULL);
	pws_done(&w, &res);
}

/* replicas 0 from the start: paused, nothing written; scaling up bootstraps a fresh cluster. */
static void test_paused_from_start(void **state)
{
	const struct pws_row none = {.target = 0, .members = {{0}}, .etcd = {{0}}};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &none);
	json_object_del(json_object_get(w.cluster, "status"), "clusterID");
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	pwst_plan(&w.in, &res, EO_PLAN_NONE);
	pws_want_paused(res.status, "no data has been written (cluster never bootstrapped)");
	eo_plan_result_clear(&res);
	/* Scaled up: a new target, then the seed. */
	json_object_set_new(json_object_get(w.cluster, "spec"), "replicas", json_integer(1));
	pwst_plan(&w.in, &res, EO_PLAN_WRITE_STATUS);
	json_object_set(w.cluster, "status", res.status);
	eo_plan_result_clear(&res);
	pwst_plan(&w.in, &res, EO_PLAN_CREATE_SEED);
	pws_done(&w, &res);
}

TU_MAIN(test_pause_step, test_resuming, test_paused_from_start_cluster, test_pause_descends,
	test_pause_last_member, test_resume, test_paused_from_start)
