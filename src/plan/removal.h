/*
 * plan/removal.h - the member finalizer's decision (pure): how an EtcdMember being deleted
 * leaves etcd before its finalizer is dropped.
 *
 * The finalizer is dropped without a MemberRemove only when the cluster is gone or being
 * deleted, when the EtcdMember carries the force annotation, when etcd's member list does
 * not list it - and only when that list carries this cluster's ID and is the leader's own
 * answer (a list read through another member may be stale or, at a reused address, another
 * cluster's: absence is never decided from one unverified answer) - or when it never joined (no Pod
 * ever ran, not a voter: at most a never-started learner, which the cluster controller removes as a
 * stray). Otherwise the member is removed through the other members (voters first, oldest Pod
 * first, as eo_plan_voter_endpoints() orders them); when none is reachable the finalizer stays and
 * the member's Ready condition says why, until one is back.
 *
 * Two-phase use, as plan/plan.h: EO_RPLAN_QUERY_MEMBERS asks the caller to list etcd's
 * members through result->endpoints and plan again with the answer; with want_leader (the
 * member is not in that list), to confirm the list with etcd's leader first
 * (etcd_leader_checked, as eo_plan_input) and plan again. A MemberRemove answered NOTFOUND
 * proves nothing (the address may be another cluster's): the caller lists again, confirms
 * with the leader, and plans again.
 *
 * Ownership: result->status is a new reference freed by eo_plan_removal_clear(); the input
 * is borrowed.
 */
#ifndef EO_PLAN_REMOVAL_H
#define EO_PLAN_REMOVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "api/names.h" /* EO_ANNOTATION_FORCE_FINALIZE */
#include "plan/plan.h"

/* Reason of Ready=False (and a Warning Event) while the finalizer cannot remove the member. */
#define EO_PLAN_REASON_REMOVAL_BLOCKED "MemberRemovalBlocked"

enum eo_rplan_action {
	EO_RPLAN_DROP_FINALIZER = 0, /* nothing (more) to remove in etcd */
	EO_RPLAN_QUERY_MEMBERS,	     /* list etcd's members through endpoints, plan again */
	EO_RPLAN_MEMBER_REMOVE,	     /* MemberRemove(etcd_id) through endpoints, then drop */
	EO_RPLAN_WAIT,		     /* keep the finalizer; write status, retry in requeue_ms */
	EO_RPLAN_ACTION_COUNT_
};

const char *eo_rplan_action_name(enum eo_rplan_action a);

struct eo_rplan_input {
	const json_t *member;  /* the EtcdMember being deleted */
	const json_t *cluster; /* its EtcdCluster, NULL when gone */
	/* the cluster's EtcdMembers with their Pods (the member itself may be among them) */
	const struct eo_plan_member *members;
	size_t n_members;
	const struct eo_desired_opts *build;
	bool etcd_queried;
	eo_etcd_err etcd_err;		    /* EO_ETCD_OK when etcd is valid */
	const struct eo_etcd_members *etcd; /* borrowed */
	/* The list confirmed with etcd's leader (plan.h, eo_plan_input.etcd_leader_checked). */
	bool etcd_leader_checked;
	bool etcd_from_leader;
	const char *etcd_leader_why;
	time_t now;
};

struct eo_rplan_result {
	enum eo_rplan_action action;
	uint64_t etcd_id; /* MEMBER_REMOVE */
	/* QUERY_MEMBERS, MEMBER_REMOVE: the other members' client URLs */
	char endpoints[EO_PLAN_MAX_ENDPOINTS][EO_DESIRED_URL_MAX];
	size_t n_endpoints;
	bool want_leader;    /* QUERY_MEMBERS: confirm the list with the leader, plan again */
	json_t *status;	     /* WAIT: the member's desired status (new ref), else NULL */
	bool status_changed; /* status differs from the member's */
	long requeue_ms;
	const char *event_type; /* "Warning" with WAIT, else NULL */
	const char *event_reason;
	char message[EO_PLAN_MSG_MAX];
};

/* Plans the next step. 0, or -1 on allocation failure / missing metadata. */
int eo_plan_member_removal(const struct eo_rplan_input *in, struct eo_rplan_result *out);
void eo_plan_removal_clear(struct eo_rplan_result *r);

#endif
