/*
 * plan/defrag.h - the next step of an EtcdDefrag (pure), and the health gate it shares with
 * the NOSPACE recovery (plan/nospace.h).
 *
 * Input: the EtcdDefrag, its EtcdCluster, the other EtcdDefrags of the namespace and, once the
 * planner asked for it (QUERY), the Maintenance Status of every member; after a Defragment
 * call, what the call did (done). Output: one action, the desired status and an Event.
 *
 *   phase Complete / Failed      nothing, except deleting the object ttlSecondsAfterFinished
 *                                after status.completionTime (DELETE)
 *   done set                     record the member's outcome: Defragmented (DbSize before and
 *                                after, bytes reclaimed), or a failed attempt (DefragTimeout or
 *                                DefragFailed, a Warning Event); after EO_DPLAN_MAX_ATTEMPTS
 *                                the member is Failed and so is the run
 *   spec invalid                 Failed / InvalidSpec
 *   past EO_DPLAN_DEADLINE_S     Failed / DeadlineExceeded (waiting and running together)
 *   cluster missing, deleting    Pending / ClusterNotFound
 *   cluster paused               Pending / ClusterPaused
 *   another run holds the cluster Pending / WaitingForOtherDefrag: a Running one, else the
 *                                oldest not finished (creationTimestamp, then name) goes first
 *   cluster not settled          Pending / ClusterNotReady: Available is not True/QuorumHealthy,
 *                                Progressing is not False (a membership change or roll is in
 *                                flight), or the status is older than the spec
 *   not queried yet              QUERY (refresh_in_use unless rule.all: etcd recomputes
 *                                DbSizeInUse only at a backend commit after the pages were
 *                                freed, so on an idle cluster a member that applied a
 *                                compaction keeps reporting the old figure until the next
 *                                write; the caller makes one write that changes no key first)
 *   another cluster answers      Pending (Running when started) / ClusterIDMismatch: a
 *                                member's Status carries another cluster ID (eo_dplan_foreign)
 *   etcd not healthy             Pending (Running when started) / ClusterUnhealthy: a member
 *                                did not answer, members disagree on the leader or know none,
 *                                a member reports an alarm or error, a member is a learner, or
 *                                one is more than EO_DPLAN_MAX_APPLY_LAG entries behind
 *   moved set                    record the MoveLeader of this pass in the member's
 *                                leaderMoves: done (Defragmenting, Normal Event), or failed
 *                                (LeaderMoveFailed, Warning Event, retried); plan again after
 *                                a fresh look
 *   otherwise                    members one at a time, followers (by name) before the leader:
 *                                a member whose reclaimable space (DbSize - DbSizeInUse) is not
 *                                above the floor is Skipped (no call); the first other is
 *                                next. The floor is rule.freeSpaceAbove, or rule.minReclaim
 *                                once DbSize passes rule.quotaUsageAbove percent of the quota;
 *                                rule.all defragments every member. When every member has an
 *                                outcome: Complete / Defragmented.
 *     a member not caught up     Running / WaitingForCatchUp: before any call, every member's
 *                                applied index must be within EO_DPLAN_CATCHUP_LAG entries of
 *                                the leader's raft index (the member defragmented last has
 *                                replayed what it missed); looked at again after
 *                                EO_DPLAN_NEXT_MS
 *     the next is the leader     MOVE_LEADER to the follower closest to the leader's index
 *     and has peers              (then by name): the former leader is defragmented as a
 *                                follower, so writes go on through the new leader. After
 *                                EO_DPLAN_MAX_ATTEMPTS failed moves it is defragmented in
 *                                place, as the leader, with the reason in the message
 *     else                       DEFRAG
 */
#ifndef EO_PLAN_DEFRAG_H
#define EO_PLAN_DEFRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "etcd/types.h"
#include "plan/plan.h"

#define EO_DPLAN_MEMBER_TIMEOUT_MS 120000L /* bounds one Defragment call */
#define EO_DPLAN_DEADLINE_S	   3600	   /* from creation: waiting plus running */
#define EO_DPLAN_MAX_ATTEMPTS	   3	   /* Defragment calls per member */
#define EO_DPLAN_MAX_APPLY_LAG	   1000	   /* raftIndex - raftAppliedIndex of a healthy member */
#define EO_DPLAN_RETRY_MS	   10000L  /* a Pending run looks again after */
#define EO_DPLAN_NEXT_MS	   1000L   /* between two members */
#define EO_DPLAN_CATCHUP_LAG	   100	   /* leader's raftIndex - a member's raftAppliedIndex */
#define EO_DPLAN_MOVE_TIMEOUT_MS   15000L  /* bounds one MoveLeader call */
/* etcd's default backend quota (--quota-backend-bytes 0). */
#define EO_DPLAN_DEFAULT_QUOTA (2LL << 30)

