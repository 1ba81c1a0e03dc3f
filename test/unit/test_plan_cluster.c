/*
 * Unit tests for plan/plan.c: the cluster controller's next action and desired status, as a
 * table of observed worlds, plus the no-churn property (an unchanged world yields an identical
 * status) and the locking pattern (latch, deadline, SpecChanged, BootstrapFailed,
 * DeadlineExceeded, RetryAfterDeadline).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/names.h"
#include "desired/desired.h"
#include "plan/auth.h"
#include "plan/plan.h"
#include "support/testutil.h"

#define T0    1780394400 /* 2026-06-02T10:00:00Z */
#define VOTER "{\"isVoter\":true}"

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

/* --- fixtures --- */

static json_t *cluster(int replicas, const char *status_json)
{
	json_t *c = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i}, s:{s:i, s:s, s:{s:s, s:s}, s:i}}",
			      "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdCluster", "metadata",
			      "name", "demo", "namespace", "default", "uid", "c-uid", "generation",
			      1, "spec", "replicas", replicas, "version", "3.6.11", "storage",
			      "size", "1Gi", "medium", "", "progressDeadlineSeconds", 600);
	json_error_t e;

	if (status_json != NULL) {
		json_t *st = json_loads(status_json, 0, &e);

		if (st == NULL)
			fail_msg("bad status JSON: %s", e.text);
		json_object_set_new(c, "status", st);
	}
	return c;
}

/* status after the latch pass for replicas r at T0 */
static char *latched_status(int r, const char *extra)
{
	char *s = NULL, next[EO_PLAN_NAME_MAX];

	/* The first member's name, recorded with the latch (see eo_plan_next_member_name). */
	if (eo_plan_next_member_name("demo", "c-uid", NULL, 0, next, sizeof(next)) != 0)
		fail();
	if (asprintf(
		&s,
		"{\"nextMemberName\":\"%s\",\"clusterToken\":\"default-demo-c-uid\",\"selector\":"
		"\"etcd-operator.cozystack.io/cluster=demo\",\"readyMembers\":0,"
		"\"brokenMembers\":0,\"progressDeadline\":\"2026-06-02T10:10:00Z\","
		"\"observed\":{\"replicas\":%d,\"version\":\"3.6.11\",\"storage\":{\"size\":"
		"\"1Gi\",\"medium\":\"\"}}%s%s}",
		next, r, extra ? "," : "", extra ? extra : "") < 0)
		fail();
	return s;
}

static json_t *member(const char *name, bool seed, bool pending, const char *extra_status)
{
	char ic[EO_DESIRED_URL_MAX];
	json_t *m = NULL;

	eo_desired_seed_initial_cluster(ic, sizeof(ic), &OPTS, name, "demo", "default", false);
	m = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:[s], s:[{s:s, s:s, s:s, s:s, s:b}]}, "
		      "s:{s:s, s:s, s:b, s:s, s:s}}",
		      "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdMember", "metadata", "name",
		      name, "namespace", "default", "uid", name, "finalizers",
		      EO_FINALIZER_MEMBER_CLEANUP, "ownerReferences", "apiVersion",
		      EO_API_GROUP_VERSION, "kind", "EtcdCluster", "name", "demo", "uid", "c-uid",
		      "controller", 1, "spec", "clusterName", "demo", "version", "3.6.11",
		      "bootstrap", seed, "initialCluster", pending ? "" : ic, "clusterToken",
		      "default-demo-c-uid");
	if (extra_status != NULL)
		json_object_set_new(m, "status", json_loads(extra_status, 0, NULL));
	return m;
}

static json_t *pod(const char *name, bool ready)
{
	return json_pack("{s:{s:s, s:s, s:s}, s:{s:s, s:[{s:s, s:s}]}}", "metadata", "name", name,
			 "namespace", "default", "uid", "pod-uid", "status", "phase",
			 ready ? "Running" : "Pending", "conditions", "type", "Ready", "status",
			 ready ? "True" : "False");
}

struct world {
	json_t *cluster;
	json_t *hsvc, *csvc;
	json_t *pdb;
	struct eo_plan_member members[8];
	size_t n;
	struct eo_etcd_members etcd;
	struct eo_etcd_member etcd_v[8];
	char etcd_peer[8][EO_DESIRED_URL_MAX];
	char *etcd_peer_p[8];
	struct eo_plan_input in;
};

/* The observed PDB: as built with minAvailable min. */
static void world_pdb(struct world *w, int min)
{
	json_decref(w->pdb);
	w->pdb = eo_desired_pdb(w->cluster, min);
	w->in.pdb = w->pdb;
}

static void world_init(struct world *w, json_t *c, bool services)
{
	memset(w, 0, sizeof(*w));
	w->cluster = c;
	if (services) {
		w->hsvc = eo_desired_headless_service(c);
		w->csvc = eo_desired_client_service(c);
	}
	w->in = (struct eo_plan_input){.cluster = c,
				       .members = w->members,
				       .headless_svc = w->hsvc,
				       .client_svc = w->csvc,
				       .build = &OPTS,
				       .now = T0};
}

/*
 * A Pod stands for the one the member controller built from its member: it carries that
 * member's Pod hash unless the test gave it another.
 */
static void stamp_pod_hash(json_t *m, json_t *p)
{
	char h[EO_DESIRED_HASH_MAX];
	json_t *md = json_object_get(p, "metadata");

	if (p == NULL || json_object_get(md, "annotations") != NULL)
		return;
	if (eo_desired_member_pod_hash(m, &OPTS, h, sizeof(h)) != 0)
		fail();
	json_object_set_new(md, "annotations", json_pack("{s:s}", EO_ANNOTATION_POD_HASH, h));
}

static void world_add(struct world *w, json_t *m, json_t *p)
{
	stamp_pod_hash(m, p);
	w->members[w->n].member = m;
	w->members[w->n].pod = p;
	w->n++;
	w->in.n_members = w->n;
}

