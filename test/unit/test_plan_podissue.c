/*
 * Unit tests for plan/podissue.c and plan/failure.c: what keeps a member's Pod from running
 * (a table over Pod and PVC states as the kubelet and the scheduler report them), the list the
 * cluster's conditions quote, refused writes as conditions, and how the cluster and member
 * planners render both (messages, reasons, no churn, stale failures cleared).
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
#include "desired/desired.h"
#include "plan/failure.h"
#include "plan/member.h"
#include "plan/plan.h"
#include "plan/podissue.h"
#include "support/testutil.h"
#include "support/planworld_step.h"
#include "support/tu_main.h"

#define T0    1780394400 /* 2026-06-02T10:00:00Z */
#define IMAGE "quay.io/coreos/etcd:v3.9.99"
#define PULL_ERR                                                                                   \
	"failed to pull and unpack image \\\"" IMAGE "\\\": failed to resolve reference "          \
	"\\\"" IMAGE "\\\": " IMAGE ": not found"
#define SCHED_MSG                                                                                  \
	"0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. "           \
	"preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

/* A member Pod: metadata (deletion optional), the given status JSON. */
static json_t *pod_with(const char *status, bool deleting)
{
	char buf[4096];

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"demo-a\",\"namespace\":\"default\",\"uid\":\"p1\","
		 "\"labels\":{\"" EO_LABEL_ROLE "\":\"" EO_LABEL_ROLE_VOTER "\"},"
		 "\"ownerReferences\":[{\"apiVersion\":\"" EO_API_GROUP_VERSION "\","
		 "\"kind\":\"EtcdMember\",\"name\":\"demo-a\",\"uid\":\"m-uid\","
		 "\"controller\":true}]%s},"
		 "\"spec\":{\"nodeName\":\"node-1\"},\"status\":%s}",
		 deleting ? ",\"deletionTimestamp\":\"2026-06-02T10:00:00Z\"" : "", status);
	return tu_json(buf);
}

static json_t *pvc_in(const char *phase)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"data-demo-a\",\"namespace\":\"default\","
		 "\"ownerReferences\":[{\"apiVersion\":\"" EO_API_GROUP_VERSION "\","
		 "\"kind\":\"EtcdMember\",\"name\":\"demo-a\",\"uid\":\"m-uid\","
		 "\"controller\":true}]},\"status\":{\"phase\":\"%s\"}}",
		 phase);
	return tu_json(buf);
}

static json_t *member(const char *name, const char *status)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"" EO_API_GROUP_VERSION "\",\"kind\":\"EtcdMember\","
		 "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"m-uid\","
		 "\"generation\":1,\"finalizers\":[\"" EO_FINALIZER_MEMBER_CLEANUP "\"],"
		 "\"ownerReferences\":[{\"apiVersion\":\"" EO_API_GROUP_VERSION "\","
		 "\"kind\":\"EtcdCluster\",\"name\":\"demo\",\"uid\":\"c-uid\","
		 "\"controller\":true}]},"
		 "\"spec\":{\"clusterName\":\"demo\",\"version\":\"3.6.11\",\"bootstrap\":true,"
		 "\"initialCluster\":\"%s=http://%s.demo.default.svc.cluster.local:2380\","
		 "\"clusterToken\":\"default-demo-c-uid\"},\"status\":%s}",
		 name, name, name, status != NULL ? status : "{\"isVoter\":true}");
	return tu_json(buf);
}

#define SCHEDULED(at)                                                                              \
	"{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\"" at "\"}"
#define NOT_READY "{\"type\":\"Ready\",\"status\":\"False\"}"
#define WAITING(reason, msg)                                                                       \
	"\"containerStatuses\":[{\"name\":\"etcd\",\"image\":\"" IMAGE "\",\"ready\":false,"       \
	"\"restartCount\":0,\"state\":{\"waiting\":{\"reason\":\"" reason "\",\"message\":\"" msg  \
	"\"}}}]"

/* --- eo_plan_pod_issue, as a table --- */

