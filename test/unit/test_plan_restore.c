/*
 * Unit tests for a failed restore at bootstrap: the termination message the restore init
 * containers leave (api/restorefail.c), how plan/podissue.c reads it back from the seed's Pod
 * (a table over init container states), and what the cluster and member planners make of it
 * (Available=False with the reason, a Warning Event, no churn, healed once the Pod runs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/names.h"
#include "api/restorefail.h"
#include "desired/desired.h"
#include "desired/restore.h"
#include "plan/member.h"
#include "plan/plan.h"
#include "plan/podissue.h"
#include "support/testutil.h"
#include "support/planworld_step.h"
#include "support/tu_main.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

/* The agent's termination message for a corrupted object, JSON-escaped for a Pod status. */
#define CORRUPT_DOC                                                                                \
	"{\\\"reason\\\":\\\"RestoreSnapshotCorrupt\\\",\\\"message\\\":\\\"the snapshot is not "  \
	"usable; etcd will not start on it: s3://b/demo.db: the trailer is not the SHA-256 of "    \
	"the bytes before it\\\"}"
#define MISSING_DOC                                                                                \
	"{\\\"reason\\\":\\\"RestoreObjectMissing\\\",\\\"message\\\":\\\"restore object "         \
	"missing: "                                                                                \
	"s3://b/demo.db does not exist (HeadObject answered 404)\\\"}"

static json_t *seed_member(void)
{
	return tu_json(
	    "{\"apiVersion\":\"" EO_API_GROUP_VERSION "\",\"kind\":\"EtcdMember\","
	    "\"metadata\":{\"name\":\"demo-a\",\"namespace\":\"default\",\"uid\":\"m-uid\","
	    "\"generation\":1,\"finalizers\":[\"" EO_FINALIZER_MEMBER_CLEANUP "\"],"
	    "\"ownerReferences\":[{\"apiVersion\":\"" EO_API_GROUP_VERSION "\","
	    "\"kind\":\"EtcdCluster\",\"name\":\"demo\",\"uid\":\"c-uid\",\"controller\":true}]},"
	    "\"spec\":{\"clusterName\":\"demo\",\"version\":\"3.6.11\",\"bootstrap\":true,"
	    "\"initialCluster\":\"demo-a=http://demo-a.demo.default.svc.cluster.local:2380\","
	    "\"clusterToken\":\"default-demo-c-uid\",\"restore\":{\"source\":{\"s3\":{"
	    "\"endpoint\":\"http://minio:9000\",\"bucket\":\"b\",\"key\":\"demo.db\","
	    "\"insecure\":true,\"credentialsSecretRef\":{\"name\":\"s3\"}}}}},\"status\":{"
	    "\"isVoter\":true}}");
}

/* The seed's Pod, not ready, with the given initContainerStatuses array. */
static json_t *seed_pod(const char *init_statuses)
{
	char buf[8192];

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"demo-a\",\"namespace\":\"default\",\"uid\":\"p1\","
		 "\"labels\":{\"" EO_LABEL_ROLE "\":\"" EO_LABEL_ROLE_VOTER "\"},"
		 "\"ownerReferences\":[{\"apiVersion\":\"" EO_API_GROUP_VERSION "\","
		 "\"kind\":\"EtcdMember\",\"name\":\"demo-a\",\"uid\":\"m-uid\","
		 "\"controller\":true}]},\"spec\":{\"nodeName\":\"node-1\"},"
		 "\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\","
		 "\"status\":\"True\",\"lastTransitionTime\":\"2026-06-02T09:59:00Z\"},"
		 "{\"type\":\"Ready\",\"status\":\"False\"}],\"initContainerStatuses\":%s,"
		 "\"containerStatuses\":[{\"name\":\"etcd\",\"ready\":false,\"restartCount\":0,"
		 "\"state\":{\"waiting\":{\"reason\":\"PodInitializing\"}}}]}}",
		 init_statuses);
	return tu_json(buf);
}

#define INIT(name, state, last)                                                                    \
	"{\"name\":\"" name "\",\"ready\":false,\"restartCount\":1,\"state\":" state               \
	",\"lastState\":" last "}"
