/*
 * api/archive.h - EtcdArchive (issue 20 item 1): typed read access to the spec with its
 * defaults, and the CRD's rules again in C.
 *
 *   spec.clusterRef.name          the EtcdCluster, same namespace
 *   spec.destination              EtcdSnapshot's shape (api/snapshot.h): pvc or s3; only pvc
 *                                 is implemented (an s3 destination is refused with the
 *                                 condition reason DestinationUnsupported)
 *   spec.segment.maxSeconds       a segment is closed after this long (default 5)
 *   spec.segment.maxBytes         ... or this many bytes (quantity, default 8Mi)
 *   spec.retention                duration ("168h"): older bases and segments are pruned;
 *                                 absent: nothing is pruned
 *   spec.lagThresholdSeconds      LagWithinThreshold turns False above it (default 60)
 *
 * Strings returned are borrowed from the object.
 */
#ifndef EO_API_ARCHIVE_H
#define EO_API_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/snapshot.h"

#define EO_ARCHIVE_SEGMENT_SECONDS_DEFAULT 5
#define EO_ARCHIVE_SEGMENT_SECONDS_MAX	   3600
#define EO_ARCHIVE_SEGMENT_BYTES_DEFAULT   (8LL << 20)
#define EO_ARCHIVE_SEGMENT_BYTES_MIN	   4096LL
#define EO_ARCHIVE_SEGMENT_BYTES_MAX	   (1LL << 30)
#define EO_ARCHIVE_LAG_THRESHOLD_DEFAULT   60
#define EO_ARCHIVE_NAME_MAX		   230 /* the Deployment <archive>-archiver */

#define EO_MSG_ARCHIVE_SEGMENT_BYTES "spec.segment.maxBytes must be a quantity from 4Ki to 1Gi"
#define EO_MSG_ARCHIVE_RETENTION                                                                   \
	"spec.retention must be a duration such as 168h or 30m (units ms, s, m, h)"
#define EO_MSG_ARCHIVE_NAME "metadata.name must be at most 230 characters long"
#define EO_MSG_ARCHIVE_DESTINATION_IMMUTABLE                                                       \
	"spec.destination is immutable; create a new EtcdArchive instead"

const char *eo_archive_cluster_name(const json_t *a);
void eo_archive_destination(const json_t *a, struct eo_snapshot_location *out);
int64_t eo_archive_segment_seconds(const json_t *a);
/* spec.segment.maxBytes in bytes; the default when absent or unparsable. */
int64_t eo_archive_segment_bytes(const json_t *a);
/* spec.retention in whole seconds (rounded up), 0 when absent or unparsable. */
int64_t eo_archive_retention_seconds(const json_t *a);
int64_t eo_archive_lag_threshold_seconds(const json_t *a);

/* The CRD's rules: 0, or -1 with the rule's message in msg. */
int eo_archive_validate(const json_t *a, char *msg, size_t n);

#endif
