/*
 * Unit tests for plan/storage.c and the cluster plan's storage step: a raised storage size or a
 * changed StorageClass moves the members onto the new storage one at a time, add-before-remove
 * (a new member on a new PVC joins and is promoted, then the oldest outdated member is removed
 * through the quorum), never while a member is down; status and Progressing show the progress.
 *
 * The world: a bootstrapped 3-member cluster (or 1), members demo-a, demo-b, demo-c on 1Gi of
 * the default class (no spec.storage: the defaults), etcd listing them all
 * (support/planworld_nodeloss.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "desired/desired.h"
#include "plan/member.h"
#include "plan/needs.h"
#include "plan/plan.h"
#include "plan/roll.h"
#include "plan/storage.h"
#include "support/planworld_nodeloss.h"
#include "support/planworld_scale.h"
#include "support/tu_main.h"

static const char *name_of(const json_t *member)
{
	return member != NULL ? eo_member_name(member) : "(none)";
}

static void plan(struct pwn_world *w, struct eo_plan_result *res)
{
	memset(res, 0, sizeof(*res));
	assert_int_equal(eo_plan_cluster(&w->in, res), 0);
}

static void want_action(const struct eo_plan_result *res, enum eo_plan_action a, const char *what)
{
	if (res->action != a)
		fail_msg("%s: want %s, got %s (%s)", what, eo_plan_action_name(a),
			 eo_plan_action_name(res->action), res->message);
}

static void want_cond(const json_t *st, const char *type, const char *status, const char *reason)
{
	const json_t *c = eo_condition_find(st, type);

	assert_non_null(c);
	assert_string_equal(json_string_value(json_object_get(c, "status")), status);
	if (reason != NULL)
		assert_string_equal(json_string_value(json_object_get(c, "reason")), reason);
}

/* A storage object as JSON text ("{}" for the defaults). */
static void read_storage(const char *text, struct eo_storage *out, json_t **keep)
{
	*keep = json_loads(text, 0, NULL);
	assert_non_null(*keep);
	eo_storage_read(*keep, out);
}

/* The decision for one member, as a table. */
static void test_storage_change_table(void **state)
{
	static const struct {
		const char *what, *have, *want;
		enum eo_class_expansion exp;
		enum eo_storage_change out;
	} rows[] = {
	    {"same", "{}", "{\"size\":\"1Gi\"}", EO_CLASS_EXPANSION_NO, EO_STORAGE_CURRENT},
	    {"same size other unit", "{\"size\":\"1Gi\"}", "{\"size\":\"1024Mi\"}",
	     EO_CLASS_EXPANSION_NO, EO_STORAGE_CURRENT},
	    {"grow, class not expandable", "{}", "{\"size\":\"2Gi\"}", EO_CLASS_EXPANSION_NO,
	     EO_STORAGE_REPLACE},
	    {"grow, class not read", "{}", "{\"size\":\"2Gi\"}", EO_CLASS_EXPANSION_UNKNOWN,
	     EO_STORAGE_REPLACE},
	    {"grow, class expandable", "{}", "{\"size\":\"2Gi\"}", EO_CLASS_EXPANSION_YES,
	     EO_STORAGE_EXPAND},
	    {"grow in bytes", "{\"size\":\"1Gi\"}", "{\"size\":1073741825}", EO_CLASS_EXPANSION_YES,
	     EO_STORAGE_EXPAND},
	    {"member larger than target: never shrunk", "{\"size\":\"4Gi\"}", "{\"size\":\"2Gi\"}",
	     EO_CLASS_EXPANSION_YES, EO_STORAGE_CURRENT},
	    {"class added", "{}", "{\"storageClassName\":\"fast\"}", EO_CLASS_EXPANSION_YES,
	     EO_STORAGE_REPLACE},
	    {"class removed", "{\"storageClassName\":\"fast\"}", "{}", EO_CLASS_EXPANSION_YES,
	     EO_STORAGE_REPLACE},
	    {"class changed", "{\"storageClassName\":\"slow\"}", "{\"storageClassName\":\"fast\"}",
	     EO_CLASS_EXPANSION_YES, EO_STORAGE_REPLACE},
	    {"class changed and grown: a move, not an expansion", "{\"storageClassName\":\"slow\"}",
	     "{\"storageClassName\":\"fast\",\"size\":\"2Gi\"}", EO_CLASS_EXPANSION_YES,
	     EO_STORAGE_REPLACE},
	    {"class kept", "{\"storageClassName\":\"fast\"}",
	     "{\"storageClassName\":\"fast\",\"size\":\"1Gi\"}", EO_CLASS_EXPANSION_NO,
	     EO_STORAGE_CURRENT},
	    {"no provisioning kept", "{\"storageClassName\":\"\"}", "{\"storageClassName\":\"\"}",
	     EO_CLASS_EXPANSION_NO, EO_STORAGE_CURRENT},
	    {"memory grown: replaced", "{\"medium\":\"Memory\",\"size\":\"256Mi\"}",
	     "{\"medium\":\"Memory\",\"size\":\"512Mi\"}", EO_CLASS_EXPANSION_YES,
	     EO_STORAGE_REPLACE},
	    {"memory, class ignored", "{\"medium\":\"Memory\",\"size\":\"256Mi\"}",
	     "{\"medium\":\"Memory\",\"size\":\"256Mi\",\"storageClassName\":\"x\"}",
	     EO_CLASS_EXPANSION_NO, EO_STORAGE_CURRENT},
	    {"medium changed", "{}", "{\"medium\":\"Memory\"}", EO_CLASS_EXPANSION_YES,
	     EO_STORAGE_REPLACE},
	    {"unparsable size: nothing moves", "{\"size\":\"lots\"}", "{\"size\":\"2Gi\"}",
	     EO_CLASS_EXPANSION_NO, EO_STORAGE_CURRENT},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct eo_storage have, want;
		json_t *h = NULL, *w = NULL;
		enum eo_storage_change got;

		read_storage(rows[i].have, &have, &h);
		read_storage(rows[i].want, &want, &w);
		got = eo_plan_storage_change(&have, &want, rows[i].exp);
		if (got != rows[i].out)
			fail_msg("%s: want %s, got %s", rows[i].what,
				 eo_storage_change_name(rows[i].out), eo_storage_change_name(got));
		json_decref(h);
		json_decref(w);
	}
	assert_string_equal(eo_storage_change_name(EO_STORAGE_EXPAND), "expand");
}

