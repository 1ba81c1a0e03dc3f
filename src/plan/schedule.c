/*
 * plan/schedule.c - what an EtcdSnapshotSchedule does now. See schedule.h.
 */
#include "plan/schedule.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/names.h"
#include "api/schedule.h"
#include "api/snapshot.h"
#include "api/timeutil.h"
#include "core/strbuf.h"
#include "desired/desired.h"
#include "desired/snapshot_job.h"
#include "api/meta.h"
#include "api/cron.h"
#include "plan/volref.h"

#define WORDS_MAX 300

void eo_schplan_result_clear(struct eo_schplan_result *r)
{
	json_decref(r->create);
	json_decref(r->status);
	for (size_t i = 0; i < r->n_prune; i++)
		json_decref(r->prune[i].job);
	memset(r, 0, sizeof(*r));
}

/* snprintf where cutting a long message short is acceptable. */
__attribute__((format(printf, 3, 4))) static void fmt(char *buf, size_t cap, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(buf, cap, f, ap);
	va_end(ap);
}

__attribute__((format(printf, 4, 5))) static void
event(struct eo_schplan_result *out, const char *type, const char *reason, const char *fmt, ...)
{
	struct eo_schplan_event *e;
	va_list ap;

	if (out->n_events == EO_SCHPLAN_MAX_EVENTS)
		return;
	e = &out->events[out->n_events++];
	e->type = type;
	e->reason = reason;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

time_t eo_schplan_slot_time(const json_t *snapshot)
{
	const char *a = eo_meta_annotation(snapshot, EO_ANNOTATION_SCHEDULED_TIME);
	const char *c = json_string_value(eo_meta_get(snapshot, "creationTimestamp"));
	time_t t;

	if (a != NULL && eo_time_parse(a, &t) == 0)
		return t;
	if (c != NULL && eo_time_parse(c, &t) == 0)
		return t;
	return 0;
}

bool eo_schplan_owns(const json_t *schedule, const json_t *snap)
{
	const char *name = eo_meta_name(schedule);
	const char *label = eo_meta_label(snap, EO_LABEL_SCHEDULE);

	return name != NULL && label != NULL && strcmp(name, label) == 0 &&
	       eo_desired_is_controlled_by(snap, eo_meta_uid(schedule));
}

static bool deleting(const json_t *obj)
{
	return eo_meta_is_deleting(obj);
}

struct order {
	size_t idx;
	time_t slot;
	const char *name;
};

static int newest_first(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot > y->slot ? -1 : 1;
	return -strcmp(x->name, y->name);
}

/* Indexes of the snapshots the schedule controls, newest slot first. NULL on OOM. */
static struct order *sorted_ours(const json_t *schedule, const struct eo_schplan_snapshot *snaps,
				 size_t n, size_t *count)
{
	struct order *o = calloc(n + 1, sizeof(*o));
	size_t k = 0;

	if (o == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *name = eo_meta_name(snaps[i].snapshot);

		if (name == NULL || !eo_schplan_owns(schedule, snaps[i].snapshot))
			continue;
		o[k++] = (struct order){i, eo_schplan_slot_time(snaps[i].snapshot), name};
	}
	qsort(o, k, sizeof(*o), newest_first);
	*count = k;
	return o;
}

/* Retention over o[count] (sorted_ours): verdict[i] for snaps[i] of n. */
static void retention_of(const struct order *o, size_t count,
			 const struct eo_schplan_snapshot *snaps, size_t n, int keep_last,
			 long long max_age_s, int keep_failed, time_t now,
			 enum eo_schplan_keep *verdict)
{
	int complete = 0, failed = 0;

	for (size_t i = 0; i < n; i++)
		verdict[i] = EO_SCHPLAN_NOT_OURS;
	for (size_t k = 0; k < count; k++) {
		const json_t *s = snaps[o[k].idx].snapshot;
		enum eo_snapshot_phase ph = eo_snapshot_phase(s);
		bool prune = false;

		if (ph == EO_SNAPSHOT_PHASE_COMPLETE) {
			complete++;
			prune = (keep_last > 0 && complete > keep_last) ||
				(max_age_s > 0 && complete > 1 &&
				 (long long)(now - o[k].slot) > max_age_s);
		} else if (ph == EO_SNAPSHOT_PHASE_FAILED) {
			failed++;
			prune = failed > keep_failed;
		}
		verdict[o[k].idx] = prune && !deleting(s) ? EO_SCHPLAN_PRUNE : EO_SCHPLAN_KEEP;
	}
}

int eo_schplan_retention(const json_t *schedule, const struct eo_schplan_snapshot *snaps, size_t n,
			 int keep_last, long long max_age_s, int keep_failed, time_t now,
			 enum eo_schplan_keep *verdict)
{
	size_t count = 0;
	struct order *o = sorted_ours(schedule, snaps, n, &count);

	if (o == NULL)
		return -1;
	retention_of(o, count, snaps, n, keep_last, max_age_s, keep_failed, now, verdict);
	free(o);
	return 0;
}

/* The Job's condition of that type is True (its message in *message). */
static bool job_condition(const json_t *job, const char *type, const char **message)
{
	return eo_condition_true_message(json_object_get(job, "status"), type, message);
}

/* The last line of the termination message of the prune container that exited with
 * `success` (exit 0) or not, newest first; "" when none. */
static void prune_words(const json_t *pods, bool success, char *buf, size_t n)
{
	const char *best = NULL, *msg = NULL;
	const json_t *p;
	size_t i;

	buf[0] = '\0';
	json_array_foreach(pods, i, p)
	{
		json_t *cs = json_object_get(json_object_get(p, "status"), "containerStatuses"), *c;
		size_t j;

		json_array_foreach(cs, j, c)
		{
			const char *cn = json_string_value(json_object_get(c, "name"));
			json_t *t = json_object_get(json_object_get(c, "state"), "terminated");
			const char *at = json_string_value(json_object_get(t, "finishedAt"));

			if (cn == NULL || strcmp(cn, EO_PRUNE_CONTAINER) != 0 || t == NULL ||
			    (json_integer_value(json_object_get(t, "exitCode")) == 0) != success)
				continue;
			if (best != NULL && at != NULL && strcmp(at, best) <= 0)
				continue;
			best = at != NULL ? at : "";
			msg = json_string_value(json_object_get(t, "message"));
		}
	}
	eo_last_line(msg, buf, n);
}

/*
 * A snapshot that failed because its destination PVC was refused (plan/volref.h): no Job ever
 * mounted it, and a prune Job must not either.
 */
static bool never_mounted(const json_t *snapshot)
{
	const char *r = eo_condition_reason(json_object_get(snapshot, "status"), EO_COND_READY);

	return eo_snapshot_phase(snapshot) == EO_SNAPSHOT_PHASE_FAILED && r != NULL &&
	       strcmp(r, EO_REASON_FOREIGN_VOLUME) == 0;
}

/* What plan_prune counts over the snapshots, and the last failure it says. */
struct prune_tally {
	size_t pending, failed, running, kept_ok, kept_failed;
	char fail_msg[EO_PLAN_MSG_MAX];
	const char *volume_reason;
};

/* One snapshot past the retention: deleted, its prune Job created, or why it is kept. */
static int prune_one(const struct eo_schplan_input *in, struct eo_schplan_result *out,
		     const struct eo_schplan_snapshot *s, struct prune_tally *t)
{
	const char *sname = eo_meta_name(in->schedule);
	const char *snap = eo_meta_name(s->snapshot), *why = NULL;
	char jname[EO_NAME_MAX], words[WORDS_MAX];

	if (eo_name_prune_job(jname, sizeof(jname), snap) != 0)
		return -1;
	if (s->prune_job == NULL && never_mounted(s->snapshot)) {
		/* Refused before its destination was mounted: no file, so no prune Job. */
		if (out->n_prune == EO_SCHPLAN_MAX_PRUNE)
			return 0;
		out->prune[out->n_prune++] =
		    (struct eo_schplan_prune){EO_SCHPLAN_PRUNE_DELETE_SNAPSHOT, s->snapshot, NULL};
		event(out, "Normal", EO_REASON_SNAPSHOT_PRUNED,
		      "pruned EtcdSnapshot %s (retention; its destination was refused, "
		      "nothing was stored)",
		      snap);
		return 0;
	}
	if (s->prune_job != NULL && job_condition(s->prune_job, "Complete", NULL)) {
		if (out->n_prune == EO_SCHPLAN_MAX_PRUNE)
			return 0;
		out->prune[out->n_prune++] =
		    (struct eo_schplan_prune){EO_SCHPLAN_PRUNE_DELETE_SNAPSHOT, s->snapshot, NULL};
		prune_words(s->prune_job_pods, true, words, sizeof(words));
		event(out, "Normal", EO_REASON_SNAPSHOT_PRUNED,
		      "pruned EtcdSnapshot %s (retention)%s%s", snap, words[0] ? ": " : "", words);
		return 0;
	}
	if (s->prune_job != NULL && job_condition(s->prune_job, "Failed", &why)) {
		t->failed++;
		prune_words(s->prune_job_pods, false, words, sizeof(words));
		fmt(t->fail_msg, sizeof(t->fail_msg),
		    "Job %s failed (%s)%s%s; EtcdSnapshot %s and its stored snapshot "
		    "are kept; the prune is retried when the Job expires (%d s): see "
		    "kubectl logs job/%s",
		    jname, why != NULL ? why : "no reason given", words[0] ? ": " : "", words, snap,
		    EO_SNAPSHOT_JOB_TTL_SECONDS, jname);
		return 0;
	}
	if (s->prune_job != NULL)
		return 0; /* running */
	if (in->operator_image == NULL || in->operator_image[0] == '\0') {
		t->failed++;
		fmt(t->fail_msg, sizeof(t->fail_msg),
		    "the operator has no image to run the prune Job with: set "
		    "OPERATOR_IMAGE on the operator Deployment");
		return 0;
	}
	if (s->volume_reason != NULL) {
		t->failed++;
		t->volume_reason = s->volume_reason;
		fmt(t->fail_msg, sizeof(t->fail_msg),
		    "EtcdSnapshot %s is not pruned: %s; it and its stored snapshot are "
		    "kept",
		    snap, s->volume_why != NULL ? s->volume_why : s->volume_reason);
		return 0;
	}
	if (t->running >= EO_SCHPLAN_MAX_PRUNE_JOBS || out->n_prune == EO_SCHPLAN_MAX_PRUNE)
		return 0;
	out->prune[out->n_prune].op = EO_SCHPLAN_PRUNE_CREATE_JOB;
	out->prune[out->n_prune].snapshot = s->snapshot;
	out->prune[out->n_prune].job =
	    eo_desired_prune_job(s->snapshot, sname, in->operator_image, in->build);
	if (out->prune[out->n_prune++].job == NULL)
		return -1;
	t->running++;
	return 0;
}

/* The Pruned condition from the tally; a Warning Event when a failure is new. */
static int pruned_condition(const struct eo_schplan_input *in, struct eo_schplan_result *out,
			    const struct prune_tally *t, json_t *st, long long gen)
{
	char cmsg[EO_PLAN_MSG_MAX];
	const char *reason, *cstatus;
	struct eo_condition c;

	if (t->failed > 0) {
		cstatus = EO_COND_FALSE;
		reason = t->volume_reason != NULL ? t->volume_reason : EO_REASON_PRUNE_FAILED;
		fmt(cmsg, sizeof(cmsg), "%s", t->fail_msg);
	} else if (t->pending > 0) {
		cstatus = EO_COND_FALSE;
		reason = EO_REASON_PRUNING;
		fmt(cmsg, sizeof(cmsg), "pruning %zu snapshot(s) beyond the retention", t->pending);
	} else {
		cstatus = EO_COND_TRUE;
		reason = EO_REASON_RETENTION_MET;
		fmt(cmsg, sizeof(cmsg), "%zu complete and %zu failed snapshot(s) kept", t->kept_ok,
		    t->kept_failed);
	}
	if (t->failed > 0) {
		const json_t *cur = eo_condition_find(st, EO_COND_PRUNED);
		const char *r = json_string_value(json_object_get(cur, "reason"));
		const char *m = json_string_value(json_object_get(cur, "message"));

		if (r == NULL || strcmp(r, reason) != 0 || m == NULL || strcmp(m, cmsg) != 0)
			event(out, "Warning", reason, "%s", cmsg);
	}
	c = (struct eo_condition){.type = EO_COND_PRUNED,
				  .status = cstatus,
				  .reason = reason,
				  .message = cmsg,
				  .observed_generation = gen};
	return eo_condition_set(st, &c, in->now) < 0 ? -1 : 0;
}

/* Pruned condition and prune steps. */
static int plan_prune(const struct eo_schplan_input *in, struct eo_schplan_result *out,
		      const enum eo_schplan_keep *verdict, json_t *st, long long gen)
{
	struct prune_tally t = {0};

	for (size_t i = 0; i < in->n_snaps; i++)
		if (verdict[i] == EO_SCHPLAN_PRUNE && in->snaps[i].prune_job != NULL &&
		    !job_condition(in->snaps[i].prune_job, "Complete", NULL) &&
		    !job_condition(in->snaps[i].prune_job, "Failed", NULL))
			t.running++;
	for (size_t i = 0; i < in->n_snaps; i++) {
		const struct eo_schplan_snapshot *s = &in->snaps[i];

		if (verdict[i] == EO_SCHPLAN_KEEP) {
			if (eo_snapshot_phase(s->snapshot) == EO_SNAPSHOT_PHASE_COMPLETE)
				t.kept_ok++;
			else if (eo_snapshot_phase(s->snapshot) == EO_SNAPSHOT_PHASE_FAILED)
				t.kept_failed++;
		}
		if (verdict[i] != EO_SCHPLAN_PRUNE)
			continue;
		t.pending++;
		if (prune_one(in, out, s, &t) != 0)
			return -1;
	}
	return pruned_condition(in, out, &t, st, gen);
}

/* The EtcdSnapshot for slot (name already computed). New reference or NULL. */
static json_t *scheduled_snapshot(const json_t *schedule, const char *name, time_t slot)
{
	char ts[EO_TIME_BUF];
	json_t *ref = eo_desired_owner_ref(schedule), *dest = eo_schedule_destination(schedule);
	json_t *snap;

	if (ref == NULL || dest == NULL || eo_time_format(slot, ts, sizeof(ts)) != 0) {
		json_decref(ref);
		return NULL;
	}
	snap = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s}, s:[o]}, "
			 "s:{s:{s:s}, s:O}}",
			 "apiVersion", EO_API_GROUP_VERSION, "kind", EO_KIND_SNAPSHOT, "metadata",
			 "name", name, "namespace", eo_meta_namespace(schedule), "labels",
			 EO_LABEL_MANAGED_BY, EO_LABEL_MANAGED_BY_VALUE, EO_LABEL_CLUSTER,
			 eo_schedule_cluster_name(schedule), EO_LABEL_SCHEDULE,
			 eo_meta_name(schedule), "annotations", EO_ANNOTATION_SCHEDULED_TIME, ts,
			 "ownerReferences", ref, "spec", "clusterRef", "name",
			 eo_schedule_cluster_name(schedule), "destination", dest);
	return snap;
}

