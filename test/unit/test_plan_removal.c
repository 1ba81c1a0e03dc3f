/*
 * Unit tests for plan/removal.c: the member finalizer's decision. A table over the member
 * being deleted (ran or never joined, force annotation), its cluster (present, gone, being
 * deleted), the other members (voters or not, Pod running or not) and etcd's answer: drop the
 * finalizer, list etcd's members, MemberRemove through which endpoints, or keep the finalizer
 * and say why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <string.h>

#include "api/conditions.h"
#include "api/names.h"
#include "plan/removal.h"

#define T0 1780394400

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

enum cl { CL_OK, CL_GONE, CL_DELETING };
enum who { RAN, NEVER_JOINED, FORCED };
/*
 * etcd's answer: not asked, an error, a list naming the member, a list without it (the leader's
 * own; read through another member and not confirmed yet; the leader could not confirm it),
 * a list (naming it or not) from another etcd cluster.
 */
enum et {
	NOT_ASKED,
	ERR,
	LISTED,
	NOT_LISTED,
	NOT_LISTED_UNCHECKED,
	NOT_LISTED_UNVERIFIED,
	FOREIGN,
	FOREIGN_NOT_LISTED
};

static bool not_listed(enum et e)
{
	return e == NOT_LISTED || e == NOT_LISTED_UNCHECKED || e == NOT_LISTED_UNVERIFIED ||
	       e == FOREIGN_NOT_LISTED;
}

/* The reason of Ready=False while the finalizer stays. */
static const char *blocked_reason(enum et e)
{
	if (e == FOREIGN || e == FOREIGN_NOT_LISTED)
		return EO_PLAN_REASON_CLUSTER_ID_MISMATCH;
	if (e == NOT_LISTED_UNVERIFIED)
		return EO_PLAN_REASON_LIST_UNVERIFIED;
	return EO_PLAN_REASON_REMOVAL_BLOCKED;
}

/* The other members: name, voter, Pod (0 none, 1 running, 2 ended), Pod creation time. */
struct o {
	const char *name;
	bool voter;
	int pod;
	const char *pod_created;
};

static json_t *member(const char *name, bool voter, bool ran, bool deleting)
{
	json_t *m = json_pack("{s:{s:s, s:s, s:s, s:i}, s:{s:s}, s:{s:b}}", "metadata", "name",
			      name, "namespace", "default", "uid", name, "generation", 1, "spec",
			      "clusterName", "demo", "status", "isVoter", voter);

	if (ran)
		json_object_set_new(json_object_get(m, "status"), "memberID",
				    json_string("8e9e05c52164694d"));
	if (deleting)
		json_object_set_new(json_object_get(m, "metadata"), "deletionTimestamp",
				    json_string("2026-06-02T10:00:00Z"));
	return m;
}

static json_t *pod(const struct o *d)
{
	return json_pack("{s:{s:s, s:s}, s:{s:s}}", "metadata", "name", d->name,
			 "creationTimestamp",
			 d->pod_created ? d->pod_created : "2026-06-02T09:00:00Z", "status",
			 "phase", d->pod == 1 ? "Running" : "Failed");
}