/* Sets the cluster's spec.storage and status.observed.storage (the target) to text. */
static void target_storage(struct pwn_world *w, const char *text)
{
	json_t *s = json_loads(text, 0, NULL);

	assert_non_null(s);
	json_object_set(json_object_get(w->cluster, "spec"), "storage", s);
	json_object_set_new(json_object_get(json_object_get(w->cluster, "status"), "observed"),
			    "storage", s);
}

/* Sets member i's spec.storage to text. */
static void member_storage(struct pwn_world *w, size_t i, const char *text)
{
	json_t *s = json_loads(text, 0, NULL);

	assert_non_null(s);
	json_object_set_new(json_object_get((json_t *)w->pm[i].member, "spec"), "storage", s);
}

enum joiner_stage { J_PENDING, J_LEARNER, J_VOTER };

/*
 * Adds demo-d, a new member on storage (its spec.storage), to a world of three: pending (not
 * in etcd), a learner with a ready Pod, or a voter (the PDB then kept for four voters).
 */
static void add_joiner(struct pwn_world *w, enum joiner_stage st, const char *storage)
{
	const struct pws_m d = {.name = "demo-d",
				.created = "2026-06-02T09:59:30Z",
				.voter = st == J_VOTER,
				.pending = st == J_PENDING};
	size_t i = w->n;

	assert_int_equal(i, 3);
	w->pm[i].member = pws_member(&d);
	json_object_set_new(json_object_get((json_t *)w->pm[i].member, "spec"), "storage",
			    json_loads(storage, 0, NULL));
	w->nodes[i] = pwn_node("n0", "True", PWS_T0 - 86400);
	w->nd[i].node = w->nodes[i];
	if (st != J_PENDING) {
		w->pm[i].pod = pwn_pod(w->pm[i].member, "n0", true);
		eo_desired_member_peer_url(
		    w->peer[i], sizeof(w->peer[i]),
		    &(struct eo_desired_opts){.cluster_domain = "cluster.local"}, "demo-d", "demo",
		    "default", false);
		w->peer_p[i] = w->peer[i];
		w->ev[i] = (struct eo_etcd_member){.id = 0x103,
						   .name = "demo-d",
						   .peer_urls = &w->peer_p[i],
						   .n_peer_urls = 1,
						   .is_learner = st != J_VOTER};
		w->etcd.n = 4;
	}
	if (st == J_VOTER) {
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

/* Grow by replacement: the first step is a new member, status and Progressing say so. */
static void test_grow_begins_with_a_new_member(void **state)
{
	struct pwn_world w;
	struct eo_plan_result res;

	(void)state;
	pwn_world_init(&w, 3);
	target_storage(&w, "{\"size\":\"2Gi\",\"medium\":\"\"}");
	plan(&w, &res);
	want_action(&res, EO_PLAN_CREATE_MEMBER, "grow");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_STORAGE_CHANGING);
	assert_non_null(strstr(res.message, "storage change to 2Gi, the default StorageClass: 3 "
					    "member(s) still on the old storage"));
	assert_non_null(strstr(res.message, "member demo-a is removed through the quorum"));
	want_cond(res.status, EO_COND_PROGRESSING, "True", EO_PLAN_REASON_STORAGE_CHANGING);
	want_cond(res.status, EO_COND_AVAILABLE, "True", NULL);
	assert_int_equal(json_integer_value(json_object_get(res.status, "storageOutdatedMembers")),
			 3);
	assert_int_equal(json_integer_value(json_object_get(res.status, "storageUpdatedMembers")),
			 0);
	eo_plan_result_clear(&res);

	/* A member that is down: nothing is created, nothing removed. */
	json_decref((json_t *)w.pm[2].pod);
	w.pm[2].pod = pwn_pod(w.pm[2].member, "n2", false);
	plan(&w, &res);
	want_action(&res, EO_PLAN_WAIT, "a member down");
	assert_non_null(strstr(res.message, "waits until every member is ready"));
	pwn_done(&w, &res);

	/* A single member gets its replacement too, before it goes. */
	pwn_world_init(&w, 1);
	target_storage(&w, "{\"size\":\"2Gi\",\"medium\":\"\"}");
	plan(&w, &res);
	want_action(&res, EO_PLAN_CREATE_MEMBER, "one member");
	pwn_done(&w, &res);

	/* The target is reached once every member has it: nothing moves, no progress fields. */
	pwn_world_init(&w, 3);
	target_storage(&w, "{\"size\":\"2Gi\",\"medium\":\"\"}");
	for (size_t i = 0; i < 3; i++)
		member_storage(&w, i, "{\"size\":\"2Gi\",\"medium\":\"\"}");
	json_object_set_new(json_object_get(w.cluster, "status"), "storageOutdatedMembers",
			    json_integer(1));
	plan(&w, &res);
	assert_int_not_equal(res.action, EO_PLAN_CREATE_MEMBER);
	assert_null(json_object_get(res.status, "storageOutdatedMembers"));
	assert_null(json_object_get(res.status, "storageUpdatedMembers"));
	want_cond(res.status, EO_COND_PROGRESSING, "False", EO_REASON_RECONCILED);
	pwn_done(&w, &res);
}

/*
 * A reached target (no deadline) whose members are on smaller storage than it says (raised
 * before the operator moved storage): a deadline is set and Progressing says so; then moved.
 */
static void test_reached_target_with_outdated_members(void **state)
{
	struct pwn_world w;
	struct eo_plan_result res;

	(void)state;
	pwn_world_init(&w, 3);
	target_storage(&w, "{\"size\":\"2Gi\",\"medium\":\"\"}");
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	plan(&w, &res);
	want_action(&res, EO_PLAN_WRITE_STATUS, "deadline first");
	assert_non_null(json_object_get(res.status, "progressDeadline"));
	want_cond(res.status, EO_COND_PROGRESSING, "True", EO_PLAN_REASON_STORAGE_CHANGING);
	assert_string_equal(res.event_reason, EO_PLAN_REASON_STORAGE_CHANGING);
	assert_int_equal(json_integer_value(json_object_get(res.status, "storageOutdatedMembers")),
			 3);
	json_object_set(w.cluster, "status", res.status);
	eo_plan_result_clear(&res);
	plan(&w, &res);
	want_action(&res, EO_PLAN_CREATE_MEMBER, "then moved");
	pwn_done(&w, &res);
}

/* A move between classes: the same way; a member larger than the target is not touched. */
static void test_move_between_classes(void **state)
{
	struct pwn_world w;
	struct eo_plan_result res;

	(void)state;
	pwn_world_init(&w, 3);
	target_storage(&w, "{\"size\":\"1Gi\",\"medium\":\"\",\"storageClassName\":\"fast\"}");
	member_storage(&w, 0, "{\"size\":\"1Gi\",\"medium\":\"\",\"storageClassName\":\"fast\"}");
	plan(&w, &res);
	want_action(&res, EO_PLAN_CREATE_MEMBER, "move");
	assert_non_null(strstr(res.message, "StorageClass \"fast\": 2 member(s)"));
	assert_non_null(strstr(res.message, "member demo-b is removed"));
	assert_int_equal(json_integer_value(json_object_get(res.status, "storageUpdatedMembers")),
			 1);
	pwn_done(&w, &res);
}

/* With the new member: it joins and is promoted, then the oldest outdated member goes. */
static void test_replacement_joins_then_old_goes(void **state)
{
	static const char *const NEW = "{\"size\":\"2Gi\",\"medium\":\"\"}";
	static const struct {
		const char *what;
		enum joiner_stage st;
		const char *joiner_storage;
		enum eo_plan_action want;
		const char *member;
	} rows[] = {
	    {"created: added to etcd as a learner", J_PENDING, NULL, EO_PLAN_ADD_LEARNER, "demo-d"},
	    {"a learner that serves: promoted", J_LEARNER, NULL, EO_PLAN_PROMOTE_LEARNER, "demo-d"},
	    {"it votes: the oldest outdated member goes", J_VOTER, NULL, EO_PLAN_REMOVE_MEMBER,
	     "demo-a"},
	    {"a joiner built for an older target goes before it votes", J_LEARNER,
	     "{\"size\":\"1Gi\",\"medium\":\"\"}", EO_PLAN_REMOVE_MEMBER, "demo-d"},
	};
	struct pwn_world w;
	struct eo_plan_result res;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		pwn_world_init(&w, 3);
		target_storage(&w, NEW);
		add_joiner(&w, rows[i].st,
			   rows[i].joiner_storage != NULL ? rows[i].joiner_storage : NEW);
		plan(&w, &res);
		want_action(&res, rows[i].want, rows[i].what);
		if (rows[i].member != NULL)
			assert_string_equal(name_of(res.member), rows[i].member);
		want_cond(res.status, EO_COND_AVAILABLE, "True", NULL);
		pwn_done(&w, &res);
	}

	/* The next one: demo-a already moved (gone), demo-b is the oldest outdated. */
	pwn_world_init(&w, 3);
	target_storage(&w, NEW);
	member_storage(&w, 0, NEW);
	add_joiner(&w, J_VOTER, NEW);
	plan(&w, &res);
	want_action(&res, EO_PLAN_REMOVE_MEMBER, "second");
	assert_string_equal(name_of(res.member), "demo-b");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_STORAGE_CHANGING);
	assert_int_equal(json_integer_value(json_object_get(res.status, "storageUpdatedMembers")),
			 2);
	assert_int_equal(json_integer_value(json_object_get(res.status, "storageOutdatedMembers")),
			 2);
	eo_plan_result_clear(&res);
	/* An outdated member that is down goes first: it serves no one. */
	json_decref((json_t *)w.pm[2].pod);
	w.pm[2].pod = pwn_pod(w.pm[2].member, "n2", false);
	plan(&w, &res);
	want_action(&res, EO_PLAN_REMOVE_MEMBER, "outdated member down");
	assert_string_equal(name_of(res.member), "demo-c");
	eo_plan_result_clear(&res);
	/* ... but none goes while a member on the new storage is down. */
	json_decref((json_t *)w.pm[2].pod);
	w.pm[2].pod = pwn_pod(w.pm[2].member, "n2", true);
	json_decref((json_t *)w.pm[0].pod);
	w.pm[0].pod = pwn_pod(w.pm[0].member, "n0", false);
	plan(&w, &res);
	want_action(&res, EO_PLAN_WAIT, "another member down");
	assert_non_null(strstr(res.message, "once every other member is ready"));
	pwn_done(&w, &res);

	/*
	 * A joiner built for an older target that etcd already counts as a voter (its mark says
	 * so, its initialCluster is not written yet): it holds a vote, so it is not removed as a
	 * member "before it votes" while the others are down; the quorum checks decide instead.
	 */
	pwn_world_init(&w, 3);
	target_storage(&w, NEW);
	add_joiner(&w, J_VOTER, "{\"size\":\"1Gi\",\"medium\":\"\"}");
	json_object_set_new(json_object_get((json_t *)w.pm[3].member, "spec"), "initialCluster",
			    json_string(""));
	for (size_t k = 0; k < 3; k++) {
		json_decref((json_t *)w.pm[k].pod);
		w.pm[k].pod = pwn_pod(w.pm[k].member, "n0", k == 0);
	}
	plan(&w, &res);
	if (res.action == EO_PLAN_REMOVE_MEMBER)
		fail_msg("a voter in etcd removed as a joiner (%s): %s", name_of(res.member),
			 res.message);
	pwn_done(&w, &res);

	/* Without a storage change, four members for three: the newest goes (a scale-down). */
	pwn_world_init(&w, 3);
	add_joiner(&w, J_VOTER, "{\"size\":\"1Gi\",\"medium\":\"\"}");
	plan(&w, &res);
	want_action(&res, EO_PLAN_REMOVE_MEMBER, "scale down");
	assert_string_equal(name_of(res.member), "demo-d");
	pwn_done(&w, &res);
}

