/*
 * Unit tests for the act layer (controller/controller.c) against the fake apiserver and the
 * fake etcd gateway: what the reconcilers send, in which order, with which guards.
 *
 * - A member leaves etcd (MemberRemove, through another member) before its finalizer is
 *   dropped: after a scale-down and after a lost data volume.
 * - The finalizer stays while no other member can remove it, and the cluster is not being
 *   deleted.
 * - Every delete of a Pod, PVC or EtcdMember carries the object's UID as a precondition.
 * - A promoted learner is marked a voter (status.isVoter, then its Pod's role label, in the
 *   same pass and with the Pod's UID as a precondition), and only after etcd accepted the
 *   promotion; a member marked after the fact (SET_VOTER) is labelled in its pass too.
 * - The member controller never takes the voter label off on a lagging member cache.
 * - The seed and a joining member are created under status.nextMemberName, and a create
 *   retried on a lagging cache collides (409) instead of making a second member.
 * - spec.deletionPolicy Retain: the finalizer retain-data is added; on deletion every member's
 *   PVC loses its owner reference (merge patch with the PVC's resourceVersion, labels untouched)
 *   before the finalizer goes, after a live read; a stale PVC answers 409 and nothing else is
 *   sent; Delete sends nothing.
 *
 * The apiserver is the rig's store (support/rig.h): GET answers from it, POST adds (409 when
 * the name is taken), DELETE removes; every request is logged with the number of
 * MemberRemove calls etcd had received at that moment (to check the order). The informer
 * caches are filled by the test, and lag behind the store as a real cache can.
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
#include "desired/netpol.h"
#include "plan/plan.h"
#include "plan/removal.h"
#include "plan/retain.h"
#include "support/rig.h"
#include "support/testutil.h"
#include "support/tu_main.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */
#define A  "2026-06-02T09:00:00Z"
#define B  "2026-06-02T09:01:00Z"
#define C  "2026-06-02T09:02:00Z"

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

/* The rig (support/rig.h), with the old fake's answers to a PATCH: PVCs are merged (the
 * operator's only PVC patch, metadata.ownerReferences, with its resourceVersion); every other
 * PATCH is answered with the stored object unchanged. Nodes are watched. */
static void start(struct rig *r)
{
	rig_start(r, T0);
	fs_patch_mode(r->api, NULL, FS_PATCH_ECHO);
	fs_patch_mode(r->api, "persistentvolumeclaims", FS_PATCH_MERGE);
	rig_watch_nodes(r);
}

/*
 * Every DELETE of a Pod, PVC or EtcdMember sent during the test carried
 * preconditions.uid, equal to the UID of the object the apiserver held.
 */
static void assert_deletes_guarded(struct rig *r)
{
	size_t i;
	json_t *e;

	json_array_foreach(fs_log(r->api), i, e)
	{
		const char *plural = json_string_value(json_object_get(e, "plural"));
		const char *uid = json_string_value(json_object_get(e, "uid"));
		const char *pre = json_string_value(json_object_get(
		    json_object_get(json_object_get(e, "body"), "preconditions"), "uid"));

		if (strcmp(json_string_value(json_object_get(e, "method")), "DELETE") != 0 ||
		    (strcmp(plural, "pods") != 0 && strcmp(plural, "persistentvolumeclaims") != 0 &&
		     strcmp(plural, EO_PLURAL_MEMBERS) != 0))
			continue;
		if (pre == NULL || uid == NULL || strcmp(pre, uid) != 0)
			fail_msg("DELETE %s/%s without the UID precondition (sent %s, object %s)",
				 plural, json_string_value(json_object_get(e, "name")),
				 pre ? pre : "none", uid ? uid : "none");
	}
}

static void stop(struct rig *r)
{
	assert_deletes_guarded(r);
	rig_stop(r);
}

/* --- the world --- */

static json_t *labels(const char *component)
{
	return component ? json_pack("{s:s, s:s}", EO_LABEL_CLUSTER, "demo", EO_LABEL_COMPONENT,
				     component)
			 : json_pack("{s:s}", EO_LABEL_CLUSTER, "demo");
}

static json_t *owner(const char *api_version, const char *kind, const char *name, const char *uid)
{
	return json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion", api_version, "kind",
			 kind, "name", name, "uid", uid, "controller", 1, "blockOwnerDeletion", 1);
}

/* EtcdCluster demo (bootstrapped when cluster_id) wanting target members. */
static json_t *cluster(int target, bool bootstrapped)
{
	char next[EO_PLAN_NAME_MAX];
	json_t *c = json_pack(
	    "{s:s, s:s, s:{s:s, s:s, s:s, s:i, s:s}, s:{s:i, s:s, s:{s:s, s:s}, "
	    "s:i}, s:{s:s, s:s, s:i, s:i, s:{s:i, s:s, s:{s:s, s:s}}, s:s}}",
	    "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdCluster", "metadata", "name", "demo",
	    "namespace", "default", "uid", "c-uid", "generation", 2, "resourceVersion", "10",
	    "spec", "replicas", target, "version", "3.6.11", "storage", "size", "1Gi", "medium", "",
	    "progressDeadlineSeconds", 600, "status", "clusterToken", "default-demo-c-uid",
	    "selector", "etcd-operator.cozystack.io/cluster=demo", "readyMembers", 0,
	    "brokenMembers", 0, "observed", "replicas", target, "version", "3.6.11", "storage",
	    "size", "1Gi", "medium", "", "progressDeadline", "2026-06-02T10:10:00Z");

	assert_non_null(c);
	if (bootstrapped)
		json_object_set_new(json_object_get(c, "status"), "clusterID",
				    json_string("248adce0359142ba"));
	assert_int_equal(eo_plan_next_member_name("demo", "c-uid", NULL, 0, next, sizeof(next)), 0);
	json_object_set_new(json_object_get(c, "status"), "nextMemberName", json_string(next));
	return c;
}

static const char *next_name(struct rig *r)
{
	json_t *c = eo_kube_cache_get(r->caches[RIG_CLUSTERS], "default", "demo");
	static char buf[EO_PLAN_NAME_MAX];

	snprintf(
	    buf, sizeof(buf), "%s",
	    json_string_value(json_object_get(json_object_get(c, "status"), "nextMemberName")));
	json_decref(c);
	return buf;
}

struct mdesc {
	const char *name;
	const char *created;
	bool voter;
	uint64_t id; /* etcd member ID (status.memberID, and etcd's list); 0: none */
	bool learner;
	int pod; /* 0 none, 1 not ready, 2 ready, 3 Failed */
	bool pvc;
};

/* Three ready voters, each with its PVC and etcd member ID: the usual healthy cluster. */
static const struct mdesc ready3[] = {
    {"demo-a", A, true, 0xa, false, 2, true},
    {"demo-b", B, true, 0xb, false, 2, true},
    {"demo-c", C, true, 0xc, false, 2, true},
};

/* A ready voter and a ready learner (demo-b, member ID 0xb) waiting for its promotion. */
static const struct mdesc voter_learner[] = {
    {"demo-a", A, true, 0xa, false, 2, true},
    {"demo-b", B, false, 0xb, true, 2, true},
};

static char *uid_of(char *buf, size_t n, const char *prefix, const char *name)
{
	snprintf(buf, n, "%s%s", prefix, name);
	return buf;
}

static json_t *member(const struct mdesc *d)
{
	char ic[EO_DESIRED_URL_MAX], uid[128], id[24];
	json_t *m;

	eo_desired_seed_initial_cluster(ic, sizeof(ic), &OPTS, d->name, "demo", "default", false);
	m = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:i, s:o, s:[s], s:o}, "
		      "s:{s:s, s:s, s:b, s:s, s:s, s:{s:s, s:s}}, s:{s:b}}",
		      "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdMember", "metadata", "name",
		      d->name, "namespace", "default", "uid",
		      uid_of(uid, sizeof(uid), "uid-", d->name), "creationTimestamp", d->created,
		      "resourceVersion", "20", "generation", 1, "labels", labels(NULL),
		      "finalizers", EO_FINALIZER_MEMBER_CLEANUP, "ownerReferences",
		      owner(EO_API_GROUP_VERSION, "EtcdCluster", "demo", "c-uid"), "spec",
		      "clusterName", "demo", "version", "3.6.11", "bootstrap", 0, "initialCluster",
		      ic, "clusterToken", "default-demo-c-uid", "storage", "size", "1Gi", "medium",
		      "", "status", "isVoter", d->voter);
	assert_non_null(m);
	if (d->id != 0) {
		snprintf(id, sizeof(id), "%" PRIx64, d->id);
		json_object_set_new(json_object_get(m, "status"), "memberID", json_string(id));
	}
	return m;
}

static json_t *pod(const struct mdesc *d, bool role_label)
{
	char uid[128], muid[128];
	bool ready = d->pod == 2;
	json_t *l = labels(d->name);
	json_t *p;

	if (role_label)
		json_object_set_new(l, EO_LABEL_ROLE, json_string(EO_LABEL_ROLE_VOTER));
	p = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:o, s:o}, s:{s:s, s:[{s:s, s:s}]}}",
		      "apiVersion", "v1", "kind", "Pod", "metadata", "name", d->name, "namespace",
		      "default", "uid", uid_of(uid, sizeof(uid), "pod-uid-", d->name),
		      "creationTimestamp", d->created, "resourceVersion", "30", "labels", l,
		      "ownerReferences",
		      owner(EO_API_GROUP_VERSION, "EtcdMember", d->name,
			    uid_of(muid, sizeof(muid), "uid-", d->name)),
		      "status", "phase", d->pod == 3 ? "Failed" : (ready ? "Running" : "Pending"),
		      "conditions", "type", "Ready", "status", ready ? "True" : "False");
	assert_non_null(p);
	return p;
}

