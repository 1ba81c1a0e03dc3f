/*
 * Unit tests for plan/bootstrap.c: the passes before the cluster has an ID (the seed member, the
 * initial cluster, the wait for etcd to answer), through eo_plan_cluster on a fresh cluster
 * (support/planworld_cluster.h).
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
#include "api/names.h"
#include "desired/desired.h"
#include "plan/auth.h"
#include "plan/plan.h"
#include "support/planworld_cluster.h"
#include "support/testutil.h"
#include "plan/internal.h"
#include "support/planworld_step.h"
#include "support/tu_main.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

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
		struct pwc_world w;
		struct eo_plan_result r;
		char *st = pwc_latched_status(1, NULL);

		pwc_world_init(&w, pwc_cluster(1, st), true);
		free(st);
		if (cases[i].has_member)
			pwc_world_add(&w, pwc_member("demo-aaaaa", true, cases[i].pending, NULL),
				      cases[i].has_pod ? pwc_pod("demo-aaaaa", cases[i].pod_ready)
						       : NULL);
		if (cases[i].queried)
			pwc_world_etcd(&w, cases[i].err, "demo-aaaaa", 0x248adce0359142baULL,
				       cases[i].etcd_n);
		if (eo_plan_cluster(&w.in, &r) != 0)
			fail_msg("%s: plan failed", cases[i].what);
		if (r.action != cases[i].want)
			fail_msg("%s: action %s, want %s", cases[i].what,
				 eo_plan_action_name(r.action), eo_plan_action_name(cases[i].want));
		assert_int_equal(r.requeue_ms, cases[i].want_requeue);
		if (cases[i].avail_status != NULL) {
			assert_non_null(r.status);
			pwc_assert_cond(r.status, EO_COND_AVAILABLE, cases[i].avail_status,
					cases[i].avail_reason);
			pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_TRUE,
					cases[i].prog_reason);
			assert_null(eo_condition_find(r.status, EO_COND_DEGRADED));
			/* The discovery write changes the world (clusterID); others must not. */
			if (r.action != EO_PLAN_WRITE_STATUS)
				pwc_assert_stable(&w, &r);
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
		pwc_done(&w, &r);
	}
}

/* The seed's restore-replay init container with this termination state (JSON object text). */
static void seed_replay_status(struct pwc_world *w, const char *terminated)
{
	json_t *pod = (json_t *)w->members[0].pod, *t = json_loads(terminated, 0, NULL);

	assert_non_null(t);
	json_object_set_new(
	    json_object_get(pod, "status"), "initContainerStatuses",
	    json_pack("[{s:s, s:{s:o}}]", "name", "restore-replay", "state", "terminated", t));
}

/*
 * Discovery of a cluster whose seed restored an archive: status.restoredFromArchive has the
 * revision and time the replay reported, the message says it, a Normal RestoredFromArchive
 * Event tells it; a failed or foreign replay status records nothing.
 */
static void test_discovered_from_archive(void **state)
{
	static const struct {
		const char *what, *terminated;
		long long revision;
		const char *time, *event;
	} cases[] = {
	    {"revision and time",
	     "{\"exitCode\":0,\"message\":\"{\\\"file\\\":\\\"/x\\\",\\\"revision\\\":42,"
	     "\\\"time\\\":\\\"2026-11-28T01:02:03Z\\\"}\"}",
	     42, "2026-11-28T01:02:03Z", EO_REASON_RESTORED_FROM_ARCHIVE},
	    {"revision only", "{\"exitCode\":0,\"message\":\"{\\\"revision\\\":7}\"}", 7, NULL,
	     EO_REASON_RESTORED_FROM_ARCHIVE},
	    {"failed replay", "{\"exitCode\":1,\"message\":\"{\\\"revision\\\":7}\"}", 0, NULL,
	     EO_REASON_CLUSTER_DISCOVERED},
	    {"not our result", "{\"exitCode\":0,\"message\":\"done\"}", 0, NULL,
	     EO_REASON_CLUSTER_DISCOVERED},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pwc_world w;
		struct eo_plan_result r;
		char *st = pwc_latched_status(1, NULL);
		json_t *got;

		pwc_world_init(&w, pwc_cluster(1, st), true);
		free(st);
		pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, NULL),
			      pwc_pod("demo-aaaaa", true));
		seed_replay_status(&w, cases[i].terminated);
		pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
		if (eo_plan_cluster(&w.in, &r) != 0 || r.action != EO_PLAN_WRITE_STATUS)
			fail_msg("%s: plan failed or action %s", cases[i].what,
				 eo_plan_action_name(r.action));
		assert_string_equal(r.event_reason, cases[i].event);
		pwc_assert_cond(r.status, EO_COND_AVAILABLE, "True", EO_REASON_CLUSTER_DISCOVERED);
		got = json_object_get(r.status, "restoredFromArchive");
		if (cases[i].revision == 0) {
			assert_null(got);
		} else {
			assert_int_equal(json_integer_value(json_object_get(got, "revision")),
					 cases[i].revision);
			assert_non_null(strstr(r.message, "restored from archive to revision"));
			if (cases[i].time != NULL)
				assert_string_equal(json_string_value(json_object_get(got, "time")),
						    cases[i].time);
			else
				assert_null(json_object_get(got, "time"));
		}
		pwc_done(&w, &r);
	}
}