static void test_pod_issue_table(void **state)
{
	static const struct {
		const char *name;
		const char *pod_status; /* NULL: no Pod */
		bool deleting;
		const char *pvc_phase; /* NULL: no PVC */
		long now_after_t0;
		enum eo_pod_issue_kind kind;
		const char *reason;
		const char *message; /* exact, or NULL to skip */
		const char *contains;
	} cases[] = {
	    {"no Pod yet: on its way", NULL, false, "Bound", 0, EO_POD_ISSUE_NONE, NULL, NULL,
	     NULL},
	    {"ready Pod",
	     "{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\","
	     "\"status\":\"True\"}]}",
	     false, "Bound", 0, EO_POD_ISSUE_NONE, NULL, NULL, NULL},
	    {"just created, no status yet", "{\"phase\":\"Pending\"}", false, "Bound", 0,
	     EO_POD_ISSUE_NONE, NULL, NULL, NULL},
	    {"ErrImagePull",
	     "{\"phase\":\"Pending\",\"conditions\":[" SCHEDULED(
		 "2026-06-02T09:59:00Z") "," NOT_READY "]," WAITING("ErrImagePull", PULL_ERR) "}",
	     false, "Bound", 0, EO_POD_ISSUE_IMAGE_PULL, EO_REASON_IMAGE_PULL_FAILED,
	     "image " IMAGE
	     " cannot be pulled: ErrImagePull: failed to pull and unpack image \"" IMAGE
	     "\": failed to resolve reference \"" IMAGE "\": " IMAGE ": not found",
	     NULL},
	    /* The back-off quotes the same answer: the same message, so no status flip. */
	    {"ImagePullBackOff (new kubelet)",
	     "{\"phase\":\"Pending\",\"conditions\":[" NOT_READY
	     "]," WAITING("ImagePullBackOff",
			  "Back-off pulling image \\\"" IMAGE "\\\": ErrImagePull: " PULL_ERR) "}",
	     false, "Bound", 0, EO_POD_ISSUE_IMAGE_PULL, EO_REASON_IMAGE_PULL_FAILED,
	     "image " IMAGE
	     " cannot be pulled: ErrImagePull: failed to pull and unpack image \"" IMAGE
	     "\": failed to resolve reference \"" IMAGE "\": " IMAGE ": not found",
	     NULL},
	    {"ImagePullBackOff (old kubelet, no answer quoted)",
	     "{\"phase\":\"Pending\",\"conditions\":[" NOT_READY
	     "]," WAITING("ImagePullBackOff", "Back-off pulling image \\\"" IMAGE "\\\"") "}",
	     false, "Bound", 0, EO_POD_ISSUE_IMAGE_PULL, EO_REASON_IMAGE_PULL_FAILED,
	     "image " IMAGE " cannot be pulled: ErrImagePull", NULL},
	    {"InvalidImageName",
	     "{\"phase\":\"Pending\",\"conditions\":[" NOT_READY
	     "]," WAITING("InvalidImageName", "Failed to apply default image tag") "}",
	     false, "Bound", 0, EO_POD_ISSUE_IMAGE_PULL, EO_REASON_IMAGE_PULL_FAILED,
	     "image " IMAGE
	     " cannot be pulled: InvalidImageName: Failed to apply default image tag",
	     NULL},
	    {"being deleted: not an issue",
	     "{\"phase\":\"Pending\",\"conditions\":[" NOT_READY
	     "]," WAITING("ErrImagePull", PULL_ERR) "}",
	     true, "Bound", 0, EO_POD_ISSUE_NONE, NULL, NULL, NULL},
	    {"Unschedulable",
	     "{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":"
	     "\"False\",\"reason\":\"Unschedulable\",\"message\":\"" SCHED_MSG "\"}]}",
	     false, "Bound", 0, EO_POD_ISSUE_UNSCHEDULABLE, EO_REASON_UNSCHEDULABLE,
	     "Pod cannot be scheduled: Unschedulable: " SCHED_MSG, NULL},
	    {"Unschedulable with the PVC Pending for a moment: provisioning, not yet an issue",
	     "{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":"
	     "\"False\",\"reason\":\"Unschedulable\",\"lastTransitionTime\":"
	     "\"2026-06-02T10:00:00Z\",\"message\":\"pod has unbound immediate "
	     "PersistentVolumeClaims\"}]}",
	     false, "Pending", 5, EO_POD_ISSUE_NONE, NULL, NULL, NULL},
	    {"Unschedulable with the PVC Pending for 30 s: the volume",
	     "{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":"
	     "\"False\",\"reason\":\"Unschedulable\",\"lastTransitionTime\":"
	     "\"2026-06-02T10:00:00Z\",\"message\":\"pod has unbound immediate "
	     "PersistentVolumeClaims\"}]}",
	     false, "Pending", 30, EO_POD_ISSUE_VOLUME_NOT_BOUND, EO_REASON_VOLUME_NOT_BOUND,
	     "PVC data-demo-a is not bound and the Pod cannot be scheduled: pod has unbound "
	     "immediate PersistentVolumeClaims",
	     NULL},
	    {"PodScheduled=False for another reason (gated)",
	     "{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":"
	     "\"False\",\"reason\":\"SchedulingGated\"}]}",
	     false, "Bound", 0, EO_POD_ISSUE_NONE, NULL, NULL, NULL},
	    {"CreateContainerConfigError",
	     "{\"phase\":\"Pending\",\"conditions\":[" NOT_READY
	     "]," WAITING("CreateContainerConfigError", "secret \\\"x\\\" not found") "}",
	     false, "Bound", 0, EO_POD_ISSUE_CONTAINER_ERROR, EO_REASON_CONTAINER_ERROR,
	     "container etcd cannot start: CreateContainerConfigError: secret \"x\" not found",
	     NULL},
	    {"RunContainerError",
	     "{\"phase\":\"Running\",\"conditions\":[" NOT_READY
	     "]," WAITING("RunContainerError", "exec failed") "}",
	     false, "Bound", 0, EO_POD_ISSUE_CONTAINER_ERROR, EO_REASON_CONTAINER_ERROR,
	     "container etcd cannot start: RunContainerError: exec failed", NULL},
	    {"CrashLoopBackOff: the last exit, not the back-off counter",
	     "{\"phase\":\"Running\",\"conditions\":[" NOT_READY "],\"containerStatuses\":[{"
	     "\"name\":\"etcd\",\"restartCount\":4,\"state\":{\"waiting\":{\"reason\":"
	     "\"CrashLoopBackOff\",\"message\":\"back-off 40s restarting failed container\"}},"
	     "\"lastState\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\"}}}]}",
	     false, "Bound", 0, EO_POD_ISSUE_CRASH_LOOP, EO_REASON_CONTAINER_CRASHLOOP,
	     "container etcd keeps crashing (CrashLoopBackOff): last exit code 1 (Error)", NULL},
	    {"creating containers 60 s after scheduling: normal",
	     "{\"phase\":\"Pending\",\"conditions\":[" SCHEDULED(
		 "2026-06-02T10:00:00Z") "," NOT_READY "]," WAITING("ContainerCreating", "") "}",
	     false, "Bound", 60, EO_POD_ISSUE_NONE, NULL, NULL, NULL},
	    {"creating containers 300 s after scheduling: a mount hangs",
	     "{\"phase\":\"Pending\",\"conditions\":[" SCHEDULED(
		 "2026-06-02T10:00:00Z") "," NOT_READY "]," WAITING("ContainerCreating", "") "}",
	     false, "Bound", 300, EO_POD_ISSUE_VOLUME_NOT_MOUNTED, EO_REASON_VOLUME_NOT_MOUNTED,
	     NULL, "scheduled on node node-1: a volume may fail to attach or mount"},
	    {"no container status 300 s after scheduling, PVC Pending",
	     "{\"phase\":\"Pending\",\"conditions\":[" SCHEDULED("2026-06-02T10:00:00Z") "]}",
	     false, "Pending", 300, EO_POD_ISSUE_VOLUME_NOT_BOUND, EO_REASON_VOLUME_NOT_BOUND, NULL,
	     "PVC data-demo-a is still not bound"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *m = member("demo-a", NULL);
		json_t *p =
		    cases[i].pod_status ? pod_with(cases[i].pod_status, cases[i].deleting) : NULL;
		json_t *v = cases[i].pvc_phase ? pvc_in(cases[i].pvc_phase) : NULL;
		struct eo_pod_issue is;
		bool got = eo_plan_pod_issue(m, p, v, T0 + cases[i].now_after_t0, &is);

		if (got != (cases[i].kind != EO_POD_ISSUE_NONE) || is.kind != cases[i].kind)
			fail_msg("%s: kind %d, want %d (%s)", cases[i].name, is.kind, cases[i].kind,
				 is.message);
		if (cases[i].reason != NULL &&
		    (is.reason == NULL || strcmp(is.reason, cases[i].reason) != 0))
			fail_msg("%s: reason %s, want %s", cases[i].name,
				 is.reason ? is.reason : "-", cases[i].reason);
		if (cases[i].message != NULL && strcmp(is.message, cases[i].message) != 0)
			fail_msg("%s:\n have %s\n want %s", cases[i].name, is.message,
				 cases[i].message);
		if (cases[i].contains != NULL && strstr(is.message, cases[i].contains) == NULL)
			fail_msg("%s: %s lacks %s", cases[i].name, is.message, cases[i].contains);
		json_decref(m);
		json_decref(p);
		json_decref(v);
	}
}

/* --- the list the cluster's conditions quote --- */

static json_t *pull_pod(void)
{
	return pod_with("{\"phase\":\"Pending\",\"conditions\":[" NOT_READY
			"]," WAITING("ErrImagePull", PULL_ERR) "}",
			false);
}

static void test_member_issues_list(void **state)
{
	json_t *a = member("demo-a", NULL), *b = member("demo-b", NULL);
	json_t *c = member("demo-c", NULL), *d = member("demo-d", NULL);
	json_t *e = member("demo-e", "{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\","
				     "\"reason\":\"CreateFailed\",\"message\":\"creating Pod "
				     "demo-e failed: HTTP 403: exceeded quota\"}]}");
	json_t *pa = pull_pod(), *pb = pull_pod(), *pd = pull_pod();
	struct eo_plan_member v[5] = {
	    {a, pa, NULL}, {b, pb, NULL}, {c, NULL, NULL}, {d, pd, NULL}, {e, NULL, NULL}};
	char buf[EO_PLAN_ISSUES_MAX];

	(void)state;
	/* demo-d is dormant, demo-c has no Pod yet (on its way): neither is listed. */
	json_object_set_new(json_object_get(d, "spec"), "dormant", json_true());
	assert_int_equal(eo_plan_member_issues(v, 1, T0, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "member demo-a: image " IMAGE
				 " cannot be pulled: ErrImagePull: failed to pull and unpack "
				 "image \"" IMAGE "\": failed to resolve reference \"" IMAGE
				 "\": " IMAGE ": not found");
	assert_int_equal(eo_plan_member_issues(&v[2], 3, T0, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "member demo-e: creating Pod demo-e failed: HTTP 403: exceeded "
				 "quota");
	assert_int_equal(eo_plan_member_issues(v, 5, T0, buf, sizeof(buf)), 3);
	assert_non_null(strstr(buf, "member demo-a: image"));
	assert_non_null(strstr(buf, "; member demo-b: image"));
	assert_null(strstr(buf, "demo-e"));
	assert_non_null(strstr(buf, " (and 1 more)"));
	/* A small buffer is cut, never overrun. */
	assert_int_equal(eo_plan_member_issues(v, 5, T0, buf, 40), 3);
	assert_true(strlen(buf) < 40);
	assert_int_equal(eo_plan_member_issues(v, 0, T0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	json_decref(a);
	json_decref(b);
	json_decref(c);
	json_decref(d);
	json_decref(e);
	json_decref(pa);
	json_decref(pb);
	json_decref(pd);
}

/* --- refused writes --- */

static void test_failure_message_and_apply(void **state)
{
	struct eo_plan_failure f = {EO_PLAN_VERB_CREATE, "Service", "demo", 422,
				    "Service \"demo\" is invalid: metadata.labels: Invalid value"};
	struct eo_plan_failure g = {EO_PLAN_VERB_CREATE, "EtcdMember", NULL, 403, NULL};
	struct eo_plan_failure p = {EO_PLAN_VERB_PATCH, "Pod", "demo-a", 500, "boom"};
	json_t *st = json_object();
	char buf[EO_PLAN_FAILURE_MSG_MAX];

	(void)state;
	eo_plan_failure_message(&f, buf, sizeof(buf));
	assert_string_equal(buf, "creating Service demo failed: HTTP 422: Service \"demo\" is "
				 "invalid: metadata.labels: Invalid value");
	eo_plan_failure_message(&g, buf, sizeof(buf));
	assert_string_equal(buf, "creating a new EtcdMember failed: HTTP 403: (no message)");
	eo_plan_failure_message(&p, buf, 12);
	assert_string_equal(buf, "patching Po");
	assert_string_equal(eo_plan_failure_reason(&p), EO_PLAN_REASON_PATCH_FAILED);
	assert_true(eo_plan_failure_reason_is("DeleteFailed"));
	assert_false(eo_plan_failure_reason_is("QuorumHealthy"));
	assert_false(eo_plan_failure_reason_is(NULL));

	assert_int_equal(eo_plan_failure_apply(st, &f, EO_COND_DEGRADED, EO_COND_TRUE, 3, T0), 0);
	assert_true(eo_condition_matches(st, EO_COND_DEGRADED, EO_COND_TRUE, "CreateFailed"));
	/* Without a refusal a failure reason is stale and goes; any other reason stays. */
	assert_int_equal(eo_plan_failure_apply(st, NULL, EO_COND_DEGRADED, EO_COND_TRUE, 3, T0), 0);
	assert_null(eo_condition_find(st, EO_COND_DEGRADED));
	eo_condition_set(
	    st, &(struct eo_condition){EO_COND_DEGRADED, EO_COND_FALSE, "QuorumHealthy", "", 1},
	    T0);
	assert_int_equal(eo_plan_failure_apply(st, NULL, EO_COND_DEGRADED, EO_COND_TRUE, 3, T0), 0);
	assert_non_null(eo_condition_find(st, EO_COND_DEGRADED));
	json_decref(st);
}

/* --- the cluster planner --- */

static json_t *cluster_with(const char *status)
{
	char buf[2048];

	snprintf(
	    buf, sizeof(buf),
	    "{\"apiVersion\":\"" EO_API_GROUP_VERSION "\",\"kind\":\"EtcdCluster\","
	    "\"metadata\":{\"name\":\"demo\",\"namespace\":\"default\",\"uid\":\"c-uid\","
	    "\"generation\":1},\"spec\":{\"replicas\":1,\"version\":\"3.6.11\","
	    "\"storage\":{\"size\":\"1Gi\",\"medium\":\"\"},\"progressDeadlineSeconds\":600}%s%s}",
	    status ? ",\"status\":" : "", status ? status : "");
	return tu_json(buf);
}

#define LATCHED                                                                                    \
	"\"clusterToken\":\"default-demo-c-uid\",\"selector\":"                                    \
	"\"etcd-operator.cozystack.io/cluster=demo\",\"readyMembers\":0,\"brokenMembers\":0,"      \
	"\"progressDeadline\":\"2026-06-02T10:10:00Z\",\"observed\":{\"replicas\":1,"              \
	"\"version\":\"3.6.11\",\"storage\":{\"size\":\"1Gi\",\"medium\":\"\"}}"

static const char *cmsg(const json_t *st, const char *type)
{
	return json_string_value(json_object_get(eo_condition_find(st, type), "message"));
}

/* The seed's image cannot be pulled: Available and Progressing say so, and nothing churns. */
static void test_cluster_names_member_issue(void **state)
{
	json_t *c = cluster_with("{" LATCHED "}");
	json_t *hs = eo_desired_headless_service(c), *cs = eo_desired_client_service(c);
	json_t *m = member("demo-a", NULL), *p = pull_pod();
	struct eo_plan_member v[1] = {{m, p, NULL}};
	struct eo_plan_input in = {.cluster = c,
				   .members = v,
				   .n_members = 1,
				   .headless_svc = hs,
				   .client_svc = cs,
				   .build = &OPTS,
				   .now = T0};
	struct eo_plan_result r = {0}, again = {0};

	(void)state;
	assert_int_equal(eo_plan_cluster(&in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_WAIT);
	assert_true(eo_condition_matches(r.status, EO_COND_AVAILABLE, EO_COND_FALSE,
					 EO_REASON_WAITING_FOR_SEED));
	assert_non_null(strstr(cmsg(r.status, EO_COND_AVAILABLE),
			       "the Pod of seed member demo-a is not ready yet; member demo-a: "
			       "image " IMAGE " cannot be pulled: ErrImagePull: failed to pull"));
	assert_non_null(strstr(cmsg(r.status, EO_COND_PROGRESSING),
			       "; member demo-a: image " IMAGE " cannot be pulled"));
	/* The same world later: the same status, no write. */
	json_object_set(c, "status", r.status);
	in.now += 60;
	assert_int_equal(eo_plan_cluster(&in, &again), 0);
	assert_false(again.status_changed);
	eo_plan_result_clear(&again);
	/* Once the Pod is ready the message no longer names it. */
	json_decref(p);
	p = pod_with("{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":"
		     "\"True\"}]}",
		     false);
	v[0].pod = p;
	assert_int_equal(eo_plan_cluster(&in, &again), 0);
	assert_int_equal(again.action, EO_PLAN_QUERY_MEMBERS);
	eo_plan_result_clear(&again);
	in.etcd_queried = true;
	in.etcd_err = EO_ETCD_UNAVAILABLE;
	assert_int_equal(eo_plan_cluster(&in, &again), 0);
	assert_null(strstr(cmsg(again.status, EO_COND_AVAILABLE), "cannot be pulled"));
	eo_plan_result_clear(&again);
	eo_plan_result_clear(&r);
	json_decref(c);
	json_decref(hs);
	json_decref(cs);
	json_decref(m);
	json_decref(p);
}

/* A Service create refused on the first pass: a status is written all the same. */
static void test_cluster_refused_service(void **state)
{
	json_t *c = cluster_with(NULL);
	struct eo_plan_failure f = {EO_PLAN_VERB_CREATE, "Service", "demo", 422,
				    "Service \"demo\" is invalid: metadata.labels: Invalid value: "
				    "\"bad key!\""};
	struct eo_plan_input in = {.cluster = c, .build = &OPTS, .now = T0};
	struct eo_plan_result r = {0};

	(void)state;
	/* Without a refusal the pass writes nothing, as before. */
	assert_int_equal(eo_plan_cluster(&in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENSURE_SERVICES);
	assert_null(r.status);
	eo_plan_result_clear(&r);

	in.failure = &f;
	assert_int_equal(eo_plan_cluster(&in, &r), 0);
	assert_non_null(r.status);
	assert_true(r.status_changed);
	assert_true(eo_condition_matches(r.status, EO_COND_DEGRADED, EO_COND_TRUE,
					 EO_PLAN_REASON_CREATE_FAILED));
	assert_string_equal(cmsg(r.status, EO_COND_DEGRADED),
			    "creating Service demo failed: HTTP 422: Service \"demo\" is invalid: "
			    "metadata.labels: Invalid value: \"bad key!\"");
	assert_non_null(json_object_get(r.status, "readyMembers"));
	assert_non_null(json_object_get(r.status, "selector"));
	/* The refusal again: nothing new to write. */
	json_object_set(c, "status", r.status);
	eo_plan_result_clear(&r);
	in.now += 30;
	assert_int_equal(eo_plan_cluster(&in, &r), 0);
	assert_false(r.status_changed);
	eo_plan_result_clear(&r);
	json_decref(c);
}

/* A refusal left in Degraded before the cluster formed goes once the write goes through. */
static void test_cluster_stale_refusal_cleared(void **state)
{
	json_t *c = cluster_with("{" LATCHED ",\"conditions\":[{\"type\":\"Degraded\",\"status\":"
				 "\"True\",\"reason\":\"CreateFailed\",\"message\":\"creating a "
				 "new EtcdMember failed: HTTP 403: quota\",\"lastTransitionTime\":"
				 "\"2026-06-02T10:00:00Z\",\"observedGeneration\":1}]}");
	json_t *hs = eo_desired_headless_service(c), *cs = eo_desired_client_service(c);
	struct eo_plan_failure f = {EO_PLAN_VERB_CREATE, "EtcdMember", NULL, 403, "quota"};
	struct eo_plan_input in = {
	    .cluster = c, .headless_svc = hs, .client_svc = cs, .build = &OPTS, .now = T0 + 10};
	struct eo_plan_result r = {0};

	(void)state;
	/* Refused again: the same condition (same transition time), no write after the first. */
	in.failure = &f;
	assert_int_equal(eo_plan_cluster(&in, &r), 0);
	assert_string_equal(
	    json_string_value(json_object_get(eo_condition_find(r.status, EO_COND_DEGRADED),
					      "lastTransitionTime")),
	    "2026-06-02T10:00:00Z");
	json_object_set(c, "status", r.status);
	eo_plan_result_clear(&r);
	assert_int_equal(eo_plan_cluster(&in, &r), 0);
	assert_false(r.status_changed);
	eo_plan_result_clear(&r);
	/* Not refused: the next pass (towards the seed) drops it. */
	in.failure = NULL;
	assert_int_equal(eo_plan_cluster(&in, &r), 0);
	assert_true(r.status_changed);
	assert_null(eo_condition_find(r.status, EO_COND_DEGRADED));
	eo_plan_result_clear(&r);
	json_decref(c);
	json_decref(hs);
	json_decref(cs);
}

/* Formed: a refused PDB create overrides the health Degraded; health comes back after. */
static void test_cluster_refused_pdb(void **state)
{
	json_t *c = cluster_with("{" LATCHED ",\"clusterID\":\"248adce0359142ba\"}");
	json_t *hs = eo_desired_headless_service(c), *cs = eo_desired_client_service(c);
	json_t *m = member("demo-a", NULL);
	json_t *p = pod_with("{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\","
			     "\"status\":\"True\"}]}",
			     false);
	struct eo_plan_member v[1] = {{m, p, NULL}};
	struct eo_plan_failure f = {EO_PLAN_VERB_CREATE, "PodDisruptionBudget", "demo", 403,
				    "poddisruptionbudgets.policy is forbidden"};
	struct eo_plan_input in = {.cluster = c,
				   .members = v,
				   .n_members = 1,
				   .headless_svc = hs,
				   .client_svc = cs,
				   .build = &OPTS,
				   .now = T0};
	struct eo_plan_result r = {0};

	(void)state;
	assert_int_equal(eo_plan_cluster(&in, &r), 0);
	assert_int_equal(r.action, EO_PLAN_ENSURE_PDB);
	assert_true(eo_condition_matches(r.status, EO_COND_DEGRADED, EO_COND_FALSE,
					 EO_REASON_QUORUM_HEALTHY));
	eo_plan_result_clear(&r);
	in.failure = &f;
	assert_int_equal(eo_plan_cluster(&in, &r), 0);
	assert_true(eo_condition_matches(r.status, EO_COND_DEGRADED, EO_COND_TRUE,
					 EO_PLAN_REASON_CREATE_FAILED));
	assert_true(eo_condition_matches(r.status, EO_COND_AVAILABLE, EO_COND_TRUE,
					 EO_REASON_QUORUM_HEALTHY));
	assert_string_equal(cmsg(r.status, EO_COND_DEGRADED),
			    "creating PodDisruptionBudget demo failed: HTTP 403: "
			    "poddisruptionbudgets.policy is forbidden");
	json_object_set(c, "status", r.status);
	eo_plan_result_clear(&r);
	in.failure = NULL;
	assert_int_equal(eo_plan_cluster(&in, &r), 0);
	assert_true(eo_condition_matches(r.status, EO_COND_DEGRADED, EO_COND_FALSE,
					 EO_REASON_QUORUM_HEALTHY));
	eo_plan_result_clear(&r);
	json_decref(c);
	json_decref(hs);
	json_decref(cs);
	json_decref(m);
	json_decref(p);
}

/* --- the member planner --- */

static json_t *member_cluster(void)
{
	return cluster_with("{" LATCHED "}");
}

static void test_member_ready_names_issue(void **state)
{
	json_t *m = member("demo-a", NULL), *c = member_cluster(), *p = pull_pod();
	json_t *v = pvc_in("Bound");
	struct eo_mplan_input in = {
	    .member = m, .cluster = c, .pod = p, .pvc = v, .build = &OPTS, .now = T0};
	struct eo_mplan_result r = {0};

	(void)state;
	pwst_mplan(&in, &r, EO_MPLAN_NONE);
	assert_true(eo_condition_matches(r.status, EO_COND_READY, EO_COND_FALSE,
					 EO_REASON_IMAGE_PULL_FAILED));
	assert_non_null(strstr(cmsg(r.status, EO_COND_READY),
			       "image " IMAGE " cannot be pulled: ErrImagePull"));
	eo_member_plan_clear(&r);
	/* A Pod that is only on its way still reads PodNotReady with its phase. */
	json_decref(p);
	p = pod_with("{\"phase\":\"Pending\"}", false);
	in.pod = p;
	assert_int_equal(eo_member_plan(&in, &r), 0);
	assert_true(
	    eo_condition_matches(r.status, EO_COND_READY, EO_COND_FALSE, EO_REASON_POD_NOT_READY));
	assert_string_equal(cmsg(r.status, EO_COND_READY), "pod phase: Pending");
	eo_member_plan_clear(&r);
	json_decref(m);
	json_decref(c);
	json_decref(p);
	json_decref(v);
}

static void test_member_refused_pod(void **state)
{
	json_t *m = member("demo-a", NULL), *c = member_cluster(), *v = pvc_in("Bound");
	struct eo_plan_failure f = {EO_PLAN_VERB_CREATE, "Pod", "demo-a", 403,
				    "pods \"demo-a\" is forbidden: exceeded quota: q, requested: "
				    "pods=1, used: pods=1, limited: pods=1"};
	struct eo_mplan_input in = {.member = m, .cluster = c, .pvc = v, .build = &OPTS, .now = T0};
	struct eo_mplan_result r = {0};
	struct eo_plan_member pm[1] = {{m, NULL, v}};
	char buf[EO_PLAN_ISSUES_MAX];

	(void)state;
	pwst_mplan(&in, &r, EO_MPLAN_CREATE_POD);
	assert_true(
	    eo_condition_matches(r.status, EO_COND_READY, EO_COND_FALSE, EO_REASON_POD_NOT_READY));
	eo_member_plan_clear(&r);
	in.failure = &f;
	assert_int_equal(eo_member_plan(&in, &r), 0);
	assert_true(r.status_changed);
	assert_true(eo_condition_matches(r.status, EO_COND_READY, EO_COND_FALSE,
					 EO_PLAN_REASON_CREATE_FAILED));
	assert_string_equal(cmsg(r.status, EO_COND_READY),
			    "creating Pod demo-a failed: HTTP 403: pods \"demo-a\" is forbidden: "
			    "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1");
	/* Written, refused again: no change. The cluster quotes it. */
	json_object_set(m, "status", r.status);
	eo_member_plan_clear(&r);
	assert_int_equal(eo_member_plan(&in, &r), 0);
	assert_false(r.status_changed);
	eo_member_plan_clear(&r);
	assert_int_equal(eo_plan_member_issues(pm, 1, T0, buf, sizeof(buf)), 1);
	assert_non_null(strstr(buf, "member demo-a: creating Pod demo-a failed: HTTP 403"));
	/* Not refused any more: the planned status replaces it. */
	in.failure = NULL;
	assert_int_equal(eo_member_plan(&in, &r), 0);
	assert_true(
	    eo_condition_matches(r.status, EO_COND_READY, EO_COND_FALSE, EO_REASON_POD_NOT_READY));
	eo_member_plan_clear(&r);
	/* A pass that writes no status (the label patch) still records its refusal. */
	{
		json_t *p = pod_with("{\"phase\":\"Running\"}", false);
		struct eo_plan_failure pf = {EO_PLAN_VERB_PATCH, "Pod", "demo-a", 422, "bad"};

		json_object_del(json_object_get(json_object_get(p, "metadata"), "labels"),
				EO_LABEL_ROLE);
		in.pod = p;
		pwst_mplan(&in, &r, EO_MPLAN_PATCH_POD);
		assert_null(r.status);
		eo_member_plan_clear(&r);
		in.failure = &pf;
		assert_int_equal(eo_member_plan(&in, &r), 0);
		assert_true(eo_condition_matches(r.status, EO_COND_READY, EO_COND_FALSE,
						 EO_PLAN_REASON_PATCH_FAILED));
		eo_member_plan_clear(&r);
		/* Being deleted: nothing to write. */
		json_object_set_new(json_object_get(m, "metadata"), "deletionTimestamp",
				    json_string("2026-06-02T10:00:00Z"));
		assert_int_equal(eo_member_plan(&in, &r), 0);
		assert_null(r.status);
		eo_member_plan_clear(&r);
		json_decref(p);
	}
	json_decref(m);
	json_decref(c);
	json_decref(v);
}

TU_MAIN(test_pod_issue_table, test_member_issues_list, test_failure_message_and_apply,
	test_cluster_names_member_issue, test_cluster_refused_service,
	test_cluster_stale_refusal_cleared, test_cluster_refused_pdb, test_member_ready_names_issue,
	test_member_refused_pod)
