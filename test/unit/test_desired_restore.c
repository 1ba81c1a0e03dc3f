/*
 * Unit tests for desired/restore.c: the Pod of a restoring seed (init containers restore and
 * restore-rebuild) compared with golden JSON, the seed EtcdMember carrying spec.restore, and
 * the cases that get no init containers (a joining member, no restore source).
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

#include "desired/desired.h"
#include "desired/restore.h"

#define GOLDEN_DIR "test/unit/test_desired_golden/"

static const struct eo_desired_opts OPTS = {.etcd_image_repository = "quay.io/coreos/etcd",
					    .cluster_domain = "cluster.local",
					    .operator_image = "localhost/etcd-operator:dev"};

#define SUM "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define S3_SOURCE                                                                                  \
	"{\"s3\":{\"endpoint\":\"http://minio:9000\",\"bucket\":\"snaps\",\"key\":"                \
	"\"old/"                                                                                   \
	"old-1.db\",\"forcePathStyle\":true,\"insecure\":true,\"credentialsSecretRef\":{\"name\":" \
	"\"s3-creds\"}},\"expectedChecksum\":\"" SUM "\"}"
#define S3_HTTPS_SOURCE                                                                            \
	"{\"s3\":{\"endpoint\":\"https://s3.example.com\",\"bucket\":\"snaps\",\"key\":\"k.db\","  \
	"\"credentialsSecretRef\":{\"name\":\"s3-creds\"}}}"
#define PVC_SOURCE                                                                                 \
	"{\"pvc\":{\"claimName\":\"backups\",\"subPath\":\"daily/"                                 \
	"old-1.db\"},\"expectedChecksum\":"                                                        \
	"\"" SUM "\"}"
#define ARCHIVE_SOURCE                                                                             \
	"{\"archive\":{\"pvc\":{\"claimName\":\"archive\",\"subPath\":\"/prod/etcd/\"},"           \
	"\"targetRevision\":42}}"
#define ARCHIVE_TIME_SOURCE                                                                        \
	"{\"archive\":{\"pvc\":{\"claimName\":\"archive\"},\"targetTime\":"                        \
	"\"2026-11-28T01:02:03Z\"}}"
#define ARCHIVE_LATEST_SOURCE "{\"archive\":{\"pvc\":{\"claimName\":\"archive\"}}}"

static json_t *member(const char *source, bool bootstrap)
{
	char buf[2048];
	json_error_t e;
	json_t *j;

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"etcd-operator.cozystack.io/v1alpha2\",\"kind\":\"EtcdMember\","
		 "\"metadata\":{\"name\":\"new-abcde\",\"namespace\":\"ns\",\"uid\":\"m-uid\"},"
		 "\"spec\":{\"clusterName\":\"new\",\"version\":\"3.5.35\",\"storage\":{\"size\":"
		 "\"1Gi\"},\"bootstrap\":%s,\"initialCluster\":\"new-abcde=http://"
		 "new-abcde.new.ns.svc.cluster.local:2380\",\"clusterToken\":\"ns-new-c-uid\","
		 "\"replicas\":1%s%s%s},\"status\":{}}",
		 bootstrap ? "true" : "false", source ? ",\"restore\":{\"source\":" : "",
		 source ? source : "", source ? "}" : "");
	j = json_loads(buf, 0, &e);
	if (j == NULL)
		fail_msg("fixture: %s", e.text);
	return j;
}

#define golden(file, obj) tu_golden(GOLDEN_DIR file, obj)
static void test_restore_pod_s3(void **state)
{
	json_t *m = member(S3_SOURCE, true), *pod = eo_desired_member_pod(m, &OPTS, false);

	(void)state;
	golden("restore_pod_s3.json", pod);
	tu_assert_restricted_pod_spec(json_object_get(pod, "spec"), "restoring Pod (s3)");
	json_decref(pod);
	json_decref(m);
}

static void test_restore_pod_pvc(void **state)
{
	json_t *m = member(PVC_SOURCE, true), *pod = eo_desired_member_pod(m, &OPTS, false);

	(void)state;
	golden("restore_pod_pvc.json", pod);
	tu_assert_restricted_pod_spec(json_object_get(pod, "spec"), "restoring Pod (pvc)");
	json_decref(pod);
	json_decref(m);
}

static void test_restore_pod_archive(void **state)
{
	json_t *m = member(ARCHIVE_SOURCE, true), *pod = eo_desired_member_pod(m, &OPTS, false);

	(void)state;
	golden("restore_pod_archive.json", pod);
	tu_assert_restricted_pod_spec(json_object_get(pod, "spec"), "restoring Pod (archive)");
	json_decref(pod);
	json_decref(m);
}

/*
 * --pod-run-as-user=auto: the restoring Pod has no user, group or fsGroup of the operator's,
 * and keeps fsGroupChangePolicy OnRootMismatch for the fsGroup the platform assigns.
 */
