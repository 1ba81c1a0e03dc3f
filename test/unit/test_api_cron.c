/*
 * Unit tests for api/cron.c: parsing (valid and invalid syntax, one table row each), next
 * and previous run (month ends, leap years, step values, ranges, lists, names, the
 * day-of-month / day-of-week OR rule, macros), all in UTC.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/timeutil.h"
#include "api/cron.h"

static time_t at(const char *s)
{
	time_t t;

	if (eo_time_parse(s, &t) != 0)
		fail_msg("bad time in the table: %s", s);
	return t;
}

static const char *fmt(time_t t, char *buf)
{
	eo_time_format(t, buf, EO_TIME_BUF);
	return buf;
}

/* ---- parse errors --------------------------------------------------------------- */

static const struct {
	const char *expr;
	const char *want; /* a substring of the message */
} bad[] = {
    {"", "empty"},
    {"* * * *", "this one has 4"},
    {"* * * * * *", "more than 5"},
    {"60 * * * *", "field 1 (minute): '60' is out of range 0-59"},
    {"* 24 * * *", "field 2 (hour)"},
    {"* * 0 * *", "field 3 (day-of-month): '0' is out of range 1-31"},
    {"* * 32 * *", "out of range 1-31"},
    {"* * * 13 *", "field 4 (month)"},
    {"* * * * 8", "field 5 (day-of-week)"},
    {"5-1 * * * *", "runs backwards"},
    {"*/0 * * * *", "bad step"},
    {"*/61 * * * *", "bad step"},
    {"1- * * * *", "range without an end"},
    {"1,,2 * * * *", "not a value"},
    {"1, * * * *", "ends with a comma"},
    {"? * * * *", "not a value"},
    {"* * L * *", "not a value"},
    {"* * * * 1#2", "unexpected '#'"},
    {"* * * foo *", "not a value"},
    {"*/x * * * *", "bad step"},
    {"@every 5m", "'@every' is not supported"},
    {"@reboot", "'@reboot' is not supported"},
    {"@daily extra", "'@daily' is not supported"},
    {"CRON_TZ=Europe/Paris 0 * * * *", "time zones are not supported"},
    {"TZ=UTC 0 * * * *", "time zones are not supported"},
};

static void test_parse_invalid(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct eo_cron c;
		char err[256] = "";

		if (eo_cron_parse(bad[i].expr, &c, err, sizeof(err)) == 0)
			fail_msg("'%s' parsed", bad[i].expr);
		if (strstr(err, bad[i].want) == NULL)
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].expr, err, bad[i].want);
	}
}

static void test_parse_too_long(void **state)
{
	char expr[EO_CRON_EXPR_MAX + 2], err[256];
	struct eo_cron c;

	(void)state;
	memset(expr, '1', sizeof(expr) - 1);
	expr[sizeof(expr) - 1] = '\0';
	assert_int_equal(eo_cron_parse(expr, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "longer than"));
	assert_int_equal(eo_cron_parse(NULL, &c, err, sizeof(err)), -1);
}

/* ---- parsed bit sets ----------------------------------------------------------- */

