/*
 * plan/forcenew.h - quorum-loss recovery through etcd's --force-new-cluster (pure).
 *
 * When a majority of a cluster's voters lost their data for good (their PVCs are gone), no
 * membership change can commit any more and the cluster reads QuorumLost. The user may then
 * annotate the EtcdCluster with EO_ANNOTATION_FORCE_NEW_CLUSTER = <a surviving member>. The
 * recovery never starts without it, and only while the quorum really is gone.
 *
 * The steps, each resumable, carried by an operator-set annotation on the survivor's EtcdMember
 * (EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP):
 *
 *   1. MARK: the survivor gets step "forcing"; the Pod the member controller builds for a
 *      member so marked runs etcd with --force-new-cluster (desired/desired.h).
 *   2. RESTART: its Pod (built before the mark) is deleted; the member controller recreates
 *      it, with the flag, on the same PVC. etcd rewrites the membership to itself alone,
 *      keeping its data, cluster ID and member ID.
 *   3. QUERY, then MARK_FORCED once etcd's member list, read through the survivor, lists it
 *      alone: step "forced". The flag is no longer in the desired Pod.
 *   4. RESTART again: the Pod that still carries the flag goes, so that a later restart of
 *      etcd (a crash, a node reboot) never forces a new cluster again once members rejoin.
 *   5. PROCEED: the usual planning takes over, with the quorum-lost stop lifted: the lost
 *      members, which etcd no longer lists, lose their voter mark and are deleted (their
 *      finalizer finds nothing to remove), and the scale-up path adds new members with new
 *      PVCs up to spec.replicas.
 *   6. FINISH once the cluster is whole and ready: the EtcdCluster's annotation is removed;
 *      then, with no request left, UNMARK drops the survivor's step annotation.
 *
 * A request that names no member of the cluster, a member without data (its PVC lost, memory
 * storage, never joined, dormant, not a voter), or a cluster whose voters did not lose a
 * majority of their data is REFUSED: nothing changes, the caller says why (condition, Event).
 *
 * Acting on the truth. The caches hold only objects labelled as the operator's, so a PVC whose
 * label was removed looks gone. Before MARK, and again before the first RESTART (the Pod that
 * does not carry the flag yet), the decision is CHECK until the caller has read every member's
 * Pod and PVC live from the apiserver (the rows' lost/pod fields then come from those reads)
 * and asked etcd's Maintenance Status of every member (input checked). It then goes on only
 * when (eo_plan_force_new_cluster_check):
 *   - every answer carries this cluster's ID (else ForceNewClusterForeignCluster);
 *   - no member called lost answers at all: it is alive (ForceNewClusterLostMemberAnswers);
 *   - no member answers with a leader, the survivor included: a quorum still works somewhere
 *     (ForceNewClusterLeaderPresent);
 *   - the survivor answered and holds the highest (raftTerm, raftIndex) of all answers, or no
 *     other member answered (ForceNewClusterNotFreshest, naming the freshest member).
 * A refusal before the first RESTART also drops the survivor's mark (unmark), so that no Pod
 * with the flag is ever built for it.
 * A request removed half way stops the recovery: a leftover mark is dropped and a Pod that
 * still carries the flag is restarted without it.
 */
#ifndef EO_PLAN_FORCENEW_H
#define EO_PLAN_FORCENEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "desired/desired.h" /* EO_DESIRED_FORCE_NEW_CLUSTER_STEP_FORCING */

/* Values of EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP on the survivor's EtcdMember. */
#define EO_FNC_STEP_FORCING EO_DESIRED_FORCE_NEW_CLUSTER_STEP_FORCING /* Pod has the flag */
#define EO_FNC_STEP_FORCED  "forced" /* etcd listed it alone; re-adding the others */

/* Reasons (the ForceNewCluster condition and Events). Not in the seeds. */
#define EO_PLAN_COND_FORCE_NEW_CLUSTER		 "ForceNewCluster"
#define EO_PLAN_REASON_FORCE_NEW_CLUSTER	 "ForceNewCluster"
#define EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED "ForceNewClusterRefused"
#define EO_PLAN_REASON_FORCE_NEW_CLUSTER_DONE	 "ForceNewClusterDone"
/* Refusals of the checks made on the live view and etcd's answers (see above). */
#define EO_PLAN_REASON_FORCE_NEW_CLUSTER_FOREIGN      "ForceNewClusterForeignCluster"
#define EO_PLAN_REASON_FORCE_NEW_CLUSTER_LOST_ANSWERS "ForceNewClusterLostMemberAnswers"
#define EO_PLAN_REASON_FORCE_NEW_CLUSTER_LEADER	      "ForceNewClusterLeaderPresent"
#define EO_PLAN_REASON_FORCE_NEW_CLUSTER_NOT_FRESHEST "ForceNewClusterNotFreshest"

