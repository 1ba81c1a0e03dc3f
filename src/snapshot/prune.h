/*
 * `etcd-operator snapshot-prune`: delete what one EtcdSnapshot stored, and nothing else.
 *
 * Run by the Job <snapshot>-prune that an EtcdSnapshotSchedule creates for a snapshot
 * beyond its retention (desired/snapshot_job.h). The target is found exactly as the
 * snapshot agent wrote it: S3 key <prefix>/<name>.db, or <dir>/<name>.db with its
 * <name>.db.uid stamp on a PVC. It is deleted only when stamped with --snapshot-uid:
 *
 *   target                                   outcome (exit code)
 *   absent                                   nothing to do (0); an orphan .uid stamp of
 *                                            ours is removed
 *   present, stamped with our UID            deleted (0): S3 DeleteObject; on a PVC the
 *                                            file, then its stamp, each followed by a
 *                                            directory fsync
 *   present, other UID or no stamp           kept, with a message saying why (0)
 *   S3 HEAD refused (403) or failing         error (1): nothing is deleted blind
 *
 * The last line on stdout (and in --termination-log) says what happened, for the
 * schedule's Event. S3 credentials come from --credentials-dir (the mounted Secret) as
 * for the snapshot agent; the operator never reads them. The command itself (flags,
 * credentials, termination log) is agent/prune.c, run through agent/cli.c like the other
 * agent commands.
 */
#ifndef EO_SNAPSHOT_PRUNE_H
#define EO_SNAPSHOT_PRUNE_H

#include <stddef.h>

#include "snapshot/s3.h"

/*
 * The PVC half: prune <dir>/<name>.db of the snapshot with uid. 0 with what happened in
 * msg, or -1 with the error in msg.
 */
int eo_prune_file(const char *dir, const char *name, const char *uid, char *msg, size_t cap);
/* The S3 half: prune object key of the snapshot with uid; same contract. */
int eo_prune_s3(eo_s3 *s3, const char *key, const char *uid, char *msg, size_t cap);

#endif
