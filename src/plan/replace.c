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

/* Says that pm waits to move until every other voter serves (a drain in progress). */
static bool wait_others(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
			const struct eo_plan_member *pm, const struct eo_node_verdict *v)
{
	eo__plan_msgf(x,
		      "member %s: %s; moving it to another node waits until every other voter is "
		      "ready (%zu of %zu voters ready)",
		      eo_member_name(pm->member), v->why, c->voters_ready, c->voters);
	eo__plan_event(x, "Warning", EO_PLAN_REASON_NODE_DRAINING);
	eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
	return true;
}

/*
 * The removal of pm for its node: only when the voters left keep a quorum, on the Pod and Node
 * read live this pass (nodes_live) and etcd's leader's own list naming it. what: why now.
 */
static bool remove_for_node(struct eo__plan_ctx *x, const struct eo_plan_member *pm,
			    const struct eo_node_verdict *v, const char *what)
{
	const char *name = eo_member_name(pm->member);
	size_t ready = 0, voters = 0;

	if (!eo_plan_removal_keeps_quorum(x->in->members, x->in->n_members, pm, &ready, &voters)) {
		eo__plan_msgf(
		    x,
		    "member %s: %s; it is not replaced: removing it would cost the quorum "
		    "(%zu ready of %zu voting member(s) would be left)",
		    name, v->why, ready, voters);
		eo__plan_event(x, "Warning",
			       v->lost ? EO_PLAN_REASON_NODE_NOT_READY
				       : EO_PLAN_REASON_NODE_DRAINING);
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_ETCD_MS);
		return true;
	}
	if (!x->in->nodes_live) {
		/* The first plan of the next pass asks for the live reads (want_nodes). */
		eo__plan_msgf(x, "member %s: %s; reading its Pod and Node live before replacing it",
			      name, v->why);
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_PROMOTE_MS);
		return true;
	}
	if (!eo__plan_absence_verified(x, pm->member, "is to be replaced for its node; it is in"))
		return true;
	eo__plan_msgf(x, "member %s: %s; %s", name, v->why, what);
	eo__plan_event(x, "Warning", EO_PLAN_REASON_NODE_LOST);
	x->out->action = EO_PLAN_REMOVE_MEMBER;
	x->out->member = pm->member;
	return true;
}

/*
 * The replacement j of pm (moved add-before-remove) joins: it is added to etcd as a learner,
 * given its initial cluster and promoted, as a scale-up member is; while its Pod cannot be
 * placed on any node, the cluster says so and nothing is removed.
 */
static bool move_join(struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired,
		      size_t learners, const struct eo_plan_member *pm,
		      const struct eo_node_verdict *v, const struct eo_plan_member *j)
{
	const struct eo_plan_member *pending = eo_member_is_pending(j->member) ? j : NULL;
	char why[EO_NODE_WHY_MAX];

	if (eo_plan_node_move_blocked(j, x->in->now, why, sizeof(why))) {
		eo__plan_msgf(x,
			      "member %s: %s; its replacement %s cannot be placed on another node "
			      "(%s): %s keeps running and nothing is removed until a node can take "
			      "%s",
			      eo_member_name(pm->member), v->why, eo_member_name(j->member), why,
			      eo_member_name(pm->member), eo_member_name(j->member));
		eo__plan_event(x, "Warning", EO_PLAN_REASON_NODE_MOVE_BLOCKED);
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_ETCD_MS);
		return true;
	}
	if (eo__plan_step_set_initial_cluster(x, pending))
		return true;
	if (learners > 0)
		return eo__plan_step_promote(x, learners);
	if (pending != NULL) {
		eo__plan_step_scale_up(x, c, desired + 1, pending);
		return true;
	}
	eo__plan_msgf(x, "member %s: waiting for its replacement %s to be marked a voter",
		      eo_member_name(pm->member), eo_member_name(j->member));
	eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
	return true;
}

