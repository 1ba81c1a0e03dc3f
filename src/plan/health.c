/*
 * plan/health.c - Available and Degraded of a bootstrapped cluster from its members: quorum
 * over the voters, a member whose node is in trouble (plan/nodeloss.h), a voter that stopped
 * answering while its Pod runs, memory voters sharing a node. Part of the cluster planner
 * (plan/plan.h, plan/internal.h).
 */
#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/timeutil.h"
#include "plan/internal.h"
#include "plan/nodeloss.h"
#include "plan/podissue.h"

/* A voter that stopped serving only this long ago is starting (a roll, a restart). */
#define UNREACHABLE_AFTER_S 30

/*
 * Whether a majority of the memory-backed voters run on one node (their Pods' spec.nodeName):
 * losing that node, or draining it, loses their data and the quorum together. The node goes to
 * node, how many of how many voters to *on and *of. PVC members are not counted: their data
 * outlives the node (and a one-node test bed would always say so).
 */
static bool memory_voters_share_node(const struct eo__plan_ctx *x, char *node, size_t n, size_t *on,
				     size_t *of)
{
	const char *names[EO__PLAN_ROLL_MAX];
	size_t k = 0, voters = 0;

	for (size_t i = 0; i < x->in->n_members && k < EO__PLAN_ROLL_MAX; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];
		const char *nn = json_string_value(
		    json_object_get(json_object_get(pm->pod, "spec"), "nodeName"));
		struct eo_storage st;

		if (eo_member_is_deleting(pm->member) || !eo_member_is_voter(pm->member) ||
		    eo_member_dormant(pm->member))
			continue;
		voters++;
		eo_member_storage(pm->member, &st);
		if (st.memory && eo_present(nn))
			names[k++] = nn;
	}
	for (size_t i = 0; i < k && voters >= 2; i++) {
		size_t same = 0;

		for (size_t j = 0; j < k; j++)
			same += strcmp(names[i], names[j]) == 0;
		if (same >= voters / 2 + 1) {
			snprintf(node, n, "%s", names[i]);
			*on = same;
			*of = voters;
			return true;
		}
	}
	return false;
}

/*
 * What Degraded says about the members' nodes (plan/nodeloss.h): the first member on a node in
 * trouble, with what happens next, MemberNodeNotReady for a lost node and MemberNodeDraining
 * for a cordoned or evacuated one (MemberMoveBlocked when its replacement cannot be placed). The
 * text holds no moving clock (the due time is absolute). NULL when no member's node is in trouble.
 */
static const char *node_notice(const struct eo__plan_ctx *x, char *msg, size_t n)
{
	long grace = eo_cluster_node_loss_grace_seconds(x->in->cluster);

	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];
		struct eo_node_verdict v;
		char next[160], ts[EO_TIME_BUF];

		if (!eo_plan_member_node_trouble(pm, eo__plan_node_of(x->in, pm), grace, x->in->now,
						 &v))
			continue;
		if (v.due && eo_plan_node_move_first(pm, &v)) {
			const struct eo_plan_member *j =
			    eo_plan_node_joining(x->in->members, x->in->n_members);
			char why[EO_NODE_WHY_MAX];

			if (eo_plan_node_move_blocked(j, x->in->now, why, sizeof(why))) {
				snprintf(msg, n,
					 "member %s: %.200s; its replacement %s cannot be placed "
					 "on another node (%.300s): nothing is removed until a "
					 "node can take it",
					 eo_member_name(pm->member), v.why,
					 eo_member_name(j->member), why);
				return EO_PLAN_REASON_NODE_MOVE_BLOCKED;
			}
			snprintf(next, sizeof(next),
				 "past the grace period (spec.nodeLossGracePeriod, %ld s): a "
				 "replacement joins on another node first, then it is removed",
				 grace);
		} else if (v.due)
			snprintf(next, sizeof(next),
				 "past the grace period (spec.nodeLossGracePeriod, %ld s): it is "
				 "replaced on another node when the quorum allows",
				 grace);
		else if (v.left_s >= 0 &&
			 eo_time_format(x->in->now + v.left_s, ts, sizeof(ts)) == 0)
			snprintf(next, sizeof(next),
				 "it is replaced on another node at %s unless the node recovers "
				 "(spec.nodeLossGracePeriod %ld s)",
				 ts, grace);
		else if (v.trouble == EO_NODE_EVACUATE)
			snprintf(next, sizeof(next), "it stays until the node is cordoned");
		else
			snprintf(next, sizeof(next),
				 "it is not replaced automatically; annotate the node %s=true to "
				 "move it",
				 EO_ANNOTATION_EVACUATE);
		snprintf(msg, n, "member %s: %s; %s", eo_member_name(pm->member), v.why, next);
		return v.lost ? EO_PLAN_REASON_NODE_NOT_READY : EO_PLAN_REASON_NODE_DRAINING;
	}
	return NULL;
}

