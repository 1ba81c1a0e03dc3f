/*
 * Fuzz target: quantities (src/api/quantity.c) and times and durations (src/api/timeutil.c),
 * which read tenant-controlled spec strings (storage size, resources, autoCompactionRetention)
 * and status timestamps.
 *
 * Input: the text up to the first NUL is parsed by every parser; the text after it is a second
 * quantity to compare with.
 *
 * Invariants: a quantity has 0 <= nanos < 1e9 and reads the same from a JSON string; "+s"
 * equals s and "-s" is its negation within the one nano of rounding towards +infinity; cmp is
 * antisymmetric and agrees with sign and value; a parsed time formats to a string that parses
 * back to it, and a canonical "YYYY-MM-DDTHH:MM:SSZ" formats back to itself; a duration is
 * non-negative and always a valid retention, and eo_retention_valid agrees with the CRD's
 * pattern (POSIX regex).
 */
#include <errno.h>
#include <jansson.h>
#include <regex.h>

#include "api/quantity.h"
#include "api/timeutil.h"

#include "fuzz.h"

#define NANOS 1000000000LL

static regex_t retention_re;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* The CRD pattern of options.autoCompactionRetention. */
	if (regcomp(&retention_re, "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$|^[0-9]+$",
		    REG_EXTENDED | REG_NOSUB) != 0)
		abort();
	return 0;
}

static __int128 nanos_of(const struct eo_quantity *q)
{
	return (__int128)q->units * NANOS + q->nanos;
}

static void check_quantity(const char *s, struct eo_quantity *q, bool *ok)
{
	struct eo_quantity j, o;
	json_t *v;
	size_t n = strlen(s);
	char *t;
	int rc = eo_quantity_parse(s, q);

	*ok = rc == 0;
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE, "parse(%s) = %d", s, rc);
	v = json_string(s);
	if (v != NULL) { /* NULL when s is not UTF-8 */
		int rj = eo_quantity_from_json(v, &j);

		FUZZ_CHECK(rj == rc, "from_json(%s) = %d, parse %d", s, rj, rc);
		if (rc == 0)
			FUZZ_CHECK(eo_quantity_cmp(&j, q) == 0, "from_json(%s) differs", s);
		json_decref(v);
	}
	if (rc != 0)
		return;
	FUZZ_CHECK(q->nanos >= 0 && q->nanos < NANOS, "nanos %d", q->nanos);
	FUZZ_CHECK(eo_quantity_cmp(q, q) == 0, "cmp(q, q)");
	FUZZ_CHECK(eo_quantity_sign(q) == (nanos_of(q) > 0) - (nanos_of(q) < 0), "sign of %s", s);
	FUZZ_CHECK((__int128)eo_quantity_value(q) * NANOS >= nanos_of(q) ||
		       eo_quantity_value(q) == INT64_MAX,
		   "value of %s rounded down", s);
	FUZZ_CHECK((__int128)eo_quantity_milli_value(q) * 1000000 >= nanos_of(q) ||
		       eo_quantity_milli_value(q) == INT64_MAX,
		   "milli value of %s rounded down", s);
	if (s[0] == '+' || s[0] == '-')
		return;
	t = malloc(n + 2);
	if (t == NULL)
		abort();
	t[0] = '+';
	memcpy(t + 1, s, n + 1);
	FUZZ_CHECK(eo_quantity_parse(t, &o) == 0 && eo_quantity_cmp(&o, q) == 0, "+%s differs", s);
	t[0] = '-';
	FUZZ_CHECK(eo_quantity_parse(t, &o) == 0, "-%s does not parse", s);
	{
		__int128 sum = nanos_of(&o) + nanos_of(q);

		FUZZ_CHECK(sum == 0 || sum == 1, "-%s is not the negation (off by %lld nanos)", s,
			   (long long)sum);
	}
	free(t);
}

static void check_time(const char *s)
{
	char buf[EO_TIME_BUF];
	time_t t = 0, back = 0;

	if (eo_time_parse(s, &t) != 0)
		return;
	if (eo_time_format(t, buf, sizeof(buf)) != 0)
		return; /* years the format cannot hold (offsets around year 0 / 9999) */
	FUZZ_CHECK(eo_time_parse(buf, &back) == 0 && back == t, "%s -> %s does not parse back", s,
		   buf);
	if (strlen(s) == 20 && s[10] == 'T' && s[19] == 'Z' && !(s[17] == '6' && s[18] == '0'))
		FUZZ_CHECK(strcmp(buf, s) == 0, "%s formats as %s", s, buf);
}

static void check_duration(const char *s)
{
	int64_t ms = -1;
	int rc = eo_duration_parse_ms(s, &ms);
	bool valid = eo_retention_valid(s);
	bool re = regexec(&retention_re, s, 0, NULL, 0) == 0;

	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE, "duration(%s) = %d", s, rc);
	if (rc == 0) {
		FUZZ_CHECK(ms >= 0, "duration(%s) = %lld ms", s, (long long)ms);
		FUZZ_CHECK(valid, "duration %s is not a valid retention", s);
	}
	FUZZ_CHECK(valid == re, "retention_valid(%s) = %d, the CRD pattern says %d", s, valid, re);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fz_strdup(data, size);
	size_t n1 = strlen(s);
	struct eo_quantity a, b;
	bool ok_a = false, ok_b = false;

	check_quantity(s, &a, &ok_a);
	check_time(s);
	check_duration(s);
	if (n1 < size) {
		check_quantity(s + n1 + 1, &b, &ok_b);
		if (ok_a && ok_b) {
			int c = eo_quantity_cmp(&a, &b);

			FUZZ_CHECK(c == -eo_quantity_cmp(&b, &a), "cmp not antisymmetric");
			FUZZ_CHECK(c == (nanos_of(&a) > nanos_of(&b)) -
					    (nanos_of(&a) < nanos_of(&b)),
				   "cmp disagrees with the values");
		}
	}
	free(s);
	return 0;
}
