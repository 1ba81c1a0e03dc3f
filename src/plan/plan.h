/*
 * plan/plan.h - decisions of the cluster controller (pure).
 *
 * eo_plan_cluster() looks at what was observed about one EtcdCluster (the object with its
 * status, its EtcdMembers with their Pods and PVCs, the owned Services, and - when asked for -
 * etcd's member list) and returns the ONE next action plus the status the cluster should have.
 * No I/O, no clock but input->now. The status is computed so that an unchanged world yields an
 * identical status: no moving timestamps, lastTransitionTime kept, progressDeadline only while
 * a target is in flight.
 *
 * Two-phase use: plan without etcd (input->etcd_queried false); when the action is
 * EO_PLAN_QUERY_MEMBERS the controller lists etcd's members through result->endpoints and
 * plans again with the answer. The second plan asks again only to have that answer confirmed
 * by etcd's leader (want_leader, before acting on a member's absence); the third never asks.
 *
 * The locking pattern: status.observed latches the target (a snapshot of the spec) on the first
 * reconcile and status.progressDeadline bounds how long reaching it may take. While the target
 * is in flight, spec edits wait. Once it is reached (clusterID known, as many members as
 * observed.replicas, all ready) the deadline is dropped and a changed spec becomes the next
 * target (Progressing=True/SpecChanged). An expired deadline is terminal: BootstrapFailed
 * before a clusterID (delete and recreate), DeadlineExceeded after (edit the spec to resume:
 * Progressing=True/RetryAfterDeadline).
 *
 * Ownership: the result's status is a new reference the caller frees with eo_plan_result_clear();
 * member pointers in the result are borrowed from the input.
 */
#ifndef EO_PLAN_PLAN_H
#define EO_PLAN_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "desired/desired.h"
#include "etcd/types.h"

/*
 * Reason of the Available/Progressing conditions while the spec asks for something this build
 * cannot do. Not in the seeds; nothing sets it today (spec.auth landed), kept for the docs.
 */
#define EO_PLAN_REASON_UNSUPPORTED "UnsupportedSpec"

/*
 * Reason of Degraded=True (and a Warning Event) while etcd lists a voting member that no
 * EtcdMember stands for: membership changes wait. Not in the seeds.
 */
#define EO_PLAN_REASON_UNKNOWN_MEMBER "UnknownMember"

/*
 * Reason of Degraded=True (and a Warning Event) while the member list read through the
 * cluster's member addresses carries another cluster ID than status.clusterID (an address
 * now used by another etcd cluster's Pod: a stale DNS record, a reused Pod IP): nothing is
 * decided from it. Not in the seeds.
 */
#define EO_PLAN_REASON_CLUSTER_ID_MISMATCH "ClusterIDMismatch"

/*
 * Reason of Degraded=True (and a Warning Event) while a step that acts on a member's absence
 * from etcd's member list (unmarking a voter, deleting a member etcd does not list) waits
 * because the list could not be confirmed as the leader's own answer (no leader, the leader
 * unreachable, another member answering at the leader's address): nothing is decided from an
 * unverified list. The member finalizer uses it too (Ready=False). Not in the seeds.
 */
#define EO_PLAN_REASON_LIST_UNVERIFIED "MemberListUnverified"

/* Event reason when a paused cluster's dormant member is woken (pausing uses "Paused"). */
#define EO_PLAN_REASON_RESUMED "Resumed"

/* Requeue intervals (ms), as in the reference operator. */
#define EO_PLAN_REQUEUE_PENDING_MS 2000L
#define EO_PLAN_REQUEUE_SHORT_MS   5000L
#define EO_PLAN_REQUEUE_ETCD_MS	   10000L
#define EO_PLAN_REQUEUE_STEADY_MS  30000L

/*
 * The next step of the cluster controller. Values are stable; later issues add actions at the
 * end (learners, scale down, dormancy, PDB) without renumbering.
 */
