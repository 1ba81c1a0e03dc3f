/*
 * Unit tests for plan/snapshot.c (the EtcdSnapshot planner, one table row per situation)
 * and desired/snapshot_job.c (the Job, compared with golden JSON in
 * test/unit/test_desired_golden/; EO_UPDATE_GOLDEN=1 rewrites them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/testutil.h"
#include "support/tu_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "desired/snapshot_job.h"
#include "plan/snapshot.h"

#define GOLDEN_DIR "test/unit/test_desired_golden/"
#define NOW	   1780000000 /* 2026-05-28T20:26:40Z */
#define HEX64	   "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const struct eo_desired_opts OPTS = {.etcd_image_repository = "quay.io/coreos/etcd",
					    .cluster_domain = "cluster.local"};
static const char *IMAGE = "localhost/etcd-operator:dev";

static json_t *load(const char *s)
{
	json_error_t e;
	json_t *j = json_loads(s, 0, &e);

	if (j == NULL)
		fail_msg("bad fixture JSON: %s: %s", e.text, s);
	return j;
}

static json_t *snapshot(const char *destination, const char *status)
{
	char buf[2048];

	snprintf(
	    buf, sizeof(buf),
	    "{\"apiVersion\":\"etcd-operator.cozystack.io/v1alpha2\",\"kind\":\"EtcdSnapshot\","
	    "\"metadata\":{\"name\":\"snap1\",\"namespace\":\"ns\",\"uid\":\"s-uid\","
	    "\"generation\":1},\"spec\":{\"clusterRef\":{\"name\":\"demo\"},"
	    "\"destination\":%s},\"status\":%s}",
	    destination, status);
	return load(buf);
}

#define DEST_S3                                                                                    \
	"{\"s3\":{\"endpoint\":\"http://minio.ns.svc:9000\",\"bucket\":\"b\",\"key\":\"demo\","    \
	"\"region\":\"us-east-1\",\"forcePathStyle\":true,\"insecure\":true,"                      \
	"\"credentialsSecretRef\":{\"name\":\"s3-creds\"}}}"
#define DEST_PVC "{\"pvc\":{\"claimName\":\"backups\",\"subPath\":\"demo/daily\"}}"

static json_t *cluster(int replicas)
{
	char buf[1024];

	snprintf(
	    buf, sizeof(buf),
	    "{\"apiVersion\":\"etcd-operator.cozystack.io/v1alpha2\",\"kind\":\"EtcdCluster\","
	    "\"metadata\":{\"name\":\"demo\",\"namespace\":\"ns\",\"uid\":\"c-uid\"},"
	    "\"spec\":{\"replicas\":%d,\"version\":\"3.6.11\",\"storage\":{\"size\":\"1Gi\"}}}",
	    replicas);
	return load(buf);
}

/* A member and its Pod: voter mark, Pod ready, Pod creation time (seconds). */
struct mspec {
	const char *name;
	bool voter, ready;
	int age;
};

static void make_members(const struct mspec *ms, size_t n, json_t *keep, struct eo_plan_member *out)
{
	for (size_t i = 0; i < n; i++) {
		char buf[1024];
		json_t *m, *p;

		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"u-%s\"},"
			 "\"spec\":{\"clusterName\":\"demo\"},\"status\":{\"isVoter\":%s}}",
			 ms[i].name, ms[i].name, ms[i].voter ? "true" : "false");
		m = load(buf);
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\","
			 "\"creationTimestamp\":\"2026-01-01T00:00:%02dZ\"},"
			 "\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\","
			 "\"status\":\"%s\"}]}}",
			 ms[i].name, ms[i].age, ms[i].ready ? "True" : "False");
		p = load(buf);
		json_array_append_new(keep, m);
		json_array_append_new(keep, p);
		out[i] = (struct eo_plan_member){.member = m, .pod = p};
	}
}

/* A Job in some state, and the Pods of it. */
enum jstate { J_NONE, J_CREATED, J_ACTIVE, J_COMPLETE, J_COMPLETE_OLD, J_FAILED };

