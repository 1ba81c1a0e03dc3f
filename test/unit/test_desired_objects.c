/*
 * Unit tests for build/: the desired objects of a cluster and a member compared with golden
 * JSON (the files in test/unit/test_desired_golden/; rerun with EO_UPDATE_GOLDEN=1 to rewrite them
 * after an intended change, then review the diff), plus the Service drift patch, labels,
 * owner references and the --initial-cluster-state rule.
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
#include "desired/desired.h"
#include "support/testutil.h"
#include "support/tu_main.h"

#define GOLDEN_DIR "test/unit/test_desired_golden/"

static const char *CLUSTER_JSON =
    "{\"apiVersion\":\"etcd-operator.cozystack.io/v1alpha2\",\"kind\":\"EtcdCluster\","
    "\"metadata\":{\"name\":\"demo\",\"namespace\":\"default\",\"uid\":\"c-uid-1\","
    "\"generation\":1},"
    "\"spec\":{\"replicas\":1,\"version\":\"3.6.11\",\"storage\":{\"size\":\"1Gi\","
    "\"medium\":\"\"},\"progressDeadlineSeconds\":600,"
    "\"additionalMetadata\":{\"labels\":{\"team\":\"db\",\"app.kubernetes.io/name\":\"x\","
    "\"etcd-operator.cozystack.io/role\":\"sneaky\"},\"annotations\":{\"note\":\"hi\"}}},"
    "\"status\":{\"clusterToken\":\"default-demo-c-uid-1\","
    "\"observed\":{\"replicas\":1,\"version\":\"3.6.11\",\"storage\":{\"size\":\"1Gi\","
    "\"medium\":\"\"},"
    "\"additionalMetadata\":{\"labels\":{\"team\":\"db\",\"app.kubernetes.io/name\":\"x\","
    "\"etcd-operator.cozystack.io/role\":\"sneaky\"},\"annotations\":{\"note\":\"hi\"}}}}}";

static const char *MEMBER_JSON =
    "{\"apiVersion\":\"etcd-operator.cozystack.io/v1alpha2\",\"kind\":\"EtcdMember\","
    "\"metadata\":{\"name\":\"demo-abcde\",\"namespace\":\"default\",\"uid\":\"m-uid-1\"},"
    "\"spec\":{\"clusterName\":\"demo\",\"version\":\"3.6.11\",\"storage\":{\"size\":\"2Gi\","
    "\"storageClassName\":\"standard\"},\"bootstrap\":true,"
    "\"initialCluster\":\"demo-abcde=http://"
    "demo-abcde.demo.default.svc.cluster.local:2380\","
    "\"clusterToken\":\"default-demo-c-uid-1\",\"replicas\":1,"
    "\"options\":{\"quotaBackendBytes\":4294967296,\"autoCompactionMode\":\"periodic\","
    "\"autoCompactionRetention\":\"1h\"},"
    "\"additionalMetadata\":{\"labels\":{\"team\":\"db\"}}},"
    "\"status\":{\"isVoter\":true}}";

static const struct eo_desired_opts OPTS = {.etcd_image_repository = "quay.io/coreos/etcd",
					    .cluster_domain = "cluster.local"};

/* Compares obj with the golden file (or rewrites it with EO_UPDATE_GOLDEN=1). */
#define golden(file, obj) tu_golden(GOLDEN_DIR file, obj)
static void test_headless_service(void **state)
{
	json_t *c = tu_json(CLUSTER_JSON), *s = eo_desired_headless_service(c);

	(void)state;
	golden("headless_service.json", s);
	json_decref(s);
	json_decref(c);
}

static void test_client_service(void **state)
{
	json_t *c = tu_json(CLUSTER_JSON), *s = eo_desired_client_service(c);

	(void)state;
	golden("client_service.json", s);
	/* Voters only; a Service made by an older operator (cluster only) is patched to it. */
	{
		json_t *old = json_deep_copy(s), *sel = NULL, *patch = NULL;

		sel = json_object_get(json_object_get(s, "spec"), "selector");
		assert_string_equal(json_string_value(json_object_get(sel, EO_LABEL_ROLE)),
				    EO_LABEL_ROLE_VOTER);
		json_object_del(json_object_get(json_object_get(old, "spec"), "selector"),
				EO_LABEL_ROLE);
		patch = eo_desired_service_patch(s, old);
		assert_non_null(patch);
		sel = json_object_get(json_object_get(patch, "spec"), "selector");
		assert_string_equal(json_string_value(json_object_get(sel, EO_LABEL_ROLE)),
				    EO_LABEL_ROLE_VOTER);
		json_decref(patch);
		json_decref(old);
	}
	json_decref(s);
	json_decref(c);
}

static void test_seed_member(void **state)
{
	json_t *c = tu_json(CLUSTER_JSON), *m = eo_desired_seed_member(c, NULL);

	(void)state;
	golden("seed_member.json", m);
	json_decref(m);
	json_decref(c);
}

static void test_joining_member(void **state)
{
	json_t *c = tu_json(CLUSTER_JSON), *m = eo_desired_joining_member(c, NULL);
	json_t *seed = eo_desired_seed_member(c, NULL);

	(void)state;
	golden("joining_member.json", m);
	/* The same as the seed but for the bootstrap mark. */
	assert_false(json_is_true(json_object_get(json_object_get(m, "spec"), "bootstrap")));
	json_object_set_new(json_object_get(seed, "spec"), "bootstrap", json_false());
	assert_true(json_equal(seed, m));
	json_decref(seed);
	/* With the name the planner recorded: that name, no generateName (a retry collides). */
	seed = eo_desired_joining_member(c, "demo-x7k2q");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(seed, "metadata"), "name")),
	    "demo-x7k2q");
	assert_null(json_object_get(json_object_get(seed, "metadata"), "generateName"));
	json_decref(seed);
	json_decref(m);
	json_decref(c);
}

static void test_pdb(void **state)
{
	json_t *c = tu_json(CLUSTER_JSON), *p = eo_desired_pdb(c, 2), *q = NULL, *patch = NULL;

	(void)state;
	golden("pdb.json", p);
	/* In line: no patch. Drifted: minAvailable back, maxUnavailable dropped. */
	q = json_deep_copy(p);
	assert_null(eo_desired_pdb_patch(p, q));
	json_object_set_new(json_object_get(q, "spec"), "minAvailable", json_integer(1));
	json_object_set_new(json_object_get(q, "spec"), "maxUnavailable", json_integer(1));
	patch = eo_desired_pdb_patch(p, q);
	assert_non_null(patch);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(patch, "spec"), "minAvailable")), 2);
	assert_true(
	    json_is_null(json_object_get(json_object_get(patch, "spec"), "maxUnavailable")));
	json_decref(patch);
	json_decref(q);
	json_decref(p);
	json_decref(c);
}

static void test_member_pvc(void **state)
{
	json_t *m = tu_json(MEMBER_JSON), *p = eo_desired_member_pvc(m);

	(void)state;
	golden("member_pvc.json", p);
	json_decref(p);
	json_decref(m);
}

static void test_member_pod(void **state)
{
	json_t *m = tu_json(MEMBER_JSON), *p = eo_desired_member_pod(m, &OPTS, false);

	(void)state;
	golden("member_pod.json", p);
	tu_assert_restricted_pod_spec(json_object_get(p, "spec"), "member Pod");
	json_decref(p);
	json_decref(m);
}

