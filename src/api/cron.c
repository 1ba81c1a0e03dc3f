/*
 * api/cron.c - 5-field cron schedules in UTC. See cron.h.
 */
#include "api/cron.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MINUTE 60
#define HOUR   3600L
#define DAY    86400L

struct field {
	const char *name;
	int min, max;
	const char *const *names; /* names[i] stands for min + i */
	size_t nnames;
};

static const char *const MONTHS[] = {"jan", "feb", "mar", "apr", "may", "jun",
				     "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const DAYS[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

static const struct field FIELDS[5] = {
    {"minute", 0, 59, NULL, 0},	  {"hour", 0, 23, NULL, 0},	  {"day-of-month", 1, 31, NULL, 0},
    {"month", 1, 12, MONTHS, 12}, {"day-of-week", 0, 7, DAYS, 7},
};

static const struct {
	const char *macro, *expr;
} MACROS[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},	  {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

/* A number or a name of the field at *p; advances *p. 0 or -1. */
static int value(const struct field *f, const char **p, int *out)
{
	const char *s = *p;

	if (isdigit((unsigned char)*s)) {
		long v = 0;

		while (isdigit((unsigned char)*s)) {
			v = v * 10 + (*s - '0');
			if (v > 1000)
				return -1;
			s++;
		}
		*out = (int)v;
		*p = s;
		return 0;
	}
	for (size_t i = 0; i < f->nnames; i++)
		if (strncasecmp(s, f->names[i], 3) == 0 && !isalpha((unsigned char)s[3])) {
			*out = f->min + (int)i;
			*p = s + 3;
			return 0;
		}
	return -1;
}

/* One field's text (NUL-terminated) into a bit set. 0 or -1 with err. */
static int parse_field(const struct field *f, int idx, const char *text, uint64_t *bits, char *err,
		       size_t errcap)
{
	const char *p = text;

	*bits = 0;
	for (;;) {
		int lo, hi, step = 1;
		bool star = false;

		if (*p == '*') {
			star = true;
			lo = f->min;
			hi = f->max == 7 ? 6 : f->max;
			p++;
		} else {
			if (value(f, &p, &lo) != 0) {
				snprintf(err, errcap, "field %d (%s): '%s' is not a value", idx + 1,
					 f->name, text);
				return -1;
			}
			hi = lo;
			if (*p == '-') {
				p++;
				if (value(f, &p, &hi) != 0) {
					snprintf(err, errcap,
						 "field %d (%s): '%s' has a range without an end",
						 idx + 1, f->name, text);
					return -1;
				}
			}
			if (lo < f->min || lo > f->max || hi < f->min || hi > f->max) {
				snprintf(err, errcap, "field %d (%s): '%s' is out of range %d-%d",
					 idx + 1, f->name, text, f->min, f->max);
				return -1;
			}
			if (hi < lo) {
				snprintf(err, errcap,
					 "field %d (%s): the range in '%s' runs backwards", idx + 1,
					 f->name, text);
				return -1;
			}
		}
		if (*p == '/') {
			int s;

			p++;
			if (!isdigit((unsigned char)*p) || value(f, &p, &s) != 0 || s < 1 ||
			    s > f->max) {
				snprintf(err, errcap, "field %d (%s): '%s' has a bad step (1-%d)",
					 idx + 1, f->name, text, f->max);
				return -1;
			}
			step = s;
			if (!star && hi == lo)
				hi = f->max == 7 ? 6 : f->max; /* "N/S": N to the maximum */
		}
		if (*p != ',' && *p != '\0') {
			snprintf(err, errcap, "field %d (%s): unexpected '%c' in '%s'", idx + 1,
				 f->name, *p, text);
			return -1;
		}
		for (int v = lo; v <= hi; v += step)
			*bits |= 1ull << (f->max == 7 && v == 7 ? 0 : v);
		if (*p == '\0')
			return 0;
		p++;
		if (*p == '\0') {
			snprintf(err, errcap, "field %d (%s): '%s' ends with a comma", idx + 1,
				 f->name, text);
			return -1;
		}
	}
}

int eo_cron_parse(const char *expr, struct eo_cron *out, char *err, size_t errcap)
{
	char buf[EO_CRON_EXPR_MAX + 1], *fields[6], *save = NULL, *tok;
	uint64_t bits[5];
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	if (expr == NULL || expr[0] == '\0') {
		snprintf(err, errcap, "the schedule is empty");
		return -1;
	}
	if (strlen(expr) > EO_CRON_EXPR_MAX) {
		snprintf(err, errcap, "the schedule is longer than %d characters",
			 EO_CRON_EXPR_MAX);
		return -1;
	}
	while (isspace((unsigned char)*expr))
		expr++;
	if (strncmp(expr, "TZ=", 3) == 0 || strncmp(expr, "CRON_TZ=", 8) == 0) {
		snprintf(err, errcap, "time zones are not supported: schedules run in UTC");
		return -1;
	}
	if (expr[0] == '@') {
		size_t len = strcspn(expr, " \t\r\n");

		for (size_t i = 0; i < sizeof(MACROS) / sizeof(MACROS[0]); i++)
			if (strlen(MACROS[i].macro) == len &&
			    strncasecmp(expr, MACROS[i].macro, len) == 0 &&
			    expr[len + strspn(expr + len, " \t\r\n")] == '\0')
				return eo_cron_parse(MACROS[i].expr, out, err, errcap);
		snprintf(err, errcap,
			 "'%.*s' is not supported: use 5 fields or one of @yearly, @annually, "
			 "@monthly, @weekly, @daily, @midnight, @hourly",
			 (int)(len > 32 ? 32 : len), expr);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", expr);
	for (tok = strtok_r(buf, " \t\r\n", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == 6)
			break;
		fields[n++] = tok;
	}
	if (n != 5) {
		snprintf(err, errcap,
			 "a schedule has 5 fields (minute hour day-of-month month day-of-week), "
			 "this one has %s%zu",
			 n == 6 ? "more than " : "", n == 6 ? (size_t)5 : n);
		return -1;
	}
	for (int i = 0; i < 5; i++)
		if (parse_field(&FIELDS[i], i, fields[i], &bits[i], err, errcap) != 0)
			return -1;
	out->minute = bits[0];
	out->hour = (uint32_t)bits[1];
	out->dom = (uint32_t)bits[2];
	out->month = (uint16_t)bits[3];
	out->dow = (uint8_t)bits[4];
	out->dom_star = fields[2][0] == '*';
	out->dow_star = fields[4][0] == '*';
	return 0;
}

static bool day_matches(const struct eo_cron *c, const struct tm *tm)
{
	bool dom = (c->dom >> tm->tm_mday) & 1u, dow = (c->dow >> tm->tm_wday) & 1u;

	if (c->dom_star || c->dow_star)
		return dom && dow;
	return dom || dow;
}

bool eo_cron_matches(const struct eo_cron *c, time_t t)
{
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL)
		return false;
	return ((c->month >> (tm.tm_mon + 1)) & 1u) && day_matches(c, &tm) &&
	       ((c->hour >> tm.tm_hour) & 1u) && ((c->minute >> tm.tm_min) & 1ull);
}

int eo_cron_next(const struct eo_cron *c, time_t after, time_t *out)
{
	time_t t = after - (((after % MINUTE) + MINUTE) % MINUTE) + MINUTE;
	time_t limit = after + (time_t)EO_CRON_HORIZON_YEARS * 366 * DAY;
	struct tm tm;

	while (t <= limit) {
		if (gmtime_r(&t, &tm) == NULL)
			return -1;
		if (!((c->month >> (tm.tm_mon + 1)) & 1u)) {
			tm.tm_mon++;
			tm.tm_mday = 1;
			tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
			t = timegm(&tm); /* normalises December + 1 */
			continue;
		}
		if (!day_matches(c, &tm)) {
			tm.tm_mday++;
			tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
			t = timegm(&tm);
			continue;
		}
		if (!((c->hour >> tm.tm_hour) & 1u)) {
			t += HOUR - (time_t)tm.tm_min * MINUTE;
			continue;
		}
		if (!((c->minute >> tm.tm_min) & 1ull)) {
			t += MINUTE;
			continue;
		}
		*out = t;
		return 0;
	}
	return -1;
}

/* Do two consecutive days both match, in 28 years from 2001-01-01 (weekdays repeat)? */
static bool consecutive_days_match(const struct eo_cron *c)
{
	time_t t = 978307200; /* 2001-01-01T00:00:00Z */
	bool prev = false;
	struct tm tm;

	for (int d = 0; d < 28 * 366; d++, t += DAY) {
		bool cur = gmtime_r(&t, &tm) != NULL && ((c->month >> (tm.tm_mon + 1)) & 1u) &&
			   day_matches(c, &tm);

		if (cur && prev)
			return true;
		prev = cur;
	}
	return false;
}

int64_t eo_cron_min_interval_s(const struct eo_cron *c)
{
	int first = -1, last = -1, gap = EO_CRON_DAY_S / MINUTE;

	for (int m = 0; m < 24 * 60; m++) {
		if (!((c->hour >> (m / 60)) & 1u) || !((c->minute >> (m % 60)) & 1ull))
			continue;
		if (last >= 0 && m - last < gap)
			gap = m - last;
		if (first < 0)
			first = m;
		last = m;
	}
	if (first >= 0 && 24 * 60 - last + first < gap && consecutive_days_match(c))
		gap = 24 * 60 - last + first;
	return (int64_t)gap * MINUTE;
}

int eo_cron_prev(const struct eo_cron *c, time_t t, time_t *out)
{
	/* Find one slot in a window that grows until it holds one, then walk forwards: the
	 * walk is short because the previous, smaller window held no slot. */
	static const time_t windows[] = {
	    MINUTE, HOUR, DAY, 32 * DAY, 367 * DAY, (time_t)EO_CRON_HORIZON_YEARS * 366 * DAY};
	time_t s, n;

	for (size_t i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		if (eo_cron_next(c, t - windows[i], &s) != 0 || s > t)
			continue;
		while (eo_cron_next(c, s, &n) == 0 && n <= t)
			s = n;
		*out = s;
		return 0;
	}
	return -1;
}