static json_t *job(enum jstate s)
{
	const char *st = "{}";

	switch (s) {
	case J_ACTIVE:
		st = "{\"active\":1}";
		break;
	case J_COMPLETE:
		st = "{\"succeeded\":1,\"completionTime\":\"2026-05-28T20:26:30Z\","
		     "\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}";
		break;
	case J_COMPLETE_OLD:
		st = "{\"succeeded\":1,\"completionTime\":\"2026-05-28T20:00:00Z\","
		     "\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}";
		break;
	case J_FAILED:
		st = "{\"failed\":4,\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\","
		     "\"reason\":\"BackoffLimitExceeded\",\"message\":\"Job has reached the "
		     "specified backoff limit\"}]}";
		break;
	default:
		break;
	}
	if (s == J_NONE)
		return NULL;
	{
		char buf[1024];

		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"snap1-snapshot\",\"namespace\":\"ns\","
			 "\"uid\":\"j-uid\"},\"status\":%s}",
			 st);
		return load(buf);
	}
}

static json_t *agent_pod(int exit_code, const char *message)
{
	json_t *p =
	    load("{\"metadata\":{\"name\":\"snap1-snapshot-x\"},\"status\":{"
		 "\"containerStatuses\":[{\"name\":\"snapshot-agent\",\"state\":{"
		 "\"terminated\":{\"exitCode\":0,\"finishedAt\":\"2026-05-28T20:26:30Z\"}}}]}}");
	json_t *t = json_object_get(
	    json_object_get(
		json_array_get(json_object_get(json_object_get(p, "status"), "containerStatuses"),
			       0),
		"state"),
	    "terminated");

	json_object_set_new(t, "exitCode", json_integer(exit_code));
	json_object_set_new(t, "message", json_string(message));
	return p;
}

#define RESULT_LINE                                                                                \
	"{\"uri\":\"s3://b/demo/snap1.db\",\"sizeBytes\":20512,\"checksum\":\"sha256:" HEX64 "\"}"

struct row {
	const char *what;
	const char *dest, *status;
	int replicas; /* -1: no cluster */
	struct mspec members[4];
	size_t nmembers;
	enum jstate job;
	int pod_exit; /* -1: no Pod */
	const char *pod_message;
	bool confirmed_gone, foreign, no_image;
	bool vol_read;	 /* the destination PVC was read live */
	const char *vol; /* that PVC's JSON; NULL: the GET found none */
	/* expected */
	enum eo_splan_action action;
	const char *phase;  /* NULL: no status written */
	const char *reason; /* Ready's reason */
	const char *ready;  /* Ready's status */
	const char *event;  /* event type or NULL */
	const char *msg_has;
	bool artifact;
	const char *endpoints; /* comma-joined expected endpoints for CREATE_JOB */
};

/* A PVC destination, three ready voters: the live read of the PVC decides (plan/volref.h). */
#define PVC_ROW(w, v, act, ph, rs, ev, msg)                                                        \
	{                                                                                          \
		.what = w, .dest = DEST_PVC, .status = "{}", .replicas = 3,                        \
		.members = {{"demo-a", true, true, 10}}, .nmembers = 1, .vol_read = true,          \
		.vol = v, .action = act, .phase = ph, .reason = rs, .ready = "False", .event = ev, \
		.msg_has = msg, .endpoints = "http://demo-a.demo.ns.svc.cluster.local:2379"        \
	}
#define PVC_META(m) "{\"metadata\":{\"name\":\"backups\",\"namespace\":\"ns\"" m "}}"
#define OWNER(kind, name, uid, ctl)                                                                \
	",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"" kind "\",\"name\":\"" name      \
	"\",\"uid\":\"" uid "\",\"controller\":" ctl "}]"

