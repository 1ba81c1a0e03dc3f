#include "api/quantity.h"

#include <errno.h>
#include <string.h>

__extension__ typedef __int128 i128;

#define NANOS_PER_UNIT	 1000000000LL
#define MAX_SIG_DIGITS	 19
#define MAX_EXPONENT_ABS 1000

/* Largest magnitude in nanos: INT64_MAX whole units. */
static i128 nano_limit(void)
{
	return (i128)INT64_MAX * NANOS_PER_UNIT;
}

struct suffix {
	const char *text;
	int exp10;
	int exp2;
};

static const struct suffix suffixes[] = {
    {"", 0, 0},	   {"n", -9, 0},  {"u", -6, 0},	 {"m", -3, 0},	{"k", 3, 0},   {"M", 6, 0},
    {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},	 {"E", 18, 0},	{"Ki", 0, 10}, {"Mi", 0, 20},
    {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
};

/* Parse a decimal exponent "[+-]digits"; false when malformed or out of range. */
static bool parse_exponent(const char *s, int *out)
{
	bool neg = false;
	int v = 0;

	if (*s == '+' || *s == '-') {
		neg = *s == '-';
		s++;
	}
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (*s - '0');
		if (v > MAX_EXPONENT_ABS)
			return false;
	}
	*out = neg ? -v : v;
	return true;
}

static bool parse_suffix(const char *s, int *exp10, int *exp2)
{
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (strcmp(s, suffixes[i].text) == 0) {
			*exp10 = suffixes[i].exp10;
			*exp2 = suffixes[i].exp2;
			return true;
		}
	}
	if ((s[0] == 'e' || s[0] == 'E') && s[1] != '\0') {
		*exp2 = 0;
		return parse_exponent(s + 1, exp10);
	}
	return false;
}

int eo_quantity_parse(const char *s, struct eo_quantity *out)
{
	bool neg = false;
	bool any_digit = false;
	bool seen_nonzero = false;
	uint64_t mant = 0;
	int sig = 0;
	int scale = 0; /* value = mant * 10^scale before the suffix */
	int pending_zeros = 0;
	int exp10 = 0;
	int exp2 = 0;
	i128 mag = 0;
	i128 nanos = 0;
	const char *p = s;

	if (s == NULL || out == NULL)
		return -EINVAL;
	if (*p == '+' || *p == '-') {
		neg = *p == '-';
		p++;
	}
	/*
	 * Digits before and after the point. Zeros after the last non-zero digit
	 * are held back in pending_zeros so that "1000000000000000000000" does not
	 * count as 22 significant digits.
	 */
	for (int frac = 0; frac < 2; frac++) {
		for (; *p >= '0' && *p <= '9'; p++) {
			any_digit = true;
			if (frac)
				scale--;
			if (*p == '0') {
				if (seen_nonzero)
					pending_zeros++;
				continue;
			}
			for (; pending_zeros > 0; pending_zeros--) {
				if (++sig > MAX_SIG_DIGITS)
					return -ERANGE;
				mant = mant * 10;
			}
			if (++sig > MAX_SIG_DIGITS)
				return -ERANGE;
			mant = mant * 10 + (uint64_t)(*p - '0');
			seen_nonzero = true;
		}
		if (frac == 0) {
			if (*p != '.')
				break;
			p++;
		}
	}
	if (!any_digit)
		return -EINVAL;
	scale += pending_zeros;
	if (!parse_suffix(p, &exp10, &exp2))
		return -EINVAL;

	if (mant != 0) {
		/* nanos = mant * 2^exp2 * 10^(scale + exp10 + 9), rounded up. */
		int t = scale + exp10 + 9;

		mag = (i128)mant << exp2; /* < 2^64 * 2^60: fits */
		if (t >= 0) {
			for (int i = 0; i < t; i++) {
				if (mag > nano_limit())
					return -ERANGE;
				mag *= 10;
			}
			if (mag > nano_limit())
				return -ERANGE;
		} else if (-t > 38) {
			/* Far below one nano: rounds up to 1 nano, or to 0 when negative. */
			mag = neg ? 0 : 1;
		} else {
			i128 div = 1;
			i128 q = 0;
			i128 r = 0;

			for (int i = 0; i < -t; i++)
				div *= 10;
			q = mag / div;
			r = mag % div;
			/* Round towards +infinity: up for positive values, down for negative. */
			mag = (r != 0 && !neg) ? q + 1 : q;
		}
	}
	nanos = neg ? -mag : mag;
	out->units = (int64_t)(nanos / NANOS_PER_UNIT);
	out->nanos = (int32_t)(nanos % NANOS_PER_UNIT);
	if (out->nanos < 0) {
		out->units -= 1;
		out->nanos += (int32_t)NANOS_PER_UNIT;
	}
	return 0;
}

int eo_quantity_from_json(const json_t *v, struct eo_quantity *out)
{
	if (out == NULL)
		return -EINVAL;
	if (json_is_integer(v)) {
		out->units = (int64_t)json_integer_value(v);
		out->nanos = 0;
		return 0;
	}
	if (json_is_string(v))
		return eo_quantity_parse(json_string_value(v), out);
	return -EINVAL;
}

int eo_quantity_cmp(const struct eo_quantity *a, const struct eo_quantity *b)
{
	if (a->units != b->units)
		return a->units < b->units ? -1 : 1;
	if (a->nanos != b->nanos)
		return a->nanos < b->nanos ? -1 : 1;
	return 0;
}

int eo_quantity_sign(const struct eo_quantity *q)
{
	if (q->units < 0)
		return -1;
	if (q->units > 0 || q->nanos > 0)
		return 1;
	return 0;
}

int64_t eo_quantity_value(const struct eo_quantity *q)
{
	if (q->nanos > 0) {
		if (q->units == INT64_MAX)
			return INT64_MAX;
		return q->units + 1;
	}
	return q->units;
}

int64_t eo_quantity_milli_value(const struct eo_quantity *q)
{
	i128 milli = (i128)q->units * 1000 + (q->nanos + 999999) / 1000000;

	if (milli > INT64_MAX)
		return INT64_MAX;
	if (milli < INT64_MIN)
		return INT64_MIN;
	return (int64_t)milli;
}