/* Every pass-through field set on the member: all of it lands on the Pod and the PVC. */
static const char *MEMBER_FULL_JSON =
    "{\"apiVersion\":\"etcd-operator.cozystack.io/v1alpha2\",\"kind\":\"EtcdMember\","
    "\"metadata\":{\"name\":\"demo-fghij\",\"namespace\":\"default\",\"uid\":\"m-uid-2\"},"
    "\"spec\":{\"clusterName\":\"demo\",\"version\":\"3.6.11\",\"storage\":{\"size\":\"5Gi\","
    "\"storageClassName\":\"fast\"},\"bootstrap\":false,"
    "\"initialCluster\":\"demo-abcde=http://demo-abcde.demo.default.svc.cluster.local:2380,"
    "demo-fghij=http://demo-fghij.demo.default.svc.cluster.local:2380\","
    "\"clusterToken\":\"default-demo-c-uid-1\",\"replicas\":1,"
    "\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"},"
    "\"limits\":{\"memory\":\"2Gi\"}},"
    "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
    "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"disk\",\"operator\":\"In\","
    "\"values\":[\"ssd\"]}]}]}}},"
    "\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":"
    "\"topology.kubernetes.io/zone\",\"whenUnsatisfiable\":\"ScheduleAnyway\","
    "\"labelSelector\":{\"matchLabels\":{\"etcd-operator.cozystack.io/cluster\":\"demo\"}}}],"
    "\"imagePullSecrets\":[{\"name\":\"regcred\"}],"
    "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"etcd\","
    "\"effect\":\"NoSchedule\"}],"
    "\"nodeSelector\":{\"node-role\":\"etcd\"},\"priorityClassName\":\"system-cluster-critical\","
    "\"options\":{\"quotaBackendBytes\":8589934592,\"autoCompactionMode\":\"revision\","
    "\"autoCompactionRetention\":\"1000\",\"snapshotCount\":50000},"
    "\"additionalMetadata\":{\"labels\":{\"team\":\"db\",\"app.kubernetes.io/name\":\"x\","
    "\"etcd-operator.cozystack.io/role\":\"sneaky\"},\"annotations\":{\"note\":\"hi\","
    "\"etcd-operator.cozystack.io/x\":\"no\"}}},"
    "\"status\":{\"isVoter\":false}}";

static void test_member_pod_passthrough(void **state)
{
	json_t *m = tu_json(MEMBER_FULL_JSON), *p = eo_desired_member_pod(m, &OPTS, true);
	json_t *pvc = eo_desired_member_pvc(m);

	(void)state;
	golden("member_pod_passthrough.json", p);
	tu_assert_restricted_pod_spec(json_object_get(p, "spec"), "member Pod (pass-through)");
	golden("member_pvc_passthrough.json", pvc);
	json_decref(pvc);
	json_decref(p);
	json_decref(m);
}

/* Every flag of `etcd --help` of etcd 3.7.3 (hack/tools/etcd-3.7.3), which dropped the v2
 * store's flags and the --experimental-* names 3.6 had renamed. */
static const char ETCD_37_FLAGS[] =
    " advertise-client-urls auth-token auth-token-ttl auto-compaction-mode "
    " auto-compaction-retention auto-tls backend-batch-interval backend-batch-limit "
    " backend-bbolt-freelist-type bcrypt-cost bootstrap-defrag-threshold-megabytes "
    " cert-file cipher-suites client-cert-allowed-hostname client-cert-auth "
    " client-cert-file client-crl-file client-key-file compact-hash-check-time "
    " compaction-batch-limit compaction-sleep-interval corrupt-check-time cors data-dir "
    " discovery discovery-cacert discovery-cert discovery-dial-timeout discovery-endpoints "
    " discovery-fallback discovery-insecure-skip-tls-verify discovery-insecure-transport "
    " discovery-keepalive-time discovery-keepalive-timeout discovery-key "
    " discovery-password discovery-proxy discovery-request-timeout discovery-srv "
    " discovery-srv-name discovery-token discovery-user distributed-tracing-address "
    " distributed-tracing-instance-id distributed-tracing-sampling-rate "
    " distributed-tracing-service-name downgrade-check-time election-timeout "
    " enable-distributed-tracing enable-grpc-gateway enable-log-rotation enable-pprof "
    " feature-gates force-new-cluster grpc-keepalive-interval grpc-keepalive-min-time "
    " grpc-keepalive-timeout heartbeat-interval host-whitelist initial-advertise-peer-urls "
    " initial-cluster initial-cluster-state initial-cluster-token "
    " initial-election-tick-advance key-file listen-client-http-urls listen-client-urls "
    " listen-metrics-urls listen-peer-urls log-format log-level log-outputs "
    " log-rotation-config-json logger max-concurrent-streams max-learners "
    " max-request-bytes max-snapshots max-txn-ops max-wals memory-mlock metrics name "
    " peer-auto-tls peer-cert-allowed-cn peer-cert-allowed-hostname peer-cert-file "
    " peer-client-cert-auth peer-client-cert-file peer-client-key-file peer-crl-file "
    " peer-key-file peer-skip-client-san-verification peer-trusted-ca-file pre-vote "
    " quota-backend-bytes raft-read-timeout raft-write-timeout self-signed-cert-validity "
    " snapshot-catchup-entries snapshot-count socket-reuse-address socket-reuse-port "
    " strict-reconfig-check tls-max-version tls-min-version trusted-ca-file "
    " unsafe-no-fsync v2-deprecation wal-dir warning-apply-duration "
    " warning-unary-request-duration watch-progress-notify-interval ";

/* Appends the names of the etcd container's --flags (without "=value") of pod to out. */
static void etcd_flag_names(const json_t *pod, char *out, size_t n)
{
	json_t *cmd = json_object_get(
	    json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0),
	    "command");
	json_t *a = NULL;
	size_t i;

	assert_string_equal(json_string_value(json_array_get(cmd, 0)), "etcd");
	json_array_foreach(cmd, i, a)
	{
		const char *s = json_string_value(a);
		size_t len = strcspn(s, "=");

		if (i == 0)
			continue;
		assert_true(strncmp(s, "--", 2) == 0);
		assert_true(strlen(out) + len + 2 < n);
		strncat(out, s + 2, len - 2);
		strcat(out, " ");
	}
}

static bool etcd_37_has(const char *flag, size_t len)
{
	char word[128];

	assert_true(len + 3 < sizeof(word));
	snprintf(word, sizeof(word), " %.*s ", (int)len, flag);
	return strstr(ETCD_37_FLAGS, word) != NULL;
}

/*
 * A 3.7 member (issue 23): every flag its Pod passes to etcd is one etcd 3.7.3 has, with every
 * option, both TLS planes (own Secrets with the peer name check, then peer auto TLS) and the
 * force-new-cluster recovery set; the image is the 3.7.3 one.
 */
static void test_etcd37_member_flags(void **state)
{
	json_t *m = tu_json(MEMBER_FULL_JSON), *spec = json_object_get(m, "spec"), *p = NULL;
	char names[4096] = "";
	const char *f = names;

	(void)state;
	json_object_set_new(spec, "version", json_string("3.7.3"));
	json_object_set_new(spec, "tls",
			    tu_jsonq("{'clientServerSecretRef':{'name':'srv'},'clientMTLS':true,"
				     "'peerSecretRef':{'name':'peer'},"
				     "'peerAllowedHostname':'demo.default.svc'}"));
	json_object_set_new(json_object_get(m, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP,
				      EO_DESIRED_FORCE_NEW_CLUSTER_STEP_FORCING));
	for (int pass = 0; pass < 2; pass++) {
		p = eo_desired_member_pod(m, &OPTS, pass == 0);
		assert_non_null(p);
		assert_string_equal(
		    json_string_value(json_object_get(
			json_array_get(json_object_get(json_object_get(p, "spec"), "containers"),
				       0),
			"image")),
		    "quay.io/coreos/etcd:v3.7.3");
		etcd_flag_names(p, names, sizeof(names));
		json_decref(p);
		json_object_set_new(spec, "tls", tu_jsonq("{'peerAutoTLS':true}"));
	}
	/* What the passes covered, so the check below is not vacuous. */
	assert_non_null(strstr(names, "force-new-cluster "));
	assert_non_null(strstr(names, "peer-cert-allowed-hostname "));
	assert_non_null(strstr(names, "peer-auto-tls "));
	assert_non_null(strstr(names, "snapshot-count "));
	assert_non_null(strstr(names, "trusted-ca-file "));
	while (*f != '\0') {
		size_t len = strcspn(f, " ");

		if (!etcd_37_has(f, len))
			fail_msg("etcd 3.7.3 has no flag --%.*s", (int)len, f);
		f += len + 1;
	}
	json_decref(m);
}