/* The replacement that cannot start (its class provisions nothing): said, nothing removed. */
static void test_replacement_blocked(void **state)
{
	static const char *const NEW =
	    "{\"size\":\"1Gi\",\"medium\":\"\",\"storageClassName\":\"missing\"}";
	struct pwn_world w;
	struct eo_plan_result res;

	(void)state;
	pwn_world_init(&w, 3);
	target_storage(&w, NEW);
	add_joiner(&w, J_LEARNER, NEW);
	json_decref((json_t *)w.pm[3].pod);
	w.pm[3].pod = json_pack(
	    "{s:{s:s, s:s, s:s}, s:{}, s:{s:s, s:[{s:s, s:s, s:s, s:s, s:s}]}}", "metadata", "name",
	    "demo-d", "namespace", "default", "uid", "pod-d", "spec", "status", "phase", "Pending",
	    "conditions", "type", "PodScheduled", "status", "False", "reason", "Unschedulable",
	    "message", "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims",
	    "lastTransitionTime", "2026-06-02T09:59:40Z");
	plan(&w, &res);
	want_action(&res, EO_PLAN_WAIT, "blocked");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_STORAGE_BLOCKED);
	assert_non_null(strstr(res.message, "no member is removed until it does"));
	want_cond(res.status, EO_COND_DEGRADED, "True", EO_PLAN_REASON_STORAGE_BLOCKED);
	pwn_done(&w, &res);
}

