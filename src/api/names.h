/*
 * Names of the etcd-operator API: group/version, kinds and plurals, label and
 * annotation keys, the finalizer, ports, defaults, and helpers that build the
 * names of the objects the operator creates for a cluster.
 *
 * Every name helper writes a NUL-terminated string into a caller buffer of
 * size n and returns 0, or -1 when an argument is NULL/empty or the result does
 * not fit (nothing useful is left in buf then). EO_NAME_MAX is large enough for
 * any Kubernetes object name (253 characters).
 */
#ifndef EO_API_NAMES_H
#define EO_API_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* API group and version. */
#define EO_API_GROUP	     "etcd-operator.cozystack.io"
#define EO_API_VERSION	     "v1alpha2"
#define EO_API_GROUP_VERSION EO_API_GROUP "/" EO_API_VERSION

/* Kinds, plurals and resource names (plural.group). */
#define EO_KIND_CLUSTER		   "EtcdCluster"
#define EO_KIND_MEMBER		   "EtcdMember"
#define EO_KIND_SNAPSHOT	   "EtcdSnapshot"
#define EO_KIND_SCHEDULE	   "EtcdSnapshotSchedule"
#define EO_KIND_DEFRAG		   "EtcdDefrag"
#define EO_KIND_DEFRAG_SCHEDULE	   "EtcdDefragSchedule"
#define EO_KIND_ARCHIVE		   "EtcdArchive"
#define EO_PLURAL_CLUSTERS	   "etcdclusters"
#define EO_PLURAL_MEMBERS	   "etcdmembers"
#define EO_PLURAL_SNAPSHOTS	   "etcdsnapshots"
#define EO_PLURAL_SCHEDULES	   "etcdsnapshotschedules"
#define EO_PLURAL_DEFRAGS	   "etcddefrags"
#define EO_PLURAL_DEFRAG_SCHEDULES "etcddefragschedules"
#define EO_PLURAL_ARCHIVES	   "etcdarchives"
#define EO_RESOURCE_CLUSTERS	   EO_PLURAL_CLUSTERS "." EO_API_GROUP
#define EO_RESOURCE_MEMBERS	   EO_PLURAL_MEMBERS "." EO_API_GROUP
#define EO_RESOURCE_SNAPSHOTS	   EO_PLURAL_SNAPSHOTS "." EO_API_GROUP
#define EO_CATEGORY		   "etcd-operator"

/* Labels on every object of a cluster. */
#define EO_LABEL_APP_NAME	  "app.kubernetes.io/name"
#define EO_LABEL_APP_NAME_VALUE	  "etcd"
#define EO_LABEL_INSTANCE	  "app.kubernetes.io/instance" /* = <cluster> */
#define EO_LABEL_MANAGED_BY	  "app.kubernetes.io/managed-by"
#define EO_LABEL_MANAGED_BY_VALUE "etcd-operator"
#define EO_LABEL_CLUSTER	  EO_API_GROUP "/cluster" /* = <cluster> */
/* Labels on the objects of one member. */
#define EO_LABEL_COMPONENT  "app.kubernetes.io/component" /* = <member> */
#define EO_LABEL_ROLE	    EO_API_GROUP "/role"
#define EO_LABEL_ROLE_VOTER "voter" /* only voting members carry the role label */
/* On a snapshot Job and its Pod: = <snapshot>. */
#define EO_LABEL_SNAPSHOT EO_API_GROUP "/snapshot"
/* On an EtcdSnapshot an EtcdSnapshotSchedule created, and on its prune Job and Pod: =
 * <schedule>. */
#define EO_LABEL_SCHEDULE EO_API_GROUP "/schedule"
/* On an EtcdDefrag an EtcdDefragSchedule created: = <schedule>. */
#define EO_LABEL_DEFRAG_SCHEDULE EO_API_GROUP "/defrag-schedule"
/* On the archiver Deployment of an EtcdArchive and its Pod: = <archive>. */
#define EO_LABEL_ARCHIVE EO_API_GROUP "/archive"
/* On an EtcdSnapshot a schedule created: the slot it was made for (RFC 3339, UTC). */
#define EO_ANNOTATION_SCHEDULED_TIME EO_API_GROUP "/scheduled-time"
/* On a snapshot Job's Pod: = <cluster> it snapshots (not EO_LABEL_CLUSTER, which would put
 * the agent behind the cluster's selectors); the NetworkPolicy lets these Pods in. */
#define EO_LABEL_SNAPSHOT_OF EO_API_GROUP "/snapshot-of"

