/*
 * Unit tests for the EtcdArchive's pure parts: the agent's /status parser
 * (plan/archive.c eo_aplan_parse_status), the decision table of eo_plan_archive (refusals,
 * the Deployment created, replaced on a hash change, a foreign one left alone, the poll and
 * the status it maps to, the lag threshold), the archiver Deployment
 * (desired/archive.c: owner, labels, Recreate, restricted Pod, args, TLS and auth
 * credentials as the snapshot Job has them) and api/archive.c's defaults and rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/archive.h"
#include "api/conditions.h"
#include "api/names.h"
#include "desired/archive.h"
#include "snapshot/contract.h"
#include "plan/archive.h"
#include "support/testutil.h"
#include "support/tu_main.h"

#define NOW 1790000000

static const char ARCHIVE[] =
    "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdArchive',"
    "'metadata':{'name':'arc','namespace':'ns','uid':'au','generation':2},"
    "'spec':{'clusterRef':{'name':'demo'},'destination':{'pvc':{'claimName':'backups',"
    "'subPath':'demo'}}}}";
static const char CLUSTER[] = "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2',"
			      "'kind':'EtcdCluster','metadata':{'name':'demo','namespace':'ns',"
			      "'uid':'cu'},'spec':{'replicas':1,'version':'3.6.11'}}";
static const char EPS[2][EO_DESIRED_URL_MAX] = {"http://demo-a.demo.ns.svc:2379",
						"http://demo-b.demo.ns.svc:2379"};
static const char STATUS_OK[] =
    "{\"clusterRevision\":120,\"archivedRevision\":118,\"lagRevisions\":2,\"lagSeconds\":3,"
    "\"lastUploadMs\":1790000000000,\"startedMs\":1789999000000,\"bases\":1,\"segments\":4,"
    "\"gaps\":0,\"error\":\"\",\"window\":{\"fromRevision\":10,\"fromMs\":1789999000000,"
    "\"toRevision\":118,\"toMs\":1789999999000}}";

static struct eo_aplan_input input(const json_t *a, const json_t *c)
{
	return (struct eo_aplan_input){.archive = a,
				       .cluster = c,
				       .endpoints = EPS,
				       .n_endpoints = 2,
				       .operator_image = "ghcr.io/x/etcd-operator:1",
				       .now = NOW};
}

static const char *cond(const json_t *st, const char *type)
{
	return eo_condition_reason(st, type);
}

/* ---- /status -------------------------------------------------------------------------- */

static void test_parse_status(void **state)
{
	struct eo_aplan_agent a;
	char err[256];
	static const char *bad[] = {
	    "[]",
	    "not json",
	    "{\"clusterRevision\":1}",
	    "{\"clusterRevision\":-1,\"archivedRevision\":0,\"lagRevisions\":0,\"lagSeconds\":0,"
	    "\"lastUploadMs\":0,\"gaps\":0}",
	    "{\"clusterRevision\":1,\"archivedRevision\":0,\"lagRevisions\":0,\"lagSeconds\":0,"
	    "\"lastUploadMs\":0,\"gaps\":0,\"window\":{\"fromRevision\":9,\"fromMs\":1,"
	    "\"toRevision\":8,\"toMs\":1}}",
	    "{\"clusterRevision\":1,\"archivedRevision\":0,\"lagRevisions\":0,\"lagSeconds\":0,"
	    "\"lastUploadMs\":0,\"gaps\":0,\"window\":{\"fromRevision\":1}}",
	};

	(void)state;
	assert_int_equal(eo_aplan_parse_status(STATUS_OK, strlen(STATUS_OK), &a, err, sizeof(err)),
			 0);
	assert_true(a.has_window);
	assert_int_equal(a.from_revision, 10);
	assert_int_equal(a.to_revision, 118);
	assert_int_equal(a.lag_seconds, 3);
	assert_int_equal(a.lag_revisions, 2);
	assert_string_equal(a.error, "");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(
		    eo_aplan_parse_status(bad[i], strlen(bad[i]), &a, err, sizeof(err)), -1);
		assert_true(err[0] != '\0');
		assert_false(a.has_window);
	}
	/* No window yet: parsed, has_window false. */
	{
		const char *s =
		    "{\"clusterRevision\":1,\"archivedRevision\":0,\"lagRevisions\":1,"
		    "\"lagSeconds\":0,\"lastUploadMs\":0,\"gaps\":0,\"error\":\"boom\"}";

		assert_int_equal(eo_aplan_parse_status(s, strlen(s), &a, err, sizeof(err)), 0);
		assert_false(a.has_window);
		assert_string_equal(a.error, "boom");
	}
}

