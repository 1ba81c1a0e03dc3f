/*
 * plan/needs.h - what a plan asks to be observed beyond the caches before its action is carried
 * out: the reconcilers observe, plan, and while the plan needs more (etcd, the leader, a live
 * read), observe that and plan again; then act (controller/cluster.c, controller/member.c).
 *
 * Each kind of observation is made at most once a pass, in the order of the enums below: the
 * reconciler passes the last need it met as `after`, and only a later one is asked for (the
 * cluster's CONFIRM excepted: the member to remove is re-read each time its plan names one,
 * up to EO_PLAN_CONFIRM_MAX times). Pure: no I/O.
 */
#ifndef EO_PLAN_NEEDS_H
#define EO_PLAN_NEEDS_H

#include "plan/member.h"
#include "plan/plan.h"

/* What the cluster plan (eo_plan_cluster) needs observed next. */
enum eo_plan_need {
	EO_PLAN_NEED_NONE = 0,
	/*
	 * QUERY_MEMBERS: ask etcd (member list, status, auth) through result->endpoints, first
	 * reading every member's Pod and PVC live (want_live) and their Nodes (want_nodes).
	 */
	EO_PLAN_NEED_ETCD,
	/* QUERY_MEMBERS with want_leader: confirm etcd's member list with the leader. */
	EO_PLAN_NEED_LEADER,
	/* REMOVE_MEMBER: re-read the member to remove (result->member) and what it owns live. */
	EO_PLAN_NEED_CONFIRM,
	/* READ_CLASS: the StorageClass result->storage_class, live (plan/storage.h). */
	EO_PLAN_NEED_CLASS,
};

/*
 * Live re-reads of the member to remove that found the cache behind the apiserver before the
 * pass gives up and comes back (the objects keep changing under it).
 */
#define EO_PLAN_CONFIRM_MAX 3

/*
 * What r, planned on in, needs observed before it is acted on, among the needs after `after`
 * (EO_PLAN_NEED_CONFIRM may repeat); EO_PLAN_NEED_NONE: act on r.
 */
enum eo_plan_need eo_plan_cluster_needs(const struct eo_plan_result *r,
					const struct eo_plan_input *in, enum eo_plan_need after);

/* What the member plan (eo_member_plan) needs observed next. */
enum eo_mplan_need {
	EO_MPLAN_NEED_NONE = 0,
	/*
	 * QUERY_ETCD or REMOVE_MEMBER of a member whose cluster is there and not being deleted:
	 * the cluster's TLS material and root password, to reach etcd with.
	 */
	EO_MPLAN_NEED_CREDENTIALS,
	/* QUERY_ETCD: etcd's member list and status through result->endpoint. */
	EO_MPLAN_NEED_ETCD,
	/*
	 * CREATE_PVC, or WAIT with the data volume called lost: the member's PVC read live (never
	 * a PVC created, nor a volume called lost, on the cache alone).
	 */
	EO_MPLAN_NEED_PVC,
	/* READ_CLASS: the StorageClass result->storage_class of the member's unbound PVC, live. */
	EO_MPLAN_NEED_CLASS,
	/* READ_VOLUME: the restore source PVC result->volume read live. */
	EO_MPLAN_NEED_VOLUME,
	/*
	 * PATCH_POD of a member the cache shows without the voter mark: the EtcdMember read live
	 * (never the voter label taken off on the cache alone).
	 */
	EO_MPLAN_NEED_MEMBER,
};

/*
 * What r, planned on in, needs observed before it is acted on, among the needs after `after`;
 * EO_MPLAN_NEED_NONE: act on r.
 */
enum eo_mplan_need eo_member_plan_needs(const struct eo_mplan_result *r,
					const struct eo_mplan_input *in, enum eo_mplan_need after);

#endif