/* etcd answers: one member named name (peer URL of name) in cluster cid. */
static void world_etcd(struct world *w, eo_etcd_err err, const char *name, uint64_t cid, size_t n)
{
	static char peer[EO_DESIRED_URL_MAX];
	static char *peers[1];

	eo_desired_member_peer_url(peer, sizeof(peer), &OPTS, name, "demo", "default", false);
	peers[0] = peer;
	w->etcd_v[0] = (struct eo_etcd_member){.id = 0x96e78c8d1de8ec76ULL,
					       .name = (char *)name,
					       .peer_urls = peers,
					       .n_peer_urls = 1};
	w->etcd_v[1] = (struct eo_etcd_member){.id = 2, .name = (char *)"other"};
	w->etcd = (struct eo_etcd_members){.cluster_id = cid, .v = w->etcd_v, .n = n};
	w->in.etcd_queried = true;
	w->in.etcd_err = err;
	w->in.etcd = err == EO_ETCD_OK ? &w->etcd : NULL;
}

static void world_free(struct world *w)
{
	for (size_t i = 0; i < w->n; i++) {
		json_decref((json_t *)w->members[i].member);
		json_decref((json_t *)w->members[i].pod);
	}
	json_decref(w->hsvc);
	json_decref(w->csvc);
	json_decref(w->pdb);
	json_decref(w->cluster);
}

static const char *cond_reason(const json_t *st, const char *type)
{
	return eo_condition_reason(st, type);
}

static void assert_cond(const json_t *st, const char *type, const char *status, const char *reason)
{
	if (!eo_condition_matches(st, type, status, reason))
		fail_msg("%s: want %s/%s, have %s/%s", type, status, reason,
			 eo_condition_status(st, type) ? eo_condition_status(st, type) : "-",
			 cond_reason(st, type) ? cond_reason(st, type) : "-");
}

/* Plans, then replays the result's status onto the cluster and plans again later: an
 * unchanged world must give the same status and no write. */
static void assert_stable(struct world *w, const struct eo_plan_result *r)
{
	struct eo_plan_result again = {0};

	if (r->status == NULL)
		return;
	json_object_set(w->cluster, "status", r->status);
	w->in.now += 300;
	assert_int_equal(eo_plan_cluster(&w->in, &again), 0);
	if (again.action != EO_PLAN_QUERY_MEMBERS) {
		assert_non_null(again.status);
		assert_false(again.status_changed);
		assert_true(json_equal(again.status, r->status));
	}
	eo_plan_result_clear(&again);
	w->in.now -= 300;
}

/* --- cases --- */

static void test_services_first(void **state)
{
	struct world w;
	struct eo_plan_result r;

	(void)state;
	world_init(&w, cluster(1, NULL), false);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENSURE_SERVICES);
	assert_null(r.status);
	eo_plan_result_clear(&r);
	/* A drifted Service also counts. */
	w.hsvc = eo_desired_headless_service(w.cluster);
	w.csvc = eo_desired_client_service(w.cluster);
	json_object_set_new(json_object_get(w.hsvc, "spec"), "publishNotReadyAddresses",
			    json_false());
	w.in.headless_svc = w.hsvc;
	w.in.client_svc = w.csvc;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENSURE_SERVICES);
	eo_plan_result_clear(&r);
	world_free(&w);
}

static void test_latch_target(void **state)
{
	struct world w;
	struct eo_plan_result r;
	json_t *st;

	(void)state;
	world_init(&w, cluster(1, NULL), true);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_LATCH_TARGET);
	assert_true(r.status_changed);
	st = r.status;
	assert_string_equal(json_string_value(json_object_get(st, "clusterToken")),
			    "default-demo-c-uid");
	assert_string_equal(json_string_value(json_object_get(st, "progressDeadline")),
			    "2026-06-02T10:10:00Z");
	assert_string_equal(json_string_value(json_object_get(st, "selector")),
			    "etcd-operator.cozystack.io/cluster=demo");
	assert_int_equal(json_integer_value(json_object_get(st, "readyMembers")), 0);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(st, "observed"), "replicas")), 1);
	assert_cond(st, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_INITIAL_SNAPSHOT);
	eo_plan_result_clear(&r);
	world_free(&w);
}

