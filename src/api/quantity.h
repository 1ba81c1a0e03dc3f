/*
 * Kubernetes resource quantities ("10Gi", "128Mi", "100m", "1.5", "2e3").
 *
 * A quantity is held exactly as units + nanos * 1e-9 with 0 <= nanos < 1e9, so
 * every value Kubernetes can store with nano precision compares exactly
 * ("1Gi" == "1073741824" == "1024Mi"). Like Kubernetes, precision finer than
 * one nano is rounded up (towards +infinity).
 *
 * Limits of this implementation: at most 19 significant digits, and values
 * whose magnitude exceeds INT64_MAX units are rejected with -ERANGE.
 */
#ifndef EO_API_QUANTITY_H
#define EO_API_QUANTITY_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct eo_quantity {
	int64_t units; /* whole part, rounded towards -infinity */
	int32_t nanos; /* 0 .. 999999999 */
};

/*
 * Parse s into *out. Grammar: [+-] digits [. digits] [suffix], where suffix is
 * one of n u m "" k M G T P E, Ki Mi Gi Ti Pi Ei, or e/E followed by a signed
 * integer exponent. Returns 0, -EINVAL for malformed input (including
 * surrounding spaces), or -ERANGE for values outside the limits above. *out is
 * only written on success.
 */
int eo_quantity_parse(const char *s, struct eo_quantity *out);

/* Parse an int-or-string JSON value (as the CRDs store quantities). */
int eo_quantity_from_json(const json_t *v, struct eo_quantity *out);

/* -1, 0 or 1 as a is less than, equal to or greater than b. */
int eo_quantity_cmp(const struct eo_quantity *a, const struct eo_quantity *b);

/* -1, 0 or 1 by the sign of q. */
int eo_quantity_sign(const struct eo_quantity *q);

/* Value rounded up to an integer (bytes, cores), saturating at INT64_MAX. */
int64_t eo_quantity_value(const struct eo_quantity *q);

/* Value in thousandths, rounded up, saturating at INT64_MIN/INT64_MAX. */
int64_t eo_quantity_milli_value(const struct eo_quantity *q);

#endif