static int set_time(json_t *st, const char *key, time_t t)
{
	char ts[EO_TIME_BUF];

	if (eo_time_format(t, ts, sizeof(ts)) != 0)
		return -1;
	return json_object_set_new(st, key, json_string(ts));
}

/* Sets Ready; an Event when its reason or message changes to a non-Scheduled reason. */
static int set_ready(const struct eo_schplan_input *in, struct eo_schplan_result *out, json_t *st,
		     const char *status, const char *reason, const char *msg, long long gen)
{
	const json_t *cur = eo_condition_find(st, EO_COND_READY);
	const char *r = json_string_value(json_object_get(cur, "reason"));
	const char *m = json_string_value(json_object_get(cur, "message"));
	struct eo_condition c = {.type = EO_COND_READY,
				 .status = status,
				 .reason = reason,
				 .message = msg,
				 .observed_generation = gen};

	if (strcmp(reason, EO_REASON_SCHEDULED) != 0 &&
	    (r == NULL || strcmp(r, reason) != 0 || m == NULL || strcmp(m, msg) != 0))
		event(out, strcmp(reason, EO_REASON_SUSPENDED) == 0 ? "Normal" : "Warning", reason,
		      "%s", msg);
	return eo_condition_set(st, &c, in->now) < 0 ? -1 : 0;
}