/* Which outdated member goes: a down one first, then the oldest; never one on target. */
static void test_victim_order(void **state)
{
	struct pwn_world w;
	const json_t *observed = NULL;

	(void)state;
	pwn_world_init(&w, 3);
	target_storage(&w, "{\"size\":\"2Gi\"}");
	observed = json_object_get(json_object_get(w.cluster, "status"), "observed");
	assert_string_equal(name_of(eo_plan_storage_victim(w.pm, 3, observed)->member), "demo-a");
	member_storage(&w, 0, "{\"size\":\"2Gi\"}");
	assert_string_equal(name_of(eo_plan_storage_victim(w.pm, 3, observed)->member), "demo-b");
	json_decref((json_t *)w.pm[2].pod);
	w.pm[2].pod = pwn_pod(w.pm[2].member, "n2", false);
	assert_string_equal(name_of(eo_plan_storage_victim(w.pm, 3, observed)->member), "demo-c");
	member_storage(&w, 1, "{\"size\":\"3Gi\"}");
	member_storage(&w, 2, "{\"size\":\"2Gi\"}");
	assert_null(eo_plan_storage_victim(w.pm, 3, observed));
	assert_true(eo_plan_member_storage_current(w.pm[0].member, NULL));
	/* A target latched without storage: nothing to move to, whatever the members have. */
	member_storage(&w, 0, "{\"size\":\"1Gi\",\"storageClassName\":\"fast\"}");
	assert_false(eo_plan_member_storage_current(w.pm[0].member, observed));
	json_object_del((json_t *)observed, "storage");
	assert_true(eo_plan_member_storage_current(w.pm[0].member, observed));
	pwn_world_free(&w);
}