static json_t *pvc(const struct mdesc *d)
{
	char name[EO_NAME_MAX], uid[128], muid[128];

	assert_int_equal(eo_name_member_pvc(name, sizeof(name), d->name), 0);
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:o, s:o}, s:{s:s}}", "apiVersion",
			 "v1", "kind", "PersistentVolumeClaim", "metadata", "name", name,
			 "namespace", "default", "uid",
			 uid_of(uid, sizeof(uid), "pvc-uid-", d->name), "resourceVersion", "40",
			 "labels", labels(d->name), "ownerReferences",
			 owner(EO_API_GROUP_VERSION, "EtcdMember", d->name,
			       uid_of(muid, sizeof(muid), "uid-", d->name)),
			 "status", "phase", "Bound");
}

static const char *peer_of(const char *name, char *buf, size_t n)
{
	assert_int_equal(eo_desired_member_peer_url(buf, n, &OPTS, name, "demo", "default", false),
			 0);
	return buf;
}

static const char *host_of(const char *name, char *buf, size_t n)
{
	assert_int_equal(eo_desired_member_fqdn(buf, n, &OPTS, name, "demo", "default"), 0);
	return buf;
}

/* The cluster (target members, bootstrapped), its Services and PDB, the members. */
static void world(struct rig *r, int target, const struct mdesc *ms, size_t n)
{
	json_t *c = cluster(target, true);
	int voters = 0;

	rig_put(r, RIG_SERVICES, eo_desired_headless_service(c));
	rig_put(r, RIG_SERVICES, eo_desired_client_service(c));
	for (size_t i = 0; i < n; i++) {
		char peer[EO_DESIRED_URL_MAX];

		voters += ms[i].voter;
		rig_put(r, RIG_MEMBERS, member(&ms[i]));
		if (ms[i].pod)
			rig_put(r, RIG_PODS, pod(&ms[i], ms[i].voter));
		if (ms[i].pvc)
			rig_put(r, RIG_PVCS, pvc(&ms[i]));
		if (ms[i].id)
			eo_fake_etcd_set_member(r->etcd, ms[i].id, ms[i].name,
						peer_of(ms[i].name, peer, sizeof(peer)),
						ms[i].learner);
	}
	if (voters > 0)
		rig_put(r, RIG_PDBS,
			eo_desired_pdb(c, eo_desired_pdb_min_available(voters, target)));
	rig_put(r, RIG_CLUSTERS, c);
}

/* Sets metadata.deletionTimestamp on member name, in the cache and the store. */
static void mark_deleting(struct rig *r, const char *name)
{
	json_t *m = eo_kube_cache_get(r->caches[RIG_MEMBERS], "default", name), *copy;

	assert_non_null(m);
	copy = json_deep_copy(m);
	json_decref(m);
	json_object_set_new(json_object_get(copy, "metadata"), "deletionTimestamp",
			    json_string("2026-06-02T10:00:00Z"));
	rig_put(r, RIG_MEMBERS, copy);
}

/* Sets status.key = v (stolen) on member name, in the cache and the store. */
static void set_member_status(struct rig *r, const char *name, const char *key, json_t *v)
{
	json_t *m = eo_kube_cache_get(r->caches[RIG_MEMBERS], "default", name), *copy;

	assert_non_null(m);
	copy = json_deep_copy(m);
	json_decref(m);
	json_object_set_new(json_object_get(copy, "status"), key, v);
	rig_put(r, RIG_MEMBERS, copy);
}

static bool has_finalizer(const json_t *patch)
{
	size_t i;
	json_t *f;

	json_array_foreach(json_object_get(json_object_get(patch, "metadata"), "finalizers"), i, f)
	{
		if (strcmp(json_string_value(f), EO_FINALIZER_MEMBER_CLEANUP) == 0)
			return true;
	}
	return false;
}

/* --- scenarios --- */

/*
 * A member leaves: the cluster controller deletes the EtcdMember (UID precondition), and its
 * finalizer removes it from etcd through another member before letting it go.
 */
static void test_removal_goes_through_etcd_first(void **state)
{
	static const struct {
		const char *what;
		int target;
		struct mdesc ms[3];
		const char *victim;
		uint64_t victim_id;
	} rows[] = {
	    {"scale down 3 -> 2: the newest member goes",
	     2,
	     {{"demo-a", A, true, 0xa, false, 2, true},
	      {"demo-b", B, true, 0xb, false, 2, true},
	      {"demo-c", C, true, 0xc, false, 2, true}},
	     "demo-c",
	     0xc},
	    {"lost PVC: the member is replaced, never restarted on an empty volume",
	     3,
	     {{"demo-a", A, true, 0xa, false, 2, true},
	      {"demo-b", B, true, 0xb, false, 1, false},
	      {"demo-c", C, true, 0xc, false, 2, true}},
	     "demo-b",
	     0xb},
	};

	(void)state;
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct rig r;
		struct eo_reconcile_out out;
		struct eo_fake_etcd_request req;
		char vhost[EO_DESIRED_URL_MAX], want_body[64];
		json_t *del = NULL, *fin = NULL;
		size_t at;

		print_message("row: %s\n", rows[k].what);
		start(&r);
		world(&r, rows[k].target, rows[k].ms, 3);
		if (strcmp(rows[k].victim, "demo-b") == 0)
			set_member_status(&r, "demo-b", "dataVolumeUID",
					  json_string("pvc-uid-old"));

		/* The cluster controller: the EtcdMember is deleted, guarded by its UID. */
		eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
		assert_false(out.error);
		assert_int_equal(fs_count(r.api, "DELETE", EO_PLURAL_MEMBERS, NULL, "", &del), 1);
		assert_string_equal(json_string_value(json_object_get(del, "name")),
				    rows[k].victim);
		assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/remove"), 0);

		/* Its finalizer: MemberRemove through another member, then the finalizer goes. */
		mark_deleting(&r, rows[k].victim);
		eo_member_reconcile(&r.ctl, "default", rows[k].victim, &out);
		assert_false(out.error);
		assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/remove"), 1);
		at = eo_fake_etcd_first(r.etcd, "cluster/member/remove");
		assert_true(eo_fake_etcd_request(r.etcd, at, &req));
		snprintf(want_body, sizeof(want_body), "{\"ID\":\"%" PRIu64 "\"}",
			 rows[k].victim_id);
		tu_assert_json_text_equal(req.body, want_body);
		host_of(rows[k].victim, vhost, sizeof(vhost));
		if (strcmp(req.host, vhost) == 0)
			fail_msg("MemberRemove sent through the member being removed (%s)",
				 req.host);
		assert_non_null(strstr(req.host, ".demo.default.svc.cluster.local"));
		assert_false(eo_fake_etcd_has_member(r.etcd, rows[k].victim_id));

		assert_int_equal(
		    fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, rows[k].victim, "", &fin), 1);
		assert_false(has_finalizer(json_object_get(fin, "body")));
		assert_non_null(json_object_get(json_object_get(fin, "body"), "metadata"));
		/* ... and only after etcd had removed the member */
		assert_int_equal(json_integer_value(json_object_get(fin, "removes")), 1);
		stop(&r);
	}
}

/* No other member can remove it and the cluster stays: the finalizer stays, and says why. */
static void test_finalizer_stays_without_a_path_to_etcd(void **state)
{
	static const struct {
		const char *what;
		int other_pods; /* 0 none, 2 ready */
		bool etcd_down; /* the other members' etcd answers 503 */
	} rows[] = {
	    {"no other member has a running Pod", 0, false},
	    {"the other members' etcd does not answer", 2, true},
	};

	(void)state;
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const struct mdesc ms[] = {
		    {"demo-a", A, true, 0xa, false, rows[k].other_pods, true},
		    {"demo-b", B, true, 0xb, false, rows[k].other_pods, true},
		    {"demo-c", C, true, 0xc, false, 2, true},
		};
		struct rig r;
		struct eo_reconcile_out out;
		char host[EO_DESIRED_URL_MAX];
		json_t *st = NULL;
		const json_t *ready;

		print_message("row: %s\n", rows[k].what);
		start(&r);
		world(&r, 2, ms, 3);
		if (rows[k].etcd_down) {
			eo_fake_etcd_set_down(r.etcd, host_of("demo-a", host, sizeof(host)), true);
			eo_fake_etcd_set_down(r.etcd, host_of("demo-b", host, sizeof(host)), true);
		}
		mark_deleting(&r, "demo-c");
		for (int i = 0; i < 3; i++) {
			eo_member_reconcile(&r.ctl, "default", "demo-c", &out);
			assert_true(out.requeue_ms > 0);
		}
		assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-c", "", NULL),
				 0);
		assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/remove"), 0);
		assert_true(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-c", "status", &st) >=
			    1);
		ready = eo_condition_find(json_object_get(json_object_get(st, "body"), "status"),
					  EO_COND_READY);
		assert_non_null(ready);
		assert_string_equal(json_string_value(json_object_get(ready, "reason")),
				    EO_PLAN_REASON_REMOVAL_BLOCKED);
		assert_true(fs_count(r.api, "POST", "events", NULL, NULL, NULL) >= 1);
		stop(&r);
	}
}

