/*
 * plan/storage.c - storage that changes on a running cluster (plan/storage.h), and the cluster
 * planner's step that replaces the outdated members one at a time (plan/plan.h,
 * plan/internal.h).
 */
#include "plan/storage.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/meta.h"
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

	/* A target without storage (latched before it carried one) says nothing to move to. */
	if (!json_is_object(json_object_get(observed, "storage")))
		return true;
	eo_member_storage(member, &have);
	eo_storage_read(json_object_get(observed, "storage"), &want);
	/* Whatever the class allows: a member is outdated until it has the target's storage. */
	return eo_plan_storage_change(&have, &want, EO_CLASS_EXPANSION_YES) == EO_STORAGE_CURRENT;
}

enum eo_class_expansion eo_plan_class_expansion(const json_t *sc, const char *name)
{
	const char *have = eo_meta_name(sc);

	if (sc == NULL || name == NULL || have == NULL || strcmp(have, name) != 0)
		return EO_CLASS_EXPANSION_UNKNOWN;
	return json_is_true(json_object_get(sc, "allowVolumeExpansion")) ? EO_CLASS_EXPANSION_YES
									 : EO_CLASS_EXPANSION_NO;
}

/*
 * The storage quantity under pvc's a.b (c NULL) or a.b.c: spec.resources.requests.storage,
 * status.capacity.storage.
 */
static bool pvc_quantity(const json_t *pvc, const char *a, const char *b, const char *c,
			 struct eo_quantity *q)
{
	const json_t *v = json_object_get(json_object_get(pvc, a), b);

	if (c != NULL)
		v = json_object_get(v, c);
	v = json_object_get(v, "storage");
	return v != NULL && eo_quantity_from_json(v, q) == 0;
}

/* The member's size when it is a PVC member with a size that parses. */
static bool pvc_member_size(const json_t *member, struct eo_storage *st)
{
	eo_member_storage(member, st);
	return !st->memory && st->size_valid;
}

json_t *eo_plan_pvc_grow_patch(const json_t *member, const json_t *pvc)
{
	const json_t *status = json_object_get(pvc, "status");
	const char *phase = json_string_value(json_object_get(status, "phase"));
	struct eo_storage st;
	struct eo_quantity req;

	if (pvc == NULL || eo_meta_is_deleting(pvc) || phase == NULL ||
	    strcmp(phase, "Bound") != 0 || !pvc_member_size(member, &st) ||
	    !pvc_quantity(pvc, "spec", "resources", "requests", &req) ||
	    eo_quantity_cmp(&req, &st.size_q) >= 0)
		return NULL;
	return json_pack("{s:{s:{s:{s:s}}}}", "spec", "resources", "requests", "storage", st.size);
}

static bool condition_true(const json_t *obj, const char *type)
{
	const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
	size_t i;
	const json_t *c;

	json_array_foreach(conds, i, c)
	{
		const char *t = json_string_value(json_object_get(c, "type"));
		const char *v = json_string_value(json_object_get(c, "status"));

		if (t != NULL && v != NULL && strcmp(t, type) == 0 && strcmp(v, "True") == 0)
			return true;
	}
	return false;
}

bool eo_plan_pvc_growing(const json_t *member, const json_t *pvc, bool *resize_pending)
{
	struct eo_storage st;
	struct eo_quantity cap;

	if (resize_pending != NULL)
		*resize_pending = false;
	if (pvc == NULL || !pvc_member_size(member, &st) ||
	    !pvc_quantity(pvc, "status", "capacity", NULL, &cap) ||
	    eo_quantity_cmp(&cap, &st.size_q) >= 0)
		return false;
	if (resize_pending != NULL)
		*resize_pending = condition_true(pvc, "FileSystemResizePending");
	return true;
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
		if (eo_plan_member_storage_current(m, x->observed) &&
		    !eo_plan_pvc_growing(m, x->in->members[i].pvc, NULL))
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
	const struct eo_etcd_member *em = eo__plan_etcd_entry(x, j->member);
	char why[EO_NODE_WHY_MAX];

	/*
	 * Built for another target (the spec moved again): it goes while it holds no vote, in
	 * etcd's list (a learner, or not in it) as in its mark. One that etcd counts as a voter
	 * joins on as any member and is replaced later like the other outdated voters, through
	 * the quorum checks.
	 */
	if (!eo_plan_member_storage_current(j->member, x->observed) &&
	    (em == NULL || em->is_learner) && !eo_member_is_voter(j->member)) {
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

/* The first member whose PVC is growing (in place), or NULL. */
static const struct eo_plan_member *first_growing(const struct eo__plan_ctx *x, bool *pending)
{
	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];

		if (!eo_member_is_deleting(pm->member) &&
		    eo_plan_pvc_growing(pm->member, pm->pvc, pending))
			return pm;
	}
	return NULL;
}

/* What the restart of a member whose filesystem waits for a new mount comes to this pass. */
enum grow_step {
	GROW_WAIT = 0,	  /* why says what is waited for */
	GROW_MOVE_LEADER, /* the member leads: leadership to rows[*to] first */
	GROW_RESTART,	  /* restart the member's Pod */
};

