/*
 * plan/nospace.h - recovery from etcd's NOSPACE alarm (pure).
 *
 * etcd raises NOSPACE when a member's backend passes its quota (--quota-backend-bytes); from
 * then on the cluster refuses every write but deletes and compactions until the alarm is
 * disarmed. etcd's documented recovery is: compact the keyspace to the current revision,
 * defragment every member, then disarm the alarm once the database fits under the quota again.
 * This planner decides those steps for one EtcdCluster and writes what it sees as the
 * cluster's NoSpace condition:
 *
 *   alarm list unreadable        nothing (looked at again later)
 *   no NOSPACE alarm             NoSpace=False/Recovered when the condition was True (the alarm
 *                                went away); no condition at all on a cluster that never had one
 *   NOSPACE, a member answers    NoSpace=True/ClusterIDMismatch: nothing is compacted or
 *   for another cluster          defragmented (eo_dplan_foreign)
 *   NOSPACE, etcd not healthy    NoSpace=True/NoSpaceAlarm "... waiting: <why>" (a member does
 *   (alarms ignored)             not answer, no leader, a learner ...)
 *   NOSPACE, recovered (now or   DISARM, then NoSpace=False/Recovered
 *   before), every member's
 *   DbSize under the quota
 *   NOSPACE, tried less than     NoSpace=True/NoSpaceNotReclaimed: compaction and defragment
 *   EO_NPLAN_RETRY_S ago         did not bring DbSize under the quota; the data itself is too
 *                                big: delete keys or raise spec.options.quotaBackendBytes
 *   NOSPACE otherwise            RECOVER: compact to the current revision, defragment the
 *                                members in order (followers by name, then the leader), read
 *                                the statuses again and plan with recovered set
 *
 * Before the alarm, the quota guard (spec.quotaGuard, on by default): with no NOSPACE alarm,
 * once a member's DbSize passes thresholdPercent (default 80) of the quota:
 *
 *   guard off, under the threshold   nothing
 *   a member answers for another     nothing; note (warn): the guard refuses
 *   cluster, or etcd not healthy     note (warn): the guard waits, why
 *   a guard run not finished         nothing; note (debug)
 *   a guard run made less than       nothing; note (debug): at most one run per
 *   EO_NPLAN_GUARD_SPACING_S ago     EO_NPLAN_GUARD_SPACING_S
 *   otherwise                        GUARD: compact to the current revision, then create
 *                                    out->create, an EtcdDefrag "<cluster>-quota-YYYYMMDDHHMM"
 *                                    (rule: freeSpaceAbove EO_NPLAN_GUARD_FLOOR_PCT % of the
 *                                    quota, at least 1 MiB: after the compaction every member
 *                                    with that much to give back, whatever its own size; it
 *                                    moves the leadership away before the leader's turn,
 *                                    plan/defrag.h), with a Warning Event QuotaThresholdPassed
 *                                    on the cluster
 *
 * With spec.quotaGuard.autoRaise.enabled (off by default), when a member's DbSize is still
 * over the threshold although a guard run (an EtcdDefrag that reached Complete) was made less
 * than EO_NPLAN_GUARD_SPACING_S ago, the quota is raised instead of waiting for the next run:
 *
 *   raised less than EO_NPLAN_RAISE_SPACING_S  nothing; note (debug)
 *   ago, or before the guard run was made
 *   a member reports (etcd 3.6) a quota under   nothing; note (debug): the members have not
 *   the effective one                           rolled onto the last raise yet
 *   memory-backed cluster; a member's PVC is    RAISE with QuotaAutoRaise=False/
 *   not Bound or reports no capacity; the new   QuotaRaiseRefused and a Warning Event (once
 *   quota would not be above the current one    per message: the status changes only then)
 *   otherwise                                   RAISE: status.quotaBackendBytes = the new
 *                                               quota, status.quotaRaisedTime = now,
 *                                               QuotaAutoRaise=True/QuotaRaised, a Normal
 *                                               Event QuotaRaised with the old and new values
 *
 * The new quota is twice the effective one (api/defrag.h eo_cluster_effective_quota, or what
 * a member reports when that is larger), capped by autoRaise.maxBytes, by EO_QUOTA_RAISE_ETCD_MAX
 * and by EO_QUOTA_RAISE_VOLUME_PCT % of the smallest member PVC's status.capacity.storage (the
 * database, the copy a defragmentation writes beside it, the WAL and the snapshots share the
 * volume). It is never lowered. The members pick it up through the roll: the cluster's target
 * carries max(spec.options.quotaBackendBytes, status.quotaBackendBytes) (desired/desired.h).
 *
 * Nothing here removes a member or touches data beyond compaction and defragmentation.
 */
