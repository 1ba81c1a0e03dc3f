/*
 * controller/pass.c - the state of one reconcile pass, per worker thread: the cluster's TLS
 * material and root password, and the last write the apiserver refused (plan/failure.h), with
 * the helpers that record and read it. Part of the reconcilers (controller/internal.h).
 */
#include <stdio.h>
#include <string.h>

#include "controller/internal.h"

/*
 * The TLS material of the cluster this pass works on (read from its Secrets at the start of the
 * pass, controller/tlsload.h), NULL for a plaintext cluster or when it could not be read. Per
 * thread, like the refusal record below: a pass runs on one worker thread from start to end.
 */
_Thread_local const struct eo_tls_material *eo__ctl_pass_tls;
/* The root password of that cluster (controller/authload.h), NULL without spec.auth. */
_Thread_local const struct eo_auth_creds *eo__ctl_pass_auth;

/*
 * The last write of this reconcile pass that the apiserver refused (plan/failure.h). Per
 * thread: a pass runs on one worker thread from start to end, so the act functions record
 * into it from their error paths and the reconciler reads it when the action failed.
 */
_Thread_local struct eo__ctl_refusal eo__ctl_refusal;

/*
 * Records a refused write: an answer of the apiserver (HTTP status >= 400) other than the
 * normal outcomes (404, 409 AlreadyExists / Conflict). Transport failures are not refusals:
 * the status write would fail the same way.
 */
void eo__ctl_note_refusal(enum eo_plan_verb verb, const char *kind, const char *name, eo_kube_err e,
			  const struct eo_kube_error *err)
{
	if (e == EO_KUBE_OK || e == EO_KUBE_ENOTFOUND || e == EO_KUBE_EEXISTS ||
	    e == EO_KUBE_ECONFLICT || err == NULL || err->http_status < 400)
		return;
	eo__ctl_refusal.set = true;
	eo__ctl_refusal.verb = verb;
	snprintf(eo__ctl_refusal.kind, sizeof(eo__ctl_refusal.kind), "%s", kind);
	snprintf(eo__ctl_refusal.name, sizeof(eo__ctl_refusal.name), "%s",
		 name != NULL ? name : "");
	eo__ctl_refusal.err = *err;
}

/*
 * Whether the object r names exists (read live) and is not controlled by owner_uid; who holds
 * it into holder (eo_desired_controller_of). False when it is ours, gone or unreadable.
 */
bool eo__ctl_held_by_other(struct eo_controller *c, struct eo_kube_resource r,
			   const char *owner_uid, char *holder, size_t n)
{
	struct eo_kube_error err = {0};
	json_t *live = NULL;
	bool other = false;

	if (r.name != NULL && eo_kube_get(c->kc, &r, &live, &err) == EO_KUBE_OK &&
	    !eo_desired_is_controlled_by(live, owner_uid)) {
		eo_desired_controller_of(live, holder, n);
		other = true;
	}
	json_decref(live);
	return other;
}

/*
 * A create answered AlreadyExists: either the cache lags behind our own create (fine), or the
 * name is taken by an object that is not ours (not in the label-filtered cache), which no
 * retry fixes. Reads the object to tell which; the second is recorded as a refusal. r names
 * the object; owner_uid is the UID of the object that should control it.
 */
bool eo__ctl_taken_by_other(struct eo_controller *c, struct eo_kube_resource r, const char *kind,
			    const char *owner, const char *owner_uid)
{
	struct eo_kube_error err = {0};
	char holder[HOLDER_MAX];

	if (!eo__ctl_held_by_other(c, r, owner_uid, holder, sizeof(holder)))
		return false;
	err = (struct eo_kube_error){.http_status = 409};
	snprintf(err.message, sizeof(err.message),
		 "%s %s already exists and is not controlled by %s (its controller: %s); delete "
		 "or rename it",
		 kind, r.name, owner, holder);
	eo__ctl_note_refusal(EO_PLAN_VERB_CREATE, kind, r.name, EO_KUBE_EHTTP, &err);
	return true;
}

/* The recorded refusal as a plan input (pointing into the record); false when none. */
bool eo__ctl_take_refusal(struct eo_plan_failure *f)
{
	if (!eo__ctl_refusal.set)
		return false;
	*f = (struct eo_plan_failure){.verb = eo__ctl_refusal.verb,
				      .kind = eo__ctl_refusal.kind,
				      .name = eo__ctl_refusal.name,
				      .http_status = eo__ctl_refusal.err.http_status,
				      .detail = eo__ctl_refusal.err.message};
	return true;
}
