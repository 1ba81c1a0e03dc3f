/*
 * Unit tests for api/snapshot: destination and phase accessors, object keys,
 * and validation (one of s3/pvc, required fields, name length, immutability).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/names.h"
#include "api/snapshot.h"
#include "support/testutil.h"
#include "support/tu_main.h"

/* The seed runbook's example snapshot. */
#define SEED_SNAPSHOT                                                                              \
	"{'metadata':{'name':'my-etcd-2026-06-02','namespace':'ns'},'spec':{"                      \
	"'clusterRef':{'name':'my-etcd'},'destination':{'s3':{"                                    \
	"'endpoint':'https://s3.example.com','bucket':'etcd-snapshots','key':'my-etcd',"           \
	"'region':'us-east-1','forcePathStyle':true,'credentialsSecretRef':{'name':'s3-creds'}}}}" \
	"}"

static void test_accessors(void **state)
{
	json_t *s = tu_jsonq(SEED_SNAPSHOT);
	struct eo_snapshot_location d;
	char buf[EO_NAME_MAX];

	(void)state;
	assert_string_equal(eo_snapshot_cluster_name(s), "my-etcd");
	eo_snapshot_destination(s, &d);
	assert_int_equal(d.kind, EO_LOCATION_S3);
	assert_string_equal(d.endpoint, "https://s3.example.com");
	assert_string_equal(d.bucket, "etcd-snapshots");
	assert_string_equal(d.key, "my-etcd");
	assert_string_equal(d.region, "us-east-1");
	assert_true(d.force_path_style);
	assert_string_equal(d.credentials_secret, "s3-creds");
	assert_int_equal(eo_snapshot_phase(s), EO_SNAPSHOT_PHASE_NONE);
	assert_null(eo_snapshot_artifact_uri(s));
	assert_int_equal(eo_snapshot_artifact_size(s), -1);
	assert_null(eo_snapshot_artifact_checksum(s));
	assert_int_equal(eo_snapshot_artifact_revision(s), -1);
	assert_false(d.insecure);
	assert_string_equal(d.expected_checksum, "");
	assert_int_equal(eo_snapshot_s3_key(buf, sizeof(buf), d.key, "my-etcd-2026-06-02"), 0);
	assert_string_equal(buf, "my-etcd/my-etcd-2026-06-02.db");
	assert_int_equal(eo_name_snapshot_job(buf, sizeof(buf), "my-etcd-2026-06-02"), 0);
	assert_string_equal(buf, "my-etcd-2026-06-02-snapshot");
	json_decref(s);

	s = tu_jsonq("{'spec':{'clusterRef':{'name':'c'},'destination':{'pvc':{'claimName':'b'}}},"
		     "'status':{'phase':'Complete','artifact':{'uri':'file:///snapshot/data/x.db',"
		     "'sizeBytes':4096,'checksum':'sha256:ab','revision':77}}}");
	eo_snapshot_destination(s, &d);
	assert_int_equal(d.kind, EO_LOCATION_PVC);
	assert_string_equal(d.claim_name, "b");
	assert_string_equal(d.sub_path, "");
	assert_string_equal(d.key, "");
	assert_int_equal(eo_snapshot_phase(s), EO_SNAPSHOT_PHASE_COMPLETE);
	assert_string_equal(eo_snapshot_artifact_uri(s), "file:///snapshot/data/x.db");
	assert_int_equal(eo_snapshot_artifact_size(s), 4096);
	assert_string_equal(eo_snapshot_artifact_checksum(s), "sha256:ab");
	assert_int_equal(eo_snapshot_artifact_revision(s), 77);
	json_decref(s);
}