/* ---- refusals ----------------------------------------------------------------------- */

static void refused(json_t *a, const json_t *c, bool foreign, const char *reason)
{
	json_t *dep = foreign ? tu_jsonq("{'metadata':{'name':'arc-archiver','ownerReferences':"
					 "[{'uid':'other','controller':true}]}}")
			      : NULL;
	struct eo_aplan_input in = input(a, c);
	struct eo_aplan_result r;

	in.deployment = dep;
	in.deployment_foreign = foreign;
	assert_int_equal(eo_plan_archive(&in, &r), 0);
	assert_int_equal(r.action, EO_APLAN_NONE);
	assert_null(r.deployment);
	assert_string_equal(cond(r.status, EO_COND_ARCHIVE_READY), reason);
	assert_string_equal(eo_condition_status(r.status, EO_COND_ARCHIVE_READY), EO_COND_FALSE);
	assert_string_equal(cond(r.status, EO_COND_LAG_WITHIN_THRESHOLD), EO_REASON_LAG_UNKNOWN);
	assert_true(r.status_changed);
	assert_string_equal(r.event_type, "Warning");
	assert_string_equal(r.event_reason, reason);
	eo_aplan_result_clear(&r);
	json_decref(dep);
}

static void test_refusals(void **state)
{
	json_t *a = tu_jsonq(ARCHIVE), *c = tu_jsonq(CLUSTER);
	json_t *s3 = tu_jsonq(ARCHIVE), *bad = tu_jsonq(ARCHIVE);

	(void)state;
	json_object_set_new(json_object_get(s3, "spec"), "destination",
			    tu_jsonq("{'s3':{'endpoint':'https://s3','bucket':'b',"
				     "'credentialsSecretRef':{'name':'k'}}}"));
	json_object_set_new(json_object_get(bad, "spec"), "retention", json_string("7 days"));
	refused(a, NULL, false, EO_REASON_ARCHIVE_CLUSTER_NOT_FOUND);
	refused(s3, c, false, EO_REASON_DESTINATION_UNSUPPORTED);
	refused(a, c, true, EO_REASON_FOREIGN_OBJECT);
	refused(bad, c, false, EO_REASON_INVALID_SPEC);
	json_decref(a);
	json_decref(c);
	json_decref(s3);
	json_decref(bad);
}

static void test_waiting_for_members(void **state)
{
	json_t *a = tu_jsonq(ARCHIVE), *c = tu_jsonq(CLUSTER);
	struct eo_aplan_input in = input(a, c);
	struct eo_aplan_result r;

	(void)state;
	in.n_endpoints = 0;
	assert_int_equal(eo_plan_archive(&in, &r), 0);
	assert_int_equal(r.action, EO_APLAN_NONE);
	assert_string_equal(cond(r.status, EO_COND_ARCHIVE_READY), EO_REASON_WAITING_FOR_MEMBERS);
	assert_int_equal(r.requeue_ms, EO_APLAN_STARTING_MS);
	eo_aplan_result_clear(&r);
	json_decref(a);
	json_decref(c);
}

/* ---- the Deployment ------------------------------------------------------------------- */