#ifndef EO_PLAN_NOSPACE_H
#define EO_PLAN_NOSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "etcd/types.h"
#include "plan/defrag.h"

#define EO_NPLAN_INTERVAL_MS	 30000L /* how often a formed cluster's alarms are read */
#define EO_NPLAN_RETRY_S	 300	/* between two recoveries that did not reclaim enough */
#define EO_NPLAN_GUARD_SPACING_S 3600	/* between two quota guard runs of a cluster */
#define EO_NPLAN_GUARD_TTL_S	 3600	/* a guard run is kept this long after it finishes */
#define EO_NPLAN_GUARD_FLOOR_PCT 5	/* of the quota: the floor of the guard's EtcdDefrag */
#define EO_NPLAN_GUARD_FLOOR_MIN (1LL << 20)
#define EO_NPLAN_RAISE_SPACING_S 3600 /* between two raises of the quota */

#define EO_COND_NOSPACE		      "NoSpace"
#define EO_REASON_NOSPACE_ALARM	      "NoSpaceAlarm"
#define EO_REASON_NOSPACE_RECOVERING  "Recovering"
#define EO_REASON_NOSPACE_NOT_RECLAIM "NoSpaceNotReclaimed"
#define EO_REASON_NOSPACE_RECOVERED   "Recovered"
/* A member's Status carries another cluster ID (plan/defrag.h, eo_dplan_foreign). */
#define EO_REASON_NOSPACE_CLUSTER_ID "ClusterIDMismatch"
/* Event reasons of the quota guard on the EtcdCluster. */
#define EO_REASON_QUOTA_GUARD	     "QuotaThresholdPassed"
#define EO_REASON_QUOTA_GUARD_FAILED "QuotaGuardFailed"
/* spec.quotaGuard.autoRaise: the condition and its reasons (also the Events' reasons). */
#define EO_COND_QUOTA_RAISE	      "QuotaAutoRaise"
#define EO_REASON_QUOTA_RAISED	      "QuotaRaised"
#define EO_REASON_QUOTA_RAISE_REFUSED "QuotaRaiseRefused"

enum eo_nplan_action {
	EO_NPLAN_NONE = 0,
	EO_NPLAN_QUERY,	  /* read the alarms and every member's status; plan again */
	EO_NPLAN_RECOVER, /* compact, defragment order[], re-read statuses; plan again */
	EO_NPLAN_DISARM,  /* disarm every NOSPACE alarm; plan again with disarmed */
	EO_NPLAN_GUARD,	  /* compact to the current revision, then create out->create */
	EO_NPLAN_RAISE,	  /* autoRaise decided (raised or refused): write out->status */
};

enum eo_nplan_note {
	EO_NPLAN_NOTE_NONE = 0,
	EO_NPLAN_NOTE_DEBUG, /* the guard waits, as it should (a run in flight, the spacing) */
	EO_NPLAN_NOTE_WARN,  /* the guard cannot act: message says why */
};

struct eo_nplan_input {
	const json_t *cluster; /* the EtcdCluster, with status */
	bool queried;
	const struct eo_dplan_member *members;
	size_t n_members;
	const struct eo_etcd_alarms *alarms; /* NULL: the list could not be read */
	bool recovered;			     /* RECOVER ran; members[] are the statuses after it */
	const char *recover_error;	     /* what went wrong in it, NULL when nothing */
	bool disarmed;			     /* DISARM ran without error */
	time_t last_attempt;	  /* the last RECOVER during this alarm, 0 none (the controller
				   * forgets it once the alarm is gone) */
	const json_t *guard_runs; /* array of the EtcdDefrags the guard made for this cluster
				   * (label EO_LABEL_QUOTA_GUARD), or NULL */
	const json_t *pvcs;	  /* array of the members' PVCs as observed (autoRaise reads
				   * their status.capacity.storage), or NULL */
	time_t now;
};

struct eo_nplan_result {
	enum eo_nplan_action action;
	size_t order[EO_PLAN_MAX_ENDPOINTS]; /* RECOVER: member indexes, leader last */
	size_t n_order;
	json_t *status; /* desired cluster status when it changes (new reference), else NULL */
	json_t *create; /* GUARD: the EtcdDefrag to create (new reference) */
	enum eo_nplan_note note; /* a message to log without a status change */
	long requeue_ms;
	const char *event_type;
	const char *event_reason;
	char message[EO_PLAN_MSG_MAX];
};

int eo_plan_nospace(const struct eo_nplan_input *in, struct eo_nplan_result *out);
void eo_nplan_result_clear(struct eo_nplan_result *r);
const char *eo_nplan_action_name(enum eo_nplan_action a);

#endif
