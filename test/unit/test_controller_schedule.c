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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/names.h"
#include "controller/controller.h"
#include "support/rig.h"
#include "support/testutil.h"
#include "support/tu_main.h"

#define T0 1780394420 /* 2026-06-02T10:00:20Z */

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
	json_t *body = NULL;
	struct rig r;

	(void)state;
	rig_start(&r, T0);
	rig_put(&r, RIG_SCHEDULES, schedule("{}", "{}"));
	eo_schedule_reconcile(&r.ctl, "default", "nightly", &out);
	assert_false(out.error);
	assert_int_equal(
	    fs_count_body(r.api, "POST", "etcdsnapshots", "nightly-202606021000", "", &body), 1);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_array_get(
		    json_object_get(json_object_get(body, "metadata"), "ownerReferences"), 0),
		"uid")),
	    "sch-uid");
	assert_int_equal(
	    fs_count_body(r.api, "PATCH", "etcdsnapshotschedules", "nightly", "status", &body), 1);
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
	json_t *body = NULL;
	struct rig r;

	(void)state;
	rig_start(&r, T0);
	rig_put(&r, RIG_SCHEDULES, schedule("{}", "{}"));
	rig_store_put(&r, RIG_SNAPSHOTS, snapshot("nightly-202606021000", "x", "someone-else"));
	eo_schedule_reconcile(&r.ctl, "default", "nightly", &out);
	assert_false(out.error);
	assert_int_equal(fs_count_body(r.api, "POST", "etcdsnapshots", NULL, NULL, NULL), 1);
	assert_int_equal(
	    fs_count_body(r.api, "GET", "etcdsnapshots", "nightly-202606021000", "", NULL), 1);
	assert_int_equal(fs_count_body(r.api, "DELETE", "etcdsnapshots", NULL, NULL, NULL), 0);
	assert_int_equal(
	    fs_count_body(r.api, "PATCH", "etcdsnapshotschedules", "nightly", "status", &body), 1);
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
	json_t *body = NULL;
	struct rig r;

	(void)state;
	rig_start(&r, T0);
	rig_put(&r, RIG_SCHEDULES, schedule("{}", "{}"));
	rig_store_put(&r, RIG_SNAPSHOTS, snapshot("nightly-202606021000", "x", "sch-uid"));
	eo_schedule_reconcile(&r.ctl, "default", "nightly", &out);
	assert_false(out.error);
	assert_int_equal(fs_count_body(r.api, "POST", "etcdsnapshots", NULL, NULL, NULL), 1);
	assert_int_equal(fs_size(r.api, NULL), 2);
	assert_int_equal(
	    fs_count_body(r.api, "PATCH", "etcdsnapshotschedules", "nightly", "status", &body), 1);
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
	json_t *body = NULL;
	struct rig r;
	json_t *snap = snapshot("nightly-202606021000", "x", "sch-uid");
	size_t i;
	json_t *e;

	(void)state;
	rig_start(&r, T0);
	json_object_del(json_object_get(json_object_get(snap, "metadata"), "labels"),
			"etcd-operator.cozystack.io/schedule");
	rig_put(&r, RIG_SCHEDULES, schedule("{}", "{}"));
	rig_put(&r, RIG_SNAPSHOTS, snap);
	eo_schedule_reconcile(&r.ctl, "default", "nightly", &out);
	assert_false(out.error);
	assert_int_equal(fs_count_body(r.api, "POST", "etcdsnapshots", NULL, NULL, NULL), 0);
	assert_int_equal(fs_count_body(r.api, "DELETE", "etcdsnapshots", NULL, NULL, NULL), 0);
	json_array_foreach(fs_log(r.api), i, e)
	{
		char *t = json_dumps(json_object_get(e, "body"), JSON_COMPACT);

		assert_null(t != NULL ? strstr(t, "SnapshotCreated") : NULL);
		free(t);
	}
	assert_int_equal(
	    fs_count_body(r.api, "PATCH", "etcdsnapshotschedules", "nightly", "status", &body), 1);
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
	json_t *body = NULL;
	struct rig r;
	char *s;

	(void)state;
	rig_start(&r, T0);
	/* The destination PVC, only in the apiserver (no cache holds PVCs a user made). */
	rig_store_put(
	    &r, RIG_PVCS,
	    tu_jsonq("{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':"
		     "'backups','namespace':'default','uid':'pvc-uid'}}"));
	rig_put(&r, RIG_SCHEDULES,
		schedule("{'keepLast':1}", "{'lastScheduleTime':'2026-06-02T10:00:00Z'}"));
	rig_put(&r, RIG_SNAPSHOTS,
		snapshot("nightly-202606020950", "2026-06-02T09:50:00Z", "sch-uid"));
	rig_put(&r, RIG_SNAPSHOTS,
		snapshot("nightly-202606020955", "2026-06-02T09:55:00Z", "sch-uid"));
	rig_put(&r, RIG_SNAPSHOTS,
		snapshot("nightly-202606021000", "2026-06-02T10:00:00Z", "sch-uid"));
	rig_put(&r, RIG_JOBS,
		tu_jsonq("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':"
			 "'nightly-202606020950-prune','namespace':'default','uid':'j1',"
			 "'ownerReferences':[{'kind':'EtcdSnapshot','name':'nightly-202606020950',"
			 "'uid':'uid-nightly-202606020950','controller':true}]},'status':{"
			 "'conditions':[{'type':'Complete','status':'True'}]}}"));
	eo_schedule_reconcile(&r.ctl, "default", "nightly", &out);
	assert_false(out.error);
	assert_int_equal(fs_count_body(r.api, "POST", "etcdsnapshots", NULL, NULL, NULL), 0);
	assert_int_equal(
	    fs_count_body(r.api, "DELETE", "etcdsnapshots", "nightly-202606020950", "", &body), 1);
	s = json_dumps(body, JSON_COMPACT);
	assert_non_null(strstr(s, "\"uid\":\"uid-nightly-202606020950\""));
	free(s);
	assert_int_equal(fs_count_body(r.api, "DELETE", "etcdsnapshots", NULL, NULL, NULL), 1);
	assert_int_equal(
	    fs_count_body(r.api, "POST", "jobs", "nightly-202606020955-prune", "", &body), 1);
	assert_int_equal(fs_count_body(r.api, "POST", "jobs", NULL, NULL, NULL), 1);
	assert_true(fs_count_body(r.api, "POST", "events", NULL, NULL, NULL) >= 1);
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
	json_t *body = NULL;
	struct rig r;
	char *s;

	(void)state;
	rig_start(&r, T0);
	rig_store_put(
	    &r, RIG_PVCS,
	    tu_jsonq("{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':"
		     "'backups','namespace':'default','uid':'pvc-uid','ownerReferences':[{"
		     "'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdMember',"
		     "'name':'other-abcde','uid':'m-uid','controller':true}]}}"));
	rig_put(&r, RIG_SCHEDULES,
		schedule("{'keepLast':1}", "{'lastScheduleTime':'2026-06-02T10:00:00Z'}"));
	rig_put(&r, RIG_SNAPSHOTS,
		snapshot("nightly-202606020955", "2026-06-02T09:55:00Z", "sch-uid"));
	rig_put(&r, RIG_SNAPSHOTS,
		snapshot("nightly-202606021000", "2026-06-02T10:00:00Z", "sch-uid"));
	eo_schedule_reconcile(&r.ctl, "default", "nightly", &out);
	assert_false(out.error);
	assert_int_equal(fs_count_body(r.api, "GET", "persistentvolumeclaims", "backups", "", NULL),
			 1);
	assert_int_equal(fs_count_body(r.api, "POST", "jobs", NULL, NULL, NULL), 0);
	assert_int_equal(fs_count_body(r.api, "DELETE", "etcdsnapshots", NULL, NULL, NULL), 0);
	assert_int_equal(
	    fs_count_body(r.api, "PATCH", "etcdsnapshotschedules", "nightly", "status", &body), 1);
	s = json_dumps(body, JSON_COMPACT);
	assert_non_null(strstr(s, "\"reason\":\"ForeignVolume\""));
	assert_non_null(strstr(s, "PVC backups is controlled by EtcdMember other-abcde"));
	free(s);
	assert_int_equal(fs_count_body(r.api, "POST", "events", NULL, NULL, &body), 1);
	s = json_dumps(body, JSON_COMPACT);
	assert_non_null(strstr(s, "\"reason\":\"ForeignVolume\""));
	free(s);
	rig_stop(&r);
}

TU_MAIN(test_creates_the_slot_snapshot, test_taken_name_is_left_alone,
	test_retry_after_crash_makes_no_second, test_prunes, test_prune_refuses_foreign_volume,
	test_unlabelled_snapshot_is_not_ours)