/* No spec.affinity, or an empty one: the soft anti-affinity by hostname. */
/* got equals the JSON text want (quotes as '). */
static void jeq(const json_t *got, const char *want)
{
	json_t *w = tu_jsonq(want);

	tu_assert_json_equal(got, w, want);
	json_decref(w);
}

/* A cluster with spec.tls (tls is the JSON of spec.tls); new reference. */
static json_t *tls_cluster(const char *tls)
{
	json_t *c = tu_json(CLUSTER_JSON);

	json_object_set_new(json_object_get(c, "spec"), "tls", tu_jsonq(tls));
	return c;
}

/* The member built from a TLS cluster, with the name and uid a created one has. */
static json_t *tls_member(const json_t *c)
{
	json_t *m = eo_desired_seed_member(c, "demo-abcde");

	json_object_set_new(json_object_get(m, "metadata"), "uid", json_string("m-uid-1"));
	return m;
}

/* The command line of a Pod's etcd container as one string, args separated by ' '. */
static void pod_command(const json_t *pod, char *buf, size_t n)
{
	json_t *cmd = json_object_get(
	    json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0),
	    "command");
	json_t *a = NULL;
	size_t i, len = 0;

	buf[0] = '\0';
	json_array_foreach(cmd, i, a)
	{
		int k = snprintf(buf + len, n - len, "%s ", json_string_value(a));

		assert_true(k > 0 && (size_t)k < n - len);
		len += (size_t)k;
	}
}

static void test_tls_mtls_and_peer(void **state)
{
	json_t *c = tls_cluster("{'client':{'serverSecretRef':{'name':'srv'},"
				"'operatorClientSecretRef':{'name':'op'}},"
				"'peer':{'secretRef':{'name':'peer'}}}");
	json_t *m = tls_member(c), *p = NULL;
	char cmd[8192], url[EO_DESIRED_URL_MAX];

	(void)state;
	/* The member carries what the Pod needs, never the operator's own client Secret. */
	jeq(json_object_get(json_object_get(m, "spec"), "tls"),
	    "{'clientServerSecretRef':{'name':'srv'},'clientMTLS':true,"
	    "'peerSecretRef':{'name':'peer'}}");
	json_object_set_new(json_object_get(m, "spec"), "initialCluster",
			    json_string("demo-abcde=https://"
					"demo-abcde.demo.default.svc.cluster.local:2380"));
	assert_true(eo_desired_member_peer_tls(m));
	assert_true(eo_desired_member_client_tls(m));
	p = eo_desired_member_pod(m, &OPTS, false);
	golden("member_pod_tls.json", p);
	pod_command(p, cmd, sizeof(cmd));
	assert_non_null(strstr(cmd, "--listen-client-urls=https://0.0.0.0:2379 "));
	assert_non_null(strstr(cmd, "--listen-peer-urls=https://0.0.0.0:2380 "));
	assert_non_null(strstr(
	    cmd,
	    "--advertise-client-urls=https://demo-abcde.demo.default.svc.cluster.local:2379 "));
	assert_non_null(strstr(cmd, "--client-cert-auth=true "));
	assert_non_null(strstr(cmd, "--trusted-ca-file=/etc/etcd/tls/client/ca.crt "));
	assert_non_null(strstr(cmd, "--peer-client-cert-auth=true "));
	assert_non_null(strstr(cmd, "--peer-trusted-ca-file=/etc/etcd/tls/peer/ca.crt "));
	/* Metrics and /health stay plaintext for the probes. */
	assert_non_null(strstr(cmd, "--listen-metrics-urls=http://0.0.0.0:2381 "));
	assert_int_equal(eo_desired_seed_initial_cluster(url, sizeof(url), &OPTS, "demo-abcde",
							 "demo", "default", true),
			 0);
	assert_string_equal(url,
			    "demo-abcde=https://demo-abcde.demo.default.svc.cluster.local:2380");
	json_decref(p);
	json_decref(m);
	json_decref(c);
}

static void test_tls_server_only(void **state)
{
	json_t *c = tls_cluster("{'client':{'serverSecretRef':{'name':'srv'}}}");
	json_t *m = tls_member(c), *p = NULL, *vols = NULL;
	char cmd[8192];

	(void)state;
	jeq(json_object_get(json_object_get(m, "spec"), "tls"),
	    "{'clientServerSecretRef':{'name':'srv'},'clientMTLS':false}");
	p = eo_desired_member_pod(m, &OPTS, false);
	pod_command(p, cmd, sizeof(cmd));
	assert_non_null(strstr(cmd, "--listen-client-urls=https://0.0.0.0:2379 "));
	assert_non_null(strstr(cmd, "--cert-file=/etc/etcd/tls/client/tls.crt "));
	assert_non_null(strstr(cmd, "--key-file=/etc/etcd/tls/client/tls.key "));
	/* A trusted CA file would make etcd demand client certificates. */
	assert_null(strstr(cmd, "--trusted-ca-file"));
	assert_null(strstr(cmd, "--client-cert-auth"));
	/* Peers stay plaintext. */
	assert_non_null(strstr(cmd, "--listen-peer-urls=http://0.0.0.0:2380 "));
	assert_null(strstr(cmd, "--peer-"));
	vols = json_object_get(json_object_get(p, "spec"), "volumes");
	assert_int_equal(json_array_size(vols), 2);
	jeq(json_array_get(vols, 1), "{'name':'tls-client','secret':{'secretName':'srv',"
				     "'defaultMode':288}}");
	json_decref(p);
	json_decref(m);
	json_decref(c);
}

static void test_tls_peer_only(void **state)
{
	json_t *c = tls_cluster("{'peer':{'secretRef':{'name':'peer'}}}");
	json_t *m = tls_member(c), *p = NULL, *mounts = NULL;
	char cmd[8192];

	(void)state;
	assert_true(eo_desired_member_peer_tls(m));
	assert_false(eo_desired_member_client_tls(m));
	p = eo_desired_member_pod(m, &OPTS, false);
	pod_command(p, cmd, sizeof(cmd));
	assert_non_null(strstr(cmd, "--listen-client-urls=http://0.0.0.0:2379 "));
	assert_non_null(strstr(cmd, "--listen-peer-urls=https://0.0.0.0:2380 "));
	assert_non_null(strstr(cmd, "--initial-advertise-peer-urls=https://"
				    "demo-abcde.demo.default.svc.cluster.local:2380 "));
	assert_null(strstr(cmd, "--cert-file"));
	mounts = json_object_get(
	    json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0),
	    "volumeMounts");
	jeq(mounts, "[{'name':'data','mountPath':'/var/lib/etcd'},"
		    "{'name':'tls-peer','mountPath':'/etc/etcd/tls/peer',"
		    "'readOnly':true}]");
	json_decref(p);
	json_decref(m);
	json_decref(c);
}

/*
 * cert-manager mode resolves to the Secrets cert-manager fills: the same Pod wiring, and the
 * peers accept only a certificate naming this cluster (<cluster>.<ns>.svc is a SAN of the peer
 * certificate the operator requests).
 */
static void test_tls_cert_manager_names(void **state)
{
	json_t *c = tls_cluster("{'client':{'certManager':{'serverIssuerRef':{'name':'ca'},"
				"'operatorClientIssuerRef':{'name':'ca'}}},"
				"'peer':{'certManager':{'issuerRef':{'name':'ca'}}}}");
	json_t *m = tls_member(c), *p = NULL;
	char cmd[8192];

	(void)state;
	jeq(json_object_get(json_object_get(m, "spec"), "tls"),
	    "{'clientServerSecretRef':{'name':'demo-server-tls'},"
	    "'clientMTLS':true,'peerSecretRef':{'name':'demo-peer-tls'},"
	    "'peerAllowedHostname':'demo.default.svc'}");
	p = eo_desired_member_pod(m, &OPTS, false);
	pod_command(p, cmd, sizeof(cmd));
	assert_non_null(strstr(cmd, "--peer-cert-allowed-hostname=demo.default.svc "));
	json_decref(p);
	json_decref(m);
	json_decref(c);
}