static const struct row ROWS[] = {
    {.what = "complete is final",
     .dest = DEST_S3,
     .status = "{\"phase\":\"Complete\"}",
     .replicas = 3,
     .action = EO_SPLAN_NONE},
    {.what = "failed is final, even with a Job running",
     .dest = DEST_S3,
     .status = "{\"phase\":\"Failed\"}",
     .replicas = 3,
     .job = J_ACTIVE,
     .action = EO_SPLAN_NONE},
    {.what = "cluster missing",
     .dest = DEST_S3,
     .status = "{}",
     .replicas = -1,
     .action = EO_SPLAN_WAIT,
     .phase = "Pending",
     .reason = "ClusterNotFound",
     .ready = "False",
     .event = "Warning",
     .msg_has = "EtcdCluster demo does not exist"},
    {.what = "cluster paused",
     .dest = DEST_S3,
     .status = "{}",
     .replicas = 0,
     .action = EO_SPLAN_WAIT,
     .phase = "Pending",
     .reason = "ClusterPaused",
     .ready = "False",
     .event = "Warning",
     .msg_has = "paused"},
    {.what = "only a learner is ready: not ready, never snapshot a learner",
     .dest = DEST_S3,
     .status = "{}",
     .replicas = 3,
     .members = {{"demo-a", true, false, 1}, {"demo-b", false, true, 2}},
     .nmembers = 2,
     .action = EO_SPLAN_WAIT,
     .phase = "Pending",
     .reason = "ClusterNotReady",
     .ready = "False",
     .event = "Warning",
     .msg_has = "no voting member with a ready Pod"},
    {.what = "operator image missing",
     .dest = DEST_S3,
     .status = "{}",
     .replicas = 3,
     .members = {{"demo-a", true, true, 1}},
     .nmembers = 1,
     .no_image = true,
     .action = EO_SPLAN_WAIT,
     .phase = "Pending",
     .reason = "OperatorImageNotConfigured",
     .ready = "False",
     .event = "Warning",
     .msg_has = "OPERATOR_IMAGE"},
    {.what = "create the Job through the ready voters, oldest Pod first, no learner",
     .dest = DEST_S3,
     .status = "{}",
     .replicas = 3,
     .members = {{"demo-c", true, true, 30},
		 {"demo-a", true, true, 10},
		 {"demo-l", false, true, 5},
		 {"demo-b", true, false, 20}},
     .nmembers = 4,
     .action = EO_SPLAN_CREATE_JOB,
     .phase = "Started",
     .reason = "JobCreated",
     .ready = "False",
     .event = "Normal",
     .msg_has = "Job snap1-snapshot created",
     .endpoints = "http://demo-a.demo.ns.svc.cluster.local:2379,"
		  "http://demo-c.demo.ns.svc.cluster.local:2379"},
    {.what = "PVC destination: read live before the Job mounts it",
     .dest = DEST_PVC,
     .status = "{}",
     .replicas = 3,
     .members = {{"demo-a", true, true, 10}},
     .nmembers = 1,
     .action = EO_SPLAN_READ_VOLUME,
     .msg_has = "reading PVC backups"},
    PVC_ROW("PVC destination missing: wait, mount nothing", NULL, EO_SPLAN_WAIT, "Pending",
	    "VolumeNotFound", "Warning", "PVC backups does not exist"),
    PVC_ROW("another member's data PVC: refused",
	    PVC_META(OWNER("EtcdMember", "other-0", "m-uid", "true")), EO_SPLAN_NONE, "Failed",
	    "ForeignVolume", "Warning", "PVC backups is controlled by EtcdMember other-0"),
    PVC_ROW("an application's StatefulSet volume: refused",
	    PVC_META(OWNER("StatefulSet", "postgres", "ss-uid", "true")), EO_SPLAN_NONE, "Failed",
	    "ForeignVolume", "Warning", "controlled by StatefulSet postgres"),
    PVC_ROW("a retained member PVC (no owner, the cluster label): refused",
	    PVC_META(",\"labels\":{\"etcd-operator.cozystack.io/cluster\":\"other\"}"),
	    EO_SPLAN_NONE, "Failed", "ForeignVolume", "Warning",
	    "etcd-operator.cozystack.io/cluster=other"),
    PVC_ROW("a legacy etcd.aenix.io member PVC: refused",
	    PVC_META(",\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-operator\"}"),
	    EO_SPLAN_NONE, "Failed", "ForeignVolume", "Warning",
	    "app.kubernetes.io/managed-by=etcd-operator"),
    PVC_ROW("a plain PVC: the Job is created", PVC_META(""), EO_SPLAN_CREATE_JOB, "Started",
	    "JobCreated", "Normal", "Job snap1-snapshot created"),
    PVC_ROW("an owner that is not a controller: the Job is created",
	    PVC_META(OWNER("ConfigMap", "keep", "cm-uid", "false")), EO_SPLAN_CREATE_JOB, "Started",
	    "JobCreated", "Normal", "Job snap1-snapshot created"),
    PVC_ROW("controlled by this very snapshot: the Job is created",
	    PVC_META(OWNER("EtcdSnapshot", "snap1", "s-uid", "true")), EO_SPLAN_CREATE_JOB,
	    "Started", "JobCreated", "Normal", "Job snap1-snapshot created"),
    {.what = "Job created, no Pod running yet",
     .dest = DEST_S3,
     .status = "{\"phase\":\"Started\"}",
     .replicas = 3,
     .job = J_CREATED,
     .pod_exit = -1,
     .action = EO_SPLAN_WAIT,
     .phase = "Started",
     .reason = "JobCreated",
     .ready = "False"},
    {.what = "Job running",
     .dest = DEST_S3,
     .status = "{\"phase\":\"Started\"}",
     .replicas = 3,
     .job = J_ACTIVE,
     .pod_exit = -1,
     .action = EO_SPLAN_WAIT,
     .phase = "Started",
     .reason = "JobRunning",
     .ready = "False",
     .event = "Normal"},
    {.what = "Job complete: the artifact from the termination message",
     .dest = DEST_S3,
     .status = "{\"phase\":\"Started\"}",
     .replicas = 3,
     .job = J_COMPLETE,
     .pod_exit = 0,
     .pod_message = RESULT_LINE "\n",
     .action = EO_SPLAN_NONE,
     .phase = "Complete",
     .reason = "SnapshotStored",
     .ready = "True",
     .event = "Normal",
     .msg_has = "s3://b/demo/snap1.db (20512 bytes, sha256:",
     .artifact = true},
    {.what = "Job complete even with the cluster gone",
     .dest = DEST_PVC,
     .status = "{\"phase\":\"Started\"}",
     .replicas = -1,
     .job = J_COMPLETE,
     .pod_exit = 0,
     .pod_message = "some log line\n" RESULT_LINE,
     .action = EO_SPLAN_NONE,
     .phase = "Complete",
     .reason = "SnapshotStored",
     .ready = "True",
     .event = "Normal",
     .artifact = true},
    {.what = "Job complete, the Pod's result not in the cache yet",
     .dest = DEST_S3,
     .status = "{\"phase\":\"Started\"}",
     .replicas = 3,
     .job = J_COMPLETE,
     .pod_exit = -1,
     .action = EO_SPLAN_WAIT,
     .phase = "Started",
     .reason = "JobRunning",
     .ready = "False"},
    {.what = "Job complete long ago without a readable result",
     .dest = DEST_S3,
     .status = "{\"phase\":\"Started\"}",
     .replicas = 3,
     .job = J_COMPLETE_OLD,
     .pod_exit = 0,
     .pod_message = "{\"uri\":\"s3://b/x.db\",\"sizeBytes\":1,\"checksum\":\"md5:00\"}",
     .action = EO_SPLAN_NONE,
     .phase = "Failed",
     .reason = "JobFailed",
     .ready = "False",
     .event = "Warning",
     .msg_has = "no sha256 checksum"},
    {.what = "Job failed: the agent's last words in the message",
     .dest = DEST_S3,
     .status = "{\"phase\":\"Started\"}",
     .replicas = 3,
     .job = J_FAILED,
     .pod_exit = 1,
     .pod_message = "x\n{\"level\":\"error\",\"msg\":\"refusing to write the snapshot\"}\n",
     .action = EO_SPLAN_NONE,
     .phase = "Failed",
     .reason = "JobFailed",
     .ready = "False",
     .event = "Warning",
     .msg_has = "backoff limit): {\"level\":\"error\",\"msg\":\"refusing to write the snapshot\"}"},
    {.what = "Job gone while started: ask the apiserver first",
     .dest = DEST_S3,
     .status = "{\"phase\":\"Started\"}",
     .replicas = 3,
     .action = EO_SPLAN_CONFIRM_JOB_GONE},
    {.what = "Job gone while started, confirmed: SnapshotJobLost",
     .dest = DEST_S3,
     .status = "{\"phase\":\"Started\"}",
     .replicas = 3,
     .confirmed_gone = true,
     .action = EO_SPLAN_NONE,
     .phase = "Failed",
     .reason = "SnapshotJobLost",
     .ready = "False",
     .event = "Warning",
     .msg_has = "was deleted before it reported a result"},
    {.what = "a foreign Job of the same name",
     .dest = DEST_S3,
     .status = "{}",
     .replicas = 3,
     .foreign = true,
     .action = EO_SPLAN_NONE,
     .phase = "Failed",
     .reason = "JobFailed",
     .ready = "False",
     .event = "Warning",
     .msg_has = "does not belong to this snapshot"},
    {.what = "both s3 and pvc: invalid",
     .dest = "{\"s3\":{\"endpoint\":\"e\",\"bucket\":\"b\",\"credentialsSecretRef\":{\"name\":"
	     "\"c\"}},\"pvc\":{\"claimName\":\"x\"}}",
     .status = "{}",
     .replicas = 3,
     .action = EO_SPLAN_NONE,
     .phase = "Failed",
     .reason = "InvalidSpec",
     .ready = "False",
     .event = "Warning",
     .msg_has = "exactly one of s3 and pvc"},
};

