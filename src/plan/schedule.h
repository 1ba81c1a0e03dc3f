/*
 * plan/schedule.h - what an EtcdSnapshotSchedule does now (pure).
 *
 * Input: the schedule, the EtcdSnapshots with an owner reference to it (each with its
 * prune Job <snapshot>-prune and that Job's Pods), the time. Output: at most one
 * EtcdSnapshot to create, prune steps, the desired status and Events.
 *
 * Running (cron.h, UTC):
 *   - the slot considered is the latest one at or before now (eo_cron_prev); it is due when
 *     it is later than status.lastScheduleTime (or, before the first run, than the
 *     schedule's creationTimestamp);
 *   - at most one missed run is caught up: after an outage only the latest slot runs, and
 *     only if it is at most spec.startingDeadlineSeconds old (no limit when unset); every
 *     earlier missed slot is skipped and counted in a MissedSchedule Event;
 *   - at most one snapshot runs at a time: while an EtcdSnapshot of the schedule is not
 *     Complete or Failed, the due slot waits (and runs when that one ends, deadline
 *     permitting), like a CronJob with concurrencyPolicy Forbid;
 *   - the snapshot is named "<schedule>-YYYYMMDDHHMM" of its slot: a retry after a crash
 *     finds it (in the input, or as an AlreadyExists) and never makes a second one. When
 *     that name is held by an EtcdSnapshot the schedule does not control, nothing is
 *     created: Ready=False/SnapshotNameTaken;
 *   - spec.suspend: nothing is created (Ready=False/Suspended); retention still applies.
 *
 * Retention, over the snapshots the schedule controls (controller owner reference with its
 * UID and the schedule label), newest slot first:
 *   - Complete: beyond retention.keepLast, or older than retention.maxAge, is pruned; the
 *     newest Complete snapshot is never pruned by age;
 *   - Failed: beyond retention.keepFailed (default 1) is pruned;
 *   - any other phase, or an object being deleted: kept.
 * Pruning a snapshot: the Job <snapshot>-prune deletes the stored object or file if it is
 * stamped with the snapshot's UID (desired/snapshot_job.h); once it completed, the
 * EtcdSnapshot is deleted. A failed prune Job leaves the snapshot in place
 * (Pruned=False/PruneFailed) and is retried when the Job expires (its TTL).
 */
#ifndef EO_PLAN_SCHEDULE_H
#define EO_PLAN_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "api/names.h"
#include "plan/plan.h"

#define EO_SCHPLAN_MAX_PRUNE	    16 /* prune steps returned per pass */
#define EO_SCHPLAN_MAX_PRUNE_JOBS   3  /* prune Jobs running at once */
#define EO_SCHPLAN_MAX_EVENTS	    4
#define EO_SCHPLAN_REQUEUE_MAX_MS   3600000L /* look again at least hourly */
#define EO_SCHPLAN_RETRY_MS	    30000L   /* after a refusal (name taken, no image) */
#define EO_SCHPLAN_MISSED_COUNT_MAX 100000   /* missed slots counted at most */

/* Condition types and reasons of an EtcdSnapshotSchedule. */
#define EO_COND_PRUNED			"Pruned"
#define EO_REASON_SCHEDULED		"Scheduled"
#define EO_REASON_SUSPENDED		"Suspended"
#define EO_REASON_INVALID_SCHEDULE	"InvalidSchedule"
#define EO_REASON_SCHEDULE_TOO_FREQUENT "ScheduleTooFrequent"
#define EO_REASON_SNAPSHOT_NAME_TAKEN	"SnapshotNameTaken"
#define EO_REASON_RETENTION_MET		"RetentionMet"
#define EO_REASON_PRUNING		"Pruning"
#define EO_REASON_PRUNE_FAILED		"PruneFailed"
/* Event reasons only. */
#define EO_REASON_SNAPSHOT_CREATED "SnapshotCreated"
#define EO_REASON_MISSED_SCHEDULE  "MissedSchedule"
#define EO_REASON_SNAPSHOT_PRUNED  "SnapshotPruned"