/* A StorageClass named name, allowVolumeExpansion as given (-1: absent). */
static json_t *storage_class(const char *name, int allow)
{
	json_t *sc =
	    json_pack("{s:s, s:s, s:{s:s}, s:s}", "apiVersion", "storage.k8s.io/v1", "kind",
		      "StorageClass", "metadata", "name", name, "provisioner", "example.com/csi");

	if (allow >= 0)
		json_object_set_new(sc, "allowVolumeExpansion", json_boolean(allow));
	return sc;
}

/* A bound PVC data-<member> of class cls requesting req, capacity cap (NULL: not reported). */
static json_t *pvc(const char *member, const char *cls, const char *req, const char *cap)
{
	char name[64];
	json_t *p = NULL;

	snprintf(name, sizeof(name), "data-%s", member);
	p = json_pack("{s:{s:s, s:s, s:s}, s:{s:s, s:{s:{s:s}}}, s:{s:s}}", "metadata", "name",
		      name, "namespace", "default", "uid", name, "spec", "storageClassName", cls,
		      "resources", "requests", "storage", req, "status", "phase", "Bound");
	if (cap != NULL)
		json_object_set_new(json_object_get(p, "status"), "capacity",
				    json_pack("{s:s}", "storage", cap));
	return p;
}

static void test_class_expansion_and_pvc_predicates(void **state)
{
	json_t *yes = storage_class("fast", 1), *no = storage_class("fast", 0);
	json_t *absent = storage_class("fast", -1);
	json_t *m = pwn_member("demo-a"), *p = NULL, *patch = NULL;
	bool pending = true;

	(void)state;
	assert_int_equal(eo_plan_class_expansion(yes, "fast"), EO_CLASS_EXPANSION_YES);
	assert_int_equal(eo_plan_class_expansion(no, "fast"), EO_CLASS_EXPANSION_NO);
	assert_int_equal(eo_plan_class_expansion(absent, "fast"), EO_CLASS_EXPANSION_NO);
	assert_int_equal(eo_plan_class_expansion(yes, "slow"), EO_CLASS_EXPANSION_UNKNOWN);
	assert_int_equal(eo_plan_class_expansion(NULL, "fast"), EO_CLASS_EXPANSION_UNKNOWN);

	/* The member asks for 2Gi, its PVC requests 1Gi: the patch raises it. */
	json_object_set_new(json_object_get(m, "spec"), "storage",
			    json_pack("{s:s}", "size", "2Gi"));
	p = pvc("demo-a", "fast", "1Gi", "1Gi");
	patch = eo_plan_pvc_grow_patch(m, p);
	assert_non_null(patch);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(json_object_get(patch, "spec"), "resources"),
				"requests"),
		"storage")),
	    "2Gi");
	json_decref(patch);
	assert_true(eo_plan_pvc_growing(m, p, &pending));
	assert_false(pending);
	json_object_set_new(
	    json_object_get(p, "status"), "conditions",
	    json_pack("[{s:s, s:s}]", "type", "FileSystemResizePending", "status", "True"));
	assert_true(eo_plan_pvc_growing(m, p, &pending));
	assert_true(pending);
	/* Capacity reached (or larger): not growing. Not reported: not growing either. */
	json_object_set_new(json_object_get(json_object_get(p, "status"), "capacity"), "storage",
			    json_string("2048Mi"));
	assert_false(eo_plan_pvc_growing(m, p, &pending));
	json_object_del(json_object_get(p, "status"), "capacity");
	assert_false(eo_plan_pvc_growing(m, p, NULL));
	json_decref(p);
	/* Request already there, not bound, being deleted, a memory member: no patch. */
	p = pvc("demo-a", "fast", "2Gi", "1Gi");
	assert_null(eo_plan_pvc_grow_patch(m, p));
	json_decref(p);
	p = pvc("demo-a", "fast", "1Gi", NULL);
	json_object_set_new(json_object_get(p, "status"), "phase", json_string("Pending"));
	assert_null(eo_plan_pvc_grow_patch(m, p));
	json_object_set_new(json_object_get(p, "status"), "phase", json_string("Bound"));
	json_object_set_new(json_object_get(p, "metadata"), "deletionTimestamp",
			    json_string("2026-06-02T10:00:00Z"));
	assert_null(eo_plan_pvc_grow_patch(m, p));
	json_decref(p);
	p = pvc("demo-a", "fast", "1Gi", "1Gi");
	json_object_set_new(json_object_get(m, "spec"), "storage",
			    json_pack("{s:s, s:s}", "size", "2Gi", "medium", "Memory"));
	assert_null(eo_plan_pvc_grow_patch(m, p));
	assert_false(eo_plan_pvc_growing(m, p, NULL));
	assert_null(eo_plan_pvc_grow_patch(m, NULL));
	json_decref(p);
	json_decref(m);
	json_decref(yes);
	json_decref(no);
	json_decref(absent);
}