static void test_phases(void **state)
{
	struct {
		const char *json;
		enum eo_snapshot_phase phase;
		bool terminal;
	} cases[] = {
	    {"{}", EO_SNAPSHOT_PHASE_NONE, false},
	    {"{'status':{'phase':''}}", EO_SNAPSHOT_PHASE_NONE, false},
	    {"{'status':{'phase':'Pending'}}", EO_SNAPSHOT_PHASE_PENDING, false},
	    {"{'status':{'phase':'Started'}}", EO_SNAPSHOT_PHASE_STARTED, false},
	    {"{'status':{'phase':'Complete'}}", EO_SNAPSHOT_PHASE_COMPLETE, true},
	    {"{'status':{'phase':'Failed'}}", EO_SNAPSHOT_PHASE_FAILED, true},
	    {"{'status':{'phase':'Exploded'}}", EO_SNAPSHOT_PHASE_UNKNOWN, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *s = tu_jsonq(cases[i].json);
		enum eo_snapshot_phase p = eo_snapshot_phase(s);

		assert_int_equal(p, cases[i].phase);
		assert_int_equal(eo_snapshot_phase_is_terminal(p), cases[i].terminal);
		json_decref(s);
	}
	assert_string_equal(eo_snapshot_phase_str(EO_SNAPSHOT_PHASE_STARTED), "Started");
	assert_string_equal(eo_snapshot_phase_str(EO_SNAPSHOT_PHASE_FAILED), "Failed");
	assert_null(eo_snapshot_phase_str(EO_SNAPSHOT_PHASE_NONE));
	assert_null(eo_snapshot_phase_str(EO_SNAPSHOT_PHASE_UNKNOWN));
}

static void test_s3_key(void **state)
{
	struct {
		const char *prefix;
		const char *name;
		int rc;
		const char *want;
	} cases[] = {
	    {"my-etcd", "snap", 0, "my-etcd/snap.db"},
	    {"my-etcd/", "snap", 0, "my-etcd/snap.db"},
	    {"a/b", "snap", 0, "a/b/snap.db"},
	    {"", "snap", 0, "snap.db"},
	    {NULL, "snap", 0, "snap.db"},
	    {"p", "", -1, ""},
	    {"p", NULL, -1, ""},
	};
	char buf[64];
	char tiny[8];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = eo_snapshot_s3_key(buf, sizeof(buf), cases[i].prefix, cases[i].name);

		assert_int_equal(rc, cases[i].rc);
		assert_string_equal(buf, cases[i].want);
	}
	assert_int_equal(eo_snapshot_s3_key(tiny, sizeof(tiny), "prefix", "name"), -1);
	assert_string_equal(tiny, "");
}

