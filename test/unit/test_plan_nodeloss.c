/*
 * Unit tests for plan/nodeloss.c and the cluster plan's node steps (plan/plan.c): a member on a
 * NotReady or deleted node is replaced through the quorum only past spec.nodeLossGracePeriod,
 * on live reads and the leader's own member list, never at the cost of the quorum; a cordoned
 * or evacuated node's member moves only while every voter is ready; a member that does not
 * answer on a Ready node (a partition) is only reported; an operator that reaches no member
 * removes nothing.
 *
 * The world: a bootstrapped 3-member cluster (or 1), members demo-a, demo-b, demo-c on nodes
 * n0, n1, n2, etcd listing them all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/member.h"
#include "api/names.h"
#include "api/timeutil.h"
#include "desired/desired.h"
#include "plan/nodeloss.h"
#include "plan/plan.h"
#include "support/planworld_nodeloss.h"
#include "support/tu_main.h"

#define T0   1780394400 /* 2026-06-02T10:00:00Z */
#define PAST (T0 - 400) /* beyond the default grace of 300 s */
#define SOON (T0 - 60)	/* within it */

/* Member i's node turns Ready=ready since since, and its Pod not ready (as the node
 * lifecycle controller marks it). */
static void node_down(struct pwn_world *w, size_t i, const char *ready, time_t since)
{
	char nn[24];

	snprintf(nn, sizeof(nn), "n%zu", i);
	json_decref(w->nodes[i]);
	w->nodes[i] = pwn_node(nn, ready, since);
	w->nd[i].node = w->nodes[i];
	json_decref((json_t *)w->pm[i].pod);
	w->pm[i].pod = pwn_pod(w->pm[i].member, nn, false);
}

static void cordon(struct pwn_world *w, size_t i, const char *taint_added)
{
	json_t *spec = json_object_get(w->nodes[i], "spec");

	json_object_set_new(spec, "unschedulable", json_true());
	if (taint_added != NULL)
		json_object_set_new(spec, "taints",
				    json_pack("[{s:s, s:s, s:s}]", "key", EO_TAINT_UNSCHEDULABLE,
					      "effect", "NoSchedule", "timeAdded", taint_added));
}

static void evacuate(struct pwn_world *w, size_t i)
{
	json_object_set_new(
	    json_object_get(json_object_get(w->nodes[i], "metadata"), "annotations"),
	    EO_ANNOTATION_EVACUATE, json_string("true"));
}

static const char *name_of(const json_t *member)
{
	return member != NULL ? eo_member_name(member) : "(none)";
}

static void want_cond(const json_t *st, const char *type, const char *status, const char *reason,
		      const char *msg_part)
{
	const json_t *c = eo_condition_find(st, type);
	const char *msg = json_string_value(json_object_get(c, "message"));

	assert_non_null(c);
	assert_string_equal(json_string_value(json_object_get(c, "status")), status);
	assert_string_equal(json_string_value(json_object_get(c, "reason")), reason);
	if (msg_part != NULL && (msg == NULL || strstr(msg, msg_part) == NULL))
		fail_msg("%s: message \"%s\" lacks \"%s\"", type, msg ? msg : "", msg_part);
}

static void plan(struct pwn_world *w, struct eo_plan_result *res)
{
	memset(res, 0, sizeof(*res));
	assert_int_equal(eo_plan_cluster(&w->in, res), 0);
}