/*
 * A member list as the fake's gateway writes it, answered by member responder (header
 * member_id) of this cluster, naming members names[0..n) with ids 0xa, 0xb, ... by position
 * in "demo-a,demo-b,demo-c" (a stale or scripted view): the next cluster/member/list answer.
 */
static void script_list(struct rig *r, uint64_t responder, const char *const *names, size_t n)
{
	json_t *root = json_pack("{s:{s:s, s:s}, s:[]}", "header", "cluster_id",
				 "2633159787680973498", "member_id", "", "members");
	char id[24], peer[EO_DESIRED_URL_MAX], *out;

	snprintf(id, sizeof(id), "%" PRIu64, responder);
	json_object_set_new(json_object_get(root, "header"), "member_id", json_string(id));
	for (size_t i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%" PRIu64, (uint64_t)(0xa + (names[i][5] - 'a')));
		json_array_append_new(
		    json_object_get(root, "members"),
		    json_pack("{s:s, s:s, s:[s], s:[]}", "ID", id, "name", names[i], "peerURLs",
			      peer_of(names[i], peer, sizeof(peer)), "clientURLs"));
	}
	out = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	eo_fake_etcd_script(r->etcd, "cluster/member/list", 200, out);
	free(out);
}

/* The host (first label) of the i-th request for call, "" when there is none. */
static const char *nth_host(struct rig *r, const char *call, size_t nth, char *buf, size_t n)
{
	size_t seen = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < eo_fake_etcd_requests(r->etcd); i++) {
		struct eo_fake_etcd_request q;

		assert_true(eo_fake_etcd_request(r->etcd, i, &q));
		if (strcmp(q.call, call) != 0 || seen++ != nth)
			continue;
		snprintf(buf, n, "%s", q.host);
		*strchrnul(buf, '.') = '\0';
		break;
	}
	return buf;
}

/*
 * Absence is never decided from one unverified answer. The finalizer's list comes from a
 * follower that has not applied the member's promotion yet (a stale view without it): the
 * operator asks that member for the leader and lists again there; the leader names the member,
 * so it is removed through etcd before the finalizer goes (never a ghost voter). A MemberRemove
 * answered NOTFOUND is "list again", not "removed": while the leader still lists the member
 * the finalizer stays; once the leader's list does not name it, the finalizer goes.
 */
static void test_finalizer_absence_needs_the_leader(void **state)
{
	const struct mdesc ms3[] = {ready3[0], ready3[1], {"demo-c", C, true, 0, false, 2, true}};
	static const char *const ab[] = {"demo-a", "demo-b"};
	static const char *const abc[] = {"demo-a", "demo-b", "demo-c"};
	struct rig r;
	struct eo_reconcile_out out;
	char h[EO_FAKE_ETCD_STR];
	json_t *fin = NULL;

	(void)state;
	/* 1. A follower's stale list: the leader's names demo-c, MemberRemove, then the drop. */
	start(&r);
	world(&r, 2, ready3, 3);
	eo_fake_etcd_set_leader(r.etcd, 0xb);
	script_list(&r, 0xa, ab, 2);
	mark_deleting(&r, "demo-c");
	eo_member_reconcile(&r.ctl, "default", "demo-c", &out);
	assert_false(out.error);
	assert_string_equal(nth_host(&r, "cluster/member/list", 0, h, sizeof(h)), "demo-a");
	assert_string_equal(nth_host(&r, "maintenance/status", 0, h, sizeof(h)), "demo-a");
	assert_string_equal(nth_host(&r, "cluster/member/list", 1, h, sizeof(h)), "demo-b");
	assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/remove"), 1);
	assert_false(eo_fake_etcd_has_member(r.etcd, 0xc));
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-c", "", &fin), 1);
	assert_false(has_finalizer(json_object_get(fin, "body")));
	assert_int_equal(json_integer_value(json_object_get(fin, "removes")), 1);
	stop(&r);

	/* 2. NOTFOUND while the leader (demo-a) still lists demo-c: the finalizer stays. */
	start(&r);
	world(&r, 2, ready3, 3);
	eo_fake_etcd_script(r.etcd, "cluster/member/remove", 404,
			    "{\"error\":\"etcdserver: member not found\",\"code\":5,"
			    "\"message\":\"etcdserver: member not found\"}");
	mark_deleting(&r, "demo-c");
	eo_member_reconcile(&r.ctl, "default", "demo-c", &out);
	assert_false(out.error);
	assert_true(out.requeue_ms > 0);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/remove"), 1);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/list"), 2);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-c", "", NULL), 0);
	assert_true(eo_fake_etcd_has_member(r.etcd, 0xc));
	stop(&r);

	/*
	 * 3. A list naming demo-c, MemberRemove NOTFOUND, and the leader's fresh list no longer
	 * names it: the finalizer goes.
	 */
	start(&r);
	world(&r, 2, ms3, 3); /* etcd knows demo-a and demo-b only */
	script_list(&r, 0xa, abc, 3);
	mark_deleting(&r, "demo-c");
	eo_member_reconcile(&r.ctl, "default", "demo-c", &out);
	assert_false(out.error);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/remove"), 1);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-c", "", &fin), 1);
	assert_false(has_finalizer(json_object_get(fin, "body")));
	stop(&r);
}

/*
 * The cluster controller: a voter missing from a follower's stale list is neither unmarked
 * nor deleted. The leader's own list names it: nothing is done to it. When the leader cannot
 * be reached, the pass waits and says why (a Warning Event MemberListUnverified).
 */
static void test_cluster_absence_needs_the_leader(void **state)
{
	const struct mdesc ms[] = {
	    {"demo-a", A, true, 0xa, false, 2, true},
	    {"demo-b", B, true, 0xb, false, 2, true},
	    {"demo-c", C, true, 0xc, false, 1, true},
	};
	static const char *const ab[] = {"demo-a", "demo-b"};

	(void)state;
	for (int down = 0; down < 2; down++) {
		struct rig r;
		struct eo_reconcile_out out;
		char h[EO_FAKE_ETCD_STR];
		json_t *e = NULL;

		print_message("row: the leader %s\n", down ? "is unreachable" : "answers");
		start(&r);
		world(&r, 3, ms, 3);
		eo_fake_etcd_set_leader(r.etcd, 0xb);
		if (down)
			eo_fake_etcd_set_down(r.etcd, host_of("demo-b", h, sizeof(h)), true);
		script_list(&r, 0xa, ab, 2);
		eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
		assert_false(out.error);
		assert_string_equal(nth_host(&r, "maintenance/status", 0, h, sizeof(h)), "demo-a");
		assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-c", NULL, NULL),
				 0);
		assert_int_equal(fs_count(r.api, "DELETE", EO_PLURAL_MEMBERS, NULL, NULL, NULL), 0);
		if (down) {
			assert_true(fs_count(r.api, "POST", "events", NULL, NULL, &e) >= 1);
			assert_string_equal(json_string_value(json_object_get(
						json_object_get(e, "body"), "reason")),
					    EO_PLAN_REASON_LIST_UNVERIFIED);
		}
		stop(&r);
	}
}

/* A Pod that ended is deleted so that the member starts again: guarded by the Pod's UID. */
static void test_pod_delete_carries_uid(void **state)
{
	const struct mdesc ms[] = {
	    {"demo-a", A, true, 0xa, false, 2, true},
	    {"demo-b", B, true, 0xb, false, 3, true},
	};
	struct rig r;
	struct eo_reconcile_out out;
	json_t *del = NULL;
	const char *pre;

	(void)state;
	start(&r);
	world(&r, 2, ms, 2);
	eo_member_reconcile(&r.ctl, "default", "demo-b", &out);
	assert_false(out.error);
	assert_int_equal(fs_count(r.api, "DELETE", "pods", "demo-b", "", &del), 1);
	pre = json_string_value(
	    json_object_get(json_object_get(json_object_get(del, "body"), "preconditions"), "uid"));
	assert_non_null(pre);
	assert_string_equal(pre, "pod-uid-demo-b");
	stop(&r); /* and every other delete */
}

/* The body of the only or last request matching; NULL when there is none. */
static const json_t *body_of(const json_t *entry)
{
	return json_object_get(entry, "body");
}

/* The voter label a Pod patch sets: "voter", "" when it removes it (null), NULL if absent. */
static const char *patched_role(const json_t *patch_entry)
{
	json_t *labels =
	    json_object_get(json_object_get(body_of(patch_entry), "metadata"), "labels");
	json_t *v = json_object_get(labels, EO_LABEL_ROLE);

	if (v == NULL)
		return NULL;
	return json_is_null(v) ? "" : json_string_value(v);
}

static const char *patched_uid(const json_t *patch_entry)
{
	return json_string_value(
	    json_object_get(json_object_get(body_of(patch_entry), "metadata"), "uid"));
}