static const struct {
	const char *expr;
	uint64_t minute;
	uint32_t hour, dom;
	uint16_t month;
	uint8_t dow;
	bool dom_star, dow_star;
} sets[] = {
    {"* * * * *", 0x0FFFFFFFFFFFFFFFull, 0xFFFFFF, 0xFFFFFFFE, 0x1FFE, 0x7F, true, true},
    {"0 0 1 1 *", 1, 1, 2, 2, 0x7F, false, true},
    {"*/15 * * * *", (1ull << 0) | (1ull << 15) | (1ull << 30) | (1ull << 45), 0xFFFFFF, 0xFFFFFFFE,
     0x1FFE, 0x7F, true, true},
    {"10-50/20 * * * *", (1ull << 10) | (1ull << 30) | (1ull << 50), 0xFFFFFF, 0xFFFFFFFE, 0x1FFE,
     0x7F, true, true},
    {"50/5 * * * *", (1ull << 50) | (1ull << 55), 0xFFFFFF, 0xFFFFFFFE, 0x1FFE, 0x7F, true, true},
    {"1,2,3 1-3 * * *", 0xE, 0xE, 0xFFFFFFFE, 0x1FFE, 0x7F, true, true},
    {"0 0 * jan,DEC sun", 1, 1, 0xFFFFFFFE, (1u << 1) | (1u << 12), 1, true, false},
    {"0 0 * * 7", 1, 1, 0xFFFFFFFE, 0x1FFE, 1, true, false},
    {"0 0 * * mon-fri", 1, 1, 0xFFFFFFFE, 0x1FFE, 0x3E, true, false},
    {"0 0 * * */2", 1, 1, 0xFFFFFFFE, 0x1FFE, 0x55, true, true},
    {"0 0 */10 * *", 1, 1, (1u << 1) | (1u << 11) | (1u << 21) | (1u << 31), 0x1FFE, 0x7F, true,
     true},
    {"0 12 15 * 1", 1, 1u << 12, 1u << 15, 0x1FFE, 2, false, false},
    {"@hourly", 1, 0xFFFFFF, 0xFFFFFFFE, 0x1FFE, 0x7F, true, true},
    {"@weekly", 1, 1, 0xFFFFFFFE, 0x1FFE, 1, true, false},
    {"  @Daily  ", 1, 1, 0xFFFFFFFE, 0x1FFE, 0x7F, true, true},
    {"\t0\t0 1 * *\n", 1, 1, 2, 0x1FFE, 0x7F, false, true},
};

static void test_parse_sets(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		struct eo_cron c;
		char err[256] = "";

		if (eo_cron_parse(sets[i].expr, &c, err, sizeof(err)) != 0)
			fail_msg("'%s': %s", sets[i].expr, err);
		if (c.minute != sets[i].minute || c.hour != sets[i].hour || c.dom != sets[i].dom ||
		    c.month != sets[i].month || c.dow != sets[i].dow ||
		    c.dom_star != sets[i].dom_star || c.dow_star != sets[i].dow_star)
			fail_msg("'%s': minute %llx hour %x dom %x month %x dow %x stars %d %d",
				 sets[i].expr, (unsigned long long)c.minute, c.hour, c.dom, c.month,
				 c.dow, c.dom_star, c.dow_star);
	}
}

/* ---- next run ------------------------------------------------------------------- */

