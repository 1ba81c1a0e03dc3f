/*
 * Unit tests for plan/etcd_outcome.c: what an etcd answer to each of the cluster plan's etcd
 * calls means (done, retry after how long, failed), one row per action and answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include "etcd/types.h"
#include "plan/etcd_outcome.h"
#include "plan/plan.h"
#include "plan/roll.h"

struct row {
	enum eo_plan_action action;
	eo_etcd_err e;
	enum eo_plan_etcd_verdict verdict;
	long retry_ms;
};

static void test_outcome_table(void **state)
{
	static const struct row rows[] = {
	    /* MemberAdd as a learner */
	    {EO_PLAN_ADD_LEARNER, EO_ETCD_OK, EO_PLAN_ETCD_DONE, 0},
	    {EO_PLAN_ADD_LEARNER, EO_ETCD_PEER_URL_EXISTS, EO_PLAN_ETCD_RETRY,
	     EO_PLAN_REQUEUE_PROMOTE_MS},
	    {EO_PLAN_ADD_LEARNER, EO_ETCD_TOO_MANY_LEARNERS, EO_PLAN_ETCD_RETRY,
	     EO_PLAN_REQUEUE_PROMOTE_MS},
	    {EO_PLAN_ADD_LEARNER, EO_ETCD_UNHEALTHY_CLUSTER, EO_PLAN_ETCD_RETRY,
	     EO_PLAN_REQUEUE_PROMOTE_MS},
	    {EO_PLAN_ADD_LEARNER, EO_ETCD_TIMEOUT, EO_PLAN_ETCD_RETRY, EO_PLAN_REQUEUE_PROMOTE_MS},
	    {EO_PLAN_ADD_LEARNER, EO_ETCD_INVALID, EO_PLAN_ETCD_FAILED, 0},
	    {EO_PLAN_ADD_LEARNER, EO_ETCD_AUTH, EO_PLAN_ETCD_FAILED, 0},
	    {EO_PLAN_ADD_LEARNER, EO_ETCD_NOTFOUND, EO_PLAN_ETCD_FAILED, 0},
	    /* MemberPromote */
	    {EO_PLAN_PROMOTE_LEARNER, EO_ETCD_OK, EO_PLAN_ETCD_DONE, 0},
	    {EO_PLAN_PROMOTE_LEARNER, EO_ETCD_NOT_LEARNER, EO_PLAN_ETCD_DONE, 0},
	    {EO_PLAN_PROMOTE_LEARNER, EO_ETCD_LEARNER_NOT_READY, EO_PLAN_ETCD_RETRY,
	     EO_PLAN_REQUEUE_PROMOTE_MS},
	    {EO_PLAN_PROMOTE_LEARNER, EO_ETCD_UNAVAILABLE, EO_PLAN_ETCD_RETRY,
	     EO_PLAN_REQUEUE_PROMOTE_MS},
	    {EO_PLAN_PROMOTE_LEARNER, EO_ETCD_LEARNER, EO_PLAN_ETCD_RETRY,
	     EO_PLAN_REQUEUE_PROMOTE_MS},
	    {EO_PLAN_PROMOTE_LEARNER, EO_ETCD_PEER_URL_EXISTS, EO_PLAN_ETCD_FAILED, 0},
	    {EO_PLAN_PROMOTE_LEARNER, EO_ETCD_NOTFOUND, EO_PLAN_ETCD_FAILED, 0},
	    {EO_PLAN_PROMOTE_LEARNER, EO_ETCD_INVALID, EO_PLAN_ETCD_FAILED, 0},
	    /* MemberRemove of a stray learner */
	    {EO_PLAN_REMOVE_STRAY, EO_ETCD_OK, EO_PLAN_ETCD_DONE, 0},
	    {EO_PLAN_REMOVE_STRAY, EO_ETCD_NOTFOUND, EO_PLAN_ETCD_DONE, 0},
	    {EO_PLAN_REMOVE_STRAY, EO_ETCD_UNHEALTHY_CLUSTER, EO_PLAN_ETCD_RETRY,
	     EO_PLAN_REQUEUE_PROMOTE_MS},
	    {EO_PLAN_REMOVE_STRAY, EO_ETCD_TRANSPORT, EO_PLAN_ETCD_FAILED, 0},
	    {EO_PLAN_REMOVE_STRAY, EO_ETCD_INVALID, EO_PLAN_ETCD_FAILED, 0},
	    /* MoveLeader: never a failure, the next pass looks again */
	    {EO_PLAN_MOVE_LEADER, EO_ETCD_OK, EO_PLAN_ETCD_DONE, EO_PLAN_REQUEUE_PROMOTE_MS},
	    {EO_PLAN_MOVE_LEADER, EO_ETCD_UNAVAILABLE, EO_PLAN_ETCD_RETRY, EO_PLAN_REQUEUE_ROLL_MS},
	    {EO_PLAN_MOVE_LEADER, EO_ETCD_INVALID, EO_PLAN_ETCD_RETRY, EO_PLAN_REQUEUE_ROLL_MS},
	    /* enabling auth: the next pass latches it, or tries again later */
	    {EO_PLAN_ENABLE_AUTH, EO_ETCD_OK, EO_PLAN_ETCD_DONE, EO_PLAN_REQUEUE_PROMOTE_MS},
	    {EO_PLAN_ENABLE_AUTH, EO_ETCD_AUTH, EO_PLAN_ETCD_RETRY, EO_PLAN_REQUEUE_ETCD_MS},
	    {EO_PLAN_ENABLE_AUTH, EO_ETCD_INVALID, EO_PLAN_ETCD_RETRY, EO_PLAN_REQUEUE_ETCD_MS},
	    /* an action without an etcd call of its own */
	    {EO_PLAN_NONE, EO_ETCD_OK, EO_PLAN_ETCD_DONE, 0},
	    {EO_PLAN_NONE, EO_ETCD_UNAVAILABLE, EO_PLAN_ETCD_FAILED, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct eo_plan_etcd_outcome o = eo_plan_etcd_outcome(r->action, r->e);

		if (o.verdict != r->verdict || o.retry_ms != r->retry_ms)
			fail_msg("row %zu (%s, %s): verdict %d retry %ld, want %d retry %ld", i,
				 eo_plan_action_name(r->action), eo_etcd_strerror(r->e), o.verdict,
				 o.retry_ms, r->verdict, r->retry_ms);
	}
}

static void test_retryable(void **state)
{
	static const eo_etcd_err yes[] = {EO_ETCD_LEARNER_NOT_READY, EO_ETCD_TOO_MANY_LEARNERS,
					  EO_ETCD_UNHEALTHY_CLUSTER, EO_ETCD_UNAVAILABLE,
					  EO_ETCD_TIMEOUT,	     EO_ETCD_LEARNER};
	size_t n_yes = 0;

	(void)state;
	for (int e = 0; e < EO_ETCD_ERR_COUNT_; e++) {
		bool want = false;

		for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
			want = want || yes[i] == (eo_etcd_err)e;
		n_yes += want;
		if (eo_plan_etcd_retryable((eo_etcd_err)e) != want)
			fail_msg("%s: retryable %d, want %d", eo_etcd_strerror((eo_etcd_err)e),
				 !want, want);
	}
	assert_int_equal(n_yes, sizeof(yes) / sizeof(yes[0]));
}

TU_MAIN(test_outcome_table, test_retryable)
