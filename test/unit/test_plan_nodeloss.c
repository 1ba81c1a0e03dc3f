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
#include "support/planworld_scale.h"
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
	if (reason != NULL)
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
	assert_int_equal(eo_plan_node_next_due_ms(&w.in), 241000);
	assert_true(res.requeue_ms > 0 && res.requeue_ms <= 241000);
	eo_plan_result_clear(&res);
	/* Nothing on the Node changes when the grace ends: the pass comes back then itself. */
	node_down(&w, 1, "Unknown", T0 - 295);
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_int_equal(res.requeue_ms, 6000);
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

/* The plan's action is the creation of a member (or the write of its name first). */
static void want_create(const struct eo_plan_result *res)
{
	if (res->action != EO_PLAN_CREATE_MEMBER && res->action != EO_PLAN_WRITE_STATUS)
		fail_msg("want a member created, got %s (%s)", eo_plan_action_name(res->action),
			 res->message);
	assert_string_equal(res->event_reason, EO_PLAN_REASON_NODE_MOVING);
	assert_non_null(strstr(res->message, "a replacement is created on another node first"));
}

/*
 * Cordon and evacuate of a member that serves: one member at a time, only while every voter is
 * ready, its replacement added before it is removed. A member whose Pod a drain already
 * evicted is removed first (it votes for nothing).
 */
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
	want_create(&res);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_DRAINING,
		  "a replacement joins on another node first, then it is removed");
	eo_plan_result_clear(&res);
	/* Without the taint's time, the cordon is only reported. */
	cordon(&w, 1, NULL);
	json_object_del(json_object_get(w.nodes[1], "spec"), "taints");
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_int_not_equal(res.action, EO_PLAN_CREATE_MEMBER);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_DRAINING,
		  EO_ANNOTATION_EVACUATE "=true to move it");
	eo_plan_result_clear(&res);
	/* The annotation on a cordoned node: at once. */
	evacuate(&w, 1);
	plan(&w, &res);
	want_create(&res);
	eo_plan_result_clear(&res);
	/* Its own Pod is the one the drain evicted (Pending on its local volume): removed first. */
	json_decref((json_t *)w.pm[1].pod);
	w.pm[1].pod = pwn_pod(w.pm[1].member, "n1", false);
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(name_of(res.member), "demo-b");
	eo_plan_result_clear(&res);
	json_decref((json_t *)w.pm[1].pod);
	w.pm[1].pod = pwn_pod(w.pm[1].member, "n1", true);
	/* ... nothing moves while another voter is down. */
	json_decref((json_t *)w.pm[2].pod);
	w.pm[2].pod = pwn_pod(w.pm[2].member, "n2", false);
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "waits until every other voter is ready"));
	pwn_done(&w, &res);

	/* The annotation alone: reported, nothing moves. */
	pwn_world_init(&w, 3);
	evacuate(&w, 1);
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_int_not_equal(res.action, EO_PLAN_CREATE_MEMBER);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_DRAINING,
		  "it stays until the node is cordoned");
	pwn_done(&w, &res);

	/* The only member: it too gets its replacement first, and is never removed before. */
	pwn_world_init(&w, 1);
	evacuate(&w, 0);
	cordon(&w, 0, NULL);
	plan(&w, &res);
	want_create(&res);
	want_cond(res.status, EO_COND_AVAILABLE, "True", EO_REASON_QUORUM_HEALTHY, NULL);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_DRAINING,
		  "member demo-a: node n0 is annotated");
	pwn_done(&w, &res);
}

enum joiner_stage { J_PENDING, J_ADDED, J_LEARNER, J_VOTER };
enum joiner_pod { JP_NONE, JP_NOT_READY, JP_READY, JP_UNSCHEDULABLE };

/*
 * Adds demo-d, the replacement, on Ready node n3: pending (not in etcd), added (in etcd as a
 * learner that never started, initialCluster still empty), a learner, or a voter; its Pod.
 */