/* Members on class cls with 1Gi PVCs; the target 2Gi of the same class. */
static void expandable_world(struct pwn_world *w, const char *cls)
{
	char target[128];

	pwn_world_init(w, 3);
	snprintf(target, sizeof(target),
		 "{\"size\":\"2Gi\",\"medium\":\"\",\"storageClassName\":\"%s\"}", cls);
	target_storage(w, target);
	for (size_t i = 0; i < 3; i++) {
		snprintf(target, sizeof(target),
			 "{\"size\":\"1Gi\",\"medium\":\"\",\"storageClassName\":\"%s\"}", cls);
		member_storage(w, i, target);
		w->pm[i].pvc = pvc(PWN_NAMES[i], cls, "1Gi", "1Gi");
	}
}

static void free_pvcs(struct pwn_world *w)
{
	for (size_t i = 0; i < w->n; i++) {
		json_decref((json_t *)w->pm[i].pvc);
		w->pm[i].pvc = NULL;
	}
}

/* Every member of w answers its status, leader (0: none known) is the leader, all caught up. */
static void grow_statuses(struct pwn_world *w, struct eo_etcd_status *st, uint64_t leader)
{
	for (size_t i = 0; i < w->n; i++)
		st[i] = (struct eo_etcd_status){.member_id = w->ev[i].id,
						.leader = leader,
						.raft_index = 500,
						.raft_applied_index = 500};
	w->in.statuses = st;
	w->in.n_statuses = w->n;
}

/*
 * Three members on 1Gi of class "fast" (which allows expansion, read live), the target 2Gi;
 * demo-a asks for 2Gi and its PVC reports the volume grown, its filesystem not
 * (FileSystemResizePending): its Pod is to be restarted.
 */
static void resize_pending_world(struct pwn_world *w, const json_t *cls)
{
	expandable_world(w, "fast");
	w->in.class_read = true;
	w->in.storage_class = cls;
	member_storage(w, 0, "{\"size\":\"2Gi\",\"medium\":\"\",\"storageClassName\":\"fast\"}");
	json_object_set_new(
	    json_object_get((json_t *)w->pm[0].pvc, "status"), "conditions",
	    json_pack("[{s:s, s:s}]", "type", "FileSystemResizePending", "status", "True"));
}

/*
 * The member whose filesystem waits for a new mount is restarted as a roll restarts one: when
 * it leads, its leadership moves first (MOVE_LEADER through its own client URL, to the
 * follower closest to the leader), and its Pod is restarted only once another member leads.
 */
static void test_grow_restart_moves_leader_first(void **state)
{
	struct pwn_world w;
	struct eo_plan_result res;
	struct eo_etcd_status sts[PWN_MAXM];
	json_t *yes = storage_class("fast", 1);
	char url[EO_DESIRED_URL_MAX];

	(void)state;
	resize_pending_world(&w, yes);

	/* demo-a leads: leadership moves to a caught-up follower, nothing is restarted. */
	grow_statuses(&w, sts, 0x100);
	sts[2].raft_applied_index = 450; /* demo-c is behind demo-b: demo-b takes over */
	plan(&w, &res);
	want_action(&res, EO_PLAN_MOVE_LEADER, "leader with FileSystemResizePending");
	assert_string_equal(name_of(res.member), "demo-a");
	assert_int_equal(res.etcd_id, 0x101);
	assert_int_equal(res.n_endpoints, 1);
	eo_desired_member_client_url(url, sizeof(url),
				     &(struct eo_desired_opts){.cluster_domain = "cluster.local"},
				     "demo-a", "demo", "default", false);
	assert_string_equal(res.endpoints[0], url);
	assert_string_equal(res.event_reason, EO_PLAN_REASON_LEADER_MOVED);
	assert_non_null(
	    strstr(res.message, "it is the leader: moving leadership to member demo-b"));
	assert_string_equal(res.pod_uid, "");
	eo_plan_result_clear(&res);

	/* demo-b leads now: demo-a, a follower, has its Pod restarted. */
	grow_statuses(&w, sts, 0x101);
	plan(&w, &res);
	want_action(&res, EO_PLAN_RESTART_MEMBER, "former leader");
	assert_string_equal(name_of(res.member), "demo-a");
	assert_string_equal(res.pod_uid, "pod-uid");
	assert_true(res.evict);
	eo_plan_result_clear(&res);

	free_pvcs(&w);
	pwn_world_free(&w);
	json_decref(yes);
}

/*
 * Nothing is restarted while the check cannot be made: no member knows a leader, no status
 * answered, a member did not answer its status or lags the leader; the message says which.
 */
