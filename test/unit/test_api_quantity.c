/*
 * Unit tests for api/quantity and api/timeutil: quantity parsing (suffixes,
 * exponents, fractions, rounding, limits, malformed input), comparisons,
 * RFC 3339 timestamps and durations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/quantity.h"
#include "api/timeutil.h"

struct qcase {
	const char *in;
	int rc;
	int64_t units;
	int32_t nanos;
};

static const struct qcase qcases[] = {
    {"0", 0, 0, 0},
    {"1", 0, 1, 0},
    {"1Gi", 0, 1073741824LL, 0},
    {"10Gi", 0, 10737418240LL, 0},
    {"128Mi", 0, 134217728LL, 0},
    {"1Ki", 0, 1024, 0},
    {"1Ti", 0, 1099511627776LL, 0},
    {"1Pi", 0, 1125899906842624LL, 0},
    {"7Ei", 0, 8070450532247928832LL, 0},
    {"100m", 0, 0, 100000000},
    {"1500m", 0, 1, 500000000},
    {"1.5", 0, 1, 500000000},
    {"1.5Gi", 0, 1610612736LL, 0},
    {"0.5Gi", 0, 536870912LL, 0},
    {".5", 0, 0, 500000000},
    {"5.", 0, 5, 0},
    {"+5", 0, 5, 0},
    {"1k", 0, 1000, 0},
    {"1M", 0, 1000000, 0},
    {"1G", 0, 1000000000LL, 0},
    {"1T", 0, 1000000000000LL, 0},
    {"1P", 0, 1000000000000000LL, 0},
    {"1E", 0, 1000000000000000000LL, 0},
    {"1e3", 0, 1000, 0},
    {"1E3", 0, 1000, 0},
    {"1e+3", 0, 1000, 0},
    {"1e-3", 0, 0, 1000000},
    {"2.5e2", 0, 250, 0},
    {"1n", 0, 0, 1},
    {"1u", 0, 0, 1000},
    {"0.1n", 0, 0, 1},	       /* rounded up to a whole nano */
    {"1.0000000001", 0, 1, 1}, /* rounded up */
    {"-1", 0, -1, 0},
    {"-1.5", 0, -2, 500000000},
    {"-100m", 0, -1, 900000000},
    {"-1Gi", 0, -1073741824LL, 0},
    {"-0.1n", 0, 0, 0}, /* rounded towards +infinity */
    {"000001Gi", 0, 1073741824LL, 0},
    {"1000000000000000000000m", 0, 1000000000000000000LL, 0}, /* trailing zeros are free */
    {"9223372036854775807", 0, INT64_MAX, 0},
    {"1e-40", 0, 0, 1},
    {"8Ei", -ERANGE, 0, 0},
    {"9223372036854775808", -ERANGE, 0, 0},
    {"1e100", -ERANGE, 0, 0},
    {"12345678901234567891", -ERANGE, 0, 0}, /* 20 significant digits */
    {"1e99999", -EINVAL, 0, 0},		     /* exponent out of range */
    {"", -EINVAL, 0, 0},
    {"Gi", -EINVAL, 0, 0},
    {".", -EINVAL, 0, 0},
    {"-", -EINVAL, 0, 0},
    {"1.2.3", -EINVAL, 0, 0},
    {"1gi", -EINVAL, 0, 0},
    {"1KB", -EINVAL, 0, 0},
    {"1 Gi", -EINVAL, 0, 0},
    {" 1Gi", -EINVAL, 0, 0},
    {"1Gi ", -EINVAL, 0, 0},
    {"1e", -EINVAL, 0, 0},
    {"1e+", -EINVAL, 0, 0},
    {"1e1.5", -EINVAL, 0, 0},
    {"lots", -EINVAL, 0, 0},
    {"0x10", -EINVAL, 0, 0},
};

