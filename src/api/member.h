/*
 * EtcdMember: typed read access, CRD defaults and validation. Same ownership
 * rules as api/cluster.h: pointers are borrowed from the object's tree.
 */
#ifndef EO_API_MEMBER_H
#define EO_API_MEMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/cluster.h"
#include "api/snapshot.h"

/* Validation messages (also in the CRD). */
#define EO_MSG_MEMBER_CLUSTER_NAME_IMMUTABLE "spec.clusterName is immutable"
#define EO_MSG_MEMBER_MEDIUM_IMMUTABLE	     "spec.storage.medium is immutable"
#define EO_MSG_MEMBER_INITIAL_CLUSTER	     "spec.initialCluster cannot change once it is set"

const char *eo_member_name(const json_t *member);
const char *eo_member_namespace(const json_t *member);
const char *eo_member_uid(const json_t *member);

/* metadata.generation, or 0 when absent. */
int64_t eo_member_generation(const json_t *member);
bool eo_member_is_deleting(const json_t *member);
/* True when metadata.finalizers holds the member-cleanup finalizer. */
bool eo_member_has_finalizer(const json_t *member);

/* spec */
const char *eo_member_cluster_name(const json_t *member);
/*
 * The Service that names the member (Pod subdomain, the host in its peer and client URLs):
 * the headless-service-name annotation of an adopted member (api/names.h), else its
 * cluster's name. NULL when neither is set.
 */
const char *eo_member_service(const json_t *member);
/* The data-dir-subpath annotation of an adopted member; NULL when absent. */
const char *eo_member_data_subpath(const json_t *member);
/* The adopted-pod-uid annotation of an adopted member; NULL when absent. */
const char *eo_member_adopted_pod_uid(const json_t *member);
/* True when pod is the legacy Pod the member adopted (its UID is adopted-pod-uid). */
bool eo_member_pod_adopted(const json_t *member, const json_t *pod);
const char *eo_member_version(const json_t *member);
void eo_member_storage(const json_t *member, struct eo_storage *out);
bool eo_member_bootstrap(const json_t *member); /* seed marker, default false */
/* spec.initialCluster, "" when absent (a pending member). */
const char *eo_member_initial_cluster(const json_t *member);
/* True while spec.initialCluster is empty: no Pod is created yet. */
bool eo_member_is_pending(const json_t *member);
const char *eo_member_cluster_token(const json_t *member); /* "" when absent */
bool eo_member_dormant(const json_t *member);
void eo_member_options(const json_t *member, struct eo_etcd_options *out);
/* spec.resources if it sets anything, else the default; NEW reference. */
json_t *eo_member_resources(const json_t *member);
const json_t *eo_member_affinity(const json_t *member);
const json_t *eo_member_topology_spread_constraints(const json_t *member);
const json_t *eo_member_image_pull_secrets(const json_t *member);
const json_t *eo_member_extra_labels(const json_t *member);
/* spec.tolerations, spec.nodeSelector, spec.priorityClassName (NULL when absent). */
const json_t *eo_member_tolerations(const json_t *member);
const json_t *eo_member_node_selector(const json_t *member);
const char *eo_member_priority_class_name(const json_t *member);
const json_t *eo_member_extra_annotations(const json_t *member);

struct eo_member_tls {
	const char *client_server_secret; /* NULL: plaintext client API */
	bool client_mtls;
	const char *peer_secret; /* NULL: plaintext peers (unless peer_auto_tls) */
	bool peer_auto_tls;
	const char *peer_allowed_hostname; /* NULL: any peer certificate of the CA */
};
void eo_member_tls(const json_t *member, struct eo_member_tls *out);
/* spec.restore.source: true and *out filled when set (seed of a restored cluster). */
bool eo_member_restore_source(const json_t *member, struct eo_snapshot_location *out);

/* status ("" or false when absent) */
const char *eo_member_member_id(const json_t *member);
const char *eo_member_pod_name(const json_t *member);
const char *eo_member_pod_uid(const json_t *member);
bool eo_member_is_voter(const json_t *member);
const char *eo_member_pvc_name(const json_t *member);
const char *eo_member_running_version(const json_t *member);
/* True when the Ready condition is True. */
bool eo_member_is_ready(const json_t *member);

/* Apply the CRD defaults in place (replicas 1, storage size/medium). 0 or -1. */
int eo_member_apply_defaults(json_t *member);

/*
 * Re-check the CRD rules: clusterName (1..63 characters) and version present
 * and well formed, replicas exactly 1, storage size a quantity and medium ""
 * or Memory, restore source shape; with old != NULL clusterName and medium
 * unchanged and initialCluster unchanged once set. 0, or -1 with msg.
 */
int eo_member_validate(const json_t *member, const json_t *old, char *msg, size_t n);

#endif
