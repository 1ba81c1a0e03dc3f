/*
 * plan/plan.c - the cluster controller's decisions. See plan.h.
 */
#include "plan/plan.h"
#include "plan/internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/names.h"
#include "api/timeutil.h"
#include "plan/certs.h"
#include "plan/auth.h"
#include "plan/failure.h"
#include "plan/podissue.h"
#include "plan/forcenew.h"
#include "plan/nodeloss.h"
#include "plan/roll.h"

static const char *const action_names[EO_PLAN_ACTION_COUNT_] = {
    [EO_PLAN_NONE] = "none",
    [EO_PLAN_WAIT] = "wait",
    [EO_PLAN_ENSURE_SERVICES] = "ensure-services",
    [EO_PLAN_LATCH_TARGET] = "latch-target",
    [EO_PLAN_CREATE_SEED] = "create-seed",
    [EO_PLAN_COMPLETE_SEED] = "complete-seed",
    [EO_PLAN_QUERY_MEMBERS] = "query-members",
    [EO_PLAN_WRITE_STATUS] = "write-status",
    [EO_PLAN_CREATE_MEMBER] = "create-member",
    [EO_PLAN_ADD_LEARNER] = "add-learner",
    [EO_PLAN_SET_INITIAL_CLUSTER] = "set-initial-cluster",
    [EO_PLAN_PROMOTE_LEARNER] = "promote-learner",
    [EO_PLAN_REMOVE_MEMBER] = "remove-member",
    [EO_PLAN_REMOVE_STRAY] = "remove-stray",
    [EO_PLAN_SET_VOTER] = "set-voter",
    [EO_PLAN_ENSURE_PDB] = "ensure-pdb",
    [EO_PLAN_DELETE_PDB] = "delete-pdb",
    [EO_PLAN_SET_DORMANT] = "set-dormant",
    [EO_PLAN_WAKE_DORMANT] = "wake-dormant",
    [EO_PLAN_UPDATE_MEMBER] = "update-member",
    [EO_PLAN_RESTART_MEMBER] = "restart-member",
    [EO_PLAN_MOVE_LEADER] = "move-leader",
    [EO_PLAN_ENSURE_CERTIFICATES] = "ensure-certificates",
    [EO_PLAN_MARK_MEMBER] = "mark-member",
    [EO_PLAN_CLEAR_FORCE_REQUEST] = "clear-force-request",
    [EO_PLAN_ENABLE_AUTH] = "enable-auth",
};

const char *eo_plan_action_name(enum eo_plan_action a)
{
	if ((unsigned)a < EO_PLAN_ACTION_COUNT_ && action_names[a] != NULL)
		return action_names[a];
	return "unknown";
}

void eo_plan_result_clear(struct eo_plan_result *r)
{
	if (r == NULL)
		return;
	json_decref(r->status);
	json_decref(r->object);
	json_decref(r->patch);
	memset(r, 0, sizeof(*r));
}

/* --- the plan --- */

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

static void finish(struct eo__plan_ctx *x, const json_t *cur)
{
	json_t *empty = json_object();

	if ((x->out->action == EO_PLAN_QUERY_MEMBERS || x->out->action == EO_PLAN_ENSURE_SERVICES ||
	     x->out->action == EO_PLAN_ENSURE_CERTIFICATES) &&
	    x->in->failure == NULL) {
		/* No status write on these passes: the next pass computes it. */
		json_decref(x->st);
		x->st = NULL;
	} else if (eo_plan_failure_apply(x->st, x->in->failure, EO_COND_DEGRADED, EO_COND_TRUE,
					 x->gen, x->in->now) != 0) {
		/* A refused write says so in Degraded; a stale one goes once nothing refuses. */
		x->ok = false;
	}
	x->out->status = x->st;
	x->st = NULL;
	x->out->status_changed =
	    x->out->status != NULL && !json_equal(cur != NULL ? cur : empty, x->out->status);
	json_decref(empty);
}

/* The message of DeadlineExceeded: what waits and what still runs. */
#define DEADLINE_MSG                                                                               \
	"the target in status.observed was not reached before status.progressDeadline; "           \
	"lost and crash-looping members are still replaced, but nothing grows or rolls "           \
	"further: edit the spec to resume"

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

