/*
 * plan/needs.c - what a plan asks to be observed beyond the caches before it is acted on
 * (plan/needs.h).
 */
#include "plan/needs.h"

#include "api/cluster.h"
#include "api/member.h"

/* Whether member is one of in's members (the plan names members by their pointers). */
static bool among_members(const struct eo_plan_input *in, const json_t *member)
{
	for (size_t i = 0; member != NULL && i < in->n_members; i++)
		if (in->members[i].member == member)
			return true;
	return false;
}

enum eo_plan_need eo_plan_cluster_needs(const struct eo_plan_result *r,
					const struct eo_plan_input *in, enum eo_plan_need after)
{
	if (after < EO_PLAN_NEED_ETCD && r->action == EO_PLAN_QUERY_MEMBERS && !in->etcd_queried)
		return EO_PLAN_NEED_ETCD;
	/* A step is about to act on a member's absence: only on the leader's own list. */
	if (after < EO_PLAN_NEED_LEADER && r->action == EO_PLAN_QUERY_MEMBERS && r->want_leader &&
	    in->etcd != NULL && !in->etcd_leader_checked)
		return EO_PLAN_NEED_LEADER;
	/* A storage change reads the class of the PVC to grow (allowVolumeExpansion) live. */
	if (after < EO_PLAN_NEED_CLASS && r->action == EO_PLAN_READ_CLASS && !in->class_read)
		return EO_PLAN_NEED_CLASS;
	/* A member is removed only on what the apiserver says now, not on the cache alone. */
	if (r->action == EO_PLAN_REMOVE_MEMBER && among_members(in, r->member))
		return EO_PLAN_NEED_CONFIRM;
	return EO_PLAN_NEED_NONE;
}

enum eo_mplan_need eo_member_plan_needs(const struct eo_mplan_result *r,
					const struct eo_mplan_input *in, enum eo_mplan_need after)
{
	enum eo_mplan_action a = r->action;

	if (after < EO_MPLAN_NEED_CREDENTIALS &&
	    (a == EO_MPLAN_QUERY_ETCD || a == EO_MPLAN_REMOVE_MEMBER) && in->cluster != NULL &&
	    !eo_cluster_is_deleting(in->cluster))
		return EO_MPLAN_NEED_CREDENTIALS;
	if (after < EO_MPLAN_NEED_ETCD && a == EO_MPLAN_QUERY_ETCD)
		return EO_MPLAN_NEED_ETCD;
	if (after < EO_MPLAN_NEED_PVC &&
	    (a == EO_MPLAN_CREATE_PVC ||
	     (a == EO_MPLAN_WAIT && eo_plan_data_volume_lost(in->member, in->pvc))))
		return EO_MPLAN_NEED_PVC;
	if (after < EO_MPLAN_NEED_CLASS && a == EO_MPLAN_READ_CLASS)
		return EO_MPLAN_NEED_CLASS;
	if (after < EO_MPLAN_NEED_VOLUME && a == EO_MPLAN_READ_VOLUME)
		return EO_MPLAN_NEED_VOLUME;
	if (after < EO_MPLAN_NEED_MEMBER && a == EO_MPLAN_PATCH_POD &&
	    !eo_member_is_voter(in->member))
		return EO_MPLAN_NEED_MEMBER;
	return EO_MPLAN_NEED_NONE;
}
