/*
 * plan/membership.c - one membership step of a bootstrapped cluster: etcd's member list is
 * read (through the voters; confirmed by the leader before acting on an absence), then the first
 * of the named steps with something to do decides: unmanaged etcd members, voter marks,
 * replacements (plan/replace.c), the storage change (plan/storage.c), scale down, joining and
 * promotion (plan/scale_up.c, plan/promote.c), the roll (plan/roll.c), scale up. Part of the
 * cluster planner (plan/plan.h, plan/internal.h).
 */
#include "api/cluster.h"
#include "api/member.h"
#include "plan/internal.h"

/* Membership needs etcd's member list: ask for it, or wait when it cannot be read. */
bool eo__plan_step_query(struct eo__plan_ctx *x)
{
	const struct eo_plan_input *in = x->in;

	if (!in->etcd_queried) {
		eo__plan_voter_endpoints(x);
		if (x->out->n_endpoints == 0) {
			eo__plan_msgf(x, "no member Pod to reach etcd through");
			eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
			return true;
		}
		eo__plan_msgf(x, "listing etcd's members through the voters");
		x->out->action = EO_PLAN_QUERY_MEMBERS;
		x->out->want_status = x->rv.todo > 0 || eo__plan_storage_wants_status(x);
		return true;
	}
	if (in->etcd_err != EO_ETCD_OK || in->etcd == NULL) {
		eo__plan_msgf(x, "cannot list etcd's members: %s", eo__plan_etcd_err_text(in));
		eo__plan_etcd_problem(x, eo__plan_unreachable_reason(in));
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_ETCD_MS);
		return true;
	}
	if (!eo_plan_same_cluster(in->cluster, in->etcd->cluster_id)) {
		char got[EO_PLAN_ID_MAX];

		eo_plan_format_id(in->etcd->cluster_id, got, sizeof(got));
		eo__plan_msgf(
		    x,
		    "the member list read through this cluster's member addresses is from etcd "
		    "cluster %s, not %s (status.clusterID): another etcd cluster answers there; "
		    "no membership change is made from it",
		    got, eo_cluster_cluster_id(in->cluster));
		eo__plan_event(x, "Warning", EO_PLAN_REASON_CLUSTER_ID_MISMATCH);
		eo__plan_etcd_problem(x, EO_PLAN_REASON_CLUSTER_ID_MISMATCH);
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_ETCD_MS);
		return true;
	}
	return false;
}

/*
 * Whether removing stray, an etcd member no EtcdMember stands for, is safe: a learner does not
 * vote; a voter that never started counts as down, so the ready voters (etcd's voters whose
 * member's Pod is ready) must be a quorum of today's voters and of the voters left. When not,
 * says so and waits.
 */
static bool stray_removal_keeps_quorum(struct eo__plan_ctx *x, const struct eo_etcd_member *stray,
				       const char *id)
{
	size_t voters = 0, ready = 0;

	if (stray->is_learner)
		return true;
	for (size_t i = 0; i < x->in->etcd->n; i++) {
		const struct eo_etcd_member *e = &x->in->etcd->v[i];
		const struct eo_plan_member *pm = NULL;

		if (e->is_learner)
			continue;
		voters++;
		if (e != stray && (pm = eo__plan_member_of(x, e)) != NULL &&
		    eo_plan_pod_ready(pm->pod))
			ready++;
	}
	if (voters > 1 && ready >= voters / 2 + 1 && ready >= (voters - 1) / 2 + 1)
		return true;
	eo__plan_msgf(
	    x,
	    "not removing etcd voter %s that never started: %zu of the %zu voters are ready, "
	    "no quorum to commit the change; waiting for voters to become ready",
	    id, ready, voters);
	eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
	return false;
}

/*
 * 1. Every etcd member must stand for an EtcdMember: a learner nobody manages (left by an
 * interrupted join) is removed; a voter nobody manages is never removed (the cluster waits).
 */
