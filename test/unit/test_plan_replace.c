/*
 * Unit tests for plan/replace.c, through eo_plan_cluster on a running cluster
 * (support/planworld_scale.h): a memory member that lost its Pod, a member whose PVC is gone,
 * the live read before a removal, crash-looping and wiped members replaced. The node-loss rows
 * are in test_plan_nodeloss.c.
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
#include "plan/internal.h"
#include "support/planworld_step.h"
#include "support/tu_main.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

/* A memory member that lost its Pod is removed (then replaced by the scale-up path). */
static void test_memory_member_replaced(void **state)
{
	const struct pws_row two = {.target = 3,
				    .members = {V("demo-a", A), V("demo-c", C)},
				    .etcd = {EV("demo-a"), EV("demo-c")}};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &pws_rolled3);
	for (size_t i = 0; i < 3; i++)
		pws_make_memory(&w, i, i == 1);
	assert_true(eo_plan_memory_member_lost(w.pm[1].member, w.pm[1].pod));
	assert_false(eo_plan_memory_member_lost(w.pm[0].member, w.pm[0].pod));
	pwst_plan(&w.in, &res, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-b");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_MEMBER_REPLACED);
	/* Etcd calls only through the members that still have a Pod. */
	for (size_t j = 0; j < res.n_endpoints; j++)
		assert_null(strstr(res.endpoints[j], "demo-b"));
	pws_done(&w, &res);

	/* A PVC-backed member without a Pod is not replaced (its Pod comes back). */
	pws_world_init(&w, &pws_rolled3);
	json_decref((json_t *)w.pm[1].pod);
	w.pm[1].pod = NULL;
	json_object_set_new(json_object_get((json_t *)w.pm[1].member, "status"), "podUID",
			    json_string("old-pod-uid"));
	assert_false(eo_plan_memory_member_lost(w.pm[1].member, w.pm[1].pod));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	pws_done(&w, &res);

	/* Once it is gone: back to 3 through the scale-up path. */
	pws_world_init(&w, &two);
	for (size_t i = 0; i < 2; i++)
		pws_make_memory(&w, i, false);
	pwst_plan(&w.in, &res, EO_PLAN_CREATE_MEMBER);
	pws_done(&w, &res);
}

/*
 * A PVC-backed member whose PVC is gone or replaced is removed through the others at once and
 * replaced by the scale-up path; it never comes back under its member ID.
 */
static void test_pvc_member_replaced(void **state)
{
	const struct {
		const char *what;
		const char *pvc_b; /* demo-b's PVC UID, NULL: gone */
		bool pod_b;	   /* demo-b keeps its Pod */
		bool remove;
	} cases[] = {
	    {"PVC and Pod deleted", NULL, false, true},
	    {"PVC deleted, Pod still running", NULL, true, true},
	    {"PVC replaced by another one", "pvc-2", false, true},
	    {"PVC being deleted, Pod still running", "deleting", true, true},
	    {"same PVC, Pod deleted: it comes back on its data", "pvc-1", false, false},
	};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		pws_world_init(&w, &pws_rolled3);
		for (size_t i = 0; i < 3; i++)
			pws_make_ran_on_pvc(&w, i, i == 1 ? cases[k].pvc_b : "pvc-1");
		if (!cases[k].pod_b) {
			json_decref((json_t *)w.pm[1].pod);
			w.pm[1].pod = NULL;
		}
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		if ((res.action == EO_PLAN_REMOVE_MEMBER) != cases[k].remove)
			fail_msg("%s: action %s (%s)", cases[k].what,
				 eo_plan_action_name(res.action), res.message);
		if (cases[k].remove) {
			assert_string_equal(pws_name_of(res.member), "demo-b");
			assert_string_equal(res.event_reason, EO_PLAN_REASON_MEMBER_REPLACED);
			assert_non_null(strstr(res.message, "lost its data volume"));
			assert_int_equal(
			    json_integer_value(json_object_get(res.status, "brokenMembers")), 1);
		}
		pws_done(&w, &res);
	}

	/* Two of three voters lost their volumes: the quorum is gone for good. */
	pws_world_init(&w, &pws_rolled3);
	for (size_t i = 0; i < 3; i++)
		pws_make_ran_on_pvc(&w, i, i == 0 ? "pvc-1" : NULL);
	pwst_plan(&w.in, &res, EO_PLAN_NONE);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST,
		      "2 of 3 voting member(s) lost their data");
	pws_done(&w, &res);
}