static void test_restore_pod_auto_user(void **state)
{
	struct eo_desired_opts o = OPTS;
	json_t *m = member(PVC_SOURCE, true), *pod = NULL;
	json_t *want = tu_jsonq("{'runAsNonRoot':true,'fsGroupChangePolicy':'OnRootMismatch',"
				"'seccompProfile':{'type':'RuntimeDefault'}}");

	(void)state;
	o.pod_run_as_user = EO_DESIRED_POD_UID_AUTO;
	pod = eo_desired_member_pod(m, &o, false);
	tu_assert_json_equal(json_object_get(json_object_get(pod, "spec"), "securityContext"), want,
			     "restoring Pod securityContext (auto)");
	tu_assert_restricted_pod_spec(json_object_get(pod, "spec"), "restoring Pod (auto user)");
	json_decref(pod);
	json_decref(want);
	json_decref(m);
}

/* Only a seed restores; without a source or an operator image nothing is added or it fails. */
static void test_restore_only_seed(void **state)
{
	struct eo_desired_opts no_image = OPTS;
	json_t *joiner = member(S3_SOURCE, false), *plain = member(NULL, true);
	json_t *seed = member(S3_SOURCE, true), *pod;

	(void)state;
	assert_false(eo_desired_member_restores(joiner));
	assert_false(eo_desired_member_restores(plain));
	assert_true(eo_desired_member_restores(seed));
	pod = eo_desired_member_pod(joiner, &OPTS, true);
	assert_non_null(pod);
	assert_null(json_object_get(json_object_get(pod, "spec"), "initContainers"));
	json_decref(pod);
	pod = eo_desired_member_pod(plain, &OPTS, false);
	assert_null(json_object_get(json_object_get(pod, "spec"), "initContainers"));
	json_decref(pod);
	no_image.operator_image = NULL;
	assert_null(eo_desired_member_pod(seed, &no_image, false));
	json_decref(joiner);
	json_decref(plain);
	json_decref(seed);
}

/* Whether the Pod has a volume or an init container of this name. */
static bool has_named(const json_t *pod, const char *list, const char *name)
{
	const json_t *v = NULL;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(pod, "spec"), list), i, v)
	{
		if (strcmp(json_string_value(json_object_get(v, "name")), name) == 0)
			return true;
	}
	return false;
}

/*
 * A restore runs once: once the cluster has a cluster ID or the seed a member ID, its Pod has
 * neither the restore init containers nor the source (Secret or claim) mounted, so a wiped
 * seed never restores the old snapshot again and a deleted source never blocks its start;
 * a seed with a member ID gets the data guard instead.
 */
