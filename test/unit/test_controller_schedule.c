/*
 * Act-layer tests of controller/schedule.c against the fake apiserver: what the
 * EtcdSnapshotSchedule reconciler sends (create the slot's EtcdSnapshot, a taken name
 * looked up live and never overwritten, prune Jobs, deletes of pruned snapshots guarded by
 * their UID, the status patch).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/names.h"
#include "controller/controller.h"
#include "kube/cache.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/events.h"
#include "support/fake_apiserver.h"
#include "support/testutil.h"

#define T0 1780394420 /* 2026-06-02T10:00:20Z */

enum { SCH, SNAP, JOB, POD, N_CACHES };

struct rig {
	pthread_mutex_t mu;
	json_t *store; /* "plural/name" -> object */
	json_t *log;   /* [{method, plural, name, sub, body, query}] */
	eo_kube_fake *fake;
	eo_kube_config *cfg;
	eo_kube_client *kc;
	eo_kube_recorder *rec;
	eo_kube_cache *caches[N_CACHES];
	struct eo_controller ctl;
};

static void reply(struct eo_kube_fake_response *rs, int status, const json_t *o)
{
	rs->status = status;
	rs->body = json_dumps(o, JSON_COMPACT);
}

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct rig *r = ud;
	char path[1024], *seg[16], *save = NULL, key[512];
	size_t n = 0, ns_at = SIZE_MAX;
	const char *plural = "", *name = "", *sub = "";
	json_t *body = json_loads(rq->body, 0, NULL), *have;

	snprintf(path, sizeof(path), "%s", rq->path);
	for (char *t = strtok_r(path, "/", &save); t != NULL && n < 16;
	     t = strtok_r(NULL, "/", &save))
		seg[n++] = t;
	for (size_t i = 0; i < n; i++)
		if (strcmp(seg[i], "namespaces") == 0 && ns_at == SIZE_MAX)
			ns_at = i;
	if (ns_at != SIZE_MAX && ns_at + 2 < n)
		plural = seg[ns_at + 2];
	if (ns_at != SIZE_MAX && ns_at + 3 < n)
		name = seg[ns_at + 3];
	if (ns_at != SIZE_MAX && ns_at + 4 < n)
		sub = seg[ns_at + 4];
	if (strcmp(rq->method, "POST") == 0)
		name =
		    json_string_value(json_object_get(json_object_get(body, "metadata"), "name"));
	if (name == NULL)
		name = "";
	snprintf(key, sizeof(key), "%s/%s", plural, name);
	pthread_mutex_lock(&r->mu);
	have = json_object_get(r->store, key);
	json_array_append_new(r->log, json_pack("{s:s, s:s, s:s, s:s, s:O}", "method", rq->method,
						"plural", plural, "name", name, "sub", sub, "body",
						body ? body : json_null()));
	if (strcmp(plural, "events") == 0) {
		reply(rs, 201, body ? body : json_object());
	} else if (have == NULL && strcmp(rq->method, "POST") != 0) {
		rs->status = 404;
		rs->body = tu_status_body(404, "NotFound", "not found");
	} else if (strcmp(rq->method, "POST") == 0) {
		if (have != NULL) {
			rs->status = 409;
			rs->body = tu_status_body(409, "AlreadyExists", "already exists");
		} else {
			json_object_set(r->store, key, body);
			reply(rs, 201, body);
		}
	} else if (strcmp(rq->method, "DELETE") == 0) {
		json_object_del(r->store, key);
		rs->body = strdup("{\"kind\":\"Status\",\"status\":\"Success\"}");
	} else {
		reply(rs, 200, have); /* GET, PATCH */
	}
	pthread_mutex_unlock(&r->mu);
	json_decref(body);
}

static time_t frozen_now(void)
{
	return T0;
}

static int64_t frozen_ms(void *ud)
{
	(void)ud;
	return (int64_t)T0 * 1000;
}