enum eo_plan_action {
	EO_PLAN_NONE = 0,	 /* nothing to do but write the status if it differs */
	EO_PLAN_WAIT,		 /* wait for something (requeue_ms / an event), write status */
	EO_PLAN_ENSURE_SERVICES, /* create / patch the headless and client Services */
	EO_PLAN_LATCH_TARGET,	 /* write the status (token, observed, deadline) first */
	EO_PLAN_CREATE_SEED,	 /* create the seed EtcdMember member_name (then write status) */
	EO_PLAN_COMPLETE_SEED,	 /* set the seed's initialCluster to itself, isVoter=true */
	EO_PLAN_QUERY_MEMBERS,	 /* list etcd's members via endpoints, then plan again */
	EO_PLAN_WRITE_STATUS,	 /* the status carries news (clusterID latched, ...) */
	/*
	 * Membership (one change at a time). A member joins in four steps, each resumable:
	 * CREATE_MEMBER (a pending EtcdMember, initialCluster empty: no Pod yet), ADD_LEARNER
	 * (MemberAddAsLearner of its peer URL through the voters, then its initialCluster from
	 * the returned member list), SET_INITIAL_CLUSTER (the same patch, when the operator
	 * stopped between the two), PROMOTE_LEARNER once its Pod is ready.
	 */
	EO_PLAN_CREATE_MEMBER,	     /* create a joining EtcdMember (member_name) */
	EO_PLAN_ADD_LEARNER,	     /* MemberAddAsLearner(peer_url) via endpoints, then patch */
	EO_PLAN_SET_INITIAL_CLUSTER, /* patch member's spec.initialCluster = initial_cluster */
	EO_PLAN_PROMOTE_LEARNER,     /* MemberPromote(etcd_id) via endpoints, then isVoter */
	EO_PLAN_REMOVE_MEMBER,	     /* scale down: delete EtcdMember member (its finalizer
				      * removes it from etcd) */
	EO_PLAN_REMOVE_STRAY,	     /* MemberRemove(etcd_id) of an etcd learner no EtcdMember
				      * stands for (left by an interrupted join) */
	EO_PLAN_SET_VOTER,	     /* patch member's status.isVoter = voter (from etcd) */
	EO_PLAN_ENSURE_PDB,	     /* create / patch the PodDisruptionBudget <cluster> */
	EO_PLAN_DELETE_PDB,	     /* delete the PodDisruptionBudget <cluster> (no voter) */
	/*
	 * Pause and resume. replicas 0 on a bootstrapped cluster descends one member at a time
	 * (REMOVE_MEMBER) to the last one, which SET_DORMANT marks spec.dormant=true: the member
	 * controller deletes its Pod and keeps its PVC and its place in etcd. replicas >= 1 on a
	 * paused cluster first WAKE_DORMANTs it (spec.dormant=false): its Pod comes back on the
	 * same PVC with the same cluster and member IDs, then scale-up proceeds as usual.
	 */
	EO_PLAN_SET_DORMANT,  /* patch member's spec.dormant = true (event Paused) */
	EO_PLAN_WAKE_DORMANT, /* patch member's spec.dormant = false (event Resumed) */
	/*
	 * Rolling updates (plan/roll.h), one member at a time once the membership is settled:
	 * UPDATE_MEMBER merge-patches the member's spec with the target's fields (patch), then
	 * RESTART_MEMBER deletes its Pod (pod_uid as precondition) so that the member controller
	 * recreates it from the new spec on the same PVC; MOVE_LEADER hands leadership from the
	 * leader (endpoints[0]) to etcd_id before the leader's turn. A memory member is replaced
	 * instead: of three or more, RESTART_MEMBER evicts its Pod (evict) and the lost-member
	 * step removes it; else through REMOVE_MEMBER. The scale-up path adds the new one.
	 */
	EO_PLAN_UPDATE_MEMBER,	/* merge-patch member with patch (event RollingUpdate) */
	EO_PLAN_RESTART_MEMBER, /* evict (evict) or delete the Pod of member, UID pod_uid */
	EO_PLAN_MOVE_LEADER,	/* MoveLeader(etcd_id) at endpoints[0], the leader */
	/* cert-manager TLS mode: create / patch the cluster's Certificates (plan/certs.h) */
	EO_PLAN_ENSURE_CERTIFICATES,
	/*
	 * Quorum-loss recovery (plan/forcenew.h): MARK_MEMBER merge-patches member's metadata
	 * with patch (its force-new-cluster step annotation); CLEAR_FORCE_REQUEST merge-patches
	 * the EtcdCluster with patch (its force-new-cluster annotation removed). The Pod
	 * restarts go through RESTART_MEMBER.
	 */
	EO_PLAN_MARK_MEMBER,
	EO_PLAN_CLEAR_FORCE_REQUEST,
	/* spec.auth (plan/auth.h): root user and role, grant, AuthEnable via endpoints */
	EO_PLAN_ENABLE_AUTH,
	/*
	 * Storage change (plan/storage.h): GET StorageClass result->storage_class live, then plan
	 * again with it (class_read, storage_class). Never acted on: a need (plan/needs.h).
	 */
	EO_PLAN_READ_CLASS,
	EO_PLAN_ACTION_COUNT_ /* not an action */
};