/*
 * A learner whose Pod is ready is promoted through a voter, then marked a voter
 * (status.isVoter) and its Pod given the voter role label in the same pass (the client
 * Service and the PDB select it), the Pod's UID as a precondition. A promotion etcd refuses
 * marks and labels nothing. The member controller's pass labels it as well (a backstop).
 */
static void test_promotion_marks_the_voter(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	struct eo_fake_etcd_request req;
	char host[EO_DESIRED_URL_MAX];
	json_t *st = NULL, *pp = NULL;

	(void)state;
	start(&r);
	world(&r, 3, voter_learner, 2);

	/* etcd: the learner is not in sync yet. Nothing is marked; come back soon. */
	eo_fake_etcd_script(
	    r.etcd, "cluster/member/promote", 400,
	    "{\"error\":\"etcdserver: can only promote a learner member which is in "
	    "sync with leader\",\"code\":9,\"message\":\"etcdserver: can only "
	    "promote a learner member which is in sync with leader\"}");
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_true(out.requeue_ms > 0);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/promote"), 1);
	assert_true(eo_fake_etcd_is_learner(r.etcd, 0xb));
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-b", "status", NULL), 0);
	assert_int_equal(fs_count(r.api, "PATCH", "pods", "demo-b", "", NULL), 0);

	/* Then it is: promoted through the voter, marked, and its Pod labelled. */
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/promote"), 2);
	assert_true(eo_fake_etcd_request(r.etcd, eo_fake_etcd_requests(r.etcd) - 1, &req));
	assert_string_equal(req.call, "cluster/member/promote");
	assert_string_equal(req.host, host_of("demo-a", host, sizeof(host)));
	tu_assert_json_text_equal(req.body, "{\"ID\":\"11\"}");
	assert_false(eo_fake_etcd_is_learner(r.etcd, 0xb));
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-b", "status", &st), 1);
	{
		json_t *want = tu_json("{\"isVoter\":true}");

		tu_assert_json_equal(json_object_get(json_object_get(st, "body"), "status"), want,
				     "status patch of the promoted member");
		json_decref(want);
	}
	assert_int_equal(fs_count(r.api, "PATCH", "pods", "demo-b", "", &pp), 1);
	assert_string_equal(patched_role(pp), EO_LABEL_ROLE_VOTER);
	assert_string_equal(patched_uid(pp), "pod-uid-demo-b");
	assert_true(fs_find_last(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-b", "status") <
		    fs_find_last(r.api, "PATCH", "pods", "demo-b", ""));

	/* The member controller, on the marked member (Pod cache not updated yet). */
	set_member_status(&r, "demo-b", "isVoter", json_true());
	eo_member_reconcile(&r.ctl, "default", "demo-b", &out);
	assert_false(out.error);
	assert_int_equal(fs_count(r.api, "PATCH", "pods", "demo-b", "", &pp), 2);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(json_object_get(pp, "body"), "metadata"), "labels"),
		EO_LABEL_ROLE)),
	    EO_LABEL_ROLE_VOTER);
	stop(&r);
}

/*
 * The member addresses answer for another etcd cluster (its header's cluster ID is not
 * status.clusterID): the learner is not promoted, nothing is marked or labelled, and the
 * cluster says why. Once the right cluster answers, the promotion goes on.
 */
static void test_other_cluster_is_not_acted_on(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *st = NULL;

	(void)state;
	start(&r);
	world(&r, 3, voter_learner, 2);
	eo_fake_etcd_set_cluster_id(r.etcd, 0x1111);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_true(out.requeue_ms > 0);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/list"), 1);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/promote"), 0);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/remove"), 0);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/add"), 0);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-b", "status", NULL), 0);
	assert_int_equal(fs_count(r.api, "PATCH", "pods", "demo-b", "", NULL), 0);
	assert_true(fs_count(r.api, "PATCH", EO_PLURAL_CLUSTERS, "demo", "status", &st) >= 1);
	{
		char *txt = json_dumps(st, 0);

		assert_non_null(txt);
		assert_non_null(strstr(txt, "ClusterIDMismatch"));
		free(txt);
	}

	eo_fake_etcd_set_cluster_id(r.etcd, EO_FAKE_ETCD_CLUSTER_ID);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/promote"), 1);
	stop(&r);
}

/*
 * A member etcd lists as a voter but not marked (the operator stopped between MemberPromote
 * and the mark): the mark and the Pod's voter label come in one pass. One etcd no longer
 * lists: unmarked and its label removed in the pass.
 */
static void test_voter_mark_labels_the_pod(void **state)
{
	const struct mdesc ms[] = {
	    {"demo-a", A, true, 0xa, false, 2, true},
	    {"demo-b", B, true, 0xb, false, 2, true},
	    {"demo-c", C, false, 0xc, false, 2, true},
	};
	const struct mdesc lost[] = {
	    {"demo-a", A, true, 0xa, false, 2, true},
	    {"demo-b", B, true, 0, false, 2, true},
	    {"demo-c", C, true, 0xc, false, 2, true},
	};
	struct rig r;
	struct eo_reconcile_out out;
	json_t *st = NULL, *pp = NULL;

	(void)state;
	start(&r);
	world(&r, 3, ms, 3);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-c", "status", &st), 1);
	assert_true(
	    json_is_true(json_object_get(json_object_get(body_of(st), "status"), "isVoter")));
	assert_int_equal(fs_count(r.api, "PATCH", "pods", "demo-c", "", &pp), 1);
	assert_string_equal(patched_role(pp), EO_LABEL_ROLE_VOTER);
	assert_string_equal(patched_uid(pp), "pod-uid-demo-c");
	stop(&r);

	/* etcd does not list demo-b (lost): unmarked, label removed. */
	start(&r);
	world(&r, 3, lost, 3);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-b", "status", &st), 1);
	assert_true(
	    json_is_false(json_object_get(json_object_get(body_of(st), "status"), "isVoter")));
	assert_int_equal(fs_count(r.api, "PATCH", "pods", "demo-b", "", &pp), 1);
	assert_string_equal(patched_role(pp), "");
	assert_string_equal(patched_uid(pp), "pod-uid-demo-b");
	stop(&r);
}

/* Replaces member name in the apiserver's store only: the cache lags behind. */
static void store_member_status(struct rig *r, const char *name, const char *key, json_t *v)
{
	json_t *copy = rig_stored(r, RIG_MEMBERS, name);

	assert_non_null(copy);
	json_object_set_new(json_object_get(copy, "status"), key, v);
	rig_store_put(r, RIG_MEMBERS, copy);
}

/*
 * The Pod's event (voter label just set by the cluster controller) may come before the
 * member's (isVoter just set): the member controller reads the member live before it takes
 * a voter label off, and keeps it when the live member is a voter. When the live member is
 * not a voter either, the label goes.
 */
static void test_voter_label_kept_on_lagging_member_cache(void **state)
{
	const struct mdesc ms[] = {
	    {"demo-a", A, true, 0xa, false, 2, true},
	    {"demo-b", B, false, 0xb, false, 2, true},
	};
	struct rig r;
	struct eo_reconcile_out out;
	json_t *pp = NULL;

	(void)state;
	for (int live_voter = 1; live_voter >= 0; live_voter--) {
		start(&r);
		world(&r, 3, ms, 2);
		rig_put(&r, RIG_PODS, pod(&ms[1], true)); /* labelled, member cached unmarked */
		store_member_status(&r, "demo-b", "isVoter", json_boolean(live_voter));
		eo_member_reconcile(&r.ctl, "default", "demo-b", &out);
		assert_false(out.error);
		assert_int_equal(fs_count(r.api, "GET", EO_PLURAL_MEMBERS, "demo-b", "", NULL), 1);
		if (live_voter) {
			assert_int_equal(fs_count(r.api, "PATCH", "pods", "demo-b", "", NULL), 0);
			assert_true(out.requeue_ms > 0);
		} else {
			assert_int_equal(fs_count(r.api, "PATCH", "pods", "demo-b", "", &pp), 1);
			assert_string_equal(patched_role(pp), "");
		}
		stop(&r);
	}
}

/*
 * The seed and a joining member are created under status.nextMemberName; the create retried
 * while the cache has not shown the first one yet collides (409) and makes no second one.
 */
static void test_creates_use_the_recorded_name(void **state)
{
	static const struct {
		const char *what;
		int target;
		bool bootstrapped;
		size_t n;
		struct mdesc ms[1];
		bool seed;
	} rows[] = {
	    {"seed", 1, false, 0, {{NULL}}, true},
	    {"joining member", 3, true, 1, {{"demo-a", A, true, 0xa, false, 2, true}}, false},
	};

	(void)state;
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct rig r;
		struct eo_reconcile_out out;
		json_t *post = NULL;
		const json_t *spec;
		char want[EO_PLAN_NAME_MAX];

		print_message("row: %s\n", rows[k].what);
		start(&r);
		if (rows[k].bootstrapped) {
			world(&r, rows[k].target, rows[k].ms, rows[k].n);
		} else {
			json_t *c = cluster(rows[k].target, false);

			rig_put(&r, RIG_SERVICES, eo_desired_headless_service(c));
			rig_put(&r, RIG_SERVICES, eo_desired_client_service(c));
			rig_put(&r, RIG_CLUSTERS, c);
		}
		snprintf(want, sizeof(want), "%s", next_name(&r));
		for (int i = 0; i < 3; i++) {
			eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
			assert_false(out.error);
			assert_int_equal(
			    fs_count(r.api, "POST", EO_PLURAL_MEMBERS, NULL, NULL, &post),
			    (size_t)i + 1);
			assert_string_equal(json_string_value(json_object_get(post, "name")), want);
			if (i > 0) /* the cache lags: a collision, come back soon */
				assert_true(out.requeue_ms > 0);
		}
		assert_int_equal(fs_size(r.api, EO_PLURAL_MEMBERS), rows[k].n + 1);
		spec = json_object_get(json_object_get(post, "body"), "spec");
		assert_int_equal(json_is_true(json_object_get(spec, "bootstrap")), rows[k].seed);
		stop(&r);
	}
}

