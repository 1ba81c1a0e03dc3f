/*
 * Unit tests for the per-cluster gauges: obs/metrics.h's record/forget (what a sample does to
 * the exposition) and controller/cluster_metrics.h's sample (what each gauge says for a
 * cluster pass), plus etcd/tlscheck.h's notAfter reader that feeds the certificate gauge.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/cluster_metrics.h"
#include "etcd/tlscheck.h"
#include "kube/cache.h"
#include "obs/metrics.h"
#include "support/rig.h"
#include "support/testutil.h"

static char *render(struct eo_metrics *reg)
{
	char *page = NULL;
	size_t len = 0;

	assert_int_equal(eo_metrics_render(reg, &page, &len), 0);
	assert_non_null(page);
	return page;
}

static void test_record_keep_remove_forget(void **state)
{
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_cluster_metrics cm;
	struct eo_cluster_sample s = {0};
	char *page;

	(void)state;
	assert_int_equal(eo_cluster_metrics_init(&cm, reg), 0);
	eo_cluster_sample_set(&s, EO_CM_DESIRED_MEMBERS, 3);
	eo_cluster_sample_set(&s, EO_CM_READY_MEMBERS, 2);
	eo_cluster_sample_set(&s, EO_CM_CERT_EXPIRY, 1900000000);
	eo_cluster_metrics_record(&cm, "a", "c1", &s);
	eo_cluster_metrics_record(&cm, "b", "c1", &s);
	page = render(reg);
	assert_non_null(strstr(page, "# TYPE etcd_operator_cluster_desired_members gauge\n"
				     "etcd_operator_cluster_desired_members{namespace=\"a\","
				     "cluster=\"c1\"} 3\n"
				     "etcd_operator_cluster_desired_members{namespace=\"b\","
				     "cluster=\"c1\"} 3\n"));
	assert_non_null(strstr(page, "etcd_operator_cluster_certificate_expiry_timestamp_seconds{"
				     "namespace=\"a\",cluster=\"c1\"} 1.9e+09\n"));
	/* A family without series still says what it is. */
	assert_non_null(strstr(page, "# TYPE etcd_operator_cluster_learners gauge\n# HELP"));
	free(page);

	/* KEEP leaves a value, REMOVE drops it, SET moves it. */
	memset(&s, 0, sizeof(s));
	s.op[EO_CM_CERT_EXPIRY] = EO_CS_REMOVE;
	eo_cluster_sample_set(&s, EO_CM_READY_MEMBERS, 3);
	eo_cluster_metrics_record(&cm, "a", "c1", &s);
	page = render(reg);
	assert_non_null(strstr(page, "etcd_operator_cluster_desired_members{namespace=\"a\","
				     "cluster=\"c1\"} 3\n"));
	assert_non_null(strstr(page, "etcd_operator_cluster_ready_members{namespace=\"a\","
				     "cluster=\"c1\"} 3\n"));
	assert_null(strstr(page, "certificate_expiry_timestamp_seconds{namespace=\"a\""));
	assert_non_null(strstr(page, "certificate_expiry_timestamp_seconds{namespace=\"b\""));
	free(page);

	/* A deleted cluster leaves nothing; the same name elsewhere stays. */
	eo_cluster_metrics_forget(&cm, "a", "c1");
	page = render(reg);
	assert_null(strstr(page, "namespace=\"a\""));
	assert_non_null(strstr(page, "etcd_operator_cluster_ready_members{namespace=\"b\","
				     "cluster=\"c1\"} 2\n"));
	free(page);
	eo_metrics_free(reg);
}

static void test_operator_metrics_register_cluster_families(void **state)
{
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_operator_metrics om;
	char *page;

	(void)state;
	assert_int_equal(eo_operator_metrics_init(&om, reg, "v1"), 0);
	page = render(reg);
	for (size_t k = 0; k < EO_CLUSTER_METRIC_COUNT; k++) {
		char want[160];

		snprintf(want, sizeof(want), "# TYPE %s gauge\n", eo_cluster_metric_name(k));
		assert_non_null(strstr(page, want));
	}
	free(page);
	eo_metrics_free(reg);
}

/* ---- the sample of a pass ---- */

#define T0 ((time_t)1800000000) /* 2027-01-15T08:00:00Z, on the hour */

static json_t *member(const char *name, bool voter)
{
	return json_pack("{s:{s:s,s:s},s:{s:s},s:{s:b}}", "metadata", "name", name, "namespace",
			 "a", "spec", "clusterName", "c1", "status", "isVoter", voter);
}

static json_t *pod(const char *name, bool ready)
{
	return json_pack("{s:{s:s,s:s},s:{s:s,s:[{s:s,s:s}]}}", "metadata", "name", name,
			 "namespace", "a", "status", "phase", "Running", "conditions", "type",
			 "Ready", "status", ready ? "True" : "False");
}