/* "none", "wait", "ensure-services", ...; never NULL. */
const char *eo_plan_action_name(enum eo_plan_action a);

/* One EtcdMember with what it owns (all borrowed, NULL when absent). */
struct eo_plan_member {
	const json_t *member;
	const json_t *pod; /* the Pod named after the member, controlled by it */
	const json_t *pvc; /* data-<member>, controlled by it */
};

/*
 * The Node a member lives on (plan/nodeloss.h, eo_plan_member_node_name), as looked up:
 * node NULL and absent false when it was not (nothing is known then).
 */
struct eo_plan_node {
	const json_t *node; /* borrowed; NULL when not looked up or not found */
	bool absent;	    /* looked up and not found (deleted) */
	/* The PV bound to the member's PVC, read when only it names the node (a static local
	 * PV: its claim has no selected-node annotation, its Pod no node yet); else NULL. */
	const json_t *pv;
};

struct eo_plan_failure; /* plan/failure.h */
struct eo_plan_certs;	/* plan/certs.h */

struct eo_plan_input {
	const json_t *cluster;		      /* the EtcdCluster, with status */
	const struct eo_plan_member *members; /* its EtcdMembers (any order) */
	size_t n_members;
	/* nodes[i]: the Node of members[i] (plan/nodeloss.h); NULL: nodes are not watched */
	const struct eo_plan_node *nodes;
	/*
	 * The objects under the cluster's own names, as observed (any owner). One that this
	 * cluster does not control is never acted on: the plan stops with ForeignObject.
	 */
	const json_t *headless_svc; /* observed Service <cluster>, or NULL */
	const json_t *client_svc;   /* observed Service <cluster>-client, or NULL */
	const json_t *pdb;	    /* observed PodDisruptionBudget <cluster>, or NULL */
	/* observed NetworkPolicy <cluster> when the cluster wants one, or NULL */
	const json_t *netpol;
	const struct eo_desired_opts *build;
	/*
	 * cert-manager TLS mode (eo_cluster_uses_cert_manager): what the controller saw of
	 * cert-manager and the cluster's Certificates; NULL reads as cert-manager not installed.
	 */
	const struct eo_plan_certs *certs;
	/* etcd's member list, when the controller was asked to query it */
	bool etcd_queried;
	eo_etcd_err etcd_err;		    /* EO_ETCD_OK when the list below is valid */
	const struct eo_etcd_members *etcd; /* the list (borrowed), NULL unless OK */
	/*
	 * With a QUERY_MEMBERS that set want_status: the Maintenance Status of each endpoint the
	 * controller could read (any order; members are matched by member_id). Borrowed.
	 */
	const struct eo_etcd_status *statuses;
	size_t n_statuses;
	/*
	 * Absence is never decided from one unverified answer. A list read through any member
	 * may be stale (etcd 3.4 serves its local member map even when asked for a linearizable
	 * list; a lagging member has not applied the latest change) or come from another
	 * cluster. A step about to act on a member's absence (or a voter listed as a learner)
	 * first returns QUERY_MEMBERS with want_leader; the controller then asks the member that
	 * answered for its Maintenance Status, lists again at the leader's client URL when that
	 * is another member (the leader's list replaces etcd), sets etcd_leader_checked and plans
	 * again. etcd_from_leader: the list is the leader's own answer (header member_id, this
	 * cluster's ID); otherwise etcd_leader_why says which check failed and the step waits.
	 */
	bool etcd_leader_checked;
	bool etcd_from_leader;
	const char *etcd_leader_why;
	/*
	 * With a QUERY_MEMBERS that set want_live: every member's Pod and PVC in members were
	 * read from the apiserver this pass (not the label-filtered caches), and statuses holds
	 * the answers of the plan's endpoints, status_from[i] the endpoint statuses[i] came from.
	 * Quorum-loss decisions (QuorumLost, force-new-cluster) are made only on this view.
	 */
	bool live_checked;
	const char *const *status_from;
	/*
	 * With a QUERY_MEMBERS that set want_nodes: every member's Pod and the Node it is bound
	 * to were read from the apiserver this pass (plan/nodeloss.h). A member is replaced for
	 * its node only on this view.
	 */
	bool nodes_live;
	/*
	 * The write the previous plan of this pass asked for was refused by the apiserver: plan
	 * again with it to get the status to write (Degraded=True/CreateFailed, ...); the action
	 * of that plan is not carried out. NULL otherwise.
	 */
	const struct eo_plan_failure *failure;
	/*
	 * The cluster's TLS material is unusable (controller/tlsload.h): its reason
	 * (EO_REASON_TLS_*) and message, NULL when fine or plaintext. The plan then touches
	 * nothing: Available=False (before the cluster formed) or Degraded=True (after) and
	 * Progressing=False with that reason, a Warning Event, action NONE.
	 */
	const char *tls_reason;
	const char *tls_message;
	/*
	 * SHA-256 (hex) of the CA bundles the members' etcd trusts (controller/tlsload.h), as
	 * read this pass; NULL when not read. A value other than status.caBundleDigest is
	 * recorded there; member Pods carry it (desired.h, ca_bundle_digest) and the Pod hash
	 * covers it, so the members are rolled one at a time onto Pods that read the new bundle.
	 */
	const char *ca_bundle_digest;
	/*
	 * spec.auth (plan/auth.h): the root credentials Secret's problem (EO_REASON_AUTH_SECRET_*)
	 * and message, NULL when it is fine or auth is not asked for. With etcd_queried: what
	 * AuthStatus said (auth_status_err, auth_on) and, when auth is on and the controller held
	 * the password, how Authenticate went (auth_login_err, OK when it worked or was not
	 * tried; auth_login_message etcd's words otherwise).
	 */
	const char *auth_reason;
	const char *auth_message;
	bool auth_unverified; /* the Secret's password was not seen accepted by etcd yet */
	eo_etcd_err auth_status_err;
	bool auth_on;
	eo_etcd_err auth_login_err;
	const char *auth_login_message;
	/*
	 * After EO_PLAN_READ_CLASS: the StorageClass result->storage_class as a live GET found it
	 * (NULL: not found, or it could not be read). Borrowed.
	 */
	bool class_read;
	const json_t *storage_class;
	time_t now;
};

