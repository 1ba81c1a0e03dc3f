/*
 * api/cron.h - standard 5-field cron schedules (pure), evaluated in UTC.
 *
 *   minute hour day-of-month month day-of-week
 *
 * Each field is a comma-separated list of items: "*", "N", "N-M", and any of those with a
 * step "/S" ("*\/15", "10-50/20"; "N/S" means N to the field's maximum by S). Months
 * also take jan..dec, days of the week sun..sat (case-insensitive); day-of-week 7 is
 * Sunday like 0. Ranges do not wrap (5-1 is an error). The macros @yearly (@annually),
 * @monthly, @weekly, @daily (@midnight) and @hourly stand for their usual 5 fields.
 *
 * Day matching follows Vixie cron: when both day-of-month and day-of-week are restricted
 * (neither field starts with '*'), a day matches when EITHER matches; otherwise both must.
 *
 * Not supported, refused with a message: @every, @reboot, seconds or year fields, "?",
 * "L", "W", "#", and CRON_TZ=/TZ= prefixes (schedules are evaluated in UTC).
 */
#ifndef EO_API_CRON_H
#define EO_API_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define EO_CRON_EXPR_MAX 256 /* longest accepted expression */
/* A schedule that does not fire within this many years never fires (Feb 30). */
#define EO_CRON_HORIZON_YEARS 9

struct eo_cron {
	uint64_t minute; /* bit i: minute i (0-59) */
	uint32_t hour;	 /* bit i: hour i (0-23) */
	uint32_t dom;	 /* bit i: day i (1-31) */
	uint16_t month;	 /* bit i: month i (1-12) */
	uint8_t dow;	 /* bit i: weekday i (0 Sunday - 6) */
	bool dom_star;	 /* the day-of-month field starts with '*' */
	bool dow_star;
};

/* Parses expr. 0, or -1 with a message naming the field and the problem in err. */
int eo_cron_parse(const char *expr, struct eo_cron *out, char *err, size_t errcap);

/* Does the whole minute containing t match? */
bool eo_cron_matches(const struct eo_cron *c, time_t t);

/*
 * The first matching minute strictly after `after` (seconds dropped). 0, or -1 when none
 * within EO_CRON_HORIZON_YEARS (a schedule such as "0 0 30 2 *").
 */
int eo_cron_next(const struct eo_cron *c, time_t after, time_t *out);

/* The latest matching minute at or before t. 0, or -1 when none within the horizon. */
int eo_cron_prev(const struct eo_cron *c, time_t t, time_t *out);

/*
 * The shortest time between two consecutive firings, in seconds, capped at one day
 * (EO_CRON_DAY_S): exact below that. Within a day it is the smallest gap between the day's
 * matching minutes; across midnight (the day's last minute to the next day's first) it
 * counts only when two consecutive days both match somewhere in a 28-year window (the
 * calendar's weekday cycle). A schedule that matches no day gives EO_CRON_DAY_S.
 */
#define EO_CRON_DAY_S 86400
int64_t eo_cron_min_interval_s(const struct eo_cron *c);

#endif