static const struct {
	const char *expr, *after, *want; /* want NULL: never */
} nexts[] = {
    /* strictly after, seconds dropped */
    {"* * * * *", "2026-06-02T10:00:00Z", "2026-06-02T10:01:00Z"},
    {"* * * * *", "2026-06-02T10:00:59Z", "2026-06-02T10:01:00Z"},
    {"*/5 * * * *", "2026-06-02T10:03:10Z", "2026-06-02T10:05:00Z"},
    {"*/5 * * * *", "2026-06-02T10:55:00Z", "2026-06-02T11:00:00Z"},
    {"30 2 * * *", "2026-06-02T02:30:00Z", "2026-06-03T02:30:00Z"},
    /* day, month and year roll-overs */
    {"0 0 * * *", "2026-12-31T23:59:00Z", "2027-01-01T00:00:00Z"},
    {"0 0 1 * *", "2026-01-31T12:00:00Z", "2026-02-01T00:00:00Z"},
    /* month ends: the 31st skips short months, the 30th skips February */
    {"0 0 31 * *", "2026-01-31T00:00:00Z", "2026-03-31T00:00:00Z"},
    {"0 0 31 * *", "2026-04-01T00:00:00Z", "2026-05-31T00:00:00Z"},
    {"0 0 30 * *", "2026-01-30T00:00:00Z", "2026-03-30T00:00:00Z"},
    /* leap years: Feb 29 only in 2028, then 2032 */
    {"0 0 29 2 *", "2026-03-01T00:00:00Z", "2028-02-29T00:00:00Z"},
    {"0 0 29 2 *", "2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"},
    {"0 0 30 2 *", "2026-01-01T00:00:00Z", NULL},
    {"0 0 31 4,6,9,11 *", "2026-01-01T00:00:00Z", NULL},
    /* ranges, lists, steps, names */
    {"0 9-17/4 * * *", "2026-06-02T10:00:00Z", "2026-06-02T13:00:00Z"},
    {"0 9-17/4 * * *", "2026-06-02T17:00:00Z", "2026-06-03T09:00:00Z"},
    {"15,45 * * * *", "2026-06-02T10:15:00Z", "2026-06-02T10:45:00Z"},
    {"0 0 * mar *", "2026-06-02T00:00:00Z", "2027-03-01T00:00:00Z"},
    /* 2026-06-02 is a Tuesday */
    {"0 0 * * sat", "2026-06-02T00:00:00Z", "2026-06-06T00:00:00Z"},
    {"0 0 * * 7", "2026-06-02T00:00:00Z", "2026-06-07T00:00:00Z"},
    {"0 0 * * mon-fri", "2026-06-05T00:00:00Z", "2026-06-08T00:00:00Z"},
    /* both day fields restricted: either matches (the 15th, or a Monday) */
    {"0 0 15 * 1", "2026-06-02T00:00:00Z", "2026-06-08T00:00:00Z"},
    {"0 0 15 * 1", "2026-06-08T00:00:00Z", "2026-06-15T00:00:00Z"},
    /* day-of-week starting with '*' keeps AND: only the 1st, and only if it is a... any */
    {"0 0 1 * */1", "2026-06-02T00:00:00Z", "2026-07-01T00:00:00Z"},
    /* 13th that is a Friday needs both: not expressible; OR of 13 and Friday */
    {"0 0 13 * fri", "2026-06-02T00:00:00Z", "2026-06-05T00:00:00Z"},
    /* macros */
    {"@yearly", "2026-06-02T00:00:00Z", "2027-01-01T00:00:00Z"},
    {"@monthly", "2026-06-02T00:00:00Z", "2026-07-01T00:00:00Z"},
    {"@weekly", "2026-06-02T00:00:00Z", "2026-06-07T00:00:00Z"},
    {"@hourly", "2026-06-02T00:30:00Z", "2026-06-02T01:00:00Z"},
};

static void test_next(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(nexts) / sizeof(nexts[0]); i++) {
		struct eo_cron c;
		char err[256], b[EO_TIME_BUF];
		time_t got = 0;
		int rc;

		assert_int_equal(eo_cron_parse(nexts[i].expr, &c, err, sizeof(err)), 0);
		rc = eo_cron_next(&c, at(nexts[i].after), &got);
		if (nexts[i].want == NULL) {
			if (rc == 0)
				fail_msg("'%s' after %s: got %s, want never", nexts[i].expr,
					 nexts[i].after, fmt(got, b));
			continue;
		}
		if (rc != 0 || got != at(nexts[i].want))
			fail_msg("'%s' after %s: got %s (rc %d), want %s", nexts[i].expr,
				 nexts[i].after, rc == 0 ? fmt(got, b) : "-", rc, nexts[i].want);
		assert_true(eo_cron_matches(&c, got));
		assert_false(eo_cron_matches(&c, got - 60) && got - 60 > at(nexts[i].after));
	}
}

/* ---- previous run ----------------------------------------------------------------- */