/* The bootstrap table: one world per step of the seed flow. */
static void test_bootstrap_table(void **state)
{
	struct {
		const char *what;
		bool has_member, pending, has_pod, pod_ready, queried;
		eo_etcd_err err;
		size_t etcd_n;
		enum eo_plan_action want;
		long want_requeue;
		const char *avail_status, *avail_reason, *prog_reason;
	} cases[] = {
	    {"no members", false, false, false, false, false, EO_ETCD_OK, 0, EO_PLAN_CREATE_SEED, 0,
	     "False", EO_REASON_WAITING_FOR_SEED, EO_REASON_WAITING_FOR_SEED},
	    {"pending seed", true, true, false, false, false, EO_ETCD_OK, 0, EO_PLAN_COMPLETE_SEED,
	     0, "False", EO_REASON_WAITING_FOR_SEED, EO_REASON_WAITING_FOR_SEED},
	    {"seed without Pod", true, false, false, false, false, EO_ETCD_OK, 0, EO_PLAN_WAIT,
	     EO_PLAN_REQUEUE_SHORT_MS, "False", EO_REASON_WAITING_FOR_SEED,
	     EO_REASON_WAITING_FOR_SEED},
	    {"seed Pod not ready", true, false, true, false, false, EO_ETCD_OK, 0, EO_PLAN_WAIT,
	     EO_PLAN_REQUEUE_SHORT_MS, "False", EO_REASON_WAITING_FOR_SEED,
	     EO_REASON_INITIAL_SNAPSHOT},
	    {"seed ready, ask etcd", true, false, true, true, false, EO_ETCD_OK, 0,
	     EO_PLAN_QUERY_MEMBERS, 0, NULL, NULL, NULL},
	    {"etcd unreachable", true, false, true, true, true, EO_ETCD_UNAVAILABLE, 0,
	     EO_PLAN_WAIT, EO_PLAN_REQUEUE_ETCD_MS, "False", EO_REASON_CLUSTER_UNREACHABLE,
	     EO_REASON_INITIAL_SNAPSHOT},
	    {"unexpected member list", true, false, true, true, true, EO_ETCD_OK, 2, EO_PLAN_WAIT,
	     EO_PLAN_REQUEUE_ETCD_MS, "False", EO_REASON_CLUSTER_UNREACHABLE,
	     EO_REASON_INITIAL_SNAPSHOT},
	    {"discovered", true, false, true, true, true, EO_ETCD_OK, 1, EO_PLAN_WRITE_STATUS, 0,
	     "True", EO_REASON_CLUSTER_DISCOVERED, EO_REASON_INITIAL_SNAPSHOT},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct world w;
		struct eo_plan_result r;
		char *st = latched_status(1, NULL);

		world_init(&w, cluster(1, st), true);
		free(st);
		if (cases[i].has_member)
			world_add(&w, member("demo-aaaaa", true, cases[i].pending, NULL),
				  cases[i].has_pod ? pod("demo-aaaaa", cases[i].pod_ready) : NULL);
		if (cases[i].queried)
			world_etcd(&w, cases[i].err, "demo-aaaaa", 0x248adce0359142baULL,
				   cases[i].etcd_n);
		if (eo_plan_cluster(&w.in, &r) != 0)
			fail_msg("%s: plan failed", cases[i].what);
		if (r.action != cases[i].want)
			fail_msg("%s: action %s, want %s", cases[i].what,
				 eo_plan_action_name(r.action), eo_plan_action_name(cases[i].want));
		assert_int_equal(r.requeue_ms, cases[i].want_requeue);
		if (cases[i].avail_status != NULL) {
			assert_non_null(r.status);
			assert_cond(r.status, EO_COND_AVAILABLE, cases[i].avail_status,
				    cases[i].avail_reason);
			assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE,
				    cases[i].prog_reason);
			assert_null(eo_condition_find(r.status, EO_COND_DEGRADED));
			/* The discovery write changes the world (clusterID); others must not. */
			if (r.action != EO_PLAN_WRITE_STATUS)
				assert_stable(&w, &r);
		} else {
			assert_null(r.status);
		}
		if (r.action == EO_PLAN_CREATE_SEED) {
			/* Under the name the latched status records: a retry collides. */
			char next[EO_PLAN_NAME_MAX];

			assert_int_equal(
			    eo_plan_next_member_name("demo", "c-uid", NULL, 0, next, sizeof(next)),
			    0);
			assert_string_equal(r.member_name, next);
		}
		if (r.action == EO_PLAN_COMPLETE_SEED) {
			assert_string_equal(r.initial_cluster,
					    "demo-aaaaa=http://"
					    "demo-aaaaa.demo.default.svc.cluster.local:2380");
			assert_ptr_equal(r.member, w.members[0].member);
		}
		if (r.action == EO_PLAN_QUERY_MEMBERS) {
			assert_int_equal(r.n_endpoints, 1);
			assert_string_equal(
			    r.endpoints[0],
			    "http://demo-aaaaa.demo.default.svc.cluster.local:2379");
		}
		if (r.action == EO_PLAN_WRITE_STATUS) {
			assert_string_equal(
			    json_string_value(json_object_get(r.status, "clusterID")),
			    "248adce0359142ba");
			assert_string_equal(r.event_reason, EO_REASON_CLUSTER_DISCOVERED);
		}
		eo_plan_result_clear(&r);
		world_free(&w);
	}
}

/* After discovery: steady state is reached, the deadline dropped and nothing moves. */
static void test_steady_state_no_churn(void **state)
{
	struct world w;
	struct eo_plan_result r;
	char *st = latched_status(1, "\"clusterID\":\"248adce0359142ba\"");

	(void)state;
	world_init(&w, cluster(1, st), true);
	free(st);
	world_add(&w, member("demo-aaaaa", true, false, VOTER), pod("demo-aaaaa", true));
	world_pdb(&w, 1);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_int_equal(r.requeue_ms, EO_PLAN_REQUEUE_STEADY_MS);
	assert_true(r.status_changed);
	assert_null(json_object_get(r.status, "progressDeadline"));
	assert_int_equal(json_integer_value(json_object_get(r.status, "readyMembers")), 1);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_RECONCILED);
	assert_cond(r.status, EO_COND_DEGRADED, EO_COND_FALSE, EO_REASON_QUORUM_HEALTHY);
	assert_stable(&w, &r);
	/* Even after the deadline would have passed: complete targets have none. */
	w.in.now = T0 + 3600;
	assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	world_free(&w);
}

/*
 * A cluster adopted from the legacy operator (docs/migration.md): held while the migration
 * runs; then its adopted Pod, which carries no Pod hash, is left running until the target
 * changes; the same Pod not marked adopted is rolled.
 */
static void test_adopted_cluster(void **state)
{
	struct world w;
	struct eo_plan_result r;
	char *st = latched_status(1, "\"clusterID\":\"248adce0359142ba\"");
	json_t *m = NULL, *p = NULL;

	(void)state;
	for (int adopted = 1; adopted >= 0; adopted--) {
		world_init(&w, cluster(1, st), true);
		m = member("demo-aaaaa", true, false, VOTER);
		p = pod("demo-aaaaa", true);
		/* a Pod the member controller did not build: no hash */
		json_object_set_new(json_object_get(p, "metadata"), "annotations", json_object());
		if (adopted)
			json_object_set_new(
			    json_object_get(m, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_ADOPTED_POD_UID, "pod-uid"));
		world_add(&w, m, p);
		world_pdb(&w, 1);
		world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
		assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
		if (adopted) {
			assert_int_equal(r.action, EO_PLAN_NONE);
			assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE,
				    EO_REASON_RECONCILED);
		} else {
			/* outdated: the roll starts (it first reads the members' progress) */
			assert_int_not_equal(r.action, EO_PLAN_NONE);
			assert_string_equal(eo_condition_status(r.status, EO_COND_PROGRESSING),
					    EO_COND_TRUE);
		}
		eo_plan_result_clear(&r);

		/* while `kubectl etcd migrate` holds it: nothing at all, no status */
		json_object_set_new(json_object_get(w.cluster, "metadata"), "annotations",
				    json_pack("{s:s}", EO_ANNOTATION_MIGRATING, "true"));
		assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
		assert_int_equal(r.action, EO_PLAN_WAIT);
		assert_null(r.status);
		assert_false(r.status_changed);
		assert_non_null(strstr(r.message, "held by kubectl etcd migrate"));
		eo_plan_result_clear(&r);
		world_free(&w);
	}
	free(st);
}