static void add_joiner(struct pwn_world *w, enum joiner_stage st, enum joiner_pod jp)
{
	const struct pws_m d = {.name = "demo-d",
				.created = "2026-06-02T09:59:30Z",
				.voter = st == J_VOTER,
				.pending = st <= J_ADDED};
	size_t i = w->n;

	assert_int_equal(i, 3);
	w->pm[i].member = pws_member(&d);
	w->nodes[i] = pwn_node("n3", "True", T0 - 86400);
	w->nd[i].node = w->nodes[i];
	if (jp == JP_READY || jp == JP_NOT_READY)
		w->pm[i].pod = pwn_pod(w->pm[i].member, "n3", jp == JP_READY);
	else if (jp == JP_UNSCHEDULABLE)
		w->pm[i].pod = json_pack(
		    "{s:{s:s, s:s, s:s}, s:{}, s:{s:s, s:[{s:s, s:s, s:s, s:s, s:s}]}}", "metadata",
		    "name", "demo-d", "namespace", "default", "uid", "pod-d", "spec", "status",
		    "phase", "Pending", "conditions", "type", "PodScheduled", "status", "False",
		    "reason", "Unschedulable", "message",
		    "0/4 nodes are available: 1 node(s) were unschedulable, 3 node(s) didn't match "
		    "pod anti-affinity rules",
		    "lastTransitionTime", "2026-06-02T09:59:40Z");
	if (st != J_PENDING) {
		eo_desired_member_peer_url(
		    w->peer[i], sizeof(w->peer[i]),
		    &(struct eo_desired_opts){.cluster_domain = "cluster.local"}, "demo-d", "demo",
		    "default", false);
		w->peer_p[i] = w->peer[i];
		w->ev[i] = (struct eo_etcd_member){.id = 0x103,
						   .name = st == J_ADDED ? "" : "demo-d",
						   .peer_urls = &w->peer_p[i],
						   .n_peer_urls = 1,
						   .is_learner = st != J_VOTER};
		w->etcd.n = 4;
	}
	if (st == J_VOTER) {
		/* The PDB as the cluster controller keeps it for four voters. */
		json_decref(w->pdb);
		w->pdb = eo_desired_pdb(w->cluster, eo_desired_pdb_min_available(4, 3));
		json_object_set_new(
		    w->pdb, "status",
		    json_pack("{s:i, s:i}", "observedGeneration", 0, "disruptionsAllowed", 1));
		w->in.pdb = w->pdb;
	}
	w->n = 4;
	w->in.n_members = 4;
}

/* A world of three with demo-b on cordoned n1 past its grace, and its replacement at stage st. */
static void moving(struct pwn_world *w, enum joiner_stage st, enum joiner_pod jp)
{
	pwn_world_init(w, 3);
	cordon(w, 1, "2026-06-02T09:50:00Z");
	add_joiner(w, st, jp);
}