static void check_row(const struct row *r)
{
	struct eo_plan_member pm[4];
	json_t *keep = json_array(), *snap = snapshot(r->dest, r->status);
	json_t *cl = r->replicas >= 0 ? cluster(r->replicas) : NULL, *j = job(r->job);
	json_t *pods = json_array(), *vol = r->vol != NULL ? load(r->vol) : NULL;
	struct eo_splan_result out;
	struct eo_splan_input in;

	make_members(r->members, r->nmembers, keep, pm);
	if (r->job != J_NONE && r->pod_exit >= 0)
		json_array_append_new(pods, agent_pod(r->pod_exit, r->pod_message));
	in = (struct eo_splan_input){.snapshot = snap,
				     .cluster = cl,
				     .members = pm,
				     .n_members = r->nmembers,
				     .job = j,
				     .job_pods = pods,
				     .job_confirmed_gone = r->confirmed_gone,
				     .foreign_job = r->foreign,
				     .dest_pvc_read = r->vol_read,
				     .dest_pvc = vol,
				     .operator_image = r->no_image ? "" : IMAGE,
				     .build = &OPTS,
				     .now = NOW};
	assert_int_equal(eo_plan_snapshot(&in, &out), 0);
	if (out.action != r->action)
		fail_msg("%s: action %s, want %s", r->what, eo_splan_action_name(out.action),
			 eo_splan_action_name(r->action));
	if (r->phase == NULL) {
		if (out.status != NULL && out.status_changed)
			fail_msg("%s: a status is written", r->what);
	} else {
		json_t *st = out.status;
		const char *phase = json_string_value(json_object_get(st, "phase"));

		assert_non_null(st);
		if (phase == NULL || strcmp(phase, r->phase) != 0)
			fail_msg("%s: phase %s, want %s", r->what, phase ? phase : "-", r->phase);
		if (!eo_condition_matches(st, EO_COND_READY, r->ready, r->reason))
			fail_msg("%s: Ready is %s/%s, want %s/%s", r->what,
				 eo_condition_status(st, EO_COND_READY),
				 eo_condition_reason(st, EO_COND_READY), r->ready, r->reason);
		assert_int_equal(json_object_get(st, "artifact") != NULL, r->artifact);
		if (r->artifact) {
			json_t *a = json_object_get(st, "artifact");

			assert_int_equal(json_integer_value(json_object_get(a, "sizeBytes")),
					 20512);
			assert_string_equal(json_string_value(json_object_get(a, "checksum")),
					    "sha256:" HEX64);
		}
	}
	if ((r->event == NULL) != (out.event_type == NULL) ||
	    (r->event != NULL && strcmp(r->event, out.event_type) != 0))
		fail_msg("%s: event %s, want %s", r->what, out.event_type ? out.event_type : "-",
			 r->event ? r->event : "-");
	if (r->msg_has != NULL && strstr(out.message, r->msg_has) == NULL)
		fail_msg("%s: message \"%s\" lacks \"%s\"", r->what, out.message, r->msg_has);
	if (r->action == EO_SPLAN_CREATE_JOB) {
		json_t *spec = json_object_get(json_object_get(out.job, "spec"), "template");
		json_t *ctrs = json_object_get(json_object_get(spec, "spec"), "containers");
		json_t *args = json_object_get(json_array_get(ctrs, 0), "args"), *a;
		char got[1024] = "";
		size_t i;

		assert_non_null(args);
		json_array_foreach(args, i, a)
		{
			if (i > 0 && strcmp(json_string_value(json_array_get(args, i - 1)),
					    "--endpoint") == 0) {
				if (got[0])
					strcat(got, ",");
				strcat(got, json_string_value(a));
			}
		}
		if (strcmp(got, r->endpoints) != 0)
			fail_msg("%s: endpoints %s, want %s", r->what, got, r->endpoints);
	}
	eo_splan_result_clear(&out);
	json_decref(vol);
	json_decref(pods);
	json_decref(j);
	json_decref(cl);
	json_decref(snap);
	json_decref(keep);
}

