/*
 * plan/storage.c - storage that changes on a running cluster (plan/storage.h), and the cluster
 * planner's step that replaces the outdated members one at a time (plan/plan.h,
 * plan/internal.h).
 */
#include "plan/storage.h"

#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/quantity.h"
#include "plan/internal.h"
#include "plan/nodeloss.h"

static const char *const change_names[] = {
    [EO_STORAGE_CURRENT] = "current",
    [EO_STORAGE_EXPAND] = "expand",
    [EO_STORAGE_REPLACE] = "replace",
};

const char *eo_storage_change_name(enum eo_storage_change c)
{
	return EO_ENUM_NAME(change_names, c, "unknown");
}

static bool same_class(const struct eo_storage *a, const struct eo_storage *b)
{
	if (a->has_class != b->has_class)
		return false;
	return !a->has_class || strcmp(a->class_name != NULL ? a->class_name : "",
				       b->class_name != NULL ? b->class_name : "") == 0;
}

enum eo_storage_change eo_plan_storage_change(const struct eo_storage *have,
					      const struct eo_storage *want,
					      enum eo_class_expansion expansion)
{
	bool grows = have->size_valid && want->size_valid &&
		     eo_quantity_cmp(&have->size_q, &want->size_q) < 0;

	if (have->memory != want->memory)
		return EO_STORAGE_REPLACE;
	if (have->memory)
		return grows ? EO_STORAGE_REPLACE : EO_STORAGE_CURRENT; /* the class is unused */
	if (!same_class(have, want))
		return EO_STORAGE_REPLACE;
	if (!grows)
		return EO_STORAGE_CURRENT;
	return expansion == EO_CLASS_EXPANSION_YES ? EO_STORAGE_EXPAND : EO_STORAGE_REPLACE;
}

bool eo_plan_member_storage_current(const json_t *member, const json_t *observed)
{
	struct eo_storage have, want;

	if (!json_is_object(observed))
		return true;
	eo_member_storage(member, &have);
	eo_storage_read(json_object_get(observed, "storage"), &want);
	/* Whatever the class allows: a member is outdated until it has the target's storage. */
	return eo_plan_storage_change(&have, &want, EO_CLASS_EXPANSION_YES) == EO_STORAGE_CURRENT;
}

/* A member that has joined (not being deleted, not pending, a voter, not dormant). */
static bool settled_voter(const json_t *m)
{
	return !eo_member_is_deleting(m) && !eo_member_is_pending(m) && eo_member_is_voter(m) &&
	       !eo_member_dormant(m);
}

const struct eo_plan_member *eo_plan_storage_victim(const struct eo_plan_member *members, size_t n,
						    const json_t *observed)
{
	const struct eo_plan_member *victim = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct eo_plan_member *pm = &members[i];
		bool down, victim_down;

		if (!settled_voter(pm->member) ||
		    eo_plan_member_storage_current(pm->member, observed))
			continue;
		if (victim == NULL) {
			victim = pm;
			continue;
		}
		down = !eo_plan_pod_ready(pm->pod);
		victim_down = !eo_plan_pod_ready(victim->pod);
		if (down != victim_down) {
			if (down)
				victim = pm;
			continue;
		}
		if (eo__plan_newer(pm->member, victim->member) < 0)
			victim = pm;
	}
	return victim;
}

void eo__plan_fill_storage_view(struct eo__plan_ctx *x)
{
	struct eo__plan_storage_view *sv = &x->sv;

	memset(sv, 0, sizeof(*sv));
	if (!json_is_object(x->observed))
		return;
	for (size_t i = 0; i < x->in->n_members; i++) {
		const json_t *m = x->in->members[i].member;

		if (eo_member_is_deleting(m))
			continue;
		if (eo_plan_member_storage_current(m, x->observed))
			sv->updated++;
		else
			sv->outdated++;
	}
}

/* The storage of the target, for messages: "2Gi, StorageClass fast" / "2Gi, the default class". */
static void target_text(const struct eo__plan_ctx *x, char *buf, size_t n)
{
	struct eo_storage want;

	eo_storage_read(json_object_get(x->observed, "storage"), &want);
	if (want.memory)
		snprintf(buf, n, "%s of memory", want.size);
	else if (want.has_class)
		snprintf(buf, n, "%s, StorageClass \"%s\"", want.size,
			 want.class_name != NULL ? want.class_name : "");
	else
		snprintf(buf, n, "%s, the default StorageClass", want.size);
}

/* Members other than pm that do not serve (pm NULL: any). */
static size_t others_down(const struct eo__plan_ctx *x, const struct eo_plan_member *pm)
{
	size_t n = 0;

	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *o = &x->in->members[i];

		n += o != pm && !eo_member_is_deleting(o->member) &&
		     !eo_plan_member_serving(o->member, o->pod);
	}
	return n;
}