/* Add before remove: the replacement joins as a learner and is promoted, then demo-b goes. */
static void test_node_move_add_before_remove(void **state)
{
	static const struct {
		const char *what;
		enum joiner_stage st;
		enum joiner_pod jp;
		enum eo_plan_action want;
		const char *member; /* result->member, or NULL */
	} rows[] = {
	    {"replacement created: added to etcd as a learner", J_PENDING, JP_NONE,
	     EO_PLAN_ADD_LEARNER, "demo-d"},
	    {"in etcd: given its initial cluster", J_ADDED, JP_NONE, EO_PLAN_SET_INITIAL_CLUSTER,
	     "demo-d"},
	    {"a learner that serves: promoted", J_LEARNER, JP_READY, EO_PLAN_PROMOTE_LEARNER,
	     "demo-d"},
	    {"a learner not ready yet: waits, removes nothing", J_LEARNER, JP_NOT_READY,
	     EO_PLAN_WAIT, NULL},
	    {"it votes: demo-b removed through the quorum", J_VOTER, JP_READY,
	     EO_PLAN_REMOVE_MEMBER, "demo-b"},
	};
	struct pwn_world w;
	struct eo_plan_result res;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		moving(&w, rows[i].st, rows[i].jp);
		plan(&w, &res);
		if (res.action != rows[i].want)
			fail_msg("%s: got %s (%s)", rows[i].what, eo_plan_action_name(res.action),
				 res.message);
		if (rows[i].member != NULL)
			assert_string_equal(name_of(res.member), rows[i].member);
		want_cond(res.status, EO_COND_AVAILABLE, "True", NULL, NULL);
		eo_plan_result_clear(&res);
		pwn_world_free(&w);
	}

	/* The removal is made on the leader's own list, as any removal for a node. */
	moving(&w, J_VOTER, JP_READY);
	w.in.etcd_leader_checked = false;
	w.in.etcd_from_leader = false;
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_QUERY_MEMBERS);
	assert_true(res.want_leader);
	eo_plan_result_clear(&res);
	w.in.etcd_leader_checked = true;
	w.in.etcd_from_leader = true;
	w.in.nodes_live = false;
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	eo_plan_result_clear(&res);
	w.in.nodes_live = true;
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(res.event_reason, EO_PLAN_REASON_NODE_LOST);
	assert_non_null(strstr(res.message, "its replacement has joined"));
	eo_plan_result_clear(&res);
	/* ... and never while another voter is down. */
	json_decref((json_t *)w.pm[2].pod);
	w.pm[2].pod = pwn_pod(w.pm[2].member, "n2", false);
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_non_null(strstr(res.message, "waits until every other voter is ready"));
	eo_plan_result_clear(&res);
	pwn_world_free(&w);

	/* The node uncordoned meanwhile: the extra member goes again (a scale-down). */
	moving(&w, J_LEARNER, JP_READY);
	json_object_del(json_object_get(w.nodes[1], "spec"), "unschedulable");
	json_object_del(json_object_get(w.nodes[1], "spec"), "taints");
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(name_of(res.member), "demo-d");
	eo_plan_result_clear(&res);
	pwn_world_free(&w);

	/* A lost node's member is removed first, replacement or not (it votes for nothing). */
	pwn_world_init(&w, 3);
	node_down(&w, 1, "Unknown", PAST);
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_REMOVE_MEMBER);
	assert_string_equal(name_of(res.member), "demo-b");
	eo_plan_result_clear(&res);
	pwn_world_free(&w);
}

/* No other node can take the replacement: said (naming both), nothing is removed. */
static void test_node_move_no_free_node(void **state)
{
	struct pwn_world w;
	struct eo_plan_result res;

	(void)state;
	moving(&w, J_LEARNER, JP_UNSCHEDULABLE);
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	assert_string_equal(res.event_reason, EO_PLAN_REASON_NODE_MOVE_BLOCKED);
	assert_non_null(strstr(res.message, "its replacement demo-d cannot be placed"));
	assert_non_null(strstr(res.message, "demo-b keeps running and nothing is removed"));
	assert_non_null(strstr(res.message, "didn't match pod anti-affinity"));
	want_cond(res.status, EO_COND_AVAILABLE, "True", EO_REASON_QUORUM_HEALTHY, NULL);
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_MOVE_BLOCKED,
		  "member demo-b: node n1 is cordoned");
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_NODE_MOVE_BLOCKED,
		  "its replacement demo-d cannot be placed on another node");
	eo_plan_result_clear(&res);
	/* Still so after the operator asked the leader: the wait holds whatever etcd says. */
	w.in.etcd_leader_checked = false;
	plan(&w, &res);
	assert_int_equal(res.action, EO_PLAN_WAIT);
	eo_plan_result_clear(&res);
	pwn_world_free(&w);

	/* A pending replacement has no Pod yet: not blocked, it joins (added as a learner). */
	moving(&w, J_PENDING, JP_NONE);
	assert_false(eo_plan_node_move_blocked(&w.pm[3], T0, NULL, 0));
	pwn_world_free(&w);
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

