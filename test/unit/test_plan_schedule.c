/*
 * Unit tests for plan/schedule.c (the EtcdSnapshotSchedule planner: what to run now, one
 * table row per situation; retention, one row per rule; prune steps), api/schedule.c (names,
 * validation) and the prune Job of desired/snapshot_job.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/meta.h"
#include "support/testutil.h"
#include "support/tu_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/schedule.h"
#include "api/timeutil.h"
#include "desired/desired.h"
#include "desired/snapshot_job.h"
#include "kube/client.h"
#include "plan/schedule.h"

#define IMAGE "localhost/etcd-operator:dev"
#define DEST_S3                                                                                    \
	"{'s3':{'endpoint':'http://minio:9000','bucket':'snaps','key':'nightly',"                  \
	"'forcePathStyle':true,'insecure':true,'credentialsSecretRef':{'name':'s3-creds'}}}"
#define DEST_PVC "{'pvc':{'claimName':'backups','subPath':'demo'}}"

static time_t at(const char *s)
{
	time_t t;

	if (eo_time_parse(s, &t) != 0)
		fail_msg("bad time in the table: %s", s);
	return t;
}

/* A schedule "nightly" (uid sch-uid) created at 09:58 on 2026-06-02. extra_spec and status
 * are JSON fragments with ' for ". */
static json_t *schedule(const char *cron, const char *extra_spec, const char *status)
{
	char buf[4096];

	snprintf(
	    buf, sizeof(buf),
	    "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdSnapshotSchedule',"
	    "'metadata':{'name':'nightly','namespace':'ns','uid':'sch-uid','generation':2,"
	    "'creationTimestamp':'2026-06-02T09:58:00Z'},"
	    "'spec':{'clusterRef':{'name':'demo'},'schedule':'%s','destination':%s%s%s},"
	    "'status':%s}",
	    cron, DEST_S3, extra_spec[0] ? "," : "", extra_spec, status);
	return tu_jsonq(buf);
}

/* A snapshot of the schedule (or, with owner NULL, of nobody) at slot, in phase. */
static json_t *snap(const char *name, const char *slot, const char *phase, const char *owner_uid,
		    const char *label)
{
	char buf[4096], refs[512] = "[]", labels[256] = "{}", st[256] = "{}";

	if (owner_uid != NULL)
		snprintf(
		    refs, sizeof(refs),
		    "[{'apiVersion':'etcd-operator.cozystack.io/v1alpha2',"
		    "'kind':'EtcdSnapshotSchedule','name':'nightly','uid':'%s','controller':true}]",
		    owner_uid);
	if (label != NULL)
		snprintf(labels, sizeof(labels), "{'etcd-operator.cozystack.io/schedule':'%s'}",
			 label);
	if (phase != NULL)
		snprintf(st, sizeof(st), "{'phase':'%s'}", phase);
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdSnapshot',"
		 "'metadata':{'name':'%s','namespace':'ns','uid':'uid-%s','labels':%s,"
		 "'annotations':{'etcd-operator.cozystack.io/scheduled-time':'%s'},"
		 "'creationTimestamp':'%s','ownerReferences':%s},"
		 "'spec':{'clusterRef':{'name':'demo'},'destination':%s},'status':%s}",
		 name, name, labels, slot, slot, refs, DEST_S3, st);
	return tu_jsonq(buf);
}

static json_t *ours(const char *name, const char *slot, const char *phase)
{
	return snap(name, slot, phase, "sch-uid", "nightly");
}

static bool has_event(const struct eo_schplan_result *r, const char *reason, const char *text)
{
	for (size_t i = 0; i < r->n_events; i++)
		if (strcmp(r->events[i].reason, reason) == 0 &&
		    (text == NULL || strstr(r->events[i].message, text) != NULL))
			return true;
	return false;
}

/* ---- what to run now ------------------------------------------------------------- */

struct run_row {
	const char *what;
	const char *cron, *extra_spec, *status;
	const char *now;
	const char *snaps[3][3]; /* name, slot, phase (ours) */
	const char *taken;
	/* expected */
	const char *create; /* NULL: nothing created */
	const char *ready_status, *ready_reason;
	const char *last_schedule; /* NULL: absent */
	const char *next_schedule; /* NULL: absent */
	const char *event_reason;  /* an Event expected with this reason (NULL: none needed) */
	const char *event_text;
	long max_requeue_ms; /* 0: not checked */
};