/* status.lastSuccessfulSnapshot and status.active from the snapshots the schedule controls. */
static int summarise(const struct eo_schplan_input *in, const struct order *o, size_t count,
		     json_t *st)
{
	json_t *active = json_array();
	bool have_success = false;

	if (active == NULL)
		return -1;
	for (size_t k = 0; k < count; k++) {
		const json_t *s = in->snaps[o[k].idx].snapshot;
		enum eo_snapshot_phase ph = eo_snapshot_phase(s);

		if (!eo_snapshot_phase_is_terminal(ph)) {
			if (json_array_append_new(active, json_string(o[k].name)) != 0)
				goto fail;
		} else if (ph == EO_SNAPSHOT_PHASE_COMPLETE && !have_success) {
			const json_t *rc =
			    eo_condition_find(json_object_get(s, "status"), EO_COND_READY);
			const char *at =
			    json_string_value(json_object_get(rc, "lastTransitionTime"));
			char ts[EO_TIME_BUF];

			have_success = true;
			if (at == NULL) {
				if (eo_time_format(o[k].slot, ts, sizeof(ts)) != 0)
					goto fail;
				at = ts;
			}
			if (json_object_set_new(
				st, "lastSuccessfulSnapshot",
				json_pack("{s:s, s:s}", "name", o[k].name, "time", at)) != 0)
				goto fail;
		}
	}
	if (json_array_size(active) == 0) {
		json_object_del(st, "active");
		json_decref(active);
		return 0;
	}
	return json_object_set_new(st, "active", active);
fail:
	json_decref(active);
	return -1;
}