/*
 * Reserved annotations of clusters adopted from the legacy etcd.aenix.io operator
 * (`kubectl etcd migrate`, docs/migration.md); they are stripped from
 * spec.additionalMetadata. On the EtcdCluster and on each EtcdMember:
 *  - headless-service-name: the Service that names the members (Pod subdomain, peer and
 *    client URLs), instead of "<cluster>";
 *  - peer-auto-tls "true": new members run with --peer-auto-tls like the adopted ones.
 * On an adopted EtcdMember only:
 *  - data-dir-subpath: the directory of the PVC that holds etcd's data ("default.etcd");
 *  - adopted-pod-uid: the UID of the legacy Pod adopted as it runs; that Pod counts as
 *    current (no roll) while the member's spec is on target.
 * On the EtcdCluster while the migration runs:
 *  - migrating "true": both controllers leave the cluster and its members alone.
 */
#define EO_ANNOTATION_HEADLESS_SERVICE_NAME EO_API_GROUP "/headless-service-name"
#define EO_ANNOTATION_DATA_DIR_SUBPATH	    EO_API_GROUP "/data-dir-subpath"
#define EO_ANNOTATION_PEER_AUTO_TLS	    EO_API_GROUP "/peer-auto-tls" /* "true" */
#define EO_ANNOTATION_ADOPTED_POD_UID	    EO_API_GROUP "/adopted-pod-uid"
#define EO_ANNOTATION_MIGRATING		    EO_API_GROUP "/migrating" /* "true" */
/*
 * On an EtcdMember, "true": its finalizer is dropped without removing it from etcd (see
 * plan/removal.h and docs/operations.md).
 */
#define EO_ANNOTATION_FORCE_FINALIZE EO_API_GROUP "/force-finalize"
/*
 * On an EtcdCluster, set by the user: the name of a surviving EtcdMember to force a new
 * cluster from after a quorum loss (plan/forcenew.h, docs/operations.md). The operator
 * removes it once the cluster is whole again.
 */
#define EO_ANNOTATION_FORCE_NEW_CLUSTER EO_API_GROUP "/force-new-cluster"
/* On that EtcdMember, set by the operator: the recovery's step ("forcing", "forced"). */
#define EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP EO_API_GROUP "/force-new-cluster-step"
/*
 * On a member Pod: the hash of the Pod the member controller built it as (desired/desired.h,
 * eo_desired_member_pod_hash). The cluster controller rolls a member whose Pod carries another.
 */
#define EO_ANNOTATION_POD_HASH EO_API_GROUP "/pod-hash"
/*
 * On a member Pod that mounts TLS Secrets: the SHA-256 (hex) of the CA bundles its etcd trusts
 * (status.caBundleDigest of the cluster when the Pod was built). The Pod hash covers it, so a
 * changed CA bundle rolls the members (etcd does not reload its trusted CA files).
 */
#define EO_ANNOTATION_CA_BUNDLE_DIGEST EO_API_GROUP "/ca-bundle-digest"
/* Prefix of every operator-owned label and annotation key. */
#define EO_KEY_PREFIX EO_API_GROUP "/"

/* Finalizer the operator puts on each EtcdMember. */
#define EO_FINALIZER_MEMBER_CLEANUP EO_API_GROUP "/member-cleanup"
/*
 * Finalizer on an EtcdCluster with spec.deletionPolicy Retain (the only finalizer the operator
 * puts on an EtcdCluster): held on deletion until every member's data PVC has lost its owner
 * reference (plan/retain.h).
 */
#define EO_FINALIZER_RETAIN_DATA EO_API_GROUP "/retain-data"
/*
 * On an EtcdCluster: "true" makes the chart's ValidatingAdmissionPolicy refuse its deletion
 * (charts/etcd-operator/templates/deletion-protection.yaml). The operator never reads it.
 */
#define EO_ANNOTATION_DELETION_PROTECTION EO_API_GROUP "/deletion-protection"

/* Leader election Lease name. */
#define EO_LEADER_ELECTION_ID "aa20b3a9." EO_API_GROUP

/* etcd ports and their container/Service port names. */
#define EO_PORT_CLIENT	     2379
#define EO_PORT_PEER	     2380
#define EO_PORT_METRICS	     2381
#define EO_PORT_NAME_CLIENT  "client"
#define EO_PORT_NAME_PEER    "peer"
#define EO_PORT_NAME_METRICS "metrics"