static json_t *snapshot(const char *name, const char *cluster, const char *phase,
			const char *finished, json_int_t size)
{
	return json_pack(
	    "{s:{s:s,s:s},s:{s:{s:s}},s:{s:s,s:{s:I},s:[{s:s,s:s,s:s}]}}", "metadata", "name", name,
	    "namespace", "a", "spec", "clusterRef", "name", cluster, "status", "phase", phase,
	    "artifact", "sizeBytes", size, "conditions", "type", "Ready", "status",
	    strcmp(phase, "Complete") == 0 ? "True" : "False", "lastTransitionTime", finished);
}

static json_t *schedule(const char *cluster, const char *cron, const char *created, bool suspend)
{
	return json_pack("{s:{s:s,s:s,s:s},s:{s:{s:s},s:s,s:b}}", "metadata", "name", "s",
			 "namespace", "a", "creationTimestamp", created, "spec", "clusterRef",
			 "name", cluster, "schedule", cron, "suspend", suspend);
}

static void test_sample_running_cluster(void **state)
{
	json_t *cluster =
	    json_pack("{s:{s:s,s:s},s:{s:i},s:{s:i,s:[{s:s,s:s,s:s}]}}", "metadata", "name", "c1",
		      "namespace", "a", "spec", "replicas", 3, "status", "readyMembers", 1,
		      "conditions", "type", "NoSpace", "status", "True", "reason", "NoSpaceAlarm");
	json_t *planned = json_pack("{s:i}", "readyMembers", 2);
	json_t *ms[4] = {member("c1-a", true), member("c1-b", true), member("c1-c", true),
			 member("c1-d", false)};
	json_t *ps[4] = {pod("c1-a", true), pod("c1-b", true), pod("c1-c", false),
			 pod("c1-d", true)};
	struct eo_plan_member pm[4];
	struct eo_etcd_member em[4] = {
	    {.id = 1}, {.id = 2}, {.id = 3}, {.id = 4, .is_learner = true}};
	struct eo_etcd_members list = {.v = em, .n = 4};
	json_t *snaps =
	    json_pack("[o,o,o,o]", snapshot("s1", "c1", "Complete", "2027-01-15T07:00:00Z", 1000),
		      snapshot("s2", "c1", "Failed", "2027-01-15T07:30:00Z", 0),
		      snapshot("s3", "c2", "Complete", "2027-01-15T07:45:00Z", 5),
		      snapshot("s4", "c1", "Started", "2027-01-15T07:50:00Z", 0));
	struct eo_ctl_cluster_obs o;
	struct eo_cluster_sample s;

	(void)state;
	for (int i = 0; i < 4; i++)
		pm[i] = (struct eo_plan_member){.member = ms[i], .pod = ps[i]};
	o = (struct eo_ctl_cluster_obs){.cluster = cluster,
					.planned_status = planned,
					.members = pm,
					.n_members = 4,
					.etcd = &list,
					.snapshots = snaps,
					.now = T0 + 2 * 3600 + 300};
	eo_ctl_cluster_sample(&o, &s);
	assert_int_equal(s.op[EO_CM_DESIRED_MEMBERS], EO_CS_SET);
	assert_true(s.v[EO_CM_DESIRED_MEMBERS] == 3);
	/* The planned status wins over the cached one. */
	assert_true(s.v[EO_CM_READY_MEMBERS] == 2);
	assert_true(s.op[EO_CM_VOTERS] == EO_CS_SET && s.v[EO_CM_VOTERS] == 3);
	assert_true(s.op[EO_CM_HEALTHY_VOTERS] == EO_CS_SET && s.v[EO_CM_HEALTHY_VOTERS] == 2);
	assert_true(s.op[EO_CM_LEARNERS] == EO_CS_SET && s.v[EO_CM_LEARNERS] == 1);
	assert_true(s.op[EO_CM_NOSPACE_ALARM] == EO_CS_SET && s.v[EO_CM_NOSPACE_ALARM] == 1);
	/* Plaintext: no certificate gauge. */
	assert_int_equal(s.op[EO_CM_CERT_EXPIRY], EO_CS_REMOVE);
	/* s1 is the newest Complete one of c1 (s3 is c2's); s2, Failed, finished after it. */
	assert_true(s.op[EO_CM_LAST_SNAPSHOT_TIME] == EO_CS_SET &&
		    s.v[EO_CM_LAST_SNAPSHOT_TIME] == (double)(T0 - 3600));
	assert_true(s.v[EO_CM_LAST_SNAPSHOT_SIZE] == 1000);
	assert_true(s.op[EO_CM_LAST_SNAPSHOT_FAILED] == EO_CS_SET &&
		    s.v[EO_CM_LAST_SNAPSHOT_FAILED] == 1);

	/* A newer Complete snapshot clears the failure. */
	json_array_append_new(snaps, snapshot("s5", "c1", "Complete", "2027-01-15T07:40:00Z", 7));
	eo_ctl_cluster_sample(&o, &s);
	assert_true(s.v[EO_CM_LAST_SNAPSHOT_FAILED] == 0);
	assert_true(s.v[EO_CM_LAST_SNAPSHOT_SIZE] == 7);

	/* Without etcd's list this pass, the learners keep their last value. */
	o.etcd = NULL;
	eo_ctl_cluster_sample(&o, &s);
	assert_int_equal(s.op[EO_CM_LEARNERS], EO_CS_KEEP);

	for (int i = 0; i < 4; i++) {
		json_decref(ms[i]);
		json_decref(ps[i]);
	}
	json_decref(snaps);
	json_decref(planned);
	json_decref(cluster);
}

