/*
 * controller/schedule.c - the EtcdSnapshotSchedule reconciler: observe, plan/schedule.h
 * decides, act.
 *
 * Observe (informer caches): the schedule, the EtcdSnapshots with an owner reference to it,
 * each one's Job <snapshot>-prune (when the snapshot controls it) and that Job's Pods.
 * Act: create the scheduled EtcdSnapshot (an AlreadyExists is looked up live: ours means a
 * retry, anything else is a taken name and the plan runs again with it), create prune
 * Jobs, delete pruned EtcdSnapshots (precondition: their UID), write the status (merge
 * patch guarded by resourceVersion), emit the plan's Events.
 *
 * The operator itself never reads a Secret or touches storage here: the prune Jobs do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/meta.h"
#include "api/names.h"
#include "api/schedule.h"
#include "api/snapshot.h"
#include "controller/cluster_metrics.h"
#include "controller/controller.h"
#include "controller/jobs.h"
#include "obs/log.h"
#include "plan/schedule.h"
#include "plan/volref.h"

#define REQUEUE_MS 1000L

static const struct eo_kube_resource RES_SCHEDULES = {EO_API_GROUP_VERSION, EO_PLURAL_SCHEDULES,
						      NULL, NULL};

struct observed {
	struct eo_schplan_snapshot *v;
	size_t n;
	json_t *keep; /* references the entries borrow */
};

static void observed_free(struct observed *o)
{
	free(o->v);
	json_decref(o->keep);
	memset(o, 0, sizeof(*o));
}

static int observe(struct eo_controller *c, const json_t *sch, struct observed *o)
{
	const char *ns = eo_meta_namespace(sch);
	json_t *raw = eo_cache_set_by_owner(&c->snapshots, eo_meta_uid(sch)), *s = NULL;
	size_t i;

	memset(o, 0, sizeof(*o));
	o->keep = json_array();
	if (raw == NULL || o->keep == NULL ||
	    (o->v = calloc(json_array_size(raw) + 1, sizeof(*o->v))) == NULL)
		goto fail;
	json_array_foreach(raw, i, s)
	{
		const char *name = eo_meta_name(s);
		char jname[EO_NAME_MAX];
		json_t *snap = NULL, *job = NULL, *pods = NULL;

		if (name == NULL || eo_name_prune_job(jname, sizeof(jname), name) != 0)
			continue;
		/*
		 * The cache decodes a fresh object for every call: it is ours to complete with
		 * apiVersion/kind (list items lack them; the prune Job's owner reference needs
		 * them), no deep copy.
		 */
		snap = json_incref(s);
		if ((json_object_get(snap, "apiVersion") == NULL &&
		     json_object_set_new(snap, "apiVersion", json_string(EO_API_GROUP_VERSION)) !=
			 0) ||
		    (json_object_get(snap, "kind") == NULL &&
		     json_object_set_new(snap, "kind", json_string(EO_KIND_SNAPSHOT)) != 0)) {
			json_decref(snap);
			goto fail;
		}
		if (json_array_append_new(o->keep, snap) != 0)
			goto fail;
		job = eo_cache_set_get(&c->jobs, ns, jname);
		if (job != NULL && !eo_desired_is_controlled_by(job, eo_meta_uid(snap))) {
			json_decref(job);
			job = NULL;
		}
		if (job != NULL) {
			if (json_array_append_new(o->keep, job) != 0)
				goto fail;
			pods = eo_cache_set_by_owner(&c->pods, eo_meta_uid(job));
			if (pods == NULL || json_array_append_new(o->keep, pods) != 0)
				goto fail;
		}
		o->v[o->n++] = (struct eo_schplan_snapshot){
		    .snapshot = snap, .prune_job = job, .prune_job_pods = pods};
	}
	json_decref(raw);
	return 0;
fail:
	json_decref(raw);
	observed_free(o);
	return -1;
}

/*
 * Creates the scheduled EtcdSnapshot. 0 created, 2 already there and ours (a retry), 1 the
 * name is held by an object the schedule does not own (eo_schplan_owns), -1 failure.
 */
static int create_snapshot(struct eo_controller *c, const struct eo_log_ctx *lc, const char *ns,
			   const json_t *sch, json_t *snap)
{
	struct eo_kube_resource r = EO_RES_SNAPSHOTS;
	struct eo_kube_error err = {0};
	json_t *live = NULL;
	eo_kube_err e;
	int rc;

	r.ns = ns;
	e = eo_kube_create(c->kc, &r, snap, NULL, &err);
	if (e == EO_KUBE_OK)
		return 0;
	if (e != EO_KUBE_EEXISTS) {
		eo_log_kv(EO_LOG_WARN, lc, "creating the scheduled snapshot failed", "error",
			  eo_kube_strerror(e), "detail", err.message, NULL);
		if (c->rec != NULL)
			eo_kube_event(c->rec, sch, "Warning", "CreateFailed", NULL,
				      "creating EtcdSnapshot %s failed: %s", eo_meta_name(snap),
				      err.message);
		return -1;
	}
	r.name = eo_meta_name(snap);
	e = eo_kube_get(c->kc, &r, &live, &err);
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, lc, "reading the scheduled snapshot failed", "error",
			  eo_kube_strerror(e), "detail", err.message, NULL);
		return -1;
	}
	rc = eo_schplan_owns(sch, live) ? 2 : 1;
	json_decref(live);
	return rc;
}