static void test_quantity_parse_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(qcases) / sizeof(qcases[0]); i++) {
		const struct qcase *c = &qcases[i];
		struct eo_quantity q = {.units = 42, .nanos = 42};
		int rc = eo_quantity_parse(c->in, &q);

		if (rc != c->rc || (rc == 0 && (q.units != c->units || q.nanos != c->nanos)))
			fail_msg(
			    "\"%s\": rc %d units %lld nanos %d, want rc %d units %lld nanos %d",
			    c->in, rc, (long long)q.units, q.nanos, c->rc, (long long)c->units,
			    c->nanos);
		if (rc != 0 && (q.units != 42 || q.nanos != 42))
			fail_msg("\"%s\": output written on failure", c->in);
	}
}

static void test_quantity_null(void **state)
{
	struct eo_quantity q;

	(void)state;
	assert_int_equal(eo_quantity_parse(NULL, &q), -EINVAL);
	assert_int_equal(eo_quantity_parse("1", NULL), -EINVAL);
}

struct cmp_case {
	const char *a;
	const char *b;
	int want;
};

static const struct cmp_case cmp_cases[] = {
    {"1Gi", "1073741824", 0}, {"1Gi", "1024Mi", 0}, {"2Gi", "2048Mi", 0},
    {"1G", "1Gi", -1},	      {"512Mi", "1Gi", -1}, {"1Gi", "512Mi", 1},
    {"100m", "0.1", 0},	      {"1", "1001m", -1},   {"-1", "0", -1},
    {"0", "0m", 0},	      {"1e3", "1k", 0},	    {"1.5", "1500m", 0},
    {"-1.5", "-1", -1},	      {"1n", "0", 1},	    {"7Ei", "8070450532247928832", 0},
};

static void test_quantity_cmp_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cmp_cases) / sizeof(cmp_cases[0]); i++) {
		struct eo_quantity a, b;

		assert_int_equal(eo_quantity_parse(cmp_cases[i].a, &a), 0);
		assert_int_equal(eo_quantity_parse(cmp_cases[i].b, &b), 0);
		if (eo_quantity_cmp(&a, &b) != cmp_cases[i].want ||
		    eo_quantity_cmp(&b, &a) != -cmp_cases[i].want)
			fail_msg("cmp(%s, %s) != %d", cmp_cases[i].a, cmp_cases[i].b,
				 cmp_cases[i].want);
	}
}

static void test_quantity_values(void **state)
{
	struct {
		const char *in;
		int sign;
		int64_t value;
		int64_t milli;
	} cases[] = {
	    {"0", 0, 0, 0},
	    {"100m", 1, 1, 100},
	    {"1.5", 1, 2, 1500},
	    {"1Gi", 1, 1073741824LL, 1073741824000LL},
	    {"1n", 1, 1, 1},
	    {"-1.5", -1, -1, -1500},
	    {"7Ei", 1, 8070450532247928832LL, INT64_MAX}, /* milli saturates */
	    {"-7Ei", -1, -8070450532247928832LL, INT64_MIN},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct eo_quantity q;

		assert_int_equal(eo_quantity_parse(cases[i].in, &q), 0);
		if (eo_quantity_sign(&q) != cases[i].sign ||
		    eo_quantity_value(&q) != cases[i].value ||
		    eo_quantity_milli_value(&q) != cases[i].milli)
			fail_msg("%s: sign %d value %lld milli %lld", cases[i].in,
				 eo_quantity_sign(&q), (long long)eo_quantity_value(&q),
				 (long long)eo_quantity_milli_value(&q));
	}
}

static void test_quantity_json(void **state)
{
	struct eo_quantity q;
	json_t *v = json_integer(5);

	(void)state;
	assert_int_equal(eo_quantity_from_json(v, &q), 0);
	assert_true(q.units == 5 && q.nanos == 0);
	json_decref(v);
	v = json_string("256Mi");
	assert_int_equal(eo_quantity_from_json(v, &q), 0);
	assert_true(q.units == 268435456LL);
	json_decref(v);
	v = json_true();
	assert_int_equal(eo_quantity_from_json(v, &q), -EINVAL);
	json_decref(v);
	assert_int_equal(eo_quantity_from_json(NULL, &q), -EINVAL);
}

