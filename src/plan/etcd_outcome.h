/*
 * plan/etcd_outcome.h - what an etcd answer to one of the cluster plan's etcd calls means for
 * the pass: the call is done, it is to be tried again after a while (the answer means "not now",
 * or the state it asked for is already there and the next pass sees it), or it failed.
 *
 * The act layer (controller/act_etcd.c) makes the call, asks eo_plan_etcd_outcome() what the
 * answer means, and carries that out (logs, Events, the requeue). Pure: no I/O.
 */
#ifndef EO_PLAN_ETCD_OUTCOME_H
#define EO_PLAN_ETCD_OUTCOME_H

#include "etcd/types.h"
#include "plan/plan.h"

enum eo_plan_etcd_verdict {
	EO_PLAN_ETCD_DONE = 0, /* the call did what was asked, or it was already so */
	EO_PLAN_ETCD_RETRY,    /* not a failure: come back after retry_ms */
	EO_PLAN_ETCD_FAILED,   /* the action failed (the pass reports an error, with backoff) */
};

struct eo_plan_etcd_outcome {
	enum eo_plan_etcd_verdict verdict;
	long retry_ms; /* the pass comes back after this long; 0: no requeue of its own */
};

/*
 * Whether an etcd answer means "not now" rather than failure (a learner not in sync yet, the
 * learner limit, an unhealthy cluster, no leader, a timeout, only learners left).
 */
bool eo_plan_etcd_retryable(eo_etcd_err e);

/*
 * What the answer e to the etcd call of action means. The actions with an etcd call are
 * EO_PLAN_ADD_LEARNER, EO_PLAN_PROMOTE_LEARNER, EO_PLAN_REMOVE_STRAY, EO_PLAN_MOVE_LEADER and
 * EO_PLAN_ENABLE_AUTH; any other action gets DONE on EO_ETCD_OK and FAILED otherwise.
 * EO_ETCD_INVALID stands for "no client could be made".
 */
struct eo_plan_etcd_outcome eo_plan_etcd_outcome(enum eo_plan_action action, eo_etcd_err e);

#endif
