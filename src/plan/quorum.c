/*
 * plan/quorum.c - whether a removal keeps the quorum: of the voters today (so that the change
 * commits) and of the voters left (so that the cluster serves after it), with the members that
 * are down counted as down. Part of the cluster planner (plan/plan.h, plan/internal.h).
 */
#include "api/member.h"
#include "plan/internal.h"

/* Whether a member counts as a voter for quorum: marked, not being deleted, not dormant. */
bool eo__plan_counted_voter(const json_t *member)
{
	return eo_member_is_voter(member) && !eo_member_is_deleting(member) &&
	       !eo_member_dormant(member);
}

bool eo_plan_removal_keeps_quorum(const struct eo_plan_member *members, size_t n,
				  const struct eo_plan_member *victim, size_t *ready_after,
				  size_t *voters_after)
{
	size_t voters = 0, ready = 0, voters_left = 0, ready_left = 0;

	for (size_t i = 0; i < n; i++) {
		bool up = eo_plan_pod_ready(members[i].pod);

		if (!eo__plan_counted_voter(members[i].member))
			continue;
		voters++;
		ready += up;
		if (&members[i] == victim)
			continue;
		voters_left++;
		ready_left += up;
	}
	if (ready_after != NULL)
		*ready_after = ready_left;
	if (voters_after != NULL)
		*voters_after = voters_left;
	/* The change commits in today's membership, and the one after it keeps a quorum. */
	return voters_left > 0 && ready >= voters / 2 + 1 && ready_left >= voters_left / 2 + 1;
}

/*
 * Removes pm (its finalizer takes it out of etcd through the others) when the voters left
 * keep quorum with the members that are down counted as down; otherwise waits and says why.
 * Returns true either way (the step decided).
 */
bool eo__plan_remove_if_safe(struct eo__plan_ctx *x, const struct eo_plan_member *pm,
			     const char *what)
{
	size_t ready = 0, voters = 0, ready_now = 0, voters_now = 0;

	if (!eo_plan_removal_keeps_quorum(x->in->members, x->in->n_members, pm, &ready, &voters)) {
		(void)eo_plan_removal_keeps_quorum(x->in->members, x->in->n_members, NULL,
						   &ready_now, &voters_now);
		eo__plan_msgf(
		    x,
		    "%s waits: removing member %s needs a quorum of ready voters before and "
		    "after (%zu of %zu voting member(s) ready now, %zu of %zu without it)",
		    what, eo_member_name(pm->member), ready_now, voters_now, ready, voters);
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
		return true;
	}
	x->out->action = EO_PLAN_REMOVE_MEMBER;
	x->out->member = pm->member;
	return true;
}
