/*
 * plan/removal.c - the member finalizer's decision. See removal.h.
 */
#include "plan/removal.h"

#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/meta.h"
#include "core/strbuf.h"
#include "core/util.h"

static const char *const names[EO_RPLAN_ACTION_COUNT_] = {
    [EO_RPLAN_DROP_FINALIZER] = "drop-finalizer",
    [EO_RPLAN_QUERY_MEMBERS] = "query-members",
    [EO_RPLAN_MEMBER_REMOVE] = "member-remove",
    [EO_RPLAN_WAIT] = "wait",
};

const char *eo_rplan_action_name(enum eo_rplan_action a)
{
	return EO_ENUM_NAME(names, a, "unknown");
}

void eo_plan_removal_clear(struct eo_rplan_result *r)
{
	if (r == NULL)
		return;
	json_decref(r->status);
	memset(r, 0, sizeof(*r));
}

#define msgf(out, ...) EO_FMT((out)->message, __VA_ARGS__)

static const char *status_str(const json_t *member, const char *key)
{
	return json_string_value(json_object_get(json_object_get(member, "status"), key));
}

/* Never ran a Pod and is not a voter: at most a learner that never started. */
static bool never_joined(const json_t *member)
{
	return !eo_member_is_voter(member) && !eo_present(status_str(member, "memberID")) &&
	       !eo_present(status_str(member, "podUID"));
}

static bool forced(const json_t *member)
{
	const char *v = eo_meta_annotation(member, EO_ANNOTATION_FORCE_FINALIZE);

	return v != NULL && strcmp(v, "true") == 0;
}

/* Keep the finalizer: Ready=False/<reason> with the message, a Warning Event. */
static int blocked_for(const struct eo_rplan_input *in, struct eo_rplan_result *out,
		       long requeue_ms, const char *reason)
{
	const json_t *cur = json_object_get(in->member, "status");
	json_t *empty = json_object();
	struct eo_condition c = {EO_COND_READY, EO_COND_FALSE, reason, out->message,
				 eo_member_generation(in->member)};

	out->action = EO_RPLAN_WAIT;
	out->requeue_ms = requeue_ms;
	out->event_type = "Warning";
	out->event_reason = reason;
	out->status = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	if (empty == NULL || out->status == NULL ||
	    eo_condition_set(out->status, &c, in->now) < 0) {
		json_decref(empty);
		eo_plan_removal_clear(out);
		return -1;
	}
	out->status_changed = !json_equal(json_is_object(cur) ? cur : empty, out->status);
	json_decref(empty);
	return 0;
}

/* Keep the finalizer: Ready=False/MemberRemovalBlocked. */
static int blocked(const struct eo_rplan_input *in, struct eo_rplan_result *out, long requeue_ms)
{
	return blocked_for(in, out, requeue_ms, EO_PLAN_REASON_REMOVAL_BLOCKED);
}

/*
 * The member is not in the list: the finalizer goes only on the leader's own answer. Before
 * the caller asked the leader, ask for it; when the leader could not confirm the list, keep
 * the finalizer and say which check failed.
 */
static int not_listed(const struct eo_rplan_input *in, struct eo_rplan_result *out,
		      const char *mname)
{
	if (!in->etcd_leader_checked) {
		msgf(out,
		     "member %s is not in the member list read through the other members; "
		     "confirming with etcd's leader before dropping the finalizer",
		     mname);
		out->action = EO_RPLAN_QUERY_MEMBERS;
		out->want_leader = true;
		return 0;
	}
	if (!in->etcd_from_leader) {
		msgf(out,
		     "member %s is not in the member list read through the other members, but "
		     "the list could not be confirmed as etcd's leader's: %s; the finalizer "
		     "stays, retrying",
		     mname,
		     eo_present(in->etcd_leader_why) ? in->etcd_leader_why : "no leader answered");
		return blocked_for(in, out, EO_PLAN_REQUEUE_ETCD_MS,
				   EO_PLAN_REASON_LIST_UNVERIFIED);
	}
	msgf(out, "member %s is not in etcd's leader's member list; dropping the finalizer", mname);
	out->action = EO_RPLAN_DROP_FINALIZER;
	return 0;
}

