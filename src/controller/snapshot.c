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
		const char *mname = eo_kube_obj_name(m);
		json_t *pod = NULL;

		if (mname == NULL || !eo_desired_is_controlled_by(m, uid))
			continue;
		pod = eo_cache_set_get(&c->pods, ns, mname);
		/*
		 * The member's own Pod; or, while `kubectl etcd migrate` takes the safety snapshot
		 * of a legacy cluster, the legacy Pod it is adopting (api/names.h).
		 */
		if (pod != NULL && !eo_desired_is_controlled_by(pod, eo_kube_obj_uid(m)) &&
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

void eo_snapshot_reconcile(struct eo_controller *c, const char *ns, const char *name,
			   struct eo_reconcile_out *out)
{
	struct eo_splan_result pr = {0};
	struct eo_splan_input in = {0};
	struct observed om = {0};
	struct eo_log_ctx lc;
	json_t *raw = NULL, *snap = NULL, *craw = NULL, *cluster = NULL, *job = NULL;
	json_t *pods = NULL, *dest_pvc = NULL;
	char job_name[EO_NAME_MAX];
	const char *cname;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	eo_log_ctx_init(&lc);
	eo_log_ctx_add(&lc, "snapshot", name);
	eo_log_ctx_add(&lc, "namespace", ns);
	raw = eo_cache_set_get(&c->snapshots, ns, name);
	if (raw == NULL)
		goto out; /* deleted: the Job goes with it (owner reference) */
	snap = eo_controller_typed_copy(raw, EO_API_GROUP_VERSION, EO_KIND_SNAPSHOT);
	if (snap == NULL || eo_name_snapshot_job(job_name, sizeof(job_name), name) != 0)
		goto fail;
	if (eo_snapshot_phase_is_terminal(eo_snapshot_phase(snap)))
		goto out;
	cname = eo_snapshot_cluster_name(snap);
	if (cname != NULL && (craw = eo_cache_set_get(&c->clusters, ns, cname)) != NULL) {
		cluster = eo_controller_typed_copy(craw, EO_API_GROUP_VERSION, EO_KIND_CLUSTER);
		if (cluster == NULL || observe(c, cluster, &om) != 0)
			goto fail;
	}
	job = eo_cache_set_get(&c->jobs, ns, job_name);
	in = (struct eo_splan_input){.snapshot = snap,
				     .cluster = cluster,
				     .members = om.v,
				     .n_members = om.n,
				     .operator_image = c->operator_image,
				     .build = &c->build,
				     .now = eo_controller_now(c)};
	if (job != NULL && !eo_desired_is_controlled_by(job, eo_kube_obj_uid(snap))) {
		in.foreign_job = true;
	} else if (job != NULL) {
		pods = eo_cache_set_by_owner(&c->pods, eo_kube_obj_uid(job));
		if (pods == NULL)
			goto fail;
		in.job = job;
		in.job_pods = pods;
	}
	if (eo_plan_snapshot(&in, &pr) != 0)
		goto fail;
	if (pr.action == EO_SPLAN_CONFIRM_JOB_GONE) {
		rc = job_live(c, &lc, ns, job_name);
		if (rc < 0)
			goto fail;
		if (rc > 0) { /* the cache lags behind */
			out->requeue_ms = REQUEUE_MS;
			goto out;
		}
		in.job_confirmed_gone = true;
		eo_splan_result_clear(&pr);
		if (eo_plan_snapshot(&in, &pr) != 0)
			goto fail;
	}
	if (pr.action == EO_SPLAN_READ_VOLUME) {
		if (volume_live(c, &lc, ns, snap, &dest_pvc) != 0)
			goto fail;
		in.dest_pvc_read = true;
		in.dest_pvc = dest_pvc;
		eo_splan_result_clear(&pr);
		if (eo_plan_snapshot(&in, &pr) != 0 || pr.action == EO_SPLAN_READ_VOLUME)
			goto fail;
	}
	eo_log_ctx_add(&lc, "action", eo_splan_action_name(pr.action));
	if (pr.action == EO_SPLAN_CREATE_JOB &&
	    eo_controller_create_job(c, &lc, ns, pr.job, "snapshot Job") != 0)
		goto fail;
	if (pr.status != NULL && pr.status_changed) {
		rc = eo_controller_write_status(c, &lc, eo_kube_res_at(EO_RES_SNAPSHOTS, ns, name),
						snap, pr.status);
		if (rc < 0)
			goto fail;
		if (rc > 0) {
			out->requeue_ms = REQUEUE_MS;
			goto out;
		}
		eo_log_kv(
		    pr.event_type != NULL && strcmp(pr.event_type, "Warning") == 0 ? EO_LOG_WARN
										   : EO_LOG_INFO,
		    &lc, "snapshot status changed", "phase",
		    json_string_value(json_object_get(pr.status, "phase")), "reason",
		    pr.event_reason != NULL ? pr.event_reason : "", "message", pr.message, NULL);
		if (c->rec != NULL && pr.event_type != NULL && pr.event_reason != NULL)
			eo_kube_event(c->rec, snap, pr.event_type, pr.event_reason, NULL, "%s",
				      pr.message);
	} else {
		eo_log_kv(EO_LOG_DEBUG, &lc, "snapshot reconciled", "message", pr.message, NULL);
	}
	out->requeue_ms = pr.requeue_ms;
	goto out;
fail:
	out->error = true;
out:
	eo_splan_result_clear(&pr);
	observed_free(&om);
	json_decref(dest_pvc);
	json_decref(pods);
	json_decref(job);
	json_decref(cluster);
	json_decref(craw);
	json_decref(snap);
	json_decref(raw);
}