/*
 * The restart of member gi of the roll's rows in (plan/roll.h), as a roll restarts a member:
 * only while every member is ready, answered its status and is caught up with a known leader;
 * the leader of two members or more first hands its leadership to the follower closest to
 * it (*to), and is restarted on a later pass, once etcd names another leader. Pure.
 */
static enum grow_step grow_restart_decide(const struct eo_roll_input *in, size_t gi, size_t *to,
					  char *why, size_t n)
{
	const struct eo_roll_member *best = NULL;

	for (size_t i = 0; i < in->n; i++) {
		if (!in->m[i].ready) {
			snprintf(why, n, "member %s is not ready", in->m[i].name);
			return GROW_WAIT;
		}
	}
	if (in->leader == 0) {
		snprintf(why, n, "no member knows a leader");
		return GROW_WAIT;
	}
	for (size_t i = 0; i < in->n; i++) {
		const struct eo_roll_member *m = &in->m[i];

		if (!m->has_status || m->id == 0) {
			snprintf(why, n, "member %s did not answer its status", m->name);
			return GROW_WAIT;
		}
		if (m->applied + EO_PLAN_ROLL_MAX_LAG < in->leader_index) {
			snprintf(why, n,
				 "member %s lags the leader (applied index %" PRIu64
				 ", leader's %" PRIu64 ")",
				 m->name, m->applied, in->leader_index);
			return GROW_WAIT;
		}
	}
	if (in->n == 1 || in->m[gi].id != in->leader)
		return GROW_RESTART;
	for (size_t i = 0; i < in->n; i++) {
		const struct eo_roll_member *m = &in->m[i];

		if (i == gi)
			continue;
		if (best == NULL || m->applied > best->applied ||
		    (m->applied == best->applied && strcmp(m->name, best->name) < 0)) {
			best = m;
			*to = i;
		}
	}
	return GROW_MOVE_LEADER;
}

/*
 * g's filesystem grows when its volume is mounted again (FileSystemResizePending): its Pod is
 * restarted (through the Eviction API from three members on, as a roll) as the roll would
 * restart it (grow_restart_decide), after moving the leadership away when it leads.
 */
static bool grow_restart(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
			 const struct eo_plan_member *g, const char *size, const char *cap)
{
	struct eo_roll_input ri = {.m = x->rv.rows, .n = x->rv.n};
	const char *name = eo_member_name(g->member);
	char why[EO_PLAN_ROLL_MSG_MAX];
	size_t gi = x->rv.n, to = 0;
	enum grow_step s = GROW_WAIT;

	snprintf(why, sizeof(why), "member %s is not a settled voter", name);
	for (size_t i = 0; i < x->rv.n; i++)
		if (x->rv.pm[i] == g)
			gi = i;
	eo__plan_roll_input(x, &ri);
	if (gi < x->rv.n)
		s = grow_restart_decide(&ri, gi, &to, why, sizeof(why));
	if (s == GROW_RESTART &&
	    (g->pod == NULL || eo_meta_is_deleting(g->pod) || !eo_present(eo_meta_uid(g->pod)))) {
		snprintf(why, sizeof(why), "member %s has no Pod to restart", name);
		s = GROW_WAIT;
	}
	if (s == GROW_MOVE_LEADER) {
		eo__plan_msgf(
		    x,
		    "storage change: the volume of member %s grew to %s; its filesystem "
		    "grows when the volume is mounted again (FileSystemResizePending) and "
		    "it is the leader: moving leadership to member %s before its Pod is "
		    "restarted",
		    name, size, x->rv.rows[to].name);
		eo__plan_move_leader(x, g, x->rv.rows[to].id);
		return true;
	}
	if (s == GROW_RESTART) {
		eo__plan_msgf(x,
			      "storage change: the volume of member %s grew to %s; its filesystem "
			      "grows when the volume is mounted again (FileSystemResizePending): "
			      "restarting its Pod",
			      name, size);
		eo__plan_event(x, "Normal", EO_PLAN_REASON_STORAGE_CHANGING);
		x->out->action = EO_PLAN_RESTART_MEMBER;
		x->out->member = g->member;
		x->out->evict = c->n > 2;
		snprintf(x->out->pod_uid, sizeof(x->out->pod_uid), "%s", eo_meta_uid(g->pod));
		x->out->requeue_ms = EO_PLAN_REQUEUE_SHORT_MS;
		return true;
	}
	eo__plan_msgf(x,
		      "storage change: waiting for PVC %s of member %s to grow to %s in place "
		      "(capacity %s; FileSystemResizePending: its Pod is restarted once every "
		      "member is ready and caught up with a known leader, the leader's after "
		      "its leadership moved; now %s)",
		      eo_meta_name(g->pvc), name, size, cap, why);
	eo__plan_wait_for(x, EO_PLAN_REQUEUE_ROLL_MS);
	return true;
}

