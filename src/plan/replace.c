/*
 * plan/replace.c - replacement of a member that cannot come back: one that lost its data (a
 * memory member its Pod, a member its PVC or its WAL), one etcd does not list, a voter whose
 * etcd crash-loops, a voter whose node is lost or drained past its grace (plan/nodeloss.h).
 * Each is removed through the quorum and the scale-up path replaces it. Part of the cluster
 * planner (plan/plan.h, plan/internal.h).
 */
#include "api/cluster.h"
#include "api/member.h"
#include "plan/internal.h"
#include "plan/nodeloss.h"

/*
 * 3. A member that lost its data (a memory member its Pod, a PVC member its PVC) must never
 * start again under its member ID: remove it through the others, who keep quorum; the
 * scale-up path replaces it.
 */
bool eo__plan_step_replace_lost(struct eo__plan_ctx *x)
{
	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];

		if (eo_plan_memory_member_lost(pm->member, pm->pod))
			eo__plan_msgf(
			    x,
			    "memory member %s lost its Pod and its data; removing it to replace it",
			    eo_member_name(pm->member));
		else if (eo_plan_data_volume_lost(pm->member, pm->pvc))
			eo__plan_msgf(
			    x,
			    "member %s lost its data volume (PVC %s); removing it from etcd to "
			    "replace it with a new member",
			    eo_member_name(pm->member), pm->pvc == NULL ? "gone" : "replaced");
		else if (eo_plan_data_dir_lost(pm->member, pm->pod, NULL, 0))
			eo__plan_msgf(
			    x,
			    "member %s: data directory has no WAL (its data was wiped under an "
			    "intact PVC; the data guard kept etcd from starting); removing it from "
			    "etcd to replace it with a new member",
			    eo_member_name(pm->member));
		else
			continue;
		if (eo__plan_remove_if_safe(x, pm, "replacing a member that lost its data") &&
		    x->out->action == EO_PLAN_REMOVE_MEMBER)
			eo__plan_event(x, "Warning", EO_PLAN_REASON_MEMBER_REPLACED);
		return true;
	}
	return false;
}

/*
 * 3b. A member that was given its initial cluster but that etcd does not list (removed behind
 * our back): its Pod can never join. Delete it (nothing to remove in etcd); the scale-up path
 * replaces it.
 */
bool eo__plan_step_not_in_etcd(struct eo__plan_ctx *x)
{
	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];

		if (eo_member_is_deleting(pm->member) || eo_member_is_pending(pm->member) ||
		    eo__plan_etcd_entry(x, pm->member) != NULL)
			continue;
		if (!eo__plan_absence_verified(x, pm->member, "is missing from"))
			return true;
		eo__plan_msgf(x,
			      "member %s is not in etcd's member list; removing it to replace it",
			      eo_member_name(pm->member));
		eo__plan_event(x, "Warning", "MemberLost");
		x->out->action = EO_PLAN_REMOVE_MEMBER;
		x->out->member = pm->member;
		return true;
	}
	return false;
}

/*
 * 3c. A voter whose etcd crash-loops (corrupt data dir, full disk, ...) is removed and replaced
 * by a new member with fresh storage - but only when nothing else is changing and the other
 * voters hold quorum without it, so that MemberRemove commits and the cluster keeps every
 * acknowledged write. A crash-looping learner is left alone: it holds no data the cluster
 * needs and the deadline tells about the stuck scale-up.
 */
bool eo__plan_step_replace_crashlooping(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
					int32_t desired, size_t learners)
{
	if ((int32_t)c->n > desired || learners > 0 || c->pending > 0 || c->deleting > 0)
		return false;
	/*
	 * Not during a roll: a member that crash-loops on its new Pod (a bad version, a bad
	 * option) stops the roll at the deadline rather than being replaced by another member
	 * built from the same spec.
	 */
	if (x->rv.todo > 0)
		return false;
	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];
		const struct eo_etcd_member *em = NULL;
		char why[128];

		if (!eo_plan_member_crashlooping(pm->member, pm->pod, why, sizeof(why)) ||
		    (em = eo__plan_etcd_entry(x, pm->member)) == NULL || em->is_learner ||
		    !eo_plan_removal_keeps_quorum(x->in->members, x->in->n_members, pm, NULL, NULL))
			continue;
		eo__plan_msgf(x,
			      "member %s is crash-looping (%s) while the other voters hold quorum; "
			      "removing it to replace it with a new member",
			      eo_member_name(pm->member), why);
		eo__plan_event(x, "Warning", EO_PLAN_REASON_MEMBER_REPLACED);
		x->out->action = EO_PLAN_REMOVE_MEMBER;
		x->out->member = pm->member;
		return true;
	}
	return !x->ok;
}

