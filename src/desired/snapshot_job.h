/*
 * desired/snapshot_job.h - the Job of an EtcdSnapshot (pure).
 *
 * The Job <snapshot>-snapshot runs the operator image as `etcd-operator snapshot-agent`
 * against the given etcd client URLs and stores the snapshot where spec.destination says:
 *
 *   S3   --s3-* flags from spec.destination.s3; the credentials Secret is mounted at
 *        EO_SNAPSHOT_CREDENTIALS_DIR (the agent reads AWS_ACCESS_KEY_ID and
 *        AWS_SECRET_ACCESS_KEY from there; the operator never reads the Secret)
 *   PVC  the claim mounted at EO_SNAPSHOT_PVC_MOUNT_PATH, --pvc-dir <mount>[/<subPath>]
 *
 * A cluster with spec.tls.client: ca.crt of the server Secret (alone) at
 * EO_SNAPSHOT_ETCD_CA_DIR, --cacert; with mTLS also tls.crt and tls.key of the operator client
 * Secret at EO_SNAPSHOT_ETCD_CLIENT_DIR, --cert and --key. Read-only, mode 0440.
 *
 * A cluster with spec.auth.enabled: the environment variable EO_SNAPSHOT_ENV_PASSWORD of the
 * agent comes from the key "password" of spec.auth.rootCredentialsSecretRef (valueFrom
 * secretKeyRef): the agent authenticates as root with it. Never an argument.
 *
 * Settings: backoffLimit EO_SNAPSHOT_JOB_BACKOFF_LIMIT, activeDeadlineSeconds
 * EO_SNAPSHOT_JOB_DEADLINE_SECONDS, ttlSecondsAfterFinished EO_SNAPSHOT_JOB_TTL_SECONDS,
 * restartPolicy Never, no service account token, the restricted Pod security profile
 * (non-root, user, group and fsGroup eo_desired_pod_uid(o), none of the three in auto mode,
 * fsGroupChangePolicy OnRootMismatch, seccomp RuntimeDefault, no privilege escalation, all
 * capabilities dropped, read-only root filesystem), requests 50m/64Mi, memory limit 256Mi. The
 * agent writes its result line to /dev/termination-log; terminationMessagePolicy
 * FallbackToLogsOnError puts the tail of its log there when it fails.
 *
 * Labels: the Job carries the cluster's labels (eo_desired_cluster_labels) plus
 * EO_LABEL_SNAPSHOT=<snapshot>; its Pod only managed-by, EO_LABEL_SNAPSHOT and
 * EO_LABEL_SNAPSHOT_OF=<cluster> (what the cluster's NetworkPolicy admits), so that
 * selectors on the cluster label (Services, `kubectl get pod -l ...cluster=`) never pick
 * the agent. Owner: the EtcdSnapshot (controller, blockOwnerDeletion).
 */
#ifndef EO_DESIRED_SNAPSHOT_JOB_H
#define EO_DESIRED_SNAPSHOT_JOB_H

#include <stddef.h>

#include <jansson.h>

#include "desired/desired.h"
#include "snapshot/contract.h" /* EO_SNAPSHOT_ENV_PASSWORD */

#define EO_SNAPSHOT_CONTAINER	    "snapshot-agent"
#define EO_PRUNE_CONTAINER	    "snapshot-prune"
#define EO_SNAPSHOT_CREDENTIALS_DIR "/var/run/etcd-operator/s3-credentials"
#define EO_SNAPSHOT_ETCD_CA_DIR	    "/var/run/etcd-operator/etcd-ca"
#define EO_SNAPSHOT_ETCD_CLIENT_DIR "/var/run/etcd-operator/etcd-client"

/*
 * The Job of snapshot (an EtcdSnapshot with metadata name, namespace, uid) for the cluster
 * (its EtcdCluster, for the labels), run with image as the user o says (NULL: the default),
 * reaching etcd through endpoints[0..n). New reference, or NULL when an argument is missing
 * (no endpoint, no image, no destination) or on allocation failure.
 */
json_t *eo_desired_snapshot_job(const json_t *snapshot, const json_t *cluster, const char *image,
				const struct eo_desired_opts *o,
				const char (*endpoints)[EO_DESIRED_URL_MAX], size_t n_endpoints);

/*
 * The etcd TLS of an agent (above: the CA bundle alone, and with mTLS the operator client
 * certificate): volumes, read-only mounts and --cacert/--cert/--key args appended for a
 * cluster whose client API is TLS; nothing for a plaintext one. *ok false on OOM. Shared by
 * the snapshot Job and the EtcdArchive's archiver (desired/archive.h).
 */
/*
 * Sets ctr's env to the cluster's root password from its auth Secret as
 * EO_SNAPSHOT_ENV_PASSWORD (the agents' --password-env), handed over by the kubelet, never an
 * argument. 0, or -1 (out of memory).
 */
int eo_desired_agent_password_env(const json_t *cluster, json_t *ctr);

void eo_desired_agent_etcd_tls(const json_t *cluster, json_t *args, json_t *volumes, json_t *mounts,
			       bool *ok);

/*
 * The Job <snapshot>-prune that deletes what snapshot (an EtcdSnapshot an
 * EtcdSnapshotSchedule created) stored: `etcd-operator snapshot-prune` with the same
 * destination flags, volumes and credentials mount as the snapshot Job, and the same Job
 * settings and security profile. The agent deletes only an object or file stamped with the
 * snapshot's UID. Labels: managed-by, EO_LABEL_SNAPSHOT=<snapshot>, EO_LABEL_SCHEDULE=
 * <schedule> (its Pod: managed-by and EO_LABEL_SCHEDULE). Owner: the EtcdSnapshot.
 * New reference, or NULL when an argument is missing or on allocation failure.
 */
json_t *eo_desired_prune_job(const json_t *snapshot, const char *schedule, const char *image,
			     const struct eo_desired_opts *o);

#endif
