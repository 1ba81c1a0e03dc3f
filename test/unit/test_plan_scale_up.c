/*
 * Unit tests for plan/scale_up.c: a new member joins as a learner (its details, idempotent
 * creates) and eo_plan_initial_cluster, through eo_plan_cluster on a running cluster
 * (support/planworld_scale.h).
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

/* The learner's add and its initial cluster carry the right URLs. */
static void test_add_learner_details(void **state)
{
	const struct pws_row r = {
	    .target = 3, .members = {V("demo-a", A), P("demo-b", B)}, .etcd = {EV("demo-a")}};
	const struct pws_row r2 = {.target = 3,
				   .members = {V("demo-a", A), P("demo-b", B)},
				   .etcd = {EV("demo-a"), ELNEW("demo-b", 0xb)}};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &r);
	pwst_plan(&w.in, &res, EO_PLAN_ADD_LEARNER);
	assert_string_equal(res.peer_url, "http://demo-b.demo.default.svc.cluster.local:2380");
	assert_int_equal(res.n_endpoints, 1);
	assert_string_equal(res.endpoints[0], "http://demo-a.demo.default.svc.cluster.local:2379");
	pws_done(&w, &res);

	pws_world_init(&w, &r2);
	pwst_plan(&w.in, &res, EO_PLAN_SET_INITIAL_CLUSTER);
	assert_string_equal(res.initial_cluster,
			    "demo-a=http://demo-a.demo.default.svc.cluster.local:2380,"
			    "demo-b=http://demo-b.demo.default.svc.cluster.local:2380");
	pws_done(&w, &res);
}

/*
 * Creates are idempotent: the name of the next member is recorded in the cluster's status
 * before the create, so a retried create (crash, slow cache) collides instead of making a
 * second member.
 */
static void test_creates_are_idempotent(void **state)
{
	const struct pws_row r = {.target = 3, .members = {V("demo-a", A)}, .etcd = {EV("demo-a")}};
	char first[EO_PLAN_NAME_MAX], second[EO_PLAN_NAME_MAX], other[EO_PLAN_NAME_MAX];
	struct pws_world w;
	struct eo_plan_result res, again;
	json_t *st = NULL;

	(void)state;
	/* The name: "<cluster>-" and 5 characters of generateName's alphabet, deterministic. */
	assert_int_equal(eo_plan_next_member_name("demo", "c-uid", NULL, 0, first, sizeof(first)),
			 0);
	assert_int_equal(strlen(first), 10);
	assert_int_equal(strncmp(first, "demo-", 5), 0);
	assert_int_equal(strspn(first + 5, "bcdfghjklmnpqrstvwxz2456789"), 5);
	assert_int_equal(eo_plan_next_member_name("demo", "c-uid", "", 0, other, sizeof(other)), 0);
	assert_string_equal(first, other);
	assert_int_equal(
	    eo_plan_next_member_name("demo", "c-uid", first, 0, second, sizeof(second)), 0);
	assert_string_not_equal(first, second);
	assert_int_equal(eo_plan_next_member_name("demo", "c-uid", NULL, 1, other, sizeof(other)),
			 0);
	assert_string_not_equal(first, other);
	assert_int_equal(eo_plan_next_member_name("demo", "c-uid2", NULL, 0, other, sizeof(other)),
			 0);
	assert_string_not_equal(first, other);
	assert_int_equal(eo_plan_next_member_name("demo", "c-uid", NULL, 0, other, 6), -1);

	/* Recorded: the create uses that name, and a retry on the same world the same one. */
	pws_world_init(&w, &r);
	pwst_plan(&w.in, &res, EO_PLAN_CREATE_MEMBER);
	assert_string_equal(res.member_name, first);
	pwst_plan(&w.in, &again, EO_PLAN_CREATE_MEMBER);
	assert_string_equal(again.member_name, first);
	eo_plan_result_clear(&again);
	eo_plan_result_clear(&res);

	/* Not recorded yet (an older operator's status): write it first, create nothing. */
	st = json_object_get(w.cluster, "status");
	json_object_del(st, "nextMemberName");
	pwst_plan(&w.in, &res, EO_PLAN_WRITE_STATUS);
	assert_string_equal(res.member_name, "");
	assert_true(res.status_changed);
	assert_string_equal(json_string_value(json_object_get(res.status, "nextMemberName")),
			    first);
	json_object_set(w.cluster, "status", res.status);
	eo_plan_result_clear(&res);
	pwst_plan(&w.in, &res, EO_PLAN_CREATE_MEMBER);
	assert_string_equal(res.member_name, first);
	pws_done(&w, &res);

	/* Once the member exists the status moves on to the next name, used by the next create. */
	{
		const struct pws_row r2 = {
		    .target = 3, .members = {V("demo-a", A), P(NULL, B)}, .etcd = {EV("demo-a")}};
		struct pws_row rr = r2;

		rr.members[1].name = first;
		pws_world_init(&w, &rr);
		pwst_plan(&w.in, &res, EO_PLAN_ADD_LEARNER);
		assert_string_equal(
		    json_string_value(json_object_get(res.status, "nextMemberName")), second);
		assert_true(res.status_changed);
		pws_done(&w, &res);
	}
}