#define TERMINATED(code, reason, msg)                                                              \
	"{\"terminated\":{\"exitCode\":" #code ",\"reason\":\"" reason "\",\"message\":\"" msg     \
	"\"}}"
#define BACKOFF "{\"waiting\":{\"reason\":\"CrashLoopBackOff\",\"message\":\"back-off 20s\"}}"
#define RUNNING "{\"running\":{\"startedAt\":\"2026-06-02T10:00:00Z\"}}"
#define NONE	"{}"

/* --- the termination message --- */

static void test_failure_doc_roundtrip(void **state)
{
	char doc[EO_RESTORE_FAILURE_MAX], msg[EO_RESTORE_MESSAGE_MAX], big[3000];
	const char *reason = NULL;

	(void)state;
	assert_int_equal(eo_restore_failure_format(doc, sizeof(doc),
						   EO_REASON_RESTORE_VOLUME_TOO_SMALL,
						   "needs \"2x\"\n the snapshot"),
			 0);
	assert_string_equal(doc, "{\"reason\":\"RestoreVolumeTooSmall\",\"message\":\"needs "
				 "\\\"2x\\\"\\n the snapshot\"}");
	assert_true(eo_restore_failure_parse(doc, &reason, msg, sizeof(msg)));
	assert_string_equal(reason, EO_REASON_RESTORE_VOLUME_TOO_SMALL);
	assert_string_equal(msg, "needs \"2x\"\n the snapshot");
	/* Unknown reasons are neither written nor read; nor is text that is not ours. */
	assert_int_equal(eo_restore_failure_format(doc, sizeof(doc), "Whatever", "x"), -1);
	assert_false(eo_restore_failure_parse("{\"reason\":\"Whatever\",\"message\":\"x\"}",
					      &reason, msg, sizeof(msg)));
	assert_false(
	    eo_restore_failure_parse("{\"reason\":\"RestoreFailed\"}", &reason, msg, sizeof(msg)));
	assert_false(eo_restore_failure_parse("level=error msg=boom", &reason, msg, sizeof(msg)));
	assert_false(eo_restore_failure_parse("{\"reason\":", &reason, msg, sizeof(msg)));
	assert_false(eo_restore_failure_parse(NULL, &reason, msg, sizeof(msg)));
	/* A long message is cut to EO_RESTORE_MESSAGE_MAX, and the document still fits. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(eo_restore_failure_format(doc, sizeof(doc), EO_REASON_RESTORE_FAILED, big),
			 0);
	assert_true(eo_restore_failure_parse(doc, &reason, msg, sizeof(msg)));
	assert_int_equal(strlen(msg), EO_RESTORE_MESSAGE_MAX - 1);
	/*
	 * A cut through a multi-byte character, or a byte that is not UTF-8: the message is
	 * still written (jansson refuses invalid UTF-8; the whole message used to be lost).
	 */
	memset(big, 'x', sizeof(big) - 1);
	memcpy(big + EO_RESTORE_MESSAGE_MAX - 1, "\xc3\xa9", 2); /* é across the cut */
	assert_int_equal(eo_restore_failure_format(doc, sizeof(doc), EO_REASON_RESTORE_FAILED, big),
			 0);
	assert_true(eo_restore_failure_parse(doc, &reason, msg, sizeof(msg)));
	assert_int_equal(strlen(msg), EO_RESTORE_MESSAGE_MAX - 1); /* the é left out whole */
	assert_int_equal(eo_restore_failure_format(doc, sizeof(doc), EO_REASON_RESTORE_FAILED,
						   "bad \xff byte \xc3\xa9"),
			 0);
	assert_true(eo_restore_failure_parse(doc, &reason, msg, sizeof(msg)));
	assert_string_equal(msg, "bad ? byte \xc3\xa9");
	/* Too small a buffer: refused, not cut into broken JSON. */
	assert_int_equal(eo_restore_failure_format(doc, 20, EO_REASON_RESTORE_FAILED, "abc"), -1);
	/* Every known reason has its own hint; an unknown one gets the generic hint. */
	assert_non_null(strstr(eo_restore_reason_hint(EO_REASON_RESTORE_SNAPSHOT_CORRUPT),
			       "etcd is not started on it"));
	assert_string_equal(eo_restore_reason_hint("Nope"),
			    eo_restore_reason_hint(EO_REASON_RESTORE_FAILED));
}