/*
 * Whether member pm has not served for UNREACHABLE_AFTER_S: its Pod's Ready=False, or (a ready
 * Pod) its EtcdMember's Ready=False, since longer than that; true when no time is recorded.
 */
static bool silent_for_a_while(const struct eo_plan_member *pm, time_t now)
{
	const json_t *c = NULL, *cs = NULL;
	const char *since = NULL;
	time_t t = 0;
	size_t i;

	if (eo_plan_pod_ready(pm->pod)) {
		c = eo_condition_find(json_object_get(pm->member, "status"), EO_COND_READY);
	} else {
		json_array_foreach(
		    json_object_get(json_object_get(pm->pod, "status"), "conditions"), i, cs)
		{
			const char *type = json_string_value(json_object_get(cs, "type"));

			if (type != NULL && strcmp(type, "Ready") == 0)
				c = cs;
		}
	}
	since = json_string_value(json_object_get(c, "lastTransitionTime"));
	return since == NULL || eo_time_parse(since, &t) != 0 || now - t >= UNREACHABLE_AFTER_S;
}

/*
 * A voter that does not serve while nothing around it is wrong: its Pod runs (not crash-looping,
 * no Pod issue, its data in place) on a node that was looked up and is Ready, and it has been
 * silent for UNREACHABLE_AFTER_S. Its etcd is cut off (a partition) or stuck; it is never
 * removed for that, only reported (MemberUnreachable), and the report goes once it answers
 * again. NULL when there is none.
 */
static const char *unreachable_notice(const struct eo__plan_ctx *x, char *msg, size_t n)
{
	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];
		const char *node = json_string_value(
		    json_object_get(json_object_get(pm->pod, "spec"), "nodeName"));
		const struct eo_plan_node *pn = NULL;
		struct eo_pod_issue is;

		if (!eo_member_is_voter(pm->member) || eo_member_is_deleting(pm->member) ||
		    eo_member_dormant(pm->member) || !eo_plan_pod_running(pm->pod) ||
		    eo_plan_member_serving(pm->member, pm->pod) ||
		    (pn = eo__plan_node_of(x->in, pm)) == NULL || pn->node == NULL ||
		    eo_plan_node_lost(pn->node, pn->absent) ||
		    eo_plan_member_crashlooping(pm->member, pm->pod, NULL, 0) ||
		    eo_plan_member_lost_data(pm->member, pm->pod, pm->pvc) ||
		    eo_plan_pod_issue(pm->member, pm->pod, pm->pvc, x->in->now, &is) ||
		    !silent_for_a_while(pm, x->in->now))
			continue;
		snprintf(msg, n,
			 "member %s does not answer: its Pod runs on Ready node %s but its etcd is "
			 "not ready (cut off from its peers or stuck); it is not removed for that "
			 "and rejoins when the network heals",
			 eo_member_name(pm->member), node != NULL ? node : "");
		return EO_PLAN_REASON_MEMBER_UNREACHABLE;
	}
	return NULL;
}

