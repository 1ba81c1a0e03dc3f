#include "api/schedule.h"

#include <stdio.h>
#include <string.h>

#include "api/jsonpath.h"
#include "api/meta.h"
#include "api/snapshot.h"
#include "api/timeutil.h"
#include "api/validate.h"

#define MIN_DEADLINE_S 10

const char *eo_schedule_cluster_name(const json_t *s)
{
	return eo__json_str_at(s, "spec.clusterRef.name");
}

const char *eo_schedule_cron(const json_t *s)
{
	return eo__json_str_at(s, "spec.schedule");
}

bool eo_schedule_suspended(const json_t *s)
{
	return eo__json_bool_at(s, "spec.suspend", false);
}

int64_t eo_schedule_starting_deadline(const json_t *s)
{
	int64_t v;

	if (!eo__json_int_at(s, "spec.startingDeadlineSeconds", &v) || v < 0)
		return -1;
	return v;
}

json_t *eo_schedule_destination(const json_t *s)
{
	return eo__json_object_at(s, "spec.destination");
}

int eo_schedule_retention(const json_t *s, struct eo_schedule_retention *out)
{
	const char *age = eo__json_str_at(s, "spec.retention.maxAge");
	int64_t v;

	memset(out, 0, sizeof(*out));
	out->keep_failed = EO_SCHEDULE_DEFAULT_KEEP_FAILED;
	if (eo__json_int_at(s, "spec.retention.keepLast", &v) && v > 0)
		out->keep_last = v > EO_SCHEDULE_KEEP_LAST_MAX ? EO_SCHEDULE_KEEP_LAST_MAX : (int)v;
	if (eo__json_int_at(s, "spec.retention.keepFailed", &v) && v >= 0)
		out->keep_failed = v > EO_MSG_RETENTION_KEEP_FAILED_MAX
				       ? EO_MSG_RETENTION_KEEP_FAILED_MAX
				       : (int)v;
	if (age != NULL && age[0] != '\0') {
		int64_t ms;

		if (eo_duration_parse_ms(age, &ms) != 0 || ms < 1000)
			return -1;
		out->max_age_s = ms / 1000;
	}
	return 0;
}

int eo_schedule_validate(const json_t *s, char *msg, size_t n)
{
	const char *name = eo_meta_name(s);
	const char *cluster = eo_schedule_cluster_name(s), *cron = eo_schedule_cron(s);
	struct eo_schedule_retention r;
	int64_t v;

	eo__clear(msg, n);
	if (name != NULL && strlen(name) > EO_SCHEDULE_NAME_MAX)
		return eo__fail(msg, n, "%s", EO_MSG_SCHEDULE_NAME);
	if (eo__json_object_at(s, "spec") == NULL)
		return eo__fail(msg, n, "spec: Required value");
	if (cluster == NULL || cluster[0] == '\0')
		return eo__fail(msg, n, "spec.clusterRef.name: Required value");
	if (cron == NULL || cron[0] == '\0')
		return eo__fail(msg, n, "spec.schedule: Required value");
	if (eo_location_validate(eo_schedule_destination(s), "spec.destination", msg, n) != 0 ||
	    eo_location_validate_transport(eo_schedule_destination(s), msg, n) != 0)
		return -1;
	if (eo__json_int_at(s, "spec.startingDeadlineSeconds", &v) && v < MIN_DEADLINE_S)
		return eo__fail(msg, n, "spec.startingDeadlineSeconds: must be at least %d",
				MIN_DEADLINE_S);
	if (eo__json_int_at(s, "spec.retention.keepLast", &v) &&
	    (v < 1 || v > EO_SCHEDULE_KEEP_LAST_MAX))
		return eo__fail(msg, n, "spec.retention.keepLast: must be between 1 and %d",
				EO_SCHEDULE_KEEP_LAST_MAX);
	if (eo__json_int_at(s, "spec.retention.keepFailed", &v) &&
	    (v < 0 || v > EO_MSG_RETENTION_KEEP_FAILED_MAX))
		return eo__fail(msg, n, "spec.retention.keepFailed: must be between 0 and %d",
				EO_MSG_RETENTION_KEEP_FAILED_MAX);
	if (eo_schedule_retention(s, &r) != 0)
		return eo__fail(msg, n,
				"spec.retention.maxAge: must be a duration of at least 1s such as "
				"\"168h\" or \"90m\"");
	return 0;
}

int eo_name_scheduled_snapshot(char *buf, size_t n, const char *schedule, time_t t)
{
	struct tm tm;
	int len;

	if (buf == NULL || n == 0)
		return -1;
	buf[0] = '\0';
	if (schedule == NULL || schedule[0] == '\0' || strlen(schedule) > EO_SCHEDULE_NAME_MAX ||
	    gmtime_r(&t, &tm) == NULL || tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 0)
		return -1;
	len = snprintf(buf, n, "%s-%04d%02d%02d%02d%02d", schedule, tm.tm_year + 1900,
		       tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min);
	if (len < 0 || (size_t)len >= n) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}