static const struct run_row runs[] = {
    {"created after the slot: nothing yet",
     "*/5 * * * *",
     "",
     "{}",
     "2026-06-02T09:59:30Z",
     {{0}},
     NULL,
     NULL,
     "True",
     "Scheduled",
     NULL,
     "2026-06-02T10:00:00Z",
     NULL,
     NULL,
     31000},
    {"first slot after creation",
     "*/5 * * * *",
     "",
     "{}",
     "2026-06-02T10:00:20Z",
     {{0}},
     NULL,
     "nightly-202606021000",
     "True",
     "Scheduled",
     "2026-06-02T10:00:00Z",
     "2026-06-02T10:05:00Z",
     "SnapshotCreated",
     "nightly-202606021000",
     0},
    {"slot already taken: nothing until the next",
     "*/5 * * * *",
     "",
     "{'lastScheduleTime':'2026-06-02T10:00:00Z'}",
     "2026-06-02T10:04:00Z",
     {{"nightly-202606021000", "2026-06-02T10:00:00Z", "Complete"}},
     NULL,
     NULL,
     "True",
     "Scheduled",
     "2026-06-02T10:00:00Z",
     "2026-06-02T10:05:00Z",
     NULL,
     NULL,
     61000},
    {"outage: only the latest missed slot runs",
     "*/5 * * * *",
     "",
     "{'lastScheduleTime':'2026-06-02T09:00:00Z'}",
     "2026-06-02T10:04:00Z",
     {{0}},
     NULL,
     "nightly-202606021000",
     "True",
     "Scheduled",
     "2026-06-02T10:00:00Z",
     "2026-06-02T10:05:00Z",
     "MissedSchedule",
     "11 earlier run(s) were missed",
     0},
    {"outage past startingDeadlineSeconds: skipped",
     "*/5 * * * *",
     "'startingDeadlineSeconds':60",
     "{'lastScheduleTime':'2026-06-02T09:00:00Z'}",
     "2026-06-02T10:04:00Z",
     {{0}},
     NULL,
     NULL,
     "True",
     "Scheduled",
     "2026-06-02T10:00:00Z",
     "2026-06-02T10:05:00Z",
     "MissedSchedule",
     "more than startingDeadlineSeconds",
     0},
    {"within startingDeadlineSeconds: runs",
     "*/5 * * * *",
     "'startingDeadlineSeconds':300",
     "{'lastScheduleTime':'2026-06-02T09:55:00Z'}",
     "2026-06-02T10:04:00Z",
     {{0}},
     NULL,
     "nightly-202606021000",
     "True",
     "Scheduled",
     "2026-06-02T10:00:00Z",
     "2026-06-02T10:05:00Z",
     "SnapshotCreated",
     NULL,
     0},
    {"one at a time: the slot waits for a running snapshot",
     "*/5 * * * *",
     "",
     "{'lastScheduleTime':'2026-06-02T09:55:00Z'}",
     "2026-06-02T10:01:00Z",
     {{"nightly-202606020955", "2026-06-02T09:55:00Z", "Started"}},
     NULL,
     NULL,
     "True",
     "Scheduled",
     "2026-06-02T09:55:00Z",
     "2026-06-02T10:05:00Z",
     NULL,
     NULL,
     30000},
    {"a Pending snapshot blocks too",
     "*/5 * * * *",
     "",
     "{'lastScheduleTime':'2026-06-02T09:55:00Z'}",
     "2026-06-02T10:01:00Z",
     {{"nightly-202606020955", "2026-06-02T09:55:00Z", "Pending"}},
     NULL,
     NULL,
     "True",
     "Scheduled",
     "2026-06-02T09:55:00Z",
     NULL,
     NULL,
     NULL,
     30000},
    {"a snapshot with no phase yet blocks too",
     "*/5 * * * *",
     "",
     "{'lastScheduleTime':'2026-06-02T09:55:00Z'}",
     "2026-06-02T10:01:00Z",
     {{"nightly-202606020955", "2026-06-02T09:55:00Z", NULL}},
     NULL,
     NULL,
     "True",
     "Scheduled",
     "2026-06-02T09:55:00Z",
     NULL,
     NULL,
     NULL,
     30000},
    {"crash after create: the slot's snapshot is found, not made twice",
     "*/5 * * * *",
     "",
     "{'lastScheduleTime':'2026-06-02T09:55:00Z'}",
     "2026-06-02T10:01:00Z",
     {{"nightly-202606021000", "2026-06-02T10:00:00Z", NULL}},
     NULL,
     NULL,
     "True",
     "Scheduled",
     "2026-06-02T10:00:00Z",
     "2026-06-02T10:05:00Z",
     NULL,
     NULL,
     0},
    {"the slot's name held by someone else",
     "*/5 * * * *",
     "",
     "{'lastScheduleTime':'2026-06-02T09:55:00Z'}",
     "2026-06-02T10:01:00Z",
     {{0}},
     "nightly-202606021000",
     NULL,
     "False",
     "SnapshotNameTaken",
     "2026-06-02T09:55:00Z",
     "2026-06-02T10:05:00Z",
     "SnapshotNameTaken",
     "nightly-202606021000",
     30000},
    {"suspended",
     "*/5 * * * *",
     "'suspend':true",
     "{'lastScheduleTime':'2026-06-02T09:55:00Z'}",
     "2026-06-02T10:01:00Z",
     {{0}},
     NULL,
     NULL,
     "False",
     "Suspended",
     "2026-06-02T09:55:00Z",
     NULL,
     "Suspended",
     NULL,
     0},
    {"syntax CEL lets through",
     "61 * * * *",
     "",
     "{}",
     "2026-06-02T10:01:00Z",
     {{0}},
     NULL,
     NULL,
     "False",
     "InvalidSchedule",
     NULL,
     NULL,
     "InvalidSchedule",
     "field 1 (minute): '61' is out of range 0-59",
     0},
    {"never fires",
     "0 0 30 2 *",
     "",
     "{}",
     "2026-06-02T10:01:00Z",
     {{0}},
     NULL,
     NULL,
     "False",
     "InvalidSchedule",
     NULL,
     NULL,
     "InvalidSchedule",
     "never fires",
     0},
    {"invalid retention (stored before the CRD)",
     "*/5 * * * *",
     "'retention':{'maxAge':'7d'}",
     "{}",
     "2026-06-02T10:01:00Z",
     {{0}},
     NULL,
     NULL,
     "False",
     "InvalidSchedule",
     NULL,
     NULL,
     "InvalidSchedule",
     "maxAge",
     0},
    {"every minute, next minute",
     "* * * * *",
     "",
     "{'lastScheduleTime':'2026-06-02T10:00:00Z'}",
     "2026-06-02T10:01:02Z",
     {{0}},
     NULL,
     "nightly-202606021001",
     "True",
     "Scheduled",
     "2026-06-02T10:01:00Z",
     "2026-06-02T10:02:00Z",
     "SnapshotCreated",
     NULL,
     58500},
};

