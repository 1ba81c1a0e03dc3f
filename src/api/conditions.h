/*
 * Status conditions in the standard metav1.Condition shape:
 *   {type, status, observedGeneration, lastTransitionTime, reason, message}
 * kept in the "conditions" array of a status object, one entry per type.
 *
 * Also the condition types and reasons of the three kinds.
 */
#ifndef EO_API_CONDITIONS_H
#define EO_API_CONDITIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

/* Condition status values. */
#define EO_COND_TRUE	"True"
#define EO_COND_FALSE	"False"
#define EO_COND_UNKNOWN "Unknown"

/* EtcdCluster condition types. */
#define EO_COND_AVAILABLE   "Available"
#define EO_COND_PROGRESSING "Progressing"
#define EO_COND_DEGRADED    "Degraded"

/* EtcdCluster reasons. */
#define EO_REASON_QUORUM_HEALTHY     "QuorumHealthy"
#define EO_REASON_QUORUM_AVAILABLE   "QuorumAvailable"
#define EO_REASON_CLUSTER_DISCOVERED "ClusterDiscovered"
/* Event (Normal): the seed restored an archive; the message names the revision and time. */
#define EO_REASON_RESTORED_FROM_ARCHIVE	       "RestoredFromArchive"
#define EO_REASON_PAUSED		       "Paused"
#define EO_REASON_QUORUM_LOST		       "QuorumLost"
#define EO_REASON_CLUSTER_UNREACHABLE	       "ClusterUnreachable"
#define EO_REASON_BOOTSTRAP_FAILED	       "BootstrapFailed"
#define EO_REASON_DEADLINE_EXCEEDED	       "DeadlineExceeded"
#define EO_REASON_CERT_MANAGER_NOT_INSTALLED   "CertManagerNotInstalled"
#define EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED "AuthRequiredNotConfigured"
#define EO_REASON_AUTH_CREDENTIALS_REJECTED    "AuthCredentialsRejected"
#define EO_REASON_INITIAL_SNAPSHOT	       "InitialSnapshot"
#define EO_REASON_SPEC_CHANGED		       "SpecChanged"
#define EO_REASON_WAITING_FOR_SEED	       "WaitingForSeed"
#define EO_REASON_RETRY_AFTER_DEADLINE	       "RetryAfterDeadline"
#define EO_REASON_RECONCILED		       "Reconciled"
#define EO_REASON_MEMBERS_UNHEALTHY	       "MembersUnhealthy"
/*
 * Not in the seeds: set (Available=False, Progressing=False) when the spec
 * fails eo_cluster_validate(), i.e. a spec the apiserver should have refused
 * (CRD not upgraded, validation bypassed). The message is the rule's message.
 */
#define EO_REASON_INVALID_SPEC "InvalidSpec"
/*
 * Not in the seeds: the cluster's TLS material cannot be used (controller/tlsload.h). A
 * Secret named by spec.tls is not there (or the operator may not read it); a Secret lacks
 * tls.crt / tls.key / ca.crt, or holds a certificate that is expired, not yet valid, lacks an
 * extended key usage, does not match its key or does not chain to its CA bundle; or the TLS
 * handshake with etcd fails. Available=False before the cluster formed, Degraded=True after;
 * Progressing=False; nothing is created, deleted or removed while it lasts.
 */
#define EO_REASON_TLS_SECRET_NOT_FOUND "TLSSecretNotFound"
#define EO_REASON_TLS_SECRET_INVALID   "TLSSecretInvalid"
#define EO_REASON_TLS_HANDSHAKE_FAILED "TLSHandshakeFailed"
/*
 * Not in the seeds: an object the cluster needs under its own name (the headless Service
 * <cluster>, the client Service <cluster>-client, the PodDisruptionBudget or NetworkPolicy
 * <cluster>) exists but is not controlled by this EtcdCluster: another EtcdCluster's (the
 * client Service of cluster x is the headless Service of cluster x-client), a user's, or
 * one without an owner. It is never patched or deleted. Available=False before the cluster
 * formed, Degraded=True after; Progressing=False; nothing else is done while it lasts. Also
 * the reason of the Warning Event.
 */