/* What a live read must change before a destructive step, and the decision it changes. */
static void test_live_read_before_removal(void **state)
{
	json_t *a = json_pack("{s:{s:s}}", "metadata", "uid", "u1");
	json_t *a2 = json_pack("{s:{s:s}}", "metadata", "uid", "u1");
	json_t *b = json_pack("{s:{s:s}}", "metadata", "uid", "u2");
	json_t *ad = json_pack("{s:{s:s, s:s}}", "metadata", "uid", "u1", "deletionTimestamp",
			       "2026-06-02T10:00:00Z");
	const struct {
		const char *what;
		const json_t *cached, *live;
		bool differs;
	} cases[] = {
	    {"absent both", NULL, NULL, false},
	    {"cache lacks it (label removed, or lag)", NULL, a, true},
	    {"gone since the cache saw it", a, NULL, true},
	    {"same object", a, a2, false},
	    {"replaced (other UID)", a, b, true},
	    {"being deleted since", a, ad, true},
	};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (eo_plan_observed_differs(cases[i].cached, cases[i].live) != cases[i].differs)
			fail_msg("%s: differs %d", cases[i].what, !cases[i].differs);

	/*
	 * The cache lacks a healthy memory member's Pod (its managed-by label was removed): the
	 * plan would remove it; with the live Pod planned again, it does not.
	 */
	pws_world_init(&w, &pws_rolled3);
	for (size_t i = 0; i < 3; i++)
		pws_make_memory(&w, i, false);
	{
		const json_t *live = w.pm[1].pod;

		w.pm[1].pod = NULL;
		pwst_plan(&w.in, &res, EO_PLAN_REMOVE_MEMBER);
		assert_true(eo_plan_observed_differs(w.pm[1].pod, live));
		eo_plan_result_clear(&res);
		w.pm[1].pod = live;
	}
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	pws_done(&w, &res);
	json_decref(a);
	json_decref(a2);
	json_decref(b);
	json_decref(ad);
}