int eo_plan_cluster(const struct eo_plan_input *in, struct eo_plan_result *out)
{
	const json_t *cluster = in->cluster;
	const char *name = eo_cluster_name(cluster), *ns = eo_cluster_namespace(cluster);
	const char *uid = eo_cluster_uid(cluster);
	json_t *cur = json_object_get(cluster, "status");
	json_t *spec_obs = NULL, *observed = NULL;
	struct eo__plan_ctx x = {.in = in, .out = out, .ok = true};
	char token[EO_NAME_MAX], selector[EO_NAME_MAX];
	char refusal[EO_PLAN_MSG_MAX];
	bool spec_differs = false, refused = false;
	struct eo__plan_counts c;
	int32_t desired;
	time_t dl = 0;
	bool has_dl, complete, running;

	memset(out, 0, sizeof(*out));
	if (!eo__plan_present(name) || !eo__plan_present(ns) || !eo__plan_present(uid))
		return -1;
	if (eo_cluster_is_deleting(cluster)) {
		out->action = EO_PLAN_NONE; /* children go with the owner references */
		return 0;
	}
	if (eo_cluster_migrating(cluster)) {
		/* `kubectl etcd migrate` is adopting a legacy cluster: nothing is touched. */
		snprintf(out->message, sizeof(out->message),
			 "held by kubectl etcd migrate (annotation %s); waiting",
			 EO_ANNOTATION_MIGRATING);
		out->action = EO_PLAN_WAIT;
		out->requeue_ms = EO_PLAN_REQUEUE_STEADY_MS;
		return 0;
	}
	x.gen = eo_cluster_generation(cluster);
	x.st = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	if (x.st == NULL)
		return -1;

	/* What the status says about the members holds whatever the spec says. */
	if (eo_name_cluster_selector(selector, sizeof(selector), name) != 0) {
		x.ok = false;
		goto done;
	}
	eo__plan_count_members(in, &c);
	eo__plan_ensure_next_member_name(&x);
	(void)eo_plan_member_issues(in->members, in->n_members, in->now, x.issues,
				    sizeof(x.issues));
	eo__plan_set_status(&x, "selector", json_string(selector));
	eo__plan_set_status(&x, "readyMembers", json_integer((json_int_t)c.ready));
	eo__plan_set_status(&x, "brokenMembers", json_integer((json_int_t)c.broken));
	running = eo__plan_present(eo_cluster_cluster_id(cluster)) && c.dormant == 0 && c.n > 0;

	if (eo__plan_preconditions(&x, &c, running))
		goto done;

	/* The locking pattern: latch token and target on the first pass. */
	desired = eo_cluster_replicas(cluster);
	if (!eo__plan_present(eo_cluster_cluster_token(cluster))) {
		if (eo_name_cluster_token(token, sizeof(token), ns, name, uid) != 0) {
			x.ok = false;
			goto done;
		}
		eo__plan_set_status(&x, "clusterToken", json_string(token));
	}
	spec_obs = eo_desired_observed(cluster);
	if (spec_obs == NULL) {
		x.ok = false;
		goto done;
	}
	observed = json_object_get(x.st, "observed");
	if (!json_is_object(observed)) {
		eo__plan_set_status(&x, "observed", json_incref(spec_obs));
		set_deadline(&x);
		eo__plan_msgf(&x, "latched the initial target: %d member(s) of etcd %s", desired,
			      eo_cluster_version(cluster));
		eo__plan_cond(&x, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_INITIAL_SNAPSHOT,
			      desired > 0 ? "bootstrapping the cluster from a single seed member"
					  : out->message);
		out->action = EO_PLAN_LATCH_TARGET;
		goto done;
	}
	if (!eo__plan_present(eo_cluster_cluster_token(cluster))) {
		out->action = EO_PLAN_LATCH_TARGET;
		eo__plan_msgf(&x, "latched the cluster token");
		goto done;
	}
	desired = (int32_t)json_integer_value(json_object_get(observed, "replicas"));
	has_dl = eo_cluster_progress_deadline(cluster, &dl);
	x.observed = observed;
	eo__plan_fill_roll_view(&x);
	if (!x.ok)
		goto done;
	if (eo__plan_present(eo_cluster_cluster_id(cluster))) {
		eo__plan_set_status(&x, "updatedMembers", json_integer((json_int_t)x.rv.updated));
		if (x.rv.todo == 0)
			json_object_del(x.st, "rollingMember");
	}
	spec_differs = !json_equal(spec_obs, observed);
	if (spec_differs && eo__plan_version_refused(&x, observed, refusal, sizeof(refusal))) {
		spec_differs = false;
		refused = true;
	}
	if (eo__plan_present(eo_cluster_cluster_id(cluster)) && desired == 0)
		complete = c.deleting == 0 && c.n == 1 && c.dormant == 1; /* paused */
	else if (eo__plan_present(eo_cluster_cluster_id(cluster)))
		complete = c.deleting == 0 && c.pending == 0 && c.dormant == 0 &&
			   (int32_t)c.n == desired && (int32_t)c.ready == desired &&
			   c.voters == c.n && x.rv.todo == 0;
	else
		complete = desired == 0 && c.n == 0 && c.deleting == 0;

	if (complete) {
		if (spec_differs) {
			/* Adopt the changed spec as the next target, then act on it. */
			relatch(&x, spec_obs, EO_REASON_SPEC_CHANGED);
			if (eo__plan_present(eo_cluster_cluster_id(cluster)) && c.dormant == 0)
				eo__plan_health(&x, &c);
			goto done;
		}
		if (json_object_get(x.st, "progressDeadline") != NULL)
			json_object_del(x.st, "progressDeadline");
		json_object_del(x.st, "membersAtDeadline");
		has_dl = false;
	} else if (!has_dl && spec_differs) {
		/*
		 * The last target was reached (its deadline dropped) and the cluster drifted since
		 * (a member down): nothing is in flight, so the edit becomes the next target now
		 * rather than waiting for a health that may depend on it.
		 */
		relatch(&x, spec_obs, EO_REASON_SPEC_CHANGED);
		if (running)
			eo__plan_health(&x, &c);
		goto done;
	} else if (!has_dl && running && x.rv.outdated > 0 && !eo__plan_force_active(&x)) {
		/*
		 * The spec did not move but the Pod the members should run did (an operator
		 * upgrade that renders Pods differently): roll them, under a deadline like any
		 * target.
		 */
		set_deadline(&x);
		if (x.ca_changed)
			eo__plan_msgf(
			    &x,
			    "the CA bundle of the TLS Secrets changed (status.caBundleDigest): "
			    "rolling %zu member(s) one at a time so that etcd reads it",
			    x.rv.outdated);
		else
			eo__plan_msgf(
			    &x,
			    "%zu member(s) run a Pod that differs from the desired one; rolling "
			    "them",
			    x.rv.outdated);
		eo__plan_cond(&x, EO_COND_PROGRESSING, EO_COND_TRUE, EO_PLAN_REASON_ROLLING,
			      out->message);
		eo__plan_event(&x, "Normal", EO_PLAN_REASON_ROLLING);
		eo__plan_health(&x, &c);
		out->action = EO_PLAN_WRITE_STATUS;
		goto done;
	} else if (has_dl && in->now >= dl && !eo__plan_force_active(&x)) {
		/* (A quorum-loss recovery goes on past the deadline: it is what unsticks it.) */
		if (!eo__plan_present(eo_cluster_cluster_id(cluster))) {
			eo__plan_msgf(
			    &x, "the cluster did not bootstrap before status.progressDeadline; "
				"delete and recreate it");
			eo__plan_stop_with(&x, &c, false, EO_REASON_BOOTSTRAP_FAILED);
			goto done;
		}
		if (spec_differs) {
			relatch(&x, spec_obs, EO_REASON_RETRY_AFTER_DEADLINE);
			eo__plan_health(&x, &c);
			goto done;
		}
		hold(&x, &c);
	}

	if (eo__plan_step_auth(&x, &c, running, running && complete))
		goto done;
	if (!eo__plan_present(eo_cluster_cluster_id(cluster)))
		eo__plan_step_bootstrap(&x, &c, desired);
	else
		eo__plan_step_running(&x, &c, desired, has_dl && !complete);
	if (x.held) {
		held_conditions(&x);
	} else if (refused && (!has_dl || complete || in->now >= dl)) {
		/* The edit would have been latched: say why it was not. */
		eo__plan_cond(&x, EO_COND_PROGRESSING, EO_COND_FALSE,
			      EO_PLAN_REASON_VERSION_REFUSED, refusal);
		if (out->event_reason == NULL) {
			eo__plan_event(&x, "Warning", EO_PLAN_REASON_VERSION_REFUSED);
			if (out->action == EO_PLAN_NONE || out->action == EO_PLAN_WAIT)
				eo__plan_msgf(&x, "%s", refusal);
		}
	}
done:
	json_decref(spec_obs);
	if (x.ok)
		finish(&x, cur);
	json_decref(x.st);
	if (!x.ok) {
		eo_plan_result_clear(out);
		return -1;
	}
	return 0;
}