/* Defaults. */
#define EO_DEFAULT_ETCD_IMAGE_REPOSITORY "quay.io/coreos/etcd"
#define EO_ETCD_DATA_DIR		 "/var/lib/etcd"

/* Secret keys the operator reads. */
#define EO_SECRET_KEY_TLS_CRT		"tls.crt"
#define EO_SECRET_KEY_TLS_KEY		"tls.key"
#define EO_SECRET_KEY_CA_CRT		"ca.crt"
#define EO_SECRET_KEY_PASSWORD		"password"
#define EO_SECRET_KEY_USERNAME		"username"
#define EO_ETCD_ROOT_USER		"root"
#define EO_SECRET_KEY_AWS_ACCESS_KEY_ID "AWS_ACCESS_KEY_ID"
#define EO_SECRET_KEY_AWS_SECRET_KEY	"AWS_SECRET_ACCESS_KEY"

/* Size of a buffer that holds any object name plus the NUL. */
#define EO_NAME_MAX 254
/* Longest DNS label (Service names, Pod hostnames). */
#define EO_DNS_LABEL_MAX 63

/* Headless Service "<cluster>" (peer discovery, per-Pod DNS). */
int eo_name_headless_service(char *buf, size_t n, const char *cluster);
/* ClusterIP Service "<cluster>-client". */
int eo_name_client_service(char *buf, size_t n, const char *cluster);
/* PodDisruptionBudget "<cluster>". */
int eo_name_pdb(char *buf, size_t n, const char *cluster);
/* metadata.generateName of a new EtcdMember: "<cluster>-". */
int eo_name_member_prefix(char *buf, size_t n, const char *cluster);
/* Data PVC of a member: "data-<member>". */
int eo_name_member_pvc(char *buf, size_t n, const char *member);
/* Job of a snapshot: "<snapshot>-snapshot". */
int eo_name_snapshot_job(char *buf, size_t n, const char *snapshot);
/* Archiver Deployment of an EtcdArchive: "<archive>-archiver". */
int eo_name_archiver(char *buf, size_t n, const char *archive);
/* Prune Job of a scheduled snapshot: "<snapshot>-prune". */
int eo_name_prune_job(char *buf, size_t n, const char *snapshot);
/* cert-manager Secrets: "<cluster>-server-tls", "-operator-client-tls", "-peer-tls". */
int eo_name_server_tls_secret(char *buf, size_t n, const char *cluster);
int eo_name_operator_client_tls_secret(char *buf, size_t n, const char *cluster);
int eo_name_peer_tls_secret(char *buf, size_t n, const char *cluster);
/* cert-manager Certificates: "<cluster>-server", "-operator-client", "-peer". */
int eo_name_server_certificate(char *buf, size_t n, const char *cluster);
int eo_name_operator_client_certificate(char *buf, size_t n, const char *cluster);
int eo_name_peer_certificate(char *buf, size_t n, const char *cluster);
/* --initial-cluster-token latched at the first reconcile: "<namespace>-<cluster>-<uid>". */
int eo_name_cluster_token(char *buf, size_t n, const char *ns, const char *cluster,
			  const char *uid);
/* Pod label selector of a cluster: "etcd-operator.cozystack.io/cluster=<cluster>". */
int eo_name_cluster_selector(char *buf, size_t n, const char *cluster);
/* Stable DNS name of a member: "<member>.<service>.<namespace>.svc". */
int eo_name_member_host(char *buf, size_t n, const char *member, const char *service,
			const char *ns);
/*
 * etcd image "<repository>:v<version>"; a NULL or empty repository means
 * EO_DEFAULT_ETCD_IMAGE_REPOSITORY.
 */
int eo_name_etcd_image(char *buf, size_t n, const char *repository, const char *version);

/* True when key is operator-owned (starts with "etcd-operator.cozystack.io/"). */
bool eo_name_key_reserved(const char *key);

/*
 * True when s is a DNS-1035 label of at most max characters: lowercase letters,
 * digits and '-', starting with a letter and ending with a letter or digit.
 */
bool eo_name_is_dns1035_label(const char *s, size_t max);

/*
 * True when s is a Kubernetes label (or annotation) key: an optional prefix, a
 * DNS-1123 subdomain of at most 253 characters, and '/', then a name of 1 to 63
 * characters of letters, digits, '-', '_' and '.' that starts and ends with a
 * letter or digit.
 */
bool eo_name_is_label_key(const char *s);

/* True when s is a Kubernetes label value: empty, or a name as above (at most 63). */
bool eo_name_is_label_value(const char *s);

#endif
