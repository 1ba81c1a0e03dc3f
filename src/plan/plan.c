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
    [EO_PLAN_READ_CLASS] = "read-class",
};

const char *eo_plan_action_name(enum eo_plan_action a)
{
	return EO_ENUM_NAME(action_names, a, "unknown");
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
	/* The generation this status was computed for, at the top level (kstatus, Argo CD). */
	if (x->st != NULL && x->gen > 0 &&
	    json_object_set_new(x->st, "observedGeneration", json_integer(x->gen)) != 0)
		x->ok = false;
	x->out->status = x->st;
	x->st = NULL;
	x->out->status_changed =
	    x->out->status != NULL && !json_equal(cur != NULL ? cur : empty, x->out->status);
	json_decref(empty);
}

int eo__plan_begin(struct eo__plan_ctx *x, struct eo__plan_counts *c,
		   const struct eo_plan_input *in, struct eo_plan_result *out)
{
	const json_t *cluster = in->cluster;
	json_t *cur = json_object_get(cluster, "status");
	char selector[EO_NAME_MAX];

	memset(x, 0, sizeof(*x));
	x->in = in;
	x->out = out;
	x->ok = true;
	x->gen = eo_cluster_generation(cluster);
	x->st = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	if (x->st == NULL)
		return -1;

	/* What the status says about the members holds whatever the spec says. */
	if (eo_name_cluster_selector(selector, sizeof(selector), eo_cluster_name(cluster)) != 0) {
		x->ok = false;
		return 0;
	}
	eo__plan_count_members(in, c);
	eo__plan_ensure_next_member_name(x);
	(void)eo_plan_member_issues(in->members, in->n_members, in->now, x->issues,
				    sizeof(x->issues));
	eo__plan_set_status(x, "selector", json_string(selector));
	eo__plan_set_status(x, "readyMembers", json_integer((json_int_t)c->ready));
	eo__plan_set_status(x, "brokenMembers", json_integer((json_int_t)c->broken));
	return 0;
}

void eo__plan_end(struct eo__plan_ctx *x)
{
	json_decref(x->st);
	x->st = NULL;
}

int eo_plan_cluster(const struct eo_plan_input *in, struct eo_plan_result *out)
{
	const json_t *cluster = in->cluster;
	const char *name = eo_cluster_name(cluster), *ns = eo_cluster_namespace(cluster);
	const char *uid = eo_cluster_uid(cluster);
	json_t *cur = json_object_get(cluster, "status");
	struct eo__plan_ctx x = {.in = in, .out = out, .ok = true};
	struct eo__plan_target t = {0};
	struct eo__plan_counts c;
	bool running;

	memset(out, 0, sizeof(*out));
	if (!eo_present(name) || !eo_present(ns) || !eo_present(uid))
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
	if (eo__plan_begin(&x, &c, in, out) != 0)
		return -1;
	if (!x.ok)
		goto done;
	running = eo_present(eo_cluster_cluster_id(cluster)) && c.dormant == 0 && c.n > 0;

	if (eo__plan_preconditions(&x, &c, running))
		goto done;

	if (eo__plan_target(&x, &c, running, &t))
		goto done;
	if (eo__plan_step_auth(&x, &c, running, running && t.complete))
		goto done;
	if (!eo_present(eo_cluster_cluster_id(cluster)))
		eo__plan_step_bootstrap(&x, &c, t.desired);
	else
		eo__plan_step_running(&x, &c, t.desired, t.has_dl && !t.complete);
	eo__plan_target_finish(&x, &t);
done:
	json_decref(t.spec_obs);
	if (x.ok)
		finish(&x, cur);
	eo__plan_end(&x);
	if (!x.ok) {
		eo_plan_result_clear(out);
		return -1;
	}
	return 0;
}