static void test_restore_runs_once(void **state)
{
	static const struct {
		const char *source;
		const char *member_id;
		bool bootstrapped;
		bool restores;
	} cases[] = {
	    {S3_SOURCE, NULL, false, true},
	    {S3_SOURCE, NULL, true, false},
	    {S3_SOURCE, "8e9e05c52164694d", false, false},
	    {S3_SOURCE, "8e9e05c52164694d", true, false},
	    {PVC_SOURCE, NULL, false, true},
	    {PVC_SOURCE, NULL, true, false},
	    {PVC_SOURCE, "8e9e05c52164694d", true, false},
	    {ARCHIVE_SOURCE, NULL, false, true},
	    {ARCHIVE_SOURCE, NULL, true, false},
	    {ARCHIVE_SOURCE, "8e9e05c52164694d", false, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *m = member(cases[i].source, true), *pod = NULL;

		if (cases[i].member_id != NULL)
			json_object_set_new(json_object_get(m, "status"), "memberID",
					    json_string(cases[i].member_id));
		pod = eo_desired_member_pod(m, &OPTS, cases[i].bootstrapped);
		assert_non_null(pod);
		assert_int_equal(has_named(pod, "initContainers", EO_RESTORE_CONTAINER),
				 cases[i].restores);
		assert_int_equal(has_named(pod, "initContainers", EO_RESTORE_REBUILD_CONTAINER),
				 cases[i].restores);
		assert_int_equal(has_named(pod, "volumes", "s3-credentials") ||
				     has_named(pod, "volumes", "restore-source"),
				 cases[i].restores);
		assert_int_equal(has_named(pod, "initContainers", EO_DESIRED_DATA_GUARD_CONTAINER),
				 cases[i].member_id != NULL);
		json_decref(pod);
		json_decref(m);
	}
}

/* The args of m's Pod's init container name, as one space-separated string in buf. */
static void container_args(json_t *m, const char *name, char *buf, size_t cap)
{
	json_t *pod = eo_desired_member_pod(m, &OPTS, false), *inits, *c, *a;
	size_t i, j, len = 0;

	assert_non_null(pod);
	buf[0] = '\0';
	inits = json_object_get(json_object_get(pod, "spec"), "initContainers");
	json_array_foreach(inits, i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "name")), name) != 0)
			continue;
		json_array_foreach(json_object_get(c, "args"), j, a) len +=
		    (size_t)snprintf(buf + len, cap - len, "%s ", json_string_value(a));
	}
	assert_true(len > 0 && len < cap);
	json_decref(pod);
}

static void restore_args(json_t *m, char *buf, size_t cap)
{
	container_args(m, EO_RESTORE_CONTAINER, buf, cap);
}

/* The names of m's Pod's init containers, in order, space-separated. */
static void init_names(json_t *m, char *buf, size_t cap)
{
	json_t *pod = eo_desired_member_pod(m, &OPTS, false), *c;
	size_t i, len = 0;

	assert_non_null(pod);
	buf[0] = '\0';
	json_array_foreach(json_object_get(json_object_get(pod, "spec"), "initContainers"), i, c)
	    len += (size_t)snprintf(buf + len, cap - len, "%s ",
				    json_string_value(json_object_get(c, "name")));
	assert_true(len < cap);
	json_decref(pod);
}

/*
 * An archive source: the agent only installs itself, the replay (etcd image) runs between it
 * and the rebuild with the archive directory, the target and the staged output, and the
 * rebuild takes the staged file (no --file: it removes the staging dir when done).
 */
