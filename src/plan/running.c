/*
 * plan/running.c - a bootstrapped cluster's pass: the quorum-loss recovery first
 * (plan/forcenew.c), the quorum gone for good, waking a dormant member, pausing
 * (plan/pause.c), the PodDisruptionBudget, then one membership step (plan/membership.c),
 * health and Progressing. Part of the cluster planner (plan/plan.h, plan/internal.h).
 */
#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/names.h"
#include "plan/forcenew.h"
#include "plan/internal.h"
#include "plan/storage.h"

/* The PodDisruptionBudget over the voters; true when it is the next step. */
bool eo__plan_step_pdb(struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired)
{
	const struct eo_plan_input *in = x->in;
	struct eo_plan_result *out = x->out;
	int min;

	if (c->voters == 0) {
		if (in->pdb == NULL)
			return false;
		eo__plan_msgf(x, "deleting the PodDisruptionBudget: no voting member");
		out->action = EO_PLAN_DELETE_PDB;
		return true;
	}
	min = eo_desired_pdb_min_available((int)c->voters, desired);
	out->object = eo_desired_pdb(in->cluster, min);
	if (out->object == NULL) {
		x->ok = false;
		return true;
	}
	if (in->pdb != NULL && (out->patch = eo_desired_pdb_patch(out->object, in->pdb)) == NULL) {
		json_decref(out->object);
		out->object = NULL;
		return false;
	}
	eo__plan_msgf(x, "%s the PodDisruptionBudget: minAvailable %d over %zu voter(s)",
		      in->pdb == NULL ? "creating" : "updating", min, c->voters);
	out->action = EO_PLAN_ENSURE_PDB;
	return true;
}

/* Whether a running voter on a PVC kept its data (a force-new-cluster could start from it). */
static bool survivor_with_data(const struct eo__plan_ctx *x)
{
	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];
		struct eo_storage st;

		eo_member_storage(pm->member, &st);
		if (!st.memory && eo__plan_counted_voter(pm->member) &&
		    !eo_plan_member_lost_data(pm->member, pm->pod, pm->pvc))
			return true;
	}
	return false;
}

/* The data is gone for good (message in out->message): say so and do nothing. */
static void quorum_gone(struct eo__plan_ctx *x)
{
	eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_QUORUM_LOST, x->out->message);
	eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_QUORUM_LOST, x->out->message);
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_QUORUM_LOST,
		      x->out->message);
	eo__plan_event(x, "Warning", EO_REASON_QUORUM_LOST);
	x->out->action = EO_PLAN_NONE;
}

/* The etcd quorum is gone for good (no member left, or a majority lost its data): say so. */
static bool step_quorum_lost(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
			     int32_t desired, bool lift)
{
	if (desired > 0 && c->n == 0 && c->deleting == 0) {
		/*
		 * Bootstrapped, but every EtcdMember is gone (deleted by hand): the PVCs and the
		 * data went with them and a new seed would start a different cluster. Say so.
		 */
		eo__plan_msgf(
		    x,
		    "no member of etcd cluster %s is left and its data went with them; the "
		    "etcd quorum is gone for good: delete and recreate the EtcdCluster",
		    eo_cluster_cluster_id(x->in->cluster));
		quorum_gone(x);
		return true;
	}
	if (!lift && c->voters > 0 && c->voters_lost >= c->voters / 2 + 1) {
		/*
		 * A majority of the voters lost their data (memory members their Pods, PVC
		 * members their PVCs): that data is gone and no MemberRemove can commit any more.
		 * Say so instead of waiting for Pods that will never come back. When a PVC
		 * member kept its data, the user may force a new cluster from it.
		 */
		char who[EO_PLAN_NAME_MAX], why[EO_FNC_MSG_MAX];
		bool can_force;

		if (!x->in->live_checked) {
			/* Never on the label-filtered caches alone: the Pods, PVCs, etcd first. */
			eo__plan_msgf(
			    x,
			    "%zu of %zu voting member(s) look lost (%s): reading their Pods and "
			    "PVCs "
			    "from the apiserver and asking etcd first",
			    c->voters_lost, c->voters, c->voters_lost_names);
			eo__plan_ask_live_check(x);
			return true;
		}
		can_force = survivor_with_data(x) &&
			    eo__plan_force_would_pass(x, who, sizeof(who), why, sizeof(why));
		eo__plan_msgf(
		    x,
		    "%zu of %zu voting member(s) lost their data (%s: a memory member's Pod or "
		    "a member's PVC is gone); the etcd quorum is gone for good: delete and "
		    "recreate the EtcdCluster%s%s%s%s",
		    c->voters_lost, c->voters, c->voters_lost_names,
		    can_force ? ", or force a new cluster from a member that kept its data "
				"(annotation " EO_ANNOTATION_FORCE_NEW_CLUSTER
				"=<member>; writes it had not replicated are lost): member "
			      : "",
		    can_force ? who : "",
		    !can_force && survivor_with_data(x) && why[0] != '\0'
			? "; forcing a new cluster would be refused now: "
			: "",
		    !can_force && survivor_with_data(x) ? why : "");
		quorum_gone(x);
		return true;
	}
	return false;
}

