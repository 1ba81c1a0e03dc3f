/*
 * EtcdSnapshot: typed read access and validation, plus the snapshot location
 * shape shared with EtcdCluster spec.bootstrap.restore.source.
 *
 * All functions take the whole object as a jansson tree. Returned strings are
 * borrowed from that tree and stay valid while it is neither modified nor
 * freed; nothing here takes or drops references.
 */
#ifndef EO_API_SNAPSHOT_H
#define EO_API_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Validation messages (also the CRD's x-kubernetes-validations messages). */
#define EO_MSG_LOCATION_ONE_OF "exactly one of s3 and pvc must be set"
/* A restore source (EtcdCluster spec.bootstrap.restore.source, EtcdMember spec.restore.source). */
#define EO_MSG_RESTORE_SOURCE_ONE_OF "exactly one of s3, pvc and archive must be set"
#define EO_MSG_ARCHIVE_TARGET_ONE_OF                                                               \
	"archive.targetRevision and archive.targetTime are mutually exclusive"
#define EO_MSG_ARCHIVE_TARGET_TIME                                                                 \
	"archive.targetTime must be an RFC 3339 time in UTC, e.g. 2026-11-28T01:02:03Z"
#define EO_MSG_ARCHIVE_CHECKSUM                                                                    \
	"expectedChecksum applies to a snapshot file, not to an archive (the replay checks the "   \
	"snapshot it writes)"
#define EO_MSG_SNAPSHOT_IMMUTABLE "spec is immutable; create a new EtcdSnapshot instead"
#define EO_MSG_SNAPSHOT_NAME                                                                       \
	"metadata.name must be at most 54 characters long (the snapshot Job is named "             \
	"<snapshot>-snapshot)"
#define EO_SNAPSHOT_NAME_MAX 54
/* The CRDs' rule on every user-written S3 location (destination, restore source). */
#define EO_MSG_S3_INSECURE                                                                         \
	"s3.endpoint is plain http://: use https://, or set s3.insecure: true to accept a store "  \
	"reached unencrypted and unauthenticated"
/*
 * The CRDs' rule on every S3 key (prefix or exact key) and PVC sub-path: a ".." segment
 * would reach another prefix or bucket (libcurl squashes dot segments) or leave the volume.
 */
#define EO_MSG_PATH_DOT_DOT "s3.key and pvc.subPath must not contain a '..' path segment"

/* Job settings of a snapshot (§3.3). */
#define EO_SNAPSHOT_JOB_TTL_SECONDS	 600
#define EO_SNAPSHOT_JOB_BACKOFF_LIMIT	 3
#define EO_SNAPSHOT_JOB_DEADLINE_SECONDS 1800
/* Where a PVC destination is mounted in the agent; artifact URIs use it. */
#define EO_SNAPSHOT_PVC_MOUNT_PATH "/snapshot/data"
#define EO_SNAPSHOT_FILE_SUFFIX	   ".db"

enum eo_location_kind {
	EO_LOCATION_NONE = 0, /* neither s3 nor pvc */
	EO_LOCATION_S3,
	EO_LOCATION_PVC,
	EO_LOCATION_BOTH,    /* invalid: more than one set */
	EO_LOCATION_ARCHIVE, /* restore source only: an archive (agent/archive.h) on a PVC */
};

/* A snapshot destination or restore source. Absent optional strings are "". */
struct eo_snapshot_location {
	enum eo_location_kind kind;
	/* s3 */
	const char *endpoint;
	const char *bucket;
	const char *key; /* destination: prefix; restore source: exact key */
	const char *region;
	const char *credentials_secret;
	bool force_path_style;
	bool insecure; /* s3.insecure: a plain http:// endpoint is accepted */
	/* pvc */
	const char *claim_name;
	const char *sub_path; /* destination: directory; restore source: exact file */
	/*
	 * archive (restore source only): claim_name and sub_path are archive.pvc's (sub_path: the
	 * archive's directory in the volume, "" for its root); the point to restore to, 0 / ""
	 * when not set (both unset: the newest archived point).
	 */
	int64_t target_revision;
	const char *target_time;
	/* restore source only: "sha256:<hex>" the file must have, "" when not set */
	const char *expected_checksum;
};