static void test_run(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		const struct run_row *r = &runs[i];
		json_t *sch = schedule(r->cron, r->extra_spec, r->status), *keep = json_array();
		struct eo_schplan_snapshot snaps[3] = {{0}};
		struct eo_schplan_input in = {.schedule = sch,
					      .snaps = snaps,
					      .taken_name = r->taken,
					      .operator_image = IMAGE,
					      .now = at(r->now)};
		struct eo_schplan_result out;
		const char *got;

		for (size_t k = 0; k < 3 && r->snaps[k][0] != NULL; k++) {
			json_t *s = ours(r->snaps[k][0], r->snaps[k][1], r->snaps[k][2]);

			json_array_append_new(keep, s);
			snaps[in.n_snaps++].snapshot = s;
		}
		if (eo_plan_schedule(&in, &out) != 0)
			fail_msg("%s: plan failed", r->what);
		if ((r->create == NULL) != (out.create == NULL))
			fail_msg("%s: create %s, want %s", r->what,
				 out.create ? eo_meta_name(out.create) : "nothing",
				 r->create ? r->create : "nothing");
		if (r->create != NULL) {
			assert_string_equal(eo_meta_name(out.create), r->create);
			assert_true(eo_desired_is_controlled_by(out.create, "sch-uid"));
			assert_string_equal(eo_meta_label(out.create, EO_LABEL_SCHEDULE),
					    "nightly");
			assert_string_equal(eo_meta_label(out.create, EO_LABEL_CLUSTER), "demo");
			assert_true(json_equal(
			    json_object_get(json_object_get(out.create, "spec"), "destination"),
			    json_object_get(json_object_get(sch, "spec"), "destination")));
		}
		got = eo_condition_status(out.status, EO_COND_READY);
		if (got == NULL || strcmp(got, r->ready_status) != 0 ||
		    strcmp(eo_condition_reason(out.status, EO_COND_READY), r->ready_reason) != 0)
			fail_msg("%s: Ready %s/%s, want %s/%s", r->what, got ? got : "-",
				 got ? eo_condition_reason(out.status, EO_COND_READY) : "-",
				 r->ready_status, r->ready_reason);
		got = json_string_value(json_object_get(out.status, "lastScheduleTime"));
		if ((got == NULL) != (r->last_schedule == NULL) ||
		    (got != NULL && strcmp(got, r->last_schedule) != 0))
			fail_msg("%s: lastScheduleTime %s, want %s", r->what, got ? got : "-",
				 r->last_schedule ? r->last_schedule : "-");
		got = json_string_value(json_object_get(out.status, "nextScheduleTime"));
		if (r->next_schedule != NULL && (got == NULL || strcmp(got, r->next_schedule) != 0))
			fail_msg("%s: nextScheduleTime %s, want %s", r->what, got ? got : "-",
				 r->next_schedule);
		if (r->event_reason != NULL && !has_event(&out, r->event_reason, r->event_text))
			fail_msg("%s: no %s Event with '%s' (%zu events, first: %s)", r->what,
				 r->event_reason, r->event_text ? r->event_text : "", out.n_events,
				 out.n_events ? out.events[0].message : "-");
		if (r->event_reason == NULL && has_event(&out, EO_REASON_SNAPSHOT_CREATED, NULL))
			fail_msg("%s: unexpected SnapshotCreated", r->what);
		if (r->max_requeue_ms > 0 &&
		    (out.requeue_ms <= 0 || out.requeue_ms > r->max_requeue_ms))
			fail_msg("%s: requeue %ld ms, want (0, %ld]", r->what, out.requeue_ms,
				 r->max_requeue_ms);
		assert_true(out.status_changed);
		eo_schplan_result_clear(&out);
		json_decref(keep);
		json_decref(sch);
	}
}

/*
 * The operator's bounds (issue 21 item 5): a schedule whose runs come closer than the minimum
 * interval creates nothing (Ready=False/ScheduleTooFrequent and a Warning Event, no
 * nextScheduleTime), unless the administrator set no minimum; retention still applies to it.
 * A schedule whose retention sets neither keepLast nor maxAge keeps the default number of
 * Complete snapshots; 0 keeps them all.
 */