static void rig_start(struct rig *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	r->store = json_object();
	r->log = json_array();
	r->fake = eo_kube_fake_start(handler, r);
	assert_non_null(r->fake);
	assert_int_equal(eo_kube_config_new(eo_kube_fake_url(r->fake), NULL, NULL, &r->cfg, NULL),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(r->cfg, NULL, &r->kc, NULL), EO_KUBE_OK);
	r->rec = eo_kube_recorder_new(r->kc, &(struct eo_kube_recorder_opts){.now_ms = frozen_ms});
	assert_non_null(r->rec);
	for (size_t i = 0; i < N_CACHES; i++) {
		r->caches[i] = eo_kube_cache_new(EO_LABEL_CLUSTER);
		assert_non_null(r->caches[i]);
	}
	r->ctl = (struct eo_controller){
	    .kc = r->kc,
	    .rec = r->rec,
	    .schedules = {{r->caches[SCH]}, 1},
	    .snapshots = {{r->caches[SNAP]}, 1},
	    .jobs = {{r->caches[JOB]}, 1},
	    .pods = {{r->caches[POD]}, 1},
	    .operator_image = "localhost/etcd-operator:dev",
	    .now = frozen_now,
	};
}

static void rig_stop(struct rig *r)
{
	eo_kube_recorder_free(r->rec);
	eo_kube_client_free(r->kc);
	eo_kube_fake_stop(r->fake);
	for (size_t i = 0; i < N_CACHES; i++)
		eo_kube_cache_free(r->caches[i]);
	json_decref(r->store);
	json_decref(r->log);
	pthread_mutex_destroy(&r->mu);
}

/* Puts o (stolen) into cache `which` (unless -1) and the apiserver's store. */
static void put(struct rig *r, int which, const char *plural, json_t *o)
{
	char key[512];

	assert_non_null(o);
	snprintf(key, sizeof(key), "%s/%s", plural,
		 json_string_value(json_object_get(json_object_get(o, "metadata"), "name")));
	if (which >= 0)
		assert_int_equal(eo_kube_cache_upsert(r->caches[which], o, NULL), EO_KUBE_OK);
	pthread_mutex_lock(&r->mu);
	json_object_set(r->store, key, o);
	pthread_mutex_unlock(&r->mu);
	json_decref(o);
}

/* Requests matching method, plural, name and sub (NULL = any); *last the last one's body. */
static size_t count(struct rig *r, const char *method, const char *plural, const char *name,
		    const char *sub, const json_t **last)
{
	size_t i, n = 0;
	json_t *e;

	json_array_foreach(r->log, i, e)
	{
		const char *m = json_string_value(json_object_get(e, "method"));
		const char *p = json_string_value(json_object_get(e, "plural"));
		const char *nm = json_string_value(json_object_get(e, "name"));
		const char *s = json_string_value(json_object_get(e, "sub"));

		if (strcmp(m, method) != 0 || strcmp(p, plural) != 0 ||
		    (name != NULL && strcmp(nm, name) != 0) || (sub != NULL && strcmp(s, sub) != 0))
			continue;
		n++;
		if (last != NULL)
			*last = json_object_get(e, "body");
	}
	return n;
}

static json_t *schedule(const char *retention, const char *status)
{
	char buf[2048];

	snprintf(
	    buf, sizeof(buf),
	    "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdSnapshotSchedule',"
	    "'metadata':{'name':'nightly','namespace':'default','uid':'sch-uid',"
	    "'resourceVersion':'7','creationTimestamp':'2026-06-01T00:00:00Z'},"
	    "'spec':{'clusterRef':{'name':'demo'},'schedule':'*/5 * * * *',"
	    "'destination':{'pvc':{'claimName':'backups'}},'retention':%s},'status':%s}",
	    retention, status);
	return tu_jsonq(buf);
}

