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
#include "support/planworld_scale.h"
#include "support/planworld_scale_down.h"
#include "support/planworld_scale_rows.h"
#include "support/planworld_step.h"
#include "support/tu_main.h"

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

static const char *name_of(const json_t *member)
{
	return json_string_value(json_object_get(json_object_get(member, "metadata"), "name"));
}

/* Which member goes, and whether removing it is safe now. */
static void test_victim_table(void **state)
{
	static const struct {
		const char *what;
		struct pwd_m members[PWD_MAXM];
		const char *victim; /* NULL: none */
		bool safe;
	} rows[] = {
	    {"all ready: the newest",
	     {PWD_V("demo-a", A), PWD_V("demo-b", B), PWD_V("demo-c", C)},
	     "demo-c",
	     true},
	    {"same creation time: name descending",
	     {PWD_V("demo-b", A), PWD_V("demo-z", A), PWD_V("demo-m", A)},
	     "demo-z",
	     true},
	    {"the oldest voter is not ready: it goes, not a healthy one",
	     {PWD_VNR("demo-a", A), PWD_V("demo-b", B), PWD_V("demo-c", C)},
	     "demo-a",
	     true},
	    {"a voter without Pod goes first",
	     {PWD_V("demo-a", A), PWD_VNP("demo-b", B), PWD_V("demo-c", C), PWD_V("demo-d", D)},
	     "demo-b",
	     true},
	    {"two not ready: the newer of them",
	     {PWD_VNR("demo-a", A), PWD_VNR("demo-b", B), PWD_V("demo-c", C), PWD_V("demo-d", D),
	      PWD_V("demo-e", E)},
	     "demo-b",
	     true},
	    {"a learner before any voter",
	     {PWD_VNR("demo-a", A), PWD_L("demo-b", B), PWD_V("demo-c", C), PWD_V("demo-d", D)},
	     "demo-b",
	     true},
	    {"a member that never joined before a learner",
	     {PWD_V("demo-a", A), PWD_P("demo-b", B), PWD_L("demo-c", C)},
	     "demo-b",
	     true},
	    {"members being deleted are skipped",
	     {PWD_V("demo-a", A), PWD_V("demo-b", B), PWD_DEL("demo-c", C)},
	     "demo-b",
	     true},
	    /* 3 voters, one down: removing a healthy one would leave 1 of 2 ready. */
	    {"one down of 3: the down one goes (2 of 2 left)",
	     {PWD_V("demo-a", A), PWD_VNR("demo-b", B), PWD_V("demo-c", C)},
	     "demo-b",
	     true},
	    /* 5 voters, two down: the down ones go first, one at a time. */
	    {"two down of 5: a down one goes (3 of 4 left)",
	     {PWD_V("demo-a", A), PWD_VNR("demo-b", B), PWD_V("demo-c", C), PWD_VNR("demo-d", D),
	      PWD_V("demo-e", E)},
	     "demo-d",
	     true},
	    /* 2 voters, one down: the change cannot commit (1 of 2 is no quorum). */
	    {"one down of 2: not safe",
	     {PWD_V("demo-a", A), PWD_VNR("demo-b", B)},
	     "demo-b",
	     false},
	    /* 3 voters, two down: no quorum today, nothing can be removed. */
	    {"two down of 3: not safe",
	     {PWD_V("demo-a", A), PWD_VNR("demo-b", B), PWD_VNR("demo-c", C)},
	     "demo-c",
	     false},
	    /* A learner needs a quorum too: its removal is a membership change. */
	    {"a learner while the voters have no quorum: not safe",
	     {PWD_V("demo-a", A), PWD_VNR("demo-b", B), PWD_VNR("demo-c", C), PWD_L("demo-d", D)},
	     "demo-d",
	     false},
	    {"a learner with a healthy quorum",
	     {PWD_V("demo-a", A), PWD_L("demo-b", B)},
	     "demo-b",
	     true},
	    {"the last voter: never", {PWD_V("demo-a", A)}, "demo-a", false},
	    {"nobody left to remove", {PWD_DEL("demo-a", A)}, NULL, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pwd_set s;
		const struct eo_plan_member *v = NULL;
		bool safe;

		pwd_set_init(&s, rows[i].members);
		v = eo_plan_scale_down_victim(s.pm, s.n);
		if (rows[i].victim == NULL) {
			if (v != NULL)
				fail_msg("%s: victim %s, want none", rows[i].what,
					 name_of(v->member));
			pwd_set_free(&s);
			continue;
		}
		if (v == NULL || strcmp(name_of(v->member), rows[i].victim) != 0)
			fail_msg("%s: victim %s, want %s", rows[i].what,
				 v ? name_of(v->member) : "(none)", rows[i].victim);
		safe = eo_plan_removal_keeps_quorum(s.pm, s.n, v, NULL, NULL);
		if (safe != rows[i].safe)
			fail_msg("%s: safe %d, want %d", rows[i].what, safe, rows[i].safe);
		pwd_set_free(&s);
	}
}

/* The whole step through eo_plan_cluster(): remove the chosen member, or wait and say why. */
static void test_scale_down_plan(void **state)
{
	static const struct {
		const char *what;
		int target;
		struct pwd_m members[PWD_MAXM];
		enum eo_plan_action want;
		const char *member;  /* REMOVE_MEMBER: which */
		const char *message; /* part of the message */
	} rows[] = {
	    {"3->2, all ready: the newest",
	     2,
	     {PWD_V("demo-a", A), PWD_V("demo-b", B), PWD_V("demo-c", C)},
	     EO_PLAN_REMOVE_MEMBER,
	     "demo-c",
	     "scaling down from 3 to 2 member(s): removing member demo-c"},
	    {"3->2, oldest down: the down one",
	     2,
	     {PWD_VNR("demo-a", A), PWD_V("demo-b", B), PWD_V("demo-c", C)},
	     EO_PLAN_REMOVE_MEMBER,
	     "demo-a",
	     "removing member demo-a"},
	    {"2->1, one down: waits",
	     1,
	     {PWD_V("demo-a", A), PWD_VNR("demo-b", B)},
	     EO_PLAN_WAIT,
	     NULL,
	     "removing member demo-b needs a quorum of ready voters before and after (1 of 2 "
	     "voting member(s) ready now, 1 of 1 without it)"},
	    {"3->1, two down: waits",
	     1,
	     {PWD_V("demo-a", A), PWD_VNR("demo-b", B), PWD_VNR("demo-c", C)},
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
		char peers[PWD_MAXM][EO_DESIRED_URL_MAX];
		char *pp[PWD_MAXM];
		struct eo_etcd_member ev[PWD_MAXM];
		struct eo_etcd_members list = {.v = ev, .cluster_id = 0x248adce0359142baULL};
		json_t *hs = eo_desired_headless_service(cl), *cs = eo_desired_client_service(cl);
		json_t *pdb = NULL;
		struct pwd_set s;
		struct eo_plan_result res;
		size_t voters = 0;

		pwd_set_init(&s, rows[i].members);
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
		pwd_set_free(&s);
		json_decref(pdb);
		json_decref(hs);
		json_decref(cs);
		json_decref(cl);
	}
}

struct scale_down_row {
	struct pws_row w; /* w.what names the row */
	int32_t desired;
	bool held;
	bool decided;
	enum eo_plan_action action;
	const char *member;
	const char *message;
};

static bool scale_down(struct eo__plan_ctx *x, struct eo__plan_counts *c, const void *row)
{
	const struct scale_down_row *r = row;

	x->held = r->held;
	return eo__plan_step_scale_down(x, c, r->desired);
}

/*
 * The step itself (eo__plan_step_scale_down), called directly on a running cluster
 * (support/planworld_scale.h): nothing to do at or below the target or while held past the
 * deadline; else the victim of eo_plan_scale_down_victim goes when the quorum allows, or the
 * pass waits and says why.
 */
static void test_scale_down_step(void **state)
{
	static const struct scale_down_row rows[] = {
	    {{"at the target: nothing",
	      3,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      0,
	      NULL,
	      0},
	     3,
	     false,
	     false,
	     EO_PLAN_NONE,
	     NULL,
	     NULL},
	    {{"3->2, all ready: the newest goes",
	      2,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      0,
	      NULL,
	      0},
	     2,
	     false,
	     true,
	     EO_PLAN_REMOVE_MEMBER,
	     "demo-c",
	     "scaling down from 3 to 2 member(s): removing member demo-c"},
	    {{"3->2, a voter down: the down one goes",
	      2,
	      {V("demo-a", A), VNR("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      0,
	      NULL,
	      0},
	     2,
	     false,
	     true,
	     EO_PLAN_REMOVE_MEMBER,
	     "demo-b",
	     "removing member demo-b"},
	    {{"3->2, a learner before a voter",
	      2,
	      {V("demo-a", A), L("demo-b", B, 2), V("demo-c", C)},
	      {EV("demo-a"), EL("demo-b", 0x200), EV("demo-c")},
	      0,
	      NULL,
	      0},
	     2,
	     false,
	     true,
	     EO_PLAN_REMOVE_MEMBER,
	     "demo-b",
	     "removing member demo-b"},
	    {{"3->2, a member that never joined first",
	      2,
	      {V("demo-a", A), V("demo-b", B), P("demo-c", C)},
	      {EV("demo-a"), EV("demo-b")},
	      0,
	      NULL,
	      0},
	     2,
	     false,
	     true,
	     EO_PLAN_REMOVE_MEMBER,
	     "demo-c",
	     "removing member demo-c"},
	    {{"2->1, one down: waits for a quorum",
	      1,
	      {V("demo-a", A), VNR("demo-b", B)},
	      {EV("demo-a"), EV("demo-b")},
	      0,
	      NULL,
	      0},
	     1,
	     false,
	     true,
	     EO_PLAN_WAIT,
	     NULL,
	     "needs a quorum of ready voters"},
	    {{"held past the deadline: no scale-down",
	      2,
	      {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
	      {EV("demo-a"), EV("demo-b"), EV("demo-c")},
	      0,
	      NULL,
	      0},
	     2,
	     true,
	     false,
	     EO_PLAN_NONE,
	     NULL,
	     NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		pwst_run(&rows[i].w, NULL, scale_down, &rows[i],
			 (struct pwst_want){rows[i].decided, rows[i].action, rows[i].member, 0,
					    rows[i].message});
}

TU_MAIN(test_victim_table, test_scale_down_plan, test_scale_down_step)