static void test_sample_paused_cluster_is_small(void **state)
{
	json_t *cluster = json_pack("{s:{s:s,s:s},s:{s:i}}", "metadata", "name", "idle",
				    "namespace", "a", "spec", "replicas", 0);
	json_t *empty = json_array();
	struct eo_ctl_cluster_obs o = {.cluster = cluster, .snapshots = empty, .now = T0};
	struct eo_cluster_sample s;
	size_t set = 0;

	(void)state;
	eo_ctl_cluster_sample(&o, &s);
	for (size_t k = 0; k < EO_CLUSTER_METRIC_COUNT; k++)
		set += s.op[k] == EO_CS_SET;
	/* Two series per idle cluster: desired and ready members (0 and 0). */
	assert_int_equal(set, 2);
	assert_true(s.op[EO_CM_DESIRED_MEMBERS] == EO_CS_SET && s.v[EO_CM_DESIRED_MEMBERS] == 0);
	assert_int_equal(s.op[EO_CM_VOTERS], EO_CS_REMOVE);
	assert_int_equal(s.op[EO_CM_LEARNERS], EO_CS_REMOVE);
	assert_int_equal(s.op[EO_CM_NOSPACE_ALARM], EO_CS_REMOVE);
	assert_int_equal(s.op[EO_CM_LAST_SNAPSHOT_TIME], EO_CS_REMOVE);
	json_decref(empty);
	json_decref(cluster);
}

static void test_schedule_last_slot(void **state)
{
	json_t *hourly = schedule("c1", "0 * * * *", "2027-01-15T05:10:00Z", false);
	json_t *suspended = schedule("c1", "0 * * * *", "2027-01-15T05:10:00Z", true);
	/* Daily at 02:00, created at 07:00 today: the last slot (02:00) predates it. */
	json_t *fresh = schedule("c1", "0 2 * * *", "2027-01-15T07:00:00Z", false);
	json_t *bad = schedule("c1", "not cron", "2027-01-15T05:10:00Z", false);
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_cluster_metrics cm;
	char *page;

	(void)state;
	assert_int_equal((long long)eo_ctl_schedule_last_slot(hourly, T0 + 2 * 3600 + 300),
			 (long long)(T0 + 2 * 3600));
	assert_int_equal((long long)eo_ctl_schedule_last_slot(suspended, T0), 0);
	assert_int_equal((long long)eo_ctl_schedule_last_slot(fresh, T0), 0);
	assert_int_equal((long long)eo_ctl_schedule_last_slot(bad, T0), 0);

	/* One series per schedule; 0 (suspended) or a deleted schedule removes it. */
	assert_int_equal(eo_cluster_metrics_init(&cm, reg), 0);
	eo_cluster_metrics_schedule(&cm, "a", "s", "c1", (double)T0);
	eo_cluster_metrics_schedule(&cm, "a", "t", "c1", (double)T0);
	eo_cluster_metrics_schedule(&cm, "b", "s", "c1", (double)T0);
	page = render(reg);
	assert_non_null(strstr(page, "etcd_operator_snapshot_schedule_last_slot_timestamp_seconds{"
				     "namespace=\"a\",cluster=\"c1\",schedule=\"s\"} 1.8e+09\n"));
	free(page);
	/* Moved to another cluster: the old series goes. */
	eo_cluster_metrics_schedule(&cm, "a", "s", "c2", (double)T0);
	eo_cluster_metrics_schedule(&cm, "a", "t", "c1", 0);
	eo_cluster_metrics_schedule_forget(&cm, "b", "s");
	page = render(reg);
	assert_null(strstr(page, "cluster=\"c1\",schedule=\"s\""));
	assert_null(strstr(page, "schedule=\"t\""));
	assert_null(strstr(page, "namespace=\"b\""));
	assert_non_null(strstr(page, "namespace=\"a\",cluster=\"c2\",schedule=\"s\"}"));
	free(page);
	/* A deleted cluster takes its schedules' series along. */
	eo_cluster_metrics_forget(&cm, "a", "c2");
	page = render(reg);
	assert_null(strstr(page, "schedule=\"s\"}"));
	free(page);
	eo_metrics_free(reg);
	json_decref(hourly);
	json_decref(suspended);
	json_decref(fresh);
	json_decref(bad);
}