static void test_restore_archive_steps(void **state)
{
	json_t *rev = member(ARCHIVE_SOURCE, true), *tm = member(ARCHIVE_TIME_SOURCE, true);
	json_t *latest = member(ARCHIVE_LATEST_SOURCE, true);
	char args[4096];

	(void)state;
	assert_true(eo_desired_member_restores(rev));
	init_names(rev, args, sizeof(args));
	assert_string_equal(args, "restore restore-replay restore-rebuild ");
	restore_args(rev, args, sizeof(args));
	assert_non_null(strstr(args, "--install-self /agent "));
	assert_null(strstr(args, "--file"));
	assert_null(strstr(args, "--s3-"));
	container_args(rev, EO_RESTORE_REPLAY_CONTAINER, args, sizeof(args));
	assert_non_null(strstr(
	    args, "archive-replay --archive-dir /restore/prod/etcd --out " EO_RESTORE_REPLAY_OUT
		  " --work-dir " EO_RESTORE_REPLAY_WORK_DIR " --data-dir /var/lib/etcd "));
	assert_non_null(strstr(args, "--target-revision 42 "));
	assert_null(strstr(args, "--target-time"));
	assert_non_null(strstr(args, "--termination-log /dev/termination-log "));
	container_args(rev, EO_RESTORE_REBUILD_CONTAINER, args, sizeof(args));
	assert_null(strstr(args, "--file"));
	assert_non_null(strstr(args, "--staging-dir " EO_RESTORE_STAGING_DIR " "));
	container_args(tm, EO_RESTORE_REPLAY_CONTAINER, args, sizeof(args));
	assert_non_null(strstr(args, "--archive-dir /restore --out "));
	assert_non_null(strstr(args, "--target-time 2026-11-28T01:02:03Z "));
	assert_null(strstr(args, "--target-revision"));
	container_args(latest, EO_RESTORE_REPLAY_CONTAINER, args, sizeof(args));
	assert_null(strstr(args, "--target-"));
	json_decref(rev);
	json_decref(tm);
	json_decref(latest);
}

/* source.expectedChecksum and s3.insecure reach the restore agent, and only when set. */
static void test_restore_checksum_insecure_args(void **state)
{
	json_t *s3 = member(S3_SOURCE, true), *pvc = member(PVC_SOURCE, true);
	json_t *https = member(S3_HTTPS_SOURCE, true);
	char args[4096];

	(void)state;
	restore_args(s3, args, sizeof(args));
	assert_non_null(strstr(args, "--expected-checksum " SUM " "));
	assert_non_null(strstr(args, "--s3-insecure "));
	restore_args(pvc, args, sizeof(args));
	assert_non_null(strstr(args, "--expected-checksum " SUM " "));
	assert_null(strstr(args, "--s3-insecure"));
	restore_args(https, args, sizeof(args));
	assert_null(strstr(args, "--expected-checksum"));
	assert_null(strstr(args, "--s3-insecure"));
	json_decref(s3);
	json_decref(pvc);
	json_decref(https);
}

/* The seed EtcdMember of a cluster with spec.bootstrap.restore carries it as spec.restore. */
static void test_seed_member_restore(void **state)
{
	json_error_t e;
	json_t *cluster = json_loads(
	    "{\"apiVersion\":\"etcd-operator.cozystack.io/v1alpha2\",\"kind\":\"EtcdCluster\","
	    "\"metadata\":{\"name\":\"new\",\"namespace\":\"ns\",\"uid\":\"c-uid\"},"
	    "\"spec\":{\"replicas\":3,\"version\":\"3.6.11\",\"storage\":{\"size\":\"1Gi\"},"
	    "\"bootstrap\":{\"restore\":{\"source\":" S3_SOURCE "}}},"
	    "\"status\":{\"clusterToken\":\"t\"}}",
	    0, &e);
	json_t *seed, *joiner;

	(void)state;
	assert_non_null(cluster);
	seed = eo_desired_seed_member(cluster, "new-abcde");
	joiner = eo_desired_joining_member(cluster, "new-fghij");
	assert_non_null(seed);
	assert_non_null(joiner);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(
		    json_object_get(json_object_get(json_object_get(seed, "spec"), "restore"),
				    "source"),
		    "s3"),
		"key")),
	    "old/old-1.db");
	assert_null(json_object_get(json_object_get(joiner, "spec"), "restore"));
	json_decref(seed);
	json_decref(joiner);
	json_decref(cluster);
}

TU_MAIN(test_restore_pod_s3, test_restore_pod_pvc, test_restore_only_seed, test_restore_runs_once,
	test_seed_member_restore, test_restore_checksum_insecure_args, test_restore_pod_archive,
	test_restore_archive_steps, test_restore_pod_auto_user)
