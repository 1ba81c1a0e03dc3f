/*
 * EtcdSnapshotSchedule: typed read access, validation and the names of the EtcdSnapshots a
 * schedule creates.
 *
 * Functions take the whole object as a jansson tree; returned strings are borrowed from
 * it. The cron syntax itself is checked by api/cron.h (the CRD only checks its shape).
 */
#ifndef EO_API_SCHEDULE_H
#define EO_API_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

/* "<schedule>-YYYYMMDDHHMM" must fit an EtcdSnapshot name (EO_SNAPSHOT_NAME_MAX, 54). */
#define EO_SCHEDULE_NAME_MAX 41
#define EO_MSG_SCHEDULE_NAME                                                                       \
	"metadata.name must be at most 41 characters long (its snapshots are named "               \
	"<schedule>-YYYYMMDDHHMM)"
/* The CRD's CEL rule on spec.schedule (its shape only; eo_cron_parse checks the rest). */
#define EO_MSG_SCHEDULE_SYNTAX                                                                     \
	"schedule must be 5 cron fields (minute hour day-of-month month day-of-week) or a "        \
	"macro such as @daily"
#define EO_MSG_RETENTION_KEEP_FAILED_MAX 100
#define EO_SCHEDULE_KEEP_LAST_MAX	 1000
/* retention.keepFailed when absent. */
#define EO_SCHEDULE_DEFAULT_KEEP_FAILED 1

struct eo_schedule_retention {
	int keep_last;	   /* 0: no count limit */
	int64_t max_age_s; /* 0: no age limit */
	int keep_failed;   /* failed snapshots kept, newest first */
};

/* spec.clusterRef.name, spec.schedule; NULL when absent. */
const char *eo_schedule_cluster_name(const json_t *s);
const char *eo_schedule_cron(const json_t *s);
/* spec.suspend (false when absent). */
bool eo_schedule_suspended(const json_t *s);
/* spec.startingDeadlineSeconds, or -1 when absent. */
int64_t eo_schedule_starting_deadline(const json_t *s);
/* spec.destination (borrowed), or NULL. */
json_t *eo_schedule_destination(const json_t *s);
/* spec.retention with defaults applied; -1 when maxAge does not parse. */
int eo_schedule_retention(const json_t *s, struct eo_schedule_retention *out);

/*
 * Re-check the CRD rules (name length, clusterRef.name, schedule present, destination,
 * retention bounds, maxAge syntax, startingDeadlineSeconds >= 10). 0, or -1 with msg.
 */
int eo_schedule_validate(const json_t *s, char *msg, size_t n);

/* The EtcdSnapshot for the slot at t: "<schedule>-YYYYMMDDHHMM" (UTC). 0 or -1. */
int eo_name_scheduled_snapshot(char *buf, size_t n, const char *schedule, time_t t);

#endif