/* RFC 7386 applied the way the apiserver applies our application/merge-patch+json. */
static void merge_patch(json_t *target, const json_t *patch)
{
	const char *key = NULL;
	json_t *v = NULL;

	json_object_foreach((json_t *)patch, key, v)
	{
		json_t *t = json_object_get(target, key);

		if (json_is_null(v))
			json_object_del(target, key);
		else if (json_is_object(v) && json_is_object(t))
			merge_patch(t, v);
		else if (json_is_object(v)) {
			json_t *fresh = json_object();

			merge_patch(fresh, v);
			json_object_set_new(target, key, fresh);
		} else
			json_object_set_new(target, key, json_deep_copy(v));
	}
}

/*
 * `kubectl etcd migrate` hands the aenix headless Service (<name>-headless, named by the
 * headless-service-name annotation) to the cluster: ports peer before client, the aenix
 * selector and labels. One repair (a merge patch, as the apiserver applies it) must make it
 * match; before the fix the aenix selector keys survived the merge and the services check
 * failed forever ("service drift repaired" every pass, the target never latched).
 */
static void test_taken_over_legacy_headless_service(void **state)
{
	struct world w;
	struct eo_plan_result r;
	json_t *legacy = NULL, *patch = NULL, *want = NULL;

	(void)state;
	world_init(&w, cluster(1, NULL), false);
	json_object_set_new(
	    json_object_get(w.cluster, "metadata"), "annotations",
	    json_pack("{s:s}", EO_ANNOTATION_HEADLESS_SERVICE_NAME, "demo-headless"));
	w.csvc = eo_desired_client_service(w.cluster);
	legacy = json_pack(
	    "{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:s, s:[s], s:b, s:{s:s, s:s, s:s}, "
	    "s:[{s:s, s:i, s:i, s:s}, {s:s, s:i, s:i, s:s}]}}",
	    "apiVersion", "v1", "kind", "Service", "metadata", "name", "demo-headless", "namespace",
	    "default", "labels", "app.kubernetes.io/name", "etcd", "app.kubernetes.io/instance",
	    "demo", "app.kubernetes.io/managed-by", "etcd-operator", "spec", "clusterIP", "None",
	    "clusterIPs", "None", "publishNotReadyAddresses", 1, "selector",
	    "app.kubernetes.io/name", "etcd", "app.kubernetes.io/instance", "demo",
	    "app.kubernetes.io/managed-by", "etcd-operator", "ports", "name", "peer", "port", 2380,
	    "targetPort", 2380, "protocol", "TCP", "name", "client", "port", 2379, "targetPort",
	    2379, "protocol", "TCP");
	assert_non_null(legacy);
	/* kubectl etcd migrate hands it over with a controller ownerReference (migrate_run.c) */
	json_object_set_new(json_object_get(legacy, "metadata"), "ownerReferences",
			    json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion",
				      EO_API_GROUP_VERSION, "kind", "EtcdCluster", "name", "demo",
				      "uid", "c-uid", "controller", 1));
	w.hsvc = legacy;
	w.in.headless_svc = w.hsvc;
	w.in.client_svc = w.csvc;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENSURE_SERVICES);
	eo_plan_result_clear(&r);

	/* the controller's repair, applied as the apiserver does */
	want = eo_desired_headless_service(w.cluster);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(want, "metadata"), "name")),
	    "demo-headless");
	patch = eo_desired_service_patch(want, legacy);
	assert_non_null(patch);
	merge_patch(legacy, patch);
	json_decref(patch);
	assert_null(eo_desired_service_patch(want, legacy));
	assert_null(json_object_get(json_object_get(json_object_get(legacy, "spec"), "selector"),
				    "app.kubernetes.io/instance"));
	json_decref(want);

	/* the plan now goes on: the target latches */
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_LATCH_TARGET);
	eo_plan_result_clear(&r);
	world_free(&w);
}

static void test_member_not_ready_after_bootstrap(void **state)
{
	struct world w;
	struct eo_plan_result r;
	char *st = latched_status(1, "\"clusterID\":\"248adce0359142ba\"");

	(void)state;
	world_init(&w, cluster(1, st), true);
	free(st);
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	world_add(&w, member("demo-aaaaa", true, false, VOTER), pod("demo-aaaaa", false));
	world_pdb(&w, 1);
	/* A member not ready: etcd is asked whether it still lists it; it does. */
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_QUERY_MEMBERS);
	eo_plan_result_clear(&r);
	world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_QUORUM_LOST);
	assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_QUORUM_LOST);
	/* No target in flight: not Progressing, and no deadline can expire. */
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_RECONCILED);
	w.in.now = T0 + 7200;
	assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	world_free(&w);
}

static void test_spec_changed_relatches(void **state)
{
	struct world w;
	struct eo_plan_result r;
	char *st = latched_status(1, "\"clusterID\":\"248adce0359142ba\"");

	(void)state;
	world_init(&w, cluster(3, st), true); /* spec says 3, observed 1 */
	free(st);
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	world_add(&w, member("demo-aaaaa", true, false, VOTER), pod("demo-aaaaa", true));
	world_pdb(&w, 1);
	w.in.now = T0 + 1000;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_WRITE_STATUS);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_SPEC_CHANGED);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(r.status, "observed"), "replicas")),
	    3);
	assert_string_equal(json_string_value(json_object_get(r.status, "progressDeadline")),
			    "2026-06-02T10:26:40Z");
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	/* Next pass with the new target: the PDB follows the target (3 -> minAvailable 2)... */
	json_object_set(w.cluster, "status", r.status);
	eo_plan_result_clear(&r);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENSURE_PDB);
	assert_non_null(r.patch);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(r.patch, "spec"), "minAvailable")),
	    2);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_SPEC_CHANGED);
	eo_plan_result_clear(&r);
	/* ... then etcd's member list is read through the voter, and a member is created. */
	world_pdb(&w, 2);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_QUERY_MEMBERS);
	assert_int_equal(r.n_endpoints, 1);
	assert_string_equal(r.endpoints[0],
			    "http://demo-aaaaa.demo.default.svc.cluster.local:2379");
	eo_plan_result_clear(&r);
	world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_CREATE_MEMBER);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_SPEC_CHANGED);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	world_free(&w);
}