static void test_removal_table(void **state)
{
	static const struct {
		const char *what;
		enum cl cl;
		enum who who;
		struct o others[4];
		enum et etcd;
		enum eo_rplan_action want;
		const char *endpoints; /* member names in order, "," separated; NULL: none */
	} rows[] = {
	    {"cluster gone", CL_GONE, RAN, {{NULL}}, NOT_ASKED, EO_RPLAN_DROP_FINALIZER, NULL},
	    {"cluster being deleted",
	     CL_DELETING,
	     RAN,
	     {{"demo-b", true, 1, NULL}},
	     NOT_ASKED,
	     EO_RPLAN_DROP_FINALIZER,
	     NULL},
	    {"force annotation",
	     CL_OK,
	     FORCED,
	     {{"demo-b", true, 1, NULL}},
	     NOT_ASKED,
	     EO_RPLAN_DROP_FINALIZER,
	     NULL},
	    {"no other member, it ran: the finalizer stays",
	     CL_OK,
	     RAN,
	     {{NULL}},
	     NOT_ASKED,
	     EO_RPLAN_WAIT,
	     NULL},
	    {"others without Pods (restarting, evicted): the finalizer stays",
	     CL_OK,
	     RAN,
	     {{"demo-b", true, 0, NULL}, {"demo-c", true, 0, NULL}},
	     NOT_ASKED,
	     EO_RPLAN_WAIT,
	     NULL},
	    {"others whose Pods ended: the finalizer stays",
	     CL_OK,
	     RAN,
	     {{"demo-b", true, 2, NULL}},
	     NOT_ASKED,
	     EO_RPLAN_WAIT,
	     NULL},
	    {"no other member, never joined: nothing in etcd to keep",
	     CL_OK,
	     NEVER_JOINED,
	     {{NULL}},
	     NOT_ASKED,
	     EO_RPLAN_DROP_FINALIZER,
	     NULL},
	    {"others running: list etcd's members through the voters, oldest Pod first",
	     CL_OK,
	     RAN,
	     {{"demo-b", true, 1, "2026-06-02T09:05:00Z"},
	      {"demo-c", false, 1, "2026-06-02T09:00:00Z"},
	      {"demo-d", true, 1, "2026-06-02T09:01:00Z"}},
	     NOT_ASKED,
	     EO_RPLAN_QUERY_MEMBERS,
	     "demo-d,demo-b"},
	    {"no voter marked: any running member",
	     CL_OK,
	     RAN,
	     {{"demo-b", false, 1, NULL}},
	     NOT_ASKED,
	     EO_RPLAN_QUERY_MEMBERS,
	     "demo-b"},
	    {"never joined but others running: etcd is asked first",
	     CL_OK,
	     NEVER_JOINED,
	     {{"demo-b", true, 1, NULL}},
	     NOT_ASKED,
	     EO_RPLAN_QUERY_MEMBERS,
	     "demo-b"},
	    {"etcd cannot be listed: the finalizer stays",
	     CL_OK,
	     RAN,
	     {{"demo-b", true, 1, NULL}},
	     ERR,
	     EO_RPLAN_WAIT,
	     "demo-b"},
	    {"etcd lists it: MemberRemove through the others",
	     CL_OK,
	     RAN,
	     {{"demo-b", true, 1, NULL}},
	     LISTED,
	     EO_RPLAN_MEMBER_REMOVE,
	     "demo-b"},
	    {"etcd's leader does not list it: drop",
	     CL_OK,
	     RAN,
	     {{"demo-b", true, 1, NULL}},
	     NOT_LISTED,
	     EO_RPLAN_DROP_FINALIZER,
	     NULL},
	    {"a list without it, not confirmed by the leader yet: ask the leader",
	     CL_OK,
	     RAN,
	     {{"demo-b", true, 1, NULL}},
	     NOT_LISTED_UNCHECKED,
	     EO_RPLAN_QUERY_MEMBERS,
	     "demo-b"},
	    {"a stale list without it that the leader could not confirm: the finalizer stays",
	     CL_OK,
	     RAN,
	     {{"demo-b", true, 1, NULL}},
	     NOT_LISTED_UNVERIFIED,
	     EO_RPLAN_WAIT,
	     NULL},
	    {"another cluster's list without it: the finalizer stays",
	     CL_OK,
	     RAN,
	     {{"demo-b", true, 1, NULL}},
	     FOREIGN_NOT_LISTED,
	     EO_RPLAN_WAIT,
	     NULL},
	    {"another cluster's list naming it: no MemberRemove there",
	     CL_OK,
	     RAN,
	     {{"demo-b", true, 1, NULL}},
	     FOREIGN,
	     EO_RPLAN_WAIT,
	     NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *self = member("demo-a", rows[i].who != NEVER_JOINED,
				      rows[i].who != NEVER_JOINED, true);
		json_t *cl =
		    json_pack("{s:{s:s, s:s, s:s}, s:{s:s}}", "metadata", "name", "demo",
			      "namespace", "default", "uid", "c-uid", "status", "clusterID", "1");
		struct eo_plan_member pm[5] = {{.member = self}};
		enum et et = rows[i].etcd;
		size_t n = 1;
		char peer[EO_DESIRED_URL_MAX], *pp = peer;
		struct eo_etcd_member em = {
		    .id = 0xa1, .name = (char *)"demo-a", .peer_urls = &pp, .n_peer_urls = 1};
		struct eo_etcd_members list = {
		    .v = &em,
		    .n = 1,
		    .cluster_id = et == FOREIGN || et == FOREIGN_NOT_LISTED ? 2 : 1};
		struct eo_rplan_result r;

		if (rows[i].who == FORCED)
			json_object_set_new(
			    json_object_get(self, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_FORCE_FINALIZE, "true"));
		if (rows[i].cl == CL_DELETING)
			json_object_set_new(json_object_get(cl, "metadata"), "deletionTimestamp",
					    json_string("2026-06-02T10:00:00Z"));
		for (size_t k = 0; k < 4 && rows[i].others[k].name != NULL; k++, n++) {
			pm[n].member =
			    member(rows[i].others[k].name, rows[i].others[k].voter, true, false);
			pm[n].pod = rows[i].others[k].pod ? pod(&rows[i].others[k]) : NULL;
		}
		if (not_listed(et))
			em.name = (char *)"demo-z";
		eo_desired_member_peer_url(peer, sizeof(peer), &OPTS,
					   not_listed(et) ? "demo-z" : "demo-a", "demo", "default",
					   false);
		struct eo_rplan_input in = {
		    .member = self,
		    .cluster = rows[i].cl == CL_GONE ? NULL : cl,
		    .members = pm,
		    .n_members = n,
		    .build = &OPTS,
		    .etcd_queried = rows[i].etcd != NOT_ASKED,
		    .etcd_err = rows[i].etcd == ERR ? EO_ETCD_UNAVAILABLE : EO_ETCD_OK,
		    .etcd = rows[i].etcd == ERR ? NULL : &list,
		    /* the leader's own list, unless the row says otherwise */
		    .etcd_leader_checked = et != NOT_LISTED_UNCHECKED,
		    .etcd_from_leader = et != NOT_LISTED_UNCHECKED && et != NOT_LISTED_UNVERIFIED,
		    .etcd_leader_why = "the member at x knows no leader",
		    .now = T0};

		assert_int_equal(eo_plan_member_removal(&in, &r), 0);
		if (r.action != rows[i].want)
			fail_msg("%s: action %s, want %s (%s)", rows[i].what,
				 eo_rplan_action_name(r.action), eo_rplan_action_name(rows[i].want),
				 r.message);
		if (rows[i].endpoints != NULL) {
			char got[512] = "";

			for (size_t k = 0; k < r.n_endpoints; k++) {
				const char *h = strstr(r.endpoints[k], "//");

				snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%.6s",
					 k ? "," : "", h ? h + 2 : r.endpoints[k]);
			}
			if (strcmp(got, rows[i].endpoints) != 0)
				fail_msg("%s: endpoints %s, want %s", rows[i].what, got,
					 rows[i].endpoints);
		}
		for (size_t k = 0; k < r.n_endpoints; k++)
			if (strstr(r.endpoints[k], "demo-a.") != NULL)
				fail_msg("%s: removal through the member itself", rows[i].what);
		if (r.action == EO_RPLAN_MEMBER_REMOVE)
			assert_int_equal(r.etcd_id, 0xa1);
		if (r.want_leader != (et == NOT_LISTED_UNCHECKED))
			fail_msg("%s: want_leader %d", rows[i].what, r.want_leader);
		if (r.action == EO_RPLAN_WAIT) {
			/* The finalizer stays, and the member's status and an Event say why. */
			assert_non_null(r.status);
			assert_true(r.status_changed);
			assert_true(eo_condition_matches(r.status, EO_COND_READY, "False",
							 blocked_reason(et)));
			assert_string_equal(r.event_type, "Warning");
			assert_string_equal(r.event_reason, blocked_reason(et));
			if (et == NOT_LISTED_UNVERIFIED)
				assert_non_null(strstr(r.message, "knows no leader"));
			if (et == FOREIGN || et == FOREIGN_NOT_LISTED)
				assert_non_null(strstr(r.message, "etcd cluster 2, not"));
			assert_true(r.requeue_ms > 0);
			assert_non_null(strstr(r.message, "finalizer stays"));
		} else {
			assert_null(r.status);
		}
		eo_plan_removal_clear(&r);
		for (size_t k = 0; k < n; k++) {
			json_decref((json_t *)pm[k].member);
			json_decref((json_t *)pm[k].pod);
		}
		json_decref(cl);
	}
}