static void test_operator_bounds(void **state)
{
	static const struct {
		const char *cron, *extra_spec;
		long min_interval_s;
		int default_keep_last;
		size_t n_complete; /* Complete snapshots of the schedule, one an hour before */
		bool create;
		const char *reason;
		size_t n_prune;
	} rows[] = {
	    {"*/5 * * * *", "", 300, 0, 0, true, EO_REASON_SCHEDULED, 0},
	    {"* * * * *", "", 300, 0, 0, false, EO_REASON_SCHEDULE_TOO_FREQUENT, 0},
	    {"*/4 * * * *", "", 300, 0, 0, false, EO_REASON_SCHEDULE_TOO_FREQUENT, 0},
	    {"0,2 10 * * *", "", 300, 0, 0, false, EO_REASON_SCHEDULE_TOO_FREQUENT, 0},
	    {"* * * * *", "", 0, 0, 0, true, EO_REASON_SCHEDULED, 0},
	    {"@hourly", "", 3600, 0, 0, true, EO_REASON_SCHEDULED, 0},
	    {"@hourly", "", 3601, 0, 0, false, EO_REASON_SCHEDULE_TOO_FREQUENT, 0},
	    /* the default retention */
	    {"@hourly", "", 300, 10, 12, true, EO_REASON_SCHEDULED, 2},
	    {"@hourly", "", 300, 0, 12, true, EO_REASON_SCHEDULED, 0},
	    {"@hourly", "'retention':{'keepLast':11}", 300, 10, 12, true, EO_REASON_SCHEDULED, 1},
	    {"@hourly", "'retention':{'maxAge':'8760h'}", 300, 10, 12, true, EO_REASON_SCHEDULED,
	     0},
	    {"@hourly", "'retention':{'keepFailed':3}", 300, 10, 12, true, EO_REASON_SCHEDULED, 2},
	    /* refused, still pruned */
	    {"* * * * *", "", 300, 10, 12, false, EO_REASON_SCHEDULE_TOO_FREQUENT, 2},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *sch = schedule(rows[i].cron, rows[i].extra_spec, "{}"),
		       *keep = json_array();
		struct eo_schplan_snapshot snaps[16] = {{0}};
		struct eo_schplan_input in = {.schedule = sch,
					      .snaps = snaps,
					      .operator_image = IMAGE,
					      .min_interval_s = rows[i].min_interval_s,
					      .default_keep_last = rows[i].default_keep_last,
					      .now = at("2026-06-02T10:00:20Z")};
		struct eo_schplan_result out;

		for (size_t k = 0; k < rows[i].n_complete; k++) {
			char name[64], slot[EO_TIME_BUF];
			json_t *s;

			snprintf(name, sizeof(name), "nightly-old-%zu", k);
			assert_int_equal(
			    eo_time_format(at("2026-06-01T00:00:00Z") + (time_t)k * 3600, slot,
					   sizeof(slot)),
			    0);
			s = ours(name, slot, "Complete");
			json_array_append_new(keep, s);
			snaps[in.n_snaps++].snapshot = s;
		}
		if (eo_plan_schedule(&in, &out) != 0)
			fail_msg("row %zu: plan failed", i);
		if ((out.create != NULL) != rows[i].create)
			fail_msg("row %zu (%s, min %ld s): create %d", i, rows[i].cron,
				 rows[i].min_interval_s, out.create != NULL);
		if (strcmp(eo_condition_reason(out.status, EO_COND_READY), rows[i].reason) != 0)
			fail_msg("row %zu: Ready reason %s, want %s", i,
				 eo_condition_reason(out.status, EO_COND_READY), rows[i].reason);
		if (strcmp(rows[i].reason, EO_REASON_SCHEDULE_TOO_FREQUENT) == 0) {
			assert_true(has_event(&out, EO_REASON_SCHEDULE_TOO_FREQUENT, "every"));
			assert_string_equal(eo_condition_status(out.status, EO_COND_READY),
					    EO_COND_FALSE);
			assert_null(json_object_get(out.status, "nextScheduleTime"));
		}
		if (out.n_prune != rows[i].n_prune)
			fail_msg("row %zu: %zu prune steps, want %zu", i, out.n_prune,
				 rows[i].n_prune);
		eo_schplan_result_clear(&out);
		json_decref(keep);
		json_decref(sch);
	}
}

/* The same input planned twice after applying the first status changes nothing. */
static void test_run_steady(void **state)
{
	json_t *sch = schedule("*/5 * * * *", "", "{}");
	struct eo_schplan_input in = {
	    .schedule = sch, .operator_image = IMAGE, .now = at("2026-06-02T10:00:20Z")};
	struct eo_schplan_result out;

	(void)state;
	assert_int_equal(eo_plan_schedule(&in, &out), 0);
	assert_non_null(out.create);
	json_object_set(sch, "status", out.status);
	eo_schplan_result_clear(&out);
	in.now += 30;
	assert_int_equal(eo_plan_schedule(&in, &out), 0);
	assert_null(out.create);
	assert_int_equal(out.n_events, 0);
	eo_schplan_result_clear(&out);
	json_decref(sch);
}

/* ---- retention --------------------------------------------------------------------- */

struct ret_snap {
	const char *name, *slot, *phase;
	int owner; /* 1 ours, 0 no owner, 2 owned by another schedule's UID, 3 our UID, no label */
};

struct ret_row {
	const char *what;
	int keep_last;
	long long max_age_s;
	int keep_failed;
	const char *now;
	struct ret_snap s[7];
	const char *want; /* per snapshot: K keep, P prune, - not ours */
};

#define D(day) "2026-06-0" #day "T00:00:00Z"

static const struct ret_row rets[] = {
    {"keepLast 2 of 4 complete",
     2,
     0,
     1,
     D(9),
     {{"a", D(1), "Complete", 1},
      {"b", D(2), "Complete", 1},
      {"c", D(3), "Complete", 1},
      {"d", D(4), "Complete", 1}},
     "PPKK"},
    {"order by slot, not by position",
     2,
     0,
     1,
     D(9),
     {{"d", D(4), "Complete", 1},
      {"a", D(1), "Complete", 1},
      {"c", D(3), "Complete", 1},
      {"b", D(2), "Complete", 1}},
     "KPKP"},
    {"failed ones count apart: keepFailed 1",
     2,
     0,
     1,
     D(9),
     {{"a", D(1), "Failed", 1},
      {"b", D(2), "Complete", 1},
      {"c", D(3), "Failed", 1},
      {"d", D(4), "Complete", 1},
      {"e", D(5), "Failed", 1}},
     "PKPKK"},
    {"keepFailed 0", 5, 0, 0, D(9), {{"a", D(1), "Failed", 1}, {"b", D(2), "Complete", 1}}, "PK"},
    {"running and pending are never pruned",
     1,
     0,
     0,
     D(9),
     {{"a", D(1), "Started", 1},
      {"b", D(2), "Pending", 1},
      {"c", D(3), NULL, 1},
      {"d", D(4), "Complete", 1},
      {"e", D(5), "Complete", 1}},
     "KKKPK"},
    {"maxAge 2 days",
     0,
     2 * 86400,
     1,
     D(6),
     {{"a", D(1), "Complete", 1},
      {"b", D(3), "Complete", 1},
      {"c", D(4), "Complete", 1},
      {"d", D(5), "Complete", 1}},
     "PPKK"},
    {"maxAge never prunes the newest complete one",
     0,
     3600,
     1,
     D(9),
     {{"a", D(1), "Complete", 1}, {"b", D(2), "Complete", 1}, {"c", D(3), "Failed", 1}},
     "PKK"},
    {"keepLast and maxAge together: either prunes",
     3,
     2 * 86400,
     1,
     D(6),
     {{"a", D(1), "Complete", 1},
      {"b", D(3), "Complete", 1},
      {"c", D(4), "Complete", 1},
      {"d", D(5), "Complete", 1}},
     "PPKK"},
    {"no limits: all complete kept",
     0,
     0,
     1,
     D(9),
     {{"a", D(1), "Complete", 1}, {"b", D(2), "Complete", 1}, {"c", D(3), "Complete", 1}},
     "KKK"},
    {"never anything the schedule does not control",
     1,
     0,
     0,
     D(9),
     {{"x", D(1), "Complete", 0},
      {"y", D(1), "Complete", 2},
      {"z", D(1), "Complete", 3},
      {"a", D(2), "Complete", 1},
      {"b", D(3), "Complete", 1}},
     "---PK"},
};

