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

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

/* The learner's add and its initial cluster carry the right URLs. */
static void test_add_learner_details(void **state)
{
	const struct pws_row r = {"",	3, {V("demo-a", A), P("demo-b", B)}, {EV("demo-a")}, 0,
				  NULL, 0};
	const struct pws_row r2 = {
	    "",	  3, {V("demo-a", A), P("demo-b", B)}, {EV("demo-a"), ELNEW("demo-b", 0xb)}, 0,
	    NULL, 0};
	struct pws_world w;
	struct eo_plan_result res;

	(void)state;
	pws_world_init(&w, &r);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_ADD_LEARNER);
	assert_string_equal(res.peer_url, "http://demo-b.demo.default.svc.cluster.local:2380");
	assert_int_equal(res.n_endpoints, 1);
	assert_string_equal(res.endpoints[0], "http://demo-a.demo.default.svc.cluster.local:2379");
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	pws_world_init(&w, &r2);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_SET_INITIAL_CLUSTER);
	assert_string_equal(res.initial_cluster,
			    "demo-a=http://demo-a.demo.default.svc.cluster.local:2380,"
			    "demo-b=http://demo-b.demo.default.svc.cluster.local:2380");
	eo_plan_result_clear(&res);
	pws_world_free(&w);
}

/*
 * Creates are idempotent: the name of the next member is recorded in the cluster's status
 * before the create, so a retried create (crash, slow cache) collides instead of making a
 * second member.
 */
static void test_creates_are_idempotent(void **state)
{
	const struct pws_row r = {"", 3, {V("demo-a", A)}, {EV("demo-a")}, 0, NULL, 0};
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
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_CREATE_MEMBER);
	assert_string_equal(res.member_name, first);
	assert_int_equal(eo_plan_cluster(&w.in, &again), 0);
	assert_int_equal(again.action, EO_PLAN_CREATE_MEMBER);
	assert_string_equal(again.member_name, first);
	eo_plan_result_clear(&again);
	eo_plan_result_clear(&res);

	/* Not recorded yet (an older operator's status): write it first, create nothing. */
	st = json_object_get(w.cluster, "status");
	json_object_del(st, "nextMemberName");
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_WRITE_STATUS);
	assert_string_equal(res.member_name, "");
	assert_true(res.status_changed);
	assert_string_equal(json_string_value(json_object_get(res.status, "nextMemberName")),
			    first);
	json_object_set(w.cluster, "status", res.status);
	eo_plan_result_clear(&res);
	assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
	assert_int_equal(res.action, EO_PLAN_CREATE_MEMBER);
	assert_string_equal(res.member_name, first);
	eo_plan_result_clear(&res);
	pws_world_free(&w);

	/* Once the member exists the status moves on to the next name, used by the next create. */
	{
		const struct pws_row r2 = {"",	 3, {V("demo-a", A), P(NULL, B)}, {EV("demo-a")}, 0,
					   NULL, 0};
		struct pws_row rr = r2;

		rr.members[1].name = first;
		pws_world_init(&w, &rr);
		assert_int_equal(eo_plan_cluster(&w.in, &res), 0);
		assert_int_equal(res.action, EO_PLAN_ADD_LEARNER);
		assert_string_equal(
		    json_string_value(json_object_get(res.status, "nextMemberName")), second);
		assert_true(res.status_changed);
		eo_plan_result_clear(&res);
		pws_world_free(&w);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_add_learner_details),
	    cmocka_unit_test(test_creates_are_idempotent),
	    cmocka_unit_test(test_initial_cluster_helper),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
