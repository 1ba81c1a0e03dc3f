/*
 * Unit tests for api/cluster: accessors with CRD defaults, TLS/auth/restore
 * views, resources defaulting, and a table of accept/reject cases for every
 * validation rule (the same cases the CRD's CEL rules were checked with
 * against a real kube-apiserver).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cluster.h"
#include "api/names.h"
#include "support/testutil.h"
#include "support/tu_main.h"

/* --- accessors and defaults --- */

static void test_defaults_minimal(void **state)
{
	json_t *c = tu_jsonq("{'metadata':{'name':'my-etcd','namespace':'default','uid':'u1',"
			     "'generation':4},'spec':{'version':'3.6.11'}}");
	json_t *d = NULL;
	struct eo_storage st;
	struct eo_cluster_tls tls;
	struct eo_etcd_options opts;
	struct eo_snapshot_location loc;
	char buf[EO_NAME_MAX];
	time_t t = 0;

	(void)state;
	assert_string_equal(eo_cluster_name(c), "my-etcd");
	assert_string_equal(eo_cluster_namespace(c), "default");
	assert_string_equal(eo_cluster_uid(c), "u1");
	assert_int_equal(eo_cluster_generation(c), 4);
	assert_false(eo_cluster_is_deleting(c));
	assert_int_equal(eo_cluster_replicas(c), 3);
	assert_string_equal(eo_cluster_version(c), "3.6.11");
	assert_int_equal(eo_cluster_progress_deadline_seconds(c), 600);
	eo_cluster_storage(c, &st);
	assert_string_equal(st.size, "1Gi");
	assert_true(st.size_valid);
	assert_int_equal(st.size_q.units, 1073741824LL);
	assert_false(st.memory);
	assert_false(st.has_class);
	assert_null(st.class_name);
	eo_cluster_tls(c, &tls);
	assert_int_equal(tls.client, EO_TLS_NONE);
	assert_int_equal(tls.peer, EO_TLS_NONE);
	assert_false(tls.client_mtls);
	assert_false(eo_cluster_uses_cert_manager(c));
	assert_int_equal(eo_cluster_server_secret_name(c, buf, sizeof(buf)), -1);
	assert_int_equal(eo_cluster_peer_secret_name(c, buf, sizeof(buf)), -1);
	assert_false(eo_cluster_auth_enabled(c));
	assert_null(eo_cluster_auth_secret(c));
	assert_false(eo_cluster_restore_source(c, &loc));
	assert_int_equal(loc.kind, EO_LOCATION_NONE);
	eo_cluster_options(c, &opts);
	assert_int_equal(opts.quota_backend_bytes, 0);
	assert_int_equal(opts.snapshot_count, 0);
	assert_null(opts.auto_compaction_mode);
	assert_null(eo_cluster_affinity(c));
	assert_null(eo_cluster_topology_spread_constraints(c));
	assert_null(eo_cluster_image_pull_secrets(c));
	assert_null(eo_cluster_extra_labels(c));
	assert_int_equal(eo_cluster_ready_members(c), 0);
	assert_null(eo_cluster_cluster_id(c));
	assert_null(eo_cluster_cluster_token(c));
	assert_false(eo_cluster_auth_latched(c));
	assert_null(eo_cluster_observed(c));
	assert_false(eo_cluster_progress_deadline(c, &t));
	assert_int_equal(eo_cluster_etcd_image(c, NULL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "quay.io/coreos/etcd:v3.6.11");
	assert_int_equal(eo_cluster_etcd_image(c, "mirror.local/etcd", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "mirror.local/etcd:v3.6.11");

	/* Applying the defaults gives what the apiserver stores. */
	assert_int_equal(eo_cluster_apply_defaults(c), 0);
	d = tu_jsonq(
	    "{'metadata':{'name':'my-etcd','namespace':'default','uid':'u1','generation':4},"
	    "'spec':{'version':'3.6.11','replicas':3,'progressDeadlineSeconds':600,"
	    "'storage':{'size':'1Gi','medium':''}}}");
	assert_true(json_equal(c, d));
	/* And is idempotent. */
	assert_int_equal(eo_cluster_apply_defaults(c), 0);
	assert_true(json_equal(c, d));
	json_decref(c);
	json_decref(d);
}

static void test_defaults_partial(void **state)
{
	/* A storage object without size gets the size default only. */
	json_t *c =
	    tu_jsonq("{'spec':{'version':'3.6.11','replicas':0,'progressDeadlineSeconds':30,"
		     "'storage':{'medium':'Memory'},"
		     "'tls':{'client':{'certManager':{'serverIssuerRef':{'name':'i'}}},"
		     "'peer':{'certManager':{'issuerRef':{'name':'p','kind':'ClusterIssuer'}}}}}}");
	struct eo_storage st;

	(void)state;
	assert_int_equal(eo_cluster_replicas(c), 0);
	assert_int_equal(eo_cluster_progress_deadline_seconds(c), 30);
	eo_cluster_storage(c, &st);
	assert_string_equal(st.size, "1Gi");
	assert_true(st.memory);
	assert_int_equal(eo_cluster_apply_defaults(c), 0);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(json_object_get(c, "spec"), "storage"), "size")),
			    "1Gi");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(c, "spec"), "replicas")), 0);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(
		    json_object_get(
			json_object_get(json_object_get(json_object_get(c, "spec"), "tls"),
					"client"),
			"certManager"),
		    "serverIssuerRef"),
		"kind")),
	    "Issuer");
	json_decref(c);
	/* No spec: nothing to default. */
	c = tu_jsonq("{'metadata':{'name':'x'}}");
	assert_int_equal(eo_cluster_apply_defaults(c), -1);
	json_decref(c);
}