static void test_create_then_replace(void **state)
{
	json_t *a = tu_jsonq(ARCHIVE), *c = tu_jsonq(CLUSTER), *live;
	struct eo_aplan_input in = input(a, c);
	struct eo_aplan_result r, r2;

	(void)state;
	assert_int_equal(eo_plan_archive(&in, &r), 0);
	assert_int_equal(r.action, EO_APLAN_CREATE);
	assert_non_null(r.deployment);
	assert_string_equal(cond(r.status, EO_COND_ARCHIVE_READY), EO_REASON_ARCHIVER_STARTING);
	assert_null(r.event_type); /* starting is not a warning */

	/* The same Deployment live: nothing to do, the Pod is not ready yet. */
	live = json_deep_copy(r.deployment);
	json_object_set_new(json_object_get(live, "metadata"), "resourceVersion",
			    json_string("77"));
	in.deployment = live;
	assert_int_equal(eo_plan_archive(&in, &r2), 0);
	assert_int_equal(r2.action, EO_APLAN_NONE);
	assert_null(r2.deployment);
	assert_string_equal(cond(r2.status, EO_COND_ARCHIVE_READY), EO_REASON_ARCHIVER_STARTING);
	eo_aplan_result_clear(&r2);

	/* The archiver crashed and is not ready: Failing, with the tail of its log. */
	{
		json_t *pod = tu_jsonq(
		    "{'status':{'containerStatuses':[{'name':'archive-agent','ready':false,"
		    "'restartCount':3,'lastState':{'terminated':{'exitCode':1,'message':"
		    "'level=error msg=\\\"archiving stopped\\\" error=\\\"no space "
		    "left\\\"\\n'}}}]}}");

		in.pod = pod;
		assert_int_equal(eo_plan_archive(&in, &r2), 0);
		assert_string_equal(cond(r2.status, EO_COND_ARCHIVE_READY),
				    EO_REASON_ARCHIVER_FAILING);
		assert_non_null(strstr(r2.message, "code 1 (restarts: 3)"));
		assert_non_null(strstr(r2.message, "no space left"));
		assert_string_equal(r2.event_reason, EO_REASON_ARCHIVER_FAILING);
		eo_aplan_result_clear(&r2);
		/* Ready again after a restart: the old crash no longer counts. */
		json_object_set_new(
		    json_array_get(
			json_object_get(json_object_get(pod, "status"), "containerStatuses"), 0),
		    "ready", json_true());
		in.pod_ready = true;
		assert_int_equal(eo_plan_archive(&in, &r2), 0);
		assert_int_equal(r2.action, EO_APLAN_POLL);
		eo_aplan_result_clear(&r2);
		in.pod = NULL;
		in.pod_ready = false;
		json_decref(pod);
	}

	/* A spec change (a new retention) changes the hash: replaced, under the live rv. */
	json_object_set_new(json_object_get(a, "spec"), "retention", json_string("24h"));
	assert_int_equal(eo_plan_archive(&in, &r2), 0);
	assert_int_equal(r2.action, EO_APLAN_REPLACE);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(r2.deployment, "metadata"), "resourceVersion")),
			    "77");
	assert_string_not_equal(eo_desired_archiver_hash(r2.deployment),
				eo_desired_archiver_hash(live));
	eo_aplan_result_clear(&r2);

	eo_aplan_result_clear(&r);
	json_decref(live);
	json_decref(a);
	json_decref(c);
}

/* ---- the poll and the status ----------------------------------------------------------- */

static json_t *live_of(const json_t *a, const json_t *c)
{
	struct eo_aplan_input in = input(a, c);
	struct eo_aplan_result r;
	json_t *live;

	assert_int_equal(eo_plan_archive(&in, &r), 0);
	live = json_incref(r.deployment);
	eo_aplan_result_clear(&r);
	return live;
}

/* With the archiver's Deployment live and its Pod ready, an unpolled pass asks for a poll first. */
static void expect_poll(struct eo_aplan_input *in, const json_t *live)
{
	struct eo_aplan_result r;

	in->deployment = live;
	in->pod_ready = true;
	assert_int_equal(eo_plan_archive(in, &r), 0);
	assert_int_equal(r.action, EO_APLAN_POLL);
	assert_null(r.status);
	eo_aplan_result_clear(&r);
}