/*
 * Your own peer Secret: the operator does not know its names, so no name check (a member
 * created before the check existed has no peerAllowedHostname either, and keeps its flags).
 */
static void test_tls_own_peer_secret_no_name_check(void **state)
{
	json_t *c = tls_cluster("{'peer':{'secretRef':{'name':'peer'}}}");
	json_t *m = tls_member(c), *p = NULL;
	char cmd[8192];

	(void)state;
	assert_null(json_object_get(json_object_get(json_object_get(m, "spec"), "tls"),
				    "peerAllowedHostname"));
	p = eo_desired_member_pod(m, &OPTS, false);
	pod_command(p, cmd, sizeof(cmd));
	assert_null(strstr(cmd, "--peer-cert-allowed-hostname"));
	json_decref(p);
	json_decref(m);
	json_decref(c);
}

static void test_member_pod_default_affinity(void **state)
{
	(void)state;
	for (int empty = 0; empty < 2; empty++) {
		json_t *m = tu_json(MEMBER_JSON), *p = NULL, *term = NULL;

		if (empty)
			json_object_set_new(json_object_get(m, "spec"), "affinity", json_object());
		p = eo_desired_member_pod(m, &OPTS, false);
		term = json_array_get(
		    json_object_get(
			json_object_get(json_object_get(json_object_get(p, "spec"), "affinity"),
					"podAntiAffinity"),
			"preferredDuringSchedulingIgnoredDuringExecution"),
		    0);
		assert_non_null(term);
		assert_int_equal(json_integer_value(json_object_get(term, "weight")), 100);
		assert_string_equal(json_string_value(json_object_get(
					json_object_get(term, "podAffinityTerm"), "topologyKey")),
				    "kubernetes.io/hostname");
		assert_string_equal(
		    json_string_value(json_object_get(
			json_object_get(json_object_get(json_object_get(term, "podAffinityTerm"),
							"labelSelector"),
					"matchLabels"),
			"etcd-operator.cozystack.io/cluster")),
		    "demo");
		json_decref(p);
		json_decref(m);
	}
}

static const char *arg_with_prefix(const json_t *pod, const char *prefix)
{
	json_t *cmd = json_object_get(
	    json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0),
	    "command");
	json_t *a = NULL;
	size_t i;

	json_array_foreach(cmd, i, a)
	{
		const char *s = json_string_value(a);

		if (s != NULL && strncmp(s, prefix, strlen(prefix)) == 0)
			return s + strlen(prefix);
	}
	return NULL;
}

/* --initial-cluster-state: new only for a seed without memberID before bootstrap. */
static void test_initial_cluster_state(void **state)
{
	static const struct {
		bool bootstrap;
		const char *member_id;
		bool cluster_bootstrapped;
		const char *want;
	} cases[] = {
	    {true, NULL, false, "new"},	     {true, "8e9e05c52164694d", false, "existing"},
	    {true, NULL, true, "existing"},  {false, NULL, false, "existing"},
	    {false, NULL, true, "existing"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *m = tu_json(MEMBER_JSON), *p = NULL;

		json_object_set_new(json_object_get(m, "spec"), "bootstrap",
				    json_boolean(cases[i].bootstrap));
		if (cases[i].member_id)
			json_object_set_new(json_object_get(m, "status"), "memberID",
					    json_string(cases[i].member_id));
		p = eo_desired_member_pod(m, &OPTS, cases[i].cluster_bootstrapped);
		assert_non_null(p);
		assert_string_equal(arg_with_prefix(p, "--initial-cluster-state="), cases[i].want);
		json_decref(p);
		json_decref(m);
	}
}

/* The init container named name in a Pod, or NULL. */
static const json_t *init_container(const json_t *pod, const char *name)
{
	const json_t *c = NULL;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(pod, "spec"), "initContainers"), i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "name")), name) == 0)
			return c;
	}
	return NULL;
}

/*
 * wait-peers: on the Pod of a member that joins a running cluster (state "existing", no
 * status.memberID yet), with its name and initial cluster; never on the seed of a new cluster,
 * never once the member has its ID (the data guard's turn), never without the operator image.
 * It leaves the Pod hash alone: the Pod does not roll when the member learns its ID.
 */
static void test_wait_peers(void **state)
{
	struct eo_desired_opts o = OPTS;
	json_t *m = tu_json(MEMBER_JSON), *p = NULL, *spec = NULL;
	const json_t *w = NULL;
	char h1[EO_DESIRED_HASH_MAX], h2[EO_DESIRED_HASH_MAX];
	char *args = NULL;

	(void)state;
	o.operator_image = "localhost/etcd-operator:dev";
	spec = json_object_get(m, "spec");
	json_object_set_new(spec, "bootstrap", json_false());
	json_object_set_new(spec, "replicas", json_integer(3));
	json_object_set_new(spec, "initialCluster",
			    json_string("demo-fghij=http://demo-fghij.demo.default.svc.cluster."
					"local:2380,demo-abcde=http://demo-abcde.demo.default.svc."
					"cluster.local:2380"));
	json_object_set_new(json_object_get(m, "status"), "isVoter", json_false());
	p = eo_desired_member_pod(m, &o, true);
	golden("member_pod_joining.json", p);
	tu_assert_restricted_pod_spec(json_object_get(p, "spec"), "joining member Pod");
	assert_non_null(w = init_container(p, EO_DESIRED_WAIT_PEERS_CONTAINER));
	assert_null(init_container(p, EO_DESIRED_DATA_GUARD_CONTAINER));
	args = json_dumps(json_object_get(w, "args"), JSON_COMPACT);
	assert_string_equal(args, "[\"wait-peers\",\"--name\",\"demo-abcde\","
				  "\"--initial-cluster\",\"demo-fghij=http://demo-fghij.demo."
				  "default.svc.cluster.local:2380,demo-abcde=http://demo-abcde."
				  "demo.default.svc.cluster.local:2380\",\"--timeout\",\"30\"]");
	free(args);
	assert_null(json_object_get(w, "volumeMounts"));
	json_decref(p);
	assert_int_equal(eo_desired_member_pod_hash(m, &o, h1, sizeof(h1)), 0);

	/* without the operator image there is nothing to run it from */
	p = eo_desired_member_pod(m, &OPTS, true);
	assert_null(init_container(p, EO_DESIRED_WAIT_PEERS_CONTAINER));
	json_decref(p);

	/* joined: the data guard instead, and the same hash (no roll) */
	json_object_set_new(json_object_get(m, "status"), "memberID",
			    json_string("8e9e05c52164694d"));
	p = eo_desired_member_pod(m, &o, true);
	assert_null(init_container(p, EO_DESIRED_WAIT_PEERS_CONTAINER));
	assert_non_null(init_container(p, EO_DESIRED_DATA_GUARD_CONTAINER));
	json_decref(p);
	assert_int_equal(eo_desired_member_pod_hash(m, &o, h2, sizeof(h2)), 0);
	assert_string_equal(h1, h2);
	json_decref(m);

	/* the seed of a new cluster forms it: nothing to wait for */
	m = tu_json(MEMBER_JSON);
	p = eo_desired_member_pod(m, &o, false);
	assert_null(init_container(p, EO_DESIRED_WAIT_PEERS_CONTAINER));
	json_decref(p);
	json_decref(m);
}

/*
 * The data guard: on the Pod of a member with status.memberID (with the operator image known),
 * never on one without; it carries the member ID and runs after adopt-data on the same
 * sub-path; it leaves the Pod hash alone, so no Pod rolls when the member learns its ID.
 */
