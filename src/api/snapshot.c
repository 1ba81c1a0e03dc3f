#include "api/snapshot.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api/jsonpath.h"
#include "api/meta.h"
#include "api/timeutil.h"
#include "api/validate.h"

static const char *str_or_empty(const json_t *obj, const char *path)
{
	const char *s = eo__json_str_at(obj, path);

	return s != NULL ? s : "";
}

void eo_location_read(const json_t *loc, struct eo_snapshot_location *out)
{
	json_t *s3 = eo__json_object_at(loc, "s3");
	json_t *pvc = eo__json_object_at(loc, "pvc");
	json_t *archive = eo__json_object_at(loc, "archive");
	int64_t rev = 0;

	memset(out, 0, sizeof(*out));
	if ((s3 != NULL) + (pvc != NULL) + (archive != NULL) > 1)
		out->kind = EO_LOCATION_BOTH;
	else if (archive != NULL)
		out->kind = EO_LOCATION_ARCHIVE;
	else if (s3 != NULL)
		out->kind = EO_LOCATION_S3;
	else if (pvc != NULL)
		out->kind = EO_LOCATION_PVC;
	else
		out->kind = EO_LOCATION_NONE;
	out->endpoint = str_or_empty(s3, "endpoint");
	out->bucket = str_or_empty(s3, "bucket");
	out->key = str_or_empty(s3, "key");
	out->region = str_or_empty(s3, "region");
	out->credentials_secret = str_or_empty(s3, "credentialsSecretRef.name");
	out->force_path_style = eo__json_bool_at(s3, "forcePathStyle", false);
	out->insecure = eo__json_bool_at(s3, "insecure", false);
	out->expected_checksum = str_or_empty(loc, "expectedChecksum");
	out->claim_name = str_or_empty(pvc, "claimName");
	out->sub_path = str_or_empty(pvc, "subPath");
	out->target_time = "";
	if (out->kind == EO_LOCATION_ARCHIVE) {
		out->claim_name = str_or_empty(archive, "pvc.claimName");
		out->sub_path = str_or_empty(archive, "pvc.subPath");
		out->target_time = str_or_empty(archive, "targetTime");
		if (eo__json_int_at(archive, "targetRevision", &rev))
			out->target_revision = rev;
	}
}

const char *eo_snapshot_cluster_name(const json_t *snap)
{
	return eo__json_str_at(snap, "spec.clusterRef.name");
}

void eo_snapshot_destination(const json_t *snap, struct eo_snapshot_location *out)
{
	eo_location_read(eo__json_at(snap, "spec.destination"), out);
}

static const struct eo__phase_name phases[] = {
    {EO_SNAPSHOT_PHASE_PENDING, EO_SNAPSHOT_PHASE_PENDING_STR},
    {EO_SNAPSHOT_PHASE_STARTED, EO_SNAPSHOT_PHASE_STARTED_STR},
    {EO_SNAPSHOT_PHASE_COMPLETE, EO_SNAPSHOT_PHASE_COMPLETE_STR},
    {EO_SNAPSHOT_PHASE_FAILED, EO_SNAPSHOT_PHASE_FAILED_STR},
};

enum eo_snapshot_phase eo_snapshot_phase(const json_t *snap)
{
	return (enum eo_snapshot_phase)eo__phase_of(
	    snap, phases, sizeof(phases) / sizeof(phases[0]), EO_SNAPSHOT_PHASE_NONE,
	    EO_SNAPSHOT_PHASE_UNKNOWN);
}

const char *eo_snapshot_phase_str(enum eo_snapshot_phase phase)
{
	return eo__phase_text(phases, sizeof(phases) / sizeof(phases[0]), (int)phase);
}

bool eo_snapshot_phase_is_terminal(enum eo_snapshot_phase phase)
{
	return phase == EO_SNAPSHOT_PHASE_COMPLETE || phase == EO_SNAPSHOT_PHASE_FAILED;
}

const char *eo_snapshot_artifact_uri(const json_t *snap)
{
	return eo__json_str_at(snap, "status.artifact.uri");
}