/* The replacement j joins as a scale-up member does; blocked placement is said, not forced. */
static bool join(struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired,
		 size_t learners, const struct eo_plan_member *j)
{
	const struct eo_plan_member *pending = eo_member_is_pending(j->member) ? j : NULL;
	char why[EO_NODE_WHY_MAX];

	if (!eo_plan_member_storage_current(j->member, x->observed)) {
		/* Built for another target (the spec moved again): it goes, it holds no vote. */
		eo__plan_msgf(x,
			      "member %s joins on storage that is no longer the target; removing "
			      "it before it votes",
			      eo_member_name(j->member));
		x->out->action = EO_PLAN_REMOVE_MEMBER;
		x->out->member = j->member;
		return true;
	}
	if (eo_plan_node_move_blocked(j, x->in->now, why, sizeof(why))) {
		eo__plan_msgf(x,
			      "storage change: the new member %s cannot start (%s); no member is "
			      "removed until it does (check the StorageClass and its provisioner, "
			      "or set spec.storage back)",
			      eo_member_name(j->member), why);
		eo__plan_event(x, "Warning", EO_PLAN_REASON_STORAGE_BLOCKED);
		eo__plan_etcd_problem(x, EO_PLAN_REASON_STORAGE_BLOCKED);
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
	eo__plan_msgf(x, "storage change: waiting for the new member %s to be marked a voter",
		      eo_member_name(j->member));
	eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
	return true;
}

/* With the cluster at its size: a new member on the target's storage is created first. */
static bool begin_one(struct eo__plan_ctx *x, const struct eo__plan_counts *c, size_t learners)
{
	const struct eo_plan_member *v =
	    eo_plan_storage_victim(x->in->members, x->in->n_members, x->observed);
	char target[160];

	if (learners > 0 || c->pending > 0 || x->rv.todo > 0 || x->held || v == NULL)
		return false; /* a join or a roll first; past the deadline nothing grows */
	target_text(x, target, sizeof(target));
	if (others_down(x, NULL) > 0) {
		eo__plan_msgf(x,
			      "storage change to %s: %zu member(s) still on the old storage; the "
			      "next replacement waits until every member is ready (not ready: %s)",
			      target, x->sv.outdated, c->not_ready);
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
		return true;
	}
	eo__plan_msgf(x,
		      "storage change to %s: %zu member(s) still on the old storage; a new "
		      "member on it joins as a learner and is promoted, then member %s is "
		      "removed through the quorum",
		      target, x->sv.outdated, eo_member_name(v->member));
	eo__plan_event(x, "Normal", EO_PLAN_REASON_STORAGE_CHANGING);
	eo__plan_create_named(x, EO_PLAN_CREATE_MEMBER);
	return true;
}

/* With one member more than the target: the new one joins, then an outdated one goes. */
static bool finish_one(struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired,
		       size_t learners)
{
	const struct eo_plan_member *j = eo_plan_node_joining(x->in->members, x->in->n_members);
	const struct eo_plan_member *v = NULL;
	char what[EO_NAME_MAX + 64];

	if (j != NULL)
		return join(x, c, desired, learners, j);
	if (learners > 0 || x->sv.updated == 0)
		return false; /* not ours: the scale-down path decides */
	v = eo_plan_storage_victim(x->in->members, x->in->n_members, x->observed);
	if (v == NULL)
		return false;
	if (others_down(x, v) > 0) {
		eo__plan_msgf(x,
			      "storage change: member %s is to be removed once every other member "
			      "is ready (not ready: %s)",
			      eo_member_name(v->member), c->not_ready);
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
		return true;
	}
	snprintf(what, sizeof(what), "storage change: removing member %s (its replacement votes)",
		 eo_member_name(v->member));
	eo__plan_remove_if_safe(x, v, what);
	if (x->out->action == EO_PLAN_REMOVE_MEMBER) {
		eo__plan_msgf(x, "%s; %zu member(s) on the old storage before it goes", what,
			      x->sv.outdated);
		eo__plan_event(x, "Normal", EO_PLAN_REASON_STORAGE_CHANGING);
	}
	return true;
}

/*
 * 3e. Members on another storage than the target's (plan/storage.h) are replaced one at a
 * time, add-before-remove: at the target's size a new member is created (from the target: a
 * new PVC of the new size and class); with that one extra member it joins and is promoted, then
 * the oldest outdated voter is removed through the quorum. Only while every member serves and
 * nothing else moves (a roll, a join, a scale step short of the target); never past the
 * deadline (held) for a new member. False when the step has nothing to do.
 */
bool eo__plan_step_storage(struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired,
			   size_t learners)
{
	if (x->sv.outdated == 0 || desired <= 0 || c->deleting > 0 || c->dormant > 0 ||
	    json_integer_value(json_object_get(x->observed, "replicas")) <= 0)
		return false;
	if ((int32_t)c->n == desired)
		return begin_one(x, c, learners);
	if ((int32_t)c->n == desired + 1)
		return finish_one(x, c, desired, learners);
	return false;
}
