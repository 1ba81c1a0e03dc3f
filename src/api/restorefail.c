/*
 * api/restorefail.c - the restore failure termination message. See restorefail.h.
 */
#include "api/restorefail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/json.h"

static const struct {
	const char *reason, *hint;
} REASONS[] = {
    {EO_REASON_RESTORE_OBJECT_MISSING,
     "check spec.bootstrap.restore.source (bucket, key, claim, subPath); put the snapshot "
     "there, or delete the EtcdCluster and create it with the right source"},
    {EO_REASON_RESTORE_ACCESS_DENIED,
     "check the credentials Secret (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) and that they "
     "may s3:GetObject (and s3:ListBucket) on the bucket"},
    {EO_REASON_RESTORE_SOURCE_UNREACHABLE,
     "check the S3 endpoint, region and forcePathStyle, and that the Pod can reach it"},
    {EO_REASON_RESTORE_SNAPSHOT_CORRUPT,
     "the snapshot is truncated or altered and etcd is not started on it: restore from "
     "another snapshot (delete the EtcdCluster and create it with that source), or replace "
     "the object with an intact copy"},
    {EO_REASON_RESTORE_CHECKSUM_MISMATCH,
     "the object at the source is not the snapshot spec.bootstrap.restore.source."
     "expectedChecksum names (replaced, altered, or the checksum of another snapshot): put "
     "that snapshot back at the source, or delete the EtcdCluster and create it with the "
     "right source and checksum"},
    {EO_REASON_RESTORE_VOLUME_TOO_SMALL,
     "delete the EtcdCluster and create it with a larger spec.storage.size (about twice the "
     "snapshot for an S3 source)"},
    {EO_REASON_RESTORE_REBUILD_FAILED,
     "etcdutl of the cluster's etcd image refused the snapshot: look at the logs of the "
     "restore-rebuild container, and check that spec.version can read this snapshot"},
    {EO_REASON_RESTORE_TARGET_OUTSIDE_ARCHIVE,
     "the archive cannot reach that point (before its oldest base, after its newest revision, "
     "or in a gap): delete the EtcdCluster and create it with a targetRevision or targetTime "
     "inside the window the archive's manifest records, or without either for the latest"},
    {EO_REASON_RESTORE_ARCHIVE_UNREADABLE,
     "check spec.bootstrap.restore.source.archive.pvc (claimName, subPath: the directory "
     "that holds manifest.json); look at the logs of the restore-replay container"},
    {EO_REASON_RESTORE_REPLAY_FAILED,
     "the replay of the archive stopped: look at the logs of the restore-replay container "
     "(and replay-etcd.log under the data volume's .restore/replay); try an earlier target"},
    {EO_REASON_RESTORE_FAILED, "look at the logs of the restore init containers of the seed Pod"},
};

#define NREASONS (sizeof(REASONS) / sizeof(REASONS[0]))

/* The index of reason in REASONS, or NREASONS. */
static size_t find(const char *reason)
{
	size_t i;

	for (i = 0; reason != NULL && i < NREASONS; i++)
		if (strcmp(reason, REASONS[i].reason) == 0)
			return i;
	return NREASONS;
}

const char *eo_restore_reason_static(const char *reason)
{
	size_t i = find(reason);

	return i < NREASONS ? REASONS[i].reason : NULL;
}

bool eo_restore_reason_known(const char *reason)
{
	return find(reason) < NREASONS;
}

const char *eo_restore_reason_hint(const char *reason)
{
	size_t i = find(reason);

	/* The last entry (RestoreFailed) for anything else. */
	return REASONS[i < NREASONS ? i : NREASONS - 1].hint;
}

/*
 * message cut to at most max bytes at a character boundary, into out[max + 1]. Bytes that
 * are not well-formed UTF-8 become '?': jansson refuses such a string, and the whole
 * termination message would be lost for one bad byte or a cut through a character.
 */
static void cut_utf8(const char *message, char *out, size_t max)
{
	const unsigned char *s = (const unsigned char *)message;
	size_t o = 0, len, i;

	while (*s && o < max) {
		len = s[0] < 0x80		     ? 1
		      : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
		      : s[0] >= 0xe0 && s[0] <= 0xef ? 3
		      : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
						     : 0;
		for (i = 1; i < len; i++)
			if ((s[i] & 0xc0) != 0x80)
				len = 0; /* also stops at the terminating NUL */
		if (len == 0) {
			out[o++] = '?';
			s++;
			continue;
		}
		if (o + len > max)
			break; /* the cut would split this character */
		memcpy(out + o, s, len);
		o += len;
		s += len;
	}
	out[o] = '\0';
}

int eo_restore_failure_format(char *buf, size_t cap, const char *reason, const char *message)
{
	char cut[EO_RESTORE_MESSAGE_MAX + 1];
	json_t *j;
	char *s;
	int rc = -1;

	if (!eo_restore_reason_known(reason) || cap == 0)
		return -1;
	cut_utf8(message != NULL ? message : "", cut, EO_RESTORE_MESSAGE_MAX);
	j = json_pack("{s:s, s:s}", "reason", reason, "message", cut);
	s = j != NULL ? eo_json_dumps(j, JSON_COMPACT, NULL) : NULL;
	if (s != NULL && strlen(s) < cap) {
		memcpy(buf, s, strlen(s) + 1);
		rc = 0;
	}
	free(s);
	json_decref(j);
	return rc;
}

bool eo_restore_failure_parse(const char *text, const char **reason, char *msg, size_t mcap)
{
	json_t *j = NULL;
	const char *r, *m;
	bool ok = false;

	if (text == NULL || text[0] != '{' ||
	    strnlen(text, EO_RESTORE_FAILURE_MAX + 1) > EO_RESTORE_FAILURE_MAX)
		return false;
	j = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	r = json_string_value(json_object_get(j, "reason"));
	m = json_string_value(json_object_get(j, "message"));
	if (eo_restore_reason_known(r) && m != NULL && mcap > 0) {
		char cut[EO_RESTORE_MESSAGE_MAX + 1];

		*reason = eo_restore_reason_static(r);
		cut_utf8(m, cut,
			 mcap - 1 < EO_RESTORE_MESSAGE_MAX ? mcap - 1 : EO_RESTORE_MESSAGE_MAX);
		memcpy(msg, cut, strlen(cut) + 1);
		ok = true;
	}
	json_decref(j);
	return ok;
}
