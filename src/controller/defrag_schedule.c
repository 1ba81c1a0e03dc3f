/*
 * controller/defrag_schedule.c - the EtcdDefragSchedule reconciler: observe (the schedule
 * and the EtcdDefrags it controls, from the caches), plan/defrag_schedule.h decides, act
 * (create the slot's EtcdDefrag, an AlreadyExists being a cache lag; delete the runs beyond
 * the history limits with a UID precondition; write the status; emit the Event).
 */
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "api/names.h"
#include "controller/controller.h"
#include "obs/log.h"
#include "plan/defrag_schedule.h"

#define CONFLICT_MS 1000L

static const struct eo_kube_resource RES_SCHEDULES = {EO_API_GROUP_VERSION,
						      EO_PLURAL_DEFRAG_SCHEDULES, NULL, NULL};
static const struct eo_kube_resource RES_DEFRAGS = {EO_API_GROUP_VERSION, EO_PLURAL_DEFRAGS, NULL,
						    NULL};

/* The schedule's runs: the EtcdDefrags it owns (owned) that carry its label. 0, or -1. */
static int schedule_runs(const json_t *sch, const char *name, const json_t *owned, json_t *runs)
{
	json_t *o;
	size_t i;

	json_array_foreach(owned, i, o)
	{
		const char *l = eo_meta_label(o, EO_LABEL_DEFRAG_SCHEDULE);

		if (eo_desired_is_controlled_by(o, eo_meta_uid(sch)) && l != NULL &&
		    strcmp(l, name) == 0 && json_array_append(runs, o) != 0)
			return -1;
	}
	return 0;
}

/* The runs past the history limit deleted; true when a delete failed (retried). */
static bool delete_old_runs(struct eo_controller *c, const struct eo_log_ctx *lc, const char *ns,
			    const struct eo_dsplan_result *pr)
{
	bool failed = false;

	for (size_t k = 0; k < pr->n_del; k++) {
		struct eo_kube_delete_opts dopt = {.propagation_policy = "Background",
						   .uid = eo_meta_uid(pr->del[k]),
						   .grace_period_seconds = -1};
		struct eo_kube_error err = {0};
		eo_kube_err e = eo_kube_delete(c->kc,
					       &(struct eo_kube_resource){EO_API_GROUP_VERSION,
									  EO_PLURAL_DEFRAGS, ns,
									  eo_meta_name(pr->del[k])},
					       &dopt, &err);

		if (e != EO_KUBE_OK && e != EO_KUBE_ENOTFOUND && e != EO_KUBE_ECONFLICT) {
			failed = true;
			eo_log_kv(EO_LOG_WARN, lc, "deleting an old EtcdDefrag failed", "defrag",
				  eo_meta_name(pr->del[k]), "error", eo_kube_strerror(e), "detail",
				  err.message, NULL);
		} else {
			eo_log_kv(EO_LOG_INFO, lc, "old EtcdDefrag deleted (history limit)",
				  "defrag", eo_meta_name(pr->del[k]), NULL);
		}
	}
	return failed;
}

/* The run the schedule starts now (AlreadyExists: a retry). 0, or -1 (logged, an Event). */
static int create_run(struct eo_controller *c, const struct eo_log_ctx *lc, const char *ns,
		      const json_t *sch, json_t *run)
{
	struct eo_kube_resource r = RES_DEFRAGS;
	struct eo_kube_error err = {0};
	eo_kube_err e;

	r.ns = ns;
	e = eo_kube_create(c->kc, &r, run, NULL, &err);
	if (e == EO_KUBE_OK || e == EO_KUBE_EEXISTS)
		return 0;
	eo_log_kv(EO_LOG_WARN, lc, "creating the EtcdDefrag failed", "error", eo_kube_strerror(e),
		  "detail", err.message, NULL);
	if (c->rec != NULL)
		eo_kube_event(c->rec, sch, "Warning", "CreateFailed", NULL,
			      "creating EtcdDefrag %s failed: %s", eo_meta_name(run), err.message);
	return -1;
}

void eo_defrag_schedule_reconcile(struct eo_controller *c, const char *ns, const char *name,
				  struct eo_reconcile_out *out)
{
	struct eo_dsplan_result pr = {0};
	struct eo_log_ctx lc;
	json_t *raw = NULL, *sch = NULL, *owned = NULL, *runs = NULL;
	bool failed = false;
	int rc;

	memset(out, 0, sizeof(*out));
	eo_log_ctx_init(&lc);
	eo_log_ctx_add(&lc, "defragschedule", name);
	eo_log_ctx_add(&lc, "namespace", ns);
	raw = eo_cache_set_get(&c->defrag_schedules, ns, name);
	if (raw == NULL)
		goto out; /* deleted: its runs go by garbage collection */
	sch = eo_controller_typed_copy(raw, EO_API_GROUP_VERSION, EO_KIND_DEFRAG_SCHEDULE);
	owned = sch != NULL ? eo_cache_set_by_owner(&c->defrags, eo_meta_uid(sch)) : NULL;
	runs = json_array();
	if (sch == NULL || owned == NULL || runs == NULL)
		goto fail;
	if (schedule_runs(sch, name, owned, runs) != 0)
		goto fail;
	if (eo_plan_defrag_schedule(
		&(struct eo_dsplan_input){
		    .schedule = sch, .runs = runs, .now = c->now ? c->now() : time(NULL)},
		&pr) != 0)
		goto fail;
	failed = delete_old_runs(c, &lc, ns, &pr);
	if (pr.create != NULL && create_run(c, &lc, ns, sch, pr.create) != 0)
		goto fail; /* the status (lastScheduleTime) is not written: retried */
	if (pr.status != NULL && pr.status_changed) {
		rc = eo_controller_write_status(c, &lc, eo_kube_res_at(RES_SCHEDULES, ns, name),
						sch, pr.status);
		if (rc < 0)
			goto fail;
		if (rc > 0) {
			out->requeue_ms = CONFLICT_MS;
			goto out;
		}
	}
	if (c->rec != NULL && pr.event_type != NULL && pr.event_reason != NULL)
		eo_kube_event(c->rec, sch, pr.event_type, pr.event_reason, NULL, "%s", pr.message);
	if (pr.event_type != NULL)
		eo_log_kv(EO_LOG_INFO, &lc, "defrag schedule", "reason", pr.event_reason, "message",
			  pr.message, NULL);
	out->requeue_ms = pr.requeue_ms;
	out->error = failed;
	goto out;
fail:
	out->error = true;
out:
	eo_dsplan_result_clear(&pr);
	json_decref(runs);
	json_decref(owned);
	json_decref(sch);
	json_decref(raw);
}