static void test_deadlines(void **state)
{
	struct world w;
	struct eo_plan_result r;
	char *st = latched_status(1, NULL);

	(void)state;
	/* Before a clusterID: terminal BootstrapFailed. */
	world_init(&w, cluster(1, st), true);
	free(st);
	world_add(&w, member("demo-aaaaa", true, false, NULL), pod("demo-aaaaa", false));
	w.in.now = T0 + 600;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_int_equal(r.requeue_ms, 0);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_BOOTSTRAP_FAILED);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_BOOTSTRAP_FAILED);
	assert_string_equal(r.event_reason, EO_REASON_BOOTSTRAP_FAILED);
	assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	world_free(&w);

	/* After a clusterID: DeadlineExceeded, then a spec edit resumes. */
	st = latched_status(3, "\"clusterID\":\"248adce0359142ba\"");
	world_init(&w, cluster(3, st), true);
	free(st);
	world_add(&w, member("demo-aaaaa", true, false, "{\"isVoter\":true}"),
		  pod("demo-aaaaa", true));
	w.in.now = T0 + 601;
	/* Healing goes on past the deadline: the missing PDB is created first ... */
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENSURE_PDB);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED);
	assert_cond(r.status, EO_COND_DEGRADED, EO_COND_FALSE, EO_REASON_QUORUM_HEALTHY);
	assert_int_equal(json_integer_value(json_object_get(r.status, "membersAtDeadline")), 1);
	eo_plan_result_clear(&r);
	/* ... but the scale-up 1 -> 3 does not go on: no member is created. */
	world_pdb(&w, eo_desired_pdb_min_available(1, 3));
	world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_non_null(strstr(r.message, "not growing beyond the 1 member(s)"));
	assert_string_equal(r.event_reason, EO_REASON_DEADLINE_EXCEEDED);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED);
	assert_stable(&w, &r);
	json_object_set(w.cluster, "status", r.status);
	eo_plan_result_clear(&r);
	json_object_set_new(json_object_get(w.cluster, "spec"), "replicas", json_integer(1));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_WRITE_STATUS);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_RETRY_AFTER_DEADLINE);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	eo_plan_result_clear(&r);
	world_free(&w);
}

static void test_invalid_and_unsupported_specs(void **state)
{
	struct world w;
	struct eo_plan_result r;

	(void)state;
	world_init(&w, cluster(1, NULL), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "version", json_string("latest"));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_INVALID_SPEC);
	assert_string_equal(r.event_type, "Warning");
	assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	world_free(&w);

	/* Auth and TLS are both done: a new auth cluster starts like any other. */
	world_init(&w, cluster(1, NULL), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "tls",
			    json_pack("{s:{s:{s:s}}}", "client", "serverSecretRef", "name", "s"));
	json_object_set_new(
	    json_object_get(w.cluster, "spec"), "auth",
	    json_pack("{s:b, s:{s:s}}", "enabled", 1, "rootCredentialsSecretRef", "name", "root"));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_LATCH_TARGET);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_INITIAL_SNAPSHOT);
	eo_plan_result_clear(&r);
	world_free(&w);

	world_init(&w, cluster(1, NULL), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "tls",
			    json_pack("{s:{s:{s:s}}}", "peer", "secretRef", "name", "p"));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_null(cond_reason(r.status, EO_COND_DEGRADED));
	assert_true(cond_reason(r.status, EO_COND_AVAILABLE) == NULL ||
		    strcmp(cond_reason(r.status, EO_COND_AVAILABLE), EO_PLAN_REASON_UNSUPPORTED) !=
			0);
	eo_plan_result_clear(&r);
	world_free(&w);
}

/* A steady one-member mTLS cluster with spec.auth (latched when latched). */
static void auth_world(struct world *w, bool with_auth, bool latched)
{
	char *st = latched_status(1, latched ? "\"clusterID\":\"248adce0359142ba\","
					       "\"authEnabled\":true"
					     : "\"clusterID\":\"248adce0359142ba\"");
	json_t *c = cluster(1, st);

	free(st);
	json_object_set_new(json_object_get(c, "spec"), "tls",
			    json_pack("{s:{s:{s:s}, s:{s:s}}}", "client", "serverSecretRef", "name",
				      "srv", "operatorClientSecretRef", "name", "cli"));
	if (with_auth)
		json_object_set_new(json_object_get(c, "spec"), "auth",
				    json_pack("{s:b, s:{s:s}}", "enabled", 1,
					      "rootCredentialsSecretRef", "name", "root"));
	json_object_del(json_object_get(c, "status"), "progressDeadline");
	world_init(w, c, true);
	world_add(w, member("demo-aaaaa", true, false, VOTER), pod("demo-aaaaa", true));
	world_pdb(w, 1);
}

/*
 * spec.auth on a healthy cluster: ask etcd, turn auth on, latch status.authEnabled once etcd
 * says it is on and the password works; a restored cluster with auth already on is latched
 * without provisioning; a latched steady cluster asks nothing.
 */
