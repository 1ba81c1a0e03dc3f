/*
 * plan/target.c - the target latch and the progress deadline (the locking pattern of
 * plan/plan.h): the first pass latches the spec as status.observed under a deadline; while it
 * is in flight spec edits wait; once reached the deadline goes and an edit becomes the next
 * target; a Pod that differs from the desired one is rolled under a deadline too; past the
 * deadline a cluster that never formed fails (BootstrapFailed) and a formed one is held
 * (DeadlineExceeded: it heals but does not grow or roll) until the spec is edited. Part of the
 * cluster planner (plan/plan.h, plan/internal.h).
 */
#include <stdint.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/names.h"
#include "api/timeutil.h"
#include "plan/internal.h"
#include "plan/storage.h"

/* The message of DeadlineExceeded: what waits and what still runs. */
#define DEADLINE_MSG                                                                               \
	"the target in status.observed was not reached before status.progressDeadline; "           \
	"lost and crash-looping members are still replaced, but nothing grows or rolls "           \
	"further: edit the spec to resume"

static void set_deadline(struct eo__plan_ctx *x)
{
	char ts[EO_TIME_BUF];
	time_t dl = x->in->now + (time_t)eo_cluster_progress_deadline_seconds(x->in->cluster);

	if (eo_time_format(dl, ts, sizeof(ts)) != 0)
		x->ok = false;
	else
		eo__plan_set_status(x, "progressDeadline", json_string(ts));
	/* A new deadline: nothing is held any more. */
	json_object_del(x->st, "membersAtDeadline");
}

static void relatch(struct eo__plan_ctx *x, json_t *spec_obs, const char *reason)
{
	eo__plan_set_status(x, "observed", json_incref(spec_obs));
	set_deadline(x);
	eo__plan_msgf(x, "new target latched from the spec (generation %lld)", (long long)x->gen);
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_TRUE, reason, x->out->message);
	eo__plan_event(x, "Normal", reason);
	x->out->action = EO_PLAN_WRITE_STATUS;
}

/*
 * Past the deadline, spec unchanged: the pass goes on in held mode (struct eo__plan_ctx). The
 * size to heal back to is recorded on the first such pass and kept until a new target is
 * latched.
 */
static void hold(struct eo__plan_ctx *x, const struct eo__plan_counts *c)
{
	const json_t *rec = json_object_get(x->st, "membersAtDeadline");

	x->held = true;
	if (json_is_integer(rec) && json_integer_value(rec) >= 0 &&
	    json_integer_value(rec) <= INT32_MAX) {
		x->held_size = (int32_t)json_integer_value(rec);
		return;
	}
	x->held_size = (int32_t)(c->n + c->deleting);
	eo__plan_set_status(x, "membersAtDeadline", json_integer(x->held_size));
}

/*
 * Held: Available and Progressing say DeadlineExceeded whatever healing step this pass takes
 * (Degraded tells how the members are), unless this pass found the quorum gone for good or
 * the cluster paused, which own all three. The Warning Event is the step's own when it has
 * one.
 */
static void held_conditions(struct eo__plan_ctx *x)
{
	const char *r = eo_condition_reason(x->st, EO_COND_PROGRESSING);

	if (r != NULL &&
	    (strcmp(r, EO_REASON_QUORUM_LOST) == 0 || strcmp(r, EO_REASON_PAUSED) == 0))
		return;
	eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED,
		      DEADLINE_MSG);
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED,
		      DEADLINE_MSG);
	if (x->out->event_reason == NULL)
		eo__plan_event(x, "Warning", EO_REASON_DEADLINE_EXCEEDED);
	if (x->out->action == EO_PLAN_NONE && x->out->message[0] == '\0')
		eo__plan_msgf(x, "%s", DEADLINE_MSG);
}

/*
 * The first passes: the cluster token and the target are latched into the status (one write),
 * the token alone when a status lost it. True when this pass is the latch; else *observed is the
 * latched target.
 */