int64_t eo_snapshot_artifact_size(const json_t *snap)
{
	int64_t v = -1;

	if (!eo__json_int_at(snap, "status.artifact.sizeBytes", &v))
		return -1;
	return v;
}

const char *eo_snapshot_artifact_checksum(const json_t *snap)
{
	return eo__json_str_at(snap, "status.artifact.checksum");
}

int64_t eo_snapshot_artifact_revision(const json_t *snap)
{
	int64_t v = -1;

	if (!eo__json_int_at(snap, "status.artifact.revision", &v) || v < 0)
		return -1;
	return v;
}

bool eo_snapshot_checksum_well_formed(const char *s)
{
	size_t i;

	if (s == NULL || strncmp(s, "sha256:", 7) != 0 || strlen(s) != 7 + 64)
		return false;
	for (i = 7; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int eo_location_validate_transport(const json_t *loc, char *msg, size_t n)
{
	struct eo_snapshot_location l;

	eo_location_read(loc, &l);
	if (l.kind == EO_LOCATION_S3 && strncasecmp(l.endpoint, "http://", 7) == 0 && !l.insecure)
		return eo__fail(msg, n, "%s", EO_MSG_S3_INSECURE);
	return 0;
}

int eo_snapshot_s3_key(char *buf, size_t n, const char *prefix, const char *name)
{
	int len = 0;
	size_t plen = prefix != NULL ? strlen(prefix) : 0;

	if (buf == NULL || n == 0)
		return -1;
	buf[0] = '\0';
	if (name == NULL || name[0] == '\0')
		return -1;
	if (plen == 0)
		len = snprintf(buf, n, "%s%s", name, EO_SNAPSHOT_FILE_SUFFIX);
	else if (prefix[plen - 1] == '/')
		len = snprintf(buf, n, "%s%s%s", prefix, name, EO_SNAPSHOT_FILE_SUFFIX);
	else
		len = snprintf(buf, n, "%s/%s%s", prefix, name, EO_SNAPSHOT_FILE_SUFFIX);
	if (len < 0 || (size_t)len >= n) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

bool eo_path_has_dot_dot(const char *s)
{
	for (const char *seg = s; seg != NULL; seg = strchr(seg, '/')) {
		if (*seg == '/')
			seg++;
		if (seg[0] == '.' && seg[1] == '.' && (seg[2] == '/' || seg[2] == '\0'))
			return true;
	}
	return false;
}

/* "2026-11-28T01:02:03Z" with an optional fraction: what archive-replay --target-time takes. */
static bool utc_time_valid(const char *s)
{
	time_t t;
	size_t len = s != NULL ? strlen(s) : 0;

	return len >= 20 && len <= 35 && (s[len - 1] == 'Z' || s[len - 1] == 'z') &&
	       eo_time_parse(s, &t) == 0 && t > 0;
}

static int archive_validate(const json_t *archive, const struct eo_snapshot_location *l,
			    const char *prefix, char *msg, size_t n)
{
	json_t *rev = json_object_get(archive, "targetRevision");
	json_t *tt = json_object_get(archive, "targetTime");

	if (!json_is_object(json_object_get(archive, "pvc")))
		return eo__fail(msg, n, "%s.archive.pvc: Required value", prefix);
	if (l->claim_name[0] == '\0')
		return eo__fail(msg, n, "%s.archive.pvc.claimName: Required value", prefix);
	if (rev != NULL && tt != NULL)
		return eo__fail(msg, n, "%s", EO_MSG_ARCHIVE_TARGET_ONE_OF);
	if (rev != NULL && (!json_is_integer(rev) || json_integer_value(rev) < 1))
		return eo__fail(msg, n, "%s.archive.targetRevision: must be a revision, 1 or more",
				prefix);
	if (tt != NULL && !utc_time_valid(json_string_value(tt)))
		return eo__fail(msg, n, "%s", EO_MSG_ARCHIVE_TARGET_TIME);
	if (json_object_get(json_object_get(archive, "pvc"), "subPath") != NULL &&
	    json_string_value(json_object_get(json_object_get(archive, "pvc"), "subPath")) == NULL)
		return eo__fail(msg, n, "%s.archive.pvc.subPath: must be a string", prefix);
	return 0;
}

int eo_restore_source_validate(const json_t *loc, const char *prefix, char *msg, size_t n)
{
	struct eo_snapshot_location l;

	if (!json_is_object(loc))
		return eo__fail(msg, n, "%s: Required value", prefix);
	eo_location_read(loc, &l);
	if (l.kind == EO_LOCATION_NONE || l.kind == EO_LOCATION_BOTH ||
	    (json_object_get(loc, "archive") != NULL &&
	     !json_is_object(json_object_get(loc, "archive"))))
		return eo__fail(msg, n, "%s", EO_MSG_RESTORE_SOURCE_ONE_OF);
	if (l.kind != EO_LOCATION_ARCHIVE)
		return eo_location_validate(loc, prefix, msg, n);
	if (eo_path_has_dot_dot(l.sub_path))
		return eo__fail(msg, n, "%s", EO_MSG_PATH_DOT_DOT);
	if (json_object_get(loc, "expectedChecksum") != NULL)
		return eo__fail(msg, n, "%s", EO_MSG_ARCHIVE_CHECKSUM);
	return archive_validate(json_object_get(loc, "archive"), &l, prefix, msg, n);
}

int eo_location_validate(const json_t *loc, const char *prefix, char *msg, size_t n)
{
	struct eo_snapshot_location l;

	if (!json_is_object(loc))
		return eo__fail(msg, n, "%s: Required value", prefix);
	eo_location_read(loc, &l);
	/* archive: a restore source only (eo_restore_source_validate) */
	if (l.kind == EO_LOCATION_NONE || l.kind == EO_LOCATION_BOTH ||
	    l.kind == EO_LOCATION_ARCHIVE || json_object_get(loc, "archive") != NULL)
		return eo__fail(msg, n, "%s", EO_MSG_LOCATION_ONE_OF);
	if (eo_path_has_dot_dot(l.kind == EO_LOCATION_S3 ? l.key : l.sub_path))
		return eo__fail(msg, n, "%s", EO_MSG_PATH_DOT_DOT);
	if (l.kind == EO_LOCATION_S3) {
		if (l.endpoint[0] == '\0')
			return eo__fail(msg, n, "%s.s3.endpoint: Required value", prefix);
		if (l.bucket[0] == '\0')
			return eo__fail(msg, n, "%s.s3.bucket: Required value", prefix);
		if (l.credentials_secret[0] == '\0')
			return eo__fail(msg, n, "%s.s3.credentialsSecretRef.name: Required value",
					prefix);
	} else if (l.claim_name[0] == '\0') {
		return eo__fail(msg, n, "%s.pvc.claimName: Required value", prefix);
	}
	return 0;
}

int eo_snapshot_validate(const json_t *snap, const json_t *old, char *msg, size_t n)
{
	const char *name = eo_meta_name(snap);
	const char *cluster = eo_snapshot_cluster_name(snap);
	json_t *spec = eo__json_object_at(snap, "spec");

	eo__clear(msg, n);
	if (name != NULL && strlen(name) > EO_SNAPSHOT_NAME_MAX)
		return eo__fail(msg, n, "%s", EO_MSG_SNAPSHOT_NAME);
	if (spec == NULL)
		return eo__fail(msg, n, "spec: Required value");
	if (cluster == NULL || cluster[0] == '\0')
		return eo__fail(msg, n, "spec.clusterRef.name: Required value");
	if (eo_location_validate(json_object_get(spec, "destination"), "spec.destination", msg,
				 n) != 0 ||
	    eo_location_validate_transport(json_object_get(spec, "destination"), msg, n) != 0)
		return -1;
	if (old != NULL) {
		json_t *old_spec = eo__json_object_at(old, "spec");

		if (old_spec != NULL && !json_equal(spec, old_spec))
			return eo__fail(msg, n, "%s", EO_MSG_SNAPSHOT_IMMUTABLE);
	}
	return 0;
}