/* The message of a blocked removal names the way out; a second pass changes nothing. */
static void test_blocked_is_stable(void **state)
{
	json_t *self = member("demo-a", true, true, true);
	json_t *cl = json_pack("{s:{s:s, s:s, s:s}}", "metadata", "name", "demo", "namespace",
			       "default", "uid", "c-uid");
	struct eo_plan_member pm[1] = {{.member = self}};
	struct eo_rplan_input in = {.member = self,
				    .cluster = cl,
				    .members = pm,
				    .n_members = 1,
				    .build = &OPTS,
				    .now = T0};
	struct eo_rplan_result r, again;

	(void)state;
	assert_int_equal(eo_plan_member_removal(&in, &r), 0);
	assert_int_equal(r.action, EO_RPLAN_WAIT);
	assert_non_null(strstr(r.message, EO_ANNOTATION_FORCE_FINALIZE));
	assert_non_null(strstr(r.message, "no other member of cluster demo"));
	json_object_set(self, "status", r.status);
	in.now = T0 + 60;
	assert_int_equal(eo_plan_member_removal(&in, &again), 0);
	assert_int_equal(again.action, EO_RPLAN_WAIT);
	assert_false(again.status_changed);
	/* The annotation must say "true": anything else keeps the finalizer. */
	json_object_set_new(json_object_get(self, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_FORCE_FINALIZE, "yes"));
	eo_plan_removal_clear(&again);
	assert_int_equal(eo_plan_member_removal(&in, &again), 0);
	assert_int_equal(again.action, EO_RPLAN_WAIT);
	assert_string_equal(eo_rplan_action_name(EO_RPLAN_MEMBER_REMOVE), "member-remove");
	eo_plan_removal_clear(&again);
	eo_plan_removal_clear(&r);
	json_decref(self);
	json_decref(cl);
}

TU_MAIN(test_removal_table, test_blocked_is_stable)
