/*
 * The EtcdDefrag reconciler and the NOSPACE recovery (controller/defrag.c) on the act-layer
 * rig (support/rig.h: the fake apiserver, merge patches of the status applied with a
 * resourceVersion precondition, and the fake etcd gateway): which etcd calls are made, to
 * which member, in which order, and what status is written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/names.h"
#include "controller/controller.h"
#include "desired/desired.h"
#include "support/rig.h"
#include "support/testutil.h"
#include "support/tu_main.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

/* A settled cluster of three: demo-b (first in etcd's list: the fake's leader), demo-a,
 * demo-c. */
static void world(struct rig *r)
{
	static const char *names[] = {"demo-b", "demo-a", "demo-c"};

	rig_put(
	    r, RIG_CLUSTERS,
	    tu_jsonq("{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdCluster',"
		     "'metadata':{'name':'demo','namespace':'default','uid':'c-uid','generation':1,"
		     "'resourceVersion':'10'},'spec':{'replicas':3},'status':{'clusterID':'"
		     "248adce0359142ba',"
		     "'conditions':" RIG_SETTLED "}}"));
	for (int i = 0; i < 3; i++) {
		char buf[1024], peer[EO_DESIRED_URL_MAX];

		snprintf(buf, sizeof(buf),
			 "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdMember',"
			 "'metadata':{'name':'%s','namespace':'default','uid':'uid-%s',"
			 "'resourceVersion':'20','labels':{'" EO_LABEL_CLUSTER "':'demo'},"
			 "'ownerReferences':[{'apiVersion':'etcd-operator.cozystack.io/v1alpha2',"
			 "'kind':'EtcdCluster','name':'demo','uid':'c-uid','controller':true}]},"
			 "'spec':{'clusterName':'demo'},'status':{'isVoter':true}}",
			 names[i], names[i]);
		rig_put(r, RIG_MEMBERS, tu_jsonq(buf));
		assert_int_equal(eo_desired_member_peer_url(peer, sizeof(peer), &OPTS, names[i],
							    "demo", "default", false),
				 0);
		eo_fake_etcd_set_member(r->etcd, 0xb0 + (uint64_t)i, names[i], peer, false);
	}
}

static void defrag_object(struct rig *r, const char *rule)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdDefrag',"
		 "'metadata':{'name':'run','namespace':'default','uid':'d-uid','generation':1,"
		 "'resourceVersion':'30','creationTimestamp':'2026-06-02T09:59:00Z'},"
		 "'spec':{'clusterRef':{'name':'demo'}%s%s}}",
		 rule ? ",'rule':" : "", rule ? rule : "");
	rig_put(r, RIG_DEFRAGS, tu_jsonq(buf));
}

/* The member names the requests for call were addressed to, in order, "a,b". */
static void hosts_of(struct rig *r, const char *call, char *out, size_t cap)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < eo_fake_etcd_requests(r->etcd); i++) {
		struct eo_fake_etcd_request q;
		char name[EO_FAKE_ETCD_STR];

		assert_true(eo_fake_etcd_request(r->etcd, i, &q));
		if (strcmp(q.call, call) != 0)
			continue;
		snprintf(name, sizeof(name), "%s", q.host);
		*strchrnul(name, '.') = '\0';
		used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? "," : "", name);
	}
}

static const char *member_outcome(const json_t *d, const char *name)
{
	const json_t *m;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(d, "status"), "members"), i, m)
	{
		if (strcmp(json_string_value(json_object_get(m, "name")), name) == 0)
			return json_string_value(json_object_get(m, "outcome"));
	}
	return NULL;
}

