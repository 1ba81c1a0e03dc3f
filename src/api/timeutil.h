/*
 * Time and duration helpers for API fields: RFC 3339 timestamps (condition
 * lastTransitionTime, status.progressDeadline) and Go-style durations
 * (options.autoCompactionRetention).
 */
#ifndef EO_API_TIMEUTIL_H
#define EO_API_TIMEUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Buffer size for eo_time_format: "2006-01-02T15:04:05Z" plus NUL. */
#define EO_TIME_BUF 21

/*
 * Format t as UTC "YYYY-MM-DDTHH:MM:SSZ". Returns 0, or -1 (and "") when it does not fit or
 * the year is outside 0000-9999.
 */
int eo_time_format(time_t t, char *buf, size_t n);

/*
 * Parse an RFC 3339 timestamp ("2026-06-02T10:00:00Z", optional fractional
 * seconds, "Z" or a "+hh:mm"/"-hh:mm" offset; 'T' and 'Z' in either case)
 * with strptime(3) and timegm(3). Every field has its exact width.
 * Fractions are dropped; a leap second (:60) counts as the next second.
 * Returns 0 and sets *out, or -EINVAL.
 */
int eo_time_parse(const char *s, time_t *out);

/*
 * Parse a duration made of <number>[.<fraction>]<unit> terms with units ms, s,
 * m and h ("1h30m", "1.5h", "500ms") into milliseconds (fractions of a
 * millisecond are dropped). A bare number is rejected. Returns 0, -EINVAL, or
 * -ERANGE on overflow.
 */
int eo_duration_parse_ms(const char *s, int64_t *ms);

/*
 * True when s is a valid options.autoCompactionRetention: a duration as above
 * or a bare non-negative integer (the CRD pattern
 * ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$|^[0-9]+$).
 */
bool eo_retention_valid(const char *s);

#endif