static void test_plan_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ROWS) / sizeof(ROWS[0]); i++)
		check_row(&ROWS[i]);
}

/* A second pass on the status the first one wrote changes nothing and emits nothing new. */
static void test_plan_idempotent(void **state)
{
	json_t *snap = snapshot(DEST_S3, "{}"), *cl = cluster(3);
	struct eo_splan_input in = {
	    .snapshot = snap, .cluster = cl, .operator_image = IMAGE, .build = &OPTS, .now = NOW};
	struct eo_splan_result out;

	(void)state;
	assert_int_equal(eo_plan_snapshot(&in, &out), 0);
	assert_true(out.status_changed);
	json_object_set(snap, "status", out.status);
	eo_splan_result_clear(&out);
	in.now = NOW + 30;
	assert_int_equal(eo_plan_snapshot(&in, &out), 0);
	assert_int_equal(out.action, EO_SPLAN_WAIT);
	assert_false(out.status_changed);
	assert_int_equal(out.requeue_ms, EO_SPLAN_RETRY_MS);
	eo_splan_result_clear(&out);
	json_decref(cl);
	json_decref(snap);
}

static void test_parse_result(void **state)
{
	static const struct {
		const char *line;
		bool ok;
		const char *err;
	} T[] = {
	    {RESULT_LINE, true, NULL},
	    {"", false, "no result line"},
	    {"not json", false, "not a JSON object"},
	    {"{\"sizeBytes\":1,\"checksum\":\"sha256:" HEX64 "\"}", false, "no usable uri"},
	    {"{\"uri\":\"s3://b/k\",\"sizeBytes\":-1,\"checksum\":\"sha256:" HEX64 "\"}", false,
	     "no usable sizeBytes"},
	    {"{\"uri\":\"s3://b/k\",\"sizeBytes\":\"1\",\"checksum\":\"sha256:" HEX64 "\"}", false,
	     "no usable sizeBytes"},
	    {"{\"uri\":\"s3://b/k\",\"sizeBytes\":1,\"checksum\":\"sha256:abc\"}", false,
	     "no sha256 checksum"},
	    {"{\"uri\":\"s3://b/k\",\"sizeBytes\":1,\"checksum\":\"sha256:"
	     "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\"}",
	     false, "not lowercase hex"},
	    {"{\"uri\":\"s3://b/k\",\"sizeBytes\":1,\"checksum\":\"sha256:" HEX64
	     "\",\"revision\":-2}",
	     false, "revision is not a non-negative integer"},
	    {"{\"uri\":\"s3://b/k\",\"sizeBytes\":1,\"checksum\":\"sha256:" HEX64
	     "\",\"revision\":\"7\"}",
	     false, "revision is not a non-negative integer"},
	};
	char err[128];
	json_t *a;

	(void)state;
	for (size_t i = 0; i < sizeof(T) / sizeof(T[0]); i++) {
		a = eo_splan_parse_result(T[i].line, err, sizeof(err));
		if ((a != NULL) != T[i].ok)
			fail_msg("row %zu: ok %d", i, a != NULL);
		if (!T[i].ok && strstr(err, T[i].err) == NULL)
			fail_msg("row %zu: err \"%s\" lacks \"%s\"", i, err, T[i].err);
		json_decref(a);
	}
	/* The revision the agent reports lands in status.artifact; an older agent's line has none.
	 */
	a = eo_splan_parse_result(
	    "{\"uri\":\"s3://b/k\",\"sizeBytes\":1,\"checksum\":\"sha256:" HEX64
	    "\",\"revision\":4242}",
	    err, sizeof(err));
	assert_non_null(a);
	assert_int_equal(json_integer_value(json_object_get(a, "revision")), 4242);
	json_decref(a);
	a = eo_splan_parse_result(RESULT_LINE, err, sizeof(err));
	assert_non_null(a);
	assert_null(json_object_get(a, "revision"));
	json_decref(a);
}