/* rule.all: one Defragment per pass, followers by name, then the leader; Complete. */
static void test_defrag_runs_followers_then_leader(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	char hosts[256];
	json_t *d;

	(void)state;
	rig_start(&r, T0);
	world(&r);
	defrag_object(&r, "{'all':true}");
	for (int i = 0; i < 3; i++)
		eo_fake_etcd_script(r.etcd, "maintenance/defragment", 200, "{\"header\":{}}");
	for (int pass = 0; pass < 6; pass++) {
		eo_defrag_reconcile(&r.ctl, "default", "run", &out);
		assert_false(out.error);
		rig_sync_defrag(&r);
	}
	hosts_of(&r, "maintenance/defragment", hosts, sizeof(hosts));
	assert_string_equal(hosts, "demo-a,demo-c,demo-b");
	/* The leader demo-b handed its leadership to demo-a (0xb1) before its own turn. */
	hosts_of(&r, "maintenance/transfer-leadership", hosts, sizeof(hosts));
	assert_string_equal(hosts, "demo-b");
	{
		struct eo_fake_etcd_request q;
		size_t mv = eo_fake_etcd_first(r.etcd, "maintenance/transfer-leadership");

		assert_true(eo_fake_etcd_request(r.etcd, mv, &q));
		assert_non_null(strstr(q.body, "\"177\""));
		for (size_t i = mv + 1; i < eo_fake_etcd_requests(r.etcd); i++) {
			assert_true(eo_fake_etcd_request(r.etcd, i, &q));
			if (strcmp(q.call, "maintenance/defragment") == 0) {
				assert_non_null(strstr(q.host, "demo-b"));
				break;
			}
		}
	}
	d = rig_stored(&r, RIG_DEFRAGS, "run");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(d, "status"), "phase")), "Complete");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(d, "status"), "defragmented")), 3);
	assert_string_equal(member_outcome(d, "demo-b"), "Defragmented");
	/* demo-b's turn came as the leader: recorded so, with the move, though it was a
	 * follower when defragmented */
	{
		const json_t *m;
		size_t i;

		json_array_foreach(json_object_get(json_object_get(d, "status"), "members"), i, m)
		{
			if (strcmp(json_string_value(json_object_get(m, "name")), "demo-b") != 0)
				continue;
			assert_string_equal(json_string_value(json_object_get(m, "role")),
					    "Leader");
			assert_int_equal(json_integer_value(json_object_get(m, "leaderMoves")), 1);
		}
	}
	assert_string_equal(eo_condition_reason(json_object_get(d, "status"), EO_COND_READY),
			    "Defragmented");
	json_decref(d);
	/* Final: a further pass calls nothing. */
	eo_defrag_reconcile(&r.ctl, "default", "run", &out);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "maintenance/defragment"), 3);
	rig_stop(&r);
}

/* A refused MoveLeader: LeaderMoveFailed with a Warning Event, and the leader is not
 * defragmented in that pass. */
static void test_defrag_leader_move_refused(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *d;

	(void)state;
	rig_start(&r, T0);
	world(&r);
	defrag_object(&r, "{'all':true}");
	for (int i = 0; i < 2; i++)
		eo_fake_etcd_script(r.etcd, "maintenance/defragment", 200, "{\"header\":{}}");
	eo_fake_etcd_script(r.etcd, "maintenance/transfer-leadership", 500,
			    "{\"code\":14,\"message\":\"etcdserver: request timed out, leader "
			    "transfer took too long\"}");
	for (int pass = 0; pass < 5; pass++) {
		eo_defrag_reconcile(&r.ctl, "default", "run", &out);
		assert_false(out.error);
		rig_sync_defrag(&r);
		if (eo_fake_etcd_count(r.etcd, "maintenance/transfer-leadership") > 0)
			break;
	}
	assert_int_equal(eo_fake_etcd_count(r.etcd, "maintenance/transfer-leadership"), 1);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "maintenance/defragment"), 2);
	d = rig_stored(&r, RIG_DEFRAGS, "run");
	assert_string_equal(eo_condition_reason(json_object_get(d, "status"), EO_COND_READY),
			    "LeaderMoveFailed");
	assert_null(member_outcome(d, "demo-b"));
	json_decref(d);
	rig_stop(&r);
}

/* The default rule on the fake's tidy members (DbSize == DbSizeInUse): nothing is called. */
static void test_defrag_skips_without_a_call(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *d;

	(void)state;
	rig_start(&r, T0);
	world(&r);
	defrag_object(&r, NULL);
	eo_defrag_reconcile(&r.ctl, "default", "run", &out);
	assert_false(out.error);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "maintenance/defragment"), 0);
	d = rig_stored(&r, RIG_DEFRAGS, "run");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(d, "status"), "phase")), "Complete");
	assert_string_equal(member_outcome(d, "demo-a"), "Skipped");
	assert_string_equal(member_outcome(d, "demo-b"), "Skipped");
	json_decref(d);
	rig_stop(&r);
}

