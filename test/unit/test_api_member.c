/*
 * Unit tests for api/member: accessors and defaults of EtcdMember, and its
 * validation rules (required fields, replicas locked to 1, immutability).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/cluster.h"
#include "api/member.h"
#include "api/names.h"
#include "support/testutil.h"
#include "support/tu_main.h"

static void test_accessors_defaults(void **state)
{
	json_t *m = tu_jsonq("{'metadata':{'name':'my-etcd-7xq2k','namespace':'ns','uid':'u'},"
			     "'spec':{'clusterName':'my-etcd','version':'3.6.11'}}");
	struct eo_storage st;
	struct eo_member_tls tls;
	struct eo_snapshot_location loc;
	struct eo_etcd_options o;
	json_t *r = NULL;
	json_t *want = NULL;

	(void)state;
	assert_string_equal(eo_member_name(m), "my-etcd-7xq2k");
	assert_string_equal(eo_member_namespace(m), "ns");
	assert_string_equal(eo_member_uid(m), "u");
	assert_false(eo_member_is_deleting(m));
	assert_false(eo_member_has_finalizer(m));
	assert_string_equal(eo_member_cluster_name(m), "my-etcd");
	assert_string_equal(eo_member_version(m), "3.6.11");
	eo_member_storage(m, &st);
	assert_string_equal(st.size, "1Gi");
	assert_false(st.memory);
	assert_false(eo_member_bootstrap(m));
	assert_string_equal(eo_member_initial_cluster(m), "");
	assert_true(eo_member_is_pending(m));
	assert_string_equal(eo_member_cluster_token(m), "");
	assert_false(eo_member_dormant(m));
	eo_member_tls(m, &tls);
	assert_null(tls.client_server_secret);
	assert_null(tls.peer_secret);
	assert_false(tls.client_mtls);
	assert_false(tls.peer_auto_tls);
	assert_false(eo_member_restore_source(m, &loc));
	eo_member_options(m, &o);
	assert_int_equal(o.snapshot_count, 0);
	r = eo_member_resources(m);
	want = tu_jsonq("{'requests':{'cpu':'100m','memory':'128Mi'}}");
	assert_true(json_equal(r, want));
	json_decref(r);
	json_decref(want);
	assert_null(eo_member_affinity(m));
	assert_null(eo_member_topology_spread_constraints(m));
	assert_null(eo_member_image_pull_secrets(m));
	assert_null(eo_member_extra_labels(m));
	assert_null(eo_member_extra_annotations(m));
	assert_string_equal(eo_member_member_id(m), "");
	assert_string_equal(eo_member_pod_name(m), "");
	assert_string_equal(eo_member_pod_uid(m), "");
	assert_false(eo_member_is_voter(m));
	assert_string_equal(eo_member_pvc_name(m), "");
	assert_string_equal(eo_member_running_version(m), "");
	assert_false(eo_member_is_ready(m));

	assert_int_equal(eo_member_apply_defaults(m), 0);
	want = tu_jsonq("{'metadata':{'name':'my-etcd-7xq2k','namespace':'ns','uid':'u'},"
			"'spec':{'clusterName':'my-etcd','version':'3.6.11','replicas':1,"
			"'storage':{'size':'1Gi','medium':''}}}");
	assert_true(json_equal(m, want));
	json_decref(want);
	json_decref(m);
}

static void test_accessors_full(void **state)
{
	json_t *m = tu_jsonq(
	    "{'metadata':{'name':'c-abcde','deletionTimestamp':'2026-06-02T10:00:00Z',"
	    "'finalizers':['other','etcd-operator.cozystack.io/member-cleanup']},"
	    "'spec':{'clusterName':'c','version':'3.6.11','bootstrap':true,"
	    "'initialCluster':'c-abcde=https://c-abcde.c.ns.svc:2380','clusterToken':'ns-c-u',"
	    "'dormant':true,'storage':{'size':'256Mi','medium':'Memory'},"
	    "'resources':{'limits':{'memory':'512Mi'}},"
	    "'options':{'snapshotCount':5000,'autoCompactionMode':'periodic'},"
	    "'affinity':{'podAntiAffinity':{}},'topologySpreadConstraints':[{}],"
	    "'imagePullSecrets':[{'name':'r'}],"
	    "'additionalMetadata':{'labels':{'a':'b'},'annotations':{'c':'d'}},"
	    "'tls':{'clientServerSecretRef':{'name':'srv'},'clientMTLS':true,"
	    "'peerSecretRef':{'name':'peer'},'peerAutoTLS':false},"
	    "'restore':{'source':{'pvc':{'claimName':'backups','subPath':'x/y.db'}}}},"
	    "'status':{'memberID':'ae36f238164a08ad','podName':'c-abcde','podUID':'p-1',"
	    "'isVoter':true,'pvcName':'data-c-abcde','version':'3.6.10',"
	    "'conditions':[{'type':'Ready','status':'True','reason':'PodReady','message':'',"
	    "'lastTransitionTime':'2026-06-02T10:00:00Z'}]}}");
	struct eo_storage st;
	struct eo_member_tls tls;
	struct eo_snapshot_location loc;
	struct eo_etcd_options o;
	json_t *r = NULL;

	(void)state;
	assert_true(eo_member_is_deleting(m));
	assert_true(eo_member_has_finalizer(m));
	assert_true(eo_member_bootstrap(m));
	assert_false(eo_member_is_pending(m));
	assert_string_equal(eo_member_initial_cluster(m), "c-abcde=https://c-abcde.c.ns.svc:2380");
	assert_string_equal(eo_member_cluster_token(m), "ns-c-u");
	assert_true(eo_member_dormant(m));
	eo_member_storage(m, &st);
	assert_true(st.memory);
	assert_int_equal(eo_quantity_value(&st.size_q), 268435456);
	r = eo_member_resources(m);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(r, "limits"), "memory")), "512Mi");
	assert_null(json_object_get(r, "requests"));
	json_decref(r);
	eo_member_options(m, &o);
	assert_int_equal(o.snapshot_count, 5000);
	assert_string_equal(o.auto_compaction_mode, "periodic");
	assert_non_null(eo_member_affinity(m));
	assert_int_equal(json_array_size(eo_member_topology_spread_constraints(m)), 1);
	assert_int_equal(json_array_size(eo_member_image_pull_secrets(m)), 1);
	assert_non_null(eo_member_extra_labels(m));
	assert_non_null(eo_member_extra_annotations(m));
	eo_member_tls(m, &tls);
	assert_string_equal(tls.client_server_secret, "srv");
	assert_true(tls.client_mtls);
	assert_string_equal(tls.peer_secret, "peer");
	assert_false(tls.peer_auto_tls);
	assert_true(eo_member_restore_source(m, &loc));
	assert_int_equal(loc.kind, EO_LOCATION_PVC);
	assert_string_equal(loc.claim_name, "backups");
	assert_string_equal(loc.sub_path, "x/y.db");
	assert_string_equal(eo_member_member_id(m), "ae36f238164a08ad");
	assert_string_equal(eo_member_pod_name(m), "c-abcde");
	assert_string_equal(eo_member_pod_uid(m), "p-1");
	assert_true(eo_member_is_voter(m));
	assert_string_equal(eo_member_pvc_name(m), "data-c-abcde");
	assert_string_equal(eo_member_running_version(m), "3.6.10");
	assert_true(eo_member_is_ready(m));
	json_decref(m);
}

#define M(body) "{'spec':{'clusterName':'c','version':'3.6.11'" body "}}"

static const struct tu_vcase vcases[] = {
    {"minimal", M(""), NULL, NULL},
    {"full",
     M(",'replicas':1,'storage':{'size':'1Gi','medium':'Memory'},'bootstrap':true,"
       "'restore':{'source':{'s3':{'endpoint':'e','bucket':'b','key':'k',"
       "'credentialsSecretRef':{'name':'c'}}}}"),
     NULL, NULL},
    {"no spec", "{}", NULL, "spec: Required value"},
    {"no cluster name", "{'spec':{'version':'3.6.11'}}", NULL, "spec.clusterName: Required"},
    {"empty cluster name", "{'spec':{'clusterName':'','version':'3.6.11'}}", NULL,
     "spec.clusterName: Required"},
    {"long cluster name",
     "{'spec':{'clusterName':'abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij',"
     "'version':'3.6.11'}}",
     NULL, "spec.clusterName: must be at most 63"},
    {"no version", "{'spec':{'clusterName':'c'}}", NULL, "spec.version: Required value"},
    {"bad version", "{'spec':{'clusterName':'c','version':'latest'}}", NULL, EO_MSG_VERSION},
    {"replicas 2", M(",'replicas':2"), NULL, "spec.replicas: must be 1"},
    {"replicas 0", M(",'replicas':0"), NULL, "spec.replicas: must be 1"},
    {"bad size", M(",'storage':{'size':'x'}"), NULL, "spec.storage.size"},
    {"bad medium", M(",'storage':{'medium':'Disk'}"), NULL, "spec.storage.medium"},
    {"restore both",
     M(",'restore':{'source':{'pvc':{'claimName':'c'},'s3':{'endpoint':'e','bucket':'b',"
       "'credentialsSecretRef':{'name':'c'}}}}"),
     NULL, EO_MSG_RESTORE_SOURCE_ONE_OF},
    {"restore archive",
     M(",'restore':{'source':{'archive':{'pvc':{'claimName':'a'},'targetRevision':7}}}"), NULL,
     NULL},
    {"restore archive both targets",
     M(",'restore':{'source':{'archive':{'pvc':{'claimName':'a'},'targetRevision':7,"
       "'targetTime':'2026-11-28T01:02:03Z'}}}"),
     NULL, EO_MSG_ARCHIVE_TARGET_ONE_OF},
    {"set initialCluster", M(",'initialCluster':'a=b'"), M(",'initialCluster':''"), NULL},
    {"set initialCluster from absent", M(",'initialCluster':'a=b'"), M(""), NULL},
    {"change initialCluster", M(",'initialCluster':'x=y'"), M(",'initialCluster':'a=b'"),
     EO_MSG_MEMBER_INITIAL_CLUSTER},
    {"clear initialCluster", M(""), M(",'initialCluster':'a=b'"), EO_MSG_MEMBER_INITIAL_CLUSTER},
    {"keep initialCluster", M(",'initialCluster':'a=b','dormant':true"),
     M(",'initialCluster':'a=b'"), NULL},
    {"change cluster name", "{'spec':{'clusterName':'d','version':'3.6.11'}}", M(""),
     EO_MSG_MEMBER_CLUSTER_NAME_IMMUTABLE},
    {"change medium", M(",'storage':{'medium':'Memory'}"), M(""), EO_MSG_MEMBER_MEDIUM_IMMUTABLE},
    {"dormant flip", M(",'dormant':true"), M(",'dormant':false"), NULL},
    {"labels copied", M(",'additionalMetadata':{'labels':{'example.com/a':'b'}}"), NULL, NULL},
    {"bad label key", M(",'additionalMetadata':{'labels':{'bad key!':'x'}}"), NULL,
     EO_MSG_LABEL_KEY},
    {"bad label value", M(",'additionalMetadata':{'labels':{'a':'-x'}}"), NULL, EO_MSG_LABEL_VALUE},
    {"bad annotation key", M(",'additionalMetadata':{'annotations':{'a b':'x'}}"), NULL,
     EO_MSG_ANNOTATION_KEY},
};

/* The pod-shaping fields read the same from an EtcdCluster and an EtcdMember. */
static void test_shared_spec_fields_agree(void **state)
{
	static const char *const specs[] = {
	    "{}",
	    "{\"resources\":{}}",
	    "{\"resources\":{\"limits\":{}, \"requests\":{}, \"claims\":[]}}",
	    "{\"resources\":{\"claims\":[{\"name\":\"gpu\"}]}}",
	    "{\"resources\":{\"limits\":{\"memory\":\"1Gi\"}}}",
	    "{\"resources\":\"bad\", \"affinity\":[], \"imagePullSecrets\":{}}",
	    "{\"affinity\":{\"nodeAffinity\":{}}, \"topologySpreadConstraints\":[{}],"
	    " \"imagePullSecrets\":[{\"name\":\"r\"}], \"additionalMetadata\":"
	    "{\"labels\":{\"a\":\"b\"}, \"annotations\":{\"c\":\"d\"}},"
	    " \"options\":{\"quotaBackendBytes\":1024, \"autoCompactionMode\":\"revision\"}}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		json_t *spec = json_loads(specs[i], 0, NULL);
		json_t *obj = json_pack("{s:O}", "spec", spec);
		json_t *rc, *rm;
		struct eo_etcd_options oc, om;

		assert_non_null(obj);
		rc = eo_cluster_resources(obj);
		rm = eo_member_resources(obj);
		if (!json_equal(rc, rm))
			fail_msg("spec %zu: resources differ", i);
		assert_ptr_equal(eo_cluster_affinity(obj), eo_member_affinity(obj));
		assert_ptr_equal(eo_cluster_topology_spread_constraints(obj),
				 eo_member_topology_spread_constraints(obj));
		assert_ptr_equal(eo_cluster_image_pull_secrets(obj),
				 eo_member_image_pull_secrets(obj));
		assert_ptr_equal(eo_cluster_extra_labels(obj), eo_member_extra_labels(obj));
		assert_ptr_equal(eo_cluster_extra_annotations(obj),
				 eo_member_extra_annotations(obj));
		eo_cluster_options(obj, &oc);
		eo_member_options(obj, &om);
		assert_memory_equal(&oc, &om, sizeof(oc));
		json_decref(rc);
		json_decref(rm);
		json_decref(obj);
		json_decref(spec);
	}
}

static void test_validate_table(void **state)
{
	(void)state;
	tu_validate_cases(eo_member_validate, vcases, sizeof(vcases) / sizeof(vcases[0]));
}

TU_MAIN(test_accessors_defaults, test_accessors_full, test_shared_spec_fields_agree,
	test_validate_table)