/* No other member has a running Pod to remove it through. */
static int no_other_member(const struct eo_rplan_input *in, struct eo_rplan_result *out,
			   const char *mname)
{
	const json_t *m = in->member;

	out->n_endpoints = 0;
	if (never_joined(m)) {
		msgf(out,
		     "member %s never joined (no Pod ran, not a voter) and no other member "
		     "is reachable; dropping the finalizer",
		     mname);
		out->action = EO_RPLAN_DROP_FINALIZER;
		return 0;
	}
	msgf(out,
	     "cannot remove member %s from etcd: no other member of cluster %s has a "
	     "running Pod to remove it through; the finalizer stays until one is back "
	     "(or delete the EtcdCluster, or annotate the EtcdMember %s=true)",
	     mname, eo_member_cluster_name(m), EO_ANNOTATION_FORCE_FINALIZE);
	return blocked(in, out, EO_PLAN_REQUEUE_SHORT_MS);
}

int eo_plan_member_removal(const struct eo_rplan_input *in, struct eo_rplan_result *out)
{
	const json_t *m = in->member;
	const char *mname = eo_member_name(m);
	char peer[EO_DESIRED_URL_MAX], id[24];
	const struct eo_etcd_member *em = NULL;
	int n;

	memset(out, 0, sizeof(*out));
	if (!eo_present(mname))
		return -1;
	if (in->cluster == NULL || eo_cluster_is_deleting(in->cluster)) {
		msgf(out, "cluster %s is gone or being deleted; skipping etcd member removal",
		     eo_member_cluster_name(m));
		out->action = EO_RPLAN_DROP_FINALIZER;
		return 0;
	}
	if (forced(m)) {
		msgf(out,
		     "annotation %s=true: dropping the finalizer without removing member %s "
		     "from etcd",
		     EO_ANNOTATION_FORCE_FINALIZE, mname);
		out->action = EO_RPLAN_DROP_FINALIZER;
		return 0;
	}
	n = eo_plan_voter_endpoints(in->members, in->n_members, m, in->cluster, in->build,
				    out->endpoints, EO_PLAN_MAX_ENDPOINTS);
	if (n < 0)
		return -1;
	out->n_endpoints = (size_t)n;
	if (n == 0)
		return no_other_member(in, out, mname);
	if (!in->etcd_queried) {
		msgf(out, "listing etcd's members through the other members");
		out->action = EO_RPLAN_QUERY_MEMBERS;
		return 0;
	}
	if (in->etcd_err != EO_ETCD_OK || in->etcd == NULL) {
		msgf(
		    out,
		    "cannot remove member %s from etcd: listing the members through the other "
		    "members failed (%s); the finalizer stays, retrying",
		    mname,
		    eo_etcd_strerror(in->etcd_err != EO_ETCD_OK ? in->etcd_err : EO_ETCD_PROTOCOL));
		return blocked(in, out, EO_PLAN_REQUEUE_SHORT_MS);
	}
	if (!eo_plan_same_cluster(in->cluster, in->etcd->cluster_id)) {
		eo_plan_format_id(in->etcd->cluster_id, id, sizeof(id));
		msgf(out,
		     "cannot remove member %s from etcd: the member list read through the other "
		     "members is from etcd cluster %s, not %s (status.clusterID): another etcd "
		     "cluster answers at their addresses; the finalizer stays, retrying",
		     mname, id, eo_cluster_cluster_id(in->cluster));
		return blocked_for(in, out, EO_PLAN_REQUEUE_ETCD_MS,
				   EO_PLAN_REASON_CLUSTER_ID_MISMATCH);
	}
	if (eo_desired_member_peer_url(peer, sizeof(peer), in->build, mname, eo_member_service(m),
				       eo_member_namespace(m), eo_desired_member_peer_tls(m)) != 0)
		return -1;
	em = eo_plan_find_etcd_member(in->etcd, mname, peer);
	if (em == NULL)
		return not_listed(in, out, mname);
	eo_plan_format_id(em->id, id, sizeof(id));
	msgf(out, "removing member %s (%s) from etcd through the other members", mname, id);
	out->action = EO_RPLAN_MEMBER_REMOVE;
	out->etcd_id = em->id;
	return 0;
}