static bool latch(struct eo__plan_ctx *x, struct eo__plan_target *t, const json_t **observed)
{
	struct eo_plan_result *out = x->out;
	const json_t *cluster = x->in->cluster;
	const char *name = eo_cluster_name(cluster), *ns = eo_cluster_namespace(cluster);
	const char *uid = eo_cluster_uid(cluster);
	char token[EO_NAME_MAX];

	t->desired = eo_cluster_replicas(cluster);
	if (!eo_present(eo_cluster_cluster_token(cluster))) {
		if (eo_name_cluster_token(token, sizeof(token), ns, name, uid) != 0) {
			x->ok = false;
			return true;
		}
		eo__plan_set_status(x, "clusterToken", json_string(token));
	}
	t->spec_obs = eo_desired_observed(cluster);
	if (t->spec_obs == NULL) {
		x->ok = false;
		return true;
	}
	*observed = json_object_get(x->st, "observed");
	if (!json_is_object(*observed)) {
		eo__plan_set_status(x, "observed", json_incref(t->spec_obs));
		set_deadline(x);
		eo__plan_msgf(x, "latched the initial target: %d member(s) of etcd %s", t->desired,
			      eo_cluster_version(cluster));
		eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_INITIAL_SNAPSHOT,
			      t->desired > 0 ? "bootstrapping the cluster from a single seed member"
					     : out->message);
		out->action = EO_PLAN_LATCH_TARGET;
		return true;
	}
	if (!eo_present(eo_cluster_cluster_token(cluster))) {
		out->action = EO_PLAN_LATCH_TARGET;
		eo__plan_msgf(x, "latched the cluster token");
		return true;
	}
	return false;
}

/* Whether the latched target is reached (a paused cluster: one dormant member left). */
static bool reached(const struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired)
{
	if (eo_present(eo_cluster_cluster_id(x->in->cluster)) && desired == 0)
		return c->deleting == 0 && c->n == 1 && c->dormant == 1; /* paused */
	if (eo_present(eo_cluster_cluster_id(x->in->cluster)))
		return c->deleting == 0 && c->pending == 0 && c->dormant == 0 &&
		       (int32_t)c->n == desired && (int32_t)c->ready == desired &&
		       c->voters == c->n && x->rv.todo == 0 && x->sv.outdated == 0;
	return desired == 0 && c->n == 0 && c->deleting == 0;
}

/*
 * While members are on another storage than the target's: how many are on the new and the old
 * (status.storageUpdatedMembers, status.storageOutdatedMembers); gone once none is outdated.
 */
static void storage_progress(struct eo__plan_ctx *x)
{
	if (x->sv.outdated == 0) {
		json_object_del(x->st, "storageUpdatedMembers");
		json_object_del(x->st, "storageOutdatedMembers");
		return;
	}
	eo__plan_set_status(x, "storageUpdatedMembers", json_integer((json_int_t)x->sv.updated));
	eo__plan_set_status(x, "storageOutdatedMembers", json_integer((json_int_t)x->sv.outdated));
}

/*
 * The target is reached in all but storage: members made before the target's storage was
 * raised (an operator that did not move storage yet). Move them, under a deadline.
 */
static void storage_changed(struct eo__plan_ctx *x, const struct eo__plan_counts *c)
{
	set_deadline(x);
	eo__plan_msgf(x,
		      "%zu member(s) are on other storage than status.observed.storage; moving "
		      "them one at a time",
		      x->sv.outdated);
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_TRUE, EO_PLAN_REASON_STORAGE_CHANGING,
		      x->out->message);
	eo__plan_event(x, "Normal", EO_PLAN_REASON_STORAGE_CHANGING);
	eo__plan_health(x, c);
	x->out->action = EO_PLAN_WRITE_STATUS;
}

/*
 * The spec did not move but the Pod the members should run did (an operator upgrade that renders
 * Pods differently, a changed CA bundle): roll them, under a deadline like any target.
 */
static void roll_changed_pods(struct eo__plan_ctx *x, const struct eo__plan_counts *c)
{
	set_deadline(x);
	if (x->ca_changed)
		eo__plan_msgf(x,
			      "the CA bundle of the TLS Secrets changed (status.caBundleDigest): "
			      "rolling %zu member(s) one at a time so that etcd reads it",
			      x->rv.outdated);
	else
		eo__plan_msgf(x,
			      "%zu member(s) run a Pod that differs from the desired one; "
			      "rolling them",
			      x->rv.outdated);
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_TRUE, EO_PLAN_REASON_ROLLING,
		      x->out->message);
	eo__plan_event(x, "Normal", EO_PLAN_REASON_ROLLING);
	eo__plan_health(x, c);
	x->out->action = EO_PLAN_WRITE_STATUS;
}

