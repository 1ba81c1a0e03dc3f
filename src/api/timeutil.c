#include "api/timeutil.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int eo_time_format(time_t t, char *buf, size_t n)
{
	struct tm tm;

	if (buf == NULL || n < EO_TIME_BUF || gmtime_r(&t, &tm) == NULL) {
		if (buf != NULL && n > 0)
			buf[0] = '\0';
		return -1;
	}
	/*
	 * Four-digit years only, zero-padded: strftime's %Y writes year 622 as "622", which is not
	 * RFC 3339 and which eo_time_parse (and the apiserver) then refuse.
	 */
	if (tm.tm_year < 0 - 1900 || tm.tm_year > 9999 - 1900) {
		buf[0] = '\0';
		return -1;
	}
	snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	return 0;
}

/* Read exactly width digits at *p into *out and advance. */
static bool digits(const char **p, int width, int *out)
{
	int v = 0;

	for (int i = 0; i < width; i++) {
		char c = (*p)[i];

		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += width;
	*out = v;
	return true;
}

static bool expect(const char **p, char c)
{
	if (**p != c)
		return false;
	(*p)++;
	return true;
}

int eo_time_parse(const char *s, time_t *out)
{
	struct tm tm;
	int year = 0, mon = 0, day = 0, hour = 0, min = 0, sec = 0;
	int off_h = 0, off_m = 0;
	long offset = 0;
	time_t t = 0;
	const char *p = s;

	if (s == NULL || out == NULL)
		return -EINVAL;
	if (!digits(&p, 4, &year) || !expect(&p, '-') || !digits(&p, 2, &mon) || !expect(&p, '-') ||
	    !digits(&p, 2, &day))
		return -EINVAL;
	if (*p != 'T' && *p != 't')
		return -EINVAL;
	p++;
	if (!digits(&p, 2, &hour) || !expect(&p, ':') || !digits(&p, 2, &min) || !expect(&p, ':') ||
	    !digits(&p, 2, &sec))
		return -EINVAL;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1;

		p++;
		if (!digits(&p, 2, &off_h) || !expect(&p, ':') || !digits(&p, 2, &off_m))
			return -EINVAL;
		if (off_h > 23 || off_m > 59)
			return -EINVAL;
		offset = sign * (off_h * 3600L + off_m * 60L);
	} else {
		return -EINVAL;
	}
	if (*p != '\0')
		return -EINVAL;
	if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60)
		return -EINVAL;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = year - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = day;
	tm.tm_hour = hour;
	tm.tm_min = min;
	tm.tm_sec = sec;
	t = timegm(&tm);
	/* timegm normalises 31 February into March; reject such dates. */
	if (tm.tm_mday != day || tm.tm_mon != mon - 1)
		return -EINVAL;
	*out = t - offset;
	return 0;
}

/* Milliseconds per unit at *p; advances past the unit. 0 when no unit matches. */
static int64_t unit_ms(const char **p)
{
	if (strncmp(*p, "ms", 2) == 0) {
		*p += 2;
		return 1;
	}
	switch (**p) {
	case 's':
		(*p)++;
		return 1000;
	case 'm':
		(*p)++;
		return 60 * 1000;
	case 'h':
		(*p)++;
		return 3600 * 1000;
	default:
		return 0;
	}
}

/*
 * Parse one "<digits>[.<digits>]<unit>" term. Sets *ms_out (NULL means just
 * check syntax). Returns 0, -EINVAL or -ERANGE.
 */
static int parse_term(const char **p, int64_t *ms_out)
{
	int64_t whole = 0;
	int64_t frac = 0;
	int64_t frac_div = 1;
	int64_t unit = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (whole > (INT64_MAX - 9) / 10)
			return -ERANGE;
		whole = whole * 10 + (*s - '0');
	}
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++) {
			/* Digits past 1e-12 cannot change a millisecond result. */
			if (frac_div < 1000000000000LL) {
				frac = frac * 10 + (*s - '0');
				frac_div *= 10;
			}
		}
	}
	unit = unit_ms(&s);
	if (unit == 0)
		return -EINVAL;
	if (whole > INT64_MAX / unit)
		return -ERANGE;
	{
		/* The whole part fits; the fraction (< one unit) may still carry it over. */
		__int128 total = (__int128)whole * unit + (__int128)frac * unit / frac_div;

		if (total > INT64_MAX)
			return -ERANGE;
		if (ms_out != NULL)
			*ms_out = (int64_t)total;
	}
	*p = s;
	return 0;
}

int eo_duration_parse_ms(const char *s, int64_t *ms)
{
	int64_t total = 0;
	const char *p = s;

	if (s == NULL || ms == NULL || *s == '\0')
		return -EINVAL;
	while (*p != '\0') {
		int64_t term = 0;
		int rc = parse_term(&p, &term);

		if (rc != 0)
			return rc;
		if (term > INT64_MAX - total)
			return -ERANGE;
		total += term;
	}
	*ms = total;
	return 0;
}

bool eo_retention_valid(const char *s)
{
	const char *p = s;

	if (s == NULL || *s == '\0')
		return false;
	/* A bare integer. */
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '\0')
		return true;
	/* Otherwise one or more duration terms (syntax only; no overflow limit). */
	p = s;
	while (*p != '\0') {
		const char *q = p;

		while (*q >= '0' && *q <= '9')
			q++;
		if (q == p)
			return false;
		if (*q == '.') {
			const char *f = ++q;

			while (*q >= '0' && *q <= '9')
				q++;
			if (q == f)
				return false;
		}
		if (unit_ms(&q) == 0)
			return false;
		p = q;
	}
	return true;
}