static void test_data_guard(void **state)
{
	struct eo_desired_opts o = OPTS;
	json_t *m = tu_json(MEMBER_JSON), *p = NULL;
	const json_t *g = NULL;
	char h1[EO_DESIRED_HASH_MAX], h2[EO_DESIRED_HASH_MAX];
	char *args = NULL;

	(void)state;
	o.operator_image = "localhost/etcd-operator:dev";
	/* no member ID yet: a seed of a new cluster, a joining member's first Pod */
	p = eo_desired_member_pod(m, &o, false);
	assert_null(init_container(p, EO_DESIRED_DATA_GUARD_CONTAINER));
	assert_null(json_object_get(json_object_get(p, "spec"), "initContainers"));
	json_decref(p);
	p = eo_desired_member_pod(m, &o, true);
	assert_null(init_container(p, EO_DESIRED_DATA_GUARD_CONTAINER));
	json_decref(p);
	assert_int_equal(eo_desired_member_pod_hash(m, &o, h1, sizeof(h1)), 0);

	/* joined: the guard, with the ID */
	json_object_set_new(json_object_get(m, "status"), "memberID",
			    json_string("8e9e05c52164694d"));
	p = eo_desired_member_pod(m, &o, true);
	golden("member_pod_guarded.json", p);
	tu_assert_restricted_pod_spec(json_object_get(p, "spec"), "guarded member Pod");
	assert_non_null(g = init_container(p, EO_DESIRED_DATA_GUARD_CONTAINER));
	args = json_dumps(json_object_get(g, "args"), JSON_COMPACT);
	assert_string_equal(args,
			    "[\"data-guard\",\"--data-dir\",\"/var/lib/etcd\",\"--member-id\","
			    "\"8e9e05c52164694d\",\"--name\",\"demo-abcde\","
			    "\"--termination-log\",\"/dev/termination-log\"]");
	free(args);
	assert_string_equal(json_string_value(json_object_get(g, "image")),
			    "localhost/etcd-operator:dev");
	/* the Pod hash does not move with the guard: no roll after the member joined */
	assert_int_equal(eo_desired_member_pod_hash(m, &o, h2, sizeof(h2)), 0);
	assert_string_equal(h1, h2);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(json_object_get(p, "metadata"), "annotations"),
				"etcd-operator.cozystack.io/pod-hash")),
			    h1);
	json_decref(p);

	/* without the operator image there is nothing to run it from */
	p = eo_desired_member_pod(m, &OPTS, true);
	assert_null(init_container(p, EO_DESIRED_DATA_GUARD_CONTAINER));
	json_decref(p);

	/* an adopted legacy member: adopt-data first (it makes the files etcd's), same sub-path */
	json_object_set_new(json_object_get(m, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_DATA_DIR_SUBPATH, "default.etcd"));
	p = eo_desired_member_pod(m, &o, true);
	assert_int_equal(
	    json_array_size(json_object_get(json_object_get(p, "spec"), "initContainers")), 2);
	g = json_array_get(json_object_get(json_object_get(p, "spec"), "initContainers"), 1);
	assert_string_equal(json_string_value(json_object_get(g, "name")),
			    EO_DESIRED_DATA_GUARD_CONTAINER);
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(g, "volumeMounts"), 0), "subPath")),
			    "default.etcd");
	assert_non_null(init_container(p, EO_DESIRED_ADOPT_CONTAINER));
	json_decref(p);
	json_decref(m);
}

/* The Pod's user: a key of the Pod-level securityContext as an integer, -1 when absent. */
static json_int_t pod_sc_int(const json_t *pod, const char *key)
{
	const json_t *v =
	    json_object_get(json_object_get(json_object_get(pod, "spec"), "securityContext"), key);

	return json_is_integer(v) ? json_integer_value(v) : -1;
}

/*
 * --pod-run-as-user: the default (0 in the options) renders 65532 as before; a UID of the
 * operator's choice goes to runAsUser, runAsGroup, fsGroup and adopt-data's --uid/--gid; auto
 * leaves the three fields to the platform, keeps non-root, seccomp, no escalation and no
 * capabilities, and builds no adopt-data (root, and no UID to give the files to). Each mode
 * moves the Pod hash, so a change rolls the members.
 */
static void test_pod_run_as_user(void **state)
{
	struct eo_desired_opts o = OPTS;
	json_t *m = tu_json(MEMBER_JSON), *p = NULL, *sc = NULL, *want = NULL;
	const json_t *a = NULL;
	char h_def[EO_DESIRED_HASH_MAX], h_1000[EO_DESIRED_HASH_MAX], h_auto[EO_DESIRED_HASH_MAX];
	char *args = NULL;

	(void)state;
	o.operator_image = "localhost/etcd-operator:dev";
	json_object_set_new(json_object_get(m, "status"), "memberID",
			    json_string("8e9e05c52164694d"));
	json_object_set_new(json_object_get(m, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_DATA_DIR_SUBPATH, "default.etcd"));
	assert_int_equal(eo_desired_pod_uid(NULL), 65532);
	assert_int_equal(eo_desired_pod_uid(&o), 65532);

	/* default: 65532 everywhere, adopt-data gives the files to it */
	p = eo_desired_member_pod(m, &o, true);
	assert_int_equal(pod_sc_int(p, "runAsUser"), 65532);
	assert_int_equal(pod_sc_int(p, "runAsGroup"), 65532);
	assert_int_equal(pod_sc_int(p, "fsGroup"), 65532);
	assert_non_null(a = init_container(p, EO_DESIRED_ADOPT_CONTAINER));
	args = json_dumps(json_object_get(a, "args"), JSON_COMPACT);
	assert_string_equal(args, "[\"adopt-data\",\"--data-dir\",\"/var/lib/etcd\",\"--uid\","
				  "\"65532\",\"--gid\",\"65532\"]");
	free(args);
	assert_int_equal(eo_desired_member_pod_hash(m, &o, h_def, sizeof(h_def)), 0);
	json_decref(p);

	/* a UID of the operator's choice */
	o.pod_run_as_user = 1000;
	p = eo_desired_member_pod(m, &o, true);
	assert_int_equal(pod_sc_int(p, "runAsUser"), 1000);
	assert_int_equal(pod_sc_int(p, "runAsGroup"), 1000);
	assert_int_equal(pod_sc_int(p, "fsGroup"), 1000);
	assert_non_null(a = init_container(p, EO_DESIRED_ADOPT_CONTAINER));
	args = json_dumps(json_object_get(a, "args"), JSON_COMPACT);
	assert_string_equal(args, "[\"adopt-data\",\"--data-dir\",\"/var/lib/etcd\",\"--uid\","
				  "\"1000\",\"--gid\",\"1000\"]");
	free(args);
	assert_int_equal(eo_desired_member_pod_hash(m, &o, h_1000, sizeof(h_1000)), 0);
	assert_string_not_equal(h_def, h_1000);
	json_decref(p);

	/* auto: none of the three, the rest of the restricted profile stays */
	o.pod_run_as_user = EO_DESIRED_POD_UID_AUTO;
	assert_int_equal(eo_desired_pod_uid(&o), EO_DESIRED_POD_UID_AUTO);
	p = eo_desired_member_pod(m, &o, true);
	sc = json_object_get(json_object_get(p, "spec"), "securityContext");
	assert_null(json_object_get(sc, "runAsUser"));
	assert_null(json_object_get(sc, "runAsGroup"));
	assert_null(json_object_get(sc, "fsGroup"));
	assert_true(json_is_true(json_object_get(sc, "runAsNonRoot")));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(sc, "seccompProfile"), "type")),
	    "RuntimeDefault");
	assert_int_equal(json_object_size(sc), 2);
	tu_assert_restricted_pod_spec(json_object_get(p, "spec"), "member Pod (auto user)");
	assert_null(init_container(p, EO_DESIRED_ADOPT_CONTAINER));
	assert_non_null(init_container(p, EO_DESIRED_DATA_GUARD_CONTAINER));
	assert_int_equal(eo_desired_member_pod_hash(m, &o, h_auto, sizeof(h_auto)), 0);
	assert_string_not_equal(h_def, h_auto);
	json_decref(p);

	/* the shared helper: with the change policy for agents, also in auto mode */
	sc = eo_desired_pod_security_context(&o, true);
	want = tu_jsonq("{'runAsNonRoot':true,'seccompProfile':{'type':'RuntimeDefault'},"
			"'fsGroupChangePolicy':'OnRootMismatch'}");
	tu_assert_json_equal(sc, want, "agent securityContext (auto)");
	json_decref(want);
	json_decref(sc);
	sc = eo_desired_pod_security_context(NULL, true);
	want = tu_jsonq("{'runAsNonRoot':true,'runAsUser':65532,'runAsGroup':65532,'fsGroup':65532,"
			"'fsGroupChangePolicy':'OnRootMismatch','seccompProfile':{'type':"
			"'RuntimeDefault'}}");
	tu_assert_json_equal(sc, want, "agent securityContext (default)");
	json_decref(want);
	json_decref(sc);
	json_decref(m);
}