/* Read a location object (destination or source); loc may be NULL. */
void eo_location_read(const json_t *loc, struct eo_snapshot_location *out);

enum eo_snapshot_phase {
	EO_SNAPSHOT_PHASE_NONE = 0, /* status.phase not set yet */
	EO_SNAPSHOT_PHASE_PENDING,
	EO_SNAPSHOT_PHASE_STARTED,
	EO_SNAPSHOT_PHASE_COMPLETE,
	EO_SNAPSHOT_PHASE_FAILED,
	EO_SNAPSHOT_PHASE_UNKNOWN, /* a value this build does not know */
};

#define EO_SNAPSHOT_PHASE_PENDING_STR  "Pending"
#define EO_SNAPSHOT_PHASE_STARTED_STR  "Started"
#define EO_SNAPSHOT_PHASE_COMPLETE_STR "Complete"
#define EO_SNAPSHOT_PHASE_FAILED_STR   "Failed"

/* spec.clusterRef.name, or NULL. */
const char *eo_snapshot_cluster_name(const json_t *snap);
/* spec.destination. */
void eo_snapshot_destination(const json_t *snap, struct eo_snapshot_location *out);

/* status.phase as an enum; the string form of a phase (NULL for NONE/UNKNOWN). */
enum eo_snapshot_phase eo_snapshot_phase(const json_t *snap);
const char *eo_snapshot_phase_str(enum eo_snapshot_phase phase);
/* Complete and Failed are final: a snapshot never runs again. */
bool eo_snapshot_phase_is_terminal(enum eo_snapshot_phase phase);

/* status.artifact fields; NULL / -1 when absent. */
const char *eo_snapshot_artifact_uri(const json_t *snap);
int64_t eo_snapshot_artifact_size(const json_t *snap);
const char *eo_snapshot_artifact_checksum(const json_t *snap);
/* status.artifact.revision: the store revision the snapshot holds at least; -1 when absent. */
int64_t eo_snapshot_artifact_revision(const json_t *snap);

/*
 * S3 object key of a snapshot: "<prefix>/<name>.db", or "<name>.db" for an
 * empty prefix (a trailing '/' on the prefix is not doubled). 0, or -1 when it
 * does not fit or name is empty.
 */
int eo_snapshot_s3_key(char *buf, size_t n, const char *prefix, const char *name);

/*
 * Re-check the CRD rules: spec present, clusterRef.name set, destination with
 * exactly one of s3 (endpoint, bucket, credentialsSecretRef) and pvc
 * (claimName), the name length, and with old != NULL spec immutability.
 * Returns 0, or -1 with the first problem in msg.
 */
int eo_snapshot_validate(const json_t *snap, const json_t *old, char *msg, size_t n);

/*
 * Check a location object (shared by destination and restore source); prefix
 * names it in messages ("spec.destination"). An archive is refused
 * (EO_MSG_LOCATION_ONE_OF): it is a restore source only. 0 or -1 with msg.
 */
int eo_location_validate(const json_t *loc, const char *prefix, char *msg, size_t n);
/*
 * A restore source: as eo_location_validate, where exactly one of s3, pvc and archive
 * (EO_MSG_RESTORE_SOURCE_ONE_OF) must be set; archive: a pvc with a claim, at most one of
 * targetRevision (>= 1) and targetTime (RFC 3339 UTC), no expectedChecksum.
 */
int eo_restore_source_validate(const json_t *loc, const char *prefix, char *msg, size_t n);

/* Does s hold a ".." segment ("..", "../x", "x/..", "x/../y")? false for NULL. */
bool eo_path_has_dot_dot(const char *s);

/*
 * A plain http:// S3 endpoint without s3.insecure: true is refused (EO_MSG_S3_INSECURE);
 * the scheme is compared without regard to case. 0 (also for a PVC location) or -1 with msg.
 */
int eo_location_validate_transport(const json_t *loc, char *msg, size_t n);

/* "sha256:" followed by 64 lower-case hex digits (EtcdSnapshot.status.artifact.checksum). */
bool eo_snapshot_checksum_well_formed(const char *s);

#endif