static void test_auth_enable_and_latch(void **state)
{
	struct world w;
	struct eo_plan_result r;

	(void)state;
	auth_world(&w, true, false);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_QUERY_MEMBERS);
	assert_int_equal(r.n_endpoints, 1);
	assert_non_null(
	    strstr(r.endpoints[0], "://demo-aaaaa.demo.default.svc.cluster.local:2379"));
	eo_plan_result_clear(&r);
	/* etcd: auth off -> enable it through the voters. */
	world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_status_err = EO_ETCD_OK;
	w.in.auth_on = false;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENABLE_AUTH);
	assert_int_equal(r.n_endpoints, 1);
	assert_non_null(strstr(r.message, "Secret default/root"));
	assert_null(json_object_get(r.status, "authEnabled"));
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	eo_plan_result_clear(&r);
	/* etcd: auth on, the password works -> latch (also what a restored snapshot gets). */
	w.in.auth_on = true;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_WRITE_STATUS);
	assert_true(json_is_true(json_object_get(r.status, "authEnabled")));
	assert_string_equal(r.event_reason, EO_PLAN_REASON_AUTH_ENABLED);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	json_object_set(w.cluster, "status", r.status);
	eo_plan_result_clear(&r);
	/* Latched and steady: no etcd query, nothing to do. */
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_true(json_is_true(json_object_get(r.status, "authEnabled")));
	eo_plan_result_clear(&r);
	/* The Secret's password changed (or the operator restarted): etcd is asked at once. */
	w.in.auth_unverified = true;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_QUERY_MEMBERS);
	eo_plan_result_clear(&r);
	world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_login_err = EO_ETCD_AUTH;
	w.in.auth_login_message = "etcdserver: authentication failed";
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_AUTH_CREDENTIALS_REJECTED);
	assert_string_equal(r.event_reason, EO_REASON_AUTH_CREDENTIALS_REJECTED);
	eo_plan_result_clear(&r);
	w.in.auth_login_err = EO_ETCD_OK;
	w.in.auth_unverified = false;
	/* Unknown auth state (3.4 refusing, etcd down): nothing is provisioned. */
	world_free(&w);
	auth_world(&w, true, false);
	world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_status_err = EO_ETCD_UNAVAILABLE;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_not_equal(r.action, EO_PLAN_ENABLE_AUTH);
	assert_null(json_object_get(r.status, "authEnabled"));
	eo_plan_result_clear(&r);
	world_free(&w);
}

/* etcd has auth on and the spec none: AuthRequiredNotConfigured, nothing done, asked again. */
static void test_auth_required_not_configured(void **state)
{
	struct world w;
	struct eo_plan_result r;

	(void)state;
	auth_world(&w, false, false);
	world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_on = true;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE,
		    EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE,
		    EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	assert_string_equal(r.event_type, "Warning");
	assert_string_equal(r.event_reason, EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	assert_non_null(strstr(r.message, "delete and recreate"));
	json_object_set(w.cluster, "status", r.status);
	eo_plan_result_clear(&r);
	/* The next pass asks etcd again rather than reporting a healthy cluster. */
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	w.in.auth_on = false;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_QUERY_MEMBERS);
	eo_plan_result_clear(&r);
	/* Still on: the same status, no write. */
	world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_on = true;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_false(r.status_changed);
	eo_plan_result_clear(&r);
	/* Bootstrapping a restored seed: refused before the cluster ID is latched. */
	world_free(&w);
	{
		char *st = latched_status(1, NULL);

		world_init(&w, cluster(1, st), true);
		free(st);
	}
	world_add(&w, member("demo-aaaaa", true, false, NULL), pod("demo-aaaaa", true));
	world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_on = true;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_null(json_object_get(r.status, "clusterID"));
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE,
		    EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	eo_plan_result_clear(&r);
	/* The same when etcd refused the anonymous member list itself. */
	w.in.etcd_err = EO_ETCD_AUTH;
	w.in.etcd = NULL;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE,
		    EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	eo_plan_result_clear(&r);
	world_free(&w);
}

/* A wrong password or a missing Secret: a condition and a Warning, no action, no latch. */
static void test_auth_problems(void **state)
{
	const struct {
		bool latched;
		const char *creds_reason;
		eo_etcd_err login;
		const char *want;
	} rows[] = {
	    {false, NULL, EO_ETCD_AUTH, EO_REASON_AUTH_CREDENTIALS_REJECTED},
	    {true, NULL, EO_ETCD_AUTH, EO_REASON_AUTH_CREDENTIALS_REJECTED},
	    {false, EO_REASON_AUTH_SECRET_NOT_FOUND, EO_ETCD_OK, EO_REASON_AUTH_SECRET_NOT_FOUND},
	    {true, EO_REASON_AUTH_SECRET_INVALID, EO_ETCD_OK, EO_REASON_AUTH_SECRET_INVALID},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct world w;
		struct eo_plan_result r;

		auth_world(&w, true, rows[i].latched);
		world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
		w.in.auth_on = true;
		w.in.auth_login_err = rows[i].login;
		w.in.auth_login_message = "etcdserver: authentication failed";
		w.in.auth_reason = rows[i].creds_reason;
		w.in.auth_message = "the root credentials Secret default/root does not exist";
		assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
		assert_int_equal(r.action, EO_PLAN_NONE);
		assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, rows[i].want);
		/* The members are fine: Available still says so. */
		assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
		assert_string_equal(r.event_reason, rows[i].want);
		assert_int_equal(json_is_true(json_object_get(r.status, "authEnabled")),
				 rows[i].latched);
		if (rows[i].login == EO_ETCD_AUTH)
			assert_non_null(strstr(r.message, "authentication failed"));
		assert_null(strstr(r.message, "s3cret"));
		eo_plan_result_clear(&r);
		world_free(&w);
	}
}

/* A TLS client API: the seed is asked over https, and a TLS failure reads as such. */
static void test_tls_bootstrap_handshake(void **state)
{
	const struct {
		bool tls;
		eo_etcd_err err;
		const char *reason;
	} rows[] = {
	    {true, EO_ETCD_TRANSPORT, EO_REASON_TLS_HANDSHAKE_FAILED},
	    {true, EO_ETCD_UNAVAILABLE, EO_REASON_CLUSTER_UNREACHABLE},
	    {false, EO_ETCD_TRANSPORT, EO_REASON_CLUSTER_UNREACHABLE},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct world w;
		struct eo_plan_result r;
		char *st = latched_status(1, NULL);
		json_t *m = member("demo-aaaaa", true, false, NULL);

		world_init(&w, cluster(1, st), true);
		free(st);
		if (rows[i].tls) {
			json_object_set_new(
			    json_object_get(w.cluster, "spec"), "tls",
			    tu_jsonq("{'client':{'serverSecretRef':{'name':'s'}}}"));
			json_object_set_new(json_object_get(m, "spec"), "tls",
					    tu_jsonq("{'clientServerSecretRef':{'name':'s'}}"));
		}
		world_add(&w, m, pod("demo-aaaaa", true));
		assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
		assert_int_equal(r.action, EO_PLAN_QUERY_MEMBERS);
		assert_string_equal(r.endpoints[0],
				    rows[i].tls
					? "https://demo-aaaaa.demo.default.svc.cluster.local:2379"
					: "http://demo-aaaaa.demo.default.svc.cluster.local:2379");
		eo_plan_result_clear(&r);
		world_etcd(&w, rows[i].err, "demo-aaaaa", 0x248adce0359142baULL, 0);
		assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
		assert_int_equal(r.action, EO_PLAN_WAIT);
		assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, rows[i].reason);
		assert_string_equal(r.event_reason, rows[i].reason);
		eo_plan_result_clear(&r);
		world_free(&w);
	}
}

