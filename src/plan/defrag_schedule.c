/*
 * plan/defrag_schedule.c - EtcdDefragSchedule. See defrag_schedule.h.
 */
#include "plan/defrag_schedule.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/defrag.h"
#include "api/names.h"
#include "api/schedule.h"
#include "api/timeutil.h"
#include "desired/desired.h"
#include "api/meta.h"
#include "api/cron.h"

void eo_dsplan_result_clear(struct eo_dsplan_result *r)
{
	json_decref(r->create);
	json_decref(r->status);
	memset(r, 0, sizeof(*r));
}

static void msgf(struct eo_dsplan_result *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void msgf(struct eo_dsplan_result *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->message, sizeof(out->message), fmt, ap);
	va_end(ap);
}

static const char *created_at(const json_t *o)
{
	const char *s = json_string_value(eo_meta_get(o, "creationTimestamp"));

	return s != NULL ? s : "";
}

/* Newest first: creationTimestamp, then name, both descending. */
static int newest_first(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	int c = strcmp(created_at(y), created_at(x));

	return c != 0 ? c : strcmp(eo_meta_name(y), eo_meta_name(x));
}

static bool deleting(const json_t *o)
{
	return eo_meta_is_deleting(o);
}

/* Finished runs beyond the history limits go into out->del. */
static int history(const struct eo_dsplan_input *in, struct eo_dsplan_result *out)
{
	size_t n = json_array_size(in->runs), k = 0;
	const json_t **v = calloc(n + 1, sizeof(*v));
	int64_t keep_c = eo_defrag_schedule_keep_complete(in->schedule);
	int64_t keep_f = eo_defrag_schedule_keep_failed(in->schedule), seen_c = 0, seen_f = 0;

	if (v == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(in->runs, i);

		if (eo_meta_name(r) != NULL && !deleting(r) &&
		    eo_defrag_phase_is_terminal(eo_defrag_phase(r)))
			v[k++] = r;
	}
	qsort(v, k, sizeof(*v), newest_first);
	for (size_t i = 0; i < k && out->n_del < EO_DSPLAN_MAX_DELETE; i++) {
		bool complete = eo_defrag_phase(v[i]) == EO_DEFRAG_PHASE_COMPLETE;
		int64_t *seen = complete ? &seen_c : &seen_f;

		if (++*seen > (complete ? keep_c : keep_f))
			out->del[out->n_del++] = v[i];
	}
	free(v);
	return 0;
}

static int set_time(json_t *st, const char *key, time_t t)
{
	char ts[EO_TIME_BUF];

	if (eo_time_format(t, ts, sizeof(ts)) != 0)
		return -1;
	return json_object_set_new(st, key, json_string(ts));
}

static int finish(const struct eo_dsplan_input *in, struct eo_dsplan_result *out, json_t *st,
		  const char *cstatus, const char *reason, const char *event_type)
{
	const json_t *cur = json_object_get(in->schedule, "status");
	struct eo_condition c = {.type = EO_COND_READY,
				 .status = cstatus,
				 .reason = reason,
				 .message = out->message,
				 .observed_generation = eo_meta_generation(in->schedule, -1)};
	const char *before = eo_condition_reason(cur, EO_COND_READY);

	if (eo_condition_set(st, &c, in->now) < 0) {
		json_decref(st);
		return -1;
	}
	out->status = st;
	out->status_changed = !json_equal(st, cur);
	if (event_type != NULL && (before == NULL || strcmp(before, reason) != 0)) {
		out->event_type = event_type;
		out->event_reason = reason;
	}
	return 0;
}

/* The EtcdDefrag of a slot. New reference or NULL. */
static json_t *run_for(const json_t *sch, const char *name, time_t slot)
{
	const char *cname = eo_defrag_cluster_name(sch);
	const json_t *spec = json_object_get(sch, "spec");
	char ts[EO_TIME_BUF];
	json_t *ref = eo_desired_owner_ref(sch), *run = NULL, *rspec;

	if (ref == NULL || eo_time_format(slot, ts, sizeof(ts)) != 0) {
		json_decref(ref);
		return NULL;
	}
	run = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s}, s:[o]}, "
			"s:{s:{s:s}}}",
			"apiVersion", EO_API_GROUP_VERSION, "kind", EO_KIND_DEFRAG, "metadata",
			"name", name, "namespace", eo_meta_namespace(sch), "labels",
			EO_LABEL_MANAGED_BY, EO_LABEL_MANAGED_BY_VALUE, EO_LABEL_CLUSTER, cname,
			EO_LABEL_DEFRAG_SCHEDULE, eo_meta_name(sch), "annotations",
			EO_ANNOTATION_SCHEDULED_TIME, ts, "ownerReferences", ref, "spec",
			"clusterRef", "name", cname);
	rspec = json_object_get(run, "spec");
	if (run != NULL &&
	    ((json_object_get(spec, "rule") != NULL &&
	      json_object_set(rspec, "rule", json_object_get(spec, "rule")) != 0) ||
	     (json_object_get(spec, "ttlSecondsAfterFinished") != NULL &&
	      json_object_set(rspec, "ttlSecondsAfterFinished",
			      json_object_get(spec, "ttlSecondsAfterFinished")) != 0))) {
		json_decref(run);
		return NULL;
	}
	return run;
}