bool eo__plan_step_unmanaged(struct eo__plan_ctx *x)
{
	const struct eo_plan_input *in = x->in;
	const struct eo_etcd_member *stray = NULL, *unknown = NULL;
	char id[24];

	for (size_t i = 0; i < in->etcd->n; i++) {
		const struct eo_etcd_member *em = &in->etcd->v[i];

		if (eo__plan_member_of(x, em) != NULL)
			continue;
		if (em->is_learner || !eo_present(em->name)) {
			if (stray == NULL)
				stray = em;
		} else if (unknown == NULL) {
			unknown = em;
		}
	}
	if (!x->ok)
		return true;
	if (stray != NULL) {
		eo_plan_format_id(stray->id, id, sizeof(id));
		if (!stray_removal_keeps_quorum(x, stray, id))
			return true;
		eo__plan_msgf(x, "removing etcd %s %s (%s): no EtcdMember stands for it",
			      stray->is_learner ? "learner" : "voter that never started", id,
			      stray->n_peer_urls > 0 ? stray->peer_urls[0] : "no peer URL");
		eo__plan_voter_endpoints(x);
		x->out->action = EO_PLAN_REMOVE_STRAY;
		x->out->etcd_id = stray->id;
		x->out->requeue_ms = EO_PLAN_REQUEUE_PROMOTE_MS;
		return true;
	}
	if (unknown != NULL) {
		eo_plan_format_id(unknown->id, id, sizeof(id));
		eo__plan_msgf(
		    x, "etcd voting member %s (%s) has no EtcdMember; membership changes wait", id,
		    unknown->name);
		eo__plan_event(x, "Warning", EO_PLAN_REASON_UNKNOWN_MEMBER);
		eo__plan_etcd_problem(x, EO_PLAN_REASON_UNKNOWN_MEMBER);
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_ETCD_MS);
		return true;
	}
	return false;
}

/* 2. status.isVoter follows etcd (the Pod's voter label and the PDB follow it). */
bool eo__plan_step_voter_marks(struct eo__plan_ctx *x)
{
	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];
		const struct eo_etcd_member *em = NULL;
		bool voter;

		if (eo_member_is_deleting(pm->member))
			continue;
		em = eo__plan_etcd_entry(x, pm->member);
		voter = em != NULL && !em->is_learner;
		if (voter != eo_member_is_voter(pm->member)) {
			/* Unmarking takes a vote out of the quorum count and the PDB: leader only.
			 */
			if (!voter && !eo__plan_absence_verified(x, pm->member,
								 em == NULL ? "is missing from"
									    : "is a learner in"))
				return true;
			eo__plan_msgf(x, "member %s: marking it as %s", eo_member_name(pm->member),
				      voter ? "a voter" : "not a voter");
			x->out->action = EO_PLAN_SET_VOTER;
			x->out->member = pm->member;
			x->out->voter = voter;
			eo__plan_relabel_with_mark(x, pm, voter);
			return true;
		}
	}
	return false;
}

/* The first pending (joining, no initialCluster yet) member, or NULL. */
static const struct eo_plan_member *first_pending(const struct eo_plan_input *in)
{
	for (size_t i = 0; i < in->n_members; i++)
		if (!eo_member_is_deleting(in->members[i].member) &&
		    eo_member_is_pending(in->members[i].member))
			return &in->members[i];
	return NULL;
}

/*
 * One membership step towards desired (> 0) members, from etcd's member list: the first of
 * the named steps that has something to do decides.
 */
void eo__plan_step_membership(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
			      int32_t desired)
{
	const struct eo_plan_member *pending = NULL;
	size_t learners = 0;

	if (eo__plan_step_query(x)) {
		/* A member's node is past its grace: its Pod and Node are read live first. */
		if (x->out->action == EO_PLAN_QUERY_MEMBERS && c->node_due > 0)
			x->out->want_nodes = true;
		return;
	}
	for (size_t i = 0; i < x->in->etcd->n; i++)
		if (x->in->etcd->v[i].is_learner)
			learners++;
	pending = first_pending(x->in);
	if (eo__plan_step_unmanaged(x) || eo__plan_step_voter_marks(x) ||
	    eo__plan_step_replace_lost(x) || eo__plan_step_not_in_etcd(x) ||
	    eo__plan_step_replace_crashlooping(x, c, desired, learners) ||
	    eo__plan_step_replace_node(x, c, desired, learners) ||
	    eo__plan_step_storage(x, c, desired, learners) ||
	    eo__plan_step_scale_down(x, c, desired) ||
	    eo__plan_step_set_initial_cluster(x, pending) || eo__plan_step_promote(x, learners) ||
	    !x->ok)
		return;
	if (eo__plan_step_roll(x, c, desired, learners, pending) || !x->ok)
		return;
	eo__plan_step_scale_up(x, c, desired, pending);
}