/* A member down: Pending/ClusterUnhealthy and no Defragment anywhere. */
static void test_defrag_waits_for_health(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	char host[256];
	json_t *d;

	(void)state;
	rig_start(&r, T0);
	world(&r);
	defrag_object(&r, "{'all':true}");
	assert_int_equal(
	    eo_desired_member_fqdn(host, sizeof(host), &OPTS, "demo-c", "demo", "default"), 0);
	eo_fake_etcd_set_down(r.etcd, host, true);
	eo_defrag_reconcile(&r.ctl, "default", "run", &out);
	assert_false(out.error);
	assert_true(out.requeue_ms > 0);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "maintenance/defragment"), 0);
	d = rig_stored(&r, RIG_DEFRAGS, "run");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(d, "status"), "phase")), "Pending");
	assert_string_equal(eo_condition_reason(json_object_get(d, "status"), EO_COND_READY),
			    "ClusterUnhealthy");
	json_decref(d);
	rig_stop(&r);
}

/* A refused Defragment is a failed attempt with a Warning Event; the run goes on later. */
static void test_defrag_failure_recorded(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *d;

	(void)state;
	rig_start(&r, T0);
	world(&r);
	defrag_object(&r, "{'all':true}");
	eo_fake_etcd_script(r.etcd, "maintenance/defragment", 500,
			    "{\"code\":13,\"message\":\"disk on fire\"}");
	eo_defrag_reconcile(&r.ctl, "default", "run", &out);
	assert_false(out.error);
	d = rig_stored(&r, RIG_DEFRAGS, "run");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(d, "status"), "phase")), "Running");
	assert_string_equal(eo_condition_reason(json_object_get(d, "status"), EO_COND_READY),
			    "DefragFailed");
	assert_null(member_outcome(d, "demo-a"));
	assert_non_null(
	    strstr(json_string_value(json_object_get(
		       json_array_get(json_object_get(json_object_get(d, "status"), "members"), 0),
		       "message")),
		   "disk on fire"));
	json_decref(d);
	rig_stop(&r);
}

/* NOSPACE: compaction, a Defragment of every member (leader last), the disarm. */
static void test_nospace_recovered(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	char hosts[256];
	json_t *c;

	(void)state;
	rig_start(&r, T0);
	world(&r);
	eo_fake_etcd_script(r.etcd, "maintenance/alarm", 200,
			    "{\"alarms\":[{\"memberID\":\"176\",\"alarm\":\"NOSPACE\"}]}");
	eo_fake_etcd_script(r.etcd, "kv/range", 200, "{\"header\":{\"revision\":\"77\"}}");
	eo_fake_etcd_script(r.etcd, "kv/compaction", 200, "{\"header\":{}}");
	for (int i = 0; i < 3; i++)
		eo_fake_etcd_script(r.etcd, "maintenance/defragment", 200, "{\"header\":{}}");
	eo_fake_etcd_script(r.etcd, "maintenance/alarm", 200, "{\"header\":{}}");
	eo_nospace_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "kv/compaction"), 1);
	hosts_of(&r, "maintenance/defragment", hosts, sizeof(hosts));
	assert_string_equal(hosts, "demo-a,demo-c,demo-b");
	assert_int_equal(eo_fake_etcd_count(r.etcd, "maintenance/alarm"), 2);
	{
		struct eo_fake_etcd_request q;

		assert_true(
		    eo_fake_etcd_request(r.etcd, eo_fake_etcd_first(r.etcd, "kv/compaction"), &q));
		assert_non_null(strstr(q.body, "\"77\""));
		assert_non_null(strstr(q.body, "\"physical\":true"));
	}
	c = rig_stored(&r, RIG_CLUSTERS, "demo");
	assert_string_equal(eo_condition_status(json_object_get(c, "status"), "NoSpace"), "False");
	assert_string_equal(eo_condition_reason(json_object_get(c, "status"), "NoSpace"),
			    "Recovered");
	/* The cluster's own conditions are still there. */
	assert_string_equal(eo_condition_reason(json_object_get(c, "status"), "Available"),
			    "QuorumHealthy");
	json_decref(c);
	/* Events: the alarm (Warning), then the recovery. */
	{
		json_t *events = fs_bodies(r.api, NULL, "events");
		const json_t *e;
		size_t i;
		bool warn = false, rec = false;

		json_array_foreach(events, i, e)
		{
			const char *reason = json_string_value(json_object_get(e, "reason"));

			warn |= strcmp(reason, "NoSpaceAlarm") == 0;
			rec |= strcmp(reason, "Recovered") == 0;
		}
		json_decref(events);
		assert_true(warn);
		assert_true(rec);
	}
	rig_stop(&r);
}