/* Progressing after the step: working towards status.observed, or reconciled. */
static void progressing_of(struct eo__plan_ctx *x, bool in_flight)
{
	struct eo_plan_result *out = x->out;

	if (in_flight) {
		const char *r = eo_condition_reason(x->st, EO_COND_PROGRESSING);

		if (!eo_condition_is_true(x->st, EO_COND_PROGRESSING) || r == NULL ||
		    (strcmp(r, EO_REASON_SPEC_CHANGED) != 0 &&
		     strcmp(r, EO_REASON_RETRY_AFTER_DEADLINE) != 0 &&
		     strcmp(r, EO_PLAN_REASON_ROLLING) != 0 &&
		     strcmp(r, EO_PLAN_REASON_ROLL_REFUSED) != 0 &&
		     strcmp(r, EO_PLAN_REASON_STORAGE_CHANGING) != 0))
			r = EO_REASON_INITIAL_SNAPSHOT;
		/* Members moving onto the target's storage (plan/storage.h), once no roll is due.
		 */
		if (x->sv.outdated > 0 && x->rv.todo == 0)
			r = EO_PLAN_REASON_STORAGE_CHANGING;
		char m[EO_PLAN_MSG_MAX + 64];

		/* The step under way, so that status and log say what the operator waits for. */
		snprintf(m, sizeof(m), "working towards the target in status.observed%s%s",
			 out->message[0] ? ": " : "", out->message);
		eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_TRUE, r, m);
	} else {
		eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_RECONCILED,
			      "the cluster matches status.observed");
	}
}

/* With a clusterID: membership steps, the PDB and health. */
void eo__plan_step_running(struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired,
			   bool in_flight)
{
	struct eo_plan_result *out = x->out;
	bool settled = c->pending == 0 && (int32_t)c->n == desired && c->voters == c->n;
	bool lift = false;

	if (eo__plan_step_force_new_cluster(x, c, desired, &lift) || !x->ok)
		return;
	if (out->action == EO_PLAN_CLEAR_FORCE_REQUEST) {
		eo__plan_health(x, c);
		eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_RECONCILED,
			      "the cluster matches status.observed");
		return;
	}
	if (step_quorum_lost(x, c, desired, lift))
		return;
	if (desired > 0 && c->sleeper != NULL) {
		/* Resume first: the dormant member's Pod comes back on its PVC. */
		eo__plan_msgf(x, "waking dormant member %s", eo_member_name(c->sleeper->member));
		eo__plan_event(x, "Normal", EO_PLAN_REASON_RESUMED);
		out->action = EO_PLAN_WAKE_DORMANT;
		out->member = c->sleeper->member;
	} else if (desired == 0 && c->deleting == 0 && c->n <= 1) {
		eo__plan_step_pause(x, c);
		/* Paused: the PDB goes once no voter is left (the dormant one has no Pod). */
		if (out->action == EO_PLAN_NONE)
			(void)eo__plan_step_pdb(x, c, 0);
		return;
	} else if (eo__plan_step_pdb(x, c, desired)) {
		/* the PDB first: cheap, and it must follow every voter change */
	} else if (desired == 0 && c->deleting > 0) {
		eo__plan_msgf(x, "pausing: waiting for %zu member(s) being deleted", c->deleting);
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
	} else if (desired == 0) {
		/* The staged descent: the newest member goes, one at a time, down to one. */
		eo__plan_step_membership(x, c, 1);
	} else if (c->deleting > 0) {
		eo__plan_msgf(x, "waiting for %zu member(s) being deleted", c->deleting);
		out->action = EO_PLAN_WAIT;
		out->requeue_ms = EO_PLAN_REQUEUE_SHORT_MS;
	} else if (!settled || in_flight || c->ready < c->n || c->broken > 0 || x->rv.todo > 0 ||
		   c->node_due > 0 || x->sv.outdated > 0) {
		eo__plan_step_membership(x, c, desired);
	} else {
		out->action = EO_PLAN_NONE;
		out->requeue_ms = EO_PLAN_REQUEUE_STEADY_MS;
	}
	eo__plan_health(x, c);
	if (desired > 0 && c->n == 1 && c->deleting == 0 && c->ready == 0)
		eo__plan_resuming(x);
	if (x->held)
		return; /* Progressing says DeadlineExceeded (held_conditions) */
	progressing_of(x, in_flight);
}