static void test_sample_certificate_expiry(void **state)
{
	json_t *cluster = json_pack("{s:{s:s,s:s},s:{s:i,s:{s:{s:{s:s}}}}}", "metadata", "name",
				    "c1", "namespace", "a", "spec", "replicas", 1, "tls", "peer",
				    "secretRef", "name", "c1-peer");
	struct eo_ctl_cluster_obs o = {.cluster = cluster, .now = T0};
	struct eo_cluster_sample s;

	(void)state;
	/* A TLS cluster whose Secrets this pass could not read: keep the last value. */
	eo_ctl_cluster_sample(&o, &s);
	assert_int_equal(s.op[EO_CM_CERT_EXPIRY], EO_CS_KEEP);
	o.tls_loaded = true;
	o.cert_not_after = T0 + 86400;
	eo_ctl_cluster_sample(&o, &s);
	assert_true(s.op[EO_CM_CERT_EXPIRY] == EO_CS_SET &&
		    s.v[EO_CM_CERT_EXPIRY] == (double)(T0 + 86400));
	json_decref(cluster);
}

static void test_cert_not_after(void **state)
{
	FILE *f = fopen("test/unit/test_tls_data/server.pem", "rb");
	char buf[8192];
	size_t n;
	time_t t = 0;

	(void)state;
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_int_equal(eo_tls_cert_not_after(buf, n, &t), 0);
	/* openssl x509 -enddate: notAfter=Nov 20 02:26:06 2036 GMT */
	assert_int_equal((long long)t, 2110760766LL);
	assert_int_equal(eo_tls_cert_not_after("not a certificate", 17, &t), -1);
	assert_int_equal(eo_tls_cert_not_after(NULL, 0, &t), -1);
}

/* The cluster reconciler records its pass, and forgets a cluster that is gone. */
static void test_reconcile_records_and_forgets(void **state)
{
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_cluster_metrics cm;
	struct eo_reconcile_out out;
	struct rig r;
	char *page;

	(void)state;
	assert_int_equal(eo_cluster_metrics_init(&cm, reg), 0);
	rig_start(&r, T0);
	r.ctl.metrics = &cm;
	rig_put(&r, RIG_CLUSTERS,
		tu_json("{\"apiVersion\":\"etcd-operator.cozystack.io/v1alpha2\","
			"\"kind\":\"EtcdCluster\",\"metadata\":{\"name\":\"demo\","
			"\"namespace\":\"default\",\"uid\":\"uid-demo\",\"generation\":1},"
			"\"spec\":{\"replicas\":0,\"version\":\"3.6.11\"}}"));
	/* A schedule's snapshot carries the cluster label: the label index finds it. */
	{
		json_t *snap =
		    snapshot("demo-202701150700", "demo", "Complete", "2027-01-15T07:00:00Z", 4096);

		json_object_set_new(json_object_get(snap, "metadata"), "namespace",
				    json_string("default"));
		json_object_set_new(
		    json_object_get(snap, "metadata"), "labels",
		    json_pack("{s:s}", "etcd-operator.cozystack.io/cluster", "demo"));
		rig_put(&r, RIG_SNAPSHOTS, snap);
	}
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	page = render(reg);
	assert_non_null(strstr(page, "etcd_operator_cluster_last_snapshot_size_bytes{namespace="
				     "\"default\",cluster=\"demo\"} 4096\n"));
	assert_non_null(strstr(page, "etcd_operator_cluster_desired_members{namespace=\"default\","
				     "cluster=\"demo\"} 0\n"));
	assert_non_null(strstr(page, "etcd_operator_cluster_ready_members{namespace=\"default\","
				     "cluster=\"demo\"} 0\n"));
	free(page);

	assert_int_equal(eo_kube_cache_remove(r.caches[RIG_CLUSTERS], "default", "demo", NULL),
			 EO_KUBE_OK);
	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
	page = render(reg);
	assert_null(strstr(page, "cluster=\"demo\""));
	free(page);
	rig_stop(&r);
	eo_metrics_free(reg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_record_keep_remove_forget),
	    cmocka_unit_test(test_operator_metrics_register_cluster_families),
	    cmocka_unit_test(test_sample_running_cluster),
	    cmocka_unit_test(test_sample_paused_cluster_is_small),
	    cmocka_unit_test(test_schedule_last_slot),
	    cmocka_unit_test(test_sample_certificate_expiry),
	    cmocka_unit_test(test_cert_not_after),
	    cmocka_unit_test(test_reconcile_records_and_forgets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