/*
 * Another etcd cluster answers at the members' addresses (a reused Pod IP): the NOSPACE alarm
 * it reports is not this cluster's; nothing is compacted ("the current revision" of another
 * tenant's etcd) or defragmented, and NoSpace says why.
 */
static void test_nospace_foreign_cluster_refused(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *c;

	(void)state;
	rig_start(&r, T0);
	world(&r);
	eo_fake_etcd_set_cluster_id(r.etcd, 0x1234abcdULL);
	eo_fake_etcd_script(r.etcd, "maintenance/alarm", 200,
			    "{\"alarms\":[{\"memberID\":\"176\",\"alarm\":\"NOSPACE\"}]}");
	eo_fake_etcd_script(r.etcd, "kv/range", 200, "{\"header\":{\"revision\":\"77\"}}");
	eo_fake_etcd_script(r.etcd, "kv/compaction", 200, "{\"header\":{}}");
	eo_nospace_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "kv/range"), 0);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "kv/compaction"), 0);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "maintenance/defragment"), 0);
	c = rig_stored(&r, RIG_CLUSTERS, "demo");
	assert_string_equal(eo_condition_status(json_object_get(c, "status"), "NoSpace"), "True");
	assert_string_equal(eo_condition_reason(json_object_get(c, "status"), "NoSpace"),
			    "ClusterIDMismatch");
	json_decref(c);
	rig_stop(&r);
}

/* The same for an EtcdDefrag: Pending/ClusterIDMismatch, no Defragment anywhere. */
static void test_defrag_foreign_cluster_refused(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *d;

	(void)state;
	rig_start(&r, T0);
	world(&r);
	defrag_object(&r, "{'all':true}");
	eo_fake_etcd_set_cluster_id(r.etcd, 0x1234abcdULL);
	for (int pass = 0; pass < 2; pass++) {
		eo_defrag_reconcile(&r.ctl, "default", "run", &out);
		assert_false(out.error);
		rig_sync_defrag(&r);
	}
	assert_int_equal(eo_fake_etcd_count(r.etcd, "maintenance/defragment"), 0);
	d = rig_stored(&r, RIG_DEFRAGS, "run");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(d, "status"), "phase")), "Pending");
	assert_string_equal(eo_condition_reason(json_object_get(d, "status"), EO_COND_READY),
			    "ClusterIDMismatch");
	json_decref(d);
	rig_stop(&r);
}

/* No alarm on a cluster that never had one: nothing written, nothing but reads. */
static void test_nospace_quiet(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *c;

	(void)state;
	rig_start(&r, T0);
	world(&r);
	eo_fake_etcd_script(r.etcd, "maintenance/alarm", 200, "{\"header\":{}}");
	eo_nospace_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_true(out.requeue_ms >= 30000);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "kv/compaction"), 0);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "maintenance/defragment"), 0);
	/* without an alarm: the alarm list and, for the quota guard, every member's status */
	assert_int_equal(eo_fake_etcd_count(r.etcd, "maintenance/status"), 3);
	assert_int_equal(eo_fake_etcd_requests(r.etcd), 4);
	assert_int_equal(fs_count(r.api, "POST", "etcddefrags", NULL, NULL, NULL), 0);
	c = rig_stored(&r, RIG_CLUSTERS, "demo");
	assert_null(eo_condition_find(json_object_get(c, "status"), "NoSpace"));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(c, "metadata"), "resourceVersion")),
	    "10");
	json_decref(c);
	rig_stop(&r);
}