#define EO_COND_DEFRAG_READY "Ready"
/* Reasons of an EtcdDefrag's Ready condition. */
#define EO_REASON_DEFRAG_INVALID    "InvalidSpec"
#define EO_REASON_DEFRAG_NO_CLUSTER "ClusterNotFound"
#define EO_REASON_DEFRAG_PAUSED	    "ClusterPaused"
#define EO_REASON_DEFRAG_WAITING    "WaitingForOtherDefrag"
#define EO_REASON_DEFRAG_NOT_READY  "ClusterNotReady"
#define EO_REASON_DEFRAG_UNHEALTHY  "ClusterUnhealthy"
#define EO_REASON_DEFRAG_RUNNING    "Defragmenting"
#define EO_REASON_DEFRAG_DONE	    "Defragmented"
#define EO_REASON_DEFRAG_TIMEOUT    "DefragTimeout"
#define EO_REASON_DEFRAG_FAILED	    "DefragFailed"
#define EO_REASON_DEFRAG_DEADLINE   "DeadlineExceeded"
/* A member answered with another cluster ID than status.clusterID (a reused address). */
#define EO_REASON_DEFRAG_CLUSTER_ID "ClusterIDMismatch"
/* A member is not within EO_DPLAN_CATCHUP_LAG entries of the leader yet. */
#define EO_REASON_DEFRAG_CATCHUP "WaitingForCatchUp"
/* MoveLeader, before the leader's defragment, failed (retried). */
#define EO_REASON_DEFRAG_MOVE_FAILED "LeaderMoveFailed"

enum eo_dplan_action {
	EO_DPLAN_NONE = 0,    /* nothing (or only the status to write) */
	EO_DPLAN_WAIT,	      /* come back after requeue_ms */
	EO_DPLAN_QUERY,	      /* read every member's status; plan again with queried */
	EO_DPLAN_DEFRAG,      /* Defragment members[target]; plan again with done */
	EO_DPLAN_DELETE,      /* delete the EtcdDefrag (ttlSecondsAfterFinished passed) */
	EO_DPLAN_MOVE_LEADER, /* MoveLeader from members[target] (the leader) to
			       * members[transferee]; plan again with moved */
};

/* One member of the cluster as the controller saw it. */
struct eo_dplan_member {
	const char *name;		 /* the EtcdMember's name */
	const char *endpoint;		 /* its client URL */
	const struct eo_etcd_status *st; /* its Maintenance Status, NULL: no answer */
	const char *error;		 /* why there is no answer (NULL when st is set) */
};

/* What the Defragment call of this pass did. */
struct eo_dplan_done {
	const char *name; /* the member */
	eo_etcd_err err;
	const char *detail;    /* etcd's or the transport's message */
	int64_t db_size_after; /* from a status after the call; -1 unknown */
};

/* What the MoveLeader call of this pass did. */
struct eo_dplan_moved {
	const char *name; /* the member that led */
	const char *to;	  /* the member asked to take over */
	eo_etcd_err err;
	const char *detail;
};

struct eo_dplan_input {
	const json_t *defrag;  /* the EtcdDefrag, with status */
	const json_t *cluster; /* its EtcdCluster, or NULL */
	const json_t *others;  /* array of the namespace's other EtcdDefrags, or NULL */
	bool queried;	       /* members[] holds the statuses */
	const struct eo_dplan_member *members;
	size_t n_members;
	const struct eo_dplan_done *done;   /* NULL: no call this pass */
	const struct eo_dplan_moved *moved; /* NULL: no MoveLeader this pass */
	time_t now;
};

struct eo_dplan_result {
	enum eo_dplan_action action;
	size_t target;	     /* DEFRAG, MOVE_LEADER: index into members */
	size_t transferee;   /* MOVE_LEADER: the member to take over, index into members */
	json_t *status;	     /* desired status (new reference) */
	bool status_changed; /* differs from the current one */
	bool refresh_in_use; /* QUERY: make every member commit before reading DbSizeInUse */
	long requeue_ms;
	const char *event_type; /* NULL: no Event */
	const char *event_reason;
	char message[EO_PLAN_MSG_MAX];
};

const char *eo_dplan_action_name(enum eo_dplan_action a);

/* Plans the next step. 0, or -1 on allocation failure or missing metadata. */
int eo_plan_defrag(const struct eo_dplan_input *in, struct eo_dplan_result *out);

void eo_dplan_result_clear(struct eo_dplan_result *r);

/*
 * The health gate: every member answered, all name the same leader (not 0) and it is one of
 * them, none is a learner, none reports an error (alarms included, unless ignore_alarms), none
 * lags more than EO_DPLAN_MAX_APPLY_LAG. The leader's member id, or 0 with why in buf.
 */
uint64_t eo_dplan_healthy(const struct eo_dplan_member *members, size_t n, bool ignore_alarms,
			  char *buf, size_t cap);

/*
 * Whether a member's Status carries another cluster ID than the EtcdCluster's status.clusterID
 * (eo_plan_same_cluster): another etcd cluster answers at that member's address (a reused Pod
 * IP, a stale DNS record). True with why in buf; nothing is compacted or defragmented then.
 */
bool eo_dplan_foreign(const json_t *cluster, const struct eo_dplan_member *members, size_t n,
		      char *buf, size_t cap);

/* The backend quota of the cluster: the members' reported quota (3.6), else
 * spec.options.quotaBackendBytes (etcd's default when unset), or status.quotaBackendBytes
 * (spec.quotaGuard.autoRaise) when larger. */
int64_t eo_dplan_quota(const json_t *cluster, const struct eo_dplan_member *members, size_t n);

#endif