#define EO_PLAN_MSG_MAX	      1024
#define EO_PLAN_NAME_MAX      254 /* a Kubernetes object name and its NUL */
#define EO_PLAN_MAX_ENDPOINTS 16
/* Room for "<name>=<peer url>" of every member of a large cluster. */
#define EO_PLAN_INITIAL_CLUSTER_MAX (EO_PLAN_MAX_ENDPOINTS * EO_DESIRED_URL_MAX)
/* Requeue after a learner is not yet in sync, or an etcd-only change (no watch event). */
#define EO_PLAN_REQUEUE_PROMOTE_MS 1000L

struct eo_plan_result {
	enum eo_plan_action action;
	/* COMPLETE_SEED, ADD_LEARNER, SET_INITIAL_CLUSTER, PROMOTE_LEARNER, REMOVE_MEMBER,
	 * SET_VOTER, SET_DORMANT, WAKE_DORMANT: the member concerned */
	const json_t *member;
	char initial_cluster[EO_PLAN_INITIAL_CLUSTER_MAX]; /* COMPLETE_SEED, SET_INITIAL_CLUSTER */
	char peer_url[EO_DESIRED_URL_MAX];		   /* ADD_LEARNER: the member's peer URL */
	uint64_t etcd_id;				   /* PROMOTE_LEARNER, REMOVE_STRAY */
	/* CREATE_SEED, CREATE_MEMBER: metadata.name, status.nextMemberName as stored */
	char member_name[EO_PLAN_NAME_MAX];
	bool voter; /* SET_VOTER */
	/*
	 * SET_VOTER, PROMOTE_LEARNER: once the mark is written (and, for PROMOTE_LEARNER, the
	 * promotion done), merge-patch the voter label of the member's Pod (pod_uid) to match
	 * the mark in the same pass: set for a voter, removed otherwise.
	 */
	bool label_pod;
	json_t *object; /* ENSURE_PDB: the desired PDB (new reference) */
	/*
	 * ENSURE_PDB: merge patch onto the observed PDB, NULL: create; UPDATE_MEMBER,
	 * MARK_MEMBER, CLEAR_FORCE_REQUEST: the patch
	 */
	json_t *patch;
	/* QUERY_MEMBERS: also read the Maintenance Status of every endpoint (a roll is due) */
	bool want_status;
	/*
	 * QUERY_MEMBERS after a plan with the list: confirm the list with etcd's leader
	 * (eo_plan_input.etcd_leader_checked) and plan again; endpoints are not used.
	 */
	bool want_leader;
	/*
	 * QUERY_MEMBERS before a quorum-loss decision: first read every member's Pod and PVC
	 * live from the apiserver (a failed read: act on nothing, retry), then ask every
	 * endpoint (every member's address) for its Maintenance Status whether or not the member
	 * list could be read; plan again with live_checked and status_from set.
	 */
	bool want_live;
	/*
	 * QUERY_MEMBERS while a member's node trouble is past its grace (plan/nodeloss.h): first
	 * read every member's Pod and its Node live from the apiserver (a failed read: act on
	 * nothing, retry); plan again with nodes_live.
	 */
	bool want_nodes;
	/* READ_CLASS: the StorageClass to read */
	char storage_class[EO_PLAN_NAME_MAX];
	/* RESTART_MEMBER: metadata.uid of the Pod to delete; label_pod: of the Pod to label */
	char pod_uid[EO_PLAN_NAME_MAX];
	/*
	 * RESTART_MEMBER: take the Pod down through the Eviction API (pods/eviction), so that
	 * the apiserver weighs it against the PodDisruptionBudget atomically with other
	 * evictions (a node drain); a refusal (429) waits and retries. false: DELETE, for the
	 * roll of a single member (its budget never allows a disruption) and the restart of a
	 * force-new-cluster survivor (the quorum the budget protects is already gone).
	 */
	bool evict;
	/* QUERY_MEMBERS, ADD_LEARNER, PROMOTE_LEARNER, REMOVE_STRAY, ENABLE_AUTH: voter client
	 * URLs */
	char endpoints[EO_PLAN_MAX_ENDPOINTS][EO_DESIRED_URL_MAX];
	size_t n_endpoints;
	json_t *status;	     /* desired status (new reference), NULL when not to be written */
	bool status_changed; /* status differs from the cluster's current status */
	long requeue_ms;     /* 0: no timed requeue (events drive the next pass) */
	/* What to tell: one log/event line (reason CamelCase, message stable) */
	const char *event_type; /* "Normal" / "Warning", NULL: no event */
	const char *event_reason;
	char message[EO_PLAN_MSG_MAX];
};