static json_t *ret_snap(const struct ret_snap *s)
{
	switch (s->owner) {
	case 0:
		return snap(s->name, s->slot, s->phase, NULL, "nightly");
	case 2:
		return snap(s->name, s->slot, s->phase, "other-uid", "nightly");
	case 3:
		return snap(s->name, s->slot, s->phase, "sch-uid", NULL);
	default:
		return ours(s->name, s->slot, s->phase);
	}
}

static void test_retention(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rets) / sizeof(rets[0]); i++) {
		const struct ret_row *r = &rets[i];
		json_t *sch = schedule("0 0 * * *", "", "{}"), *keep = json_array();
		struct eo_schplan_snapshot snaps[7] = {{0}};
		enum eo_schplan_keep v[7];
		char got[8] = "";
		size_t n = 0;

		while (n < 7 && r->s[n].name != NULL) {
			json_t *s = ret_snap(&r->s[n]);

			json_array_append_new(keep, s);
			snaps[n++].snapshot = s;
		}
		assert_int_equal(eo_schplan_retention(sch, snaps, n, r->keep_last, r->max_age_s,
						      r->keep_failed, at(r->now), v),
				 0);
		for (size_t k = 0; k < n; k++)
			got[k] = v[k] == EO_SCHPLAN_PRUNE  ? 'P'
				 : v[k] == EO_SCHPLAN_KEEP ? 'K'
							   : '-';
		got[n] = '\0';
		if (strcmp(got, r->want) != 0)
			fail_msg("%s: got %s, want %s", r->what, got, r->want);
		json_decref(keep);
		json_decref(sch);
	}
}

/* ---- prune steps --------------------------------------------------------------------- */

static json_t *prune_job(const char *snapshot, const char *state)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{'metadata':{'name':'%s-prune','namespace':'ns','uid':'j-%s'},'status':%s}",
		 snapshot, snapshot, state);
	return tu_jsonq(buf);
}

#define J_RUNNING  "{'active':1}"
#define J_COMPLETE "{'succeeded':1,'conditions':[{'type':'Complete','status':'True'}]}"
#define J_FAILED                                                                                   \
	"{'failed':4,'conditions':[{'type':'Failed','status':'True','message':'Job has reached "   \
	"the specified backoff limit'}]}"

static json_t *pods_with(const char *words, int exit_code)
{
	char buf[1024];

	snprintf(
	    buf, sizeof(buf),
	    "[{'status':{'containerStatuses':[{'name':'snapshot-prune','state':{"
	    "'terminated':{'exitCode':%d,'finishedAt':'2026-06-02T10:00:00Z','message':'%s'}}}]}}]",
	    exit_code, words);
	return tu_jsonq(buf);
}

/* Four complete snapshots a..d (oldest first) with keepLast 1: a, b, c are pruned. */
static void plan_prune(const char *const job_states[3], json_t *const pods[3], const char *image,
		       struct eo_schplan_result *out, json_t *keep)
{
	json_t *sch = schedule("0 0 * * *", "'retention':{'keepLast':1}",
			       "{'lastScheduleTime':'2026-06-04T00:00:00Z'}");
	static struct eo_schplan_snapshot snaps[4];
	const char *names[4] = {"nightly-a", "nightly-b", "nightly-c", "nightly-d"};
	struct eo_schplan_input in = {
	    .schedule = sch, .snaps = snaps, .n_snaps = 4, .operator_image = image};

	in.now = at("2026-06-04T12:00:00Z");
	memset(snaps, 0, sizeof(snaps));
	json_array_append_new(keep, sch);
	for (int i = 0; i < 4; i++) {
		char slot[32];
		json_t *s;

		snprintf(slot, sizeof(slot), "2026-06-0%dT00:00:00Z", i + 1);
		s = ours(names[i], slot, "Complete");
		json_array_append_new(keep, s);
		snaps[i].snapshot = s;
		if (i < 3 && job_states[i] != NULL) {
			json_t *j = prune_job(names[i], job_states[i]);

			json_array_append_new(keep, j);
			snaps[i].prune_job = j;
			snaps[i].prune_job_pods = pods[i];
		}
	}
	assert_int_equal(eo_plan_schedule(&in, out), 0);
}