static int delete_snapshot(struct eo_controller *c, const struct eo_log_ctx *lc, const char *ns,
			   const json_t *snap)
{
	struct eo_kube_resource r = EO_RES_SNAPSHOTS;
	struct eo_kube_delete_opts o = {.propagation_policy = "Background",
					.uid = eo_meta_uid(snap),
					.grace_period_seconds = -1};
	struct eo_kube_error err = {0};
	eo_kube_err e;

	r.ns = ns;
	r.name = eo_meta_name(snap);
	e = eo_kube_delete(c->kc, &r, &o, &err);
	if (e == EO_KUBE_OK || e == EO_KUBE_ENOTFOUND || e == EO_KUBE_ECONFLICT)
		return 0;
	eo_log_kv(EO_LOG_WARN, lc, "deleting a pruned snapshot failed", "snapshot", r.name, "error",
		  eo_kube_strerror(e), "detail", err.message, NULL);
	return -1;
}

/*
 * Before a prune Job mounts a snapshot's PVC destination: a live read of the PVC, judged by
 * plan/volref.h. A refusal is written into the snapshot's entry of om (reason and why, in
 * whys[k]) for the planner. 1 when something was refused, 0 when not, -1 when a read failed.
 */
static int check_prune_volumes(struct eo_controller *c, const struct eo_log_ctx *lc, const char *ns,
			       const struct eo_schplan_result *pr, struct observed *om,
			       char (*whys)[EO_PLAN_MSG_MAX / 2])
{
	int refused = 0;

	for (size_t i = 0; i < pr->n_prune && i < EO_SCHPLAN_MAX_PRUNE; i++) {
		struct eo_kube_resource r = {"v1", "persistentvolumeclaims", NULL, NULL};
		struct eo_kube_error err = {0};
		struct eo_snapshot_location d;
		enum eo_volref_verdict v;
		json_t *pvc = NULL;
		eo_kube_err e;
		size_t k;

		if (pr->prune[i].op != EO_SCHPLAN_PRUNE_CREATE_JOB)
			continue;
		eo_snapshot_destination(pr->prune[i].snapshot, &d);
		if (d.kind != EO_LOCATION_PVC)
			continue;
		for (k = 0; k < om->n && om->v[k].snapshot != pr->prune[i].snapshot; k++)
			;
		if (k == om->n)
			continue;
		r.ns = ns;
		r.name = d.claim_name;
		e = eo_kube_get(c->kc, &r, &pvc, &err);
		if (e != EO_KUBE_OK && e != EO_KUBE_ENOTFOUND) {
			eo_log_kv(EO_LOG_WARN, lc, "reading a prune destination PVC failed", "pvc",
				  d.claim_name, "error", eo_kube_strerror(e), "detail", err.message,
				  NULL);
			return -1;
		}
		v = eo_plan_volref_check(e == EO_KUBE_OK ? pvc : NULL, d.claim_name,
					 eo_meta_uid(pr->prune[i].snapshot), NULL, whys[i],
					 sizeof(whys[i]));
		json_decref(pvc);
		if (v == EO_VOLREF_USABLE)
			continue;
		om->v[k].volume_reason =
		    v == EO_VOLREF_MISSING ? EO_REASON_VOLUME_NOT_FOUND : EO_REASON_FOREIGN_VOLUME;
		om->v[k].volume_why = whys[i];
		eo_log_kv(EO_LOG_WARN, lc, "prune Job not created: destination refused", "snapshot",
			  eo_meta_name(pr->prune[i].snapshot), "reason", om->v[k].volume_reason,
			  "message", whys[i], NULL);
		refused = 1;
	}
	return refused;
}

/*
 * The snapshot the plan creates (pr->create); its name taken by an EtcdSnapshot this schedule
 * does not own, or by a create that answered so: planned again with the name taken (taken
 * holds it, cap EO_NAME_MAX). 0, or -1 failure.
 */
static int schedule_create(struct eo_controller *c, const struct eo_log_ctx *lc, const char *ns,
			   const json_t *sch, struct eo_schplan_input *in,
			   struct eo_schplan_result *pr, char *taken)
{
	const char *sname = eo_meta_name(pr->create);
	json_t *held = eo_cache_set_get(&c->snapshots, ns, sname);
	bool foreign = held != NULL && !eo_schplan_owns(sch, held);
	int rc;