/*
 * Available / Degraded of a bootstrapped cluster from member readiness. Quorum is counted
 * over the members that exist (etcd's membership), not over the target: a cluster growing
 * from 1 to 3 with its one member ready is healthy, and Progressing tells about the growth.
 * With available false only Degraded is set (a terminal reason owns Available). A problem
 * seen through etcd (x->etcd_problem) makes a cluster whose Pods are all ready Degraded.
 */
void eo__plan_health_of(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool available)
{
	/* Learners and members still joining do not vote: quorum is over the voters. */
	size_t n = c->voters > 0 ? c->voters : c->n;
	size_t ready = c->voters > 0 ? c->voters_ready : c->ready;
	const char *not_ready = c->voters > 0 ? c->voters_not_ready : c->not_ready;
	size_t quorum = n / 2 + 1;
	char m[EO_PLAN_MSG_MAX], nmsg[EO_PLAN_MSG_MAX], full[2 * EO_PLAN_MSG_MAX + 8];
	const char *nreason = node_notice(x, nmsg, sizeof(nmsg));

	if (nreason == NULL)
		nreason = unreachable_notice(x, nmsg, sizeof(nmsg));
	if (nreason != NULL && x->out->event_reason == NULL && x->out->action == EO_PLAN_NONE) {
		/* Told once, when the status changes (a Warning Event with it). */
		eo__plan_msgf(x, "%s", nmsg);
		eo__plan_event(x, "Warning", nreason);
	}
	if (n > 0 && ready == n) {
		char node[EO_PLAN_NAME_MAX], shared[EO_PLAN_MSG_MAX];
		size_t on = 0, of = 0;

		snprintf(m, sizeof(m), "all %zu member(s) are ready", n);
		if (available)
			eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY,
				      m);
		if (x->etcd_problem != NULL) {
			eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_TRUE, x->etcd_problem,
				      x->etcd_problem_msg);
		} else if (nreason != NULL) {
			snprintf(full, sizeof(full), "%s; %s", m, nmsg);
			eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_TRUE, nreason, full);
		} else if (memory_voters_share_node(x, node, sizeof(node), &on, &of)) {
			/* Informative: nothing waits on it. */
			snprintf(
			    shared, sizeof(shared),
			    "all %zu member(s) are ready; %zu of %zu voting memory member(s) "
			    "run on node %s: losing or draining that node loses their data and "
			    "the quorum together; spread them (spec.affinity, one member per "
			    "node)",
			    n, on, of, node);
			eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_TRUE,
				      EO_PLAN_REASON_VOTERS_SHARE_NODE, shared);
		} else {
			eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_FALSE, EO_REASON_QUORUM_HEALTHY,
				      m);
		}
		return;
	}
	snprintf(m, sizeof(m), "%zu of %zu member(s) are ready; not ready: %s", ready, n,
		 not_ready[0] ? not_ready : "(none)");
	if (n > 0 && ready >= quorum) {
		if (available)
			eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_TRUE,
				      EO_REASON_QUORUM_AVAILABLE, m);
		snprintf(full, sizeof(full), "%s%s%s", m, nreason != NULL ? "; " : "",
			 nreason != NULL ? nmsg : "");
		eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_TRUE,
			      nreason != NULL ? nreason : EO_REASON_MEMBERS_UNHEALTHY, full);
	} else {
		if (available)
			eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_QUORUM_LOST,
				      m);
		eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_QUORUM_LOST, m);
	}
}

void eo__plan_health(struct eo__plan_ctx *x, const struct eo__plan_counts *c)
{
	long due_ms = eo_plan_node_next_due_ms(x->in);

	/* A member's node grace ends: be back then (plan/nodeloss.h). */
	if (due_ms > 0 && (x->out->requeue_ms <= 0 || x->out->requeue_ms > due_ms))
		x->out->requeue_ms = due_ms;
	/* Held past the deadline, Available says DeadlineExceeded (held_conditions). */
	eo__plan_health_of(x, c, !x->held);
}