/* A crash-looping voter is replaced while the other voters hold quorum, and only then. */
static void test_crashloop_member_replaced(void **state)
{
	const struct pws_row r = {.target = 3,
				  .members = {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
				  .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};
	const struct pws_row two_down = {
	    .target = 3,
	    .members = {V("demo-a", A), VNR("demo-b", B), VNR("demo-c", C)},
	    .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};
	const struct pws_row alone = {
	    .target = 1, .members = {VNR("demo-a", A)}, .etcd = {EV("demo-a")}};
	struct pws_world w;
	struct eo_plan_result res;
	char why[128];

	(void)state;
	pws_world_init(&w, &r);
	pws_crash(&w, 1, 3, "CrashLoopBackOff", "Error");
	assert_true(eo_plan_member_crashlooping(w.pm[1].member, w.pm[1].pod, why, sizeof(why)));
	assert_string_equal(why, "3 restarts, last exit code 2 (Error)");
	assert_false(eo_plan_member_crashlooping(w.pm[0].member, w.pm[0].pod, NULL, 0));
	pwst_plan(&w.in, &res, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-b");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_MEMBER_REPLACED);
	assert_non_null(strstr(res.message, "crash-looping (3 restarts"));
	assert_int_equal(json_integer_value(json_object_get(res.status, "brokenMembers")), 1);
	eo_plan_result_clear(&res);

	/* Not yet: too few restarts, or not in back-off (it is starting again). */
	pws_crash(&w, 1, 2, "CrashLoopBackOff", "Error");
	assert_false(eo_plan_member_crashlooping(w.pm[1].member, w.pm[1].pod, NULL, 0));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_int_equal(json_integer_value(json_object_get(res.status, "brokenMembers")), 0);
	eo_plan_result_clear(&res);
	pws_crash(&w, 1, 7, "ContainerCreating", "Error");
	assert_false(eo_plan_member_crashlooping(w.pm[1].member, w.pm[1].pod, NULL, 0));
	/* Killed for memory: a new member would die the same way. */
	pws_crash(&w, 1, 7, "CrashLoopBackOff", "OOMKilled");
	assert_false(eo_plan_member_crashlooping(w.pm[1].member, w.pm[1].pod, NULL, 0));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	pws_done(&w, &res);

	/* Two of three voters down: removing one would need the quorum that is missing. */
	pws_world_init(&w, &two_down);
	pws_crash(&w, 1, 5, "CrashLoopBackOff", "Error");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST, NULL);
	pws_done(&w, &res);

	/* The only member is never replaced: its data is all there is. */
	pws_world_init(&w, &alone);
	pws_crash(&w, 0, 9, "CrashLoopBackOff", "Error");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_int_equal(json_integer_value(json_object_get(res.status, "brokenMembers")), 1);
	pws_done(&w, &res);
}

/*
 * A joined member whose data dir was wiped under its intact PVC: its data guard refuses on the
 * first start (exit 3) and the member is removed through the quorum at once, without waiting
 * for a crash loop, and replaced by the scale-up path; it waits while removing it would need
 * the quorum that is missing. Another exit of the guard (it could not read the dir) is not
 * "data lost".
 */
static void test_wiped_member_replaced(void **state)
{
	const struct pws_row r = {.target = 3,
				  .members = {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
				  .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};
	const struct pws_row two_down = {
	    .target = 3,
	    .members = {V("demo-a", A), VNR("demo-b", B), VNR("demo-c", C)},
	    .etcd = {EV("demo-a"), EV("demo-b"), EV("demo-c")}};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &r);
	for (size_t i = 0; i < 3; i++)
		pws_make_ran_on_pvc(&w, i, "pvc-1");
	pws_guard_ended(&w, 1, EO_DESIRED_DATA_GUARD_EXIT_NO_WAL);
	assert_true(eo_plan_data_dir_lost(w.pm[1].member, w.pm[1].pod, NULL, 0));
	assert_false(eo_plan_member_crashlooping(w.pm[1].member, w.pm[1].pod, NULL, 0));
	pwst_plan(&w.in, &res, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(pws_name_of(res.member), "demo-b");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_MEMBER_REPLACED);
	assert_non_null(strstr(res.message, "member demo-b: data directory has no WAL"));
	assert_int_equal(json_integer_value(json_object_get(res.status, "brokenMembers")), 1);
	eo_plan_result_clear(&res);

	/* The guard could not read the dir (exit 1): not a lost member, nothing removed. */
	pws_guard_ended(&w, 1, 1);
	assert_false(eo_plan_data_dir_lost(w.pm[1].member, w.pm[1].pod, NULL, 0));
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	pws_done(&w, &res);

	/* Another voter down: removing demo-b would need the quorum that is missing. */
	pws_world_init(&w, &two_down);
	for (size_t i = 0; i < 3; i++)
		pws_make_ran_on_pvc(&w, i, "pvc-1");
	pws_guard_ended(&w, 1, EO_DESIRED_DATA_GUARD_EXIT_NO_WAL);
	pwst_plan(&w.in, &res, EO_PLAN_WAIT);
	assert_null(res.member);
	assert_non_null(strstr(res.message, "waits"));
	assert_non_null(strstr(res.message, "demo-b"));
	pws_done(&w, &res);
}

struct replace_row {
	struct pws_row w;    /* the world; the action and member wanted */
	int step;	     /* 0: lost, 1: not in etcd, 2: crash-looping */
	int memory;	     /* all memory members, this one without its Pod; -1: none */
	int pvc_gone;	     /* all ran on PVCs, this one's is gone; -1: none */
	int crash;	     /* this member crash-loops; -1: none */
	int restarts;	     /* ... after restarts */
	const char *last;    /* ... its last exit's reason */
	bool decided;	     /* the step's return */
	const char *message; /* a part of out.message, NULL: not checked */
};

/* The memory, lost-PVC and crash-loop changes of a replace row. */
static void replace_prepare(struct pws_world *w, const void *row)
{
	const struct replace_row *r = row;

	for (size_t k = 0; k < w->n; k++) {
		if (r->memory >= 0)
			pws_make_memory(w, k, (int)k == r->memory);
		if (r->pvc_gone >= 0)
			pws_make_ran_on_pvc(w, k, (int)k == r->pvc_gone ? NULL : "pvc-1");
	}
	if (r->crash >= 0)
		pws_crash(w, (size_t)r->crash, r->restarts, "CrashLoopBackOff", r->last);
}

static bool replace(struct eo__plan_ctx *x, struct eo__plan_counts *c, const void *row)
{
	const struct replace_row *r = row;

	if (r->step == 0)
		return eo__plan_step_replace_lost(x);
	if (r->step == 1)
		return eo__plan_step_not_in_etcd(x);
	return eo__plan_step_replace_crashlooping(x, c, r->w.target, pwst_learners(x->in));
}

/*
 * The steps themselves, called directly on a running cluster of three (support/planworld_scale.h):
 * eo__plan_step_replace_lost (step 0: a memory member without its Pod, a member without its
 * PVC), eo__plan_step_not_in_etcd (step 1) and eo__plan_step_replace_crashlooping (step 2: a
 * voter in back-off, removed only while nothing else changes and the others hold quorum).
 */
static void test_replace_step(void **state)
{
	static const struct replace_row rows[] = {
	    {{"lost: nothing lost",
	      3,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     0,
	     -1,
	     -1,
	     -1,
	     0,
	     NULL,
	     false,
	     NULL},
	    {{"lost: a memory member without its Pod is removed",
	      3,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_REMOVE_MEMBER,
	      "demo-b",
	      0},
	     0,
	     1,
	     -1,
	     -1,
	     0,
	     NULL,
	     true,
	     "memory member demo-b lost its Pod and its data; removing it to replace it"},
	    {{"lost: a member whose PVC is gone is removed",
	      3,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_REMOVE_MEMBER,
	      "demo-b",
	      0},
	     0,
	     -1,
	     1,
	     -1,
	     0,
	     NULL,
	     true,
	     "member demo-b lost its data volume (PVC gone)"},
	    {{"lost: two of three lost, no quorum to remove one",
	      3,
	      {V("demo-a", A), VNR("demo-b", B), VNR("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_WAIT,
	      NULL,
	      0},
	     0,
	     2,
	     -1,
	     -1,
	     0,
	     NULL,
	     true,
	     NULL},
	    {{"not in etcd: all listed",
	      3,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     1,
	     -1,
	     -1,
	     -1,
	     0,
	     NULL,
	     false,
	     NULL},
	    {{"not in etcd: a member etcd does not list is deleted",
	      3,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-c")},
	      EO_PLAN_REMOVE_MEMBER,
	      "demo-b",
	      0},
	     1,
	     -1,
	     -1,
	     -1,
	     0,
	     NULL,
	     true,
	     "member demo-b is not in etcd's member list"},
	    {{"not in etcd: a pending member is not this step",
	      3,
	      {V("demo-a", A), V("demo-b", B), P("demo-c", C)},
	      {EV("demo-a"), EV("demo-b")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     1,
	     -1,
	     -1,
	     -1,
	     0,
	     NULL,
	     false,
	     NULL},
	    {{"crash-looping: a voter in back-off is removed",
	      3,
	      {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_REMOVE_MEMBER,
	      "demo-b",
	      0},
	     2,
	     -1,
	     -1,
	     1,
	     3,
	     "Error",
	     true,
	     "member demo-b is crash-looping (3 restarts"},
	    {{"crash-looping: too few restarts",
	      3,
	      {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     2,
	     -1,
	     -1,
	     1,
	     2,
	     "Error",
	     false,
	     NULL},
	    {{"crash-looping: killed for memory is left alone",
	      3,
	      {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     2,
	     -1,
	     -1,
	     1,
	     7,
	     "OOMKilled",
	     false,
	     NULL},
	    {{"crash-looping: not without the quorum of the others",
	      3,
	      {V("demo-a", A), VNR("demo-b", B), VNR("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     2,
	     -1,
	     -1,
	     1,
	     5,
	     "Error",
	     false,
	     NULL},
	    {{"crash-looping: not while a member is pending",
	      3,
	      {V("demo-a", A), VNR("demo-b", B), P("demo-c", C)},
	      {EV("demo-a"), EV("demo-b")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     2,
	     -1,
	     -1,
	     1,
	     5,
	     "Error",
	     false,
	     NULL},
	    {{"crash-looping: not while a learner joins",
	      4,
	      {V("demo-a", A), VNR("demo-b", B), V("demo-c", C), L("demo-d", D, 2)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c"), EL("demo-d", 0xd)},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     2,
	     -1,
	     -1,
	     1,
	     5,
	     "Error",
	     false,
	     NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		pwst_run(&rows[i].w, replace_prepare, replace, &rows[i],
			 (struct pwst_want){rows[i].decided, rows[i].w.want, rows[i].w.want_member,
					    0, rows[i].message});
}

TU_MAIN(test_memory_member_replaced, test_pvc_member_replaced, test_live_read_before_removal,
	test_crashloop_member_replaced, test_wiped_member_replaced, test_replace_step)
