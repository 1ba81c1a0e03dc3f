/*
 * Unit tests for the scale-down decision of plan/plan.c: which member goes
 * (eo_plan_scale_down_victim), whether removing a member is safe now
 * (eo_plan_removal_keeps_quorum), and the whole step through eo_plan_cluster(). Each table row
 * is a set of members: name, creationTimestamp, voter mark, pending, Pod state.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/names.h"
#include "desired/desired.h"
#include "plan/plan.h"

#define MAXM 8

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

enum pod { NO_POD, NOT_READY, READY };

struct m {
	const char *name;
	const char *created;
	bool voter;
	bool pending;
	enum pod pod;
	bool deleting;
};

#define A "2026-06-02T09:00:00Z"
#define B "2026-06-02T09:01:00Z"
#define C "2026-06-02T09:02:00Z"
#define D "2026-06-02T09:03:00Z"
#define E "2026-06-02T09:04:00Z"

#define V(n, t)                                                                                    \
	{                                                                                          \
		n, t, true, false, READY, false                                                    \
	} /* ready voter */
#define VNR(n, t)                                                                                  \
	{                                                                                          \
		n, t, true, false, NOT_READY, false                                                \
	} /* voter whose Pod is not ready */
#define VNP(n, t)                                                                                  \
	{                                                                                          \
		n, t, true, false, NO_POD, false                                                   \
	} /* voter without a Pod */
#define L(n, t)                                                                                    \
	{                                                                                          \
		n, t, false, false, READY, false                                                   \
	} /* learner (not marked a voter) */
#define P(n, t)                                                                                    \
	{                                                                                          \
		n, t, false, true, NO_POD, false                                                   \
	} /* pending: never joined */
#define DEL(n, t)                                                                                  \
	{                                                                                          \
		n, t, true, false, READY, true                                                     \
	} /* being deleted */

static json_t *member(const struct m *d)
{
	json_t *m = json_pack(
	    "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:[s], s:[{s:s, s:s, s:s, s:s, "
	    "s:b}]}, s:{s:s, s:s, s:b, s:s, s:s}, s:{s:b}}",
	    "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdMember", "metadata", "name", d->name,
	    "namespace", "default", "uid", d->name, "creationTimestamp", d->created, "finalizers",
	    EO_FINALIZER_MEMBER_CLEANUP, "ownerReferences", "apiVersion", EO_API_GROUP_VERSION,
	    "kind", "EtcdCluster", "name", "demo", "uid", "c-uid", "controller", 1, "spec",
	    "clusterName", "demo", "version", "3.6.11", "bootstrap", 0, "initialCluster",
	    d->pending ? "" : "x=y", "clusterToken", "tok", "status", "isVoter", d->voter);

	assert_non_null(m);
	if (d->deleting)
		json_object_set_new(json_object_get(m, "metadata"), "deletionTimestamp",
				    json_string("2026-06-02T10:00:00Z"));
	return m;
}

static json_t *pod(const struct m *d)
{
	bool ready = d->pod == READY;

	if (d->pod == NO_POD)
		return NULL;
	return json_pack("{s:{s:s, s:s, s:s, s:s}, s:{s:s, s:[{s:s, s:s}]}}", "metadata", "name",
			 d->name, "namespace", "default", "uid", "pod-uid", "creationTimestamp",
			 d->created, "status", "phase", ready ? "Running" : "Pending", "conditions",
			 "type", "Ready", "status", ready ? "True" : "False");
}

struct set {
	struct eo_plan_member pm[MAXM];
	size_t n;
};

static void set_init(struct set *s, const struct m *ms)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < MAXM && ms[i].name != NULL; i++) {
		s->pm[i].member = member(&ms[i]);
		s->pm[i].pod = pod(&ms[i]);
		s->n++;
	}
}

static void set_free(struct set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		json_decref((json_t *)s->pm[i].member);
		json_decref((json_t *)s->pm[i].pod);
	}
}

static const char *name_of(const json_t *member)
{
	return json_string_value(json_object_get(json_object_get(member, "metadata"), "name"));
}

