/*
 * desired/archive.h - the archiver Deployment of an EtcdArchive (pure), issue 20 item 1.
 *
 * The Deployment <archive>-archiver runs one replica of the operator image as
 * `etcd-operator archive-agent` against the cluster's members (their client URLs: the agent
 * takes its base snapshots from the leader it finds among them, and resumes its watch at the
 * next one when a stream drops), writing into the destination PVC mounted at
 * EO_SNAPSHOT_PVC_MOUNT_PATH (--dir <mount>[/<subPath>]). Strategy Recreate: the old Pod is
 * gone before a new one starts, so two archivers never write one directory.
 *
 * Credentials are the snapshot Job's (desired/snapshot_job.h): the CA bundle and, with mTLS,
 * the operator client certificate mounted read-only (eo_desired_agent_etcd_tls); with
 * spec.auth the root password in the environment variable EO_SNAPSHOT_ENV_PASSWORD from the
 * cluster's credentials Secret (valueFrom secretKeyRef), named to the agent by --password-env.
 *
 * The agent serves GET /status on EO_ARCHIVE_STATUS_PORT (agent/archive.h), its readiness * probe
 * and what the operator polls. Pod: restricted Pod security (non-root; user, group and fsGroup
 * eo_desired_pod_uid(o), none of the three in auto mode; fsGroupChangePolicy OnRootMismatch;
 * seccomp RuntimeDefault, no privilege escalation, all capabilities dropped, read-only root
 * filesystem), no service account token, requests 50m/64Mi, memory limit 256Mi;
 * terminationMessagePolicy FallbackToLogsOnError (a crash's log tail reaches the status).
 *
 * Labels: the Deployment carries the cluster's labels plus EO_LABEL_ARCHIVE=<archive>; its Pod
 * only managed-by, EO_LABEL_ARCHIVE and EO_LABEL_SNAPSHOT_OF=<cluster> (what the cluster's
 * NetworkPolicy admits to the client port). Owner: the EtcdArchive (controller). The
 * annotation EO_ANNOTATION_ARCHIVER_HASH is the hash of the built spec: the controller
 * replaces a Deployment whose hash differs.
 */
#ifndef EO_DESIRED_ARCHIVE_H
#define EO_DESIRED_ARCHIVE_H

#include <stddef.h>

#include <jansson.h>

#include "api/names.h"
#include "desired/desired.h"

#define EO_ARCHIVE_CONTAINER	    "archive-agent"
#define EO_ANNOTATION_ARCHIVER_HASH EO_API_GROUP "/archiver-hash"

/*
 * The Deployment of archive (an EtcdArchive with name, namespace, uid and a pvc destination) * for
 * cluster, run with image as the user o says (NULL: the default), reaching etcd through
 * endpoints[0..n). New reference, or NULL when an argument is missing (no endpoint, no image, no
 * pvc destination) or on OOM.
 */
json_t *eo_desired_archiver(const json_t *archive, const json_t *cluster, const char *image,
			    const struct eo_desired_opts *o,
			    const char (*endpoints)[EO_DESIRED_URL_MAX], size_t n_endpoints);

/* The archiver hash annotation of obj, NULL when it has none. */
const char *eo_desired_archiver_hash(const json_t *obj);

#endif