	json_decref(held);
	rc = foreign ? 1 : create_snapshot(c, lc, ns, sch, pr->create);
	if (rc < 0)
		return -1;
	if (rc != 1) {
		eo_log_kv(EO_LOG_INFO, lc,
			  rc == 0 ? "scheduled snapshot created"
				  : "scheduled snapshot already there (a retry)",
			  "snapshot", sname, NULL);
		return 0;
	}
	snprintf(taken, EO_NAME_MAX, "%s", sname);
	in->taken_name = taken;
	eo_schplan_result_clear(pr);
	return eo_plan_schedule(in, pr) != 0 || pr->create != NULL ? -1 : 0;
}

/* The plan's prune steps, each tried; true when one failed (retried with backoff). */
static bool schedule_prune(struct eo_controller *c, const struct eo_log_ctx *lc, const char *ns,
			   const struct eo_schplan_result *pr)
{
	bool failed = false;
	int rc;

	for (size_t i = 0; i < pr->n_prune; i++) {
		const struct eo_schplan_prune *p = &pr->prune[i];

		if (p->op == EO_SCHPLAN_PRUNE_CREATE_JOB)
			rc = eo_controller_create_job(c, lc, ns, p->job, "prune Job");
		else
			rc = delete_snapshot(c, lc, ns, p->snapshot);
		if (rc != 0)
			failed = true; /* the others still go ahead; retried with backoff */
		else
			eo_log_kv(EO_LOG_INFO, lc,
				  p->op == EO_SCHPLAN_PRUNE_CREATE_JOB ? "prune Job created"
								       : "pruned snapshot deleted",
				  "snapshot", eo_meta_name(p->snapshot), NULL);
	}
	return failed;
}

/* The plan's Events (the Warnings logged too). */
static void schedule_events(struct eo_controller *c, const struct eo_log_ctx *lc, const json_t *sch,
			    const struct eo_schplan_result *pr)
{
	for (size_t i = 0; i < pr->n_events; i++) {
		if (strcmp(pr->events[i].type, "Warning") == 0)
			eo_log_kv(EO_LOG_WARN, lc, "schedule warning", "reason",
				  pr->events[i].reason, "message", pr->events[i].message, NULL);
		if (c->rec != NULL)
			eo_kube_event(c->rec, sch, pr->events[i].type, pr->events[i].reason, NULL,
				      "%s", pr->events[i].message);
	}
}

void eo_schedule_reconcile(struct eo_controller *c, const char *ns, const char *name,
			   struct eo_reconcile_out *out)
{
	struct eo_schplan_result pr = {0};
	struct eo_schplan_input in = {0};
	struct observed om = {0};
	struct eo_log_ctx lc;
	json_t *raw = NULL, *sch = NULL;
	char taken[EO_NAME_MAX], whys[EO_SCHPLAN_MAX_PRUNE][EO_PLAN_MSG_MAX / 2];
	bool failed = false;
	int rc;

	memset(out, 0, sizeof(*out));
	eo_log_ctx_init(&lc);
	eo_log_ctx_add(&lc, "schedule", name);
	eo_log_ctx_add(&lc, "namespace", ns);
	raw = eo_cache_set_get(&c->schedules, ns, name);
	eo_ctl_schedule_metrics(c, ns, name, raw, eo_controller_now(c));
	if (raw == NULL)
		goto out; /* deleted: its EtcdSnapshots go with it (owner references) */
	sch = eo_controller_typed_copy(raw, EO_API_GROUP_VERSION, EO_KIND_SCHEDULE);
	if (sch == NULL || observe(c, sch, &om) != 0)
		goto fail;
	in = (struct eo_schplan_input){.schedule = sch,
				       .snaps = om.v,
				       .n_snaps = om.n,
				       .operator_image = c->operator_image,
				       .build = &c->build,
				       .min_interval_s = c->schedule_min_interval_s,
				       .default_keep_last = c->schedule_default_keep_last,
				       .now = eo_controller_now(c)};
	if (eo_plan_schedule(&in, &pr) != 0)
		goto fail;
	rc = check_prune_volumes(c, &lc, ns, &pr, &om, whys);
	if (rc < 0)
		goto fail;
	if (rc > 0) {
		eo_schplan_result_clear(&pr);
		if (eo_plan_schedule(&in, &pr) != 0)
			goto fail;
	}
	if (pr.create != NULL && schedule_create(c, &lc, ns, sch, &in, &pr, taken) != 0)
		goto fail;
	failed = schedule_prune(c, &lc, ns, &pr);
	if (pr.status != NULL && pr.status_changed) {
		rc = eo_controller_write_status(c, &lc, eo_kube_res_at(RES_SCHEDULES, ns, name),
						sch, pr.status);
		if (rc < 0)
			goto fail;
		if (rc > 0) {
			out->requeue_ms = REQUEUE_MS;
			goto out;
		}
	}
	schedule_events(c, &lc, sch, &pr);
	out->requeue_ms = pr.requeue_ms;
	if (failed)
		goto fail;
	goto out;
fail:
	out->error = true;
out:
	eo_schplan_result_clear(&pr);
	observed_free(&om);
	json_decref(sch);
	json_decref(raw);
}