/*
 * A roll restarts a member of three through the Eviction API, never a bare DELETE: POST
 * pods/<member>/eviction with the Pod's UID as a precondition. When the PodDisruptionBudget
 * allows no disruption (a node drain took it first) the apiserver answers 429: the pass is
 * no error, it comes back later, and an EvictionRefused Event says why.
 */
static void test_roll_restart_evicts(void **state)
{
	struct rig r;
	struct eo_reconcile_out out = {0};
	json_t *ev = NULL, *pdb = NULL, *e = NULL;
	const char *pre;
	size_t i;
	bool refused = false;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		start(&r);
		fs_refuse_evictions(r.api, pass == 1);
		/* The Pods carry no Pod hash: each runs other than the desired Pod, a roll. */
		world(&r, 3, ready3, 3);
		e = eo_kube_cache_get(r.caches[RIG_PDBS], "default", "demo");
		assert_non_null(e);
		pdb = json_deep_copy(e);
		json_decref(e);
		json_object_set_new(
		    pdb, "status",
		    json_pack("{s:i, s:i}", "observedGeneration", 0, "disruptionsAllowed", 1));
		rig_put(&r, RIG_PDBS, pdb);
		for (int k = 0;
		     k < 4 && fs_count(r.api, "POST", "pods", NULL, "eviction", NULL) == 0; k++) {
			eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
			assert_false(out.error);
		}
		assert_int_equal(fs_count(r.api, "POST", "pods", NULL, "eviction", &ev), 1);
		assert_string_equal(json_string_value(json_object_get(ev, "name")), "demo-b");
		pre = json_string_value(json_object_get(
		    json_object_get(json_object_get(body_of(ev), "deleteOptions"), "preconditions"),
		    "uid"));
		assert_non_null(pre);
		assert_string_equal(pre, "pod-uid-demo-b");
		assert_string_equal(json_string_value(json_object_get(body_of(ev), "kind")),
				    "Eviction");
		assert_int_equal(fs_count(r.api, "DELETE", "pods", NULL, "", NULL), 0);
		refused = false;
		json_array_foreach(fs_log(r.api), i, e)
		{
			const char *reason =
			    json_string_value(json_object_get(body_of(e), "reason"));

			if (strcmp(json_string_value(json_object_get(e, "plural")), "events") ==
				0 &&
			    reason != NULL && strcmp(reason, EO_PLAN_REASON_EVICTION_REFUSED) == 0)
				refused = true;
		}
		if (pass == 0) {
			assert_int_equal(fs_size(r.api, "pods"), 2); /* demo-b went */
			assert_false(refused);
		} else {
			assert_int_equal(fs_size(r.api, "pods"), 3); /* the budget kept it */
			assert_true(refused);
			assert_true(out.requeue_ms > 0);
		}
		stop(&r);
	}
}

/*
 * Quorum-loss recovery done (plan/forcenew.h): the status (ForceNewClusterDone) is written
 * first, with the resourceVersion the pass read, then the request annotation is removed with
 * a metadata-only merge patch; then the survivor's step mark goes.
 */
static void test_force_new_cluster_finish(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *c = NULL, *m = NULL, *copy = NULL, *e = NULL, *want = NULL;
	size_t i, at_status = SIZE_MAX, at_meta = SIZE_MAX;

	(void)state;
	start(&r);
	world(&r, 3, ready3, 3);
	c = eo_kube_cache_get(r.caches[RIG_CLUSTERS], "default", "demo");
	copy = json_deep_copy(c);
	json_decref(c);
	json_object_del(json_object_get(copy, "status"), "progressDeadline");
	json_object_set_new(json_object_get(copy, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-a"));
	rig_put(&r, RIG_CLUSTERS, copy);
	m = eo_kube_cache_get(r.caches[RIG_MEMBERS], "default", "demo-a");
	copy = json_deep_copy(m);
	json_decref(m);
	json_object_set_new(json_object_get(copy, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP, "forced"));
	rig_put(&r, RIG_MEMBERS, copy);

	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	json_array_foreach(fs_log(r.api), i, e)
	{
		if (strcmp(json_string_value(json_object_get(e, "method")), "PATCH") != 0 ||
		    strcmp(json_string_value(json_object_get(e, "plural")), EO_PLURAL_CLUSTERS) !=
			0)
			continue;
		if (strcmp(json_string_value(json_object_get(e, "sub")), "status") == 0)
			at_status = i;
		else
			at_meta = i;
	}
	assert_true(at_status != SIZE_MAX && at_meta != SIZE_MAX);
	assert_true(at_status < at_meta);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_CLUSTERS, "demo", "status", &e), 1);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(e, "body"), "metadata"), "resourceVersion")),
	    "10");
	{
		char *body = json_dumps(json_object_get(e, "body"), JSON_COMPACT);

		assert_non_null(body);
		assert_non_null(strstr(body, "ForceNewClusterDone"));
		free(body);
	}
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_CLUSTERS, "demo", "", &e), 1);
	want =
	    json_pack("{s:{s:{s:n}}}", "metadata", "annotations", EO_ANNOTATION_FORCE_NEW_CLUSTER);
	tu_assert_json_equal(json_object_get(e, "body"), want, "annotation removal");
	json_decref(want);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-a", "", NULL), 0);

	/* The apiserver dropped the annotation: the next pass drops the survivor's mark. */
	c = eo_kube_cache_get(r.caches[RIG_CLUSTERS], "default", "demo");
	copy = json_deep_copy(c);
	json_decref(c);
	json_object_del(json_object_get(copy, "metadata"), "annotations");
	rig_put(&r, RIG_CLUSTERS, copy);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-a", "", &e), 1);
	want = json_pack("{s:{s:{s:n}}}", "metadata", "annotations",
			 EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP);
	tu_assert_json_equal(json_object_get(e, "body"), want, "mark removal");
	json_decref(want);
	stop(&r);
}

/* A new EtcdCluster name (uid) with no status, 1 member of 3.6.11. */
static json_t *bare_cluster(const char *name, const char *uid)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i, s:s}, s:{s:i, s:s, s:{s:s, s:s}, "
			 "s:i}}",
			 "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdCluster", "metadata",
			 "name", name, "namespace", "default", "uid", uid, "generation", 1,
			 "resourceVersion", "5", "spec", "replicas", 1, "version", "3.6.11",
			 "storage", "size", "1Gi", "medium", "", "progressDeadlineSeconds", 600);
}

/* The body of the last logged request of this kind as compact JSON text (caller frees). */
static char *last_body(struct rig *r, const char *method, const char *plural, const char *name,
		       const char *sub)
{
	json_t *e = NULL;

	if (fs_count(r->api, method, plural, name, sub, &e) == 0)
		return NULL;
	return json_dumps(json_object_get(e, "body"), JSON_COMPACT);
}

/* Whether a Warning Event ForeignObject was posted about EtcdCluster name. */
static bool foreign_event_on(struct rig *r, const char *name)
{
	bool seen = false;
	size_t i;
	json_t *e;

	json_array_foreach(fs_log(r->api), i, e)
	{
		const json_t *b = json_object_get(e, "body");
		const char *io = json_string_value(
		    json_object_get(json_object_get(b, "involvedObject"), "name"));
		const char *reason = json_string_value(json_object_get(b, "reason"));
		const char *type = json_string_value(json_object_get(b, "type"));

		if (strcmp(json_string_value(json_object_get(e, "plural")), "events") == 0 &&
		    io != NULL && strcmp(io, name) == 0 && reason != NULL &&
		    strcmp(reason, "ForeignObject") == 0 && type != NULL &&
		    strcmp(type, "Warning") == 0)
			seen = true;
	}
	return seen;
}

/*
 * Clusters x-client and x in one namespace (review H2): x's client Service is named
 * x-client, which is x-client's headless Service. Reconciling x never patches, creates or
 * deletes Service x-client (before, x patched its selector to {cluster: x, role: voter} and
 * x-client patched it back, forever); x gets Available=False/ForeignObject naming the
 * Service and its controller, a Warning Event ForeignObject, no member, and comes back in
 * 30 s. Reconciling x-client meanwhile leaves its Service as it is.
 */