static const struct tu_vcase vcases[] = {
    {"seed example", SEED_SNAPSHOT, NULL, NULL},
    {"pvc", "{'spec':{'clusterRef':{'name':'c'},'destination':{'pvc':{'claimName':'b'}}}}", NULL,
     NULL},
    {"no spec", "{'metadata':{'name':'s'}}", NULL, "spec: Required value"},
    {"no cluster", "{'spec':{'destination':{'pvc':{'claimName':'b'}}}}", NULL,
     "spec.clusterRef.name: Required value"},
    {"no destination", "{'spec':{'clusterRef':{'name':'c'}}}", NULL,
     "spec.destination: Required value"},
    {"empty destination", "{'spec':{'clusterRef':{'name':'c'},'destination':{}}}", NULL,
     EO_MSG_LOCATION_ONE_OF},
    /* An archive is a restore source only; never a destination. */
    {"archive destination",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'archive':{'pvc':{'claimName':'b'}}}}}",
     NULL, EO_MSG_LOCATION_ONE_OF},
    {"archive and pvc destination",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'archive':{'pvc':{'claimName':'b'}},"
     "'pvc':{'claimName':'b'}}}}",
     NULL, EO_MSG_LOCATION_ONE_OF},
    {"both",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'pvc':{'claimName':'b'},"
     "'s3':{'endpoint':'e','bucket':'b','credentialsSecretRef':{'name':'c'}}}}}",
     NULL, EO_MSG_LOCATION_ONE_OF},
    {"s3 no endpoint",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'s3':{'bucket':'b',"
     "'credentialsSecretRef':{'name':'c'}}}}}",
     NULL, "spec.destination.s3.endpoint: Required value"},
    {"s3 no credentials",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'s3':{'endpoint':'e','bucket':'b'}}}}",
     NULL, "spec.destination.s3.credentialsSecretRef.name: Required value"},
    {"pvc no claim", "{'spec':{'clusterRef':{'name':'c'},'destination':{'pvc':{}}}}", NULL,
     "spec.destination.pvc.claimName: Required value"},
    {"name 54",
     "{'metadata':{'name':'abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij'},"
     "'spec':{'clusterRef':{'name':'c'},'destination':{'pvc':{'claimName':'b'}}}}",
     NULL, NULL},
    {"name 55",
     "{'metadata':{'name':'abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-'},"
     "'spec':{'clusterRef':{'name':'c'},'destination':{'pvc':{'claimName':'b'}}}}",
     NULL, EO_MSG_SNAPSHOT_NAME},
    {"spec change",
     "{'spec':{'clusterRef':{'name':'other'},'destination':{'pvc':{'claimName':'b'}}}}",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'pvc':{'claimName':'b'}}}}",
     EO_MSG_SNAPSHOT_IMMUTABLE},
    /* A plain-HTTP store only with s3.insecure: true (the CRD refuses it the same way). */
    {"s3 http",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'s3':{'endpoint':'http://minio:9000',"
     "'bucket':'b','credentialsSecretRef':{'name':'c'}}}}}",
     NULL, EO_MSG_S3_INSECURE},
    {"s3 HTTP upper case",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'s3':{'endpoint':'HTTP://minio:9000',"
     "'bucket':'b','credentialsSecretRef':{'name':'c'}}}}}",
     NULL, EO_MSG_S3_INSECURE},
    {"s3 http insecure false",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'s3':{'endpoint':'http://minio:9000',"
     "'bucket':'b','insecure':false,'credentialsSecretRef':{'name':'c'}}}}}",
     NULL, EO_MSG_S3_INSECURE},
    {"s3 http insecure",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'s3':{'endpoint':'http://minio:9000',"
     "'bucket':'b','insecure':true,'credentialsSecretRef':{'name':'c'}}}}}",
     NULL, NULL},
    {"s3 https insecure",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'s3':{'endpoint':'https://s3',"
     "'bucket':'b','insecure':true,'credentialsSecretRef':{'name':'c'}}}}}",
     NULL, NULL},
    /* A '..' segment would reach another prefix or bucket, or leave the volume. */
    {"s3 key dot-dot",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'s3':{'endpoint':'https://s3',"
     "'bucket':'b','key':'../other-bucket/','credentialsSecretRef':{'name':'c'}}}}}",
     NULL, EO_MSG_PATH_DOT_DOT},
    {"s3 key dot-dot inside",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'s3':{'endpoint':'https://s3',"
     "'bucket':'b','key':'team/../x','credentialsSecretRef':{'name':'c'}}}}}",
     NULL, EO_MSG_PATH_DOT_DOT},
    {"s3 key dots in a name",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'s3':{'endpoint':'https://s3',"
     "'bucket':'b','key':'a..b/..c/d../','credentialsSecretRef':{'name':'c'}}}}}",
     NULL, NULL},
    {"pvc subPath dot-dot",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'pvc':{'claimName':'b',"
     "'subPath':'snaps/..'}}}}",
     NULL, EO_MSG_PATH_DOT_DOT},
    {"pvc subPath dot-dot root",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'pvc':{'claimName':'b',"
     "'subPath':'/../etc'}}}}",
     NULL, EO_MSG_PATH_DOT_DOT},
    {"pvc subPath dot",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'pvc':{'claimName':'b',"
     "'subPath':'./snaps/.x'}}}}",
     NULL, NULL},
    {"status-only change",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'pvc':{'claimName':'b'}}},"
     "'status':{'phase':'Started'}}",
     "{'spec':{'clusterRef':{'name':'c'},'destination':{'pvc':{'claimName':'b'}}}}", NULL},
};

static void test_checksum_form(void **state)
{
	(void)state;
	assert_true(eo_snapshot_checksum_well_formed(
	    "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
	assert_false(eo_snapshot_checksum_well_formed(
	    "sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"));
	assert_false(eo_snapshot_checksum_well_formed(
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
	assert_false(eo_snapshot_checksum_well_formed("sha256:0123"));
	assert_false(eo_snapshot_checksum_well_formed(
	    "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0"));
	assert_false(eo_snapshot_checksum_well_formed(NULL));
}

static void test_dot_dot(void **state)
{
	static const struct {
		const char *s;
		bool want;
	} cases[] = {
	    {"..", true},	{"../x", true},	  {"x/..", true},   {"x/../y", true},
	    {"/..", true},	{"x//../", true}, {"", false},	    {".", false},
	    {"...", false},	{"..x", false},	  {"x..", false},   {"a/..b/c", false},
	    {"a/b../c", false}, {"./a", false},	  {"a/./b", false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (eo_path_has_dot_dot(cases[i].s) != cases[i].want)
			fail_msg("\"%s\": %d", cases[i].s, !cases[i].want);
	assert_false(eo_path_has_dot_dot(NULL));
}

static void test_validate_table(void **state)
{
	(void)state;
	tu_validate_cases(eo_snapshot_validate, vcases, sizeof(vcases) / sizeof(vcases[0]));
}

TU_MAIN(test_accessors, test_phases, test_s3_key, test_validate_table, test_checksum_form,
	test_dot_dot)