/* spec of the stored cluster replaced by spec (a JSON object, single quotes). */
static void set_spec(struct rig *r, const char *spec)
{
	json_t *c = rig_stored(r, RIG_CLUSTERS, "demo");

	json_object_set_new(c, "spec", tu_jsonq(spec));
	json_object_set_new(json_object_get(c, "metadata"), "resourceVersion", json_string("11"));
	rig_put(r, RIG_CLUSTERS, c);
}

/*
 * The quota guard: the fake's members hold 20480 bytes, 85 % of a 24000-byte quota. One pass
 * compacts to the current revision and creates the guard's EtcdDefrag with a Warning Event;
 * the next pass, with that run not finished, does neither again.
 */
static void test_quota_guard_compacts_and_defrags(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *d, *events;
	const json_t *e;
	size_t i;
	bool warned = false;

	(void)state;
	rig_start(&r, T0);
	world(&r);
	set_spec(&r, "{'replicas':3,'options':{'quotaBackendBytes':24000}}");
	eo_fake_etcd_script(r.etcd, "maintenance/alarm", 200, "{\"header\":{}}");
	eo_fake_etcd_script(r.etcd, "kv/range", 200, "{\"header\":{\"revision\":\"77\"}}");
	eo_fake_etcd_script(r.etcd, "kv/compaction", 200, "{\"header\":{}}");
	eo_nospace_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "kv/compaction"), 1);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "maintenance/defragment"), 0);
	d = rig_stored(&r, RIG_DEFRAGS, "demo-quota-202606021000");
	assert_non_null(d);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(json_object_get(d, "metadata"), "labels"),
				"etcd-operator.cozystack.io/quota-guard")),
			    "demo");
	json_decref(d);
	events = fs_bodies(r.api, NULL, "events");
	json_array_foreach(events, i, e)
	{
		warned |= strcmp(json_string_value(json_object_get(e, "reason")),
				 "QuotaThresholdPassed") == 0;
	}
	json_decref(events);
	assert_true(warned);
	/* The NoSpace condition is the alarm's: the guard writes none. */
	d = rig_stored(&r, RIG_CLUSTERS, "demo");
	assert_null(eo_condition_find(json_object_get(d, "status"), "NoSpace"));
	json_decref(d);
	/* Next pass: the run has not finished, nothing again. */
	rig_sync_defrag(&r);
	eo_fake_etcd_script(r.etcd, "maintenance/alarm", 200, "{\"header\":{}}");
	eo_nospace_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "kv/compaction"), 1);
	assert_int_equal(fs_count(r.api, "POST", "etcddefrags", NULL, NULL, NULL), 1);
	rig_stop(&r);
}

/*
 * spec.quotaGuard.autoRaise: the guard's EtcdDefrag finished 10 minutes ago and the members
 * still hold 85 % of the 24000-byte quota. The pass neither compacts nor makes another run: it
 * writes status.quotaBackendBytes 48000 (the spec keeps 24000) with QuotaAutoRaise=True and a
 * Normal Event QuotaRaised. The next pass, under the raised quota, writes nothing.
 */