static void test_memory_member_pod_uses_tmpfs(void **state)
{
	json_t *m = tu_json(MEMBER_JSON), *p = NULL, *vol = NULL;

	(void)state;
	json_object_set_new(json_object_get(m, "spec"), "storage",
			    json_pack("{s:s, s:s}", "size", "256Mi", "medium", "Memory"));
	p = eo_desired_member_pod(m, &OPTS, false);
	vol = json_array_get(json_object_get(json_object_get(p, "spec"), "volumes"), 0);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(vol, "emptyDir"), "medium")),
	    "Memory");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(vol, "emptyDir"), "sizeLimit")),
	    "256Mi");
	assert_null(json_object_get(vol, "persistentVolumeClaim"));
	tu_assert_restricted_pod_spec(json_object_get(p, "spec"), "memory member Pod");
	json_decref(p);
	json_decref(m);
}

/*
 * A memory member's data lives only in its Pod: without spec.affinity its Pod requires a node
 * of its own (two members on one node are lost with it). An affinity the user set is kept
 * as it is (here the soft spreading, e.g. for a cluster with fewer nodes than members).
 */
static void test_memory_member_pod_requires_own_node(void **state)
{
	json_t *m = tu_json(MEMBER_JSON), *p = NULL;
	const char *preferred =
	    "{'podAntiAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':100,"
	    "'podAffinityTerm':{'topologyKey':'kubernetes.io/hostname','labelSelector':"
	    "{'matchLabels':{'etcd-operator.cozystack.io/cluster':'demo'}}}}]}}";

	(void)state;
	json_object_set_new(json_object_get(m, "spec"), "storage",
			    json_pack("{s:s, s:s}", "size", "256Mi", "medium", "Memory"));
	p = eo_desired_member_pod(m, &OPTS, false);
	golden("member_pod_memory.json", p);
	jeq(json_object_get(json_object_get(p, "spec"), "affinity"),
	    "{'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':["
	    "{'topologyKey':'kubernetes.io/hostname','labelSelector':"
	    "{'matchLabels':{'etcd-operator.cozystack.io/cluster':'demo'}}}]}}");
	json_decref(p);
	json_object_set_new(json_object_get(m, "spec"), "affinity", tu_jsonq(preferred));
	p = eo_desired_member_pod(m, &OPTS, false);
	jeq(json_object_get(json_object_get(p, "spec"), "affinity"), preferred);
	json_decref(p);
	json_decref(m);
}

static void test_custom_domain_and_repository(void **state)
{
	struct eo_desired_opts o = {.etcd_image_repository = "registry.local/etcd",
				    .cluster_domain = "cozy.local"};
	json_t *m = tu_json(MEMBER_JSON), *p = eo_desired_member_pod(m, &o, true);
	json_t *ctr = json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0);
	char url[EO_DESIRED_URL_MAX];

	(void)state;
	assert_string_equal(json_string_value(json_object_get(ctr, "image")),
			    "registry.local/etcd:v3.6.11");
	assert_string_equal(arg_with_prefix(p, "--advertise-client-urls="),
			    "http://demo-abcde.demo.default.svc.cozy.local:2379");
	assert_int_equal(
	    eo_desired_seed_initial_cluster(url, sizeof(url), NULL, "m", "c", "ns", false), 0);
	assert_string_equal(url, "m=http://m.c.ns.svc.cluster.local:2380");
	assert_int_equal(eo_desired_seed_initial_cluster(url, 8, NULL, "m", "c", "ns", false), -1);
	json_decref(p);
	json_decref(m);
}