/* Slots strictly between from and to, counted up to EO_SCHPLAN_MISSED_COUNT_MAX. */
static long missed_between(const struct eo_cron *c, time_t from, time_t to)
{
	long n = 0;
	time_t t = from;

	while (n < EO_SCHPLAN_MISSED_COUNT_MAX && eo_cron_next(c, t, &t) == 0 && t < to)
		n++;
	return n;
}

/*
 * spec.schedule parses, fires within the horizon and is not more frequent than the operator
 * allows: 1 (cron and next are set), else Ready says why and the result of that write.
 */
static int cron_usable(const struct eo_schplan_input *in, struct eo_schplan_result *out, json_t *st,
		       long long gen, struct eo_cron *cron, time_t *next)
{
	const char *expr = eo_schedule_cron(in->schedule);
	char err[256], msg[EO_PLAN_MSG_MAX];

	if (eo_cron_parse(expr, cron, err, sizeof(err)) != 0) {
		fmt(msg, sizeof(msg), "spec.schedule '%s': %s", expr, err);
		json_object_del(st, "nextScheduleTime");
		return set_ready(in, out, st, EO_COND_FALSE, EO_REASON_INVALID_SCHEDULE, msg, gen);
	}
	if (eo_cron_next(cron, in->now, next) != 0) {
		fmt(msg, sizeof(msg), "spec.schedule '%s' never fires (within %d years)", expr,
		    EO_CRON_HORIZON_YEARS);
		json_object_del(st, "nextScheduleTime");
		return set_ready(in, out, st, EO_COND_FALSE, EO_REASON_INVALID_SCHEDULE, msg, gen);
	}
	if (in->min_interval_s > 0 && eo_cron_min_interval_s(cron) < in->min_interval_s) {
		/* One tenant's schedule must not keep the shared operator and the store busy. */
		fmt(msg, sizeof(msg),
		    "spec.schedule '%s' runs as often as every %lld s; this operator allows one "
		    "run every %ld s at most (--snapshot-schedule-min-interval-seconds): no "
		    "snapshot is created (retention still applies)",
		    expr, (long long)eo_cron_min_interval_s(cron), in->min_interval_s);
		json_object_del(st, "nextScheduleTime");
		out->requeue_ms = EO_SCHPLAN_REQUEUE_MAX_MS;
		return set_ready(in, out, st, EO_COND_FALSE, EO_REASON_SCHEDULE_TOO_FREQUENT, msg,
				 gen);
	}
	return 1;
}