static json_t *snapshot(const char *name, const char *slot, const char *owner_uid)
{
	char buf[2048];

	snprintf(
	    buf, sizeof(buf),
	    "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdSnapshot',"
	    "'metadata':{'name':'%s','namespace':'default','uid':'uid-%s',"
	    "'labels':{'etcd-operator.cozystack.io/schedule':'nightly'},"
	    "'annotations':{'etcd-operator.cozystack.io/scheduled-time':'%s'},"
	    "'ownerReferences':[{'apiVersion':'etcd-operator.cozystack.io/v1alpha2',"
	    "'kind':'EtcdSnapshotSchedule','name':'nightly','uid':'%s','controller':true}]},"
	    "'spec':{'clusterRef':{'name':'demo'},'destination':{'pvc':{'claimName':'backups'}}},"
	    "'status':{'phase':'Complete'}}",
	    name, name, slot, owner_uid);
	return tu_jsonq(buf);
}

static void test_creates_the_slot_snapshot(void **state)
{
	struct eo_reconcile_out out;
	const json_t *body = NULL;
	struct rig r;

	(void)state;
	rig_start(&r);
	put(&r, SCH, "etcdsnapshotschedules", schedule("{}", "{}"));
	eo_schedule_reconcile(&r.ctl, "default", "nightly", &out);
	assert_false(out.error);
	assert_int_equal(count(&r, "POST", "etcdsnapshots", "nightly-202606021000", "", &body), 1);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_array_get(
		    json_object_get(json_object_get(body, "metadata"), "ownerReferences"), 0),
		"uid")),
	    "sch-uid");
	assert_int_equal(count(&r, "PATCH", "etcdsnapshotschedules", "nightly", "status", &body),
			 1);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(body, "status"), "lastScheduleTime")),
	    "2026-06-02T10:00:00Z");
	assert_string_equal(json_string_value(json_object_get(json_object_get(body, "metadata"),
							      "resourceVersion")),
			    "7");
	assert_true(out.requeue_ms > 0 && out.requeue_ms <= 280500);
	rig_stop(&r);
}

/* The slot's name is held (the cache has not seen it): the live GET shows it is not ours;
 * nothing is overwritten or deleted, and Ready says why. */
static void test_taken_name_is_left_alone(void **state)
{
	struct eo_reconcile_out out;
	const json_t *body = NULL;
	struct rig r;

	(void)state;
	rig_start(&r);
	put(&r, SCH, "etcdsnapshotschedules", schedule("{}", "{}"));
	put(&r, -1, "etcdsnapshots", snapshot("nightly-202606021000", "x", "someone-else"));
	eo_schedule_reconcile(&r.ctl, "default", "nightly", &out);
	assert_false(out.error);
	assert_int_equal(count(&r, "POST", "etcdsnapshots", NULL, NULL, NULL), 1);
	assert_int_equal(count(&r, "GET", "etcdsnapshots", "nightly-202606021000", "", NULL), 1);
	assert_int_equal(count(&r, "DELETE", "etcdsnapshots", NULL, NULL, NULL), 0);
	assert_int_equal(count(&r, "PATCH", "etcdsnapshotschedules", "nightly", "status", &body),
			 1);
	{
		char *s = json_dumps(body, JSON_COMPACT);

		assert_non_null(strstr(s, "SnapshotNameTaken"));
		assert_null(strstr(s, "lastScheduleTime"));
		free(s);
	}
	rig_stop(&r);
}

/* Our own snapshot of the slot exists (a crash after the create): AlreadyExists + live GET
 * = ours, so only the status is recorded. */