enum eo_schplan_prune_op {
	EO_SCHPLAN_PRUNE_CREATE_JOB,	  /* create .job */
	EO_SCHPLAN_PRUNE_DELETE_SNAPSHOT, /* the Job completed: delete .snapshot */
};

struct eo_schplan_snapshot {
	const json_t *snapshot;	      /* an EtcdSnapshot with an owner reference to the schedule */
	const json_t *prune_job;      /* Job <snapshot>-prune controlled by it, or NULL */
	const json_t *prune_job_pods; /* array of that Job's Pods, or NULL */
	/*
	 * Set by the controller when the live read of the snapshot's PVC destination, made before
	 * its prune Job would mount it, refused it (plan/volref.h): the reason (ForeignVolume,
	 * VolumeNotFound) and why. No prune Job is made; Pruned=False with that reason.
	 */
	const char *volume_reason;
	const char *volume_why;
};

struct eo_schplan_input {
	const json_t *schedule;
	const struct eo_schplan_snapshot *snaps;
	size_t n_snaps;
	/* The controller found an EtcdSnapshot of this name that the schedule does not control. */
	const char *taken_name;
	const char *operator_image; /* runs prune Jobs */
	/* their Pods' user (NULL: the default) */
	const struct eo_desired_opts *build;
	/*
	 * The operator's bounds (--snapshot-schedule-min-interval-seconds,
	 * --snapshot-schedule-default-keep-last): a schedule whose runs can come closer than
	 * min_interval_s is refused (Ready=False/ScheduleTooFrequent, nothing created, retention
	 * still applies); a schedule whose retention sets neither keepLast nor maxAge keeps
	 * default_keep_last Complete snapshots. 0: no bound.
	 */
	long min_interval_s;
	int default_keep_last;
	time_t now;
};

struct eo_schplan_prune {
	enum eo_schplan_prune_op op;
	const json_t *snapshot; /* borrowed from the input */
	json_t *job;		/* CREATE_JOB: new reference */
};

struct eo_schplan_event {
	const char *type, *reason;
	char message[EO_PLAN_MSG_MAX];
};

struct eo_schplan_result {
	json_t *create; /* EtcdSnapshot to create (new reference), or NULL */
	struct eo_schplan_prune prune[EO_SCHPLAN_MAX_PRUNE];
	size_t n_prune;
	json_t *status; /* desired status (new reference) */
	bool status_changed;
	long requeue_ms;
	struct eo_schplan_event events[EO_SCHPLAN_MAX_EVENTS];
	size_t n_events;
};

/* The schedule's verdict on each snapshot it controls (exposed for tests). */
enum eo_schplan_keep {
	EO_SCHPLAN_NOT_OURS = 0, /* not controlled by the schedule, or not labelled by it */
	EO_SCHPLAN_KEEP,
	EO_SCHPLAN_PRUNE,
};

/*
 * Retention alone: verdict[i] for snaps[i] (see the rules above). keep_last 0 and
 * max_age_s 0 mean no limit. -1 on allocation failure.
 */
int eo_schplan_retention(const json_t *schedule, const struct eo_schplan_snapshot *snaps, size_t n,
			 int keep_last, long long max_age_s, int keep_failed, time_t now,
			 enum eo_schplan_keep *verdict);

/*
 * Whether the schedule owns snap: a controller owner reference with the schedule's UID
 * and the schedule label with its name. The one test of ownership, for the plan and the
 * act layer alike.
 */
bool eo_schplan_owns(const json_t *schedule, const json_t *snap);

/* The slot time of a scheduled snapshot: its annotation, else its creationTimestamp, else 0. */
time_t eo_schplan_slot_time(const json_t *snapshot);

/* Plans. 0, or -1 on allocation failure or missing metadata. */
int eo_plan_schedule(const struct eo_schplan_input *in, struct eo_schplan_result *out);

void eo_schplan_result_clear(struct eo_schplan_result *r);

#endif