/* A Node built for the change table: Ready status, cordoned, taints, evacuate annotation. */
static json_t *tnode(const char *ready, bool unsched, const char *taint, const char *evac,
		     const char *heartbeat)
{
	json_t *n = json_pack("{s:{s:s, s:s, s:{}}, s:{}, s:{s:[{s:s, s:s, s:s, s:s}], s:{s:s}}}",
			      "metadata", "name", "n1", "resourceVersion", heartbeat, "annotations",
			      "spec", "status", "conditions", "type", "Ready", "status", ready,
			      "lastTransitionTime", "2026-06-01T00:00:00Z", "lastHeartbeatTime",
			      heartbeat, "allocatable", "cpu", heartbeat);

	assert_non_null(n);
	if (unsched)
		json_object_set_new(json_object_get(n, "spec"), "unschedulable", json_true());
	if (taint != NULL)
		json_object_set_new(
		    json_object_get(n, "spec"), "taints",
		    json_pack("[{s:s, s:s}]", "key", taint, "effect", "NoSchedule"));
	if (evac != NULL)
		json_object_set_new(json_object_get(json_object_get(n, "metadata"), "annotations"),
				    EO_ANNOTATION_EVACUATE, json_string(evac));
	return n;
}

/* Which Node changes enqueue the clusters on it: the relevant fields, never a heartbeat. */
static void test_node_change_matters(void **state)
{
	static const struct {
		const char *what;
		bool has_old, has_new;
		const char *ready[2];
		bool unsched[2];
		const char *taint[2], *evac[2];
		bool want;
	} rows[] = {
	    {"heartbeat only", true, true, {"True", "True"}, {0}, {0}, {0}, false},
	    {"goes NotReady", true, true, {"True", "Unknown"}, {0}, {0}, {0}, true},
	    {"comes back", true, true, {"False", "True"}, {0}, {0}, {0}, true},
	    {"stays NotReady, heartbeat", true, true, {"Unknown", "Unknown"}, {0}, {0}, {0}, false},
	    {"cordoned", true, true, {"True", "True"}, {false, true}, {0}, {0}, true},
	    {"uncordoned", true, true, {"True", "True"}, {true, false}, {0}, {0}, true},
	    {"tainted", true, true, {"True", "True"}, {0}, {NULL, "x/y"}, {0}, true},
	    {"taint changed", true, true, {"True", "True"}, {0}, {"x/y", "x/z"}, {0}, true},
	    {"annotated", true, true, {"True", "True"}, {0}, {0}, {NULL, "true"}, true},
	    {"annotation off", true, true, {"True", "True"}, {0}, {0}, {"true", NULL}, true},
	    {"annotation value", true, true, {"True", "True"}, {0}, {0}, {"true", "false"}, true},
	    {"deleted", true, false, {"True", NULL}, {0}, {0}, {0}, true},
	    {"added healthy", false, true, {NULL, "True"}, {0}, {0}, {0}, false},
	    {"added NotReady", false, true, {NULL, "False"}, {0}, {0}, {0}, true},
	    {"added cordoned", false, true, {NULL, "True"}, {false, true}, {0}, {0}, true},
	    {"added annotated", false, true, {NULL, "True"}, {0}, {0}, {NULL, "true"}, true},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *o = rows[i].has_old ? tnode(rows[i].ready[0], rows[i].unsched[0],
						    rows[i].taint[0], rows[i].evac[0], "1")
					    : NULL;
		json_t *n = rows[i].has_new ? tnode(rows[i].ready[1], rows[i].unsched[1],
						    rows[i].taint[1], rows[i].evac[1], "2")
					    : NULL;

		if (eo_plan_node_change_matters(o, n) != rows[i].want)
			fail_msg("%s: want %d", rows[i].what, rows[i].want);
		json_decref(o);
		json_decref(n);
	}
	assert_false(eo_plan_node_change_matters(NULL, NULL));
}

