/*
 * api/archive.c - EtcdArchive accessors and validation. See archive.h.
 */
#include "api/archive.h"

#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "api/quantity.h"
#include "api/timeutil.h"

static const json_t *spec_of(const json_t *a)
{
	return json_object_get(a, "spec");
}

const char *eo_archive_cluster_name(const json_t *a)
{
	return json_string_value(
	    json_object_get(json_object_get(spec_of(a), "clusterRef"), "name"));
}

void eo_archive_destination(const json_t *a, struct eo_snapshot_location *out)
{
	eo_location_read(json_object_get(spec_of(a), "destination"), out);
}

static const json_t *segment_of(const json_t *a)
{
	return json_object_get(spec_of(a), "segment");
}

int64_t eo_archive_segment_seconds(const json_t *a)
{
	const json_t *v = json_object_get(segment_of(a), "maxSeconds");
	int64_t s = json_is_integer(v) ? json_integer_value(v) : 0;

	return s >= 1 && s <= EO_ARCHIVE_SEGMENT_SECONDS_MAX ? s
							     : EO_ARCHIVE_SEGMENT_SECONDS_DEFAULT;
}

/* maxBytes: 1 parsed into *out, 0 absent, -1 present but not a quantity in range. */
static int segment_bytes(const json_t *a, int64_t *out)
{
	const json_t *v = json_object_get(segment_of(a), "maxBytes");
	struct eo_quantity q;
	int64_t b;

	if (v == NULL)
		return 0;
	if (eo_quantity_from_json(v, &q) != 0)
		return -1;
	b = eo_quantity_value(&q);
	if (b < EO_ARCHIVE_SEGMENT_BYTES_MIN || b > EO_ARCHIVE_SEGMENT_BYTES_MAX)
		return -1;
	*out = b;
	return 1;
}

int64_t eo_archive_segment_bytes(const json_t *a)
{
	int64_t b = 0;

	return segment_bytes(a, &b) == 1 ? b : EO_ARCHIVE_SEGMENT_BYTES_DEFAULT;
}

/* retention: 1 parsed, 0 absent, -1 malformed or not positive. */
static int retention(const json_t *a, int64_t *seconds)
{
	const char *s = json_string_value(json_object_get(spec_of(a), "retention"));
	int64_t ms = 0;

	if (s == NULL)
		return 0;
	if (eo_duration_parse_ms(s, &ms) != 0 || ms <= 0)
		return -1;
	*seconds = (ms + 999) / 1000;
	return 1;
}

int64_t eo_archive_retention_seconds(const json_t *a)
{
	int64_t s = 0;

	return retention(a, &s) == 1 ? s : 0;
}

int64_t eo_archive_lag_threshold_seconds(const json_t *a)
{
	const json_t *v = json_object_get(spec_of(a), "lagThresholdSeconds");
	int64_t s = json_is_integer(v) ? json_integer_value(v) : 0;

	return s >= 1 ? s : EO_ARCHIVE_LAG_THRESHOLD_DEFAULT;
}

int eo_archive_validate(const json_t *a, char *msg, size_t n)
{
	const char *name = eo_meta_name(a), *cname = eo_archive_cluster_name(a);
	const json_t *dest = json_object_get(spec_of(a), "destination");
	int64_t tmp = 0;

	if (name != NULL && strlen(name) > EO_ARCHIVE_NAME_MAX) {
		snprintf(msg, n, "%s", EO_MSG_ARCHIVE_NAME);
		return -1;
	}
	if (cname == NULL || cname[0] == '\0') {
		snprintf(msg, n, "spec.clusterRef.name is required");
		return -1;
	}
	if (!json_is_object(dest)) {
		snprintf(msg, n, "spec.destination is required");
		return -1;
	}
	if (eo_location_validate(dest, "spec.destination", msg, n) != 0)
		return -1;
	if (segment_bytes(a, &tmp) < 0) {
		snprintf(msg, n, "%s", EO_MSG_ARCHIVE_SEGMENT_BYTES);
		return -1;
	}
	if (retention(a, &tmp) < 0) {
		snprintf(msg, n, "%s", EO_MSG_ARCHIVE_RETENTION);
		return -1;
	}
	return 0;
}