static void test_foreign_service_not_patched(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *xc = bare_cluster("x-client", "xc-uid");
	json_t *svc = eo_desired_headless_service(xc);
	json_t *have = NULL;
	char *txt = NULL;

	(void)state;
	start(&r);
	rig_put(&r, RIG_CLUSTERS, xc);
	rig_put(&r, RIG_CLUSTERS, bare_cluster("x", "x-uid"));
	rig_put(&r, RIG_SERVICES, svc);
	for (int i = 0; i < 3; i++) {
		eo_cluster_reconcile(&r.ctl, "default", "x", &out);
		assert_false(out.error);
		assert_int_equal(out.requeue_ms, EO_PLAN_REQUEUE_STEADY_MS);
		eo_cluster_reconcile(&r.ctl, "default", "x-client", &out);
	}
	assert_int_equal(fs_count(r.api, "PATCH", "services", "x-client", NULL, NULL), 0);
	assert_int_equal(fs_count(r.api, "DELETE", "services", "x-client", NULL, NULL), 0);
	assert_int_equal(fs_count(r.api, "POST", "services", "x-client", NULL, NULL), 0);
	assert_int_equal(fs_count(r.api, "POST", "services", "x", NULL, NULL), 0);
	assert_int_equal(fs_count(r.api, "POST", EO_PLURAL_MEMBERS, NULL, NULL, NULL), 0);
	have = fs_get(r.api, "services", "x-client");
	assert_non_null(have);
	txt = json_dumps(json_object_get(json_object_get(have, "spec"), "selector"), JSON_COMPACT);
	assert_string_equal(txt, "{\"" EO_LABEL_CLUSTER "\":\"x-client\"}");
	free(txt);
	json_decref(have);

	/* The status of x says so (the fake store keeps no status: each pass writes it). */
	assert_true(fs_count(r.api, "PATCH", EO_PLURAL_CLUSTERS, "x", "status", NULL) >= 1);
	txt = last_body(&r, "PATCH", EO_PLURAL_CLUSTERS, "x", "status");
	assert_non_null(txt);
	assert_non_null(strstr(txt, "\"reason\":\"ForeignObject\""));
	assert_non_null(strstr(txt, "Service x-client is not controlled by this EtcdCluster (its "
				    "controller: EtcdCluster x-client, uid xc-uid)"));
	free(txt);
	assert_true(foreign_event_on(&r, "x"));
	assert_false(foreign_event_on(&r, "x-client"));
	stop(&r);
}

static size_t ingress_rules(const json_t *e)
{
	return json_array_size(
	    json_object_get(json_object_get(json_object_get(e, "body"), "spec"), "ingress"));
}

/*
 * Every cluster gets its peer-only NetworkPolicy demo.peer (issue 21 item 2), in an order
 * that never closes the client port: with spec.networkPolicy on, the cluster's own policy is
 * created before the peer policy, which then carries the peer rule only; turned off, the
 * peer policy is opened (peer, client and metrics rules) before the cluster's own policy is
 * deleted. Without a policy of its own, the peer policy is created open.
 */
static void test_network_policies_in_order(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *opl = json_pack("{s:s}", "app.kubernetes.io/name", "etcd-operator");
	struct eo_netpol_opts o = {.operator_namespace = "etcd-operator-system",
				   .operator_labels = opl};
	json_t *c = bare_cluster("demo", "c-uid"), *e = NULL, *other = NULL;
	size_t mark, at_full, at_peer;

	(void)state;
	start(&r);
	r.ctl.netpol = &o;
	r.ctl.peer_netpol = true;
	json_object_set_new(json_object_get(c, "spec"), "networkPolicy",
			    json_pack("{s:b}", "enabled", 1));
	rig_put(&r, RIG_CLUSTERS, json_incref(c));
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	at_full = fs_find(r.api, 0, "POST", "networkpolicies", "demo", NULL);
	at_peer = fs_find(r.api, 0, "POST", "networkpolicies", "demo.peer", NULL);
	assert_true(at_full != SIZE_MAX && at_peer != SIZE_MAX);
	assert_true(at_full < at_peer);
	assert_int_equal(fs_count(r.api, "POST", "networkpolicies", "demo.peer", NULL, &e), 1);
	assert_int_equal(ingress_rules(e), 1);

	/* turned off, both in place */
	rig_put(&r, RIG_NETPOLS, eo_desired_network_policy(c, &o));
	rig_put(&r, RIG_NETPOLS, eo_desired_peer_network_policy(c, false));
	json_object_set_new(json_object_get(json_object_get(c, "spec"), "networkPolicy"), "enabled",
			    json_false());
	rig_put(&r, RIG_CLUSTERS, json_incref(c));
	mark = json_array_size(fs_log(r.api));
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	at_peer = fs_find(r.api, mark, "PATCH", "networkpolicies", "demo.peer", NULL);
	at_full = fs_find(r.api, mark, "DELETE", "networkpolicies", "demo", NULL);
	assert_true(at_full != SIZE_MAX && at_peer != SIZE_MAX);
	assert_true(at_peer < at_full);
	assert_int_equal(ingress_rules(fs_nth(r.api, at_peer)), 3);

	/* a cluster that never asked for a policy: the peer policy alone, open */
	other = bare_cluster("plain", "p-uid");
	rig_put(&r, RIG_CLUSTERS, other);
	eo_cluster_reconcile(&r.ctl, "default", "plain", &out);
	assert_int_equal(fs_count(r.api, "POST", "networkpolicies", "plain", NULL, NULL), 0);
	assert_int_equal(fs_count(r.api, "POST", "networkpolicies", "plain.peer", NULL, &e), 1);
	assert_int_equal(ingress_rules(e), 3);

	/* a cluster being adopted from the legacy operator gets it after the migration */
	other = bare_cluster("mig", "m-uid");
	json_object_set_new(json_object_get(other, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_MIGRATING, "true"));
	rig_put(&r, RIG_CLUSTERS, other);
	eo_cluster_reconcile(&r.ctl, "default", "mig", &out);
	assert_int_equal(fs_count(r.api, "POST", "networkpolicies", "mig.peer", NULL, NULL), 0);

	/* the operator runs without it: ours goes, nothing is created */
	other = bare_cluster("plain", "p-uid");
	r.ctl.peer_netpol = false;
	rig_put(&r, RIG_NETPOLS, eo_desired_peer_network_policy(other, true));
	json_decref(other);
	eo_cluster_reconcile(&r.ctl, "default", "plain", &out);
	assert_int_equal(fs_count(r.api, "DELETE", "networkpolicies", "plain.peer", NULL, NULL), 1);
	assert_int_equal(fs_count(r.api, "POST", "networkpolicies", "plain.peer", NULL, NULL), 1);
	json_decref(c);
	json_decref(opl);
	stop(&r);
}

/*
 * Force-new-cluster acts on the truth (issue 17 item 4): two members' PVCs lost their
 * managed-by label, so the PVC cache lacks them while the apiserver has them. The request
 * naming the third member is refused after live reads of every Pod and PVC: no member is
 * marked, no Pod deleted; the status says ForceNewClusterRefused. An apiserver error on one
 * of those reads stops the pass: nothing is written or deleted.
 */
static void test_force_new_cluster_reads_live(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *c = NULL, *copy = NULL, *e = NULL;
	char pvc_b[EO_NAME_MAX], pvc_c[EO_NAME_MAX];

	(void)state;
	start(&r);
	world(&r, 3, ready3, 3);
	for (size_t i = 0; i < 3; i++)
		set_member_status(&r, ready3[i].name, "dataVolumeUID",
				  json_pack("s+", "pvc-uid-", ready3[i].name));
	assert_int_equal(eo_name_member_pvc(pvc_b, sizeof(pvc_b), "demo-b"), 0);
	assert_int_equal(eo_name_member_pvc(pvc_c, sizeof(pvc_c), "demo-c"), 0);
	/* the label is gone: out of the cache, still in the apiserver */
	assert_int_equal(eo_kube_cache_remove(r.caches[RIG_PVCS], "default", pvc_b, NULL),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_cache_remove(r.caches[RIG_PVCS], "default", pvc_c, NULL),
			 EO_KUBE_OK);
	c = eo_kube_cache_get(r.caches[RIG_CLUSTERS], "default", "demo");
	copy = json_deep_copy(c);
	json_decref(c);
	json_object_del(json_object_get(copy, "status"), "progressDeadline");
	json_object_set_new(json_object_get(copy, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-a"));
	rig_put(&r, RIG_CLUSTERS, copy);

	/* An apiserver error on a live read: nothing decided, nothing written. */
	fs_fail(r.api, "GET", "persistentvolumeclaims", "data-demo-b", 500);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_true(out.error);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, NULL, NULL, NULL), 0);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_CLUSTERS, NULL, NULL, NULL), 0);
	assert_int_equal(fs_count(r.api, "DELETE", "pods", NULL, NULL, NULL), 0);

	/* The reads work: the PVCs are there, 0 of 3 lost, refused. */
	fs_fail(r.api, "GET", "persistentvolumeclaims", "data-demo-b", 0);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_true(fs_count(r.api, "GET", "persistentvolumeclaims", pvc_b, "", NULL) >= 1);
	assert_true(fs_count(r.api, "GET", "persistentvolumeclaims", pvc_c, "", NULL) >= 1);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, NULL, NULL, NULL), 0);
	assert_int_equal(fs_count(r.api, "DELETE", "pods", NULL, NULL, NULL), 0);
	assert_int_equal(fs_count(r.api, "DELETE", "persistentvolumeclaims", NULL, NULL, NULL), 0);
	assert_int_equal(fs_count(r.api, "DELETE", EO_PLURAL_MEMBERS, NULL, NULL, NULL), 0);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_CLUSTERS, "demo", "status", &e), 1);
	{
		char *body = json_dumps(json_object_get(e, "body"), JSON_COMPACT);

		assert_non_null(body);
		assert_non_null(strstr(body, "ForceNewClusterRefused"));
		assert_non_null(strstr(body, "0 of 3 voting member(s) lost their data"));
		assert_null(strstr(body, "QuorumLost"));
		free(body);
	}
	stop(&r);
}

