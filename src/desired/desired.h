/*
 * desired/desired.h - the desired Kubernetes objects of a cluster and its members (pure).
 *
 * Every function here is a pure function of its arguments: no I/O, no clock, no globals.
 * The objects are what the operator creates (or the fields it owns and patches); they carry
 * an ownerReference to their owner (controller=true, blockOwnerDeletion=true) and the
 * operator's labels.
 *
 *   owner      object                              name
 *   cluster    headless Service                    <cluster>
 *   cluster    client Service                      <cluster>-client
 *   cluster    seed EtcdMember                     <cluster>-<suffix> (status.nextMemberName)
 *   cluster    joining EtcdMember                  <cluster>-<suffix> (status.nextMemberName)
 *   cluster    PodDisruptionBudget                 <cluster>
 *   member     data PVC                            data-<member>
 *   member     Pod                                 <member>
 *
 * Ownership: every eo_desired_* function that returns json_t * returns a NEW reference the
 * caller json_decref()s, or NULL when an argument is missing (no name/namespace/uid) or on
 * allocation failure. json_t arguments are borrowed and never modified. Strings written into
 * caller buffers are NUL-terminated; functions writing them return 0, or -1 when an argument
 * is missing or the result does not fit.
 */
#ifndef EO_DESIRED_BUILD_H
#define EO_DESIRED_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* Settings of the operator that shape the objects (borrowed strings). */
struct eo_desired_opts {
	const char *etcd_image_repository; /* NULL/"" = quay.io/coreos/etcd */
	const char *cluster_domain;	   /* NULL/"" = cluster.local */
	const char *operator_image; /* the init containers (restore, data guard); NULL: none */
	/*
	 * The cluster's status.caBundleDigest: stamped on a member Pod that mounts a TLS Secret
	 * (annotation EO_ANNOTATION_CA_BUNDLE_DIGEST, covered by the Pod hash). NULL/"": none.
	 * Per cluster: callers copy the operator's options and set it.
	 */
	const char *ca_bundle_digest;
	/*
	 * The user of the Pods the operator builds (members, snapshot and prune Jobs, restores,
	 * the archiver): 0 = EO_DESIRED_POD_UID_DEFAULT; a positive UID = runAsUser, runAsGroup
	 * and fsGroup; EO_DESIRED_POD_UID_AUTO = none of the three, the platform assigns them
	 * (OpenShift's restricted-v2 SCC). runAsNonRoot, seccomp RuntimeDefault, no privilege
	 * escalation and no capabilities stay in every mode.
	 */
	long pod_run_as_user;
};

#define EO_DESIRED_POD_UID_DEFAULT 65532L
#define EO_DESIRED_POD_UID_AUTO	   (-1L)

/*
 * The UID (and GID) the operator's Pods run as under o (NULL: the default), or
 * EO_DESIRED_POD_UID_AUTO when the platform assigns it.
 */
long eo_desired_pod_uid(const struct eo_desired_opts *o);

/*
 * A Pod's securityContext under o: runAsNonRoot and seccomp RuntimeDefault, plus runAsUser,
 * runAsGroup and fsGroup when the UID is known, plus fsGroupChangePolicy OnRootMismatch when
 * change_policy (kept in auto mode: the platform's fsGroup then takes it). New reference.
 */
json_t *eo_desired_pod_security_context(const struct eo_desired_opts *o, bool change_policy);

/*
 * Where an etcd Pod mounts its TLS Secrets (read-only): the client-API server Secret and the
 * peer Secret, each holding tls.crt, tls.key and ca.crt.
 */
/*
 * Init container of a member adopted from the legacy operator (agent/adopt.h): gives the data
 * to eo_desired_pod_uid(). Not built in auto mode: it runs as root, which restricted-v2
 * refuses, and the UID is not known before admission; the platform's fsGroup then makes the
 * data reachable (docs/migration.md).
 */
#define EO_DESIRED_ADOPT_CONTAINER "adopt-data"
/*
 * Init container of every Pod of a member with status.memberID (agent/dataguard.h): etcd never
 * starts under that ID on a data dir without its WAL. Not part of the Pod hash.
 */
