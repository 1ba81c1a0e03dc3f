/*
 * plan/promote.c - a learner is promoted once it serves; nothing else moves meanwhile. Part of
 * the cluster planner (plan/plan.h, plan/internal.h).
 */
#include "api/member.h"
#include "plan/internal.h"

/*
 * 6. A learner is promoted once it serves (eo_plan_member_serving: its Pod is ready and its
 * EtcdMember's Ready says etcd answered); nothing else moves meanwhile.
 */
bool eo__plan_step_promote(struct eo__plan_ctx *x, size_t learners)
{
	const struct eo_plan_member *waiting = NULL;

	if (learners == 0)
		return false;
	for (size_t i = 0; i < x->in->etcd->n; i++) {
		const struct eo_etcd_member *em = &x->in->etcd->v[i];
		const struct eo_plan_member *pm = NULL;

		if (!em->is_learner || (pm = eo__plan_member_of(x, em)) == NULL ||
		    eo_member_is_deleting(pm->member))
			continue;
		if (eo_plan_member_serving(pm->member, pm->pod)) {
			eo__plan_msgf(x, "promoting learner %s", eo_member_name(pm->member));
			eo__plan_voter_endpoints(x);
			x->out->action = EO_PLAN_PROMOTE_LEARNER;
			x->out->member = pm->member;
			x->out->etcd_id = em->id;
			eo__plan_relabel_with_mark(x, pm, true);
			return true;
		}
		if (waiting == NULL)
			waiting = pm;
	}
	eo__plan_msgf(x, "waiting for learner %s to become ready",
		      waiting != NULL ? eo_member_name(waiting->member) : "(being deleted)");
	eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
	return true;
}