static void test_prune_creates_jobs(void **state)
{
	const char *js[3] = {NULL, NULL, NULL};
	json_t *pods[3] = {NULL, NULL, NULL}, *keep = json_array();
	struct eo_schplan_result out;

	(void)state;
	plan_prune(js, pods, IMAGE, &out, keep);
	assert_int_equal(out.n_prune, 3);
	for (size_t i = 0; i < 3; i++) {
		const json_t *job = out.prune[i].job;
		char *args;

		assert_int_equal(out.prune[i].op, EO_SCHPLAN_PRUNE_CREATE_JOB);
		assert_non_null(job);
		args = json_dumps(
		    json_object_get(
			json_array_get(
			    json_object_get(
				json_object_get(
				    json_object_get(json_object_get(job, "spec"), "template"),
				    "spec"),
				"containers"),
			    0),
			"args"),
		    JSON_COMPACT);
		assert_non_null(strstr(args, "\"snapshot-prune\""));
		assert_non_null(strstr(args, "\"--snapshot-uid\",\"uid-nightly-"));
		assert_non_null(strstr(args, "\"--s3-key\",\"nightly\""));
		free(args);
		assert_true(eo_desired_is_controlled_by(job, eo_meta_uid(out.prune[i].snapshot)));
		assert_string_equal(eo_meta_label(job, EO_LABEL_SCHEDULE), "nightly");
	}
	assert_true(
	    eo_condition_matches(out.status, EO_COND_PRUNED, EO_COND_FALSE, EO_REASON_PRUNING));
	eo_schplan_result_clear(&out);
	json_decref(keep);
}

static void test_prune_caps_running_jobs(void **state)
{
	const char *js[3] = {J_RUNNING, J_RUNNING, NULL};
	json_t *pods[3] = {NULL, NULL, NULL}, *keep = json_array();
	struct eo_schplan_result out;

	(void)state;
	plan_prune(js, pods, IMAGE, &out, keep);
	/* two running + one new = EO_SCHPLAN_MAX_PRUNE_JOBS */
	assert_int_equal(out.n_prune, 1);
	assert_string_equal(eo_meta_name(out.prune[0].snapshot), "nightly-c");
	eo_schplan_result_clear(&out);
	json_decref(keep);
}

static void test_prune_complete_deletes(void **state)
{
	const char *js[3] = {J_COMPLETE, J_RUNNING, J_FAILED};
	json_t *keep = json_array();
	json_t *pods[3] = {
	    pods_with("deleted s3://snaps/nightly/nightly-a.db", 0), NULL,
	    pods_with("cannot tell whether s3://snaps/nightly/nightly-c.db is ours", 1)};
	struct eo_schplan_result out;

	(void)state;
	json_array_append_new(keep, pods[0]);
	json_array_append_new(keep, pods[2]);
	plan_prune(js, pods, IMAGE, &out, keep);
	assert_int_equal(out.n_prune, 1);
	assert_int_equal(out.prune[0].op, EO_SCHPLAN_PRUNE_DELETE_SNAPSHOT);
	assert_string_equal(eo_meta_name(out.prune[0].snapshot), "nightly-a");
	assert_true(
	    has_event(&out, EO_REASON_SNAPSHOT_PRUNED, "deleted s3://snaps/nightly/nightly-a.db"));
	assert_true(eo_condition_matches(out.status, EO_COND_PRUNED, EO_COND_FALSE,
					 EO_REASON_PRUNE_FAILED));
	assert_non_null(strstr(json_string_value(json_object_get(
				   eo_condition_find(out.status, EO_COND_PRUNED), "message")),
			       "cannot tell whether"));
	assert_true(has_event(&out, EO_REASON_PRUNE_FAILED, "nightly-c-prune"));
	eo_schplan_result_clear(&out);
	json_decref(keep);
}

/*
 * A failed snapshot beyond keepFailed whose destination PVC was refused (ForeignVolume) is
 * deleted without a prune Job: a prune Job would mount the very PVC the refusal kept out.
 * Another failed one (JobFailed) still gets its prune Job.
 */
static void test_prune_foreign_volume_without_job(void **state)
{
	json_t *sch = schedule("0 0 * * *", "'retention':{'keepLast':3,'keepFailed':0}",
			       "{'lastScheduleTime':'2026-06-04T00:00:00Z'}");
	json_t *a = ours("nightly-a", "2026-06-02T00:00:00Z", NULL);
	json_t *b = ours("nightly-b", "2026-06-03T00:00:00Z", NULL);
	struct eo_schplan_snapshot snaps[2] = {{.snapshot = a}, {.snapshot = b}};
	struct eo_schplan_input in = {.schedule = sch,
				      .snaps = snaps,
				      .n_snaps = 2,
				      .operator_image = IMAGE,
				      .now = at("2026-06-04T12:00:00Z")};
	struct eo_schplan_result out;

	(void)state;
	json_object_set_new(a, "status",
			    tu_jsonq("{'phase':'Failed','conditions':[{'type':'Ready','status':"
				     "'False','reason':'ForeignVolume','message':'refused'}]}"));
	json_object_set_new(b, "status",
			    tu_jsonq("{'phase':'Failed','conditions':[{'type':'Ready','status':"
				     "'False','reason':'JobFailed','message':'failed'}]}"));
	assert_int_equal(eo_plan_schedule(&in, &out), 0);
	assert_int_equal(out.n_prune, 2);
	for (size_t i = 0; i < 2; i++) {
		const char *n = eo_meta_name(out.prune[i].snapshot);

		if (strcmp(n, "nightly-a") == 0) {
			assert_int_equal(out.prune[i].op, EO_SCHPLAN_PRUNE_DELETE_SNAPSHOT);
			assert_null(out.prune[i].job);
		} else {
			assert_string_equal(n, "nightly-b");
			assert_int_equal(out.prune[i].op, EO_SCHPLAN_PRUNE_CREATE_JOB);
		}
	}
	assert_true(has_event(&out, EO_REASON_SNAPSHOT_PRUNED, "nothing was stored"));
	eo_schplan_result_clear(&out);
	json_decref(a);
	json_decref(b);
	json_decref(sch);
}

/*
 * The controller's live read found a complete snapshot's PVC destination held by another object
 * (or gone) before the prune Job: no Job, Pruned=False with that reason and a Warning Event,
 * the snapshot kept. The other snapshots are pruned as usual.
 */