static void test_retry_after_crash_makes_no_second(void **state)
{
	struct eo_reconcile_out out;
	const json_t *body = NULL;
	struct rig r;

	(void)state;
	rig_start(&r);
	put(&r, SCH, "etcdsnapshotschedules", schedule("{}", "{}"));
	put(&r, -1, "etcdsnapshots", snapshot("nightly-202606021000", "x", "sch-uid"));
	eo_schedule_reconcile(&r.ctl, "default", "nightly", &out);
	assert_false(out.error);
	assert_int_equal(count(&r, "POST", "etcdsnapshots", NULL, NULL, NULL), 1);
	assert_int_equal(r.store ? json_object_size(r.store) : 0, 2);
	assert_int_equal(count(&r, "PATCH", "etcdsnapshotschedules", "nightly", "status", &body),
			 1);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(body, "status"), "lastScheduleTime")),
	    "2026-06-02T10:00:00Z");
	rig_stop(&r);
}

/*
 * The slot's EtcdSnapshot is controlled by the schedule but lost its schedule label: the plan
 * does not count it as the schedule's (eo_schplan_owns), and neither may the act layer. It
 * used to create it again (AlreadyExists, "a retry") and announce a SnapshotCreated Event
 * for a snapshot it did not create.
 */
static void test_unlabelled_snapshot_is_not_ours(void **state)
{
	struct eo_reconcile_out out;
	const json_t *body = NULL;
	struct rig r;
	json_t *snap = snapshot("nightly-202606021000", "x", "sch-uid");
	size_t i;
	json_t *e;

	(void)state;
	rig_start(&r);
	json_object_del(json_object_get(json_object_get(snap, "metadata"), "labels"),
			"etcd-operator.cozystack.io/schedule");
	put(&r, SCH, "etcdsnapshotschedules", schedule("{}", "{}"));
	put(&r, SNAP, "etcdsnapshots", snap);
	eo_schedule_reconcile(&r.ctl, "default", "nightly", &out);
	assert_false(out.error);
	assert_int_equal(count(&r, "POST", "etcdsnapshots", NULL, NULL, NULL), 0);
	assert_int_equal(count(&r, "DELETE", "etcdsnapshots", NULL, NULL, NULL), 0);
	json_array_foreach(r.log, i, e)
	{
		char *t = json_dumps(json_object_get(e, "body"), JSON_COMPACT);

		assert_null(t != NULL ? strstr(t, "SnapshotCreated") : NULL);
		free(t);
	}
	assert_int_equal(count(&r, "PATCH", "etcdsnapshotschedules", "nightly", "status", &body),
			 1);
	{
		char *t = json_dumps(body, JSON_COMPACT);

		assert_non_null(strstr(t, "SnapshotNameTaken"));
		free(t);
	}
	rig_stop(&r);
}

/* keepLast 1 over three Complete snapshots: the oldest has a completed prune Job and is
 * deleted with its UID as precondition; the middle one gets its prune Job. */
static void test_prunes(void **state)
{
	struct eo_reconcile_out out;
	const json_t *body = NULL;
	struct rig r;
	char *s;

	(void)state;
	rig_start(&r);
	/* The destination PVC, only in the apiserver (no cache holds PVCs a user made). */
	put(&r, -1, "persistentvolumeclaims",
	    tu_jsonq("{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':"
		     "'backups','namespace':'default','uid':'pvc-uid'}}"));
	put(&r, SCH, "etcdsnapshotschedules",
	    schedule("{'keepLast':1}", "{'lastScheduleTime':'2026-06-02T10:00:00Z'}"));
	put(&r, SNAP, "etcdsnapshots",
	    snapshot("nightly-202606020950", "2026-06-02T09:50:00Z", "sch-uid"));
	put(&r, SNAP, "etcdsnapshots",
	    snapshot("nightly-202606020955", "2026-06-02T09:55:00Z", "sch-uid"));
	put(&r, SNAP, "etcdsnapshots",
	    snapshot("nightly-202606021000", "2026-06-02T10:00:00Z", "sch-uid"));
	put(&r, JOB, "jobs",
	    tu_jsonq("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':"
		     "'nightly-202606020950-prune','namespace':'default','uid':'j1',"
		     "'ownerReferences':[{'kind':'EtcdSnapshot','name':'nightly-202606020950',"
		     "'uid':'uid-nightly-202606020950','controller':true}]},'status':{"
		     "'conditions':[{'type':'Complete','status':'True'}]}}"));
	eo_schedule_reconcile(&r.ctl, "default", "nightly", &out);
	assert_false(out.error);
	assert_int_equal(count(&r, "POST", "etcdsnapshots", NULL, NULL, NULL), 0);
	assert_int_equal(count(&r, "DELETE", "etcdsnapshots", "nightly-202606020950", "", &body),
			 1);
	s = json_dumps(body, JSON_COMPACT);
	assert_non_null(strstr(s, "\"uid\":\"uid-nightly-202606020950\""));
	free(s);
	assert_int_equal(count(&r, "DELETE", "etcdsnapshots", NULL, NULL, NULL), 1);
	assert_int_equal(count(&r, "POST", "jobs", "nightly-202606020955-prune", "", &body), 1);
	assert_int_equal(count(&r, "POST", "jobs", NULL, NULL, NULL), 1);
	assert_true(count(&r, "POST", "events", NULL, NULL, NULL) >= 1);
	rig_stop(&r);
}