static void test_poll_and_status(void **state)
{
	json_t *a = tu_jsonq(ARCHIVE), *c = tu_jsonq(CLUSTER), *live = live_of(a, c), *w;
	struct eo_aplan_input in = input(a, c);
	struct eo_aplan_agent ag;
	struct eo_aplan_result r;
	char err[128];

	(void)state;
	expect_poll(&in, live);

	assert_int_equal(eo_aplan_parse_status(STATUS_OK, strlen(STATUS_OK), &ag, err, sizeof(err)),
			 0);
	in.polled = true;
	in.agent = &ag;
	assert_int_equal(eo_plan_archive(&in, &r), 0);
	assert_int_equal(r.action, EO_APLAN_NONE);
	assert_string_equal(eo_condition_status(r.status, EO_COND_ARCHIVE_READY), EO_COND_TRUE);
	assert_string_equal(cond(r.status, EO_COND_ARCHIVE_READY), EO_REASON_ARCHIVING);
	assert_string_equal(cond(r.status, EO_COND_LAG_WITHIN_THRESHOLD),
			    EO_REASON_LAG_WITHIN_THRESHOLD);
	w = tu_jsonq("{'fromRevision':10,'fromTime':'2026-09-21T13:56:40Z','toRevision':118,'"
		     "toTime':'2026-09-21T14:13:19Z'}");
	tu_assert_json_equal(json_object_get(r.status, "window"), w, "window");
	json_decref(w);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(r.status, "lag"), "seconds")), 3);
	assert_string_equal(json_string_value(json_object_get(r.status, "lastUploadTime")),
			    "2026-09-21T14:13:20Z");
	assert_string_equal(r.event_reason, EO_REASON_ARCHIVE_READY);

	/* Above the threshold (default 60 s): LagTooHigh, with a Warning. */
	json_object_set_new(a, "status", json_deep_copy(r.status));
	eo_aplan_result_clear(&r);
	ag.lag_seconds = 61;
	assert_int_equal(eo_plan_archive(&in, &r), 0);
	assert_string_equal(eo_condition_status(r.status, EO_COND_LAG_WITHIN_THRESHOLD),
			    EO_COND_FALSE);
	assert_string_equal(cond(r.status, EO_COND_LAG_WITHIN_THRESHOLD), EO_REASON_LAG_TOO_HIGH);
	assert_string_equal(r.event_type, "Warning");
	assert_string_equal(r.event_reason, EO_REASON_LAG_TOO_HIGH);
	assert_non_null(strstr(r.message, "61 s"));
	eo_aplan_result_clear(&r);

	/* A higher threshold: within again. */
	json_object_set_new(json_object_get(a, "spec"), "lagThresholdSeconds", json_integer(120));
	assert_int_equal(eo_plan_archive(&in, &r), 0);
	assert_string_equal(cond(r.status, EO_COND_LAG_WITHIN_THRESHOLD),
			    EO_REASON_LAG_WITHIN_THRESHOLD);
	eo_aplan_result_clear(&r);
	json_object_del(json_object_get(a, "spec"), "lagThresholdSeconds");

	/* No answer: Unreachable, the previous window kept, the lag Unknown. */
	in.agent = NULL;
	in.poll_error = "connection refused";
	assert_int_equal(eo_plan_archive(&in, &r), 0);
	assert_string_equal(cond(r.status, EO_COND_ARCHIVE_READY), EO_REASON_ARCHIVER_UNREACHABLE);
	assert_non_null(strstr(r.message, "connection refused"));
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(r.status, "window"), "toRevision")),
	    118);
	assert_string_equal(eo_condition_status(r.status, EO_COND_LAG_WITHIN_THRESHOLD),
			    EO_COND_UNKNOWN);
	assert_string_equal(r.event_reason, EO_REASON_ARCHIVER_UNREACHABLE);
	eo_aplan_result_clear(&r);

	/* The agent reports an error. */
	in.agent = &ag;
	snprintf(ag.error, sizeof(ag.error), "retention: disk full");
	assert_int_equal(eo_plan_archive(&in, &r), 0);
	assert_string_equal(cond(r.status, EO_COND_ARCHIVE_READY), EO_REASON_ARCHIVER_FAILING);
	assert_non_null(strstr(r.message, "disk full"));
	eo_aplan_result_clear(&r);

	/* Nothing changed since the last write: no status write, no Event. */
	ag.error[0] = '\0';
	ag.lag_seconds = 3;
	assert_int_equal(eo_plan_archive(&in, &r), 0);
	json_object_set_new(a, "status", json_deep_copy(r.status));
	eo_aplan_result_clear(&r);
	assert_int_equal(eo_plan_archive(&in, &r), 0);
	assert_false(r.status_changed);
	assert_null(r.event_type);
	eo_aplan_result_clear(&r);

	json_decref(live);
	json_decref(a);
	json_decref(c);
}

