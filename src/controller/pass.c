/*
 * controller/pass.c - the last write of a reconcile pass the apiserver refused (struct eo_pass,
 * plan/failure.h): the helpers that record and read it. Part of the reconcilers
 * (controller/internal.h).
 */
#include <stdio.h>
#include <string.h>

#include "controller/internal.h"

/*
 * Records a refused write: an answer of the apiserver (HTTP status >= 400) other than the
 * normal outcomes (404, 409 AlreadyExists / Conflict). Transport failures are not refusals:
 * the status write would fail the same way.
 */
void eo__ctl_note_refusal(struct eo_pass *pass, enum eo_plan_verb verb, const char *kind,
			  const char *name, eo_kube_err e, const struct eo_kube_error *err)
{
	if (e == EO_KUBE_OK || e == EO_KUBE_ENOTFOUND || e == EO_KUBE_EEXISTS ||
	    e == EO_KUBE_ECONFLICT || err == NULL || err->http_status < 400)
		return;
	pass->refusal.set = true;
	pass->refusal.verb = verb;
	snprintf(pass->refusal.kind, sizeof(pass->refusal.kind), "%s", kind);
	snprintf(pass->refusal.name, sizeof(pass->refusal.name), "%s", name != NULL ? name : "");
	pass->refusal.err = *err;
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
 * Records the refusal of a create whose name r holds an object that holder controls, not owner.
 */
void eo__ctl_note_taken(struct eo_pass *pass, const struct eo_kube_resource *r, const char *kind,
			const char *owner, const char *holder)
{
	struct eo_kube_error err = {.http_status = 409};

	snprintf(err.message, sizeof(err.message),
		 "%s %s already exists and is not controlled by %s (its controller: %s); delete "
		 "or rename it",
		 kind, r->name, owner, holder);
	eo__ctl_note_refusal(pass, EO_PLAN_VERB_CREATE, kind, r->name, EO_KUBE_EHTTP, &err);
}

/*
 * A create answered AlreadyExists: either the cache lags behind our own create (fine), or the
 * name is taken by an object that is not ours (not in the label-filtered cache), which no
 * retry fixes. Reads the object to tell which; the second is recorded as a refusal. r names
 * the object; owner_uid is the UID of the object that should control it.
 */
bool eo__ctl_taken_by_other(struct eo_controller *c, struct eo_pass *pass,
			    struct eo_kube_resource r, const char *kind, const char *owner,
			    const char *owner_uid)
{
	char holder[HOLDER_MAX];

	if (!eo__ctl_held_by_other(c, r, owner_uid, holder, sizeof(holder)))
		return false;
	eo__ctl_note_taken(pass, &r, kind, owner, holder);
	return true;
}

/* The recorded refusal as a plan input (pointing into the record); false when none. */
bool eo__ctl_take_refusal(const struct eo_pass *pass, struct eo_plan_failure *f)
{
	if (!pass->refusal.set)
		return false;
	*f = (struct eo_plan_failure){.verb = pass->refusal.verb,
				      .kind = pass->refusal.kind,
				      .name = pass->refusal.name,
				      .http_status = pass->refusal.err.http_status,
				      .detail = pass->refusal.err.message};
	return true;
}
