/*
 * EtcdCluster: typed read access over the object's jansson tree, the CRD
 * defaults, and validation that re-checks every rule of the CRD.
 *
 * Accessors take the whole EtcdCluster object and return values with the CRD
 * defaults applied, so an object read straight from the apiserver (already
 * defaulted) and one built by hand in a test read the same. Returned strings
 * and json_t pointers are borrowed from the tree: valid while the tree is
 * neither modified nor freed, never to be freed or decref'd by the caller,
 * unless a function says it returns a new reference.
 */
#ifndef EO_API_CLUSTER_H
#define EO_API_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "api/quantity.h"
#include "api/snapshot.h"

/* CRD defaults. */
#define EO_DEFAULT_REPLICAS		     3
#define EO_DEFAULT_STORAGE_SIZE		     "1Gi"
#define EO_DEFAULT_PROGRESS_DEADLINE_SECONDS 600
#define EO_DEFAULT_ISSUER_KIND		     "Issuer"
/* Operator-side default of an empty spec.resources (requests only, no limits). */
#define EO_DEFAULT_CPU_REQUEST	  "100m"
#define EO_DEFAULT_MEMORY_REQUEST "128Mi"

#define EO_STORAGE_MEDIUM_MEMORY "Memory"
#define EO_CLUSTER_NAME_MAX	 56
/*
 * Upper bound of spec.replicas. etcd recommends 3, 5 or 7 voters; 9 still allows
 * three members in each of three zones, and refuses a typo such as 1000.
 */
#define EO_MAX_REPLICAS 9
/* Bounds of spec.additionalMetadata (EtcdCluster and EtcdMember). */
#define EO_EXTRA_LABELS_MAX	      64
#define EO_EXTRA_ANNOTATIONS_MAX      32
#define EO_LABEL_VALUE_MAX	      63
#define EO_EXTRA_ANNOTATION_VALUE_MAX 4096

/*
 * Validation messages. Those of CEL rules are the exact x-kubernetes-validations
 * messages of the CRD (a unit test checks that each appears in the CRD file).
 */
#define EO_MSG_CLUSTER_NAME                                                                        \
	"metadata.name must start with a letter, hold only lowercase letters, digits and '-', "    \
	"and be at most 56 characters long (it becomes part of Service, Pod and PVC names)"
#define EO_MSG_REPLICAS_MAX                                                                        \
	"spec.replicas must be at most 9: etcd recommends 3, 5 or 7 voting members, and every "    \
	"member beyond that slows each write without a useful gain in fault tolerance"
#define EO_MSG_LABEL_KEY                                                                           \
	"spec.additionalMetadata.labels: every key must be a valid label key: an optional DNS "    \
	"subdomain prefix of at most 253 characters and '/', then a name of 1 to 63 letters, "     \
	"digits, '-', '_' or '.' that starts and ends with a letter or digit"
#define EO_MSG_LABEL_VALUE                                                                         \
	"spec.additionalMetadata.labels: every value must be empty or 1 to 63 letters, digits, "   \
	"'-', '_' or '.' that starts and ends with a letter or digit"
#define EO_MSG_ANNOTATION_KEY                                                                      \
	"spec.additionalMetadata.annotations: every key must be a valid annotation key: an "       \
	"optional DNS subdomain prefix of at most 253 characters and '/', then a name of 1 to 63 " \
	"letters, digits, '-', '_' or '.' that starts and ends with a letter or digit"
#define EO_MSG_VERSION                                                                             \
	"spec.version must be an etcd release number such as 3.6.11 (digits only, no leading v, "  \
	"no tags such as latest)"
/* The CRD's second rule on spec.version: etcd 3.4 or newer. */
#define EO_MSG_VERSION_MIN                                                                         \
	"spec.version must be 3.4.0 or newer: older etcd has no learners and no /v3 gateway (3.5 " \
	"or newer is recommended)"
#define EO_VERSION_MIN_MAJOR 3
#define EO_VERSION_MIN_MINOR 4
#define EO_MSG_MEMORY_PAUSE                                                                        \
	"spec.replicas=0 with spec.storage.medium=Memory is unsupported: a paused memory-backed "  \
	"member loses its data together with its Pod and could never resume; delete and "          \
	"recreate the cluster instead"
#define EO_MSG_MEMORY_SIZE                                                                         \
	"spec.storage.size must be greater than zero when spec.storage.medium=Memory (it is the "  \
	"size limit of each member's tmpfs)"