static void test_prune_refused_volume(void **state)
{
	const char *js[3] = {NULL, NULL, NULL};
	json_t *pods[3] = {NULL, NULL, NULL}, *keep = json_array();
	json_t *sch = schedule("0 0 * * *", "'retention':{'keepLast':1}",
			       "{'lastScheduleTime':'2026-06-04T00:00:00Z'}");
	struct eo_schplan_snapshot snaps[4];
	struct eo_schplan_result out;
	struct eo_schplan_input in = {.schedule = sch,
				      .snaps = snaps,
				      .n_snaps = 4,
				      .operator_image = IMAGE,
				      .now = at("2026-06-04T12:00:00Z")};

	(void)state;
	/* The snapshots plan_prune builds, first without a refusal. */
	plan_prune(js, pods, IMAGE, &out, keep);
	assert_int_equal(out.n_prune, 3);
	eo_schplan_result_clear(&out);
	for (size_t i = 0; i < 4; i++) /* keep holds the schedule, then a..d */
		snaps[i] = (struct eo_schplan_snapshot){.snapshot = json_array_get(keep, 1 + i)};
	snaps[1].volume_reason = "ForeignVolume";
	snaps[1].volume_why = "PVC backups is controlled by StatefulSet postgres";
	assert_int_equal(eo_plan_schedule(&in, &out), 0);
	assert_int_equal(out.n_prune, 2);
	for (size_t i = 0; i < out.n_prune; i++) {
		assert_int_equal(out.prune[i].op, EO_SCHPLAN_PRUNE_CREATE_JOB);
		assert_string_not_equal(eo_meta_name(out.prune[i].snapshot), "nightly-b");
	}
	assert_true(
	    eo_condition_matches(out.status, EO_COND_PRUNED, EO_COND_FALSE, "ForeignVolume"));
	assert_true(has_event(&out, "ForeignVolume",
			      "EtcdSnapshot nightly-b is not pruned: PVC backups is controlled by "
			      "StatefulSet postgres"));
	eo_schplan_result_clear(&out);
	json_decref(sch);
	json_decref(keep);
}

static void test_prune_without_image(void **state)
{
	const char *js[3] = {NULL, NULL, NULL};
	json_t *pods[3] = {NULL, NULL, NULL}, *keep = json_array();
	struct eo_schplan_result out;

	(void)state;
	plan_prune(js, pods, NULL, &out, keep);
	assert_int_equal(out.n_prune, 0);
	assert_true(eo_condition_matches(out.status, EO_COND_PRUNED, EO_COND_FALSE,
					 EO_REASON_PRUNE_FAILED));
	eo_schplan_result_clear(&out);
	json_decref(keep);
}

static void test_retention_met(void **state)
{
	json_t *sch = schedule("0 0 * * *", "'retention':{'keepLast':3}", "{}");
	json_t *a = ours("nightly-a", "2026-06-01T00:00:00Z", "Complete");
	struct eo_schplan_snapshot snaps[1] = {{.snapshot = a}};
	struct eo_schplan_input in = {.schedule = sch,
				      .snaps = snaps,
				      .n_snaps = 1,
				      .operator_image = IMAGE,
				      .now = at("2026-06-01T12:00:00Z")};
	struct eo_schplan_result out;

	(void)state;
	assert_int_equal(eo_plan_schedule(&in, &out), 0);
	assert_int_equal(out.n_prune, 0);
	assert_true(eo_condition_matches(out.status, EO_COND_PRUNED, EO_COND_TRUE,
					 EO_REASON_RETENTION_MET));
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(out.status, "lastSuccessfulSnapshot"), "name")),
			    "nightly-a");
	eo_schplan_result_clear(&out);
	json_decref(a);
	json_decref(sch);
}

/* ---- api/schedule.c and the prune Job ------------------------------------------------ */

static void test_names(void **state)
{
	char buf[EO_NAME_MAX];
	char long_name[EO_SCHEDULE_NAME_MAX + 2];

	(void)state;
	assert_int_equal(
	    eo_name_scheduled_snapshot(buf, sizeof(buf), "nightly", at("2026-06-02T10:05:59Z")), 0);
	assert_string_equal(buf, "nightly-202606021005");
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_int_equal(eo_name_scheduled_snapshot(buf, sizeof(buf), long_name, 0), -1);
	long_name[EO_SCHEDULE_NAME_MAX] = '\0';
	assert_int_equal(eo_name_scheduled_snapshot(buf, sizeof(buf), long_name, 0), 0);
	assert_int_equal(strlen(buf), 54); /* EO_SNAPSHOT_NAME_MAX */
	assert_int_equal(eo_name_scheduled_snapshot(buf, 10, "nightly", 0), -1);
	assert_int_equal(eo_name_prune_job(buf, sizeof(buf), "nightly-202606021005"), 0);
	assert_string_equal(buf, "nightly-202606021005-prune");
}

static const struct {
	const char *extra, *want; /* want NULL: valid */
} validations[] = {
    {"", NULL},
    {"'retention':{'keepLast':0}", "keepLast"},
    {"'retention':{'keepLast':1001}", "keepLast"},
    {"'retention':{'keepFailed':-1}", "keepFailed"},
    {"'retention':{'maxAge':'1d'}", "maxAge"},
    {"'retention':{'maxAge':'500ms'}", "maxAge"},
    {"'retention':{'maxAge':'168h','keepLast':7,'keepFailed':0}", NULL},
    {"'startingDeadlineSeconds':5", "startingDeadlineSeconds"},
    {"'startingDeadlineSeconds':10", NULL},
    /* The later destination replaces DEST_S3: plain HTTP without s3.insecure is refused. */
    {"'destination':{'s3':{'endpoint':'http://minio:9000','bucket':'snaps',"
     "'credentialsSecretRef':{'name':'s'}}}",
     "s3.insecure: true"},
};