/* Voters other than pm that do not serve (a drained member moves only when there are none). */
static size_t others_down(const struct eo__plan_ctx *x, const struct eo_plan_member *pm)
{
	size_t n = 0;

	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *o = &x->in->members[i];

		n += o != pm && eo__plan_counted_voter(o->member) &&
		     !eo_plan_member_serving(o->member, o->pod);
	}
	return n;
}

/*
 * 3d. A voter whose node is lost (NotReady or gone) or taken out of service (cordoned,
 * annotated evacuate) past spec.nodeLossGracePeriod (plan/nodeloss.h) is removed through the
 * quorum and the scale-up path replaces it with a new member and a new PVC, which the scheduler
 * puts on another node. Only while nothing else is changing, only when the voters left keep a
 * quorum, a cordoned or evacuated member only when every other voter is ready (its own Pod may
 * be the one a drain evicted, Pending on its node-local volume), and only on the Pod
 * and Node read live this pass (nodes_live) and etcd's leader's own list naming it.
 */
bool eo__plan_step_replace_node(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
				int32_t desired, size_t learners)
{
	long grace = eo_cluster_node_loss_grace_seconds(x->in->cluster);
	size_t ready = 0, voters = 0;

	if (c->node_due == 0 || (int32_t)c->n > desired || learners > 0 || c->pending > 0 ||
	    c->deleting > 0)
		return false;
	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];
		const struct eo_etcd_member *em = NULL;
		struct eo_node_verdict v;
		const char *name = eo_member_name(pm->member);

		if (!eo_plan_member_node_trouble(pm, eo__plan_node_of(x->in, pm), grace, x->in->now,
						 &v) ||
		    !v.due || (em = eo__plan_etcd_entry(x, pm->member)) == NULL || em->is_learner)
			continue;
		if (!v.lost && others_down(x, pm) > 0) {
			eo__plan_msgf(
			    x,
			    "member %s: %s; moving it to another node waits until every other "
			    "voter is ready (%zu of %zu voters ready)",
			    name, v.why, c->voters_ready, c->voters);
			eo__plan_event(x, "Warning", EO_PLAN_REASON_NODE_DRAINING);
			eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
			return true;
		}
		if (!eo_plan_removal_keeps_quorum(x->in->members, x->in->n_members, pm, &ready,
						  &voters)) {
			eo__plan_msgf(
			    x,
			    "member %s: %s; it is not replaced: removing it would cost the quorum "
			    "(%zu ready of %zu voting member(s) would be left)",
			    name, v.why, ready, voters);
			eo__plan_event(x, "Warning",
				       v.lost ? EO_PLAN_REASON_NODE_NOT_READY
					      : EO_PLAN_REASON_NODE_DRAINING);
			eo__plan_wait_for(x, EO_PLAN_REQUEUE_ETCD_MS);
			return true;
		}
		if (!x->in->nodes_live) {
			/* The first plan of the next pass asks for the live reads (want_nodes). */
			eo__plan_msgf(
			    x, "member %s: %s; reading its Pod and Node live before replacing it",
			    name, v.why);
			eo__plan_wait_for(x, EO_PLAN_REQUEUE_PROMOTE_MS);
			return true;
		}
		if (!eo__plan_absence_verified(x, pm->member,
					       "is to be replaced for its node; it is in"))
			return true;
		eo__plan_msgf(
		    x,
		    "member %s: %s; past the grace period (%ld s): removing it through the quorum "
		    "to replace it with a new member and a new PVC on another node",
		    name, v.why, v.trouble == EO_NODE_EVACUATE ? 0L : grace);
		eo__plan_event(x, "Warning", EO_PLAN_REASON_NODE_LOST);
		x->out->action = EO_PLAN_REMOVE_MEMBER;
		x->out->member = pm->member;
		return true;
	}
	return !x->ok;
}