/* The cluster lost (not found, or no member left) while the archiver runs: its window keeps
 * being read into status, the reason stays the cluster's. */
static void test_cluster_gone_keeps_window(void **state)
{
	json_t *a = tu_jsonq(ARCHIVE), *c = tu_jsonq(CLUSTER), *live = live_of(a, c);
	struct eo_aplan_agent ag;
	char err[128];

	(void)state;
	json_object_set_new(
	    a, "status",
	    tu_jsonq("{'window':{'fromRevision':10,'fromTime':'2026-09-21T13:56:40Z',"
		     "'toRevision':50,'toTime':'2026-09-21T14:00:00Z'}}"));
	assert_int_equal(eo_aplan_parse_status(STATUS_OK, strlen(STATUS_OK), &ag, err, sizeof(err)),
			 0);
	for (int gone = 0; gone < 2; gone++) {
		struct eo_aplan_input in = input(a, gone == 0 ? NULL : c);
		const char *reason =
		    gone == 0 ? EO_REASON_ARCHIVE_CLUSTER_NOT_FOUND : EO_REASON_WAITING_FOR_MEMBERS;
		struct eo_aplan_result r;

		in.n_endpoints = 0;
		expect_poll(&in, live);

		in.polled = true;
		in.agent = &ag;
		assert_int_equal(eo_plan_archive(&in, &r), 0);
		assert_int_equal(r.action, EO_APLAN_NONE);
		assert_null(r.deployment);
		assert_string_equal(cond(r.status, EO_COND_ARCHIVE_READY), reason);
		assert_int_equal(json_integer_value(json_object_get(
				     json_object_get(r.status, "window"), "toRevision")),
				 118);
		assert_non_null(strstr(r.message, "recoverable from revision 10 to revision 118"));
		assert_true(r.status_changed);
		eo_aplan_result_clear(&r);

		/* No answer: the window written before is kept. */
		in.agent = NULL;
		in.poll_error = "connection refused";
		assert_int_equal(eo_plan_archive(&in, &r), 0);
		assert_string_equal(cond(r.status, EO_COND_ARCHIVE_READY), reason);
		assert_int_equal(json_integer_value(json_object_get(
				     json_object_get(r.status, "window"), "toRevision")),
				 50);
		eo_aplan_result_clear(&r);

		/* The archiver's Pod not ready: no poll, the window kept. */
		in.polled = false;
		in.pod_ready = false;
		assert_int_equal(eo_plan_archive(&in, &r), 0);
		assert_int_equal(r.action, EO_APLAN_NONE);
		assert_string_equal(cond(r.status, EO_COND_ARCHIVE_READY), reason);
		eo_aplan_result_clear(&r);
	}
	json_decref(live);
	json_decref(a);
	json_decref(c);
}

/* ---- desired --------------------------------------------------------------------------- */

static bool has_arg_pair(const json_t *args, const char *flag, const char *value)
{
	for (size_t i = 0; i + 1 < json_array_size(args); i++)
		if (strcmp(json_string_value(json_array_get(args, i)), flag) == 0 &&
		    strcmp(json_string_value(json_array_get(args, i + 1)), value) == 0)
			return true;
	return false;
}

