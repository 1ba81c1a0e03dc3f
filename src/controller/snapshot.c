/*
 * controller/snapshot.c - the EtcdSnapshot reconciler: observe, plan/snapshot.h decides, act.
 *
 * Observe: the snapshot, its cluster and members with their Pods, the Job <snapshot>-snapshot
 * and the Job's Pods, all from the informer caches. Act: create the Job (an AlreadyExists is
 * a cache lag, not an error), GET the Job live before calling it lost, write the status
 * (merge patch guarded by resourceVersion) and emit the Event of a status change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/meta.h"
#include "api/cluster.h"
#include "api/member.h"
#include "api/names.h"
#include "api/snapshot.h"
#include "controller/controller.h"
#include "controller/jobs.h"
#include "obs/log.h"
#include "plan/snapshot.h"

#define REQUEUE_MS 1000L

struct observed {
	struct eo_plan_member *v;
	size_t n;
	json_t *keep; /* references the entries borrow */
};

static void observed_free(struct observed *o)
{
	free(o->v);
	json_decref(o->keep);
	memset(o, 0, sizeof(*o));
}

/* The cluster's members (controlled by it) with their Pods. 0 or -1. */
static int observe(struct eo_controller *c, const json_t *cluster, struct observed *o)
{
	const char *ns = eo_cluster_namespace(cluster), *uid = eo_cluster_uid(cluster);
	json_t *raw = eo_cache_set_by_owner(&c->members, uid), *m = NULL;
	size_t i;

	memset(o, 0, sizeof(*o));
	o->keep = json_array();
	if (raw == NULL || o->keep == NULL ||
	    (o->v = calloc(json_array_size(raw) + 1, sizeof(*o->v))) == NULL)
		goto fail;
	json_array_foreach(raw, i, m)
	{
		const char *mname = eo_meta_name(m);
		json_t *pod = NULL;

		if (mname == NULL || !eo_desired_is_controlled_by(m, uid))
			continue;
		pod = eo_cache_set_get(&c->pods, ns, mname);
		/*
		 * The member's own Pod; or, while `kubectl etcd migrate` takes the safety snapshot
		 * of a legacy cluster, the legacy Pod it is adopting (api/names.h).
		 */
		if (pod != NULL && !eo_desired_is_controlled_by(pod, eo_meta_uid(m)) &&
		    !eo_member_pod_adopted(m, pod)) {
			json_decref(pod);
			pod = NULL;
		}
		if (json_array_append(o->keep, m) != 0 ||
		    (pod != NULL && json_array_append_new(o->keep, pod) != 0))
			goto fail;
		o->v[o->n].member = m;
		o->v[o->n].pod = pod;
		o->n++;
	}
	json_decref(raw);
	return 0;
fail:
	json_decref(raw);
	observed_free(o);
	return -1;
}

/* Live GET of the Job: 1 present, 0 gone, -1 error. */
static int job_live(struct eo_controller *c, const struct eo_log_ctx *lc, const char *ns,
		    const char *job_name)
{
	struct eo_kube_resource r = EO_RES_JOBS;
	struct eo_kube_error err = {0};
	json_t *obj = NULL;
	eo_kube_err e;

	r.ns = ns;
	r.name = job_name;
	e = eo_kube_get(c->kc, &r, &obj, &err);
	json_decref(obj);
	if (e == EO_KUBE_OK)
		return 1;
	if (e == EO_KUBE_ENOTFOUND)
		return 0;
	eo_log_kv(EO_LOG_WARN, lc, "reading the snapshot Job failed", "error", eo_kube_strerror(e),
		  "detail", err.message, NULL);
	return -1;
}

/*
 * Live GET of the snapshot's destination PVC (never the cache: it holds only the operator's
 * labelled PVCs and may lag). *pvc the object or NULL when there is none. 0, or -1 on error.
 */
static int volume_live(struct eo_controller *c, const struct eo_log_ctx *lc, const char *ns,
		       const json_t *snap, json_t **pvc)
{
	struct eo_kube_resource r = {"v1", "persistentvolumeclaims", NULL, NULL};
	struct eo_kube_error err = {0};
	struct eo_snapshot_location d;
	eo_kube_err e;

	*pvc = NULL;
	eo_snapshot_destination(snap, &d);
	r.ns = ns;
	r.name = d.claim_name;
	e = eo_kube_get(c->kc, &r, pvc, &err);
	if (e == EO_KUBE_OK || e == EO_KUBE_ENOTFOUND)
		return 0;
	*pvc = NULL;
	eo_log_kv(EO_LOG_WARN, lc, "reading the destination PVC failed", "pvc", d.claim_name,
		  "error", eo_kube_strerror(e), "detail", err.message, NULL);
	return -1;
}

/* What one pass of the snapshot reconciler observes, plans and acts with. */
struct snapshot_pass {
	struct eo_log_ctx lc;
	struct eo_splan_input in;
	struct eo_splan_result pr;
	struct observed om;
	json_t *raw, *snap, *craw, *cluster, *job, *pods, *dest_pvc;
	char job_name[EO_NAME_MAX];
};

static void snapshot_pass_clear(struct snapshot_pass *x)
{
	eo_splan_result_clear(&x->pr);
	observed_free(&x->om);
	json_decref(x->dest_pvc);
	json_decref(x->pods);
	json_decref(x->job);
	json_decref(x->cluster);
	json_decref(x->craw);
	json_decref(x->snap);
	json_decref(x->raw);
}

/*
 * The snapshot, its cluster's members and its Job (with the Job's Pods). 0 plan, 1 nothing to
 * do (gone, or finished), -1 failure.
 */