static void test_initial_cluster_helper(void **state)
{
	char a[EO_DESIRED_URL_MAX] = "http://a:2380", b[EO_DESIRED_URL_MAX] = "http://b:2380";
	char *pa = a, *pb = b, buf[64], small[8];
	struct eo_etcd_member v[2] = {
	    {.id = 1, .name = (char *)"a", .peer_urls = &pa, .n_peer_urls = 1},
	    {.id = 2, .name = (char *)"", .peer_urls = &pb, .n_peer_urls = 1, .is_learner = true}};
	struct eo_etcd_members list = {.v = v, .n = 2};

	(void)state;
	assert_int_equal(eo_plan_initial_cluster(&list, "b", "http://b:2380", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "a=http://a:2380,b=http://b:2380");
	assert_int_equal(eo_plan_initial_cluster(&list, "c", "http://c:2380", buf, sizeof(buf)),
			 -1);
	assert_int_equal(eo_plan_initial_cluster(&list, "b", "http://b:2380", small, sizeof(small)),
			 -1);
	assert_string_equal(small, "");
	assert_string_equal(eo_plan_action_name(EO_PLAN_PROMOTE_LEARNER), "promote-learner");
	assert_string_equal(eo_plan_action_name(EO_PLAN_DELETE_PDB), "delete-pdb");
}

struct scale_up_row {
	struct pws_row w;    /* the world; the action, member and etcd ID wanted */
	int step;	     /* 0: scale up, 1: set initial cluster */
	bool decided;	     /* the step's return */
	const char *message; /* a part of out.message, NULL: not checked */
};

static bool scale_up(struct eo__plan_ctx *x, struct eo__plan_counts *c, const void *row)
{
	const struct scale_up_row *r = row;
	const struct eo_plan_result *out = x->out;

	if (r->step == 1)
		return eo__plan_step_set_initial_cluster(x, pwst_pending(x->in));
	eo__plan_step_scale_up(x, c, r->w.target, pwst_pending(x->in));
	return out->action != EO_PLAN_NONE;
}

/*
 * The steps themselves, called directly on a running cluster (support/planworld_scale.h):
 * eo__plan_step_scale_up (step 0: create the next member, add a pending one as a learner, or
 * wait; it returns nothing, so "decided" is an action other than none) and
 * eo__plan_step_set_initial_cluster (step 1: a pending member etcd already lists gets its
 * initial cluster).
 */
static void test_scale_up_step(void **state)
{
	static const struct scale_up_row rows[] = {

	    {{"at the target: nothing",
	      2,
	      {V("demo-a", A), V("demo-b", B)},
	      {EV("demo-a"), EV("demo-b")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     0,
	     false,
	     NULL},
	    {{"1->3: create the next member",
	      3,
	      {V("demo-a", A)},
	      {EV("demo-a")},
	      EO_PLAN_CREATE_MEMBER,
	      NULL,
	      0},
	     0,
	     true,
	     NULL},
	    {{"a pending member not in etcd: added as a learner",
	      3,
	      {V("demo-a", A), P("demo-b", B)},
	      {EV("demo-a")},
	      EO_PLAN_ADD_LEARNER,
	      "demo-b",
	      0},
	     0,
	     true,
	     NULL},
	    {{"a voter not ready: no new member",
	      3,
	      {V("demo-a", A), VNR("demo-b", B)},
	      {EV("demo-a"), EV("demo-b")},
	      EO_PLAN_WAIT,
	      NULL,
	      0},
	     0,
	     true,
	     NULL},
	    {{"initial cluster: a pending member etcd knows gets it",
	      3,
	      {V("demo-a", A), P("demo-b", B)},
	      {EV("demo-a"), ELNEW("demo-b", 0xb)},
	      EO_PLAN_SET_INITIAL_CLUSTER,
	      "demo-b",
	      0},
	     1,
	     true,
	     NULL},
	    {{"initial cluster: a pending member etcd does not know: not this step",
	      3,
	      {V("demo-a", A), P("demo-b", B)},
	      {EV("demo-a")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     1,
	     false,
	     NULL},
	    {{"initial cluster: no pending member",
	      3,
	      {V("demo-a", A), V("demo-b", B)},
	      {EV("demo-a"), EV("demo-b")},
	      EO_PLAN_NONE,
	      NULL,
	      0},
	     1,
	     false,
	     NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		pwst_run(&rows[i].w, NULL, scale_up, &rows[i],
			 (struct pwst_want){rows[i].decided, rows[i].w.want, rows[i].w.want_member,
					    rows[i].w.want_id, rows[i].message});
}

TU_MAIN(test_add_learner_details, test_creates_are_idempotent, test_initial_cluster_helper,
	test_scale_up_step)