#define EO_DESIRED_DATA_GUARD_CONTAINER "data-guard"
/* Its exit code when the data dir has no WAL (the member lost its data). */
#define EO_DESIRED_DATA_GUARD_EXIT_NO_WAL 3
/*
 * Init container of a Pod that joins a running cluster (--initial-cluster-state=existing and
 * no status.memberID yet; agent/waitpeers.h): waits, at most EO_DESIRED_WAIT_PEERS_TIMEOUT
 * seconds, until a peer accepts on its peer port. Not part of the Pod hash.
 */
#define EO_DESIRED_WAIT_PEERS_CONTAINER "wait-peers"
#define EO_DESIRED_WAIT_PEERS_TIMEOUT	"30"

#define EO_DESIRED_TLS_CLIENT_DIR "/etc/etcd/tls/client"
#define EO_DESIRED_TLS_PEER_DIR	  "/etc/etcd/tls/peer"

/* Size of a buffer for a member URL or a one-member initial-cluster entry. */
#define EO_DESIRED_URL_MAX 512

/* --- helpers shared with plan/ and controller/ --- */

/* ownerReference to owner (apiVersion, kind, name, uid), controller + blockOwnerDeletion. */
json_t *eo_desired_owner_ref(const json_t *owner);

/* True when obj has a controller ownerReference with this uid. */
bool eo_desired_is_controlled_by(const json_t *obj, const char *owner_uid);

/*
 * Who controls obj, for messages: "EtcdCluster x-client, uid 1f0c..." from its controller
 * ownerReference, or "none" without one. Always terminated, cut to n.
 */
void eo_desired_controller_of(const json_t *obj, char *buf, size_t n);

/*
 * Labels of every object of a cluster: spec.additionalMetadata.labels of source (a cluster or
 * a member; keys under etcd-operator.cozystack.io/ dropped), then the operator's four labels
 * (app.kubernetes.io/name=etcd, instance=<cluster>, managed-by=etcd-operator,
 * etcd-operator.cozystack.io/cluster=<cluster>), which win on collision.
 */
json_t *eo_desired_cluster_labels(const json_t *source, const char *cluster);

/* additionalMetadata.annotations of source without reserved keys (never NULL on success). */
json_t *eo_desired_extra_annotations(const json_t *source);

/* "<member>.<cluster>.<ns>.svc.<domain>" (the headless Service is named after the cluster). */
int eo_desired_member_fqdn(char *buf, size_t n, const struct eo_desired_opts *o, const char *member,
			   const char *cluster, const char *ns);
/*
 * "http://<fqdn>:2380" and "http://<fqdn>:2379", "https://" when tls: the peer URL of a member
 * whose peers speak TLS (eo_desired_member_peer_tls), the client URL of a member that serves
 * its client API over TLS (eo_desired_member_client_tls). Every caller passes the member's own
 * answer, so the URLs the operator uses are the ones the member's etcd advertises.
 */
int eo_desired_member_peer_url(char *buf, size_t n, const struct eo_desired_opts *o,
			       const char *member, const char *cluster, const char *ns, bool tls);
int eo_desired_member_client_url(char *buf, size_t n, const struct eo_desired_opts *o,
				 const char *member, const char *cluster, const char *ns, bool tls);
/*
 * The member and namespace that a URL made by the two functions above names (the first and
 * third labels of its host). 0 on success; -1 (both "") when url is not such a URL in this
 * cluster domain, or a part does not fit.
 */
int eo_desired_url_member(const struct eo_desired_opts *o, const char *url, char *member,
			  size_t member_cap, char *ns, size_t ns_cap);
/*
 * The curl CONNECT_TO entry that sends the requests for a member URL straight to the member's
 * Pod, "<host>:<port>:<pod IP>:<port>" ("[<ip>]" for IPv6): the operator then reaches a member
 * as soon as its Pod has an address, not when its DNS record appears. pod must be that
 * member's Pod (named after it, in its namespace), with status.podIP set, not being deleted,
 * and not Succeeded or Failed. 0 with the entry in buf; -1 (buf "") otherwise.
 */
int eo_desired_member_route(char *buf, size_t n, const struct eo_desired_opts *o, const char *url,
			    const json_t *pod);
/* Whether an EtcdMember's peer / client API is TLS (its spec.tls). */
bool eo_desired_member_peer_tls(const json_t *member);
bool eo_desired_member_client_tls(const json_t *member);
/* "<member>=<peer url>": the initialCluster of a seed. */
int eo_desired_seed_initial_cluster(char *buf, size_t n, const struct eo_desired_opts *o,
				    const char *member, const char *cluster, const char *ns,
				    bool tls);