/*
 * The live read before a prune Job finds the destination PVC controlled by an EtcdMember (a
 * member's data): no prune Job, Pruned=False/ForeignVolume naming it, a Warning Event; the
 * snapshot whose prune Job already completed is still deleted.
 */
static void test_prune_refuses_foreign_volume(void **state)
{
	struct eo_reconcile_out out;
	const json_t *body = NULL;
	struct rig r;
	char *s;

	(void)state;
	rig_start(&r);
	put(&r, -1, "persistentvolumeclaims",
	    tu_jsonq("{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':"
		     "'backups','namespace':'default','uid':'pvc-uid','ownerReferences':[{"
		     "'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdMember',"
		     "'name':'other-abcde','uid':'m-uid','controller':true}]}}"));
	put(&r, SCH, "etcdsnapshotschedules",
	    schedule("{'keepLast':1}", "{'lastScheduleTime':'2026-06-02T10:00:00Z'}"));
	put(&r, SNAP, "etcdsnapshots",
	    snapshot("nightly-202606020955", "2026-06-02T09:55:00Z", "sch-uid"));
	put(&r, SNAP, "etcdsnapshots",
	    snapshot("nightly-202606021000", "2026-06-02T10:00:00Z", "sch-uid"));
	eo_schedule_reconcile(&r.ctl, "default", "nightly", &out);
	assert_false(out.error);
	assert_int_equal(count(&r, "GET", "persistentvolumeclaims", "backups", "", NULL), 1);
	assert_int_equal(count(&r, "POST", "jobs", NULL, NULL, NULL), 0);
	assert_int_equal(count(&r, "DELETE", "etcdsnapshots", NULL, NULL, NULL), 0);
	assert_int_equal(count(&r, "PATCH", "etcdsnapshotschedules", "nightly", "status", &body),
			 1);
	s = json_dumps(body, JSON_COMPACT);
	assert_non_null(strstr(s, "\"reason\":\"ForeignVolume\""));
	assert_non_null(strstr(s, "PVC backups is controlled by EtcdMember other-abcde"));
	free(s);
	assert_int_equal(count(&r, "POST", "events", NULL, NULL, &body), 1);
	s = json_dumps(body, JSON_COMPACT);
	assert_non_null(strstr(s, "\"reason\":\"ForeignVolume\""));
	free(s);
	rig_stop(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_creates_the_slot_snapshot),
	    cmocka_unit_test(test_taken_name_is_left_alone),
	    cmocka_unit_test(test_retry_after_crash_makes_no_second),
	    cmocka_unit_test(test_prunes),
	    cmocka_unit_test(test_prune_refuses_foreign_volume),
	    cmocka_unit_test(test_unlabelled_snapshot_is_not_ours),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