/*
 * The data of b and c is really gone (their PVCs are not in the apiserver either). While b's
 * etcd still answers at its address, the request is refused (ForceNewClusterLostMemberAnswers);
 * once only the survivor answers, without a leader, it is marked "forcing".
 */
static void test_force_new_cluster_asks_every_member(void **state)
{
	const struct mdesc ms[] = {
	    {"demo-a", A, true, 0, false, 1, true},
	    {"demo-b", B, true, 0, false, 0, false},
	    {"demo-c", C, true, 0, false, 0, false},
	};
	struct rig r;
	struct eo_reconcile_out out;
	json_t *c = NULL, *copy = NULL, *e = NULL;
	char host[EO_DESIRED_URL_MAX];
	char *body = NULL;

	(void)state;
	start(&r);
	/* no member in the fake's list: every Status answer names no leader */
	world(&r, 3, ms, 3);
	for (size_t i = 0; i < 3; i++) {
		set_member_status(&r, ms[i].name, "memberID", json_sprintf("%zx", 0xa + i));
		set_member_status(&r, ms[i].name, "dataVolumeUID",
				  json_pack("s+", "pvc-uid-", ms[i].name));
	}
	eo_fake_etcd_set_down(r.etcd, host_of("demo-c", host, sizeof(host)), true);
	c = eo_kube_cache_get(r.caches[RIG_CLUSTERS], "default", "demo");
	copy = json_deep_copy(c);
	json_decref(c);
	json_object_del(json_object_get(copy, "status"), "progressDeadline");
	json_object_set_new(json_object_get(copy, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_FORCE_NEW_CLUSTER, "demo-a"));
	rig_put(&r, RIG_CLUSTERS, copy);

	/* b's etcd answers: refused, nothing marked. */
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, NULL, NULL, NULL), 0);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_CLUSTERS, "demo", "status", &e), 1);
	body = json_dumps(json_object_get(e, "body"), JSON_COMPACT);
	assert_non_null(body);
	assert_non_null(strstr(body, "ForceNewClusterLostMemberAnswers"));
	assert_non_null(strstr(body, "member demo-b counts as lost"));
	free(body);

	/* b stops answering: only the survivor answers, no leader: marked. */
	eo_fake_etcd_set_down(r.etcd, host_of("demo-b", host, sizeof(host)), true);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-a", "", &e), 1);
	body = json_dumps(json_object_get(e, "body"), JSON_COMPACT);
	assert_non_null(body);
	assert_non_null(strstr(body, "forcing"));
	free(body);
	assert_int_equal(fs_count(r.api, "DELETE", "pods", NULL, NULL, NULL), 0);
	stop(&r);
}

/* Sets the cluster's deletionPolicy, finalizers (our own when finalizer) and deletion mark. */
static void set_cluster(struct rig *r, const char *policy, bool finalizer, bool deleting)
{
	json_t *c = eo_kube_cache_get(r->caches[RIG_CLUSTERS], "default", "demo"), *copy, *md;

	assert_non_null(c);
	copy = json_deep_copy(c);
	json_decref(c);
	md = json_object_get(copy, "metadata");
	if (policy != NULL)
		json_object_set_new(json_object_get(copy, "spec"), "deletionPolicy",
				    json_string(policy));
	json_object_set_new(md, "finalizers",
			    finalizer
				? json_pack("[s, s]", "example.com/other", EO_FINALIZER_RETAIN_DATA)
				: json_pack("[s]", "example.com/other"));
	if (deleting)
		json_object_set_new(md, "deletionTimestamp", json_string("2026-06-02T10:00:00Z"));
	rig_put(r, RIG_CLUSTERS, copy);
}

/* Whether the finalizers of a logged patch body hold f; and that they kept the other one. */
static bool patch_holds(const json_t *e, const char *f)
{
	const json_t *fins =
	    json_object_get(json_object_get(json_object_get(e, "body"), "metadata"), "finalizers");
	bool found = false, other = false;
	size_t i;
	json_t *v;

	json_array_foreach(fins, i, v)
	{
		found |= strcmp(json_string_value(v), f) == 0;
		other |= strcmp(json_string_value(v), "example.com/other") == 0;
	}
	assert_true(other);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(e, "body"), "metadata"), "resourceVersion")),
	    "10");
	return found;
}

/*
 * deletionPolicy Retain: the finalizer is added to a live cluster; on deletion each member's
 * PVC loses its owner reference (merge patch with its resourceVersion; the labels are not
 * touched), the PVCs are read live, and only then the finalizer goes, with an Event naming
 * them; nothing is deleted and etcd is not asked to remove anyone. Delete (and no policy)
 * leaves the PVCs to garbage collection as before.
 */
static void test_retain_releases_pvcs_before_the_finalizer(void **state)
{
	static const char *const pvcs[] = {"data-demo-a", "data-demo-b", "data-demo-c"};
	struct rig r;
	struct eo_reconcile_out out;
	json_t *e = NULL, *have = NULL, *stored = NULL;
	size_t fin_at;

	(void)state;
	/* A live Retain cluster gets the finalizer. */
	start(&r);
	world(&r, 3, ready3, 3);
	set_cluster(&r, "Retain", false, false);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_CLUSTERS, "demo", "", &e), 1);
	assert_true(patch_holds(e, EO_FINALIZER_RETAIN_DATA));
	stop(&r);

	/* Being deleted: every PVC released, then the finalizer dropped. */
	start(&r);
	world(&r, 3, ready3, 3);
	set_cluster(&r, "Retain", true, true);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(fs_count(r.api, "PATCH", "persistentvolumeclaims", NULL, "", NULL), 3);
	for (size_t i = 0; i < 3; i++) {
		const json_t *md;

		assert_int_equal(
		    fs_count(r.api, "PATCH", "persistentvolumeclaims", pvcs[i], "", &e), 1);
		md = json_object_get(json_object_get(e, "body"), "metadata");
		assert_true(json_is_null(json_object_get(md, "ownerReferences")));
		assert_string_equal(json_string_value(json_object_get(md, "resourceVersion")),
				    "40");
		assert_int_equal(json_object_size(md), 2);
		stored = rig_stored(&r, RIG_PVCS, pvcs[i]);
		have = json_object_get(stored, "metadata");
		assert_null(json_object_get(have, "ownerReferences"));
		assert_non_null(json_object_get(json_object_get(have, "labels"), EO_LABEL_CLUSTER));
		json_decref(stored);
		/* read live before the finalizer goes */
		assert_int_equal(
		    fs_count(r.api, "GET", "persistentvolumeclaims", pvcs[i], "", NULL), 1);
	}
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_CLUSTERS, "demo", "", &e), 1);
	assert_false(patch_holds(e, EO_FINALIZER_RETAIN_DATA));
	fin_at = fs_find(r.api, 0, "PATCH", EO_PLURAL_CLUSTERS, NULL, "");
	for (size_t i = 0; i < 3; i++) {
		size_t i_at = fs_find_last(r.api, "PATCH", NULL, pvcs[i], NULL);

		assert_true(i_at < fin_at);
	}
	assert_int_equal(fs_count(r.api, "POST", "events", NULL, NULL, &e), 4);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(e, "body"), "reason")),
	    "DataRetained");
	assert_non_null(
	    strstr(json_string_value(json_object_get(json_object_get(e, "body"), "message")),
		   "data-demo-a, data-demo-b, data-demo-c"));
	assert_int_equal(fs_count(r.api, "DELETE", "persistentvolumeclaims", NULL, NULL, NULL), 0);
	assert_int_equal(fs_count(r.api, "DELETE", EO_PLURAL_MEMBERS, NULL, NULL, NULL), 0);
	assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/remove"), 0);
	stop(&r);

	/* A stale cache (a PVC changed since): 409, nothing else sent, come back soon. */
	start(&r);
	world(&r, 3, ready3, 3);
	set_cluster(&r, "Retain", true, true);
	stored = rig_stored(&r, RIG_PVCS, "data-demo-a");
	json_object_set_new(json_object_get(stored, "metadata"), "resourceVersion",
			    json_string("45"));
	rig_store_put(&r, RIG_PVCS, stored);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_true(out.requeue_ms > 0);
	assert_int_equal(fs_count(r.api, "PATCH", "persistentvolumeclaims", NULL, "", NULL), 1);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_CLUSTERS, NULL, NULL, NULL), 0);
	stop(&r);

	/* Delete, and no policy: nothing patched, the PVCs go with the owner references. */
	for (int k = 0; k < 2; k++) {
		start(&r);
		world(&r, 3, ready3, 3);
		set_cluster(&r, k == 0 ? "Delete" : NULL, false, true);
		eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
		assert_false(out.error);
		assert_int_equal(
		    fs_count(r.api, "PATCH", "persistentvolumeclaims", NULL, NULL, NULL), 0);
		assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_CLUSTERS, "demo", "", NULL), 0);
		stop(&r);
	}
}