/* Which member goes, and whether removing it is safe now. */
static void test_victim_table(void **state)
{
	static const struct {
		const char *what;
		struct m members[MAXM];
		const char *victim; /* NULL: none */
		bool safe;
	} rows[] = {
	    {"all ready: the newest",
	     {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	     "demo-c",
	     true},
	    {"same creation time: name descending",
	     {V("demo-b", A), V("demo-z", A), V("demo-m", A)},
	     "demo-z",
	     true},
	    {"the oldest voter is not ready: it goes, not a healthy one",
	     {VNR("demo-a", A), V("demo-b", B), V("demo-c", C)},
	     "demo-a",
	     true},
	    {"a voter without Pod goes first",
	     {V("demo-a", A), VNP("demo-b", B), V("demo-c", C), V("demo-d", D)},
	     "demo-b",
	     true},
	    {"two not ready: the newer of them",
	     {VNR("demo-a", A), VNR("demo-b", B), V("demo-c", C), V("demo-d", D), V("demo-e", E)},
	     "demo-b",
	     true},
	    {"a learner before any voter",
	     {VNR("demo-a", A), L("demo-b", B), V("demo-c", C), V("demo-d", D)},
	     "demo-b",
	     true},
	    {"a member that never joined before a learner",
	     {V("demo-a", A), P("demo-b", B), L("demo-c", C)},
	     "demo-b",
	     true},
	    {"members being deleted are skipped",
	     {V("demo-a", A), V("demo-b", B), DEL("demo-c", C)},
	     "demo-b",
	     true},
	    /* 3 voters, one down: removing a healthy one would leave 1 of 2 ready. */
	    {"one down of 3: the down one goes (2 of 2 left)",
	     {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
	     "demo-b",
	     true},
	    /* 5 voters, two down: the down ones go first, one at a time. */
	    {"two down of 5: a down one goes (3 of 4 left)",
	     {V("demo-a", A), VNR("demo-b", B), V("demo-c", C), VNR("demo-d", D), V("demo-e", E)},
	     "demo-d",
	     true},
	    /* 2 voters, one down: the change cannot commit (1 of 2 is no quorum). */
	    {"one down of 2: not safe", {V("demo-a", A), VNR("demo-b", B)}, "demo-b", false},
	    /* 3 voters, two down: no quorum today, nothing can be removed. */
	    {"two down of 3: not safe",
	     {V("demo-a", A), VNR("demo-b", B), VNR("demo-c", C)},
	     "demo-c",
	     false},
	    /* A learner needs a quorum too: its removal is a membership change. */
	    {"a learner while the voters have no quorum: not safe",
	     {V("demo-a", A), VNR("demo-b", B), VNR("demo-c", C), L("demo-d", D)},
	     "demo-d",
	     false},
	    {"a learner with a healthy quorum", {V("demo-a", A), L("demo-b", B)}, "demo-b", true},
	    {"the last voter: never", {V("demo-a", A)}, "demo-a", false},
	    {"nobody left to remove", {DEL("demo-a", A)}, NULL, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct set s;
		const struct eo_plan_member *v = NULL;
		bool safe;

		set_init(&s, rows[i].members);
		v = eo_plan_scale_down_victim(s.pm, s.n);
		if (rows[i].victim == NULL) {
			if (v != NULL)
				fail_msg("%s: victim %s, want none", rows[i].what,
					 name_of(v->member));
			set_free(&s);
			continue;
		}
		if (v == NULL || strcmp(name_of(v->member), rows[i].victim) != 0)
			fail_msg("%s: victim %s, want %s", rows[i].what,
				 v ? name_of(v->member) : "(none)", rows[i].victim);
		safe = eo_plan_removal_keeps_quorum(s.pm, s.n, v, NULL, NULL);
		if (safe != rows[i].safe)
			fail_msg("%s: safe %d, want %d", rows[i].what, safe, rows[i].safe);
		set_free(&s);
	}
}

/* The counts the wait message tells about. */
static void test_quorum_counts(void **state)
{
	const struct m ms[] = {V("demo-a", A),	 VNR("demo-b", B), V("demo-c", C),
			       DEL("demo-d", D), L("demo-e", E),   {0}};
	struct set s;
	size_t ready = 99, voters = 99;

	(void)state;
	set_init(&s, ms);
	/* Without a ready voter: 1 of 2 ready (the deleting one and the learner do not count). */
	assert_false(eo_plan_removal_keeps_quorum(s.pm, s.n, &s.pm[0], &ready, &voters));
	assert_int_equal(ready, 1);
	assert_int_equal(voters, 2);
	/* Without the down voter: 2 of 2. */
	assert_true(eo_plan_removal_keeps_quorum(s.pm, s.n, &s.pm[1], &ready, &voters));
	assert_int_equal(ready, 2);
	assert_int_equal(voters, 2);
	/* Nobody removed: 2 of 3 ready is a quorum. */
	assert_true(eo_plan_removal_keeps_quorum(s.pm, s.n, NULL, &ready, &voters));
	assert_int_equal(voters, 3);
	set_free(&s);
}

/* The whole step through eo_plan_cluster(): remove the chosen member, or wait and say why. */
static void test_scale_down_plan(void **state)
{
	static const struct {
		const char *what;
		int target;
		struct m members[MAXM];
		enum eo_plan_action want;
		const char *member;  /* REMOVE_MEMBER: which */
		const char *message; /* part of the message */
	} rows[] = {
	    {"3->2, all ready: the newest",
	     2,
	     {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	     EO_PLAN_REMOVE_MEMBER,
	     "demo-c",
	     "scaling down from 3 to 2 member(s): removing member demo-c"},
	    {"3->2, oldest down: the down one",
	     2,
	     {VNR("demo-a", A), V("demo-b", B), V("demo-c", C)},
	     EO_PLAN_REMOVE_MEMBER,
	     "demo-a",
	     "removing member demo-a"},
	    {"2->1, one down: waits",
	     1,
	     {V("demo-a", A), VNR("demo-b", B)},
	     EO_PLAN_WAIT,
	     NULL,
	     "removing member demo-b needs a quorum of ready voters before and after (1 of 2 "
	     "voting member(s) ready now, 1 of 1 without it)"},
	    {"3->1, two down: waits",
	     1,
	     {V("demo-a", A), VNR("demo-b", B), VNR("demo-c", C)},
	     EO_PLAN_WAIT,
	     NULL,
	     "(1 of 3 voting member(s) ready now"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *cl = json_pack(
		    "{s:s, s:s, s:{s:s, s:s, s:s, s:i}, s:{s:i, s:s, s:{s:s, s:s}}, "
		    "s:{s:s, s:s, s:s, s:{s:i, s:s, s:{s:s, s:s}}}}",
		    "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdCluster", "metadata", "name",
		    "demo", "namespace", "default", "uid", "c-uid", "generation", 2, "spec",
		    "replicas", rows[i].target, "version", "3.6.11", "storage", "size", "1Gi",
		    "medium", "", "status", "clusterToken", "tok", "clusterID", "248adce0359142ba",
		    "progressDeadline", "2026-06-02T10:10:00Z", "observed", "replicas",
		    rows[i].target, "version", "3.6.11", "storage", "size", "1Gi", "medium", "");
		char peers[MAXM][EO_DESIRED_URL_MAX];
		char *pp[MAXM];
		struct eo_etcd_member ev[MAXM];
		struct eo_etcd_members list = {.v = ev, .cluster_id = 0x248adce0359142baULL};
		json_t *hs = eo_desired_headless_service(cl), *cs = eo_desired_client_service(cl);
		json_t *pdb = NULL;
		struct set s;
		struct eo_plan_result res;
		size_t voters = 0;

		set_init(&s, rows[i].members);
		for (size_t k = 0; k < s.n; k++) {
			eo_desired_member_peer_url(peers[k], sizeof(peers[k]), &OPTS,
						   rows[i].members[k].name, "demo", "default",
						   false);
			pp[k] = peers[k];
			ev[k] = (struct eo_etcd_member){.id = 0x100 + k,
							.name = (char *)rows[i].members[k].name,
							.peer_urls = &pp[k],
							.n_peer_urls = 1};
			voters += rows[i].members[k].voter;
		}
		list.n = s.n;
		pdb = eo_desired_pdb(cl, eo_desired_pdb_min_available((int)voters, rows[i].target));
		struct eo_plan_input in = {.cluster = cl,
					   .members = s.pm,
					   .n_members = s.n,
					   .headless_svc = hs,
					   .client_svc = cs,
					   .pdb = pdb,
					   .build = &OPTS,
					   .etcd_queried = true,
					   .etcd = &list,
					   .now = 1780394400};

		assert_int_equal(eo_plan_cluster(&in, &res), 0);
		if (res.action != rows[i].want)
			fail_msg("%s: action %s, want %s (%s)", rows[i].what,
				 eo_plan_action_name(res.action), eo_plan_action_name(rows[i].want),
				 res.message);
		if (rows[i].member != NULL &&
		    (res.member == NULL || strcmp(name_of(res.member), rows[i].member) != 0))
			fail_msg("%s: member %s, want %s", rows[i].what,
				 res.member ? name_of(res.member) : "(none)", rows[i].member);
		if (strstr(res.message, rows[i].message) == NULL)
			fail_msg("%s: message '%s' lacks '%s'", rows[i].what, res.message,
				 rows[i].message);
		eo_plan_result_clear(&res);
		set_free(&s);
		json_decref(pdb);
		json_decref(hs);
		json_decref(cs);
		json_decref(cl);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_victim_table),
	    cmocka_unit_test(test_quorum_counts),
	    cmocka_unit_test(test_scale_down_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