/* The predicate alone: which trouble, since when, due or not. */
static void test_node_trouble_predicate(void **state)
{
	struct pwn_world w;
	struct eo_node_verdict v;

	(void)state;
	pwn_world_init(&w, 3);
	assert_false(eo_plan_member_node_trouble(&w.pm[0], &w.nd[0], 300, T0, &v));
	assert_int_equal(v.trouble, EO_NODE_FINE);

	node_down(&w, 1, "Unknown", SOON);
	assert_true(eo_plan_member_node_trouble(&w.pm[1], &w.nd[1], 300, T0, &v));
	assert_int_equal(v.trouble, EO_NODE_NOT_READY);
	assert_true(v.lost);
	assert_false(v.due);
	assert_int_equal(v.left_s, 240);
	assert_string_equal(v.node, "n1");
	assert_non_null(strstr(v.why, "node n1 is NotReady (Ready=Unknown) since"));
	assert_true(eo_plan_member_node_trouble(&w.pm[1], &w.nd[1], 300, T0 + 240, &v));
	assert_true(v.due);

	/* Gone: the clock is the Pod's Ready=False (no time on it here: never due). */
	w.nd[1].node = NULL;
	w.nd[1].absent = true;
	assert_true(eo_plan_member_node_trouble(&w.pm[1], &w.nd[1], 300, T0, &v));
	assert_int_equal(v.trouble, EO_NODE_GONE);
	assert_false(v.due);
	/* ... or its deletionTimestamp. */
	json_object_set_new(json_object_get((json_t *)w.pm[1].pod, "metadata"), "deletionTimestamp",
			    json_string("2026-06-02T09:50:00Z"));
	assert_true(eo_plan_member_node_trouble(&w.pm[1], &w.nd[1], 300, T0, &v));
	assert_true(v.due);
	assert_non_null(strstr(v.why, "terminating"));
	assert_true(eo_plan_node_lost(NULL, true));
	assert_false(eo_plan_node_lost(NULL, false));
	assert_false(eo_plan_node_lost(w.nodes[0], false));
	assert_true(eo_plan_node_lost(w.nodes[1], false));

	/* Not looked up: nothing is known. */
	w.nd[1].absent = false;
	assert_false(eo_plan_member_node_trouble(&w.pm[1], &w.nd[1], 300, T0, &v));
	/* Nodes not watched at all: the same. */
	w.nd[1].absent = true;
	assert_false(eo_plan_member_node_trouble(&w.pm[1], NULL, 300, T0, &v));
	w.nd[1].absent = false;

	/*
	 * A Pod recreated after its node went away, Pending on its node-local volume: the node
	 * is the one its PVC was provisioned for. Its clock: the Pod's Ready=False.
	 */
	json_decref((json_t *)w.pm[1].pod);
	w.pm[1].pod =
	    json_pack("{s:{s:s, s:s}, s:{s:s, s:[{s:s, s:s, s:s}]}}", "metadata", "name", "demo-b",
		      "uid", "pod-2", "status", "phase", "Pending", "conditions", "type", "Ready",
		      "status", "False", "lastTransitionTime", "2026-06-02T09:50:00Z");
	assert_false(eo_plan_member_node_trouble(&w.pm[1], &w.nd[1], 300, T0, &v));
	w.pm[1].pvc = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", "data-demo-b",
				"annotations", EO_ANNOTATION_SELECTED_NODE, "n1");
	assert_string_equal(eo_plan_member_node_name(w.pm[1].pod, w.pm[1].pvc), "n1");
	w.nd[1].absent = true;
	assert_true(eo_plan_member_node_trouble(&w.pm[1], &w.nd[1], 300, T0, &v));
	assert_int_equal(v.trouble, EO_NODE_GONE);
	assert_true(v.due);
	assert_string_equal(v.node, "n1");
	json_decref((json_t *)w.pm[1].pvc);
	w.pm[1].pvc = NULL;
	w.nd[1].absent = false;

	/* Cordoned: by the taint's timeAdded; without one, never due. */
	cordon(&w, 2, NULL);
	assert_true(eo_plan_member_node_trouble(&w.pm[2], &w.nd[2], 300, T0, &v));
	assert_int_equal(v.trouble, EO_NODE_CORDONED);
	assert_false(v.lost);
	assert_false(v.due);
	assert_int_equal(v.left_s, -1);
	cordon(&w, 2, "2026-06-02T09:50:00Z");
	assert_true(eo_plan_member_node_trouble(&w.pm[2], &w.nd[2], 300, T0, &v));
	assert_true(v.due);
	assert_true(eo_plan_member_node_trouble(&w.pm[2], &w.nd[2], 900, T0, &v));
	assert_false(v.due);

	/* Evacuate: told at once, due once the node is cordoned too (else the replacement could
	 * land on it again). */
	evacuate(&w, 0);
	assert_true(eo_plan_member_node_trouble(&w.pm[0], &w.nd[0], 300, T0, &v));
	assert_int_equal(v.trouble, EO_NODE_EVACUATE);
	assert_false(v.due);
	assert_non_null(strstr(v.why, "not cordoned"));
	cordon(&w, 0, NULL);
	assert_true(eo_plan_member_node_trouble(&w.pm[0], &w.nd[0], 300, T0, &v));
	assert_int_equal(v.trouble, EO_NODE_EVACUATE);
	assert_true(v.due);
	pwn_world_free(&w);
}