static void test_storage_variants(void **state)
{
	struct {
		const char *json;
		const char *size;
		long long bytes;
		bool valid;
		bool memory;
		const char *sc;
	} cases[] = {
	    {"{'size':'10Gi'}", "10Gi", 10737418240LL, true, false, NULL},
	    {"{'size':2147483648}", "2147483648", 2147483648LL, true, false, NULL},
	    {"{'size':'256Mi','medium':'Memory'}", "256Mi", 268435456LL, true, true, NULL},
	    {"{'size':'1Gi','storageClassName':''}", "1Gi", 1073741824LL, true, false, ""},
	    {"{'size':'1Gi','storageClassName':'fast'}", "1Gi", 1073741824LL, true, false, "fast"},
	    {"{'size':'lots'}", "lots", 0, false, false, NULL},
	    {"{}", "1Gi", 1073741824LL, true, false, NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *s = tu_jsonq(cases[i].json);
		struct eo_storage st;

		eo_storage_read(s, &st);
		assert_string_equal(st.size, cases[i].size);
		assert_int_equal(st.size_valid, cases[i].valid);
		assert_int_equal(eo_quantity_value(&st.size_q), cases[i].bytes);
		assert_int_equal(st.memory, cases[i].memory);
		assert_int_equal(st.has_class, cases[i].sc != NULL);
		if (cases[i].sc != NULL)
			assert_string_equal(st.class_name, cases[i].sc);
		json_decref(s);
	}
}

static void test_deletion_policy(void **state)
{
	struct {
		const char *json;
		bool retain;
	} cases[] = {
	    {"{'spec':{'version':'3.6.11'}}", false},
	    {"{'spec':{'deletionPolicy':'Delete'}}", false},
	    {"{'spec':{'deletionPolicy':'Retain'}}", true},
	    {"{'spec':{'deletionPolicy':'retain'}}", false},
	    {"{'spec':{'deletionPolicy':1}}", false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *c = tu_jsonq(cases[i].json);

		assert_int_equal(eo_cluster_retains_data(c), cases[i].retain);
		json_decref(c);
	}
}

static void test_tls_views(void **state)
{
	json_t *byo = tu_jsonq("{'metadata':{'name':'c'},'spec':{'version':'3.6.11','tls':{"
			       "'client':{'serverSecretRef':{'name':'srv'},"
			       "'operatorClientSecretRef':{'name':'op'}},"
			       "'peer':{'secretRef':{'name':'peer'}}}}}");
	json_t *srv_only = tu_jsonq("{'metadata':{'name':'c'},'spec':{'version':'3.6.11','tls':{"
				    "'client':{'serverSecretRef':{'name':'srv'}}}}}");
	json_t *cm = tu_jsonq("{'metadata':{'name':'c'},'spec':{'version':'3.6.11','tls':{"
			      "'client':{'certManager':{'serverIssuerRef':{'name':'i'},"
			      "'operatorClientIssuerRef':{'name':'ci','kind':'ClusterIssuer'}}},"
			      "'peer':{'certManager':{'issuerRef':{'name':'pi'}}}}}}");
	struct eo_cluster_tls t;
	char buf[EO_NAME_MAX];

	(void)state;
	eo_cluster_tls(byo, &t);
	assert_int_equal(t.client, EO_TLS_SECRET);
	assert_true(t.client_mtls);
	assert_string_equal(t.server_secret, "srv");
	assert_string_equal(t.operator_client_secret, "op");
	assert_int_equal(t.peer, EO_TLS_SECRET);
	assert_string_equal(t.peer_secret, "peer");
	assert_false(eo_cluster_uses_cert_manager(byo));
	assert_int_equal(eo_cluster_server_secret_name(byo, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "srv");
	assert_int_equal(eo_cluster_operator_client_secret_name(byo, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "op");
	assert_int_equal(eo_cluster_peer_secret_name(byo, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "peer");

	eo_cluster_tls(srv_only, &t);
	assert_int_equal(t.client, EO_TLS_SECRET);
	assert_false(t.client_mtls);
	assert_int_equal(t.peer, EO_TLS_NONE);
	assert_int_equal(eo_cluster_operator_client_secret_name(srv_only, buf, sizeof(buf)), -1);
	assert_int_equal(eo_cluster_peer_secret_name(srv_only, buf, sizeof(buf)), -1);

	eo_cluster_tls(cm, &t);
	assert_int_equal(t.ca, EO_TLS_CA_UNSET); /* the planner decides */
	json_object_set_new(json_object_get(json_object_get(cm, "spec"), "tls"),
			    "certificateAuthority", json_string("Issuer"));
	eo_cluster_tls(cm, &t);
	assert_int_equal(t.ca, EO_TLS_CA_ISSUER);
	json_object_set_new(json_object_get(json_object_get(cm, "spec"), "tls"),
			    "certificateAuthority", json_string("PerCluster"));
	eo_cluster_tls(cm, &t);
	assert_int_equal(t.ca, EO_TLS_CA_PER_CLUSTER);
	assert_int_equal(t.client, EO_TLS_CERT_MANAGER);
	assert_true(t.client_mtls);
	assert_string_equal(t.server_issuer.name, "i");
	assert_string_equal(t.server_issuer.kind, "Issuer"); /* defaulted */
	assert_string_equal(t.operator_client_issuer.name, "ci");
	assert_string_equal(t.operator_client_issuer.kind, "ClusterIssuer");
	assert_int_equal(t.peer, EO_TLS_CERT_MANAGER);
	assert_string_equal(t.peer_issuer.name, "pi");
	assert_true(eo_cluster_uses_cert_manager(cm));
	assert_int_equal(eo_cluster_server_secret_name(cm, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "c-server-tls");
	assert_int_equal(eo_cluster_operator_client_secret_name(cm, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "c-operator-client-tls");
	assert_int_equal(eo_cluster_peer_secret_name(cm, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "c-peer-tls");
	json_decref(byo);
	json_decref(srv_only);
	json_decref(cm);
}

/* source.archive reads as an ARCHIVE location: its claim, directory and point. */
static void test_restore_archive_source(void **state)
{
	json_t *c = tu_jsonq("{'spec':{'bootstrap':{'restore':{'source':{'archive':{'pvc':"
			     "{'claimName':'arch','subPath':'p/q'},'targetRevision':77}}}}}}");
	json_t *t = tu_jsonq("{'spec':{'bootstrap':{'restore':{'source':{'archive':{'pvc':"
			     "{'claimName':'arch'},'targetTime':'2026-11-28T01:02:03Z'}}}}}}");
	json_t *both = tu_jsonq("{'spec':{'bootstrap':{'restore':{'source':{'archive':{'pvc':"
				"{'claimName':'arch'}},'s3':{'bucket':'b'}}}}}}");
	struct eo_snapshot_location loc;

	(void)state;
	assert_true(eo_cluster_restore_source(c, &loc));
	assert_int_equal(loc.kind, EO_LOCATION_ARCHIVE);
	assert_string_equal(loc.claim_name, "arch");
	assert_string_equal(loc.sub_path, "p/q");
	assert_int_equal(loc.target_revision, 77);
	assert_string_equal(loc.target_time, "");
	assert_true(eo_cluster_restore_source(t, &loc));
	assert_int_equal(loc.target_revision, 0);
	assert_string_equal(loc.target_time, "2026-11-28T01:02:03Z");
	assert_string_equal(loc.sub_path, "");
	assert_true(eo_cluster_restore_source(both, &loc));
	assert_int_equal(loc.kind, EO_LOCATION_BOTH);
	json_decref(c);
	json_decref(t);
	json_decref(both);
}

static void test_auth_restore_options_passthrough(void **state)
{
	json_t *c =
	    tu_jsonq("{'spec':{'version':'3.6.11',"
		     "'auth':{'enabled':true,'rootCredentialsSecretRef':{'name':'root-creds'}},"
		     "'bootstrap':{'restore':{'source':{'s3':{'endpoint':'https://s3.example.com',"
		     "'bucket':'b','key':'my-etcd/x.db','region':'us-east-1','forcePathStyle':true,"
		     "'credentialsSecretRef':{'name':'s3-creds'}}}}},"
		     "'options':{'quotaBackendBytes':8589934592,'autoCompactionMode':'periodic',"
		     "'autoCompactionRetention':'1h','snapshotCount':10000},"
		     "'affinity':{'podAntiAffinity':{}},'topologySpreadConstraints':[],"
		     "'imagePullSecrets':[{'name':'reg'}],"
		     "'additionalMetadata':{'labels':{'team':'a'},'annotations':{'x':'y'}}},"
		     "'status':{'readyMembers':3,'clusterID':'769f1c9e0d723d0b','clusterToken':'t',"
		     "'authEnabled':true,'observed':{'replicas':3},"
		     "'progressDeadline':'2026-06-02T10:00:00Z'}}");
	struct eo_snapshot_location loc;
	struct eo_etcd_options o;
	time_t t = 0;

	(void)state;
	assert_true(eo_cluster_auth_enabled(c));
	assert_string_equal(eo_cluster_auth_secret(c), "root-creds");
	assert_true(eo_cluster_restore_source(c, &loc));
	assert_int_equal(loc.kind, EO_LOCATION_S3);
	assert_string_equal(loc.endpoint, "https://s3.example.com");
	assert_string_equal(loc.bucket, "b");
	assert_string_equal(loc.key, "my-etcd/x.db");
	assert_string_equal(loc.region, "us-east-1");
	assert_true(loc.force_path_style);
	assert_string_equal(loc.credentials_secret, "s3-creds");
	assert_string_equal(loc.claim_name, "");
	eo_cluster_options(c, &o);
	assert_int_equal(o.quota_backend_bytes, 8589934592LL);
	assert_string_equal(o.auto_compaction_mode, "periodic");
	assert_string_equal(o.auto_compaction_retention, "1h");
	assert_int_equal(o.snapshot_count, 10000);
	assert_non_null(eo_cluster_affinity(c));
	assert_non_null(eo_cluster_topology_spread_constraints(c));
	assert_int_equal(json_array_size(eo_cluster_image_pull_secrets(c)), 1);
	assert_string_equal(json_string_value(json_object_get(eo_cluster_extra_labels(c), "team")),
			    "a");
	assert_string_equal(
	    json_string_value(json_object_get(eo_cluster_extra_annotations(c), "x")), "y");
	assert_int_equal(eo_cluster_ready_members(c), 3);
	assert_string_equal(eo_cluster_cluster_id(c), "769f1c9e0d723d0b");
	assert_string_equal(eo_cluster_cluster_token(c), "t");
	assert_true(eo_cluster_auth_latched(c));
	assert_non_null(eo_cluster_observed(c));
	assert_true(eo_cluster_progress_deadline(c, &t));
	assert_int_equal(t, 1780394400);
	json_decref(c);
}

static void test_resources(void **state)
{
	struct {
		const char *cluster;
		const char *want;
	} cases[] = {
	    {"{'spec':{'version':'3.6.11'}}", "{'requests':{'cpu':'100m','memory':'128Mi'}}"},
	    {"{'spec':{'version':'3.6.11','resources':{}}}",
	     "{'requests':{'cpu':'100m','memory':'128Mi'}}"},
	    {"{'spec':{'version':'3.6.11','resources':{'limits':{},'requests':{}}}}",
	     "{'requests':{'cpu':'100m','memory':'128Mi'}}"},
	    {"{'spec':{'version':'3.6.11','resources':{'limits':{'memory':'512Mi'}}}}",
	     "{'limits':{'memory':'512Mi'}}"},
	    {"{'spec':{'version':'3.6.11','resources':{'requests':{'memory':'384Mi'},"
	     "'limits':{'memory':'512Mi'}}}}",
	     "{'requests':{'memory':'384Mi'},'limits':{'memory':'512Mi'}}"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *c = tu_jsonq(cases[i].cluster);
		json_t *want = tu_jsonq(cases[i].want);
		json_t *got = eo_cluster_resources(c);

		assert_non_null(got);
		if (!json_equal(got, want))
			fail_msg("case %zu: %s", i, json_dumps(got, JSON_COMPACT));
		/* A new reference: changing it leaves the cluster alone. */
		json_object_set_new(got, "extra", json_true());
		assert_null(json_object_get(
		    json_object_get(json_object_get(c, "spec"), "resources"), "extra"));
		json_decref(got);
		json_decref(want);
		json_decref(c);
	}
}

/* --- validation --- */

#define SPEC(body) "{'metadata':{'name':'my-etcd'},'spec':{'version':'3.6.11'" body "}}"
#define SPEC_V(v)  "{'metadata':{'name':'my-etcd'},'spec':{'version':'" v "'}}"
#define TLS_BYO                                                                                    \
	",'tls':{'client':{'serverSecretRef':{'name':'s'},'operatorClientSecretRef':{'name':'o'}}" \
	","                                                                                        \
	"'peer':{'secretRef':{'name':'p'}}}"
#define RESTORE_S3                                                                                 \
	",'bootstrap':{'restore':{'source':{'s3':{'endpoint':'https://s3','bucket':'b',"           \
	"'key':'a/b.db','credentialsSecretRef':{'name':'c'}}}}}"

#define HEX64	      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ARCHIVE(body) SPEC(",'bootstrap':{'restore':{'source':{'archive':{" body "}}}}")
#define HEX64U	      "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"
#define RESTORE_HTTP(extra)                                                                        \
	",'bootstrap':{'restore':{'source':{'s3':{'endpoint':'http://minio:9000','bucket':'b',"    \
	"'key':'a/b.db','credentialsSecretRef':{'name':'c'}" extra "}}}}"

static const struct tu_vcase vcases[] = {
    /* Creation. */
    {"minimal", SPEC(""), NULL, NULL},
    {"seed quick start", SPEC(",'replicas':3,'storage':{'size':'1Gi'}"), NULL, NULL},
    {"no spec", "{'metadata':{'name':'x'}}", NULL, "spec: Required value"},
    {"spec not object", "{'spec':5}", NULL, "spec: must be an object"},
    {"not an object", "[]", NULL, "object: must be a JSON object"},
    {"missing version", "{'spec':{'replicas':1}}", NULL, "spec.version: Required value"},
    {"version latest", "{'spec':{'version':'latest'}}", NULL, EO_MSG_VERSION},
    {"version v-prefix", "{'spec':{'version':'v3.6.11'}}", NULL, EO_MSG_VERSION},
    {"version two parts", "{'spec':{'version':'3.6'}}", NULL, EO_MSG_VERSION},
    {"version suffix", "{'spec':{'version':'3.6.11-rc.0'}}", NULL, EO_MSG_VERSION},
    {"version number", "{'spec':{'version':3}}", NULL, EO_MSG_VERSION},
    {"version empty", "{'spec':{'version':''}}", NULL, EO_MSG_VERSION},
    /* etcd 3.4 or newer (the CRD's second rule on spec.version) */
    {"version 3.3", SPEC_V("3.3.27"), NULL, EO_MSG_VERSION_MIN},
    {"version 2.x", SPEC_V("2.3.8"), NULL, EO_MSG_VERSION_MIN},
    {"version 0.0.1", SPEC_V("0.0.1"), NULL, EO_MSG_VERSION_MIN},
    {"version 3.4", SPEC_V("3.4.0"), NULL, NULL},
    {"version 3.5", SPEC_V("3.5.35"), NULL, NULL},
    {"version 3.10", SPEC_V("3.10.0"), NULL, NULL},
    {"version 4.0", SPEC_V("4.0.0"), NULL, NULL},
    {"version 3.04", SPEC_V("3.04.1"), NULL, NULL},
    {"version 03.3", SPEC_V("03.3.1"), NULL, EO_MSG_VERSION_MIN},
    {"name too long",
     "{'metadata':{'name':'abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-xy'},"
     "'spec':{'version':'3.6.11'}}",
     NULL, EO_MSG_CLUSTER_NAME},
    {"name 56",
     "{'metadata':{'name':'abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-x'},"
     "'spec':{'version':'3.6.11'}}",
     NULL, NULL},
    {"name digit first", "{'metadata':{'name':'1abc'},'spec':{'version':'3.6.11'}}", NULL,
     EO_MSG_CLUSTER_NAME},
    {"negative replicas", SPEC(",'replicas':-1"), NULL, "spec.replicas: must be between 0"},
    {"replicas string", SPEC(",'replicas':'3'"), NULL, "spec.replicas: must be an integer"},
    {"replicas too big", SPEC(",'replicas':2147483648"), NULL, "spec.replicas"},
    {"replicas 0 pvc", SPEC(",'replicas':0"), NULL, NULL},
    {"replicas 9", SPEC(",'replicas':9"), NULL, NULL},
    {"replicas 10", SPEC(",'replicas':10"), NULL, EO_MSG_REPLICAS_MAX},
    {"replicas 1000", SPEC(",'replicas':1000"), NULL, EO_MSG_REPLICAS_MAX},
    {"labels ok",
     SPEC(",'additionalMetadata':{'labels':{'team':'a','example.com/tier':'',"
	  "'A_b.c':'V-1.x_y'},'annotations':{'example.com/note':'any text, even spaces!'}}"),
     NULL, NULL},
    {"label key with space", SPEC(",'additionalMetadata':{'labels':{'bad key!':'x'}}"), NULL,
     EO_MSG_LABEL_KEY},
    {"label key empty", SPEC(",'additionalMetadata':{'labels':{'':'x'}}"), NULL, EO_MSG_LABEL_KEY},
    {"label key upper prefix", SPEC(",'additionalMetadata':{'labels':{'Example.com/a':'x'}}"), NULL,
     EO_MSG_LABEL_KEY},
    {"label key two slashes", SPEC(",'additionalMetadata':{'labels':{'a/b/c':'x'}}"), NULL,
     EO_MSG_LABEL_KEY},
    {"label value with space", SPEC(",'additionalMetadata':{'labels':{'a':'x y'}}"), NULL,
     EO_MSG_LABEL_VALUE},
    {"label value 64",
     SPEC(",'additionalMetadata':{'labels':{'a':"
	  "'abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcd'}}"),
     NULL, EO_MSG_LABEL_VALUE},
    {"label value 63",
     SPEC(",'additionalMetadata':{'labels':{'a':"
	  "'abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabc'}}"),
     NULL, NULL},
    {"label value not string", SPEC(",'additionalMetadata':{'labels':{'a':1}}"), NULL,
     "spec.additionalMetadata.labels: every value must be a string"},
    {"labels not object", SPEC(",'additionalMetadata':{'labels':['a']}"), NULL,
     "spec.additionalMetadata.labels: must be an object"},
    {"annotation key bad", SPEC(",'additionalMetadata':{'annotations':{'a:b':'x'}}"), NULL,
     EO_MSG_ANNOTATION_KEY},
    {"annotation value free text",
     SPEC(",'additionalMetadata':{'annotations':{'a':'{\\\"json\\\": [1, 2]} \\n'}}"), NULL, NULL},
    {"deadline 0", SPEC(",'progressDeadlineSeconds':0"), NULL,
     "spec.progressDeadlineSeconds: must be between 1"},
    {"memory cluster", SPEC(",'storage':{'size':'256Mi','medium':'Memory'}"), NULL, NULL},
    {"memory pause", SPEC(",'replicas':0,'storage':{'size':'256Mi','medium':'Memory'}"), NULL,
     EO_MSG_MEMORY_PAUSE},
    {"memory size 0", SPEC(",'storage':{'size':0,'medium':'Memory'}"), NULL, EO_MSG_MEMORY_SIZE},
    {"memory size 0 string", SPEC(",'storage':{'size':'0Mi','medium':'Memory'}"), NULL,
     EO_MSG_MEMORY_SIZE},
    {"pvc size 0", SPEC(",'storage':{'size':'0'}"), NULL, EO_MSG_PVC_SIZE},
    {"negative size", SPEC(",'storage':{'size':'-1Gi'}"), NULL, EO_MSG_PVC_SIZE},
    {"garbage size", SPEC(",'storage':{'size':'lots'}"), NULL, "spec.storage.size: must be"},
    {"bad medium", SPEC(",'storage':{'medium':'Disk'}"), NULL, "spec.storage.medium: must be"},
    {"empty storage class", SPEC(",'storage':{'storageClassName':''}"), NULL, NULL},
    {"tls byo", SPEC(TLS_BYO), NULL, NULL},
    {"client both sources",
     SPEC(",'tls':{'client':{'serverSecretRef':{'name':'s'},"
	  "'certManager':{'serverIssuerRef':{'name':'i'}}}}"),
     NULL, EO_MSG_CLIENT_TLS_ONE_OF},
    {"client no source", SPEC(",'tls':{'client':{}}"), NULL, EO_MSG_CLIENT_TLS_ONE_OF},
    {"client only op secret", SPEC(",'tls':{'client':{'operatorClientSecretRef':{'name':'o'}}}"),
     NULL, EO_MSG_CLIENT_TLS_ONE_OF},
    {"cm + op secret",
     SPEC(",'tls':{'client':{'operatorClientSecretRef':{'name':'o'},"
	  "'certManager':{'serverIssuerRef':{'name':'i'}}}}"),
     NULL, EO_MSG_CLIENT_TLS_CM_OPCLIENT},
    {"cm without server issuer", SPEC(",'tls':{'client':{'certManager':{}}}"), NULL,
     "spec.tls.client.certManager.serverIssuerRef: Required value"},
    {"bad issuer kind",
     SPEC(",'tls':{'peer':{'certManager':{'issuerRef':{'name':'i','kind':'Foo'}}}}"), NULL,
     "spec.tls.peer.certManager.issuerRef.kind: must be Issuer or ClusterIssuer"},
    {"empty secret name", SPEC(",'tls':{'client':{'serverSecretRef':{'name':''}}}"), NULL,
     "spec.tls.client.serverSecretRef.name: Required value"},
    {"peer both",
     SPEC(",'tls':{'peer':{'secretRef':{'name':'p'},'certManager':{'issuerRef':{'name':'i'}}}}"),
     NULL, EO_MSG_PEER_TLS_ONE_OF},
    {"peer none", SPEC(",'tls':{'peer':{}}"), NULL, EO_MSG_PEER_TLS_ONE_OF},
    {"certificateAuthority PerCluster",
     SPEC(",'tls':{'certificateAuthority':'PerCluster','peer':{'certManager':{'issuerRef':"
	  "{'name':'i'}}}}"),
     NULL, NULL},
    {"certificateAuthority Issuer",
     SPEC(",'tls':{'certificateAuthority':'Issuer','peer':{'certManager':{'issuerRef':"
	  "{'name':'i'}}}}"),
     NULL, NULL},
    {"certificateAuthority unknown",
     SPEC(",'tls':{'certificateAuthority':'Shared','peer':{'certManager':{'issuerRef':"
	  "{'name':'i'}}}}"),
     NULL, "spec.tls.certificateAuthority: must be PerCluster or Issuer"},
    {"cert-manager full",
     SPEC(",'tls':{'client':{'certManager':{'serverIssuerRef':{'name':'i'},"
	  "'operatorClientIssuerRef':{'name':'ci','kind':'ClusterIssuer'}}},"
	  "'peer':{'certManager':{'issuerRef':{'name':'i'}}}}"),
     NULL, NULL},
    {"auth without tls", SPEC(",'auth':{'enabled':true,'rootCredentialsSecretRef':{'name':'r'}}"),
     NULL, EO_MSG_AUTH_NEEDS_TLS},
    {"auth with peer tls only",
     SPEC(",'tls':{'peer':{'secretRef':{'name':'p'}}},"
	  "'auth':{'enabled':true,'rootCredentialsSecretRef':{'name':'r'}}"),
     NULL, EO_MSG_AUTH_NEEDS_TLS},
    {"auth without secret",
     SPEC(",'tls':{'client':{'serverSecretRef':{'name':'s'}}},"
	  "'auth':{'enabled':true}"),
     NULL, EO_MSG_AUTH_NEEDS_SECRET},
    {"auth ok",
     SPEC(",'tls':{'client':{'serverSecretRef':{'name':'s'}}},"
	  "'auth':{'enabled':true,'rootCredentialsSecretRef':{'name':'r'}}"),
     NULL, NULL},
    {"auth disabled without tls", SPEC(",'auth':{'enabled':false}"), NULL, NULL},
    {"restore s3", SPEC(RESTORE_S3), NULL, NULL},
    {"restore pvc",
     SPEC(",'bootstrap':{'restore':{'source':{'pvc':{'claimName':'c','subPath':'x.db'}}}}"), NULL,
     NULL},
    {"bootstrap empty", SPEC(",'bootstrap':{}"), NULL, NULL},
    {"restore s3 no key",
     SPEC(",'bootstrap':{'restore':{'source':{'s3':{'endpoint':'e','bucket':'b',"
	  "'credentialsSecretRef':{'name':'c'}}}}}"),
     NULL, EO_MSG_RESTORE_S3_KEY},
    {"restore pvc no subPath",
     SPEC(",'bootstrap':{'restore':{'source':{'pvc':{'claimName':'c'}}}}"), NULL,
     EO_MSG_RESTORE_PVC_SUBPATH},
    {"restore both",
     SPEC(",'bootstrap':{'restore':{'source':{'pvc':{'claimName':'c','subPath':'x'},"
	  "'s3':{'endpoint':'e','bucket':'b','key':'k','credentialsSecretRef':{'name':'c'}}}}}"),
     NULL, EO_MSG_RESTORE_SOURCE_ONE_OF},
    {"restore neither", SPEC(",'bootstrap':{'restore':{'source':{}}}"), NULL,
     EO_MSG_RESTORE_SOURCE_ONE_OF},
    {"restore no source", SPEC(",'bootstrap':{'restore':{}}"), NULL,
     "spec.bootstrap.restore.source: Required value"},
    {"restore s3 no bucket",
     SPEC(",'bootstrap':{'restore':{'source':{'s3':{'endpoint':'e','key':'k',"
	  "'credentialsSecretRef':{'name':'c'}}}}}"),
     NULL, "spec.bootstrap.restore.source.s3.bucket: Required value"},
    {"restore checksum",
     SPEC(",'bootstrap':{'restore':{'source':{'pvc':{'claimName':'c','subPath':'x.db'},"
	  "'expectedChecksum':'sha256:" HEX64 "'}}}"),
     NULL, NULL},
    {"restore checksum upper case",
     SPEC(",'bootstrap':{'restore':{'source':{'pvc':{'claimName':'c','subPath':'x.db'},"
	  "'expectedChecksum':'sha256:" HEX64U "'}}}"),
     NULL, EO_MSG_RESTORE_CHECKSUM},
    {"restore checksum without prefix",
     SPEC(",'bootstrap':{'restore':{'source':{'pvc':{'claimName':'c','subPath':'x.db'},"
	  "'expectedChecksum':'" HEX64 "'}}}"),
     NULL, EO_MSG_RESTORE_CHECKSUM},
    {"restore checksum not a string",
     SPEC(",'bootstrap':{'restore':{'source':{'pvc':{'claimName':'c','subPath':'x.db'},"
	  "'expectedChecksum':5}}}"),
     NULL, EO_MSG_RESTORE_CHECKSUM},
    {"restore s3 http", SPEC(RESTORE_HTTP("")), NULL, EO_MSG_S3_INSECURE},
    {"restore s3 key dot-dot",
     SPEC(",'bootstrap':{'restore':{'source':{'s3':{'endpoint':'https://s3','bucket':'b',"
	  "'key':'../other/x.db','credentialsSecretRef':{'name':'c'}}}}}"),
     NULL, EO_MSG_PATH_DOT_DOT},
    {"restore pvc subPath dot-dot",
     SPEC(",'bootstrap':{'restore':{'source':{'pvc':{'claimName':'c','subPath':'a/../../x.db'}}}}"),
     NULL, EO_MSG_PATH_DOT_DOT},
    {"restore s3 http insecure", SPEC(RESTORE_HTTP(",'insecure':true")), NULL, NULL},
    /* A formed cluster never reads its source again: it is not stopped for it. */
    {"restore s3 http, cluster formed",
     "{'metadata':{'name':'my-etcd'},'spec':{'version':'3.6.11'" RESTORE_HTTP(
	 "") "},'status':{'clusterID':'1a2b'}}",
     NULL, NULL},
    /* source.archive: a PVC directory and a point (revision or time, or neither: latest) */
    {"restore archive revision",
     ARCHIVE("'pvc':{'claimName':'a','subPath':'prod'},'targetRevision':42"), NULL, NULL},
    {"restore archive time",
     ARCHIVE("'pvc':{'claimName':'a'},'targetTime':'2026-11-28T01:02:03.5Z'"), NULL, NULL},
    {"restore archive latest", ARCHIVE("'pvc':{'claimName':'a'}"), NULL, NULL},
    {"restore archive both targets",
     ARCHIVE("'pvc':{'claimName':'a'},'targetRevision':42,'targetTime':'2026-11-28T01:02:03Z'"),
     NULL, EO_MSG_ARCHIVE_TARGET_ONE_OF},
    {"restore archive revision 0", ARCHIVE("'pvc':{'claimName':'a'},'targetRevision':0"), NULL,
     "spec.bootstrap.restore.source.archive.targetRevision: must be a revision, 1 or more"},
    {"restore archive revision string", ARCHIVE("'pvc':{'claimName':'a'},'targetRevision':'42'"),
     NULL, "spec.bootstrap.restore.source.archive.targetRevision: must be a revision, 1 or more"},
    {"restore archive time with offset",
     ARCHIVE("'pvc':{'claimName':'a'},'targetTime':'2026-11-28T01:02:03+01:00'"), NULL,
     EO_MSG_ARCHIVE_TARGET_TIME},
    {"restore archive time garbage", ARCHIVE("'pvc':{'claimName':'a'},'targetTime':'yesterday'"),
     NULL, EO_MSG_ARCHIVE_TARGET_TIME},
    {"restore archive no pvc", ARCHIVE("'targetRevision':42"), NULL,
     "spec.bootstrap.restore.source.archive.pvc: Required value"},
    {"restore archive no claim", ARCHIVE("'pvc':{'subPath':'x'}"), NULL,
     "spec.bootstrap.restore.source.archive.pvc.claimName: Required value"},
    {"restore archive dot-dot", ARCHIVE("'pvc':{'claimName':'a','subPath':'x/../..'}"), NULL,
     EO_MSG_PATH_DOT_DOT},
    {"restore archive and pvc",
     SPEC(",'bootstrap':{'restore':{'source':{'archive':{'pvc':{'claimName':'a'}},"
	  "'pvc':{'claimName':'c','subPath':'x.db'}}}}"),
     NULL, EO_MSG_RESTORE_SOURCE_ONE_OF},
    {"restore archive not an object", SPEC(",'bootstrap':{'restore':{'source':{'archive':5}}}"),
     NULL, EO_MSG_RESTORE_SOURCE_ONE_OF},
    {"restore archive checksum",
     SPEC(",'bootstrap':{'restore':{'source':{'archive':{'pvc':{'claimName':'a'}},"
	  "'expectedChecksum':'sha256:" HEX64 "'}}}"),
     NULL, EO_MSG_ARCHIVE_CHECKSUM},
    {"restore archive memory",
     SPEC(",'storage':{'size':'1Gi','medium':'Memory'},"
	  "'bootstrap':{'restore':{'source':{'archive':{'pvc':{'claimName':'a'}}}}}"),
     NULL, EO_MSG_RESTORE_MEMORY},
    {"restore memory",
     SPEC(",'storage':{'size':'1Gi','medium':'Memory'},"
	  "'bootstrap':{'restore':{'source':{'pvc':{'claimName':'c','subPath':'x.db'}}}}"),
     NULL, EO_MSG_RESTORE_MEMORY},
    {"options ok",
     SPEC(",'options':{'quotaBackendBytes':8589934592,'autoCompactionMode':'revision',"
	  "'autoCompactionRetention':'1000','snapshotCount':1}"),
     NULL, NULL},
    {"bad retention", SPEC(",'options':{'autoCompactionRetention':'1d'}"), NULL,
     "spec.options.autoCompactionRetention"},
    {"bad compaction mode", SPEC(",'options':{'autoCompactionMode':'daily'}"), NULL,
     "spec.options.autoCompactionMode"},
    {"deletionPolicy Retain", SPEC(",'deletionPolicy':'Retain'"), NULL, NULL},
    {"deletionPolicy Delete", SPEC(",'deletionPolicy':'Delete'"), NULL, NULL},
    {"deletionPolicy other", SPEC(",'deletionPolicy':'Orphan'"), NULL,
     "spec.deletionPolicy: must be Delete or Retain"},
    {"deletionPolicy not a string", SPEC(",'deletionPolicy':true"), NULL,
     "spec.deletionPolicy: must be Delete or Retain"},
    {"snapshotCount 0", SPEC(",'options':{'snapshotCount':0}"), NULL, "spec.options.snapshotCount"},
    {"negative quota", SPEC(",'options':{'quotaBackendBytes':-1}"), NULL,
     "spec.options.quotaBackendBytes"},
    {"resources ok",
     SPEC(",'resources':{'requests':{'cpu':'100m','memory':'128Mi'},"
	  "'limits':{'memory':'512Mi','cpu':1}}"),
     NULL, NULL},
    {"bad resource quantity", SPEC(",'resources':{'limits':{'memory':'lots'}}"), NULL,
     "spec.resources.limits.memory"},
    {"pull secret without name", SPEC(",'imagePullSecrets':[{}]"), NULL,
     "spec.imagePullSecrets[0].name"},
    {"tsc missing key", SPEC(",'topologySpreadConstraints':[{'maxSkew':1}]"), NULL,
     "spec.topologySpreadConstraints[0]"},
    {"tsc ok",
     SPEC(",'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'zone',"
	  "'whenUnsatisfiable':'ScheduleAnyway'}]"),
     NULL, NULL},

    /* Updates. */
    {"scale up", SPEC(",'replicas':5"), SPEC(",'replicas':3"), NULL},
    {"pause pvc", SPEC(",'replicas':0"), SPEC(",'replicas':3"), NULL},
    {"pause memory", SPEC(",'replicas':0,'storage':{'size':'256Mi','medium':'Memory'}"),
     SPEC(",'storage':{'size':'256Mi','medium':'Memory'}"), EO_MSG_MEMORY_PAUSE},
    {"version change allowed", "{'spec':{'version':'3.6.12'}}", SPEC(""), NULL},
    {"medium change", SPEC(",'storage':{'medium':'Memory'}"), SPEC(""), EO_MSG_MEDIUM_IMMUTABLE},
    {"medium explicit default", SPEC(",'storage':{'medium':''}"), SPEC(""), NULL},
    {"size shrink", SPEC(",'storage':{'size':'512Mi'}"), SPEC(""), EO_MSG_SIZE_SHRINK},
    {"size grow", SPEC(",'storage':{'size':'2Gi'}"), SPEC(""), NULL},
    {"size same other unit", SPEC(",'storage':{'size':'1024Mi'}"), SPEC(""), NULL},
    {"size same bytes", SPEC(",'storage':{'size':1073741824}"), SPEC(""), NULL},
    /* The class may change on a running cluster: the members move (plan/storage.h). */
    {"add storage class", SPEC(",'storage':{'storageClassName':'fast'}"), SPEC(""), NULL},
    {"remove storage class", SPEC(""), SPEC(",'storage':{'storageClassName':'fast'}"), NULL},
    {"change storage class", SPEC(",'storage':{'storageClassName':'slow'}"),
     SPEC(",'storage':{'storageClassName':'fast'}"), NULL},
    {"change storage class and grow", SPEC(",'storage':{'storageClassName':'slow','size':'2Gi'}"),
     SPEC(",'storage':{'storageClassName':'fast'}"), NULL},
    {"change storage class and shrink",
     SPEC(",'storage':{'storageClassName':'slow','size':'512Mi'}"),
     SPEC(",'storage':{'storageClassName':'fast'}"), EO_MSG_SIZE_SHRINK},
    {"keep storage class", SPEC(",'storage':{'storageClassName':'fast','size':'2Gi'}"),
     SPEC(",'storage':{'storageClassName':'fast'}"), NULL},
    {"tls remove (seed 003)", SPEC(""), SPEC(TLS_BYO), EO_MSG_TLS_ADD_REMOVE},
    {"tls add", SPEC(",'tls':{'peer':{'secretRef':{'name':'p'}}}"), SPEC(""),
     EO_MSG_TLS_ADD_REMOVE},
    {"tls mtls toggle",
     SPEC(",'tls':{'client':{'serverSecretRef':{'name':'s'}},"
	  "'peer':{'secretRef':{'name':'p'}}}"),
     SPEC(TLS_BYO), EO_MSG_TLS_IMMUTABLE},
    {"tls same", SPEC(TLS_BYO ",'replicas':5"), SPEC(TLS_BYO), NULL},
    {"tls issuer kind defaulted both sides",
     SPEC(",'tls':{'peer':{'certManager':{'issuerRef':{'name':'i','kind':'Issuer'}}}}"),
     SPEC(",'tls':{'peer':{'certManager':{'issuerRef':{'name':'i'}}}}"), NULL},
    {"auth change",
     SPEC(",'tls':{'client':{'serverSecretRef':{'name':'s'}}},"
	  "'auth':{'enabled':true,'rootCredentialsSecretRef':{'name':'other'}}"),
     SPEC(",'tls':{'client':{'serverSecretRef':{'name':'s'}}},"
	  "'auth':{'enabled':true,'rootCredentialsSecretRef':{'name':'r'}}"),
     EO_MSG_AUTH_IMMUTABLE},
    {"auth remove", SPEC(",'tls':{'client':{'serverSecretRef':{'name':'s'}}}"),
     SPEC(",'tls':{'client':{'serverSecretRef':{'name':'s'}}},"
	  "'auth':{'enabled':true,'rootCredentialsSecretRef':{'name':'r'}}"),
     EO_MSG_AUTH_ADD_REMOVE},
    {"auth add", SPEC(",'auth':{'enabled':false}"), SPEC(""), EO_MSG_AUTH_ADD_REMOVE},
    {"bootstrap change",
     SPEC(",'bootstrap':{'restore':{'source':{'s3':{'endpoint':'https://s3','bucket':'b',"
	  "'key':'other.db','credentialsSecretRef':{'name':'c'}}}}}"),
     SPEC(RESTORE_S3), EO_MSG_BOOTSTRAP_IMMUTABLE},
    {"bootstrap remove", SPEC(""), SPEC(RESTORE_S3), EO_MSG_BOOTSTRAP_ADD_REMOVE},
    {"bootstrap add", SPEC(",'bootstrap':{}"), SPEC(""), EO_MSG_BOOTSTRAP_ADD_REMOVE},
    {"bootstrap kept", SPEC(RESTORE_S3 ",'replicas':1"), SPEC(RESTORE_S3), NULL},
    {"old without spec is ignored", SPEC(""), "{'metadata':{}}", NULL},
};

static void test_validate_table(void **state)
{
	(void)state;
	tu_validate_cases(eo_cluster_validate, vcases, sizeof(vcases) / sizeof(vcases[0]));
}

/* Map sizes and annotation value length at and past their bounds. */
static void test_validate_metadata_bounds(void **state)
{
	struct {
		const char *map;
		size_t keys;
		size_t value_len;
		const char *msg;
	} cases[] = {
	    {"labels", EO_EXTRA_LABELS_MAX, 1, NULL},
	    {"labels", EO_EXTRA_LABELS_MAX + 1, 1,
	     "spec.additionalMetadata.labels: must have at most 64 entries"},
	    {"annotations", EO_EXTRA_ANNOTATIONS_MAX, EO_EXTRA_ANNOTATION_VALUE_MAX, NULL},
	    {"annotations", EO_EXTRA_ANNOTATIONS_MAX + 1, 1,
	     "spec.additionalMetadata.annotations: must have at most 32 entries"},
	    {"annotations", 1, EO_EXTRA_ANNOTATION_VALUE_MAX + 1,
	     "spec.additionalMetadata.annotations: every value must be at most 4096 bytes"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *obj = tu_jsonq(SPEC(",'additionalMetadata':{}"));
		json_t *map = json_object();
		char *value = malloc(cases[i].value_len + 1);
		char msg[512];
		int rc = 0;

		assert_non_null(value);
		memset(value, 'v', cases[i].value_len);
		value[cases[i].value_len] = '\0';
		for (size_t k = 0; k < cases[i].keys; k++) {
			char key[48];

			snprintf(key, sizeof(key), "example.com/k%zu", k);
			json_object_set_new(map, key, json_string(value));
		}
		json_object_set_new(
		    json_object_get(json_object_get(obj, "spec"), "additionalMetadata"),
		    cases[i].map, map);
		rc = eo_cluster_validate(obj, NULL, msg, sizeof(msg));
		if (cases[i].msg == NULL && rc != 0)
			fail_msg("%s %zu x %zu: rejected: %s", cases[i].map, cases[i].keys,
				 cases[i].value_len, msg);
		if (cases[i].msg != NULL && (rc != -1 || strcmp(msg, cases[i].msg) != 0))
			fail_msg("%s %zu x %zu: rc %d msg \"%s\", want \"%s\"", cases[i].map,
				 cases[i].keys, cases[i].value_len, rc, msg, cases[i].msg);
		free(value);
		json_decref(obj);
	}
}

static void test_validate_truncates_message(void **state)
{
	json_t *obj = tu_jsonq("{'spec':{'version':'latest'}}");
	char msg[16];

	(void)state;
	assert_int_equal(eo_cluster_validate(obj, NULL, msg, sizeof(msg)), -1);
	assert_int_equal(strlen(msg), sizeof(msg) - 1);
	assert_int_equal(strncmp(msg, EO_MSG_VERSION, sizeof(msg) - 1), 0);
	json_decref(obj);
}

TU_MAIN(test_defaults_minimal, test_defaults_partial, test_storage_variants, test_deletion_policy,
	test_tls_views, test_auth_restore_options_passthrough, test_resources, test_validate_table,
	test_validate_metadata_bounds, test_validate_truncates_message, test_restore_archive_source)