/* --- reading it back from the Pod --- */

static void test_restore_issue_table(void **state)
{
	static const struct {
		const char *name;
		const char *inits;
		enum eo_pod_issue_kind kind;
		const char *reason;
		const char *contains;
	} cases[] = {
	    {"restore ended with the agent's reason",
	     "[" INIT("restore", TERMINATED(1, "Error", CORRUPT_DOC), NONE) "]",
	     EO_POD_ISSUE_RESTORE_FAILED, EO_REASON_RESTORE_SNAPSHOT_CORRUPT,
	     "restoring the snapshot failed (init container restore, exit code 1): the snapshot "
	     "is not usable; etcd will not start on it: s3://b/demo.db: the trailer is not the "
	     "SHA-256 of the bytes before it; the snapshot is truncated or altered"},
	    {"in back-off: the last exit tells",
	     "[" INIT("restore", BACKOFF, TERMINATED(1, "Error", MISSING_DOC)) "]",
	     EO_POD_ISSUE_RESTORE_FAILED, EO_REASON_RESTORE_OBJECT_MISSING,
	     "s3://b/demo.db does not exist (HeadObject answered 404); check "
	     "spec.bootstrap.restore.source"},
	    {"retried and running: the failure stands until it succeeds",
	     "[" INIT("restore", RUNNING, TERMINATED(1, "Error", MISSING_DOC)) "]",
	     EO_POD_ISSUE_RESTORE_FAILED, EO_REASON_RESTORE_OBJECT_MISSING, "HeadObject"},
	    {"succeeded after a failure: no issue",
	     "[" INIT("restore", TERMINATED(0, "Completed", ""),
		      TERMINATED(1, "Error", MISSING_DOC)) "]",
	     EO_POD_ISSUE_NONE, NULL, NULL},
	    {"killed without the agent's words",
	     "[" INIT("restore", BACKOFF,
		      "{\"terminated\":{\"exitCode\":137,\"reason\":"
		      "\"OOMKilled\"}}") "]",
	     EO_POD_ISSUE_RESTORE_FAILED, EO_REASON_RESTORE_FAILED,
	     "(init container restore, exit code 137): OOMKilled; look at the logs"},
	    {"an older agent: the log tail's last line",
	     "[" INIT("restore", BACKOFF,
		      TERMINATED(1, "Error", "line one\\nlevel=error msg=\\\"boom\\\"\\n")) "]",
	     EO_POD_ISSUE_RESTORE_FAILED, EO_REASON_RESTORE_FAILED,
	     "exit code 1): Error: level=error msg=\"boom\"; look"},
	    {"a reason that is not ours: generic",
	     "[" INIT("restore", BACKOFF,
		      TERMINATED(1, "Error",
				 "{\\\"reason\\\":\\\"Evil\\\",\\\"message\\\":\\\"x\\\"}")) "]",
	     EO_POD_ISSUE_RESTORE_FAILED, EO_REASON_RESTORE_FAILED, NULL},
	    {"restore done, rebuild failed",
	     "[" INIT("restore", TERMINATED(0, "Completed", ""), NONE) "," INIT(
		 "restore-rebuild", BACKOFF,
		 TERMINATED(1, "Error",
			    "{\\\"reason\\\":\\\"RestoreRebuildFailed\\\",\\\"message\\\":"
			    "\\\"rebuilding the data dir failed: etcdutl snapshot restore exited "
			    "with status 1\\\"}")) "]",
	     EO_POD_ISSUE_RESTORE_FAILED, EO_REASON_RESTORE_REBUILD_FAILED,
	     "(init container restore-rebuild, exit code 1): rebuilding"},
	    {"archive: restore done, replay refused the target",
	     "[" INIT("restore", TERMINATED(0, "Completed", ""), NONE) "," INIT(
		 "restore-replay", BACKOFF,
		 TERMINATED(1, "Error",
			    "{\\\"reason\\\":\\\"RestoreTargetOutsideArchive\\\",\\\"message\\\":"
			    "\\\"the target is outside the archive: revision 9 is outside every "
			    "recoverable window\\\"}")) "]",
	     EO_POD_ISSUE_RESTORE_FAILED, EO_REASON_RESTORE_TARGET_OUTSIDE_ARCHIVE,
	     "(init container restore-replay, exit code 1): the target is outside"},
	    {"another init container's crash is a crash loop, not a restore",
	     "[" INIT("other", BACKOFF, TERMINATED(1, "Error", CORRUPT_DOC)) "]",
	     EO_POD_ISSUE_CRASH_LOOP, EO_REASON_CONTAINER_CRASHLOOP, "container other"},
	    {"restore running for the first time: on its way",
	     "[" INIT("restore", RUNNING, NONE) "]", EO_POD_ISSUE_NONE, NULL, NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *m = seed_member(), *p = seed_pod(cases[i].inits);
		struct eo_pod_issue is;
		bool got = eo_plan_pod_issue(m, p, NULL, T0, &is);

		if (got != (cases[i].kind != EO_POD_ISSUE_NONE) || is.kind != cases[i].kind)
			fail_msg("%s: kind %d, want %d (%s)", cases[i].name, is.kind, cases[i].kind,
				 is.message);
		if (cases[i].reason != NULL &&
		    (is.reason == NULL || strcmp(is.reason, cases[i].reason) != 0))
			fail_msg("%s: reason %s, want %s", cases[i].name,
				 is.reason ? is.reason : "-", cases[i].reason);
		if (cases[i].contains != NULL && strstr(is.message, cases[i].contains) == NULL)
			fail_msg("%s:\n %s\n lacks %s", cases[i].name, is.message,
				 cases[i].contains);
		json_decref(m);
		json_decref(p);
	}
}

/* --- the planners --- */

#define LATCHED                                                                                    \
	"\"clusterToken\":\"default-demo-c-uid\",\"selector\":"                                    \
	"\"etcd-operator.cozystack.io/cluster=demo\",\"readyMembers\":0,\"brokenMembers\":0,"      \
	"\"progressDeadline\":\"2026-06-02T10:10:00Z\",\"observed\":{\"replicas\":3,"              \
	"\"version\":\"3.6.11\",\"storage\":{\"size\":\"1Gi\",\"medium\":\"\"}}"

static json_t *restoring_cluster(void)
{
	return tu_json(
	    "{\"apiVersion\":\"" EO_API_GROUP_VERSION "\",\"kind\":\"EtcdCluster\","
	    "\"metadata\":{\"name\":\"demo\",\"namespace\":\"default\",\"uid\":"
	    "\"c-uid\",\"generation\":1},\"spec\":{\"replicas\":3,\"version\":"
	    "\"3.6.11\",\"storage\":{\"size\":\"1Gi\",\"medium\":\"\"},"
	    "\"progressDeadlineSeconds\":600,\"bootstrap\":{\"restore\":{\"source\":"
	    "{\"s3\":{\"endpoint\":\"http://minio:9000\",\"bucket\":\"b\",\"key\":"
	    "\"demo.db\",\"insecure\":true,\"credentialsSecretRef\":{\"name\":\"s3\"}}}}}},"
	    "\"status\":{" LATCHED "}}");
}

static const char *cmsg(const json_t *st, const char *type)
{
	return json_string_value(json_object_get(eo_condition_find(st, type), "message"));
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

static void test_cluster_says_restore_failed(void **state)
{
	json_t *c = restoring_cluster();
	json_t *hs = eo_desired_headless_service(c), *cs = eo_desired_client_service(c);
	json_t *m = seed_member();
	json_t *p = seed_pod("[" INIT("restore", BACKOFF, TERMINATED(1, "Error", CORRUPT_DOC)) "]");
	struct eo_plan_member v[1] = {{m, p, NULL}};
	struct eo_plan_input in = {.cluster = c,
				   .members = v,
				   .n_members = 1,
				   .headless_svc = hs,
				   .client_svc = cs,
				   .build = &OPTS,
				   .now = T0};
	struct eo_plan_result r = {0}, again = {0};
	const char *am;

	(void)state;
	assert_int_equal(eo_plan_cluster(&in, &r), 0);
	/* Nothing is done to the seed: no query of etcd, no new member. */
	assert_int_equal(r.action, EO_PLAN_WAIT);
	assert_true(eo_condition_matches(r.status, EO_COND_AVAILABLE, EO_COND_FALSE,
					 EO_REASON_RESTORE_SNAPSHOT_CORRUPT));
	am = cmsg(r.status, EO_COND_AVAILABLE);
	assert_non_null(strstr(am, "seed member demo-a: restoring the snapshot failed (init "
				   "container restore, exit code 1): the snapshot is not usable"));
	assert_non_null(strstr(am, "restore from another snapshot"));
	/* Said once, not again as the member suffix. */
	assert_int_equal(count(am, "the trailer is not"), 1);
	assert_string_equal(r.event_type, "Warning");
	assert_string_equal(r.event_reason, EO_REASON_RESTORE_SNAPSHOT_CORRUPT);
	assert_non_null(strstr(r.message, "the trailer is not the SHA-256"));
	assert_null(json_object_get(r.status, "clusterID"));
	assert_true(eo_condition_matches(r.status, EO_COND_PROGRESSING, EO_COND_TRUE,
					 EO_REASON_INITIAL_SNAPSHOT));

	/* The kubelet retries the container with back-off: the same failure writes nothing. */
	json_object_set(c, "status", r.status);
	in.now += 120;
	json_decref(p);
	p = seed_pod("[" INIT("restore", RUNNING, TERMINATED(1, "Error", CORRUPT_DOC)) "]");
	v[0].pod = p;
	assert_int_equal(eo_plan_cluster(&in, &again), 0);
	assert_false(again.status_changed);
	eo_plan_result_clear(&again);

	/* Another failure (the object was deleted meanwhile): a new reason, a new Event. */
	json_decref(p);
	p = seed_pod("[" INIT("restore", BACKOFF, TERMINATED(1, "Error", MISSING_DOC)) "]");
	v[0].pod = p;
	assert_int_equal(eo_plan_cluster(&in, &again), 0);
	assert_true(again.status_changed);
	assert_true(eo_condition_matches(again.status, EO_COND_AVAILABLE, EO_COND_FALSE,
					 EO_REASON_RESTORE_OBJECT_MISSING));
	assert_string_equal(again.event_reason, EO_REASON_RESTORE_OBJECT_MISSING);
	eo_plan_result_clear(&again);

	/* An intact object was put in place and the restore went through: the seed is queried. */
	json_decref(p);
	p = tu_json("{\"metadata\":{\"name\":\"demo-a\",\"namespace\":\"default\",\"uid\":\"p1\","
		    "\"ownerReferences\":[{\"apiVersion\":\"" EO_API_GROUP_VERSION "\","
		    "\"kind\":\"EtcdMember\",\"name\":\"demo-a\",\"uid\":\"m-uid\","
		    "\"controller\":true}]},\"status\":{\"phase\":\"Running\",\"conditions\":[{"
		    "\"type\":\"Ready\",\"status\":\"True\"}]}}");
	v[0].pod = p;
	assert_int_equal(eo_plan_cluster(&in, &again), 0);
	assert_int_equal(again.action, EO_PLAN_QUERY_MEMBERS);
	eo_plan_result_clear(&again);
	eo_plan_result_clear(&r);
	json_decref(c);
	json_decref(hs);
	json_decref(cs);
	json_decref(m);
	json_decref(p);
}

static void test_member_ready_says_restore_failed(void **state)
{
	json_t *m = seed_member(), *c = restoring_cluster();
	json_t *p = seed_pod("[" INIT("restore", BACKOFF, TERMINATED(1, "Error", MISSING_DOC)) "]");
	json_t *v =
	    tu_json("{\"metadata\":{\"name\":\"data-demo-a\",\"namespace\":\"default\","
		    "\"uid\":\"v1\",\"ownerReferences\":[{\"apiVersion\":\"" EO_API_GROUP_VERSION
		    "\",\"kind\":\"EtcdMember\",\"name\":\"demo-a\",\"uid\":\"m-uid\","
		    "\"controller\":true}]},\"status\":{\"phase\":\"Bound\"}}");
	struct eo_mplan_input in = {
	    .member = m, .cluster = c, .pod = p, .pvc = v, .build = &OPTS, .now = T0};
	struct eo_mplan_result r = {0};

	(void)state;
	pwst_mplan(&in, &r, EO_MPLAN_NONE);
	assert_true(eo_condition_matches(r.status, EO_COND_READY, EO_COND_FALSE,
					 EO_REASON_RESTORE_OBJECT_MISSING));
	assert_non_null(strstr(cmsg(r.status, EO_COND_READY),
			       "s3://b/demo.db does not exist (HeadObject answered 404); check "
			       "spec.bootstrap.restore.source"));
	eo_member_plan_clear(&r);
	json_decref(m);
	json_decref(c);
	json_decref(p);
	json_decref(v);
}

/*
 * A seed restoring from a PVC: its Pod is created only after the source PVC was read live and
 * found the user's own (plan/volref.h); another object's volume or etcd member data is refused
 * with ForeignVolume, a missing one waited for with VolumeNotFound, and nothing is mounted.
 */
struct volrow {
	const char *what;
	bool read;
	const char *pvc; /* the live source PVC, NULL: none */
	enum eo_mplan_action action;
	const char *reason; /* Ready's reason; NULL: not looked at */
	const char *msg_has;
};

#define SRC_PVC(m) "{\"metadata\":{\"name\":\"backups\",\"namespace\":\"default\"" m "}}"

static const struct volrow VOLROWS[] = {
    {"the source is read before the Pod", false, NULL, EO_MPLAN_READ_VOLUME, NULL,
     "reading restore source PVC backups"},
    {"missing: wait, no Pod", true, NULL, EO_MPLAN_WAIT, "VolumeNotFound",
     "PVC backups does not exist"},
    {"another cluster's member data PVC: refused", true,
     SRC_PVC(",\"ownerReferences\":[{\"apiVersion\":\"" EO_API_GROUP_VERSION
	     "\",\"kind\":\"EtcdMember\",\"name\":\"other-a\",\"uid\":\"o-uid\","
	     "\"controller\":true}]"),
     EO_MPLAN_WAIT, "ForeignVolume", "controlled by EtcdMember other-a"},
    {"a retained member PVC (labels only): refused", true,
     SRC_PVC(",\"labels\":{\"" EO_LABEL_CLUSTER "\":\"other\"}"), EO_MPLAN_WAIT, "ForeignVolume",
     EO_LABEL_CLUSTER "=other"},
    {"this cluster's own retained claim (labels only, no owner): the Pod is created", true,
     SRC_PVC(",\"labels\":{\"" EO_LABEL_CLUSTER "\":\"demo\",\"" EO_LABEL_MANAGED_BY
	     "\":\"" EO_LABEL_MANAGED_BY_VALUE "\"}"),
     EO_MPLAN_CREATE_POD, NULL, NULL},
    {"this cluster's name but a member controls it: refused", true,
     SRC_PVC(",\"labels\":{\"" EO_LABEL_CLUSTER "\":\"demo\"},\"ownerReferences\":[{"
	     "\"apiVersion\":\"" EO_API_GROUP_VERSION "\",\"kind\":\"EtcdMember\",\"name\":"
	     "\"demo-b\",\"uid\":\"b-uid\",\"controller\":true}]"),
     EO_MPLAN_WAIT, "ForeignVolume", "controlled by EtcdMember demo-b"},
    {"a plain PVC: the Pod is created", true, SRC_PVC(""), EO_MPLAN_CREATE_POD, NULL, NULL},
};

static void test_member_restore_volume_table(void **state)
{
	static const struct eo_desired_opts o = {.cluster_domain = "cluster.local",
						 .operator_image = "localhost/etcd-operator:dev",
						 .etcd_image_repository = "quay.io/coreos/etcd"};
	json_t *c = tu_json("{\"apiVersion\":\"" EO_API_GROUP_VERSION "\",\"kind\":\"EtcdCluster\","
			    "\"metadata\":{\"name\":\"demo\",\"namespace\":\"default\",\"uid\":"
			    "\"c-uid\"},\"spec\":{\"replicas\":1,\"version\":\"3.6.11\"}}");
	json_t *m = seed_member();
	json_t *v = tu_json(
	    "{\"metadata\":{\"name\":\"data-demo-a\",\"namespace\":\"default\",\"uid\":\"v1\","
	    "\"ownerReferences\":[{\"apiVersion\":\"" EO_API_GROUP_VERSION "\","
	    "\"kind\":\"EtcdMember\",\"name\":\"demo-a\",\"uid\":\"m-uid\",\"controller\":true}]},"
	    "\"status\":{\"phase\":\"Bound\"}}");

	(void)state;
	json_object_set_new(json_object_get(json_object_get(m, "spec"), "restore"), "source",
			    tu_json("{\"pvc\":{\"claimName\":\"backups\",\"subPath\":\"s.db\"}}"));
	for (size_t i = 0; i < sizeof(VOLROWS) / sizeof(VOLROWS[0]); i++) {
		const struct volrow *row = &VOLROWS[i];
		json_t *src = row->pvc != NULL ? tu_json(row->pvc) : NULL;
		struct eo_mplan_input in = {.member = m,
					    .cluster = c,
					    .pvc = v,
					    .build = &o,
					    .volume_read = row->read,
					    .volume = src,
					    .now = T0};
		struct eo_mplan_result r = {0};

		assert_int_equal(eo_member_plan(&in, &r), 0);
		if (r.action != row->action)
			fail_msg("%s: action %s, want %s", row->what,
				 eo_mplan_action_name(r.action), eo_mplan_action_name(row->action));
		if (row->action == EO_MPLAN_READ_VOLUME)
			assert_string_equal(r.volume, "backups");
		if (row->action != EO_MPLAN_CREATE_POD)
			assert_null(r.object); /* nothing mounted */
		else
			assert_string_equal(eo_desired_restore_claim(r.object), "backups");
		if (row->reason != NULL) {
			if (!eo_condition_matches(r.status, EO_COND_READY, EO_COND_FALSE,
						  row->reason))
				fail_msg("%s: Ready reason %s, want %s", row->what,
					 eo_condition_reason(r.status, EO_COND_READY), row->reason);
			assert_string_equal(r.event_type, "Warning");
			assert_string_equal(r.event_reason, row->reason);
		}
		if (row->msg_has != NULL && strstr(r.message, row->msg_has) == NULL)
			fail_msg("%s: message \"%s\" lacks \"%s\"", row->what, r.message,
				 row->msg_has);
		if (row->reason != NULL) {
			/* The cluster quotes it among its members' issues. */
			json_t *mm = json_deep_copy(m);
			struct eo_plan_member pm = {mm, NULL, v};
			char buf[EO_PLAN_ISSUES_MAX];

			json_object_set(mm, "status", r.status);
			assert_int_equal(eo_plan_member_issues(&pm, 1, T0, buf, sizeof(buf)), 1);
			assert_non_null(strstr(buf, "member demo-a: restore source"));
			json_decref(mm);
		}
		eo_member_plan_clear(&r);
		json_decref(src);
	}
	json_decref(m);
	json_decref(c);
	json_decref(v);
}

TU_MAIN(test_failure_doc_roundtrip, test_restore_issue_table, test_cluster_says_restore_failed,
	test_member_ready_says_restore_failed, test_member_restore_volume_table)
