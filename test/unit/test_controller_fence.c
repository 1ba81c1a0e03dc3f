/*
 * Unit tests for controller/fence: an etcd membership change (add learner, promote, remove)
 * is sent only while the leader lease is held with at least the margin left; otherwise it is
 * refused before anything reaches etcd, as a retryable EO_ETCD_UNAVAILABLE with the reason.
 * A fake etcd gateway (the in-process fake HTTP server) counts what was sent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/fence.h"
#include "support/fake_apiserver.h"

struct gateway {
	pthread_mutex_t mu;
	int adds, promotes, removes;
};

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct gateway *g = ud;
	const char *members = "\"members\":[{\"ID\":\"1\",\"peerURLs\":[\"http://m1:2380\"]}]";

	pthread_mutex_lock(&g->mu);
	if (strcmp(rq->path, "/v3/cluster/member/add") == 0) {
		g->adds++;
		if (asprintf(&rs->body,
			     "{\"member\":{\"ID\":\"2\",\"peerURLs\":[\"http://m2:2380\"],"
			     "\"isLearner\":true},%s}",
			     members) < 0)
			rs->body = NULL;
	} else if (strcmp(rq->path, "/v3/cluster/member/promote") == 0 ||
		   strcmp(rq->path, "/v3/cluster/member/remove") == 0) {
		if (rq->path[19] == 'p')
			g->promotes++;
		else
			g->removes++;
		if (asprintf(&rs->body, "{%s}", members) < 0)
			rs->body = NULL;
	} else {
		rs->status = 404;
	}
	pthread_mutex_unlock(&g->mu);
}

static long left_ms; /* what the fake lease says is left */

static long held_for(void *ud)
{
	(void)ud;
	return left_ms;
}

struct fixture {
	struct gateway g;
	eo_kube_fake *fake;
	eo_etcd_client *ec;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	const char *eps[1];

	pthread_mutex_init(&fx->g.mu, NULL);
	fx->fake = eo_kube_fake_start(handler, &fx->g);
	if (fx->fake == NULL)
		return -1;
	eps[0] = eo_kube_fake_url(fx->fake);
	if (eo_etcd_client_new(
		&(struct eo_etcd_config){.endpoints = eps, .n_endpoints = 1, .timeout_ms = 2000},
		&fx->ec, NULL) != EO_ETCD_OK)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	eo_etcd_client_free(fx->ec);
	eo_kube_fake_stop(fx->fake);
	pthread_mutex_destroy(&fx->g.mu);
	free(fx);
	return 0;
}

static void test_allows(void **state)
{
	static const struct {
		const char *name;
		bool has_fn;
		long left, margin;
		bool allowed;
	} cases[] = {
	    {"no fence (leader election off)", false, 0, 0, true},
	    {"fresh renew, default margin", true, 9000, 0, true},
	    {"exactly the margin left", true, 5000, 5000, true},
	    {"one ms short of the default margin", true, 4999, 0, false},
	    {"not leading", true, 0, 0, false},
	    {"custom margin met", true, 1500, 1000, true},
	    {"custom margin missed", true, 900, 1000, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct eo_fence f = {cases[i].has_fn ? held_for : NULL, NULL, cases[i].margin};
		char why[256] = "";

		left_ms = cases[i].left;
		if (eo_fence_allows(&f, why, sizeof(why)) != cases[i].allowed)
			fail_msg("%s: expected %s", cases[i].name,
				 cases[i].allowed ? "allowed" : "refused");
		if (!cases[i].allowed && strstr(why, "leader lease held for") == NULL)
			fail_msg("%s: reason \"%s\"", cases[i].name, why);
	}
	assert_true(eo_fence_allows(NULL, NULL, 0));
}

static void test_wrappers_send_only_when_held(void **state)
{
	struct fixture *fx = *state;
	struct eo_fence f = {held_for, NULL, 5000};
	const char *peer = "http://m2:2380";
	struct eo_etcd_member added = {0};
	struct eo_etcd_detail d;

	/* Lease renewed recently: every call reaches etcd. */
	left_ms = 9000;
	assert_int_equal(eo_fenced_member_add(&f, fx->ec, &peer, 1, true, &added, NULL, &d),
			 EO_ETCD_OK);
	assert_true(added.id == 2);
	eo_etcd_member_clear(&added);
	assert_int_equal(eo_fenced_member_promote(&f, fx->ec, 2, NULL, &d), EO_ETCD_OK);
	assert_int_equal(eo_fenced_member_remove(&f, fx->ec, 2, NULL, NULL), EO_ETCD_OK);
	assert_int_equal(fx->g.adds, 1);
	assert_int_equal(fx->g.promotes, 1);
	assert_int_equal(fx->g.removes, 1);

	/* Renewals failing for a while: nothing is sent, the caller gets a retryable error. */
	left_ms = 3000;
	assert_int_equal(eo_fenced_member_add(&f, fx->ec, &peer, 1, true, &added, NULL, &d),
			 EO_ETCD_UNAVAILABLE);
	assert_non_null(strstr(d.message, "leader lease held for 3000 ms more"));
	assert_string_equal(d.endpoint, "");
	assert_int_equal(eo_fenced_member_promote(&f, fx->ec, 2, NULL, &d), EO_ETCD_UNAVAILABLE);
	assert_int_equal(eo_fenced_member_remove(&f, fx->ec, 2, NULL, &d), EO_ETCD_UNAVAILABLE);
	assert_int_equal(eo_fenced_member_remove(&f, fx->ec, 2, NULL, NULL), EO_ETCD_UNAVAILABLE);
	assert_int_equal(fx->g.adds, 1);
	assert_int_equal(fx->g.promotes, 1);
	assert_int_equal(fx->g.removes, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_allows),
	    cmocka_unit_test_setup_teardown(test_wrappers_send_only_when_held, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