/* A NotReady node: reported within the grace, replaced after it, on live reads and the leader. */
static void test_node_lost_member_replaced(void **state)
{
	struct pwn_world w;
	struct eo_plan_result res;

	(void)state;
	pwn_world_init(&w, 3);

	/* Within the grace: a reboot is not a loss. */
	node_down(&w, 1, "Unknown", SOON);
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	want_cond(res.status, EO_COND_AVAILABLE, "True", EO_REASON_QUORUM_AVAILABLE, NULL);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_NOT_READY,
		  "member demo-b: node n1 is NotReady (Ready=Unknown)");
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_NOT_READY,
		  "replaced on another node at 2026-06-02T10:04:00Z unless the node recovers");
	eo_plan_result_clear(&res);

	/* Past it: the first plan asks for the live reads with the member list. */
	node_down(&w, 1, "Unknown", PAST);
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	w.in.nodes_live = false;
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_QUERY_MEMBERS);
	assert_true(res.want_nodes);
	eo_plan_result_clear(&res);
	/* Without them (a controller that did not read): waits. */
	w.in.etcd_queried = true;
	w.in.etcd = &w.etcd;
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	eo_plan_result_clear(&res);
	/* With them, the leader's word first. */
	w.in.nodes_live = true;
	w.in.etcd_leader_checked = false;
	w.in.etcd_from_leader = false;
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_QUERY_MEMBERS);
	assert_true(res.want_leader);
	eo_plan_result_clear(&res);
	/* The leader could not confirm the list: nothing is removed. */
	w.in.etcd_leader_checked = true;
	w.in.etcd_leader_why = "the member at x knows no leader";
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	eo_plan_result_clear(&res);
	/* Confirmed: removed through the quorum (the scale-up path replaces it). */
	w.in.etcd_from_leader = true;
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(name_of(res.member), "demo-b");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_NODE_LOST);
	assert_non_null(strstr(res.message, "node n1 is NotReady"));
	eo_plan_result_clear(&res);

	/* A longer grace in the spec: not yet. */
	json_object_set_new(json_object_get(w.cluster, "spec"), "nodeLossGracePeriod",
			    json_string("10m"));
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_NOT_READY, "demo-b");
	eo_plan_result_clear(&res);
	json_object_del(json_object_get(w.cluster, "spec"), "nodeLossGracePeriod");

	/* The Node object deleted, the Pod stuck terminating: the same. */
	w.nd[1].node = NULL;
	w.nd[1].absent = true;
	json_object_set_new(json_object_get((json_t *)w.pm[1].pod, "metadata"), "deletionTimestamp",
			    json_string("2026-06-02T09:50:00Z"));
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(name_of(res.member), "demo-b");
	pwn_done(&w, &res);

	/* Two of three nodes lost: removing one would cost the quorum. */
	pwn_world_init(&w, 3);
	node_down(&w, 1, "Unknown", PAST);
	node_down(&w, 2, "False", PAST);
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_QUORUM_LOST, NULL);
	pwn_done(&w, &res);
}

/* An operator that reaches no member removes nothing, whatever the nodes say. */
static void test_unreachable_etcd_does_nothing(void **state)
{
	struct pwn_world w;
	struct eo_plan_result res;

	(void)state;
	pwn_world_init(&w, 3);
	node_down(&w, 1, "Unknown", PAST);
	evacuate(&w, 2);
	cordon(&w, 2, NULL);
	w.in.etcd_err = EO_ETCD_UNAVAILABLE;
	w.in.etcd = NULL;
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "cannot list etcd's members"));
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_NOT_READY, "demo-b");
	eo_plan_result_clear(&res);
	/* Every Pod ready, nothing reachable: ClusterUnreachable, and still nothing removed. */
	json_decref(w.nodes[1]);
	w.nodes[1] = pwn_node("n1", "True", T0 - 86400);
	w.nd[1].node = w.nodes[1];
	json_decref((json_t *)w.pm[1].pod);
	w.pm[1].pod = pwn_pod(w.pm[1].member, "n1", true);
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_REASON_CLUSTER_UNREACHABLE, NULL);
	eo_plan_result_clear(&res);
	/* Another cluster answering at the addresses: the same. */
	w.in.etcd_err = EO_ETCD_OK;
	w.in.etcd = &w.etcd;
	w.etcd.cluster_id = 0x1234;
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	pwn_done(&w, &res);
}