#define golden(file, obj) tu_golden(GOLDEN_DIR file, obj)
static const char EPS[2][EO_DESIRED_URL_MAX] = {"http://demo-a.demo.ns.svc.cluster.local:2379",
						"http://demo-c.demo.ns.svc.cluster.local:2379"};

static void test_job_s3(void **state)
{
	json_t *snap = snapshot(DEST_S3, "{}"), *cl = cluster(3);
	json_t *j = eo_desired_snapshot_job(snap, cl, IMAGE, NULL, EPS, 2);

	(void)state;
	golden("snapshot_job_s3.json", j);
	tu_assert_restricted_pod_spec(
	    json_object_get(json_object_get(json_object_get(j, "spec"), "template"), "spec"),
	    "snapshot Job (s3)");
	json_decref(j);
	/* --pod-run-as-user=auto: the platform assigns user, group and fsGroup */
	{
		struct eo_desired_opts o = {.pod_run_as_user = EO_DESIRED_POD_UID_AUTO};
		json_t *want =
		    tu_jsonq("{'runAsNonRoot':true,'fsGroupChangePolicy':'OnRootMismatch',"
			     "'seccompProfile':{'type':'RuntimeDefault'}}");
		const json_t *ps = NULL;

		j = eo_desired_snapshot_job(snap, cl, IMAGE, &o, EPS, 2);
		ps = json_object_get(json_object_get(json_object_get(j, "spec"), "template"),
				     "spec");
		tu_assert_json_equal(json_object_get(ps, "securityContext"), want,
				     "snapshot Job securityContext (auto)");
		tu_assert_restricted_pod_spec(ps, "snapshot Job (s3, auto user)");
		json_decref(want);
		json_decref(j);
	}
	/* Missing pieces: no Job. */
	assert_null(eo_desired_snapshot_job(snap, cl, IMAGE, NULL, EPS, 0));
	assert_null(eo_desired_snapshot_job(snap, cl, "", NULL, EPS, 2));
	json_object_del(json_object_get(snap, "metadata"), "uid");
	assert_null(eo_desired_snapshot_job(snap, cl, IMAGE, NULL, EPS, 2));
	json_decref(cl);
	json_decref(snap);
}

