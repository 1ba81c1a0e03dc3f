/*
 * controller/retain.c - spec.deletionPolicy Retain when the cluster goes: every member's PVC,
 * read live, loses its owner reference (a merge patch with its resourceVersion) before the
 * retain-data finalizer is dropped (plan/retain.h decides). Part of the cluster reconciler
 * (controller/internal.h).
 */
#include <stdio.h>
#include <string.h>

#include "controller/internal.h"

/* Every member's PVC read from the apiserver into om (kept alive there). 0, or -1. */
static int read_pvcs_live(struct eo_controller *c, const struct eo_log_ctx *lc,
			  struct observed_members *om)
{
	for (size_t i = 0; i < om->n; i++) {
		const json_t *m = om->v[i].member;
		char pvc_name[EO_NAME_MAX];
		json_t *pvc = NULL;

		if (eo_name_member_pvc(pvc_name, sizeof(pvc_name), eo_member_name(m)) != 0 ||
		    eo__ctl_get_live(c, lc,
				     eo_kube_res_at(RES_PVCS, eo_member_namespace(m), pvc_name),
				     &pvc) != 0)
			return -1;
		if (pvc != NULL && json_array_append_new(om->owned, pvc) != 0)
			return -1;
		om->v[i].pvc = pvc;
	}
	return 0;
}

/* Points the member whose PVC is named pvc_name at obj (om keeps it alive). 0, or -1. */
static int observe_pvc(struct observed_members *om, const char *pvc_name, json_t *obj)
{
	for (size_t i = 0; i < om->n; i++) {
		char name[EO_NAME_MAX];

		if (eo_name_member_pvc(name, sizeof(name), eo_member_name(om->v[i].member)) != 0 ||
		    strcmp(name, pvc_name) != 0)
			continue;
		if (json_array_append(om->owned, obj) != 0)
			return -1;
		om->v[i].pvc = obj;
		return 0;
	}
	return 0;
}

/* A write of eo__ctl_act_retain() the apiserver refused: a Warning Event with its answer. */
static void retain_refused(struct eo_controller *c, struct eo_pass *pass, const json_t *cluster,
			   const char *what)
{
	struct eo_plan_failure f;
	char msg[EO_PLAN_FAILURE_MSG_MAX];

	if (!eo__ctl_take_refusal(pass, &f))
		return;
	eo_plan_failure_message(&f, msg, sizeof(msg));
	eo_log_kv(EO_LOG_WARN, pass->lc, "deletionPolicy Retain: write refused", "step", what,
		  "message", msg, NULL);
	eo__ctl_emit(c, cluster, "Warning", eo_plan_failure_reason(&f), msg);
}

/* RELEASE_PVC: the merge patch onto the PVC; the answer replaces the PVC in om. */
static int release_pvc(struct eo_controller *c, struct eo_pass *pass, const json_t *cluster,
		       struct observed_members *om, const struct eo_retain_result *rr)
{
	struct eo_kube_resource r =
	    eo_kube_res_at(RES_PVCS, eo_cluster_namespace(cluster), rr->pvc);
	struct eo_kube_error err = {0};
	json_t *got = NULL;
	eo_kube_err e = eo_kube_patch(c->kc, &r, rr->patch, &got, &err);
	int rc;

	eo__ctl_note_refusal(pass, EO_PLAN_VERB_PATCH, "PersistentVolumeClaim", rr->pvc, e, &err);
	if (e != EO_KUBE_OK) {
		json_decref(got);
		eo_log_kv(e == EO_KUBE_ECONFLICT || e == EO_KUBE_ENOTFOUND ? EO_LOG_INFO
									   : EO_LOG_WARN,
			  pass->lc, "releasing the PVC failed", "pvc", rr->pvc, "error",
			  eo_kube_strerror(e), "detail", err.message, NULL);
		return e == EO_KUBE_ECONFLICT || e == EO_KUBE_ENOTFOUND ? 1 : -1;
	}
	eo_log_kv(EO_LOG_INFO, pass->lc, "PVC released", "pvc", rr->pvc, "member", rr->member,
		  "message", rr->message, NULL);
	eo__ctl_emit(c, cluster, rr->event_type, rr->event_reason, rr->message);
	rc = got != NULL ? observe_pvc(om, rr->pvc, got) : 0;
	json_decref(got);
	return rc;
}

/*
 * spec.deletionPolicy Retain (plan/retain.h), ahead of the cluster's plan: its finalizer
 * added or removed, and on deletion each member's PVC released, then the finalizer dropped
 * once the PVCs read live say so. 0: nothing to do, go on with the plan; 1: done for this pass
 * (*requeue set when it must come back); -1: failure.
 */
int eo__ctl_act_retain(struct eo_controller *c, struct eo_pass *pass, const json_t *cluster,
		       struct observed_members *om, long *requeue)
{
	struct eo_retain_input in = {.cluster = cluster, .members = om->v, .n_members = om->n};
	struct eo_retain_result rr = {0};
	struct eo_kube_resource r =
	    eo_kube_res_at(RES_CLUSTERS, eo_cluster_namespace(cluster), eo_cluster_name(cluster));
	bool live = false;
	int rc = -1;

	/* each release is one PVC; the live read before the drop plans once more */
	for (size_t steps = 0;; steps++) {
		if (steps > 2 * om->n + 2) { /* the PVCs keep changing under the loop */
			*requeue = CONFLICT_REQUEUE_MS;
			return 1;
		}
		if (eo_plan_retain(&in, &rr) != 0)
			goto out;
		if (rr.action == EO_RETAIN_RELEASE_PVC) {
			rc = release_pvc(c, pass, cluster, om, &rr);
			if (rc != 0)
				goto done;
		} else if (rr.action == EO_RETAIN_DROP_FINALIZER && rr.retained && !live) {
			if (read_pvcs_live(c, pass->lc, om) != 0)
				goto out;
			live = true;
		} else {
			break;
		}
		eo_plan_retain_clear(&rr);
		rc = -1;
	}
	switch (rr.action) {
	case EO_RETAIN_NONE:
		rc = 0;
		goto out;
	case EO_RETAIN_ADD_FINALIZER:
	case EO_RETAIN_DROP_FINALIZER:
		rc = eo__ctl_patch_finalizer(c, pass, r, cluster, EO_KIND_CLUSTER,
					     EO_FINALIZER_RETAIN_DATA,
					     rr.action == EO_RETAIN_ADD_FINALIZER);
		if (rc != 0)
			goto done;
		eo_log_kv(EO_LOG_INFO, pass->lc,
			  rr.action == EO_RETAIN_ADD_FINALIZER ? "retain finalizer added"
							       : "retain finalizer dropped",
			  "message", rr.message, NULL);
		eo__ctl_emit(c, cluster, rr.event_type, rr.event_reason, rr.message);
		rc = 1;
		goto out;
	default:
		goto out;
	}
done:
	if (rc > 0)
		*requeue = CONFLICT_REQUEUE_MS;
	else if (rc < 0)
		retain_refused(c, pass, cluster, eo_retain_action_name(rr.action));
out:
	eo_plan_retain_clear(&rr);
	return rc;
}