#define EO_FNC_MSG_MAX 512

/* One EtcdMember of the cluster, as the recovery sees it. */
struct eo_fnc_member {
	const char *name;
	bool deleting;	  /* metadata.deletionTimestamp set */
	bool pending;	  /* never joined (no initialCluster) */
	bool dormant;	  /* spec.dormant */
	bool memory;	  /* storage.medium Memory */
	bool voter;	  /* status.isVoter */
	bool lost;	  /* its data is gone (eo_plan_member_lost_data) */
	const char *step; /* its EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP, NULL: none */
	bool pod_present; /* a Pod not being deleted */
	bool pod_ready;	  /* that Pod is ready */
	bool pod_forces;  /* that Pod runs etcd with --force-new-cluster */
	/* Its etcd's Maintenance Status, when input checked: */
	bool answered;	     /* it answered at the member's address */
	bool foreign;	     /* ... with another cluster ID than this cluster's */
	uint64_t cluster_id; /* ... that ID (foreign) */
	uint64_t leader;     /* ... the leader it names, 0: none */
	uint64_t raft_term;  /* ... its raftTerm and raftIndex */
	uint64_t raft_index;
};

struct eo_fnc_input {
	const char *request; /* the EtcdCluster's annotation, NULL or "": none */
	const struct eo_fnc_member *m;
	size_t n;
	/* The cluster has spec.replicas members, none pending or being deleted, all ready voters.
	 */
	bool whole;
	/*
	 * The rows come from live reads of every member's Pod and PVC, and the members' answers
	 * to Maintenance Status are filled in (not answered: down or unreachable).
	 */
	bool checked;
	/* etcd's member list, read through the survivor (QUERY asks for it) */
	bool etcd_queried;
	bool etcd_ok;	      /* the list below is valid */
	size_t etcd_n;	      /* members in it, learners included */
	bool survivor_listed; /* the survivor is one of them */
	bool etcd_foreign;    /* the list carries another cluster ID than this cluster's */
};

enum eo_fnc_step {
	EO_FNC_NONE = 0,    /* no recovery: plan as usual */
	EO_FNC_REFUSE,	    /* the request is refused (why); plan as usual otherwise */
	EO_FNC_MARK,	    /* set member's step to "forcing" */
	EO_FNC_RESTART,	    /* delete member's Pod: it comes back from the (un)marked member */
	EO_FNC_WAIT,	    /* the survivor's Pod is on its way (why says what) */
	EO_FNC_QUERY,	    /* list etcd's members through the survivor, decide again */
	EO_FNC_MARK_FORCED, /* set member's step to "forced" */
	EO_FNC_PROCEED,	    /* re-add the others: plan as usual, quorum-lost stop lifted */
	EO_FNC_FINISH,	    /* remove the EtcdCluster's annotation */
	EO_FNC_UNMARK,	    /* remove member's step annotation */
	EO_FNC_CHECK, /* read every Pod and PVC live, ask every member's Status, decide again */
};

/* "none", "refuse", ...; never NULL. */
const char *eo_fnc_step_name(enum eo_fnc_step s);

struct eo_fnc_decision {
	enum eo_fnc_step step;
	size_t member; /* MARK, RESTART, MARK_FORCED, UNMARK, and the survivor otherwise: index */
	bool has_member;
	/* REFUSE: the condition's reason (EO_PLAN_REASON_FORCE_NEW_CLUSTER_*), never NULL */
	const char *reason;
	/* REFUSE: the survivor's step mark is dropped too (refused before its first restart) */
	bool unmark;
	char why[EO_FNC_MSG_MAX];
};

/*
 * The next step of the recovery, as described above. Returns 0, or -1 on bad input (NULL, or
 * n > 0 without rows).
 */
int eo_plan_force_new_cluster_decide(const struct eo_fnc_input *in, struct eo_fnc_decision *out);

/*
 * Whether a recovery through member si may start, as eo_plan_force_new_cluster_decide() would
 * let it on a checked input: the request-shape rules (a voter with its data, a majority of the
 * voters lost) and the checks on etcd's answers above. False with out->reason and out->why
 * saying why not; true otherwise (out untouched). in->checked must be set.
 */
bool eo_plan_force_new_cluster_check(const struct eo_fnc_input *in, size_t si,
				     struct eo_fnc_decision *out);

#endif