/* A member URL back to its member and namespace, and to the route straight to its Pod. */
static void test_member_route(void **state)
{
	static const struct {
		const char *url, *pod, *want_member, *want_route;
	} cases[] = {
	    {"http://demo-abcde.demo.default.svc.cluster.local:2379",
	     "{\"metadata\":{\"name\":\"demo-abcde\",\"namespace\":\"default\"},"
	     "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.88.0.7\"}}",
	     "demo-abcde", "demo-abcde.demo.default.svc.cluster.local:2379:10.88.0.7:2379"},
	    /* TLS keeps the host name in the URL (curl checks the certificate against it). */
	    {"https://demo-abcde.demo.default.svc.cluster.local:2379",
	     "{\"metadata\":{\"name\":\"demo-abcde\",\"namespace\":\"default\"},"
	     "\"status\":{\"phase\":\"Pending\",\"podIP\":\"fd00::5\"}}",
	     "demo-abcde", "demo-abcde.demo.default.svc.cluster.local:2379:[fd00::5]:2379"},
	    /* No IP yet, being deleted, finished, another Pod, a hostile IP: no route. */
	    {"http://demo-abcde.demo.default.svc.cluster.local:2379",
	     "{\"metadata\":{\"name\":\"demo-abcde\",\"namespace\":\"default\"},"
	     "\"status\":{\"phase\":\"Pending\"}}",
	     "demo-abcde", NULL},
	    {"http://demo-abcde.demo.default.svc.cluster.local:2379",
	     "{\"metadata\":{\"name\":\"demo-abcde\",\"namespace\":\"default\","
	     "\"deletionTimestamp\":\"2026-11-23T00:00:00Z\"},"
	     "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.88.0.7\"}}",
	     "demo-abcde", NULL},
	    {"http://demo-abcde.demo.default.svc.cluster.local:2379",
	     "{\"metadata\":{\"name\":\"demo-abcde\",\"namespace\":\"default\"},"
	     "\"status\":{\"phase\":\"Failed\",\"podIP\":\"10.88.0.7\"}}",
	     "demo-abcde", NULL},
	    {"http://demo-abcde.demo.default.svc.cluster.local:2379",
	     "{\"metadata\":{\"name\":\"demo-zzzzz\",\"namespace\":\"default\"},"
	     "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.88.0.7\"}}",
	     "demo-abcde", NULL},
	    {"http://demo-abcde.demo.default.svc.cluster.local:2379",
	     "{\"metadata\":{\"name\":\"demo-abcde\",\"namespace\":\"other\"},"
	     "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.88.0.7\"}}",
	     "demo-abcde", NULL},
	    {"http://demo-abcde.demo.default.svc.cluster.local:2379",
	     "{\"metadata\":{\"name\":\"demo-abcde\",\"namespace\":\"default\"},"
	     "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.0.0.1:1:evil\"}}",
	     "demo-abcde", NULL},
	    /* Not one of our member URLs: another domain, no svc label, no port, no scheme. */
	    {"http://demo-abcde.demo.default.svc.other.local:2379", "{}", NULL, NULL},
	    {"http://demo-abcde.demo.default.cluster.local:2379", "{}", NULL, NULL},
	    {"http://demo-abcde.demo.default.svc.cluster.local", "{}", NULL, NULL},
	    {"demo-abcde.demo.default.svc.cluster.local:2379", "{}", NULL, NULL},
	    {"http://10.0.0.1:2379", "{}", NULL, NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char member[EO_NAME_MAX], ns[EO_NAME_MAX], route[EO_DESIRED_URL_MAX + 64];
		json_t *pod = tu_json(cases[i].pod);
		int rc = eo_desired_url_member(&OPTS, cases[i].url, member, sizeof(member), ns,
					       sizeof(ns));

		if (cases[i].want_member == NULL) {
			assert_int_equal(rc, -1);
			assert_string_equal(member, "");
		} else {
			assert_int_equal(rc, 0);
			assert_string_equal(member, cases[i].want_member);
			assert_string_equal(ns, "default");
		}
		rc = eo_desired_member_route(route, sizeof(route), &OPTS, cases[i].url, pod);
		if (cases[i].want_route == NULL) {
			assert_int_equal(rc, -1);
			assert_string_equal(route, "");
		} else {
			assert_int_equal(rc, 0);
			assert_string_equal(route, cases[i].want_route);
		}
		json_decref(pod);
	}
	/* A buffer too small for the entry: refused, not truncated. */
	{
		json_t *pod = tu_json(cases[0].pod);
		char small[16];

		assert_int_equal(
		    eo_desired_member_route(small, sizeof(small), &OPTS, cases[0].url, pod), -1);
		json_decref(pod);
	}
}

static void test_service_patch(void **state)
{
	json_t *c = tu_json(CLUSTER_JSON), *want = eo_desired_headless_service(c);
	json_t *have = json_deep_copy(want), *patch = NULL;

	(void)state;
	/* Identical, plus fields the apiserver adds: no patch. */
	json_object_set_new(json_object_get(have, "spec"), "clusterIPs", json_pack("[s]", "None"));
	json_object_set_new(json_object_get(json_object_get(have, "metadata"), "labels"), "extra",
			    json_string("kept"));
	assert_null(eo_desired_service_patch(want, have));
	/* Selector drift and a port renumbered: both repaired, nothing else. */
	json_object_set_new(json_object_get(have, "spec"), "selector",
			    json_pack("{s:s}", "app", "other"));
	json_object_set_new(
	    json_array_get(json_object_get(json_object_get(have, "spec"), "ports"), 1), "port",
	    json_integer(9999));
	patch = eo_desired_service_patch(want, have);
	assert_non_null(patch);
	assert_non_null(json_object_get(json_object_get(patch, "spec"), "selector"));
	assert_non_null(json_object_get(json_object_get(patch, "spec"), "ports"));
	assert_null(json_object_get(json_object_get(patch, "spec"), "publishNotReadyAddresses"));
	assert_null(json_object_get(patch, "metadata"));
	json_decref(patch);
	json_decref(have);
	json_decref(want);
	json_decref(c);
}

static void test_missing_metadata(void **state)
{
	json_t *c = tu_json("{\"metadata\":{\"name\":\"demo\",\"namespace\":\"default\"},"
			    "\"spec\":{\"version\":\"3.6.11\"}}");
	json_t *m = tu_json("{\"metadata\":{\"name\":\"x\"},\"spec\":{}}");

	(void)state;
	assert_null(eo_desired_headless_service(c)); /* no uid: no owner reference */
	assert_null(eo_desired_seed_member(c, NULL));
	assert_null(eo_desired_member_pod(m, &OPTS, false));
	assert_null(eo_desired_member_pvc(m));
	assert_null(eo_desired_owner_ref(c));
	json_decref(c);
	json_decref(m);
}

static void test_controlled_by(void **state)
{
	json_t *c = tu_json(CLUSTER_JSON), *s = eo_desired_client_service(c);

	(void)state;
	assert_true(eo_desired_is_controlled_by(s, "c-uid-1"));
	assert_false(eo_desired_is_controlled_by(s, "other"));
	assert_false(eo_desired_is_controlled_by(s, NULL));
	assert_false(eo_desired_is_controlled_by(c, "c-uid-1"));
	json_decref(s);
	json_decref(c);
}

static void test_observed_snapshot(void **state)
{
	json_t *c = tu_json(CLUSTER_JSON), *o = eo_desired_observed(c);

	(void)state;
	assert_non_null(o);
	/* Same as what the status holds: nothing to re-latch. */
	assert_true(json_equal(o, json_object_get(json_object_get(c, "status"), "observed")));
	/* Absent fields stay absent, defaults only for replicas. */
	assert_null(json_object_get(o, "resources"));
	json_object_del(json_object_get(c, "spec"), "replicas");
	json_decref(o);
	o = eo_desired_observed(c);
	assert_int_equal(json_integer_value(json_object_get(o, "replicas")), 3);
	json_decref(o);
	json_decref(c);
}

/* Whether the etcd container of pod runs with flag (exact argument). */
static bool pod_has_arg(const json_t *pod, const char *flag)
{
	const json_t *ctrs = json_object_get(json_object_get(pod, "spec"), "containers"), *c, *a;
	size_t i, k;

	json_array_foreach(ctrs, i, c)
	{
		json_array_foreach(json_object_get(c, "command"), k,
				   a) if (json_is_string(a) &&
					  strcmp(json_string_value(a), flag) == 0) return true;
		json_array_foreach(json_object_get(c, "args"), k,
				   a) if (json_is_string(a) &&
					  strcmp(json_string_value(a), flag) == 0) return true;
	}
	return false;
}

/*
 * spec.quotaGuard.autoRaise: status.quotaBackendBytes above the spec's quota goes into the
 * target's options (the spec is left alone); the member on that target runs the raised
 * --quota-backend-bytes and its Pod hash moves (the roll). Never below the spec.
 */
static void test_observed_raised_quota(void **state)
{
	json_t *c = tu_json(CLUSTER_JSON), *m = tu_json(MEMBER_JSON), *o, *rolled, *pod;
	char h[EO_DESIRED_HASH_MAX], h2[EO_DESIRED_HASH_MAX];

	(void)state;
	json_object_set_new(json_object_get(c, "spec"), "options",
			    tu_jsonq("{'quotaBackendBytes':16777216}"));
	json_object_set_new(json_object_get(c, "status"), "quotaBackendBytes",
			    json_integer(33554432));
	o = eo_desired_observed(c);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "options"), "quotaBackendBytes")),
	    33554432);
	/* the user's spec is untouched */
	assert_int_equal(
	    json_integer_value(json_object_get(
		json_object_get(json_object_get(c, "spec"), "options"), "quotaBackendBytes")),
	    16777216);
	rolled = eo_desired_member_with_target(m, o);
	pod = eo_desired_member_pod(rolled, &OPTS, true);
	assert_true(pod_has_arg(pod, "--quota-backend-bytes=33554432"));
	assert_int_equal(eo_desired_member_pod_hash(m, &OPTS, h, sizeof(h)), 0);
	assert_int_equal(eo_desired_member_pod_hash(rolled, &OPTS, h2, sizeof(h2)), 0);
	assert_string_not_equal(h, h2);
	json_decref(pod);
	json_decref(rolled);
	json_decref(o);
	/* a spec above the raised quota wins: never lowered */
	json_object_set_new(json_object_get(json_object_get(c, "spec"), "options"),
			    "quotaBackendBytes", json_integer(67108864));
	o = eo_desired_observed(c);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "options"), "quotaBackendBytes")),
	    67108864);
	json_decref(o);
	/* no quota in the spec: etcd's 2 GiB default is above 32 MiB, no options added */
	json_object_del(json_object_get(c, "spec"), "options");
	o = eo_desired_observed(c);
	assert_null(json_object_get(o, "options"));
	json_decref(o);
	/* ... and 4 GiB raised from that default is carried */
	json_object_set_new(json_object_get(c, "status"), "quotaBackendBytes",
			    json_integer(4294967296LL));
	o = eo_desired_observed(c);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "options"), "quotaBackendBytes")),
	    4294967296LL);
	json_decref(o);
	json_decref(m);
	json_decref(c);
}

/*
 * The Pod hash: stamped on the Pod, the same whatever the voter label and the seed's
 * initial-cluster-state, moved by anything that shapes the Pod (spec, image repository).
 */
