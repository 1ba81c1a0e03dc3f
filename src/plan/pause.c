/*
 * plan/pause.c - pause and resume of a bootstrapped cluster (spec.replicas 0): the last member
 * goes dormant and keeps its PVC; the conditions while paused and while it wakes. Part of the
 * cluster planner (plan/plan.h, plan/internal.h).
 */
#include <stdio.h>
#include <string.h>

#include "api/conditions.h"
#include "api/member.h"
#include "api/names.h"
#include "plan/internal.h"

/* The three conditions of a paused cluster, with the message in out->message. */
static void paused_conditions(struct eo__plan_ctx *x)
{
	eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_PAUSED, x->out->message);
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_PAUSED, x->out->message);
	eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_FALSE, EO_REASON_PAUSED, x->out->message);
}

/*
 * replicas 0 on a bootstrapped cluster once one member (or none) is left and nothing is being
 * deleted: mark the last member dormant, or, when it already is, stay paused. Sets the Paused
 * conditions (health and Progressing do not apply while paused).
 */
void eo__plan_step_pause(struct eo__plan_ctx *x, const struct eo__plan_counts *c)
{
	const struct eo_plan_input *in = x->in;
	struct eo_plan_result *out = x->out;
	char pvc[EO_NAME_MAX];

	if (c->n == 0) {
		eo__plan_msgf(x, "cluster is paused; no member is left (data is lost)");
		paused_conditions(x);
		out->action = EO_PLAN_NONE;
		return;
	}
	for (size_t i = 0; i < in->n_members; i++) {
		const struct eo_plan_member *pm = &in->members[i];

		if (eo_member_is_deleting(pm->member))
			continue;
		if (eo_name_member_pvc(pvc, sizeof(pvc), eo_member_name(pm->member)) != 0) {
			x->ok = false;
			return;
		}
		if (eo_member_dormant(pm->member)) {
			eo__plan_msgf(x, "cluster is paused; data is preserved on PVC %s", pvc);
			out->action = EO_PLAN_NONE;
		} else {
			eo__plan_msgf(
			    x,
			    "pausing the cluster: member %s goes dormant; data is preserved on "
			    "PVC %s",
			    eo_member_name(pm->member), pvc);
			eo__plan_event(x, "Normal", EO_REASON_PAUSED);
			out->action = EO_PLAN_SET_DORMANT;
			out->member = pm->member;
		}
		paused_conditions(x);
		return;
	}
}

/*
 * While a paused cluster's only member is woken and its Pod not ready yet, the cluster still
 * reads Paused (with what is happening) rather than QuorumLost: nothing was lost.
 */
void eo__plan_resuming(struct eo__plan_ctx *x)
{
	const json_t *cur = json_object_get(x->in->cluster, "status");
	const char *r = eo_condition_reason(cur, EO_COND_AVAILABLE);
	char pvc[EO_NAME_MAX];

	if (r == NULL || strcmp(r, EO_REASON_PAUSED) != 0 ||
	    eo_condition_is_true(cur, EO_COND_AVAILABLE))
		return;
	for (size_t i = 0; i < x->in->n_members; i++) {
		const json_t *m = x->in->members[i].member;
		char msg[EO_PLAN_MSG_MAX];

		if (eo_member_is_deleting(m))
			continue;
		if (eo_name_member_pvc(pvc, sizeof(pvc), eo_member_name(m)) != 0) {
			x->ok = false;
			return;
		}
		snprintf(msg, sizeof(msg),
			 "resuming: member %s is starting again; data is preserved on PVC %s",
			 eo_member_name(m), pvc);
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_PAUSED, msg);
		eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_FALSE, EO_REASON_PAUSED, msg);
		return;
	}
}