/* The EtcdSnapshot of the slot at latest is created: 0, or -1 on an allocation failure. */
static int create_slot(const struct eo_schplan_input *in, struct eo_schplan_result *out, json_t *st,
		       const struct eo_cron *cron, time_t floor_t, time_t latest,
		       const char *slot_name, const char *ts)
{
	out->create = scheduled_snapshot(in->schedule, slot_name, latest);
	if (out->create == NULL)
		return -1;
	{
		long missed = missed_between(cron, floor_t, latest);

		event(out, "Normal", EO_REASON_SNAPSHOT_CREATED,
		      "created EtcdSnapshot %s for the run at %s", slot_name, ts);
		if (missed > 0)
			event(out, "Warning", EO_REASON_MISSED_SCHEDULE,
			      "%s%ld earlier run(s) were missed (operator down or a snapshot "
			      "still running); only the latest, at %s, is caught up",
			      missed >= EO_SCHPLAN_MISSED_COUNT_MAX ? "at least " : "", missed, ts);
	}
	if (set_time(st, "lastScheduleTime", latest) != 0)
		return -1;
	if (json_object_get(st, "active") == NULL &&
	    json_object_set_new(st, "active", json_pack("[s]", slot_name)) != 0)
		return -1;
	return 0;
}

/* Slots after this one are due: the last run, else the schedule's creation, else now. */
static time_t floor_of(const struct eo_schplan_input *in, const json_t *st)
{
	const char *last_s = json_string_value(json_object_get(st, "lastScheduleTime"));
	const char *created_s = json_string_value(eo_meta_get(in->schedule, "creationTimestamp"));
	time_t last = -1, floor_t;

	if (last_s != NULL && eo_time_parse(last_s, &last) != 0)
		last = -1;
	floor_t = last;
	if (floor_t < 0 && (created_s == NULL || eo_time_parse(created_s, &floor_t) != 0))
		floor_t = in->now;
	return floor_t;
}