/* --- cluster-owned objects --- */

/* Headless Service <cluster>: clusterIP None, publishNotReadyAddresses, ports client + peer. */
json_t *eo_desired_headless_service(const json_t *cluster);
/*
 * ClusterIP Service <cluster>-client: port client 2379, selecting the voting members only
 * (cluster=<cluster>, role=voter, as the PodDisruptionBudget).
 */
json_t *eo_desired_client_service(const json_t *cluster);
/*
 * Merge patch that brings an existing Service in line with the desired one, touching only the
 * fields the operator owns (our labels, spec.selector, spec.publishNotReadyAddresses,
 * spec.ports by name; selector keys the desired selector lacks are nulled, since a merge patch
 * merges maps); NULL when nothing differs (or on allocation failure: callers treat it
 * as "no drift" and retry on the next pass).
 */
json_t *eo_desired_service_patch(const json_t *desired, const json_t *actual);

/*
 * status.observed snapshot of the cluster's spec: replicas, version, storage, and the
 * latched pass-through fields (resources, affinity, topologySpreadConstraints, tolerations,
 * nodeSelector, priorityClassName,
 * additionalMetadata, options, imagePullSecrets) copied as written; absent fields stay absent.
 */
json_t *eo_desired_observed(const json_t *cluster);

/*
 * The seed EtcdMember of a cluster: metadata.name name (the planner's deterministic
 * status.nextMemberName, so that a retried create collides), or generateName <cluster>- when
 * name is NULL; the member finalizer, spec from
 * status.observed (falling back to spec when nothing is latched yet), bootstrap true,
 * replicas 1, clusterToken from status.clusterToken, initialCluster empty (the cluster
 * controller fills it once the name is known), and spec.restore copied from
 * spec.bootstrap.restore (desired/restore.h), and spec.tls with the names of the Secrets the
 * Pod mounts (eo_desired_member_tls).
 */
json_t *eo_desired_seed_member(const json_t *cluster, const char *name);

/*
 * spec.tls of a new EtcdMember of cluster: clientServerSecretRef and clientMTLS when the
 * cluster's client API is TLS, peerSecretRef when its peers are; the Secret names are the
 * resolved ones (eo_cluster_server_secret_name / eo_cluster_peer_secret_name: the user's own
 * Secrets, or the ones cert-manager fills). NULL (and *ok untouched) for a plaintext cluster;
 * NULL with *ok false when a name cannot be resolved or on allocation failure. New reference.
 */
json_t *eo_desired_member_tls(const json_t *cluster, bool *ok);

/*
 * A member that joins a bootstrapped cluster: the same as the seed member but bootstrap false.
 * initialCluster stays empty until the cluster controller has added it to etcd as a learner.
 */
json_t *eo_desired_joining_member(const json_t *cluster, const char *name);

/*
 * PodDisruptionBudget <cluster> (policy/v1) over the voting members: selector cluster=<cluster>
 * and role=voter, minAvailable as given.
 */
json_t *eo_desired_pdb(const json_t *cluster, int min_available);

/* minAvailable of the PDB: max(voters, target) / 2 + 1 (1->1, 3->2, 4->3, 5->3, 7->4). */
int eo_desired_pdb_min_available(int voters, int target);

/*
 * Merge patch bringing an existing PDB's spec (minAvailable, selector; maxUnavailable dropped)
 * in line with the desired one; NULL when nothing differs or on allocation failure.
 */
json_t *eo_desired_pdb_patch(const json_t *desired, const json_t *actual);

/* --- member-owned objects --- */

/* Labels of a member's objects: cluster labels + component=<member> (+ role=voter). */
json_t *eo_desired_member_labels(const json_t *member, bool voter);

/* PVC data-<member>: ReadWriteOnce, spec.storage.size, storageClassName when set. */
json_t *eo_desired_member_pvc(const json_t *member);