static const struct {
	const char *expr, *at, *want;
} prevs[] = {
    {"* * * * *", "2026-06-02T10:00:30Z", "2026-06-02T10:00:00Z"},
    {"* * * * *", "2026-06-02T10:00:00Z", "2026-06-02T10:00:00Z"},
    {"*/5 * * * *", "2026-06-02T10:04:59Z", "2026-06-02T10:00:00Z"},
    {"0 * * * *", "2026-06-02T10:59:00Z", "2026-06-02T10:00:00Z"},
    {"30 2 * * *", "2026-06-02T02:29:00Z", "2026-06-01T02:30:00Z"},
    {"0 0 1 * *", "2026-03-01T00:00:00Z", "2026-03-01T00:00:00Z"},
    {"0 0 31 * *", "2026-03-30T00:00:00Z", "2026-01-31T00:00:00Z"},
    {"0 0 29 2 *", "2031-01-01T00:00:00Z", "2028-02-29T00:00:00Z"},
    {"* * 1 * *", "2026-06-02T00:00:00Z", "2026-06-01T23:59:00Z"},
    {"@yearly", "2026-06-02T00:00:00Z", "2026-01-01T00:00:00Z"},
};

static void test_prev(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(prevs) / sizeof(prevs[0]); i++) {
		struct eo_cron c;
		char err[256], b[EO_TIME_BUF];
		time_t got = 0;

		assert_int_equal(eo_cron_parse(prevs[i].expr, &c, err, sizeof(err)), 0);
		if (eo_cron_prev(&c, at(prevs[i].at), &got) != 0 || got != at(prevs[i].want))
			fail_msg("'%s' at %s: got %s, want %s", prevs[i].expr, prevs[i].at,
				 fmt(got, b), prevs[i].want);
	}
}

static void test_prev_never(void **state)
{
	struct eo_cron c;
	char err[256];
	time_t got;

	(void)state;
	assert_int_equal(eo_cron_parse("0 0 30 2 *", &c, err, sizeof(err)), 0);
	assert_int_equal(eo_cron_prev(&c, at("2026-06-02T00:00:00Z"), &got), -1);
}

/*
 * The shortest gap between firings (what a schedule's minimum interval is checked against),
 * and, for each, the same found by walking the firings of a year from 2026-01-01.
 */
static void test_min_interval(void **state)
{
	static const struct {
		const char *expr;
		int64_t want;
	} cases[] = {
	    {"* * * * *", 60},		 {"*/5 * * * *", 300},	   {"*/4 * * * *", 240},
	    {"*/7 * * * *", 240},				   /* :56 to :00 of the next hour */
	    {"0,58 * * * *", 120},	 {"0,57 0,23 * * *", 180}, /* 23:57 to 00:00 the next day */
	    {"0,57 0,23 1 * *", 3420},	 /* the 1st alone: no next day; 00:00 to 00:57 */
	    {"0,57 0,23 1,2 * *", 180},	 /* the 1st and the 2nd */
	    {"0,57 0,23 * * 1,3", 3420}, /* Monday and Wednesday are never consecutive */
	    {"0,57 0,23 * * 1,2", 180},	 {"0 * * * *", 3600},	   {"@hourly", 3600},
	    {"@daily", 86400},		 {"@weekly", 86400}, /* capped at a day */
	    {"0 0,12 * * *", 43200},	 {"30 23 * * *", 86400},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct eo_cron c;
		char err[256];
		time_t t = at("2026-01-01T00:00:00Z"), end = t + 366 * 86400, n;
		int64_t got, walked = EO_CRON_DAY_S;

		assert_int_equal(eo_cron_parse(cases[i].expr, &c, err, sizeof(err)), 0);
		got = eo_cron_min_interval_s(&c);
		if (got != cases[i].want)
			fail_msg("'%s': %lld s, want %lld", cases[i].expr, (long long)got,
				 (long long)cases[i].want);
		if (cases[i].want < 600)
			end = t + 8 * 86400; /* frequent: a week shows it */
		assert_int_equal(eo_cron_next(&c, t - 60, &t), 0);
		while (eo_cron_next(&c, t, &n) == 0 && n < end) {
			if (n - t < walked)
				walked = n - t;
			t = n;
		}
		if (walked != got)
			fail_msg("'%s': walked %lld s, computed %lld", cases[i].expr,
				 (long long)walked, (long long)got);
	}
}

TU_MAIN(test_parse_invalid, test_parse_too_long, test_parse_sets, test_next, test_prev,
	test_prev_never, test_min_interval)