static int plan_run(const struct eo_schplan_input *in, struct eo_schplan_result *out,
		    const struct order *o, size_t count, json_t *st, long long gen)
{
	const json_t *sch = in->schedule;
	const char *sname = eo_meta_name(sch), *expr = eo_schedule_cron(sch);
	const char *cname = eo_schedule_cluster_name(sch);
	int64_t deadline = eo_schedule_starting_deadline(sch);
	char msg[EO_PLAN_MSG_MAX], slot_name[EO_NAME_MAX], ts[EO_TIME_BUF];
	time_t floor_t, latest = 0, next = 0;
	const char *running = NULL;
	struct eo_cron cron;
	bool have_latest;
	int rc;

	rc = cron_usable(in, out, st, gen, &cron, &next);
	if (rc != 1)
		return rc;
	floor_t = floor_of(in, st);
	have_latest = eo_cron_prev(&cron, in->now, &latest) == 0 && latest > floor_t;
	out->requeue_ms = (long)(next - in->now) * 1000L + 500L;
	if (out->requeue_ms > EO_SCHPLAN_REQUEUE_MAX_MS)
		out->requeue_ms = EO_SCHPLAN_REQUEUE_MAX_MS;
	if (eo_schedule_suspended(sch)) {
		json_object_del(st, "nextScheduleTime");
		fmt(msg, sizeof(msg),
		    "spec.suspend is true: no snapshot is created (retention still applies)");
		return set_ready(in, out, st, EO_COND_FALSE, EO_REASON_SUSPENDED, msg, gen);
	}
	if (set_time(st, "nextScheduleTime", next) != 0)
		return -1;
	fmt(msg, sizeof(msg), "snapshots of EtcdCluster %s on schedule '%s' (UTC)", cname, expr);
	if (!have_latest)
		return set_ready(in, out, st, EO_COND_TRUE, EO_REASON_SCHEDULED, msg, gen);

	if (eo_name_scheduled_snapshot(slot_name, sizeof(slot_name), sname, latest) != 0 ||
	    eo_time_format(latest, ts, sizeof(ts)) != 0)
		return -1;
	for (size_t k = 0; k < count; k++) {
		const json_t *s = in->snaps[o[k].idx].snapshot;

		if (strcmp(o[k].name, slot_name) == 0) {
			/* Created before, its status write lost: record it. */
			if (set_time(st, "lastScheduleTime", latest) != 0)
				return -1;
			return set_ready(in, out, st, EO_COND_TRUE, EO_REASON_SCHEDULED, msg, gen);
		}
		if (running == NULL && !eo_snapshot_phase_is_terminal(eo_snapshot_phase(s)))
			running = o[k].name;
	}
	if (in->taken_name != NULL && strcmp(in->taken_name, slot_name) == 0) {
		out->requeue_ms = EO_SCHPLAN_RETRY_MS;
		fmt(msg, sizeof(msg),
		    "an EtcdSnapshot named %s exists and is not this schedule's (not controlled "
		    "by it, or without its label); "
		    "the run at %s is not taken: rename or delete that snapshot",
		    slot_name, ts);
		return set_ready(in, out, st, EO_COND_FALSE, EO_REASON_SNAPSHOT_NAME_TAKEN, msg,
				 gen);
	}
	if (deadline >= 0 && (int64_t)(in->now - latest) > deadline) {
		/* Too late for this slot; the next one runs normally. */
		event(out, "Warning", EO_REASON_MISSED_SCHEDULE,
		      "missed the run at %s: it is more than startingDeadlineSeconds (%lld s) late",
		      ts, (long long)deadline);
		if (set_time(st, "lastScheduleTime", latest) != 0)
			return -1;
		return set_ready(in, out, st, EO_COND_TRUE, EO_REASON_SCHEDULED, msg, gen);
	}
	if (running != NULL) {
		/* At most one at a time: the slot waits for the running snapshot. */
		if (out->requeue_ms > EO_SCHPLAN_RETRY_MS)
			out->requeue_ms = EO_SCHPLAN_RETRY_MS;
		return set_ready(in, out, st, EO_COND_TRUE, EO_REASON_SCHEDULED, msg, gen);
	}
	if (create_slot(in, out, st, &cron, floor_t, latest, slot_name, ts) != 0)
		return -1;
	return set_ready(in, out, st, EO_COND_TRUE, EO_REASON_SCHEDULED, msg, gen);
}

