/*
 * plan/defrag_schedule.h - what an EtcdDefragSchedule does now (pure).
 *
 * An EtcdDefragSchedule (an extension: the seed's upstream announced such a policy kind
 * without a shape) stamps out EtcdDefrag runs of one cluster on a cron schedule (api/cron.h,
 * UTC). Each run carries the schedule's spec.rule, so the schedule is also a threshold: a
 * run only defragments the members whose reclaimable space (DbSize - DbSizeInUse) is above
 * the rule's floor and skips the others; "every 10 minutes, when more than 500Mi can be
 * reclaimed" is `schedule: "*\/10 * * * *"` with `rule: {freeSpaceAbove: 500Mi}`.
 *
 *   - the slot is the latest at or before now; it is due when later than
 *     status.lastScheduleTime (before the first run: than the creationTimestamp); missed
 *     slots are not caught up one by one, only the latest runs;
 *   - at most one run at a time: while a run of the schedule is not Complete or Failed the
 *     due slot waits (Forbid);
 *   - a run is named "<schedule>-YYYYMMDDHHMM" of its slot, so a retry after a crash finds
 *     it (in the input, or as an AlreadyExists) and never makes a second one;
 *   - spec.suspend: nothing is created; the history limit still applies;
 *   - history: of the finished runs it controls, newest first, the schedule keeps
 *     successfulRunsHistoryLimit Complete ones (default 3) and failedRunsHistoryLimit
 *     Failed ones (default 1) and deletes the rest.
 */
#ifndef EO_PLAN_DEFRAG_SCHEDULE_H
#define EO_PLAN_DEFRAG_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "plan/plan.h"

#define EO_DSPLAN_MAX_DELETE  16
#define EO_DSPLAN_REQUEUE_MAX 3600000L /* look again at least hourly */
#define EO_DSPLAN_WAIT_MS     30000L   /* a due slot waiting for a running run */

#define EO_REASON_DSCHED_SCHEDULED "Scheduled"
#define EO_REASON_DSCHED_SUSPENDED "Suspended"
#define EO_REASON_DSCHED_INVALID   "InvalidSchedule"
#define EO_REASON_DSCHED_CREATED   "DefragCreated" /* Event only */

struct eo_dsplan_input {
	const json_t *schedule;
	const json_t *runs; /* array of the EtcdDefrags the schedule controls, or NULL */
	time_t now;
};

struct eo_dsplan_result {
	json_t *create;				 /* EtcdDefrag to create (new reference), or NULL */
	const json_t *del[EO_DSPLAN_MAX_DELETE]; /* runs to delete (borrowed from runs) */
	size_t n_del;
	json_t *status; /* desired status (new reference) */
	bool status_changed;
	long requeue_ms;
	const char *event_type, *event_reason; /* NULL: no Event */
	char message[EO_PLAN_MSG_MAX];
};

/* 0, or -1 on allocation failure or missing metadata. */
int eo_plan_defrag_schedule(const struct eo_dsplan_input *in, struct eo_dsplan_result *out);
void eo_dsplan_result_clear(struct eo_dsplan_result *r);

#endif