static json_t *tobj(const char *ns, const char *cluster, const char *node, bool pvc)
{
	json_t *o = json_pack("{s:{s:s, s:s, s:{}, s:{}}, s:{}}", "metadata", "name", "x",
			      "namespace", ns, "labels", "annotations", "spec");

	assert_non_null(o);
	if (cluster != NULL)
		json_object_set_new(json_object_get(json_object_get(o, "metadata"), "labels"),
				    EO_LABEL_CLUSTER, json_string(cluster));
	if (node != NULL && pvc)
		json_object_set_new(json_object_get(json_object_get(o, "metadata"), "annotations"),
				    EO_ANNOTATION_SELECTED_NODE, json_string(node));
	else if (node != NULL)
		json_object_set_new(json_object_get(o, "spec"), "nodeName", json_string(node));
	return o;
}

/* Which clusters a Node's change enqueues: those with a Pod bound to it or a PVC made for it. */
static void test_clusters_on_node(void **state)
{
	json_t *pods = json_pack("[o, o, o, o, o, o]", tobj("a", "demo", "n1", false),
				 tobj("a", "demo", "n1", false), tobj("b", "demo", "n1", false),
				 tobj("a", "other", "n2", false), tobj("a", NULL, "n1", false),
				 tobj("c", "unbound", NULL, false));
	json_t *pvcs = json_pack("[o, o, o]", tobj("c", "unbound", "n1", true),
				 tobj("a", "demo", "n1", true), tobj("a", "far", "n3", true));
	static const struct {
		const char *node;
		const char *want;
	} rows[] = {
	    {"n1", "a/demo b/demo c/unbound"},
	    {"n2", "a/other"},
	    {"n3", "a/far"},
	    {"n4", ""},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *keys = json_array(), *k = NULL;
		char got[256] = "";
		size_t j, len = 0;

		assert_int_equal(eo_plan_clusters_on_node(pods, pvcs, rows[i].node, keys), 0);
		json_array_foreach(keys, j, k) len += (size_t)snprintf(
		    got + len, sizeof(got) - len, "%s%s", len ? " " : "", json_string_value(k));
		if (strcmp(got, rows[i].want) != 0)
			fail_msg("node %s: got \"%s\", want \"%s\"", rows[i].node, got,
				 rows[i].want);
		json_decref(keys);
	}
	/* Without PVCs (not cached): only the Pods say. */
	{
		json_t *keys = json_array();

		assert_int_equal(eo_plan_clusters_on_node(pods, NULL, "n1", keys), 0);
		assert_int_equal(json_array_size(keys), 2);
		json_decref(keys);
	}
	json_decref(pods);
	json_decref(pvcs);
}