static void test_validate(void **state)
{
	char msg[256];

	(void)state;
	for (size_t i = 0; i < sizeof(validations) / sizeof(validations[0]); i++) {
		json_t *s = schedule("0 * * * *", validations[i].extra, "{}");
		int rc = eo_schedule_validate(s, msg, sizeof(msg));

		if (validations[i].want == NULL && rc != 0)
			fail_msg("%s: %s", validations[i].extra, msg);
		if (validations[i].want != NULL &&
		    (rc == 0 || strstr(msg, validations[i].want) == NULL))
			fail_msg("%s: rc %d msg '%s', want '%s'", validations[i].extra, rc, msg,
				 validations[i].want);
		json_decref(s);
	}
}

static void test_prune_job_pvc(void **state)
{
	json_t *s =
	    tu_jsonq("{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdSnapshot',"
		     "'metadata':{'name':'nightly-202606021000','namespace':'ns','uid':'s-uid'},"
		     "'spec':{'clusterRef':{'name':'demo'},'destination':" DEST_PVC "}}");
	json_t *want = tu_jsonq(
	    "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'nightly-202606021000-prune',"
	    "'namespace':'ns','labels':{'app.kubernetes.io/managed-by':'etcd-operator',"
	    "'etcd-operator.cozystack.io/snapshot':'nightly-202606021000',"
	    "'etcd-operator.cozystack.io/schedule':'nightly'},'ownerReferences':[{'apiVersion':"
	    "'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdSnapshot','name':"
	    "'nightly-202606021000','uid':'s-uid','controller':true,'blockOwnerDeletion':true}]},"
	    "'spec':{'backoffLimit':3,'activeDeadlineSeconds':1800,'ttlSecondsAfterFinished':600,"
	    "'template':{'metadata':{'labels':{'app.kubernetes.io/managed-by':'etcd-operator',"
	    "'etcd-operator.cozystack.io/schedule':'nightly'}},'spec':{'restartPolicy':'Never',"
	    "'automountServiceAccountToken':false,'enableServiceLinks':false,'securityContext':{"
	    "'runAsNonRoot':true,'runAsUser':65532,'runAsGroup':65532,'fsGroup':65532,"
	    "'fsGroupChangePolicy':'OnRootMismatch',"
	    "'seccompProfile':{'type':'RuntimeDefault'}},'containers':[{'name':'snapshot-prune',"
	    "'image':'" IMAGE "','args':['snapshot-prune','--snapshot-name','nightly-202606021000',"
	    "'--snapshot-uid','s-uid','--pvc-dir','/snapshot/data/demo','--termination-log',"
	    "'/dev/termination-log'],'terminationMessagePath':'/dev/termination-log',"
	    "'terminationMessagePolicy':'FallbackToLogsOnError','resources':{'requests':{'cpu':"
	    "'50m','memory':'64Mi'},'limits':{'memory':'256Mi'}},'securityContext':{"
	    "'runAsNonRoot':true,'allowPrivilegeEscalation':false,'readOnlyRootFilesystem':true,"
	    "'capabilities':{'drop':['ALL']}},'volumeMounts':[{'name':'snapshot-data',"
	    "'mountPath':'/snapshot/data'}]}],'volumes':[{'name':'snapshot-data',"
	    "'persistentVolumeClaim':{'claimName':'backups'}}]}}}}");
	json_t *got = eo_desired_prune_job(s, "nightly", IMAGE, NULL);

	(void)state;
	tu_assert_json_equal(got, want, "prune Job (PVC)");
	tu_assert_restricted_pod_spec(
	    json_object_get(json_object_get(json_object_get(got, "spec"), "template"), "spec"),
	    "prune Job (PVC)");
	assert_null(eo_desired_prune_job(s, NULL, IMAGE, NULL));
	assert_null(eo_desired_prune_job(s, "nightly", "", NULL));
	json_decref(got);
	/* --pod-run-as-user: a chosen UID, and auto (the platform's), nothing else moves */
	{
		struct eo_desired_opts o = {.pod_run_as_user = 1000};
		json_t *tmpl = json_object_get(json_object_get(want, "spec"), "template");
		json_t *sc = json_object_get(json_object_get(tmpl, "spec"), "securityContext");

		json_object_set_new(sc, "runAsUser", json_integer(1000));
		json_object_set_new(sc, "runAsGroup", json_integer(1000));
		json_object_set_new(sc, "fsGroup", json_integer(1000));
		got = eo_desired_prune_job(s, "nightly", IMAGE, &o);
		tu_assert_json_equal(got, want, "prune Job (UID 1000)");
		json_decref(got);
		o.pod_run_as_user = EO_DESIRED_POD_UID_AUTO;
		json_object_del(sc, "runAsUser");
		json_object_del(sc, "runAsGroup");
		json_object_del(sc, "fsGroup");
		got = eo_desired_prune_job(s, "nightly", IMAGE, &o);
		tu_assert_json_equal(got, want, "prune Job (auto user)");
		tu_assert_restricted_pod_spec(
		    json_object_get(json_object_get(json_object_get(got, "spec"), "template"),
				    "spec"),
		    "prune Job (auto user)");
		json_decref(got);
	}
	json_decref(want);
	json_decref(s);
}

TU_MAIN(test_run, test_run_steady, test_operator_bounds, test_retention, test_prune_creates_jobs,
	test_prune_caps_running_jobs, test_prune_complete_deletes, test_prune_without_image,
	test_prune_foreign_volume_without_job, test_prune_refused_volume, test_retention_met,
	test_names, test_validate, test_prune_job_pvc)
