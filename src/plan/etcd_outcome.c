/*
 * plan/etcd_outcome.c - what an etcd answer to one of the cluster plan's etcd calls means
 * (plan/etcd_outcome.h).
 */
#include "plan/etcd_outcome.h"

#include "plan/roll.h"

bool eo_plan_etcd_retryable(eo_etcd_err e)
{
	return e == EO_ETCD_LEARNER_NOT_READY || e == EO_ETCD_TOO_MANY_LEARNERS ||
	       e == EO_ETCD_UNHEALTHY_CLUSTER || e == EO_ETCD_UNAVAILABLE || e == EO_ETCD_TIMEOUT ||
	       e == EO_ETCD_LEARNER;
}

static struct eo_plan_etcd_outcome outcome(enum eo_plan_etcd_verdict v, long retry_ms)
{
	return (struct eo_plan_etcd_outcome){.verdict = v, .retry_ms = retry_ms};
}

/* MemberAdd (as a learner): a member with this peer URL is there already (an earlier try). */
static struct eo_plan_etcd_outcome add_learner(eo_etcd_err e)
{
	if (e == EO_ETCD_PEER_URL_EXISTS || eo_plan_etcd_retryable(e))
		return outcome(EO_PLAN_ETCD_RETRY, EO_PLAN_REQUEUE_PROMOTE_MS);
	return outcome(e == EO_ETCD_OK ? EO_PLAN_ETCD_DONE : EO_PLAN_ETCD_FAILED, 0);
}

/* MemberPromote: a member that is not a learner any more was promoted already. */
static struct eo_plan_etcd_outcome promote(eo_etcd_err e)
{
	if (eo_plan_etcd_retryable(e))
		return outcome(EO_PLAN_ETCD_RETRY, EO_PLAN_REQUEUE_PROMOTE_MS);
	if (e == EO_ETCD_OK || e == EO_ETCD_NOT_LEARNER)
		return outcome(EO_PLAN_ETCD_DONE, 0);
	return outcome(EO_PLAN_ETCD_FAILED, 0);
}

/* MemberRemove of a stray learner: one that is gone already is removed. */
static struct eo_plan_etcd_outcome remove_stray(eo_etcd_err e)
{
	if (e == EO_ETCD_OK || e == EO_ETCD_NOTFOUND)
		return outcome(EO_PLAN_ETCD_DONE, 0);
	if (eo_plan_etcd_retryable(e))
		return outcome(EO_PLAN_ETCD_RETRY, EO_PLAN_REQUEUE_PROMOTE_MS);
	return outcome(EO_PLAN_ETCD_FAILED, 0);
}

struct eo_plan_etcd_outcome eo_plan_etcd_outcome(enum eo_plan_action action, eo_etcd_err e)
{
	switch (action) {
	case EO_PLAN_ADD_LEARNER:
		return add_learner(e);
	case EO_PLAN_PROMOTE_LEARNER:
		return promote(e);
	case EO_PLAN_REMOVE_STRAY:
		return remove_stray(e);
	case EO_PLAN_MOVE_LEADER:
		/* Not the leader any more, an election under way: the next pass looks again. */
		return e == EO_ETCD_OK ? outcome(EO_PLAN_ETCD_DONE, EO_PLAN_REQUEUE_PROMOTE_MS)
				       : outcome(EO_PLAN_ETCD_RETRY, EO_PLAN_REQUEUE_ROLL_MS);
	case EO_PLAN_ENABLE_AUTH:
		/* Each step of enabling auth tolerates a previous run; the next pass latches it. */
		return e == EO_ETCD_OK ? outcome(EO_PLAN_ETCD_DONE, EO_PLAN_REQUEUE_PROMOTE_MS)
				       : outcome(EO_PLAN_ETCD_RETRY, EO_PLAN_REQUEUE_ETCD_MS);
	default:
		return outcome(e == EO_ETCD_OK ? EO_PLAN_ETCD_DONE : EO_PLAN_ETCD_FAILED, 0);
	}
}