/* A statically bound local PV names its member's node when neither the Pod nor the PVC does. */
static void test_node_of_local_pv(void **state)
{
	static const struct {
		const char *pv;
		const char *want;
	} pvs[] = {
	    {"{\"spec\":{\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
	     "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\","
	     "\"values\":[\"n1\"]}]}]}}}}",
	     "n1"},
	    {"{\"spec\":{\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
	     "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\","
	     "\"values\":[\"n1\",\"n2\"]}]}]}}}}",
	     NULL},
	    {"{\"spec\":{\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
	     "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"NotIn\","
	     "\"values\":[\"n1\"]}]}]}}}}",
	     NULL},
	    {"{\"spec\":{\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
	     "\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/zone\",\"operator\":\"In\","
	     "\"values\":[\"z1\"]}]}]}}}}",
	     NULL},
	    {"{\"spec\":{\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
	     "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\","
	     "\"values\":[\"n1\"]}]},{\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\","
	     "\"operator\":\"In\",\"values\":[\"n2\"]}]}]}}}}",
	     NULL},
	    {"{\"spec\":{\"csi\":{\"driver\":\"ebs\"}}}", NULL},
	};
	struct pwn_world w;
	struct eo_node_verdict v;
	json_t *pvc = NULL, *pv = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(pvs) / sizeof(pvs[0]); i++) {
		json_t *o = json_loads(pvs[i].pv, 0, NULL);
		const char *got = NULL;

		assert_non_null(o);
		got = eo_plan_pv_node_name(o);
		if (pvs[i].want == NULL ? got != NULL
					: got == NULL || strcmp(got, pvs[i].want) != 0)
			fail_msg("pv %zu: got %s", i, got ? got : "(null)");
		json_decref(o);
	}

	pwn_world_init(&w, 3);
	/* demo-b's Pod recreated, not bound; its PVC bound to a static local PV on n1 (gone). */
	json_decref((json_t *)w.pm[1].pod);
	w.pm[1].pod =
	    json_pack("{s:{s:s, s:s}, s:{s:s, s:[{s:s, s:s, s:s}]}}", "metadata", "name", "demo-b",
		      "uid", "pod-2", "status", "phase", "Pending", "conditions", "type", "Ready",
		      "status", "False", "lastTransitionTime", "2026-06-02T09:50:00Z");
	pvc = json_pack("{s:{s:s, s:{}}, s:{s:s}}", "metadata", "name", "data-demo-b",
			"annotations", "spec", "volumeName", "local-pv-b");
	w.pm[1].pvc = pvc;
	assert_string_equal(eo_plan_member_pv_to_read(w.pm[1].pod, pvc), "local-pv-b");
	assert_null(eo_plan_member_pv_to_read(w.pm[0].pod, pvc)); /* a bound Pod says */
	assert_null(eo_plan_member_pv_to_read(NULL, pvc));
	json_object_set_new(json_object_get(json_object_get(pvc, "metadata"), "annotations"),
			    EO_ANNOTATION_SELECTED_NODE, json_string("n1"));
	assert_null(eo_plan_member_pv_to_read(w.pm[1].pod, pvc)); /* the claim says */
	json_object_del(json_object_get(json_object_get(pvc, "metadata"), "annotations"),
			EO_ANNOTATION_SELECTED_NODE);

	/* Without the PV, the node is not known: nothing. With it, n1 is gone. */
	w.nd[1].node = NULL;
	w.nd[1].absent = true;
	assert_false(eo_plan_member_node_trouble(&w.pm[1], &w.nd[1], 300, T0, &v));
	pv = json_loads(pvs[0].pv, 0, NULL);
	w.nd[1].pv = pv;
	assert_true(eo_plan_member_node_trouble(&w.pm[1], &w.nd[1], 300, T0, &v));
	assert_int_equal(v.trouble, EO_NODE_GONE);
	assert_true(v.due);
	assert_string_equal(v.node, "n1");
	/* The node there and NotReady (found by its hostname label, another name): by its name. */
	w.nd[1].absent = false;
	json_decref(w.nodes[1]);
	w.nodes[1] = pwn_node("node-one", "False", PAST);
	w.nd[1].node = w.nodes[1];
	assert_true(eo_plan_member_node_trouble(&w.pm[1], &w.nd[1], 300, T0, &v));
	assert_int_equal(v.trouble, EO_NODE_NOT_READY);
	assert_string_equal(v.node, "node-one");
	w.pm[1].pvc = NULL;
	json_decref(pvc);
	json_decref(pv);
	pwn_world_free(&w);
}

TU_MAIN(test_node_trouble_predicate, test_node_lost_member_replaced,
	test_unreachable_etcd_does_nothing, test_node_drain_evacuate,
	test_node_move_add_before_remove, test_node_move_no_free_node, test_partition_reported,
	test_node_change_matters, test_clusters_on_node, test_node_of_local_pv)