/* Plans the next step. Returns 0, or -1 on allocation failure / missing metadata. */
int eo_plan_cluster(const struct eo_plan_input *in, struct eo_plan_result *out);

/*
 * spec.initialCluster of a joining member from etcd's member list: "<name>=<peer url>" for
 * every member, comma separated, the joining member (not started yet, so nameless in the list)
 * under member_name. 0, or -1 when it does not fit or the member is not in the list.
 */
int eo_plan_initial_cluster(const struct eo_etcd_members *list, const char *member_name,
			    const char *peer_url, char *buf, size_t n);

/* Frees the result's status, object and patch and zeroes it. */
void eo_plan_result_clear(struct eo_plan_result *r);

/* --- small predicates shared with the controllers --- */

/* True when the Pod carries the voter label (EO_LABEL_ROLE=EO_LABEL_ROLE_VOTER). */
bool eo_plan_pod_voter_labelled(const json_t *pod);

/* True when the Pod exists, is not terminating and its Ready condition is True. */
bool eo_plan_pod_ready(const json_t *pod);

/*
 * A member that serves clients: its Pod is ready (eo_plan_pod_ready) and its EtcdMember's
 * Ready is True, False/DiscoveringMemberID (a learner that answered) or not written yet. The
 * member controller turns Ready to True only after etcd answered on
 * the member's own client URL, which can be seconds after the Pod's probe passes (a joiner
 * waiting to publish itself). readyMembers, Available, promotion and the roll count these.
 */