static void test_grow_restart_needs_a_leader(void **state)
{
	struct pwn_world w;
	struct eo_plan_result res;
	struct eo_etcd_status sts[PWN_MAXM];
	json_t *yes = storage_class("fast", 1);

	(void)state;
	resize_pending_world(&w, yes);

	grow_statuses(&w, sts, 0);
	plan(&w, &res);
	want_action(&res, EO_PLAN_WAIT, "no known leader");
	assert_non_null(strstr(res.message, "no member knows a leader"));
	want_cond(res.status, EO_COND_PROGRESSING, "True", EO_PLAN_REASON_STORAGE_CHANGING);
	eo_plan_result_clear(&res);

	w.in.statuses = NULL;
	w.in.n_statuses = 0;
	plan(&w, &res);
	want_action(&res, EO_PLAN_WAIT, "no status");
	assert_non_null(strstr(res.message, "no member knows a leader"));
	eo_plan_result_clear(&res);

	grow_statuses(&w, sts, 0x101);
	w.in.n_statuses = 2;
	plan(&w, &res);
	want_action(&res, EO_PLAN_WAIT, "demo-c did not answer");
	assert_non_null(strstr(res.message, "member demo-c did not answer its status"));
	eo_plan_result_clear(&res);

	grow_statuses(&w, sts, 0x101);
	sts[1].raft_index = 900;
	plan(&w, &res);
	want_action(&res, EO_PLAN_WAIT, "lagging");
	assert_non_null(strstr(res.message, "member demo-a lags the leader"));
	eo_plan_result_clear(&res);

	free_pvcs(&w);
	pwn_world_free(&w);
	json_decref(yes);
}

/* While such a restart is due, etcd's member list is asked for with the members' statuses. */
static void test_grow_restart_asks_statuses(void **state)
{
	struct pwn_world w;
	struct eo_plan_result res;
	json_t *yes = storage_class("fast", 1);

	(void)state;
	resize_pending_world(&w, yes);
	w.in.etcd_queried = false;
	plan(&w, &res);
	want_action(&res, EO_PLAN_QUERY_MEMBERS, "query");
	assert_true(res.want_status);
	eo_plan_result_clear(&res);
	/* Without FileSystemResizePending, no status is needed for the grow. */
	json_object_del(json_object_get((json_t *)w.pm[0].pvc, "status"), "conditions");
	plan(&w, &res);
	want_action(&res, EO_PLAN_QUERY_MEMBERS, "query, no restart due");
	assert_false(res.want_status);
	eo_plan_result_clear(&res);

	free_pvcs(&w);
	pwn_world_free(&w);
	json_decref(yes);
}

/*
 * In place: the class is read live first; where it allows expansion the member's size is
 * raised (its controller raises the PVC's request), the next member waits for the capacity,
 * and a filesystem waiting for a new mount gets its member's Pod restarted. Elsewhere the
 * member is replaced; a class that cannot be read moves nothing.
 */
static void test_grow_in_place(void **state)
{
	struct pwn_world w;
	struct eo_plan_result res;
	struct eo_etcd_status sts[PWN_MAXM];
	json_t *yes = storage_class("fast", 1), *no = storage_class("fast", 0);
	const json_t *sz = NULL;

	(void)state;
	expandable_world(&w, "fast");
	plan(&w, &res);
	want_action(&res, EO_PLAN_READ_CLASS, "class first");
	assert_string_equal(res.storage_class, "fast");
	assert_int_equal(eo_plan_cluster_needs(&res, &w.in, EO_PLAN_NEED_LEADER),
			 EO_PLAN_NEED_CLASS);
	eo_plan_result_clear(&res);

	w.in.class_read = true;
	w.in.storage_class = yes;
	assert_int_equal(
	    eo_plan_cluster_needs(&(struct eo_plan_result){.action = EO_PLAN_READ_CLASS}, &w.in,
				  EO_PLAN_NEED_NONE),
	    EO_PLAN_NEED_NONE);
	plan(&w, &res);
	want_action(&res, EO_PLAN_UPDATE_MEMBER, "expandable");
	assert_string_equal(name_of(res.member), "demo-a");
	sz =
	    json_object_get(json_object_get(json_object_get(res.patch, "spec"), "storage"), "size");
	assert_string_equal(json_string_value(sz), "2Gi");
	assert_string_equal(res.event_reason, EO_PLAN_REASON_STORAGE_CHANGING);
	assert_non_null(strstr(res.message, "growing the PVC of member demo-a in place"));
	eo_plan_result_clear(&res);

	w.in.storage_class = no;
	plan(&w, &res);
	want_action(&res, EO_PLAN_CREATE_MEMBER, "not expandable");
	eo_plan_result_clear(&res);

	w.in.storage_class = NULL;
	plan(&w, &res);
	want_action(&res, EO_PLAN_WAIT, "class unreadable");
	assert_non_null(strstr(res.message, "could not be read"));
	eo_plan_result_clear(&res);

	/* demo-a asks for 2Gi, its PVC is still at 1Gi: wait, whatever else is outdated. */
	member_storage(&w, 0, "{\"size\":\"2Gi\",\"medium\":\"\",\"storageClassName\":\"fast\"}");
	w.in.storage_class = yes;
	plan(&w, &res);
	want_action(&res, EO_PLAN_WAIT, "growing");
	assert_non_null(strstr(res.message, "waiting for PVC data-demo-a of member demo-a to grow "
					    "to 2Gi in place (capacity 1Gi)"));
	assert_int_equal(json_integer_value(json_object_get(res.status, "storageOutdatedMembers")),
			 3);
	want_cond(res.status, EO_COND_PROGRESSING, "True", EO_PLAN_REASON_STORAGE_CHANGING);
	eo_plan_result_clear(&res);

	/*
	 * The filesystem waits for a new mount: the Pod of demo-a, a follower (demo-b leads), is
	 * restarted (evicted: three members).
	 */
	json_object_set_new(
	    json_object_get((json_t *)w.pm[0].pvc, "status"), "conditions",
	    json_pack("[{s:s, s:s}]", "type", "FileSystemResizePending", "status", "True"));
	grow_statuses(&w, sts, 0x101);
	plan(&w, &res);
	want_action(&res, EO_PLAN_RESTART_MEMBER, "resize pending");
	assert_string_equal(name_of(res.member), "demo-a");
	assert_string_equal(res.pod_uid, "pod-uid");
	assert_true(res.evict);
	eo_plan_result_clear(&res);
	/* ... not while another member is down. */
	json_decref((json_t *)w.pm[2].pod);
	w.pm[2].pod = pwn_pod(w.pm[2].member, "n2", false);
	plan(&w, &res);
	want_action(&res, EO_PLAN_WAIT, "resize pending, another down");
	assert_non_null(strstr(res.message, "its Pod is restarted once every member is ready"));
	eo_plan_result_clear(&res);
	json_decref((json_t *)w.pm[2].pod);
	w.pm[2].pod = pwn_pod(w.pm[2].member, "n2", true);

	/* Grown: the next member, demo-b. */
	json_decref((json_t *)w.pm[0].pvc);
	w.pm[0].pvc = pvc("demo-a", "fast", "2Gi", "2Gi");
	plan(&w, &res);
	want_action(&res, EO_PLAN_UPDATE_MEMBER, "next");
	assert_string_equal(name_of(res.member), "demo-b");
	assert_int_equal(json_integer_value(json_object_get(res.status, "storageUpdatedMembers")),
			 1);
	eo_plan_result_clear(&res);
	free_pvcs(&w);
	pwn_world_free(&w);
	json_decref(yes);
	json_decref(no);
}