/* Cordon and evacuate: one member at a time, only while every voter is ready. */
static void test_node_drain_evacuate(void **state)
{
	struct pwn_world w;
	struct eo_plan_result res;

	(void)state;
	pwn_world_init(&w, 3);
	cordon(&w, 1, "2026-06-02T09:59:00Z");
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_DRAINING,
		  "member demo-b: node n1 is cordoned");
	eo_plan_result_clear(&res);
	cordon(&w, 1, "2026-06-02T09:50:00Z");
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(name_of(res.member), "demo-b");
	eo_plan_result_clear(&res);
	/* Without the taint's time, the cordon is only reported. */
	cordon(&w, 1, NULL);
	json_object_del(json_object_get(w.nodes[1], "spec"), "taints");
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_DRAINING,
		  EO_ANNOTATION_EVACUATE "=true to move it");
	eo_plan_result_clear(&res);
	/* The annotation on a cordoned node: at once. */
	evacuate(&w, 1);
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(name_of(res.member), "demo-b");
	eo_plan_result_clear(&res);
	/* ... also when its own Pod is the one the drain evicted (Pending on its local volume). */
	json_decref((json_t *)w.pm[1].pod);
	w.pm[1].pod = pwn_pod(w.pm[1].member, "n1", false);
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(name_of(res.member), "demo-b");
	eo_plan_result_clear(&res);
	json_decref((json_t *)w.pm[1].pod);
	w.pm[1].pod = pwn_pod(w.pm[1].member, "n1", true);
	/* ... but not while another voter is down. */
	json_decref((json_t *)w.pm[2].pod);
	w.pm[2].pod = pwn_pod(w.pm[2].member, "n2", false);
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "waits until every other voter is ready"));
	pwn_done(&w, &res);

	/* The annotation alone: reported, nothing moves. */
	pwn_world_init(&w, 3);
	evacuate(&w, 1);
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_DRAINING,
		  "it stays until the node is cordoned");
	pwn_done(&w, &res);

	/* The only member cannot move anywhere: reported, never removed. */
	pwn_world_init(&w, 1);
	evacuate(&w, 0);
	cordon(&w, 0, NULL);
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_non_null(strstr(res.message, "would cost the quorum"));
	assert_string_equal(res.event_reason, EO_PLAN_REASON_NODE_DRAINING);
	want_cond(res.status, EO_COND_AVAILABLE, "True", EO_REASON_QUORUM_HEALTHY, NULL);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_DRAINING,
		  "member demo-a: node n0 is annotated");
	pwn_done(&w, &res);
}

/* A member that does not answer on a Ready node: reported, never removed, cleared when back. */
static void test_partition_reported(void **state)
{
	struct pwn_world w;
	struct eo_plan_result res;
	struct eo_condition ns = {EO_COND_READY, EO_COND_FALSE, EO_REASON_NOT_SERVING, "", 1};

	(void)state;
	pwn_world_init(&w, 3);
	json_decref((json_t *)w.pm[1].pod);
	w.pm[1].pod = pwn_pod(w.pm[1].member, "n1", false);
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_MEMBER_UNREACHABLE,
		  "member demo-b does not answer: its Pod runs on Ready node n1");
	eo_plan_result_clear(&res);
	/* Not ready only for a few seconds: starting (a roll, a restart), not unreachable yet. */
	json_object_set_new(
	    json_array_get(
		json_object_get(json_object_get((json_t *)w.pm[1].pod, "status"), "conditions"), 0),
	    "lastTransitionTime", json_string("2026-06-02T09:59:50Z"));
	plan(&w, &res);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_REASON_MEMBERS_UNHEALTHY, NULL);
	eo_plan_result_clear(&res);
	/* Ready Pod, but etcd does not answer at the member's address (NotServing). */
	json_decref((json_t *)w.pm[1].pod);
	w.pm[1].pod = pwn_pod(w.pm[1].member, "n1", true);
	assert_true(eo_condition_set(json_object_get((json_t *)w.pm[1].member, "status"), &ns,
				     T0 - 60) > 0);
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_MEMBER_UNREACHABLE,
		  "demo-b");
	eo_plan_result_clear(&res);
	/* It answers again: the report goes. */
	ns.status = EO_COND_TRUE;
	ns.reason = EO_REASON_POD_READY;
	assert_true(eo_condition_set(json_object_get((json_t *)w.pm[1].member, "status"), &ns, T0) >
		    0);
	plan(&w, &res);
	want_cond(res.status, EO_COND_DEGRADED, "False", EO_REASON_QUORUM_HEALTHY, NULL);
	pwn_done(&w, &res);
}

TU_MAIN(test_node_trouble_predicate, test_node_lost_member_replaced,
	test_unreachable_etcd_does_nothing, test_node_drain_evacuate, test_partition_reported)