static void test_job_pvc(void **state)
{
	json_t *snap = snapshot(DEST_PVC, "{}"), *cl = cluster(3);
	json_t *j = eo_desired_snapshot_job(snap, cl, IMAGE, NULL, EPS, 1);

	(void)state;
	golden("snapshot_job_pvc.json", j);
	tu_assert_restricted_pod_spec(
	    json_object_get(json_object_get(json_object_get(j, "spec"), "template"), "spec"),
	    "snapshot Job (pvc)");
	json_decref(j);
	json_decref(cl);
	json_decref(snap);
}

/* A TLS cluster: the agent gets the CA (never the server key) and, with mTLS, the client pair. */
static void test_job_tls(void **state)
{
	json_t *snap = snapshot(DEST_PVC, "{}"), *cl = cluster(3), *j = NULL, *pod = NULL;
	char *args = NULL, *vols = NULL;

	(void)state;
	json_object_set_new(json_object_get(cl, "spec"), "tls",
			    tu_jsonq("{'client':{'serverSecretRef':{'name':'srv'},"
				     "'operatorClientSecretRef':{'name':'op'}}}"));
	j = eo_desired_snapshot_job(snap, cl, IMAGE, NULL, EPS, 1);
	assert_non_null(j);
	pod = json_object_get(json_object_get(json_object_get(j, "spec"), "template"), "spec");
	args = json_dumps(
	    json_object_get(json_array_get(json_object_get(pod, "containers"), 0), "args"),
	    JSON_COMPACT);
	vols = json_dumps(json_object_get(pod, "volumes"), JSON_COMPACT);
	assert_non_null(strstr(args, "\"--cacert\",\"/var/run/etcd-operator/etcd-ca/ca.crt\""));
	assert_non_null(strstr(args, "\"--cert\",\"/var/run/etcd-operator/etcd-client/tls.crt\""));
	assert_non_null(strstr(args, "\"--key\",\"/var/run/etcd-operator/etcd-client/tls.key\""));
	assert_non_null(strstr(vols, "{\"name\":\"etcd-ca\",\"secret\":{\"secretName\":\"srv\","
				     "\"items\":[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]"));
	assert_non_null(strstr(vols, "\"secretName\":\"op\""));
	free(args);
	free(vols);
	json_decref(j);
	/* Server TLS only: the CA alone. */
	json_object_del(
	    json_object_get(json_object_get(json_object_get(cl, "spec"), "tls"), "client"),
	    "operatorClientSecretRef");
	j = eo_desired_snapshot_job(snap, cl, IMAGE, NULL, EPS, 1);
	pod = json_object_get(json_object_get(json_object_get(j, "spec"), "template"), "spec");
	args = json_dumps(
	    json_object_get(json_array_get(json_object_get(pod, "containers"), 0), "args"),
	    JSON_COMPACT);
	assert_non_null(strstr(args, "--cacert"));
	assert_null(strstr(args, "--cert\""));
	assert_null(strstr(args, "--key"));
	free(args);
	json_decref(j);
	json_decref(cl);
	json_decref(snap);
}

