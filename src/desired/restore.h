/*
 * desired/restore.h - the init containers of a seed member that restores a snapshot (pure).
 *
 * A seed EtcdMember with spec.restore.source gets, before etcd:
 *
 *   restore          the operator image: `etcd-operator restore-agent` stages the snapshot
 *                    (S3: HeadObject, ~2x free-space check, download, integrity hash; a PVC
 *                    source is checked in place) and copies itself to the emptyDir /agent
 *   restore-rebuild  the cluster's etcd image, started through /agent's dynamic loader:
 *                    `etcd-operator restore-rebuild` runs that image's own etcdutl to
 *                    rebuild the data dir with the seed's name, initial cluster, token and
 *                    peer URL (so a snapshot restores into any etcd minor the operator runs)
 *
 * A source.archive (an archive-agent directory on a PVC) has three steps:
 *
 *   restore          `restore-agent --install-self` only: copies itself to /agent
 *   restore-replay   the cluster's etcd image (it has etcd and etcdutl), through /agent's
 *                    loader: `etcd-operator archive-replay` restores the archive's base into a
 *                    private etcd under the staging dir, replays the archived revisions up
 *                    to the target and writes the snapshot at the point to the staging dir
 *                    (free space checked; integrity hash checked; a restart that finds it
 *                    written and intact reports it again instead of replaying)
 *   restore-rebuild  as above, on that staged snapshot (then the staging dir is removed)
 *
 * The replay's result ({"revision","time",...}) is its container's termination message.
 *
 * All do nothing once the data dir holds member/, so a restarted Pod never restores twice.
 * S3 credentials: the Secret is mounted at EO_RESTORE_CREDENTIALS_DIR (the operator never
 * reads it). A PVC source: the claim mounted read-only at EO_RESTORE_SOURCE_DIR.
 */
#ifndef EO_DESIRED_RESTORE_H
#define EO_DESIRED_RESTORE_H

#include <stdbool.h>

#include <jansson.h>

#include "desired/desired.h"

#define EO_RESTORE_CONTAINER	     "restore"
#define EO_RESTORE_REBUILD_CONTAINER "restore-rebuild"
#define EO_RESTORE_REPLAY_CONTAINER  "restore-replay"
#define EO_RESTORE_AGENT_DIR	     "/agent"
#define EO_RESTORE_CREDENTIALS_DIR   "/var/run/etcd-operator/s3-credentials"
#define EO_RESTORE_SOURCE_DIR	     "/restore"
#define EO_RESTORE_STAGING_DIR	     "/var/lib/etcd/.restore"
#define EO_RESTORE_TERMINATION_LOG   "/dev/termination-log"
/* An archive restore: what archive-replay writes (the agent's staging dir + STAGED_NAME). */
#define EO_RESTORE_REPLAY_OUT	   EO_RESTORE_STAGING_DIR "/snapshot.db"
#define EO_RESTORE_REPLAY_WORK_DIR EO_RESTORE_STAGING_DIR "/replay"

/* True when member is a seed (spec.bootstrap) with spec.restore.source (s3, pvc or archive). */
bool eo_desired_member_restores(const json_t *member);

/*
 * Adds the two init containers and their volumes to pod_spec (a Pod spec object that
 * already has "volumes"). etcd_image is the member's etcd image. 0, or -1 when something
 * is missing (o->operator_image, the member's initial cluster) or on allocation failure.
 */
int eo_desired_restore_init(const json_t *member, const struct eo_desired_opts *o,
			    const char *etcd_image, json_t *pod_spec);

/*
 * The claimName of the restore source PVC that pod (a built member Pod) mounts, or NULL when
 * it mounts none. Borrowed from pod.
 */
const char *eo_desired_restore_claim(const json_t *pod);

#endif