/*
 * A member that still serves on a cordoned or evacuated node past its grace moves
 * add-before-remove (plan/nodeloss.h, eo_plan_node_move_first): with the cluster at its size,
 * a replacement is created (the scheduler puts it on another node: the cordoned one takes no
 * Pod); with that one extra member, the replacement joins and is promoted (move_join); once it
 * votes, the member is removed through the quorum. One member at a time, only while every
 * other voter serves. False when something else must move first (a scale-up short of the
 * target, a scale-down above it, another join).
 */
static bool move_first(struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired,
		       size_t learners, const struct eo_plan_member *pm,
		       const struct eo_node_verdict *v)
{
	const struct eo_plan_member *j = eo_plan_node_joining(x->in->members, x->in->n_members);
	const char *name = eo_member_name(pm->member);

	if ((int32_t)c->n < desired || (int32_t)c->n > desired + 1)
		return false;
	if ((int32_t)c->n == desired) {
		if (j != NULL || learners > 0 || c->pending > 0)
			return false;
		if (others_down(x, pm) > 0)
			return wait_others(x, c, pm, v);
		eo__plan_msgf(
		    x,
		    "member %s: %s; moving it: a replacement is created on another node "
		    "first, joins as a learner and is promoted, then %s is removed through "
		    "the quorum",
		    name, v->why, name);
		eo__plan_event(x, "Normal", EO_PLAN_REASON_NODE_MOVING);
		eo__plan_create_named(x, EO_PLAN_CREATE_MEMBER);
		return true;
	}
	if (j != NULL)
		return move_join(x, c, desired, learners, pm, v, j);
	if (learners > 0)
		return false;
	if (others_down(x, pm) > 0)
		return wait_others(x, c, pm, v);
	return remove_for_node(x, pm, v,
			       "its replacement has joined and votes: removing it through the "
			       "quorum");
}

/*
 * 3d. A voter whose node is lost (NotReady or gone) or taken out of service (cordoned,
 * annotated evacuate) past spec.nodeLossGracePeriod (plan/nodeloss.h). One that still serves on
 * a cordoned or evacuated node moves add-before-remove (move_first; not past the progress
 * deadline, which creates nothing beyond the size it had). Any other (its node lost, or its Pod
 * already evicted) is removed through the quorum first and the scale-up path replaces it with
 * a new member and a new PVC, which the scheduler puts on another node: only while nothing
 * else is changing, only when the voters left keep a quorum, a cordoned or evacuated member
 * only when every other voter is ready (its own Pod may be the one a drain evicted, Pending on
 * its node-local volume), and only on the Pod and Node read live this pass (nodes_live) and
 * etcd's leader's own list naming it.
 */
bool eo__plan_step_replace_node(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
				int32_t desired, size_t learners)
{
	long grace = eo_cluster_node_loss_grace_seconds(x->in->cluster);
	char what[128];

	if (c->node_due == 0 || c->deleting > 0)
		return false;
	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];
		const struct eo_etcd_member *em = NULL;
		struct eo_node_verdict v;

		if (!eo_plan_member_node_trouble(pm, eo__plan_node_of(x->in, pm), grace, x->in->now,
						 &v) ||
		    !v.due || (em = eo__plan_etcd_entry(x, pm->member)) == NULL || em->is_learner)
			continue;
		if (!x->held && eo_plan_node_move_first(pm, &v))
			return move_first(x, c, desired, learners, pm, &v);
		if ((int32_t)c->n > desired || learners > 0 || c->pending > 0)
			return false;
		if (!v.lost && others_down(x, pm) > 0)
			return wait_others(x, c, pm, &v);
		snprintf(what, sizeof(what),
			 "past the grace period (%ld s): removing it through the quorum to replace "
			 "it with a new member and a new PVC on another node",
			 v.trouble == EO_NODE_EVACUATE ? 0L : grace);
		return remove_for_node(x, pm, &v, what);
	}
	return !x->ok;
}