static void test_quota_auto_raise_writes_status(void **state)
{
	static const char *names[] = {"demo-a", "demo-b", "demo-c"};
	struct rig r;
	struct eo_reconcile_out out;
	json_t *c, *events;
	const json_t *e;
	const char *rv;
	size_t i;
	bool raised = false;

	(void)state;
	rig_start(&r, T0);
	world(&r);
	set_spec(&r, "{'replicas':3,'options':{'quotaBackendBytes':24000},"
		     "'quotaGuard':{'autoRaise':{'enabled':true}}}");
	rig_put(&r, RIG_DEFRAGS,
		tu_jsonq("{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdDefrag',"
			 "'metadata':{'name':'demo-quota-202606020950','namespace':'default',"
			 "'uid':'q-uid','resourceVersion':'31',"
			 "'creationTimestamp':'2026-06-02T09:50:00Z',"
			 "'labels':{'etcd-operator.cozystack.io/quota-guard':'demo'}},"
			 "'spec':{'clusterRef':{'name':'demo'}},'status':{'phase':'Complete'}}"));
	for (int k = 0; k < 3; k++) {
		char buf[512];

		snprintf(
		    buf, sizeof(buf),
		    "{'apiVersion':'v1','kind':'PersistentVolumeClaim',"
		    "'metadata':{'name':'data-%s','namespace':'default','resourceVersion':'40'},"
		    "'status':{'phase':'Bound','capacity':{'storage':'1Gi'}}}",
		    names[k]);
		rig_put(&r, RIG_PVCS, tu_jsonq(buf));
	}
	eo_fake_etcd_script(r.etcd, "maintenance/alarm", 200, "{\"header\":{}}");
	eo_nospace_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "kv/compaction"), 0);
	assert_int_equal(fs_count(r.api, "POST", "etcddefrags", NULL, NULL, NULL), 0);
	c = rig_stored(&r, RIG_CLUSTERS, "demo");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(c, "status"), "quotaBackendBytes")),
	    48000);
	assert_int_equal(
	    json_integer_value(json_object_get(
		json_object_get(json_object_get(c, "spec"), "options"), "quotaBackendBytes")),
	    24000);
	assert_string_equal(eo_condition_reason(json_object_get(c, "status"), "QuotaAutoRaise"),
			    "QuotaRaised");
	rv = json_string_value(json_object_get(json_object_get(c, "metadata"), "resourceVersion"));
	assert_non_null(rv);
	assert_string_not_equal(rv, "11");
	events = fs_bodies(r.api, NULL, "events");
	json_array_foreach(events, i, e)
	{
		raised |=
		    strcmp(json_string_value(json_object_get(e, "reason")), "QuotaRaised") == 0 &&
		    strcmp(json_string_value(json_object_get(e, "type")), "Normal") == 0 &&
		    strstr(json_string_value(json_object_get(e, "message")),
			   "quota raised from 24000 to 48000 bytes") != NULL;
	}
	json_decref(events);
	assert_true(raised);
	/* Next pass: under the raised quota, no write. */
	rig_sync(&r, RIG_CLUSTERS);
	eo_fake_etcd_script(r.etcd, "maintenance/alarm", 200, "{\"header\":{}}");
	eo_nospace_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	{
		json_t *c2 = rig_stored(&r, RIG_CLUSTERS, "demo");

		assert_string_equal(json_string_value(json_object_get(
					json_object_get(c2, "metadata"), "resourceVersion")),
				    rv);
		json_decref(c2);
	}
	json_decref(c);
	rig_stop(&r);
}

/* spec.quotaGuard.enabled false: one request per pass (the alarm list), nothing else. */
static void test_quota_guard_off(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;

	(void)state;
	rig_start(&r, T0);
	world(&r);
	set_spec(&r, "{'replicas':3,'options':{'quotaBackendBytes':24000},"
		     "'quotaGuard':{'enabled':false}}");
	eo_fake_etcd_script(r.etcd, "maintenance/alarm", 200, "{\"header\":{}}");
	eo_nospace_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(eo_fake_etcd_requests(r.etcd), 1);
	assert_int_equal(fs_count(r.api, "POST", "etcddefrags", NULL, NULL, NULL), 0);
	rig_stop(&r);
}

/* A paused cluster (replicas 0): no etcd request, no write, and no timer of its own (its
 * next change queues it again). */
static void test_nospace_paused(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *c;

	(void)state;
	rig_start(&r, T0);
	world(&r);
	c = rig_stored(&r, RIG_CLUSTERS, "demo");
	json_object_set_new(json_object_get(c, "spec"), "replicas", json_integer(0));
	json_object_set_new(json_object_get(c, "metadata"), "resourceVersion", json_string("11"));
	rig_put(&r, RIG_CLUSTERS, c);
	eo_nospace_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(out.requeue_ms, 0);
	assert_int_equal(eo_fake_etcd_requests(r.etcd), 0);
	c = rig_stored(&r, RIG_CLUSTERS, "demo");
	assert_null(eo_condition_find(json_object_get(c, "status"), "NoSpace"));
	json_decref(c);
	rig_stop(&r);
}

TU_MAIN(test_defrag_runs_followers_then_leader, test_defrag_leader_move_refused,
	test_defrag_skips_without_a_call, test_defrag_waits_for_health,
	test_defrag_failure_recorded, test_nospace_recovered, test_nospace_quiet,
	test_nospace_foreign_cluster_refused, test_defrag_foreign_cluster_refused,
	test_nospace_paused, test_quota_guard_compacts_and_defrags, test_quota_guard_off,
	test_quota_auto_raise_writes_status)