/* The slot at latest: recorded when its EtcdDefrag exists, waiting while one runs, or created. */
static int run_slot(const struct eo_dsplan_input *in, struct eo_dsplan_result *out, json_t *st,
		    time_t latest, const char *running)
{
	const json_t *sch = in->schedule, *r;
	const char *sname = eo_meta_name(sch), *cname = eo_defrag_cluster_name(sch);
	char slot_name[EO_NAME_MAX];
	size_t i;

	if (eo_name_scheduled_snapshot(slot_name, sizeof(slot_name), sname, latest) != 0) {
		json_decref(st);
		return -1;
	}
	json_array_foreach(in->runs, i, r)
	{
		const char *n = eo_meta_name(r);

		if (n != NULL && strcmp(n, slot_name) == 0) { /* made before; status lost */
			if (set_time(st, "lastScheduleTime", latest) != 0) {
				json_decref(st);
				return -1;
			}
			return finish(in, out, st, EO_COND_TRUE, EO_REASON_DSCHED_SCHEDULED, NULL);
		}
	}
	if (running != NULL) {
		out->requeue_ms = EO_DSPLAN_WAIT_MS;
		msgf(out, "the slot %s waits: EtcdDefrag %s has not finished", slot_name, running);
		return finish(in, out, st, EO_COND_TRUE, EO_REASON_DSCHED_SCHEDULED, NULL);
	}
	out->create = run_for(sch, slot_name, latest);
	if (out->create == NULL || set_time(st, "lastScheduleTime", latest) != 0 ||
	    json_object_set_new(st, "active", json_string(slot_name)) != 0) {
		json_decref(st);
		return -1;
	}
	if (finish(in, out, st, EO_COND_TRUE, EO_REASON_DSCHED_SCHEDULED, NULL) != 0)
		return -1;
	out->event_type = "Normal";
	out->event_reason = EO_REASON_DSCHED_CREATED;
	msgf(out, "EtcdDefrag %s created for the slot of EtcdCluster %s", slot_name, cname);
	return 0;
}

int eo_plan_defrag_schedule(const struct eo_dsplan_input *in, struct eo_dsplan_result *out)
{
	const json_t *sch = in->schedule, *cur = json_object_get(sch, "status"), *r;
	const char *sname = eo_meta_name(sch), *expr = eo_defrag_schedule_cron(sch);
	const char *cname = eo_defrag_cluster_name(sch), *running = NULL;
	const char *last_s = json_string_value(json_object_get(cur, "lastScheduleTime"));
	char err[256];
	time_t last = -1, floor_t, latest = 0, next = 0;
	struct eo_cron cron;
	json_t *st;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (sname == NULL || eo_meta_namespace(sch) == NULL || eo_meta_uid(sch) == NULL)
		return -1;
	st = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	if (st == NULL || history(in, out) != 0) {
		json_decref(st);
		return -1;
	}
	if (eo_defrag_schedule_validate(sch, err, sizeof(err)) != 0) {
		msgf(out, "invalid spec: %s", err);
		json_object_del(st, "nextScheduleTime");
		return finish(in, out, st, EO_COND_FALSE, EO_REASON_DSCHED_INVALID, "Warning");
	}
	if (eo_cron_parse(expr, &cron, err, sizeof(err)) != 0 ||
	    eo_cron_next(&cron, in->now, &next) != 0) {
		if (next == 0 && err[0] == '\0')
			snprintf(err, sizeof(err), "never fires (within %d years)",
				 EO_CRON_HORIZON_YEARS);
		msgf(out, "spec.schedule '%s': %s", expr, err);
		json_object_del(st, "nextScheduleTime");
		return finish(in, out, st, EO_COND_FALSE, EO_REASON_DSCHED_INVALID, "Warning");
	}
	json_array_foreach(in->runs, i, r)
	{
		if (!eo_defrag_phase_is_terminal(eo_defrag_phase(r)) && !deleting(r))
			running = eo_meta_name(r);
	}
	if (running != NULL)
		json_object_set_new(st, "active", json_string(running));
	else
		json_object_del(st, "active");
	out->requeue_ms = (long)(next - in->now) * 1000L + 500L;
	if (out->requeue_ms > EO_DSPLAN_REQUEUE_MAX)
		out->requeue_ms = EO_DSPLAN_REQUEUE_MAX;
	if (eo_defrag_schedule_suspended(sch)) {
		json_object_del(st, "nextScheduleTime");
		msgf(out, "spec.suspend is true: no EtcdDefrag is created (the history limits "
			  "still apply)");
		return finish(in, out, st, EO_COND_FALSE, EO_REASON_DSCHED_SUSPENDED, NULL);
	}
	if (set_time(st, "nextScheduleTime", next) != 0) {
		json_decref(st);
		return -1;
	}
	if (last_s != NULL && eo_time_parse(last_s, &last) != 0)
		last = -1;
	floor_t = last;
	if (floor_t < 0 && eo_time_parse(created_at(sch), &floor_t) != 0)
		floor_t = in->now;
	msgf(out, "EtcdDefrags of EtcdCluster %s on schedule '%s' (UTC)", cname, expr);
	if (eo_cron_prev(&cron, in->now, &latest) != 0 || latest <= floor_t)
		return finish(in, out, st, EO_COND_TRUE, EO_REASON_DSCHED_SCHEDULED, NULL);
	return run_slot(in, out, st, latest, running);
}