/*
 * The member's Pod. cluster_bootstrapped tells whether the cluster already has a clusterID:
 * --initial-cluster-state is "new" only for a seed without a memberID in a cluster that has
 * not bootstrapped; "existing" otherwise, so a seed whose data dir is lost never forms a
 * second cluster. Pass-through from the member's spec: resources (default requests 100m CPU,
 * 128Mi memory), affinity, topologySpreadConstraints, imagePullSecrets, additionalMetadata
 * (operator labels win), options as etcd flags, storage (PVC, or a tmpfs emptyDir with
 * sizeLimit for medium Memory). An empty spec.affinity gives a soft podAntiAffinity (weight
 * 100, topologyKey kubernetes.io/hostname) over the Pods labelled cluster=<cluster>.
 * Init containers (from o->operator_image; none without it): adopt-data for an adopted legacy
 * member (with a known UID only); data-guard (EO_DESIRED_DATA_GUARD_CONTAINER) for a member with
 * status.memberID; wait-peers (EO_DESIRED_WAIT_PEERS_CONTAINER) for a member that joins
 * ("existing", no status.memberID, an initial cluster); the restore pair (desired/restore.h) only
 * for a restoring seed while neither cluster_bootstrapped nor status.memberID holds: a restore runs
 * once, and a bootstrapped seed's Pod never mounts the restore source.
 */
json_t *eo_desired_member_pod(const json_t *member, const struct eo_desired_opts *o,
			      bool cluster_bootstrapped);

/* --- rolling updates (docs/concepts.md "Rolling updates") --- */

/*
 * Quorum-loss recovery (plan/forcenew.h): a member whose annotation
 * etcd-operator.cozystack.io/force-new-cluster-step is "forcing" gets a Pod whose etcd runs
 * with --force-new-cluster; with any other value, or none, it does not.
 */
#define EO_DESIRED_FORCE_NEW_CLUSTER_FLAG	  "--force-new-cluster"
#define EO_DESIRED_FORCE_NEW_CLUSTER_STEP_FORCING "forcing"
bool eo_desired_member_forces_new_cluster(const json_t *member);
/* True when the Pod's etcd container runs with --force-new-cluster (pod may be NULL). */
bool eo_desired_pod_forces_new_cluster(const json_t *pod);

/* Room for a Pod hash: 16 hex digits and the NUL. */
#define EO_DESIRED_HASH_MAX 17

/*
 * The spec fields a roll carries from status.observed to existing EtcdMembers (NULL-ended):
 * version, resources, affinity, topologySpreadConstraints, options, imagePullSecrets,
 * additionalMetadata, tolerations, nodeSelector, priorityClassName. Not storage: a PVC is not
 * resized and a new size applies to members created afterwards.
 */
extern const char *const eo_desired_rolled_fields[];

/*
 * Hash of a Pod: FNV-1a 64 over its JSON with sorted keys, leaving out the voter label (it
 * follows etcd), the pod-hash annotation itself and the data-guard init container (it comes
 * with the member ID, learnt after the first Pod started: counting it would roll every member
 * once after it joined); 16 lowercase hex digits. 0 or -1.
 */
int eo_desired_pod_hash(const json_t *pod, char *buf, size_t n);

/*
 * The hash eo_desired_member_pod() stamps on the member's Pod (annotation
 * etcd-operator.cozystack.io/pod-hash): the hash of the Pod as built once the cluster is
 * bootstrapped, so that a seed's "--initial-cluster-state=new" does not make it differ.
 * Everything that shapes the Pod (the member's spec, the operator's image repository and
 * cluster domain) moves it. 0 or -1.
 */
int eo_desired_member_pod_hash(const json_t *member, const struct eo_desired_opts *o, char *buf,
			       size_t n);

/* True when the member's spec carries every rolled field exactly as observed does. */
bool eo_desired_member_on_target(const json_t *member, const json_t *observed);

/*
 * A copy of member whose rolled fields are those of observed (absent there: absent here):
 * what the member will be once rolled, to hash its Pod. New reference.
 */
json_t *eo_desired_member_with_target(const json_t *member, const json_t *observed);

/*
 * Merge patch of the member bringing its rolled fields to observed's ({"spec": {...}}, nested
 * objects diffed so that keys observed lacks are removed); {} when nothing differs. The patch
 * of a member adopted from the legacy operator also drops its adopted-pod-uid annotation, so
 * that its legacy Pod is then replaced like any outdated one.
 */
json_t *eo_desired_member_roll_patch(const json_t *member, const json_t *observed);

#endif