int eo_plan_schedule(const struct eo_schplan_input *in, struct eo_schplan_result *out)
{
	const json_t *sch = in->schedule;
	const json_t *cur = json_object_get(sch, "status");
	long long gen = eo_meta_generation(sch, -1);
	struct eo_schedule_retention r;
	enum eo_schplan_keep *verdict = NULL;
	struct order *o = NULL;
	size_t count = 0;
	char vmsg[256], msg[EO_PLAN_MSG_MAX];
	json_t *st;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (eo_meta_name(sch) == NULL || eo_meta_namespace(sch) == NULL || eo_meta_uid(sch) == NULL)
		return -1;
	st = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	if (st == NULL)
		return -1;
	if (eo_schedule_validate(sch, vmsg, sizeof(vmsg)) != 0) {
		fmt(msg, sizeof(msg), "invalid spec: %s", vmsg);
		json_object_del(st, "nextScheduleTime");
		if (set_ready(in, out, st, EO_COND_FALSE, EO_REASON_INVALID_SCHEDULE, msg, gen) !=
		    0)
			goto done;
		rc = 0;
		goto done;
	}
	eo_schedule_retention(sch, &r);
	if (r.keep_last == 0 && r.max_age_s == 0)
		r.keep_last = in->default_keep_last; /* no limit set: the operator's default */
	o = sorted_ours(sch, in->snaps, in->n_snaps, &count);
	verdict = calloc(in->n_snaps + 1, sizeof(*verdict));
	if (o == NULL || verdict == NULL)
		goto done;
	retention_of(o, count, in->snaps, in->n_snaps, r.keep_last, r.max_age_s, r.keep_failed,
		     in->now, verdict);
	if (summarise(in, o, count, st) != 0 || plan_run(in, out, o, count, st, gen) != 0 ||
	    plan_prune(in, out, verdict, st, gen) != 0)
		goto done;
	rc = 0;
done:
	free(o);
	free(verdict);
	if (rc == 0) {
		out->status = st;
		out->status_changed = !json_equal(st, cur);
	} else {
		json_decref(st);
		eo_schplan_result_clear(out);
	}
	return rc;
}