/*
 * A member's PVC grows in place: wait for its capacity; a filesystem that grows only when a
 * Pod mounts the volume again (FileSystemResizePending) gets the member's Pod restarted
 * (grow_restart).
 */
static bool grow_wait(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
		      const struct eo_plan_member *g, bool pending)
{
	const json_t *cap = json_object_get(
	    json_object_get(json_object_get(g->pvc, "status"), "capacity"), "storage");
	const char *cap_text = json_is_string(cap) ? json_string_value(cap) : "not reported";
	struct eo_storage st;

	eo_member_storage(g->member, &st);
	if (pending)
		return grow_restart(x, c, g, st.size, cap_text);
	eo__plan_msgf(x,
		      "storage change: waiting for PVC %s of member %s to grow to %s in place "
		      "(capacity %s)",
		      eo_meta_name(g->pvc), eo_member_name(g->member), st.size, cap_text);
	eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
	return true;
}

bool eo__plan_storage_wants_status(const struct eo__plan_ctx *x)
{
	bool pending = false;

	return x->sv.outdated > 0 && first_growing(x, &pending) != NULL && pending;
}

/*
 * Whether v grows in place: only its size grows and the class of its PVC allows expansion,
 * read live (EO_PLAN_READ_CLASS first; true then, the plan is made again with the class).
 * *wait: the class could not be read (the step waits rather than replace on a guess).
 */
static bool expands(struct eo__plan_ctx *x, const struct eo_plan_member *v, bool *wait)
{
	const char *cls =
	    json_string_value(json_object_get(json_object_get(v->pvc, "spec"), "storageClassName"));
	struct eo_storage have, want;

	*wait = false;
	eo_member_storage(v->member, &have);
	eo_storage_read(json_object_get(x->observed, "storage"), &want);
	if (eo_plan_storage_change(&have, &want, EO_CLASS_EXPANSION_YES) != EO_STORAGE_EXPAND ||
	    !eo_present(cls))
		return false;
	if (!x->in->class_read) {
		snprintf(x->out->storage_class, sizeof(x->out->storage_class), "%s", cls);
		eo__plan_msgf(x, "storage change: reading StorageClass %s of PVC %s", cls,
			      eo_meta_name(v->pvc));
		x->out->action = EO_PLAN_READ_CLASS;
		return true;
	}
	switch (eo_plan_class_expansion(x->in->storage_class, cls)) {
	case EO_CLASS_EXPANSION_YES:
		return true;
	case EO_CLASS_EXPANSION_UNKNOWN:
		eo__plan_msgf(x,
			      "storage change: StorageClass %s of PVC %s could not be read; member "
			      "%s is neither grown nor replaced until it can",
			      cls, eo_meta_name(v->pvc), eo_member_name(v->member));
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_ETCD_MS);
		*wait = true;
		return false;
	default:
		return false;
	}
}

/* v's PVC grows in place: its EtcdMember asks for the target's size (member controller). */
static bool grow_member(struct eo__plan_ctx *x, const struct eo_plan_member *v)
{
	struct eo_storage want;

	if (x->out->action == EO_PLAN_READ_CLASS)
		return true;
	eo_storage_read(json_object_get(x->observed, "storage"), &want);
	x->out->patch = json_pack("{s:{s:{s:s}}}", "spec", "storage", "size", want.size);
	if (x->out->patch == NULL) {
		x->ok = false;
		return true;
	}
	eo__plan_msgf(x,
		      "storage change to %s: %zu member(s) still on the old size; growing the "
		      "PVC of member %s in place (its StorageClass allows expansion)",
		      want.size, x->sv.outdated, eo_member_name(v->member));
	eo__plan_event(x, "Normal", EO_PLAN_REASON_STORAGE_CHANGING);
	x->out->action = EO_PLAN_UPDATE_MEMBER;
	x->out->member = v->member;
	return true;
}

/*
 * With the cluster at its size: a PVC growing in place is waited for; else the next outdated
 * member is grown in place when it can be, else a new member on the target's storage is
 * created first.
 */
static bool begin_one(struct eo__plan_ctx *x, const struct eo__plan_counts *c, size_t learners)
{
	const struct eo_plan_member *v = NULL, *g = NULL;
	char target[160];
	bool pending = false, wait = false;

	if (learners > 0 || c->pending > 0 || x->rv.todo > 0)
		return false; /* a join or a roll first */
	if ((g = first_growing(x, &pending)) != NULL)
		return grow_wait(x, c, g, pending);
	v = eo_plan_storage_victim(x->in->members, x->in->n_members, x->observed);
	if (x->held || v == NULL)
		return false; /* past the deadline nothing grows */
	target_text(x, target, sizeof(target));
	if (others_down(x, NULL) > 0) {
		eo__plan_msgf(x,
			      "storage change to %s: %zu member(s) still on the old storage; the "
			      "next one waits until every member is ready (not ready: %s)",
			      target, x->sv.outdated, c->not_ready);
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
		return true;
	}
	if (expands(x, v, &wait))
		return grow_member(x, v);
	if (wait || !x->ok)
		return true;
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
