#include "api/timeutil.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

/*
 * True when s starts with the shape of tmpl: 'd' a digit, 'T' either 'T' or
 * 't', anything else itself. strptime(3) alone would also take one-digit
 * fields and leading blanks, which RFC 3339 does not allow.
 */
static bool shaped(const char *s, const char *tmpl)
{
	for (; *tmpl; tmpl++, s++) {
		if (*tmpl == 'd'   ? (*s < '0' || *s > '9')
		    : *tmpl == 'T' ? (*s != 'T' && *s != 't')
				   : *s != *tmpl)
			return false;
	}
	return true;
}

/* strptime over exactly n bytes of s (a shaped prefix), all of them consumed. */
static bool scan(const char *s, size_t n, const char *fmt, struct tm *tm)
{
	char buf[24];
	const char *end;

	if (n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (n > 10 && buf[10] == 't')
		buf[10] = 'T';
	end = strptime(buf, fmt, tm);
	return end == buf + n;
}

int eo_time_parse(const char *s, time_t *out)
{
	struct tm tm, off;
	long offset = 0;
	int leap = 0, mday, mon;
	time_t t;
	const char *p;

	if (s == NULL || out == NULL || !shaped(s, "dddd-dd-ddTdd:dd:dd"))
		return -EINVAL;
	memset(&tm, 0, sizeof(tm));
	if (!scan(s, 19, "%Y-%m-%dT%H:%M:%S", &tm) || tm.tm_sec > 60)
		return -EINVAL;
	p = s + 19;
	if (*p == '.') { /* fractional seconds: at least one digit, dropped */
		size_t n = strspn(p + 1, "0123456789");

		if (n == 0)
			return -EINVAL;
		p += 1 + n;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if ((*p == '+' || *p == '-') && shaped(p + 1, "dd:dd")) {
		memset(&off, 0, sizeof(off));
		if (!scan(p + 1, 5, "%H:%M", &off))
			return -EINVAL;
		offset = (*p == '-' ? -1 : 1) * (off.tm_hour * 3600L + off.tm_min * 60L);
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p != '\0')
		return -EINVAL;
	/* A leap second (:60) is the instant after :59; POSIX time has no room
	 * for it. Computed from :59 so it never rolls the date over first. */
	if (tm.tm_sec == 60) {
		tm.tm_sec = 59;
		leap = 1;
	}
	mday = tm.tm_mday;
	mon = tm.tm_mon;
	tm.tm_isdst = 0;
	t = timegm(&tm);
	/* strptime takes 31 February; timegm would make it March: reject. */
	if (tm.tm_mday != mday || tm.tm_mon != mon)
		return -EINVAL;
	*out = t + leap - offset;
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