bool eo_plan_member_serving(const json_t *member, const json_t *pod);

/*
 * True when the Pod exists, is not being deleted and has not ended (phase Failed or
 * Succeeded): an etcd in it may answer. Endpoint lists skip the others, whose address would
 * only cost a connect timeout.
 */
bool eo_plan_pod_running(const json_t *pod);

/*
 * True when a memory-backed member (storage.medium Memory) lost its Pod: it is not pending or
 * being deleted, its status.podUID says a Pod ran, and that Pod is gone. Its data went with the
 * tmpfs, so it never gets a Pod again: the cluster controller removes it from etcd (through its
 * finalizer) and the scale-up path replaces it with a new member.
 */
bool eo_plan_memory_member_lost(const json_t *member, const json_t *pod);

/*
 * True when a PVC-backed member lost its data volume: it is not pending, dormant or being
 * deleted, it has run on a volume (status.dataVolumeUID recorded, or status.memberID known),
 * and its PVC is gone (pvc NULL), being deleted (it goes once the Pod lets go of it) or is
 * another one (its UID differs from status.dataVolumeUID). Such a member must never start again
 * under its member ID: its raft log and vote are gone. The member controller creates nothing for
 * it; the cluster controller removes it from etcd through the other voters and the scale-up path
 * replaces it.
 */
bool eo_plan_data_volume_lost(const json_t *member, const json_t *pvc);

/*
 * True when a member that etcd knows (status.memberID set; not pending, dormant or being
 * deleted) has a Pod (not being deleted) whose data-guard init container
 * (EO_DESIRED_DATA_GUARD_CONTAINER, agent/dataguard.h) ended, now or last time, with
 * EO_DESIRED_DATA_GUARD_EXIT_NO_WAL: its data dir has no write-ahead log (a wiped disk, a
 * re-imaged local volume, a storage rollback, a changed sub-path) under an intact PVC. Its raft
 * log and vote are gone as surely as with a lost PVC, and it is replaced the same way. When why
 * is not NULL it receives the guard's termination message (or a default), capped at n.
 */
bool eo_plan_data_dir_lost(const json_t *member, const json_t *pod, char *why, size_t n);

/*
 * eo_plan_memory_member_lost(), eo_plan_data_volume_lost() or eo_plan_data_dir_lost(): the
 * member's data is gone.
 */
bool eo_plan_member_lost_data(const json_t *member, const json_t *pod, const json_t *pvc);

/* Event reason when a lost memory member is removed to be replaced. */
#define EO_PLAN_REASON_MEMBER_REPLACED "MemberReplaced"
/* Degraded: a majority of the memory-backed voters run on one node (informative). */
#define EO_PLAN_REASON_VOTERS_SHARE_NODE "VotersShareNode"
/* The apiserver refused to evict a member's Pod for a restart (its PodDisruptionBudget). */
#define EO_PLAN_REASON_EVICTION_REFUSED "EvictionRefused"

/*
 * Restarts of the etcd container after which a crash-looping voter counts as broken. With the
 * kubelet's back-off (10 s, 20 s, 40 s, ...) the third restart comes about a minute after the
 * first crash.
 */
#define EO_PLAN_CRASHLOOP_RESTARTS 3

/*
 * True when a member's etcd keeps crashing: the member is running (not pending, dormant or
 * being deleted), its Pod exists, is not ready, and its etcd container has restarted at least
 * EO_PLAN_CRASHLOOP_RESTARTS times and now waits in CrashLoopBackOff. A container killed for
 * memory (OOMKilled) does not count: a new member with the same limits would die the same
 * way, so that is left to the user. When why is not NULL it receives "<restarts> restarts,
 * last exit code <n> (<reason>)".
 */