static int snapshot_observe(struct eo_controller *c, struct snapshot_pass *x, const char *ns,
			    const char *name)
{
	const char *cname;

	x->raw = eo_cache_set_get(&c->snapshots, ns, name);
	if (x->raw == NULL)
		return 1; /* deleted: the Job goes with it (owner reference) */
	x->snap = eo_controller_typed_copy(x->raw, EO_API_GROUP_VERSION, EO_KIND_SNAPSHOT);
	if (x->snap == NULL || eo_name_snapshot_job(x->job_name, sizeof(x->job_name), name) != 0)
		return -1;
	if (eo_snapshot_phase_is_terminal(eo_snapshot_phase(x->snap)))
		return 1;
	cname = eo_snapshot_cluster_name(x->snap);
	if (cname != NULL && (x->craw = eo_cache_set_get(&c->clusters, ns, cname)) != NULL) {
		x->cluster =
		    eo_controller_typed_copy(x->craw, EO_API_GROUP_VERSION, EO_KIND_CLUSTER);
		if (x->cluster == NULL || observe(c, x->cluster, &x->om) != 0)
			return -1;
	}
	x->job = eo_cache_set_get(&c->jobs, ns, x->job_name);
	x->in = (struct eo_splan_input){.snapshot = x->snap,
					.cluster = x->cluster,
					.members = x->om.v,
					.n_members = x->om.n,
					.operator_image = c->operator_image,
					.build = &c->build,
					.now = eo_controller_now(c)};
	if (x->job != NULL && !eo_desired_is_controlled_by(x->job, eo_meta_uid(x->snap))) {
		x->in.foreign_job = true;
	} else if (x->job != NULL) {
		x->pods = eo_cache_set_by_owner(&c->pods, eo_meta_uid(x->job));
		if (x->pods == NULL)
			return -1;
		x->in.job = x->job;
		x->in.job_pods = x->pods;
	}
	return 0;
}

/*
 * Plans, and plans again after the live reads the plan asks for (the Job gone, the
 * destination PVC). 0 act, 1 the cache lags (out set), -1 failure.
 */
static int snapshot_plan(struct eo_controller *c, struct snapshot_pass *x, const char *ns,
			 struct eo_reconcile_out *out)
{
	int rc;

	if (eo_plan_snapshot(&x->in, &x->pr) != 0)
		return -1;
	if (x->pr.action == EO_SPLAN_CONFIRM_JOB_GONE) {
		rc = job_live(c, &x->lc, ns, x->job_name);
		if (rc < 0)
			return -1;
		if (rc > 0) { /* the cache lags behind */
			out->requeue_ms = REQUEUE_MS;
			return 1;
		}
		x->in.job_confirmed_gone = true;
		eo_splan_result_clear(&x->pr);
		if (eo_plan_snapshot(&x->in, &x->pr) != 0)
			return -1;
	}
	if (x->pr.action == EO_SPLAN_READ_VOLUME) {
		if (volume_live(c, &x->lc, ns, x->snap, &x->dest_pvc) != 0)
			return -1;
		x->in.dest_pvc_read = true;
		x->in.dest_pvc = x->dest_pvc;
		eo_splan_result_clear(&x->pr);
		if (eo_plan_snapshot(&x->in, &x->pr) != 0 || x->pr.action == EO_SPLAN_READ_VOLUME)
			return -1;
	}
	return 0;
}

/* The planned status written and its Event; the requeue. 0, 1 conflict (out set), -1. */
static int snapshot_report(struct eo_controller *c, struct snapshot_pass *x, const char *ns,
			   const char *name, struct eo_reconcile_out *out)
{
	const struct eo_splan_result *pr = &x->pr;
	int rc;

	if (pr->status != NULL && pr->status_changed) {
		rc = eo_controller_write_status(
		    c, &x->lc, eo_kube_res_at(EO_RES_SNAPSHOTS, ns, name), x->snap, pr->status);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			out->requeue_ms = REQUEUE_MS;
			return 1;
		}
		eo_log_kv(
		    pr->event_type != NULL && strcmp(pr->event_type, "Warning") == 0 ? EO_LOG_WARN
										     : EO_LOG_INFO,
		    &x->lc, "snapshot status changed", "phase",
		    json_string_value(json_object_get(pr->status, "phase")), "reason",
		    pr->event_reason != NULL ? pr->event_reason : "", "message", pr->message, NULL);
		if (c->rec != NULL && pr->event_type != NULL && pr->event_reason != NULL)
			eo_kube_event(c->rec, x->snap, pr->event_type, pr->event_reason, NULL, "%s",
				      pr->message);
	} else {
		eo_log_kv(EO_LOG_DEBUG, &x->lc, "snapshot reconciled", "message", pr->message,
			  NULL);
	}
	out->requeue_ms = pr->requeue_ms;
	return 0;
}

void eo_snapshot_reconcile(struct eo_controller *c, const char *ns, const char *name,
			   struct eo_reconcile_out *out)
{
	struct snapshot_pass x;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&x, 0, sizeof(x));
	eo_log_ctx_init(&x.lc);
	eo_log_ctx_add(&x.lc, "snapshot", name);
	eo_log_ctx_add(&x.lc, "namespace", ns);
	rc = snapshot_observe(c, &x, ns, name);
	if (rc == 0)
		rc = snapshot_plan(c, &x, ns, out);
	if (rc == 0) {
		eo_log_ctx_add(&x.lc, "action", eo_splan_action_name(x.pr.action));
		if (x.pr.action == EO_SPLAN_CREATE_JOB &&
		    eo_controller_create_job(c, &x.lc, ns, x.pr.job, "snapshot Job") != 0)
			rc = -1;
	}
	if (rc == 0)
		rc = snapshot_report(c, &x, ns, name, out);
	if (rc < 0)
		out->error = true;
	snapshot_pass_clear(&x);
}