/* Unusable TLS material: nothing is touched, the condition and a Warning Event say why. */
static void test_tls_problem_stops(void **state)
{
	struct world w;
	struct eo_plan_result r;
	char *st = latched_status(1, "\"clusterID\":\"248adce0359142ba\"");

	(void)state;
	/* Not formed yet: Available=False with the reason, no seed created. */
	world_init(&w, cluster(1, NULL), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "tls",
			    json_pack("{s:{s:{s:s}}}", "client", "serverSecretRef", "name", "s"));
	w.in.tls_reason = EO_REASON_TLS_SECRET_NOT_FOUND;
	w.in.tls_message = "the server Secret default/s does not exist";
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_TLS_SECRET_NOT_FOUND);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_TLS_SECRET_NOT_FOUND);
	assert_string_equal(r.event_type, "Warning");
	assert_string_equal(r.event_reason, EO_REASON_TLS_SECRET_NOT_FOUND);
	assert_string_equal(r.message, "the server Secret default/s does not exist");
	assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	world_free(&w);

	/* Formed and healthy: Available still tells the members, Degraded says what is wrong. */
	world_init(&w, cluster(1, st), true);
	json_object_set_new(json_object_get(w.cluster, "spec"), "tls",
			    json_pack("{s:{s:{s:s}}}", "client", "serverSecretRef", "name", "s"));
	world_add(&w, member("demo-aaaaa", true, false, VOTER), pod("demo-aaaaa", true));
	w.in.tls_reason = EO_REASON_TLS_SECRET_INVALID;
	w.in.tls_message = "the server Secret default/s: the server certificate expired on ...";
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_TLS_SECRET_INVALID);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_TLS_SECRET_INVALID);
	eo_plan_result_clear(&r);
	world_free(&w);
	free(st);
}

/* cluster(1, status) renamed: another EtcdCluster of the same namespace. */
static json_t *cluster_named(const char *name, const char *uid, const char *status_json)
{
	json_t *c = cluster(1, status_json);
	json_t *md = json_object_get(c, "metadata");

	json_object_set_new(md, "name", json_string(name));
	json_object_set_new(md, "uid", json_string(uid));
	return c;
}

/* The condition's message contains want. */
static void assert_cond_says(const json_t *st, const char *type, const char *want)
{
	const json_t *cs = json_object_get(st, "conditions");
	const json_t *c = NULL;
	size_t i;

	json_array_foreach(cs, i, c)
	{
		const char *t = json_string_value(json_object_get(c, "type"));
		const char *m = json_string_value(json_object_get(c, "message"));

		if (t != NULL && strcmp(t, type) == 0) {
			if (m == NULL || strstr(m, want) == NULL)
				fail_msg("%s: message '%s' lacks '%s'", type, m ? m : "-", want);
			return;
		}
	}
	fail_msg("no %s condition", type);
}

/*
 * Clusters x and x-client in one namespace (review H2): x's client Service x-client is
 * x-client's headless Service. Neither patches the other's Service (before, each pass of
 * either cluster planned ENSURE_SERVICES and flipped its selector): the plan stops with
 * ForeignObject naming the Service and its controller, a Warning Event, no action.
 */
static void test_foreign_service_refused(void **state)
{
	struct world w;
	struct eo_plan_result r;
	json_t *other = NULL;

	(void)state;
	/* x, created second: its client Service name is held by cluster x-client. */
	other = cluster_named("x-client", "xc-uid", NULL);
	world_init(&w, cluster_named("x", "x-uid", NULL), false);
	w.csvc = eo_desired_headless_service(other);
	w.in.client_svc = w.csvc;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_int_equal(r.requeue_ms, EO_PLAN_REQUEUE_STEADY_MS);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_FOREIGN_OBJECT);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_FOREIGN_OBJECT);
	assert_null(eo_condition_status(r.status, EO_COND_DEGRADED));
	assert_cond_says(r.status, EO_COND_AVAILABLE,
			 "Service x-client is not controlled by this EtcdCluster (its controller: "
			 "EtcdCluster x-client, uid xc-uid)");
	assert_null(json_object_get(r.status, "observed")); /* nothing latched, no seed */
	assert_string_equal(r.event_type, "Warning");
	assert_string_equal(r.event_reason, EO_REASON_FOREIGN_OBJECT);
	assert_stable(&w, &r);
	eo_plan_result_clear(&r);

	/* The other cluster renamed or deleted, x's own Services made: x latches and seeds. */
	json_decref(w.csvc);
	w.hsvc = eo_desired_headless_service(w.cluster);
	w.csvc = eo_desired_client_service(w.cluster);
	w.in.headless_svc = w.hsvc;
	w.in.client_svc = w.csvc;
	for (int pass = 0; pass < 2; pass++) {
		assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
		json_object_set(w.cluster, "status", r.status);
		eo_plan_result_clear(&r);
	}
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_CREATE_SEED);
	assert_string_not_equal(cond_reason(r.status, EO_COND_AVAILABLE), EO_REASON_FOREIGN_OBJECT);
	assert_string_not_equal(cond_reason(r.status, EO_COND_PROGRESSING),
				EO_REASON_FOREIGN_OBJECT);
	eo_plan_result_clear(&r);
	world_free(&w);

	/* x-client, created second: its headless Service name is x's client Service. */
	world_init(&w, other, false);
	other = cluster_named("x", "x-uid", NULL);
	w.hsvc = eo_desired_client_service(other);
	w.in.headless_svc = w.hsvc;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_FOREIGN_OBJECT);
	assert_cond_says(r.status, EO_COND_AVAILABLE,
			 "Service x-client is not controlled by this EtcdCluster (its controller: "
			 "EtcdCluster x, uid x-uid)");
	eo_plan_result_clear(&r);
	world_free(&w);

	/* The owner cluster itself goes on: its own Services are in line, it latches. */
	world_init(&w, other, true);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_LATCH_TARGET);
	eo_plan_result_clear(&r);
	world_free(&w);
}

