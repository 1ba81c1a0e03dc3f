/*
 * plan/nodeloss.h - a member's node in trouble (pure).
 *
 * A member runs on one node, and with a node-local volume its data lives and dies there. The
 * node can be lost (NotReady or Unknown: powered off, cut off, kubelet dead; or its Node object
 * deleted), or taken out of service (cordoned for maintenance, or marked by the user with
 * EO_ANNOTATION_EVACUATE=true). eo_plan_member_node_trouble() says which, since when, and
 * whether the grace (spec.nodeLossGracePeriod) has passed:
 *
 *   - NotReady: the Node's Ready condition is not True; the clock is that condition's
 *     lastTransitionTime (no condition: no clock, never due).
 *   - Gone: the Node object was looked up and is not there; the clock is the Pod's
 *     deletionTimestamp, else its Ready=False condition's lastTransitionTime (neither: never
 *     due).
 *   - Evacuate: the Node carries EO_ANNOTATION_EVACUATE="true": due at once once the node is
 *     also cordoned (so that the replacement cannot land on it again); before, only told.
 *   - Cordoned: spec.unschedulable; the clock is the timeAdded of the
 *     node.kubernetes.io/unschedulable taint the node lifecycle controller adds (absent:
 *     never due; the annotation still works).
 *
 * Within the grace nothing is removed (a reboot is not a loss): the cluster only reports it.
 * Past it, a member on a lost node (already unavailable), or one whose Pod no longer serves (a
 * drain evicted it), is removed through the quorum first and the scale-up path replaces it with
 * a new member (new name, new PVC); the member finalizer then force-deletes a Pod left on a
 * lost node (eo_plan_node_lost) and its PVC. A member that still serves on a cordoned or
 * evacuated node moves the other way round (eo_plan_node_move_first): its replacement is
 * created first, joins as a learner and is promoted, and only then is the member removed
 * through the quorum, so the cluster never runs on fewer voters than it should; while no other
 * node can take the replacement (eo_plan_node_move_blocked) nothing is removed and the cluster
 * says so (EO_PLAN_REASON_NODE_MOVE_BLOCKED). A member whose Pod is ready on a Ready node is
 * never touched by this, whatever etcd says about it (a partition heals).
 */
#ifndef EO_PLAN_NODELOSS_H
#define EO_PLAN_NODELOSS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "plan/plan.h"

/* The Node annotation that asks for the members on it to be moved elsewhere now. */
#define EO_ANNOTATION_EVACUATE "etcd-operator.cozystack.io/evacuate"
/* The taint the node lifecycle controller puts on a cordoned node. */
#define EO_TAINT_UNSCHEDULABLE "node.kubernetes.io/unschedulable"

/* Degraded=True reasons (and Warning Events) while a member's node is in trouble. */
#define EO_PLAN_REASON_NODE_NOT_READY	  "MemberNodeNotReady"
#define EO_PLAN_REASON_NODE_DRAINING	  "MemberNodeDraining"
#define EO_PLAN_REASON_MEMBER_UNREACHABLE "MemberUnreachable"
/* The Warning Event when a member is removed for its node (then replaced). */
#define EO_PLAN_REASON_NODE_LOST "MemberNodeLost"
/* The Normal Event when the replacement of a member leaving a cordoned node is created. */
#define EO_PLAN_REASON_NODE_MOVING "MemberMoving"
/* Degraded=True reason (and Warning Event) while that replacement cannot be placed. */
#define EO_PLAN_REASON_NODE_MOVE_BLOCKED "MemberMoveBlocked"

enum eo_node_trouble {
	EO_NODE_FINE = 0,
	EO_NODE_NOT_READY, /* Ready condition False or Unknown (or missing) */
	EO_NODE_GONE,	   /* the Node object does not exist */
	EO_NODE_EVACUATE,  /* annotated EO_ANNOTATION_EVACUATE=true */
	EO_NODE_CORDONED,  /* spec.unschedulable */
};

#define EO_NODE_WHY_MAX 512

struct eo_node_verdict {
	enum eo_node_trouble trouble;
	bool lost;		     /* NOT_READY or GONE: the node may never come back */
	bool due;		     /* past the grace (EVACUATE: at once when cordoned) */
	long left_s;		     /* not due with a clock: seconds left; -1 no clock */
	char node[EO_PLAN_NAME_MAX]; /* the Pod's spec.nodeName */
	char why[EO_NODE_WHY_MAX];   /* "node n1 is NotReady (Unknown) since ...", ... */
};

/* The annotation the scheduler puts on a claim provisioned for a node (WaitForFirstConsumer). */
#define EO_ANNOTATION_SELECTED_NODE "volume.kubernetes.io/selected-node"