/* The member controller raises its PVC's request to the member's size; nothing else then. */
static void test_member_grows_its_pvc(void **state)
{
	json_t *m = pwn_member("demo-a");
	json_t *c = json_pack("{s:{s:s, s:s, s:s}, s:{s:s}, s:{s:s}}", "metadata", "name", "demo",
			      "namespace", "default", "uid", "c-uid", "spec", "version", "3.6.11",
			      "status", "clusterID", "248adce0359142ba");
	json_t *p = pvc("demo-a", "fast", "1Gi", "1Gi");
	json_t *pod = pwn_pod(m, "n0", true);
	struct eo_mplan_input in = {
	    .member = m,
	    .cluster = c,
	    .pod = pod,
	    .pvc = p,
	    .build = &(struct eo_desired_opts){.cluster_domain = "cluster.local"},
	    .now = PWS_T0};
	struct eo_mplan_result r;

	(void)state;
	json_t *refs =
	    json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", EO_API_GROUP_VERSION, "kind",
		      "EtcdMember", "name", "demo-a", "uid", "demo-a", "controller", 1);

	json_object_set(json_object_get(p, "metadata"), "ownerReferences", refs);
	json_object_set_new(json_object_get(pod, "metadata"), "ownerReferences", refs);
	json_object_set_new(json_object_get(pod, "metadata"), "labels",
			    json_pack("{s:s}", EO_LABEL_ROLE, EO_LABEL_ROLE_VOTER));
	json_object_set_new(
	    json_object_get(m, "spec"), "storage",
	    json_pack("{s:s, s:s, s:s}", "size", "2Gi", "medium", "", "storageClassName", "fast"));
	assert_int_equal(eo_member_plan(&in, &r), 0);
	if (r.action != EO_MPLAN_PATCH_PVC)
		fail_msg("want patch-pvc, got %s (%s)", eo_mplan_action_name(r.action), r.message);
	assert_non_null(strstr(r.message, "growing PVC data-demo-a to 2Gi in place"));
	assert_null(r.status);
	eo_member_plan_clear(&r);
	/* Requested: the member goes on as usual. */
	json_object_set_new(json_object_get(json_object_get(p, "spec"), "resources"), "requests",
			    json_pack("{s:s}", "storage", "2Gi"));
	assert_int_equal(eo_member_plan(&in, &r), 0);
	assert_int_not_equal(r.action, EO_MPLAN_PATCH_PVC);
	eo_member_plan_clear(&r);
	json_decref(m);
	json_decref(c);
	json_decref(p);
	json_decref(pod);
}

TU_MAIN(test_storage_change_table, test_grow_begins_with_a_new_member,
	test_reached_target_with_outdated_members, test_move_between_classes,
	test_replacement_joins_then_old_goes, test_replacement_blocked, test_victim_order,
	test_class_expansion_and_pvc_predicates, test_grow_in_place,
	test_grow_restart_moves_leader_first, test_grow_restart_needs_a_leader,
	test_grow_restart_asks_statuses, test_member_grows_its_pvc)