static void test_member_not_ready_after_bootstrap(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;

	(void)state;
	pwc_formed_world(&w, 1, false, 1);
	json_object_del(json_object_get(w.cluster, "status"), "progressDeadline");
	/* A member not ready: etcd is asked whether it still lists it; it does. */
	pwst_plan(&w.in, &r, EO_PLAN_QUERY_MEMBERS);
	eo_plan_result_clear(&r);
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_QUORUM_LOST);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_QUORUM_LOST);
	/* No target in flight: not Progressing, and no deadline can expire. */
	pwc_assert_cond(r.status, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_RECONCILED);
	w.in.now = T0 + 7200;
	pwc_assert_stable(&w, &r);
	pwc_done(&w, &r);
}

struct bootstrap_row {
	const char *what;
	int32_t desired;
	bool has_member, seed, pending, has_pod, pod_ready, queried;
	eo_etcd_err err;
	size_t etcd_n;
	enum eo_plan_action action;
	const char *message;   /* a part of out.message */
	const char *available; /* reason of Available, NULL: not set */
};

/* The bootstrap step decides nothing: the pass goes on to the rest (its return is true). */
static bool bootstrap_step(struct eo__plan_ctx *x, struct eo__plan_counts *c, const void *row)
{
	const struct bootstrap_row *r = row;

	eo__plan_step_bootstrap(x, c, r->desired);
	return true;
}

static void bootstrap_after(const char *what, const struct eo__plan_ctx *x,
			    const struct eo_plan_result *out, const void *row)
{
	const struct bootstrap_row *r = row;

	(void)out;
	pwst_check_str(what, "Available", eo_condition_reason(x->st, EO_COND_AVAILABLE),
		       r->available);
}

/*
 * The step itself (eo__plan_step_bootstrap), called directly on a fresh cluster
 * (support/planworld_cluster.h): the action, the message and the Available reason of each
 * stage before the cluster has an ID, from a paused target to the discovery of the ID.
 */
static void test_bootstrap_step(void **state)
{
	static const struct bootstrap_row rows[] = {
	    {"a target of no member: paused, nothing created", 0, false, false, false, false, false,
	     false, EO_ETCD_OK, 0, EO_PLAN_NONE, "cluster never bootstrapped", EO_REASON_PAUSED},
	    {"no member: create the seed", 1, false, false, false, false, false, false, EO_ETCD_OK,
	     0, EO_PLAN_CREATE_SEED, "creating the seed member", EO_REASON_WAITING_FOR_SEED},
	    {"a member that is not the seed: wait", 1, true, false, false, true, true, false,
	     EO_ETCD_OK, 0, EO_PLAN_WAIT, "1 member(s) exist but none is the bootstrap seed",
	     EO_REASON_WAITING_FOR_SEED},
	    {"a pending seed: complete it", 1, true, true, true, false, false, false, EO_ETCD_OK, 0,
	     EO_PLAN_COMPLETE_SEED, "seed member demo-aaaaa: setting its initial cluster",
	     EO_REASON_WAITING_FOR_SEED},
	    {"seed without its Pod: wait", 1, true, true, false, false, false, false, EO_ETCD_OK, 0,
	     EO_PLAN_WAIT, "seed member demo-aaaaa", EO_REASON_WAITING_FOR_SEED},
	    {"seed ready: ask etcd", 1, true, true, false, true, true, false, EO_ETCD_OK, 0,
	     EO_PLAN_QUERY_MEMBERS, "listing the members of seed demo-aaaaa", NULL},
	    {"etcd unreachable: wait", 1, true, true, false, true, true, true, EO_ETCD_UNAVAILABLE,
	     0, EO_PLAN_WAIT, "cannot list the members of seed demo-aaaaa",
	     EO_REASON_CLUSTER_UNREACHABLE},
	    {"two members listed: wait", 1, true, true, false, true, true, true, EO_ETCD_OK, 2,
	     EO_PLAN_WAIT, "does not show it as the only member", EO_REASON_CLUSTER_UNREACHABLE},
	    {"the seed alone: the cluster ID is recorded", 1, true, true, false, true, true, true,
	     EO_ETCD_OK, 1, EO_PLAN_WRITE_STATUS,
	     "etcd cluster 248adce0359142ba formed by seed member demo-aaaaa",
	     EO_REASON_CLUSTER_DISCOVERED},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pwc_world w;
		char *st = pwc_latched_status(rows[i].desired, NULL);

		pwc_world_init(&w, pwc_cluster(rows[i].desired, st), true);
		free(st);
		if (rows[i].has_member)
			pwc_world_add(
			    &w, pwc_member("demo-aaaaa", rows[i].seed, rows[i].pending, NULL),
			    rows[i].has_pod ? pwc_pod("demo-aaaaa", rows[i].pod_ready) : NULL);
		if (rows[i].queried)
			pwc_world_etcd(&w, rows[i].err, "demo-aaaaa", 0x248adce0359142baULL,
				       rows[i].etcd_n);
		pwst_call(rows[i].what, &w.in, false, bootstrap_step, bootstrap_after, &rows[i],
			  (struct pwst_want){true, rows[i].action,
					     rows[i].action == EO_PLAN_COMPLETE_SEED ? "demo-aaaaa"
										     : NULL,
					     0, rows[i].message});
		pwc_world_free(&w);
	}
}

TU_MAIN(test_bootstrap_table, test_member_not_ready_after_bootstrap, test_bootstrap_step,
	test_discovered_from_archive)