#define EO_REASON_FOREIGN_OBJECT "ForeignObject"

/* EtcdMember condition types and reasons. */
#define EO_COND_READY			"Ready"
#define EO_COND_VERSION_DRIFTED		"VersionDrifted"
#define EO_COND_JOINED			"Joined"
#define EO_REASON_POD_READY		"PodReady"
#define EO_REASON_POD_NOT_READY		"PodNotReady"
#define EO_REASON_DISCOVERING_MEMBER_ID "DiscoveringMemberID"
/* The Pod is ready but etcd does not answer on the member's client port yet (extension). */
#define EO_REASON_NOT_SERVING "NotServing"
/* Ready=False: the member's PVC was lost or replaced after it ran (not in the seeds). */
#define EO_REASON_DATA_VOLUME_LOST "DataVolumeLost"
/*
 * Ready=False: the member's data dir has no write-ahead log under its intact PVC; the data
 * guard init container keeps etcd from starting under the member ID (not in the seeds).
 */
#define EO_REASON_DATA_DIR_LOST	   "DataDirLost"
#define EO_REASON_VERSION_MISMATCH "VersionMismatch"
#define EO_REASON_VERSION_MATCHED  "VersionMatched"
/* EO_REASON_PAUSED is shared with EtcdCluster. */

/* EtcdSnapshot: the single condition is EO_COND_READY; its reasons. */
#define EO_REASON_JOB_CREATED			"JobCreated"
#define EO_REASON_JOB_RUNNING			"JobRunning"
#define EO_REASON_JOB_FAILED			"JobFailed"
#define EO_REASON_SNAPSHOT_STORED		"SnapshotStored"
#define EO_REASON_CLUSTER_NOT_FOUND		"ClusterNotFound"
#define EO_REASON_OPERATOR_IMAGE_NOT_CONFIGURED "OperatorImageNotConfigured"
#define EO_REASON_AUTH_LATCH_TIMEOUT		"AuthLatchTimeout"
#define EO_REASON_SNAPSHOT_JOB_LOST		"SnapshotJobLost"

/* What to set. All strings are borrowed for the duration of the call. */
struct eo_condition {
	const char *type;	     /* required */
	const char *status;	     /* EO_COND_TRUE/FALSE/UNKNOWN, required */
	const char *reason;	     /* required, CamelCase, non-empty */
	const char *message;	     /* NULL means "" */
	int64_t observed_generation; /* < 0 leaves the field out */
};

/*
 * Set condition c in status->conditions (creating the array if needed).
 *
 * lastTransitionTime is set to now when the condition is new or its status
 * changes, and kept otherwise; reason, message and observedGeneration are
 * always brought up to date. Returns 1 when anything changed, 0 when the
 * condition was already exactly so (callers skip the status write then), or
 * -EINVAL (bad argument) / -ENOMEM. status must be a JSON object and is
 * modified in place.
 */
int eo_condition_set(json_t *status, const struct eo_condition *c, time_t now);

/* The condition of that type in status, borrowed, or NULL. */
json_t *eo_condition_find(const json_t *status, const char *type);

/* Its status string ("True", ...), or NULL when absent. */
const char *eo_condition_status(const json_t *status, const char *type);

/* Its reason, or NULL when absent. */
const char *eo_condition_reason(const json_t *status, const char *type);

/* True when the condition exists and its status is "True". */
bool eo_condition_is_true(const json_t *status, const char *type);

/* Condition type of status is True; *message (when not NULL) gets its message, NULL if none. */
bool eo_condition_true_message(const json_t *status, const char *type, const char **message);

/*
 * True when the condition exists with the given status (and reason, unless
 * reason is NULL).
 */
bool eo_condition_matches(const json_t *status, const char *type, const char *cond_status,
			  const char *reason);

/* Remove the condition of that type. Returns 1 if removed, 0 if absent. */
int eo_condition_remove(json_t *status, const char *type);

#endif