static void test_pod_hash(void **state)
{
	json_t *m = tu_json(MEMBER_JSON), *seed_pod = eo_desired_member_pod(m, &OPTS, false);
	json_t *later = eo_desired_member_pod(m, &OPTS, true), *m2 = NULL;
	struct eo_desired_opts other = OPTS;
	char h[EO_DESIRED_HASH_MAX], h2[EO_DESIRED_HASH_MAX];
	const char *stamped = NULL;

	(void)state;
	assert_int_equal(eo_desired_member_pod_hash(m, &OPTS, h, sizeof(h)), 0);
	assert_int_equal(strlen(h), 16);
	stamped = json_string_value(
	    json_object_get(json_object_get(json_object_get(seed_pod, "metadata"), "annotations"),
			    EO_ANNOTATION_POD_HASH));
	assert_non_null(stamped);
	assert_string_equal(stamped, h);
	/* The seed's Pod before bootstrap differs ("new") but carries the same hash. */
	assert_false(json_equal(seed_pod, later));
	assert_int_equal(eo_desired_pod_hash(later, h2, sizeof(h2)), 0);
	assert_string_equal(h2, h);
	/* The voter label follows etcd: no change. */
	json_object_set_new(json_object_get(m, "status"), "isVoter", json_false());
	assert_int_equal(eo_desired_member_pod_hash(m, &OPTS, h2, sizeof(h2)), 0);
	assert_string_equal(h2, h);
	/* A version, a resource, a toleration or the image repository: another hash. */
	m2 = json_deep_copy(m);
	json_object_set_new(json_object_get(m2, "spec"), "version", json_string("3.6.16"));
	assert_int_equal(eo_desired_member_pod_hash(m2, &OPTS, h2, sizeof(h2)), 0);
	assert_string_not_equal(h2, h);
	json_decref(m2);
	m2 = json_deep_copy(m);
	json_object_set_new(json_object_get(m2, "spec"), "tolerations",
			    tu_jsonq("[{'operator':'Exists'}]"));
	assert_int_equal(eo_desired_member_pod_hash(m2, &OPTS, h2, sizeof(h2)), 0);
	assert_string_not_equal(h2, h);
	json_decref(m2);
	other.etcd_image_repository = "registry.local/etcd";
	assert_int_equal(eo_desired_member_pod_hash(m, &other, h2, sizeof(h2)), 0);
	assert_string_not_equal(h2, h);
	assert_int_equal(eo_desired_pod_hash(NULL, h2, sizeof(h2)), -1);
	json_decref(seed_pod);
	json_decref(later);
	json_decref(m);
}

static const char *pod_annotation(const json_t *pod, const char *key)
{
	return json_string_value(
	    json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), key));
}

/*
 * The CA bundles' digest: stamped on a Pod that mounts a TLS Secret and covered by its hash
 * (another digest, another hash: the roll); a plaintext member's Pod ignores it.
 */
static void test_pod_ca_bundle_digest(void **state)
{
	json_t *c = tls_cluster("{'peer':{'secretRef':{'name':'peer'}}}");
	json_t *m = tls_member(c), *plain = tu_json(MEMBER_JSON), *p = NULL;
	struct eo_desired_opts a = OPTS, b = OPTS;
	char none[EO_DESIRED_HASH_MAX], ha[EO_DESIRED_HASH_MAX], hb[EO_DESIRED_HASH_MAX];

	(void)state;
	a.ca_bundle_digest = "aaaa";
	b.ca_bundle_digest = "bbbb";
	assert_int_equal(eo_desired_member_pod_hash(m, &OPTS, none, sizeof(none)), 0);
	assert_int_equal(eo_desired_member_pod_hash(m, &a, ha, sizeof(ha)), 0);
	assert_int_equal(eo_desired_member_pod_hash(m, &b, hb, sizeof(hb)), 0);
	assert_string_not_equal(none, ha);
	assert_string_not_equal(ha, hb);
	p = eo_desired_member_pod(m, &a, true);
	assert_string_equal(pod_annotation(p, EO_ANNOTATION_CA_BUNDLE_DIGEST), "aaaa");
	assert_string_equal(pod_annotation(p, EO_ANNOTATION_POD_HASH), ha);
	json_decref(p);
	/* Before bootstrap (a seed's first Pod) the hash is still that of the later Pod. */
	p = eo_desired_member_pod(m, &a, false);
	assert_string_equal(pod_annotation(p, EO_ANNOTATION_POD_HASH), ha);
	json_decref(p);
	p = eo_desired_member_pod(m, &OPTS, true);
	assert_null(pod_annotation(p, EO_ANNOTATION_CA_BUNDLE_DIGEST));
	json_decref(p);
	/* No TLS Secret mounted: no digest, the same hash whatever it is. */
	assert_int_equal(eo_desired_member_pod_hash(plain, &OPTS, none, sizeof(none)), 0);
	assert_int_equal(eo_desired_member_pod_hash(plain, &b, hb, sizeof(hb)), 0);
	assert_string_equal(none, hb);
	p = eo_desired_member_pod(plain, &b, true);
	assert_null(pod_annotation(p, EO_ANNOTATION_CA_BUNDLE_DIGEST));
	json_decref(p);
	json_decref(plain);
	json_decref(m);
	json_decref(c);
}

/* What a roll writes into a member: only the rolled fields, nested keys removed by null. */
static void test_roll_patch(void **state)
{
	json_t *m = tu_json(MEMBER_FULL_JSON), *obs = NULL, *patch = NULL, *want = NULL;
	json_t *rolled = NULL;

	(void)state;
	obs = tu_jsonq("{'replicas':3,'version':'3.6.16','storage':{'size':'9Gi'},"
		       "'resources':{'requests':{'cpu':'1'}},"
		       "'options':{'quotaBackendBytes':8589934592,'autoCompactionMode':'revision',"
		       "'autoCompactionRetention':'1000','snapshotCount':50000},"
		       "'nodeSelector':{'node-role':'etcd'},"
		       "'priorityClassName':'system-cluster-critical'}");
	assert_false(eo_desired_member_on_target(m, obs));
	patch = eo_desired_member_roll_patch(m, obs);
	want = tu_jsonq("{'spec':{'version':'3.6.16',"
			"'resources':{'requests':{'cpu':'1','memory':null},'limits':null},"
			"'affinity':null,'topologySpreadConstraints':null,'imagePullSecrets':null,"
			"'additionalMetadata':null,'tolerations':null}}");
	tu_assert_json_equal(patch, want, "roll patch");
	/* The member as rolled is on target; storage is never part of it. */
	rolled = eo_desired_member_with_target(m, obs);
	assert_true(eo_desired_member_on_target(rolled, obs));
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(rolled, "spec"), "storage"), "size")),
	    "5Gi");
	json_decref(patch);
	patch = eo_desired_member_roll_patch(rolled, obs);
	assert_int_equal(json_object_size(patch), 0);
	json_decref(patch);
	json_decref(rolled);
	json_decref(want);
	json_decref(obs);
	json_decref(m);
}

TU_MAIN(test_headless_service, test_client_service, test_seed_member, test_joining_member, test_pdb,
	test_member_pvc, test_member_pod, test_member_pod_passthrough, test_etcd37_member_flags,
	test_pod_hash, test_pod_ca_bundle_digest, test_roll_patch, test_member_pod_default_affinity,
	test_tls_mtls_and_peer, test_tls_server_only, test_tls_peer_only,
	test_tls_cert_manager_names, test_tls_own_peer_secret_no_name_check,
	test_initial_cluster_state, test_memory_member_pod_uses_tmpfs,
	test_memory_member_pod_requires_own_node, test_custom_domain_and_repository,
	test_service_patch, test_missing_metadata, test_controlled_by, test_member_route,
	test_observed_snapshot, test_observed_raised_quota, test_data_guard, test_wait_peers,
	test_pod_run_as_user)
