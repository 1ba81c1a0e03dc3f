/*
 * plan/scale_down.c - scale down, one member at a time: which member goes (a member that never
 * joined, then a learner, then a voter that is down, then the newest), and only when the
 * removal keeps the quorum (plan/quorum.c). Part of the cluster planner (plan/plan.h,
 * plan/internal.h).
 */
#include <stdio.h>

#include "api/member.h"
#include "plan/internal.h"

/* Rank of a scale-down candidate: lower goes first. */
static int scale_down_rank(const struct eo_plan_member *pm)
{
	if (eo_member_is_pending(pm->member))
		return 0; /* never joined: nothing in etcd needs it */
	if (!eo_member_is_voter(pm->member))
		return 1; /* a learner: holds no vote */
	if (!eo_plan_pod_ready(pm->pod))
		return 2; /* a voter that is down: removing it costs no live redundancy */
	return 3;
}

const struct eo_plan_member *eo_plan_scale_down_victim(const struct eo_plan_member *members,
						       size_t n)
{
	const struct eo_plan_member *victim = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct eo_plan_member *pm = &members[i];
		int d;

		if (eo_member_is_deleting(pm->member))
			continue;
		if (victim == NULL) {
			victim = pm;
			continue;
		}
		d = scale_down_rank(pm) - scale_down_rank(victim);
		if (d < 0 || (d == 0 && eo__plan_newer(pm->member, victim->member) > 0))
			victim = pm;
	}
	return victim;
}

/*
 * 4. Scale down, one member at a time: a member that never joined, then a learner, then a voter
 * that is not ready, then the newest (creationTimestamp, then name) - and only when the voters
 * left keep quorum with the members that are down counted as down. Deleting the EtcdMember
 * lets its finalizer remove it from etcd.
 */
bool eo__plan_step_scale_down(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
			      int32_t desired)
{
	const struct eo_plan_member *victim = NULL;
	char what[64];

	if ((int32_t)c->n <= desired || x->held)
		return false;
	victim = eo_plan_scale_down_victim(x->in->members, x->in->n_members);
	if (victim == NULL)
		return false;
	snprintf(what, sizeof(what), "scaling down from %zu to %d member(s)", c->n, desired);
	eo__plan_remove_if_safe(x, victim, what);
	if (x->out->action == EO_PLAN_REMOVE_MEMBER)
		eo__plan_msgf(x, "%s: removing member %s", what, eo_member_name(victim->member));
	return true;
}