/*
 * The target of the pass (the locking pattern, plan/plan.h): latches the cluster token and the
 * target on the first pass, then decides whether the spec becomes the next target, the members
 * are rolled onto a changed Pod under a deadline, or the pass is past the deadline (a cluster
 * that never formed fails; a formed one is held, struct eo__plan_ctx). Fills *t for the rest of
 * the pass. True when it decided the pass (the caller writes the status and stops); t->spec_obs
 * is the caller's to free either way.
 */
bool eo__plan_target(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running,
		     struct eo__plan_target *t)
{
	const struct eo_plan_input *in = x->in;
	const json_t *cluster = in->cluster;
	const json_t *observed = NULL;
	bool spec_differs = false;

	if (latch(x, t, &observed))
		return true;
	t->desired = (int32_t)json_integer_value(json_object_get(observed, "replicas"));
	t->has_dl = eo_cluster_progress_deadline(cluster, &t->dl);
	x->observed = observed;
	eo__plan_fill_roll_view(x);
	if (!x->ok)
		return true;
	eo__plan_fill_storage_view(x);
	if (eo_present(eo_cluster_cluster_id(cluster))) {
		eo__plan_set_status(x, "updatedMembers", json_integer((json_int_t)x->rv.updated));
		if (x->rv.todo == 0)
			json_object_del(x->st, "rollingMember");
		storage_progress(x);
	}
	spec_differs = !json_equal(t->spec_obs, observed);
	if (spec_differs && eo__plan_version_refused(x, observed, t->refusal, sizeof(t->refusal))) {
		spec_differs = false;
		t->refused = true;
	}
	t->complete = reached(x, c, t->desired);

	if (t->complete) {
		if (spec_differs) {
			/* Adopt the changed spec as the next target, then act on it. */
			relatch(x, t->spec_obs, EO_REASON_SPEC_CHANGED);
			if (eo_present(eo_cluster_cluster_id(cluster)) && c->dormant == 0)
				eo__plan_health(x, c);
			return true;
		}
		if (json_object_get(x->st, "progressDeadline") != NULL)
			json_object_del(x->st, "progressDeadline");
		json_object_del(x->st, "membersAtDeadline");
		t->has_dl = false;
	} else if (!t->has_dl && spec_differs) {
		/*
		 * The last target was reached (its deadline dropped) and the cluster drifted since
		 * (a member down): nothing is in flight, so the edit becomes the next target now
		 * rather than waiting for a health that may depend on it.
		 */
		relatch(x, t->spec_obs, EO_REASON_SPEC_CHANGED);
		if (running)
			eo__plan_health(x, c);
		return true;
	} else if (!t->has_dl && running && x->rv.outdated > 0 && !eo__plan_force_active(x)) {
		roll_changed_pods(x, c);
		return true;
	} else if (!t->has_dl && running && x->sv.outdated > 0 && !eo__plan_force_active(x)) {
		storage_changed(x, c);
		return true;
	} else if (t->has_dl && in->now >= t->dl && !eo__plan_force_active(x)) {
		/* (A quorum-loss recovery goes on past the deadline: it is what unsticks it.) */
		if (!eo_present(eo_cluster_cluster_id(cluster))) {
			eo__plan_msgf(x, "the cluster did not bootstrap before "
					 "status.progressDeadline; delete and recreate it");
			eo__plan_stop_with(x, c, false, EO_REASON_BOOTSTRAP_FAILED);
			return true;
		}
		if (spec_differs) {
			relatch(x, t->spec_obs, EO_REASON_RETRY_AFTER_DEADLINE);
			eo__plan_health(x, c);
			return true;
		}
		hold(x, c);
	}
	return false;
}

/*
 * After the pass's step: held, Available and Progressing say DeadlineExceeded; a spec edit that
 * would have been latched but asks for a version change etcd does not allow says why not.
 */
void eo__plan_target_finish(struct eo__plan_ctx *x, const struct eo__plan_target *t)
{
	struct eo_plan_result *out = x->out;

	if (x->held) {
		held_conditions(x);
	} else if (t->refused && (!t->has_dl || t->complete || x->in->now >= t->dl)) {
		/* The edit would have been latched: say why it was not. */
		eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, EO_PLAN_REASON_VERSION_REFUSED,
			      t->refusal);
		if (out->event_reason == NULL) {
			eo__plan_event(x, "Warning", EO_PLAN_REASON_VERSION_REFUSED);
			if (out->action == EO_PLAN_NONE || out->action == EO_PLAN_WAIT)
				eo__plan_msgf(x, "%s", t->refusal);
		}
	}
}