/*
 * A formed cluster whose PodDisruptionBudget or NetworkPolicy name is held by an object with
 * no controller: the members keep serving (Available from them), Degraded says ForeignObject,
 * nothing is acted on.
 */
static void test_foreign_pdb_and_netpol_refused(void **state)
{
	struct world w;
	struct eo_plan_result r;
	char *st = latched_status(1, "\"clusterID\":\"248adce0359142ba\"");
	json_t *np =
	    json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "networking.k8s.io/v1", "kind",
		      "NetworkPolicy", "metadata", "name", "demo", "namespace", "default");

	(void)state;
	world_init(&w, cluster(1, st), true);
	world_add(&w, member("demo-aaaaa", true, false, VOTER), pod("demo-aaaaa", true));
	world_pdb(&w, 1);
	json_object_del(json_object_get(w.pdb, "metadata"), "ownerReferences");
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_FOREIGN_OBJECT);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_FOREIGN_OBJECT);
	assert_cond_says(r.status, EO_COND_DEGRADED,
			 "PodDisruptionBudget demo is not controlled by this EtcdCluster (its "
			 "controller: none)");
	eo_plan_result_clear(&r);

	/* Our PDB back, a user's NetworkPolicy under the cluster's name. */
	world_pdb(&w, 1);
	w.in.netpol = np;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_FOREIGN_OBJECT);
	assert_cond_says(r.status, EO_COND_DEGRADED, "NetworkPolicy demo is not controlled");
	eo_plan_result_clear(&r);

	/* Ours: nothing to say any more. */
	json_object_set_new(json_object_get(np, "metadata"), "ownerReferences",
			    json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion",
				      EO_API_GROUP_VERSION, "kind", "EtcdCluster", "name", "demo",
				      "uid", "c-uid", "controller", 1));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_cond(r.status, EO_COND_DEGRADED, EO_COND_FALSE, EO_REASON_QUORUM_HEALTHY);
	assert_string_not_equal(cond_reason(r.status, EO_COND_PROGRESSING),
				EO_REASON_FOREIGN_OBJECT);
	eo_plan_result_clear(&r);
	json_decref(np);
	world_free(&w);
	free(st);
}

static void test_paused_from_start(void **state)
{
	struct world w;
	struct eo_plan_result r;
	char *st = latched_status(0, NULL);

	(void)state;
	world_init(&w, cluster(0, st), true);
	free(st);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_PAUSED);
	assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_PAUSED);
	assert_null(json_object_get(r.status, "progressDeadline"));
	assert_stable(&w, &r);
	eo_plan_result_clear(&r);
	world_free(&w);
}

static void test_deleting_and_waiting(void **state)
{
	struct world w;
	struct eo_plan_result r;
	char *st = latched_status(1, NULL);
	json_t *m = member("demo-aaaaa", true, false, NULL);

	(void)state;
	json_object_set_new(json_object_get(m, "metadata"), "deletionTimestamp",
			    json_string("2026-06-02T10:00:00Z"));
	world_init(&w, cluster(1, st), true);
	free(st);
	world_add(&w, m, NULL);
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_WAIT);
	assert_int_equal(r.requeue_ms, EO_PLAN_REQUEUE_SHORT_MS);
	eo_plan_result_clear(&r);
	/* A cluster being deleted: nothing, no status. */
	json_object_set_new(json_object_get(w.cluster, "metadata"), "deletionTimestamp",
			    json_string("2026-06-02T10:00:00Z"));
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_null(r.status);
	eo_plan_result_clear(&r);
	world_free(&w);
}

static void test_helpers(void **state)
{
	char buf[24];
	json_t *p = pod("x", true);

	(void)state;
	eo_plan_format_id(0x248adce0359142baULL, buf, sizeof(buf));
	assert_string_equal(buf, "248adce0359142ba");
	assert_true(eo_plan_pod_ready(p));
	json_object_set_new(json_object_get(p, "metadata"), "deletionTimestamp",
			    json_string("2026-06-02T10:00:00Z"));
	assert_false(eo_plan_pod_ready(p));
	assert_false(eo_plan_pod_ready(NULL));
	assert_string_equal(eo_plan_action_name(EO_PLAN_CREATE_SEED), "create-seed");
	assert_string_equal(eo_plan_action_name((enum eo_plan_action)99), "unknown");
	json_decref(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_services_first),
	    cmocka_unit_test(test_taken_over_legacy_headless_service),
	    cmocka_unit_test(test_latch_target),
	    cmocka_unit_test(test_bootstrap_table),
	    cmocka_unit_test(test_steady_state_no_churn),
	    cmocka_unit_test(test_adopted_cluster),
	    cmocka_unit_test(test_member_not_ready_after_bootstrap),
	    cmocka_unit_test(test_spec_changed_relatches),
	    cmocka_unit_test(test_deadlines),
	    cmocka_unit_test(test_invalid_and_unsupported_specs),
	    cmocka_unit_test(test_auth_enable_and_latch),
	    cmocka_unit_test(test_auth_required_not_configured),
	    cmocka_unit_test(test_auth_problems),
	    cmocka_unit_test(test_tls_problem_stops),
	    cmocka_unit_test(test_tls_bootstrap_handshake),
	    cmocka_unit_test(test_foreign_service_refused),
	    cmocka_unit_test(test_foreign_pdb_and_netpol_refused),
	    cmocka_unit_test(test_paused_from_start),
	    cmocka_unit_test(test_deleting_and_waiting),
	    cmocka_unit_test(test_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