static void test_desired_deployment(void **state)
{
	json_t *a = tu_jsonq(ARCHIVE), *c = tu_jsonq(CLUSTER), *d, *pod, *ctr, *args;
	json_t *tls = tu_jsonq(CLUSTER);

	(void)state;
	d = eo_desired_archiver(a, c, "img:1", NULL, EPS, 2);
	assert_non_null(d);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(d, "metadata"), "name")),
	    "arc-archiver");
	assert_true(eo_desired_is_controlled_by(d, "au"));
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(d, "metadata"), "labels"), EO_LABEL_ARCHIVE)),
	    "arc");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(d, "spec"), "replicas")), 1);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(json_object_get(d, "spec"), "strategy"), "type")),
			    "Recreate");
	pod = json_object_get(json_object_get(json_object_get(d, "spec"), "template"), "spec");
	tu_assert_restricted_pod_spec(pod, "archiver");
	assert_false(json_is_true(json_object_get(pod, "automountServiceAccountToken")));
	/* Its Pod is let in by the cluster's NetworkPolicy, and not behind its selectors. */
	{
		json_t *pl = json_object_get(
		    json_object_get(json_object_get(json_object_get(d, "spec"), "template"),
				    "metadata"),
		    "labels");

		assert_string_equal(json_string_value(json_object_get(pl, EO_LABEL_SNAPSHOT_OF)),
				    "demo");
		assert_null(json_object_get(pl, EO_LABEL_CLUSTER));
	}
	ctr = json_array_get(json_object_get(pod, "containers"), 0);
	args = json_object_get(ctr, "args");
	assert_string_equal(json_string_value(json_array_get(args, 0)), "archive-agent");
	assert_true(has_arg_pair(args, "--endpoint", EPS[0]));
	assert_true(has_arg_pair(args, "--endpoint", EPS[1]));
	assert_true(has_arg_pair(args, "--dir", "/snapshot/data/demo"));
	assert_true(has_arg_pair(args, "--segment-seconds", "5"));
	assert_true(has_arg_pair(args, "--segment-bytes", "8388608"));
	assert_true(has_arg_pair(args, "--status-addr", ":8086"));
	for (size_t i = 0; i < json_array_size(args); i++) {
		assert_string_not_equal(json_string_value(json_array_get(args, i)),
					"--retention-seconds");
		assert_string_not_equal(json_string_value(json_array_get(args, i)), "--cacert");
	}
	assert_null(json_object_get(ctr, "env"));
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(json_array_get(json_object_get(pod, "volumes"), 0),
						"persistentVolumeClaim"),
				"claimName")),
			    "backups");
	json_decref(d);

	/* Limits, retention; TLS with mTLS and auth: the snapshot Job's credentials. */
	json_object_set_new(json_object_get(a, "spec"), "segment",
			    tu_jsonq("{'maxSeconds':2,'maxBytes':'1Mi'}"));
	json_object_set_new(json_object_get(a, "spec"), "retention", json_string("1h30m"));
	json_object_set_new(json_object_get(tls, "spec"), "tls",
			    tu_jsonq("{'client':{'serverSecretRef':{'name':'srv'},"
				     "'operatorClientSecretRef':{'name':'cli'}}}"));
	json_object_set_new(
	    json_object_get(tls, "spec"), "auth",
	    tu_jsonq("{'enabled':true,'rootCredentialsSecretRef':{'name':'root'}}"));
	d = eo_desired_archiver(a, tls, "img:1", NULL, EPS, 1);
	assert_non_null(d);
	pod = json_object_get(json_object_get(json_object_get(d, "spec"), "template"), "spec");
	ctr = json_array_get(json_object_get(pod, "containers"), 0);
	args = json_object_get(ctr, "args");
	assert_true(has_arg_pair(args, "--segment-seconds", "2"));
	assert_true(has_arg_pair(args, "--segment-bytes", "1048576"));
	assert_true(has_arg_pair(args, "--retention-seconds", "5400"));
	assert_true(has_arg_pair(args, "--cacert", "/var/run/etcd-operator/etcd-ca/ca.crt"));
	assert_true(has_arg_pair(args, "--cert", "/var/run/etcd-operator/etcd-client/tls.crt"));
	assert_true(has_arg_pair(args, "--password-env", EO_SNAPSHOT_ENV_PASSWORD));
	{
		json_t *env = tu_jsonq("[{'name':'" EO_SNAPSHOT_ENV_PASSWORD "','valueFrom':"
				       "{'secretKeyRef':{'name':'root','key':'password'}}}]");

		tu_assert_json_equal(json_object_get(ctr, "env"), env, "env");
		json_decref(env);
	}
	json_decref(d);

	/*
	 * --pod-run-as-user=auto: no runAsUser, runAsGroup or fsGroup (the platform assigns them),
	 * the rest of the profile as before; the hash moves, so the Deployment is replaced.
	 */
	{
		struct eo_desired_opts o = {.pod_run_as_user = EO_DESIRED_POD_UID_AUTO};
		json_t *dd = eo_desired_archiver(a, c, "img:1", NULL, EPS, 2);
		json_t *da = eo_desired_archiver(a, c, "img:1", &o, EPS, 2);
		json_t *want =
		    tu_jsonq("{'runAsNonRoot':true,'fsGroupChangePolicy':'OnRootMismatch',"
			     "'seccompProfile':{'type':'RuntimeDefault'}}");

		pod = json_object_get(json_object_get(json_object_get(da, "spec"), "template"),
				      "spec");
		tu_assert_json_equal(json_object_get(pod, "securityContext"), want,
				     "archiver securityContext (auto)");
		tu_assert_restricted_pod_spec(pod, "archiver (auto user)");
		assert_string_not_equal(eo_desired_archiver_hash(dd), eo_desired_archiver_hash(da));
		json_decref(want);
		json_decref(da);
		json_decref(dd);
	}

	/* No pvc destination, no endpoint, no image: nothing built. */
	assert_null(eo_desired_archiver(a, c, "img:1", NULL, EPS, 0));
	assert_null(eo_desired_archiver(a, c, "", NULL, EPS, 2));
	json_object_set_new(json_object_get(a, "spec"), "destination",
			    tu_jsonq("{'s3':{'endpoint':'https://s3','bucket':'b',"
				     "'credentialsSecretRef':{'name':'k'}}}"));
	assert_null(eo_desired_archiver(a, c, "img:1", NULL, EPS, 2));
	json_decref(a);
	json_decref(c);
	json_decref(tls);
}

