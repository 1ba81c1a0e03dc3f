/*
 * api/restorefail.h - why a restore at bootstrap failed, as the restore init containers
 * tell it and the controllers read it.
 *
 * The init containers `restore`, `restore-replay` (an archive source) and `restore-rebuild`
 * (desired/restore.h) write, when they fail, one JSON object to their termination log
 * (/dev/termination-log):
 *
 *   {"reason":"RestoreSnapshotCorrupt","message":"s3://b/k: the trailer is not ..."}
 *
 * The kubelet copies it into the container status (state.terminated.message, and
 * lastState.terminated.message once the container is restarted). plan/podissue.c reads it
 * back from the seed's Pod; the EtcdMember's Ready condition and the EtcdCluster's Available
 * condition then carry the reason, and the message with what to do (eo_restore_reason_hint).
 *
 * The reasons (docs/conditions.md; docs/operations.md says how to recover from each):
 */
#ifndef EO_API_RESTOREFAIL_H
#define EO_API_RESTOREFAIL_H

#include <stdbool.h>
#include <stddef.h>

/* HeadObject answered 404, or the PVC source has no file at its subPath. */
#define EO_REASON_RESTORE_OBJECT_MISSING "RestoreObjectMissing"
/* S3 answered 401/403, or the credentials Secret lacks a key. */
#define EO_REASON_RESTORE_ACCESS_DENIED "RestoreAccessDenied"
/* The S3 endpoint did not answer, or answered something else, or the download broke off. */
#define EO_REASON_RESTORE_SOURCE_UNREACHABLE "RestoreSourceUnreachable"
/* Truncated, padded or altered: etcd's integrity hash does not match. */
#define EO_REASON_RESTORE_SNAPSHOT_CORRUPT "RestoreSnapshotCorrupt"
/* Intact, but its SHA-256 is not source.expectedChecksum: replaced, or the wrong snapshot. */
#define EO_REASON_RESTORE_CHECKSUM_MISMATCH "RestoreChecksumMismatch"
/* The data volume has less room than staging and rebuilding need. */
#define EO_REASON_RESTORE_VOLUME_TOO_SMALL "RestoreVolumeTooSmall"
/* The etcd image's etcdutl refused the verified snapshot. */
#define EO_REASON_RESTORE_REBUILD_FAILED "RestoreRebuildFailed"
/* An archive restore: the target is outside every recoverable window the archive holds. */
#define EO_REASON_RESTORE_TARGET_OUTSIDE_ARCHIVE "RestoreTargetOutsideArchive"
/* An archive restore: no readable manifest at archive.pvc (wrong claim or subPath, damage). */
#define EO_REASON_RESTORE_ARCHIVE_UNREADABLE "RestoreArchiveUnreadable"
/* An archive restore: the replay into the private etcd failed (diverged, a bad segment, ...). */
#define EO_REASON_RESTORE_REPLAY_FAILED "RestoreReplayFailed"
/* Anything else, and a termination message that is not ours (e.g. OOMKilled). */
#define EO_REASON_RESTORE_FAILED "RestoreFailed"

/* The kubelet keeps at most 4096 bytes of a termination message. */
#define EO_RESTORE_FAILURE_MAX 4096
#define EO_RESTORE_MESSAGE_MAX 1024

/* Whether reason is one of the reasons above. */
bool eo_restore_reason_known(const char *reason);

/* The static string of the known reason equal to reason, or NULL. */
const char *eo_restore_reason_static(const char *reason);

/* What the user should do for reason (a known one); never NULL. */
const char *eo_restore_reason_hint(const char *reason);

/*
 * The termination message for reason and message (message cut to EO_RESTORE_MESSAGE_MAX).
 * 0, or -1 when reason is not known or buf is too small.
 */
int eo_restore_failure_format(char *buf, size_t cap, const char *reason, const char *message);

/*
 * Reads a termination message written by eo_restore_failure_format. True with *reason (one of
 * the static strings above, never the text's own) and the message (into msg[mcap], cut);
 * false when text is not such an object (for example the log tail the kubelet falls back to).
 */
bool eo_restore_failure_parse(const char *text, const char **reason, char *msg, size_t mcap);

#endif