#define EO_MSG_PVC_SIZE                                                                            \
	"spec.storage.size must be greater than zero (it is the capacity requested for each "      \
	"member's PersistentVolumeClaim)"
#define EO_MSG_SIZE_SHRINK "spec.storage.size cannot be shrunk"
#define EO_MSG_MEDIUM_IMMUTABLE                                                                    \
	"spec.storage.medium is immutable; delete and recreate the cluster to change the "         \
	"storage backend"
#define EO_MSG_TLS_ADD_REMOVE                                                                      \
	"spec.tls cannot be added to or removed from an existing cluster; delete and recreate"
#define EO_MSG_TLS_IMMUTABLE                                                                       \
	"spec.tls is immutable; delete and recreate the cluster to change its TLS configuration"
#define EO_MSG_AUTH_ADD_REMOVE                                                                     \
	"spec.auth cannot be added to or removed from an existing cluster; delete and recreate"
#define EO_MSG_AUTH_IMMUTABLE                                                                      \
	"spec.auth is immutable; delete and recreate the cluster to change its authentication "    \
	"settings"
#define EO_MSG_AUTH_NEEDS_TLS                                                                      \
	"spec.auth.enabled requires spec.tls.client (credentials must not travel over a "          \
	"plaintext connection)"
#define EO_MSG_AUTH_NEEDS_SECRET "spec.auth.enabled requires spec.auth.rootCredentialsSecretRef"
#define EO_MSG_BOOTSTRAP_ADD_REMOVE                                                                \
	"spec.bootstrap cannot be added to or removed from an existing cluster; it is only read "  \
	"at the first bootstrap"
#define EO_MSG_BOOTSTRAP_IMMUTABLE                                                                 \
	"spec.bootstrap is immutable; it is only read at the first bootstrap"
#define EO_MSG_RESTORE_MEMORY                                                                      \
	"spec.bootstrap.restore is unsupported with spec.storage.medium=Memory: every restart "    \
	"of the seed Pod would restore the snapshot again; use persistent storage to restore"
#define EO_MSG_CLIENT_TLS_ONE_OF                                                                   \
	"exactly one of spec.tls.client.serverSecretRef and spec.tls.client.certManager must be "  \
	"set"
#define EO_MSG_CLIENT_TLS_CM_OPCLIENT                                                              \
	"spec.tls.client.operatorClientSecretRef cannot be combined with "                         \
	"spec.tls.client.certManager; use certManager.operatorClientIssuerRef"
#define EO_MSG_PEER_TLS_ONE_OF                                                                     \
	"exactly one of spec.tls.peer.secretRef and spec.tls.peer.certManager must be set"
#define EO_MSG_RESTORE_S3_KEY                                                                      \
	"spec.bootstrap.restore.source.s3.key must be the exact, non-empty object key of the "     \
	"snapshot"
#define EO_MSG_RESTORE_PVC_SUBPATH                                                                 \
	"spec.bootstrap.restore.source.pvc.subPath must be the exact, non-empty path of the "      \
	"snapshot file"
/* Not a CEL message: the CRD refuses a malformed checksum with an OpenAPI pattern. */
#define EO_MSG_RESTORE_CHECKSUM                                                                    \
	"spec.bootstrap.restore.source.expectedChecksum must be sha256: followed by 64 "           \
	"lower-case hex digits, as EtcdSnapshot status.artifact.checksum writes it"

/* --- metadata --- */
const char *eo_cluster_name(const json_t *cluster);
const char *eo_cluster_namespace(const json_t *cluster);
const char *eo_cluster_uid(const json_t *cluster);
/* metadata.annotations[key], NULL when absent or not a string. */
const char *eo_cluster_annotation(const json_t *cluster, const char *key);
/*
 * Name of the headless Service that names the members: the headless-service-name
 * annotation of an adopted cluster, else "<cluster>". 0, or -1 when it does not fit.
 */
int eo_cluster_headless_service(const json_t *cluster, char *buf, size_t n);
/* True while `kubectl etcd migrate` holds the cluster (the migrating annotation). */
bool eo_cluster_migrating(const json_t *cluster);
/* metadata.generation, or 0 when absent. */
int64_t eo_cluster_generation(const json_t *cluster);
/* True when metadata.deletionTimestamp is set. */
bool eo_cluster_is_deleting(const json_t *cluster);