static void test_time_format_parse(void **state)
{
	char buf[EO_TIME_BUF];
	time_t t = 0;

	(void)state;
	assert_int_equal(eo_time_format(0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1970-01-01T00:00:00Z");
	assert_int_equal(eo_time_format(1780394400, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "2026-06-02T10:00:00Z");
	assert_int_equal(eo_time_format(0, buf, 5), -1);
	assert_string_equal(buf, "");

	struct {
		const char *in;
		int rc;
		time_t want;
	} cases[] = {
	    {"2026-06-02T10:00:00Z", 0, 1780394400},
	    {"2026-06-02t10:00:00z", 0, 1780394400},
	    {"2026-06-02T10:00:00.123456Z", 0, 1780394400},
	    {"2026-06-02T12:00:00+02:00", 0, 1780394400},
	    {"2026-06-02T05:30:00-04:30", 0, 1780394400},
	    {"1970-01-01T00:00:00Z", 0, 0},
	    {"2024-02-29T00:00:00Z", 0, 1709164800},
	    {"2026-02-29T00:00:00Z", -EINVAL, 0},
	    {"2026-06-02 10:00:00Z", -EINVAL, 0},
	    {"2026-06-02T10:00:00", -EINVAL, 0},
	    {"2026-06-02T10:00Z", -EINVAL, 0},
	    {"2026-13-02T10:00:00Z", -EINVAL, 0},
	    {"2026-06-02T24:00:00Z", -EINVAL, 0},
	    {"2026-06-02T10:00:00.Z", -EINVAL, 0},
	    {"2026-06-02T10:00:00Zjunk", -EINVAL, 0},
	    {"2026-06-02T10:00:00+2:00", -EINVAL, 0},
	    {"", -EINVAL, 0},
	    /* fractions as Kubernetes writes them (MicroTime: 6 digits), dropped */
	    {"2026-06-02T10:00:00.000000Z", 0, 1780394400},
	    {"2026-06-02T10:00:00.999999999Z", 0, 1780394400},
	    {"2026-06-02T12:00:00.5+02:00", 0, 1780394400},
	    {"2026-06-02T10:00:00.1.2Z", -EINVAL, 0},
	    {"2026-06-02T10:00:00,5Z", -EINVAL, 0},
	    /* offsets */
	    {"2026-06-02T10:00:00+00:00", 0, 1780394400},
	    {"2026-06-02T10:00:00-00:00", 0, 1780394400},
	    {"2026-06-02T00:00:00-23:59", 0, 1780358400 + 86340},
	    {"2026-06-02T10:00:00+24:00", -EINVAL, 0},
	    {"2026-06-02T10:00:00+02:60", -EINVAL, 0},
	    {"2026-06-02T10:00:00+0200", -EINVAL, 0},
	    {"2026-06-02T10:00:00+02", -EINVAL, 0},
	    {"2026-06-02T10:00:00+02:00junk", -EINVAL, 0},
	    {"2026-06-02T10:00:00 +02:00", -EINVAL, 0},
	    /* leap seconds: :60 is the second after :59, even at a year's end */
	    {"2026-06-02T09:59:60Z", 0, 1780394400},
	    {"2016-12-31T23:59:60Z", 0, 1483228800},
	    {"2017-01-01T00:59:60+01:00", 0, 1483228800},
	    {"2026-06-02T10:00:61Z", -EINVAL, 0},
	    /* fields of the wrong width or with blanks, which strptime alone takes */
	    {"2026-6-02T10:00:00Z", -EINVAL, 0},
	    {"2026-06-2T10:00:00Z", -EINVAL, 0},
	    {"2026-06-02T1:00:00Z", -EINVAL, 0},
	    {" 2026-06-02T10:00:00Z", -EINVAL, 0},
	    {"2026-06- 2T10:00:00Z", -EINVAL, 0},
	    {"02026-06-02T10:00:00Z", -EINVAL, 0},
	    {"+2026-06-02T10:00:00Z", -EINVAL, 0},
	    /* calendar */
	    {"2026-00-02T10:00:00Z", -EINVAL, 0},
	    {"2026-06-00T10:00:00Z", -EINVAL, 0},
	    {"2026-04-31T10:00:00Z", -EINVAL, 0},
	    {"2000-02-29T00:00:00Z", 0, 951782400},
	    {"1900-02-29T00:00:00Z", -EINVAL, 0},
	    {"2026-06-02T10:60:00Z", -EINVAL, 0},
	    {"1969-12-31T23:59:59Z", 0, -1},
	    {"9999-12-31T23:59:59Z", 0, 253402300799},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = eo_time_parse(cases[i].in, &t);

		if (rc != cases[i].rc || (rc == 0 && t != cases[i].want))
			fail_msg("%s: rc %d t %lld", cases[i].in, rc, (long long)t);
	}
	assert_int_equal(eo_time_parse(NULL, &t), -EINVAL);
	/* Round trip. */
	assert_int_equal(eo_time_format(1999999999, buf, sizeof(buf)), 0);
	assert_int_equal(eo_time_parse(buf, &t), 0);
	assert_int_equal(t, 1999999999);
	/* Years before 1000 keep four digits (found by test/fuzz/fuzz_quantity_time). */
	assert_int_equal(eo_time_parse("0622-06-02T10:00:00Z", &t), 0);
	assert_int_equal(eo_time_format(t, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0622-06-02T10:00:00Z");
	/* Years RFC 3339 cannot write are refused. */
	assert_int_equal(eo_time_parse("0000-01-01T00:00:00+01:00", &t), 0);
	assert_int_equal(eo_time_format(t, buf, sizeof(buf)), -1);
	assert_string_equal(buf, "");
	assert_int_equal(eo_time_parse("9999-12-31T23:59:59-01:00", &t), 0);
	assert_int_equal(eo_time_format(t, buf, sizeof(buf)), -1);
}

static void test_duration(void **state)
{
	struct {
		const char *in;
		int rc;
		int64_t ms;
	} cases[] = {
	    {"1h", 0, 3600000},
	    {"30m", 0, 1800000},
	    {"1h30m", 0, 5400000},
	    {"1.5h", 0, 5400000},
	    {"500ms", 0, 500},
	    {"1m30s500ms", 0, 90500},
	    {"0s", 0, 0},
	    {"0.5s", 0, 500},
	    {"1.0001s", 0, 1000},
	    {"5", -EINVAL, 0},
	    {"", -EINVAL, 0},
	    {"1d", -EINVAL, 0},
	    {"h", -EINVAL, 0},
	    {"1.h", -EINVAL, 0},
	    {"-1h", -EINVAL, 0},
	    {"1h ", -EINVAL, 0},
	    {"99999999999999999999h", -ERANGE, 0},
	    {"2562047788015h", 0, 2562047788015LL * 3600000LL},
	    {"2562047788016h", -ERANGE, 0}, /* more than INT64_MAX ms */
	    /* The whole part fits, the fraction carries it past INT64_MAX ms. */
	    {"2562047788015.9h", -ERANGE, 0},
	    {"2562047788015.0001h", 0, 2562047788015LL * 3600000LL + 360},
	    {"2562047788015h2562047788015h", -ERANGE, 0},
	};
	int64_t ms = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = eo_duration_parse_ms(cases[i].in, &ms);

		if (rc != cases[i].rc || (rc == 0 && ms != cases[i].ms))
			fail_msg("%s: rc %d ms %lld", cases[i].in, rc, (long long)ms);
	}
}

static void test_retention(void **state)
{
	const char *ok[] = {"0", "1", "24", "1h", "30m", "1h30m", "1.5h", "500ms", "10s5ms"};
	const char *bad[] = {"", "1d", "h", "1.h", "-1", "1 h", "1h-", ".5h", "1,5h", "1e3"};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!eo_retention_valid(ok[i]))
			fail_msg("\"%s\" should be valid", ok[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (eo_retention_valid(bad[i]))
			fail_msg("\"%s\" should be invalid", bad[i]);
	assert_false(eo_retention_valid(NULL));
}

TU_MAIN(test_quantity_parse_table, test_quantity_null, test_quantity_cmp_table,
	test_quantity_values, test_quantity_json, test_time_format_parse, test_duration,
	test_retention)