/* spec.auth: the agent gets the password from the Secret by secretKeyRef, never in its args. */
static void test_job_auth(void **state)
{
	json_t *snap = snapshot(DEST_PVC, "{}"), *cl = cluster(3), *j = NULL, *ctr;
	char *args = NULL, *env = NULL;

	(void)state;
	json_object_set_new(json_object_get(cl, "spec"), "tls",
			    tu_jsonq("{'client':{'serverSecretRef':{'name':'srv'},"
				     "'operatorClientSecretRef':{'name':'op'}}}"));
	json_object_set_new(
	    json_object_get(cl, "spec"), "auth",
	    tu_jsonq("{'enabled':true,'rootCredentialsSecretRef':{'name':'root'}}"));
	j = eo_desired_snapshot_job(snap, cl, IMAGE, NULL, EPS, 1);
	assert_non_null(j);
	ctr = json_array_get(
	    json_object_get(
		json_object_get(json_object_get(json_object_get(j, "spec"), "template"), "spec"),
		"containers"),
	    0);
	args = json_dumps(json_object_get(ctr, "args"), JSON_COMPACT);
	env = json_dumps(json_object_get(ctr, "env"), JSON_COMPACT);
	assert_non_null(env);
	assert_string_equal(env, "[{\"name\":\"" EO_SNAPSHOT_ENV_PASSWORD "\",\"valueFrom\":{"
				 "\"secretKeyRef\":{\"name\":\"root\",\"key\":\"password\"}}}]");
	assert_null(strstr(args, "root"));
	assert_null(strstr(args, "password"));
	free(args);
	free(env);
	json_decref(j);
	/* Without spec.auth: no env at all. */
	json_object_del(json_object_get(cl, "spec"), "auth");
	j = eo_desired_snapshot_job(snap, cl, IMAGE, NULL, EPS, 1);
	ctr = json_array_get(
	    json_object_get(
		json_object_get(json_object_get(json_object_get(j, "spec"), "template"), "spec"),
		"containers"),
	    0);
	assert_null(json_object_get(ctr, "env"));
	json_decref(j);
	json_decref(cl);
	json_decref(snap);
}

/* spec.auth not latched yet: the snapshot waits, then fails with AuthLatchTimeout. */
static void test_plan_auth_latch(void **state)
{
	const struct mspec ms[] = {{"demo-a", true, true, 1}};
	struct eo_plan_member pm[1];
	json_t *keep = json_array(), *snap = snapshot(DEST_S3, "{}"), *cl = cluster(1);
	struct eo_splan_result out;
	struct eo_splan_input in;

	(void)state;
	make_members(ms, 1, keep, pm);
	json_object_set_new(json_object_get(snap, "metadata"), "creationTimestamp",
			    json_string("2026-05-28T20:20:00Z")); /* NOW - 400 s */
	json_object_set_new(
	    json_object_get(cl, "spec"), "auth",
	    tu_jsonq("{'enabled':true,'rootCredentialsSecretRef':{'name':'root'}}"));
	in = (struct eo_splan_input){.snapshot = snap,
				     .cluster = cl,
				     .members = pm,
				     .n_members = 1,
				     .operator_image = IMAGE,
				     .build = &OPTS,
				     .now = NOW};
	assert_int_equal(eo_plan_snapshot(&in, &out), 0);
	assert_int_equal(out.action, EO_SPLAN_WAIT);
	assert_true(eo_condition_matches(out.status, EO_COND_READY, EO_COND_FALSE,
					 EO_REASON_CLUSTER_NOT_READY));
	assert_non_null(strstr(out.message, "status.authEnabled"));
	eo_splan_result_clear(&out);
	in.now = NOW + 300;
	assert_int_equal(eo_plan_snapshot(&in, &out), 0);
	assert_int_equal(out.action, EO_SPLAN_NONE);
	assert_string_equal(json_string_value(json_object_get(out.status, "phase")), "Failed");
	assert_true(eo_condition_matches(out.status, EO_COND_READY, EO_COND_FALSE,
					 EO_REASON_AUTH_LATCH_TIMEOUT));
	eo_splan_result_clear(&out);
	/* Latched: the Job is created. */
	in.now = NOW;
	json_object_set_new(cl, "status", tu_jsonq("{'authEnabled':true}"));
	assert_int_equal(eo_plan_snapshot(&in, &out), 0);
	assert_int_equal(out.action, EO_SPLAN_CREATE_JOB);
	eo_splan_result_clear(&out);
	json_decref(cl);
	json_decref(snap);
	json_decref(keep);
}

TU_MAIN(test_job_tls, test_job_auth, test_plan_auth_latch, test_plan_table, test_plan_idempotent,
	test_parse_result, test_job_s3, test_job_pvc)