/* --- spec --- */
/* spec.deletionPolicy values; absent means Delete. */
#define EO_DELETION_POLICY_DELETE "Delete"
#define EO_DELETION_POLICY_RETAIN "Retain"
/* True when spec.deletionPolicy is Retain: the data PVCs outlive the EtcdCluster. */
bool eo_cluster_retains_data(const json_t *cluster);
/* spec.replicas, default 3. */
int32_t eo_cluster_replicas(const json_t *cluster);
/* spec.version ("3.6.11"), or NULL when missing (the CRD requires it). */
const char *eo_cluster_version(const json_t *cluster);
/*
 * Member image "<repository>:v<version>"; repository NULL or "" means
 * quay.io/coreos/etcd (the operator's --etcd-image-repository). 0 or -1.
 */
int eo_cluster_etcd_image(const json_t *cluster, const char *repository, char *buf, size_t n);
/* spec.progressDeadlineSeconds, default 600. */
int32_t eo_cluster_progress_deadline_seconds(const json_t *cluster);
/* spec.nodeLossGracePeriod when absent: 5 minutes. */
#define EO_DEFAULT_NODE_LOSS_GRACE_SECONDS 300

/*
 * spec.nodeLossGracePeriod (a duration such as "5m", "90s", "1h") in whole seconds: how long a
 * member's node may stay NotReady, gone or cordoned before the member is replaced elsewhere
 * (plan/nodeloss.h). EO_DEFAULT_NODE_LOSS_GRACE_SECONDS when absent or not a duration.
 */
long eo_cluster_node_loss_grace_seconds(const json_t *cluster);

/* Storage of a cluster, a member, or status.observed, defaults applied. */
struct eo_storage {
	char size[64];		   /* as written ("1Gi"); integers rendered in decimal */
	struct eo_quantity size_q; /* parsed size; zero when size does not parse */
	bool size_valid;	   /* size parsed as a quantity */
	bool memory;		   /* medium == "Memory" */
	bool has_class;		   /* storageClassName present (may be "") */
	const char *class_name;	   /* storageClassName, NULL when absent */
};
/* Read a storage object (may be NULL: all defaults). */
void eo_storage_read(const json_t *storage, struct eo_storage *out);
void eo_cluster_storage(const json_t *cluster, struct eo_storage *out);

/* TLS settings (spec.tls). */
enum eo_tls_source {
	EO_TLS_NONE = 0,     /* plaintext */
	EO_TLS_SECRET,	     /* user-provided Secrets */
	EO_TLS_CERT_MANAGER, /* operator-requested cert-manager Certificates */
};
struct eo_issuer_ref {
	const char *name; /* NULL when absent */
	const char *kind; /* "Issuer" (default) or "ClusterIssuer" */
};
/*
 * spec.tls.certificateAuthority: where the cert-manager Certificates' CA comes from.
 * UNSET leaves the choice to the planner (plan/certs.h: a new cluster gets its own CA, a
 * cluster whose Certificates an older operator issued keeps its issuer).
 */
enum eo_tls_ca {
	EO_TLS_CA_UNSET = 0,
	EO_TLS_CA_PER_CLUSTER, /* "PerCluster": a CA of this cluster's own, made by the operator */
	EO_TLS_CA_ISSUER,      /* "Issuer": the leaves straight from the issuers spec.tls names */
};
#define EO_TLS_CA_PER_CLUSTER_NAME "PerCluster"
#define EO_TLS_CA_ISSUER_NAME	   "Issuer"
struct eo_cluster_tls {
	enum eo_tls_source client;
	bool client_mtls;			     /* operator presents a client certificate */
	const char *server_secret;		     /* EO_TLS_SECRET: serverSecretRef.name */
	const char *operator_client_secret;	     /* EO_TLS_SECRET with mTLS */
	struct eo_issuer_ref server_issuer;	     /* EO_TLS_CERT_MANAGER */
	struct eo_issuer_ref operator_client_issuer; /* EO_TLS_CERT_MANAGER with mTLS */
	enum eo_tls_source peer;
	const char *peer_secret;	  /* EO_TLS_SECRET */
	struct eo_issuer_ref peer_issuer; /* EO_TLS_CERT_MANAGER */
	enum eo_tls_ca ca;		  /* spec.tls.certificateAuthority */
};
void eo_cluster_tls(const json_t *cluster, struct eo_cluster_tls *out);
/*
 * Names of the Secrets that hold the material, whatever the source: the
 * referenced Secret (BYO) or <cluster>-server-tls / -operator-client-tls /
 * -peer-tls (cert-manager). 0, or -1 when that plane has no such Secret
 * (plaintext, no mTLS) or the name does not fit.
 */