/* ---- api ------------------------------------------------------------------------------- */

static void test_api_defaults_and_rules(void **state)
{
	json_t *a = tu_jsonq(ARCHIVE);
	char msg[256];

	(void)state;
	assert_int_equal(eo_archive_segment_seconds(a), 5);
	assert_int_equal(eo_archive_segment_bytes(a), 8 << 20);
	assert_int_equal(eo_archive_retention_seconds(a), 0);
	assert_int_equal(eo_archive_lag_threshold_seconds(a), 60);
	assert_int_equal(eo_archive_validate(a, msg, sizeof(msg)), 0);
	json_object_set_new(json_object_get(a, "spec"), "segment", tu_jsonq("{'maxBytes':'1Ki'}"));
	assert_int_equal(eo_archive_validate(a, msg, sizeof(msg)), -1);
	assert_string_equal(msg, EO_MSG_ARCHIVE_SEGMENT_BYTES);
	assert_int_equal(eo_archive_segment_bytes(a), 8 << 20);
	json_object_set_new(json_object_get(a, "spec"), "segment", tu_jsonq("{'maxBytes':65536}"));
	assert_int_equal(eo_archive_segment_bytes(a), 65536);
	json_object_set_new(json_object_get(a, "spec"), "retention", json_string("1500ms"));
	assert_int_equal(eo_archive_retention_seconds(a), 2);
	json_object_set_new(json_object_get(a, "spec"), "destination", json_object());
	assert_int_equal(eo_archive_validate(a, msg, sizeof(msg)), -1);
	json_decref(a);
}

TU_MAIN(test_parse_status, test_refusals, test_waiting_for_members, test_create_then_replace,
	test_poll_and_status, test_cluster_gone_keeps_window, test_desired_deployment,
	test_api_defaults_and_rules)