bool eo_plan_member_crashlooping(const json_t *member, const json_t *pod, char *why, size_t n);

/* --- membership decisions shared with the member controller and the tests --- */

/*
 * Client URLs of the members to reach etcd through, into endpoints (at most cap, at most
 * EO_PLAN_MAX_ENDPOINTS): the voters with a running Pod, oldest Pod first, or, when no member is
 * marked as a voter, every member with a running Pod. Members being deleted and exclude (when
 * not NULL) are skipped. Returns how many, or -1 when a URL does not fit.
 */
int eo_plan_voter_endpoints(const struct eo_plan_member *members, size_t n_members,
			    const json_t *exclude, const json_t *cluster,
			    const struct eo_desired_opts *build,
			    char endpoints[][EO_DESIRED_URL_MAX], size_t cap);

/*
 * Whether removing victim (one of members; NULL: nobody) from etcd is safe with the members
 * that are down counted as down. The voters are the members marked status.isVoter, not being
 * deleted, not dormant; "ready" is their Pod's Ready condition. Safe when the ready voters are a
 * quorum of today's voters (so that the change commits) and the ready voters left are a quorum
 * of the voters left (so that the cluster still serves after it). *ready_after and
 * *voters_after (when not NULL) receive the counts without victim.
 */
bool eo_plan_removal_keeps_quorum(const struct eo_plan_member *members, size_t n,
				  const struct eo_plan_member *victim, size_t *ready_after,
				  size_t *voters_after);

/*
 * The member scale-down removes next, among those not being deleted: one that never joined
 * (pending), then a learner (not marked a voter), then a voter whose Pod is not ready, then a
 * ready voter; within each, the newest (creationTimestamp, then name, descending). NULL when
 * there is none. Whether its removal is safe is eo_plan_removal_keeps_quorum()'s answer.
 */
const struct eo_plan_member *eo_plan_scale_down_victim(const struct eo_plan_member *members,
						       size_t n);

/*
 * Whether an object read live from the apiserver (NULL: not found) tells another story than
 * the cached one a decision was planned on (NULL: absent from the cache): one is present and
 * the other not, their UIDs differ, or only one is being deleted. Destructive steps (removing a
 * member, creating a PVC for a member) plan again with the live object when it does.
 */
bool eo_plan_observed_differs(const json_t *cached, const json_t *live);

/*
 * Creates are idempotent: a new EtcdMember is named "<cluster>-<5 chars>" (the shape
 * generateName gives) from status.nextMemberName, which the planner records in the cluster's
 * status before the create. A retried create (operator restarted, slow cache, a second replica)
 * uses the same name and collides (409) instead of making a second seed or joining member. Once
 * the name is taken by an EtcdMember, the next name is recorded with the next status write.
 *
 * eo_plan_next_member_name() is that name: deterministic in the cluster's UID, the previous
 * name (NULL/"" for the first) and attempt (raised while the name is taken), random-looking.
 * 0, or -1 when it does not fit.
 */
int eo_plan_next_member_name(const char *cluster, const char *cluster_uid, const char *prev,
			     unsigned attempt, char *buf, size_t n);

/* Lowercase hex of an etcd id, as in status.clusterID / status.memberID. buf >= 17 bytes. */
#define EO_PLAN_ID_MAX 17
void eo_plan_format_id(uint64_t id, char *buf, size_t n);

/*
 * Whether a reply's header cluster_id is this EtcdCluster's (status.clusterID, compared
 * without regard to case). True when the cluster has no ID yet or the reply carried none (0):
 * the guard is against another cluster answering at this cluster's addresses, never a reason
 * to stop before an ID is known.
 */
bool eo_plan_same_cluster(const json_t *cluster, uint64_t cluster_id);

/*
 * The member of list whose name is member_name or whose peer URLs include peer_url, or NULL.
 */
const struct eo_etcd_member *eo_plan_find_etcd_member(const struct eo_etcd_members *list,
						      const char *member_name,
						      const char *peer_url);

#endif