/*
 * The node a member lives on: its Pod's spec.nodeName; for a Pod not bound to a node yet (one
 * recreated after its node went away, which a node-local volume keeps Pending), the node its
 * PVC was provisioned for (EO_ANNOTATION_SELECTED_NODE). NULL when neither says. Borrowed.
 */
const char *eo_plan_member_node_name(const json_t *pod, const json_t *pvc);

/* The label a local PV's node affinity names its node by. */
#define EO_LABEL_HOSTNAME "kubernetes.io/hostname"

/*
 * The PV to read for a member whose node neither its Pod nor its PVC names (a statically bound
 * local PV: no EO_ANNOTATION_SELECTED_NODE): its PVC's spec.volumeName when the Pod exists and
 * is not bound to a node and the PVC is bound; NULL otherwise (no read needed). Borrowed.
 */
const char *eo_plan_member_pv_to_read(const json_t *pod, const json_t *pvc);

/*
 * The node a node-local PV lives on: its spec.nodeAffinity.required names exactly one, by
 * EO_LABEL_HOSTNAME In [host] (one term, one value); NULL for any other PV (network storage,
 * several nodes, other keys). The value is the node's hostname label, usually its name.
 */
const char *eo_plan_pv_node_name(const json_t *pv);

/*
 * Whether member pm (not pending, dormant or being deleted; with a Pod on a node,
 * eo_plan_member_node_name) runs
 * on a node in trouble, looked up as pn (NULL: not looked up; pn->pv names the node when
 * neither the Pod nor the PVC does). grace_s: the cluster's
 * eo_cluster_node_loss_grace_seconds(). False (and v->trouble FINE) when the node is fine or
 * was not looked up.
 */
bool eo_plan_member_node_trouble(const struct eo_plan_member *pm, const struct eo_plan_node *pn,
				 long grace_s, time_t now, struct eo_node_verdict *v);

/*
 * Milliseconds from in->now until the soonest member's node trouble that is within its grace
 * becomes due (plus a second, so that the pass then finds it due); -1 when no such clock runs.
 * The planner caps its requeue with it: nothing on the Node changes when the grace ends, so no
 * Node event would bring the cluster back at that moment.
 */
long eo_plan_node_next_due_ms(const struct eo_plan_input *in);

/*
 * Whether a change of a Node (old_node NULL: it was added; new_node NULL: it was deleted) can
 * change what is said or done about the members on it, so that the informer enqueues their
 * clusters at once (eo_plan_clusters_on_node): its Ready condition's status, spec.unschedulable,
 * spec.taints, the EO_ANNOTATION_EVACUATE annotation, its deletion. An added Node matters only
 * when it comes in trouble (not Ready, cordoned or annotated): a healthy new node changes nothing
 * for the members that exist. The kubelet's heartbeats (every 10 s on each node: condition
 * heartbeat times, images, allocatable) change none of these and enqueue nothing.
 */
bool eo_plan_node_change_matters(const json_t *old_node, const json_t *new_node);

/*
 * The EtcdClusters with a member on node, as the caches know them: of pods (an array, may be
 * NULL), those bound to it (spec.nodeName); of pvcs (an array, may be NULL), those provisioned
 * for it (EO_ANNOTATION_SELECTED_NODE: the member whose Pod is not bound yet); each by its
 * EO_LABEL_CLUSTER label in its namespace. Appends "namespace/name" strings to keys (an array),
 * each once. 0, or -1 on OOM.
 */
int eo_plan_clusters_on_node(const json_t *pods, const json_t *pvcs, const char *node,
			     json_t *keys);

/*
 * Whether member pm, whose node trouble is v, moves add-before-remove: its node is cordoned or
 * evacuated (not lost) and the member still serves (eo_plan_member_serving). A member on a
 * lost node, or one whose Pod a drain already evicted, is removed first (it votes for nothing).
 */
bool eo_plan_node_move_first(const struct eo_plan_member *pm, const struct eo_node_verdict *v);

/*
 * The member joining the cluster (not being deleted, not dormant; pending, or not yet marked
 * a voter), in the order of members; NULL when none. During a move it is the replacement.
 */
const struct eo_plan_member *eo_plan_node_joining(const struct eo_plan_member *members, size_t n);

/*
 * Whether the joining member's Pod cannot be placed on any node: the scheduler says
 * Unschedulable, or its PVC stays unbound (plan/podissue.h: Unschedulable, VolumeNotBound).
 * why (n bytes) gets the text. A joiner without a Pod yet is not blocked.
 */
bool eo_plan_node_move_blocked(const struct eo_plan_member *joining, time_t now, char *why,
			       size_t n);

/*
 * Whether a Pod bound to a node sits on a lost one: node absent (node_absent) or its Ready
 * condition not True. The member finalizer force-deletes such a Pod (gracePeriodSeconds 0)
 * once the member is out of etcd: the kubelet that would confirm a graceful delete is gone.
 */
bool eo_plan_node_lost(const json_t *node, bool node_absent);

#endif