/* A Node whose Ready condition is ready since since (cache and store). */
static void put_node(struct rig *r, const char *name, const char *ready, const char *since)
{
	rig_put(r, RIG_NODES,
		json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:s, s:s}]}}", "apiVersion", "v1",
			  "kind", "Node", "metadata", "name", name, "uid", name, "status",
			  "conditions", "type", "Ready", "status", ready, "lastTransitionTime",
			  since));
}

/* Binds member name's Pod to node (cache and store). */
static void bind_pod(struct rig *r, const char *name, const char *node)
{
	json_t *p = eo_kube_cache_get(r->caches[RIG_PODS], "default", name), *copy;

	assert_non_null(p);
	copy = json_deep_copy(p);
	json_decref(p);
	json_object_set_new(copy, "spec", json_pack("{s:s}", "nodeName", node));
	rig_put(r, RIG_PODS, copy);
}

/*
 * A member whose node stays NotReady past spec.nodeLossGracePeriod: the cluster controller
 * reads the Node live before it deletes the EtcdMember; within the grace nothing is deleted.
 * Its finalizer removes it from etcd first, then force-deletes its Pod (gracePeriodSeconds 0:
 * no kubelet will confirm; UID precondition), then lets it go; the PVC is left to garbage
 * collection.
 */
static void test_node_lost_member_replaced(void **state)
{
	const struct mdesc ms[3] = {{"demo-a", A, true, 0xa, false, 2, true},
				    {"demo-b", B, true, 0xb, false, 1, true},
				    {"demo-c", C, true, 0xc, false, 2, true}};
	struct rig r;
	struct eo_reconcile_out out;
	json_t *del = NULL;

	(void)state;
	for (int past = 0; past < 2; past++) {
		start(&r);
		world(&r, 3, ms, 3);
		put_node(&r, "n0", "True", "2026-06-01T00:00:00Z");
		put_node(&r, "n1", "Unknown",
			 past ? "2026-06-02T09:50:00Z" : "2026-06-02T09:59:00Z");
		put_node(&r, "n2", "True", "2026-06-01T00:00:00Z");
		bind_pod(&r, "demo-a", "n0");
		bind_pod(&r, "demo-b", "n1");
		bind_pod(&r, "demo-c", "n2");
		eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
		assert_false(out.error);
		if (!past) {
			assert_int_equal(
			    fs_count(r.api, "DELETE", EO_PLURAL_MEMBERS, NULL, "", NULL), 0);
			assert_int_equal(fs_count(r.api, "GET", "nodes", NULL, "", NULL), 0);
			stop(&r);
			continue;
		}
		assert_true(fs_count(r.api, "GET", "nodes", "n1", "", NULL) >= 1);
		assert_int_equal(fs_count(r.api, "DELETE", EO_PLURAL_MEMBERS, NULL, "", &del), 1);
		assert_string_equal(json_string_value(json_object_get(del, "name")), "demo-b");
		assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/remove"), 0);

		mark_deleting(&r, "demo-b");
		eo_member_reconcile(&r.ctl, "default", "demo-b", &out);
		assert_false(out.error);
		assert_int_equal(eo_fake_etcd_count(r.etcd, "cluster/member/remove"), 1);
		assert_int_equal(fs_count(r.api, "DELETE", "pods", "demo-b", "", &del), 1);
		assert_int_equal(json_integer_value(json_object_get(json_object_get(del, "body"),
								    "gracePeriodSeconds")),
				 0);
		assert_true(json_is_integer(
		    json_object_get(json_object_get(del, "body"), "gracePeriodSeconds")));
		/* ... only after etcd had removed the member */
		assert_int_equal(json_integer_value(json_object_get(del, "removes")), 1);
		/* Its PVC goes by garbage collection with the EtcdMember, never by the operator. */
		assert_int_equal(
		    fs_count(r.api, "DELETE", "persistentvolumeclaims", NULL, "", NULL), 0);
		assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-b", "", NULL),
				 1);
		/* The Pods of members on live nodes are left to the garbage collector. */
		assert_int_equal(fs_count(r.api, "DELETE", "pods", "demo-a", "", NULL), 0);
		stop(&r);
	}
}

/*
 * A member on a statically bound local PV (its PVC has no selected-node annotation) whose node
 * was deleted: its Pod, recreated, is not bound to a node, and only the PV's node affinity
 * names the node. The cluster controller reads the PV live (get persistentvolumes), finds the
 * node gone past the grace, reads it live (404) and removes the member.
 */
static void test_node_of_static_local_pv(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	json_t *pod = NULL, *claim = NULL, *del = NULL;
	char pvc_name[EO_NAME_MAX];

	(void)state;
	start(&r);
	world(&r, 3, ready3, 3);
	put_node(&r, "n0", "True", "2026-06-01T00:00:00Z");
	put_node(&r, "n2", "True", "2026-06-01T00:00:00Z");
	bind_pod(&r, "demo-a", "n0");
	bind_pod(&r, "demo-c", "n2");
	pod = eo_kube_cache_get(r.caches[RIG_PODS], "default", "demo-b");
	assert_non_null(pod);
	json_object_set_new(pod, "spec", json_object());
	json_object_set_new(pod, "status",
			    json_pack("{s:s, s:[{s:s, s:s, s:s}]}", "phase", "Pending",
				      "conditions", "type", "Ready", "status", "False",
				      "lastTransitionTime", "2026-06-02T09:40:00Z"));
	rig_put(&r, RIG_PODS, pod);
	assert_int_equal(eo_name_member_pvc(pvc_name, sizeof(pvc_name), "demo-b"), 0);
	claim = eo_kube_cache_get(r.caches[RIG_PVCS], "default", pvc_name);
	assert_non_null(claim);
	json_object_set_new(claim, "spec", json_pack("{s:s}", "volumeName", "local-pv-b"));
	rig_put(&r, RIG_PVCS, claim);
	fs_put(r.api, "persistentvolumes",
	       json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}}",
			 "apiVersion", "v1", "kind", "PersistentVolume", "metadata", "name",
			 "local-pv-b", "spec", "nodeAffinity", "required", "nodeSelectorTerms",
			 "matchExpressions", "key", "kubernetes.io/hostname", "operator", "In",
			 "values", "n1"));

	for (int i = 0; i < 4 && fs_count(r.api, "DELETE", EO_PLURAL_MEMBERS, NULL, "", NULL) == 0;
	     i++) {
		eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
		assert_false(out.error);
	}
	assert_true(fs_count(r.api, "GET", "persistentvolumes", "local-pv-b", "", NULL) >= 1);
	assert_true(fs_count(r.api, "GET", "nodes", "n1", "", NULL) >= 1);
	assert_int_equal(fs_count(r.api, "DELETE", EO_PLURAL_MEMBERS, NULL, "", &del), 1);
	assert_string_equal(json_string_value(json_object_get(del, "name")), "demo-b");
	stop(&r);
}

/*
 * Pause (spec.replicas 0) with one member left: act_dormant patches spec.dormant onto that
 * member, as a plain merge patch of the EtcdMember (not its status), and tells a Paused
 * Event; nothing is deleted. The model of a new act rule's test on the rig (support/rig.h).
 */
static void test_pause_marks_the_last_member_dormant(void **state)
{
	const struct mdesc ms[] = {{"demo-a", A, true, 0xa, false, 2, true}};
	struct rig r;
	struct eo_reconcile_out out;
	json_t *e = NULL, *want = tu_json("{\"spec\":{\"dormant\":true}}");

	(void)state;
	start(&r);
	world(&r, 0, ms, 1);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_MEMBERS, "demo-a", "", &e), 1);
	tu_assert_json_equal(fs_body(e), want, "the dormant patch");
	assert_int_equal(fs_count(r.api, "POST", "events", NULL, NULL, &e), 1);
	assert_string_equal(json_string_value(json_object_get(fs_body(e), "reason")), "Paused");
	assert_int_equal(fs_count(r.api, "DELETE", EO_PLURAL_MEMBERS, NULL, NULL, NULL), 0);
	json_decref(want);
	stop(&r);
}

TU_MAIN(test_removal_goes_through_etcd_first, test_finalizer_stays_without_a_path_to_etcd,
	test_finalizer_absence_needs_the_leader, test_cluster_absence_needs_the_leader,
	test_pod_delete_carries_uid, test_promotion_marks_the_voter,
	test_other_cluster_is_not_acted_on, test_voter_mark_labels_the_pod,
	test_voter_label_kept_on_lagging_member_cache, test_creates_use_the_recorded_name,
	test_force_new_cluster_finish, test_roll_restart_evicts, test_foreign_service_not_patched,
	test_force_new_cluster_reads_live, test_force_new_cluster_asks_every_member,
	test_retain_releases_pvcs_before_the_finalizer, test_node_lost_member_replaced,
	test_node_of_static_local_pv, test_network_policies_in_order,
	test_pause_marks_the_last_member_dormant)