int eo_cluster_server_secret_name(const json_t *cluster, char *buf, size_t n);
int eo_cluster_operator_client_secret_name(const json_t *cluster, char *buf, size_t n);
int eo_cluster_peer_secret_name(const json_t *cluster, char *buf, size_t n);
/* True when any TLS plane uses cert-manager (the operator must find cert-manager.io/v1). */
bool eo_cluster_uses_cert_manager(const json_t *cluster);

/* spec.auth.enabled (default false) and the root credentials Secret name (or NULL). */
bool eo_cluster_auth_enabled(const json_t *cluster);
const char *eo_cluster_auth_secret(const json_t *cluster);

/* spec.bootstrap.restore: true and *out filled when set; false otherwise. */
bool eo_cluster_restore_source(const json_t *cluster, struct eo_snapshot_location *out);

/*
 * Effective etcd container resources: spec.resources when it sets any request,
 * limit or claim, else {"requests":{"cpu":"100m","memory":"128Mi"}}. Returns a
 * NEW reference (caller json_decref's it), or NULL on allocation failure.
 */
json_t *eo_cluster_resources(const json_t *cluster);
/* The default resources object above; NEW reference. */
json_t *eo_api_default_resources(void);

/* Pass-through fields, borrowed, NULL when absent. */
const json_t *eo_cluster_affinity(const json_t *cluster);
const json_t *eo_cluster_topology_spread_constraints(const json_t *cluster);
const json_t *eo_cluster_image_pull_secrets(const json_t *cluster);
const json_t *eo_cluster_extra_labels(const json_t *cluster);	   /* additionalMetadata.labels */
const json_t *eo_cluster_extra_annotations(const json_t *cluster); /* .annotations */

/* spec.options (a member's spec.options reads the same). 0 / NULL mean etcd's default. */
struct eo_etcd_options {
	int64_t quota_backend_bytes;
	const char *auto_compaction_mode;      /* "periodic" | "revision" | NULL */
	const char *auto_compaction_retention; /* NULL when absent */
	int64_t snapshot_count;
};
void eo_options_read(const json_t *options, struct eo_etcd_options *out);
void eo_cluster_options(const json_t *cluster, struct eo_etcd_options *out);

/* --- status --- */
int32_t eo_cluster_ready_members(const json_t *cluster);     /* 0 when absent */
const char *eo_cluster_cluster_id(const json_t *cluster);    /* NULL before bootstrap */
const char *eo_cluster_cluster_token(const json_t *cluster); /* NULL before first reconcile */
/* status.caBundleDigest: the CA bundles the members trust, as last read; NULL when absent. */
const char *eo_cluster_ca_bundle_digest(const json_t *cluster);
bool eo_cluster_auth_latched(const json_t *cluster);	  /* status.authEnabled */
const json_t *eo_cluster_observed(const json_t *cluster); /* status.observed or NULL */
/* status.progressDeadline: true and *out set when present and valid. */
bool eo_cluster_progress_deadline(const json_t *cluster, time_t *out);

/* --- defaults and validation --- */
/*
 * Apply the CRD's defaults to the object in place (replicas, storage size and
 * medium, progressDeadlineSeconds, issuer kinds), as the apiserver does on
 * write. Returns 0, or -1 on allocation failure or when spec is not an object.
 */
int eo_cluster_apply_defaults(json_t *cluster);

/*
 * Re-check every rule of the CRD (schema constraints the operator relies on
 * and all x-kubernetes-validations rules). old is the previous object for the
 * update-only rules (immutability, no shrinking), or NULL for a create. Both
 * are read with defaults applied. Returns 0 when valid, or -1 with the first
 * problem written to msg (n bytes, may be NULL); CEL rule failures use the
 * EO_MSG_* text above.
 */
int eo_cluster_validate(const json_t *cluster, const json_t *old, char *msg, size_t n);

/*
 * Check spec.additionalMetadata (am: that object, or NULL when absent) as the CRDs
 * of EtcdCluster and EtcdMember do: at most EO_EXTRA_LABELS_MAX labels and
 * EO_EXTRA_ANNOTATIONS_MAX annotations, label and annotation keys with the
 * Kubernetes key syntax, label values with the label value syntax, annotation
 * values of at most EO_EXTRA_ANNOTATION_VALUE_MAX bytes. 0 when valid, else -1
 * and the reason in msg (truncated to n).
 */
int eo_extra_metadata_validate(const json_t *am, char *msg, size_t n);

#endif
