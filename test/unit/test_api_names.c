/*
 * Unit tests for api/names: object name helpers, their length limits and the
 * reserved-key and DNS label checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <string.h>

#include "api/names.h"

typedef int (*name1_fn)(char *, size_t, const char *);

struct name_case {
	const char *what;
	name1_fn fn;
	const char *in;
	const char *want;
};

static const struct name_case name_cases[] = {
    {"headless", eo_name_headless_service, "my-etcd", "my-etcd"},
    {"client", eo_name_client_service, "my-etcd", "my-etcd-client"},
    {"pdb", eo_name_pdb, "my-etcd", "my-etcd"},
    {"member prefix", eo_name_member_prefix, "my-etcd", "my-etcd-"},
    {"pvc", eo_name_member_pvc, "my-etcd-7xq2k", "data-my-etcd-7xq2k"},
    {"job", eo_name_snapshot_job, "my-etcd-2026-06-02", "my-etcd-2026-06-02-snapshot"},
    {"server secret", eo_name_server_tls_secret, "c", "c-server-tls"},
    {"op client secret", eo_name_operator_client_tls_secret, "c", "c-operator-client-tls"},
    {"peer secret", eo_name_peer_tls_secret, "c", "c-peer-tls"},
    {"server cert", eo_name_server_certificate, "c", "c-server"},
    {"op client cert", eo_name_operator_client_certificate, "c", "c-operator-client"},
    {"peer cert", eo_name_peer_certificate, "c", "c-peer"},
    {"selector", eo_name_cluster_selector, "my-etcd", "etcd-operator.cozystack.io/cluster=my-etcd"},
};

static void test_name_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(name_cases) / sizeof(name_cases[0]); i++) {
		const struct name_case *c = &name_cases[i];
		char buf[EO_NAME_MAX];
		char tiny[4];

		if (c->fn(buf, sizeof(buf), c->in) != 0 || strcmp(buf, c->want) != 0)
			fail_msg("%s: got \"%s\", want \"%s\"", c->what, buf, c->want);
		/* NULL/empty input and a buffer that is too small fail with "" left behind. */
		if (c->fn(buf, sizeof(buf), NULL) != -1 || buf[0] != '\0')
			fail_msg("%s: NULL input accepted", c->what);
		if (c->fn(buf, sizeof(buf), "") != -1 || buf[0] != '\0')
			fail_msg("%s: empty input accepted", c->what);
		if (c->fn(tiny, sizeof(tiny), c->in) != -1 || tiny[0] != '\0')
			fail_msg("%s: truncated result accepted", c->what);
		if (c->fn(NULL, 0, c->in) != -1)
			fail_msg("%s: NULL buffer accepted", c->what);
	}
}

static void test_exact_fit(void **state)
{
	char buf[15]; /* "my-etcd-client" is 14 characters */

	(void)state;
	assert_int_equal(eo_name_client_service(buf, sizeof(buf), "my-etcd"), 0);
	assert_string_equal(buf, "my-etcd-client");
	assert_int_equal(eo_name_client_service(buf, sizeof(buf) - 1, "my-etcd"), -1);
}

static void test_multi_part_names(void **state)
{
	char buf[EO_NAME_MAX];

	(void)state;
	assert_int_equal(eo_name_cluster_token(buf, sizeof(buf), "default", "my-etcd", "u-1"), 0);
	assert_string_equal(buf, "default-my-etcd-u-1");
	assert_int_equal(eo_name_cluster_token(buf, sizeof(buf), "default", "my-etcd", ""), -1);
	assert_int_equal(eo_name_member_host(buf, sizeof(buf), "my-etcd-7xq2k", "my-etcd", "ns"),
			 0);
	assert_string_equal(buf, "my-etcd-7xq2k.my-etcd.ns.svc");
	assert_int_equal(eo_name_member_host(buf, sizeof(buf), "m", NULL, "ns"), -1);
	assert_int_equal(eo_name_etcd_image(buf, sizeof(buf), NULL, "3.6.11"), 0);
	assert_string_equal(buf, "quay.io/coreos/etcd:v3.6.11");
	assert_int_equal(eo_name_etcd_image(buf, sizeof(buf), "", "3.5.17"), 0);
	assert_string_equal(buf, "quay.io/coreos/etcd:v3.5.17");
	assert_int_equal(eo_name_etcd_image(buf, sizeof(buf), "registry.local/etcd", "3.6.11"), 0);
	assert_string_equal(buf, "registry.local/etcd:v3.6.11");
	assert_int_equal(eo_name_etcd_image(buf, sizeof(buf), NULL, NULL), -1);
}

static void test_constants(void **state)
{
	(void)state;
	assert_string_equal(EO_API_GROUP_VERSION, "etcd-operator.cozystack.io/v1alpha2");
	assert_string_equal(EO_RESOURCE_CLUSTERS, "etcdclusters.etcd-operator.cozystack.io");
	assert_string_equal(EO_RESOURCE_MEMBERS, "etcdmembers.etcd-operator.cozystack.io");
	assert_string_equal(EO_RESOURCE_SNAPSHOTS, "etcdsnapshots.etcd-operator.cozystack.io");
	assert_string_equal(EO_LABEL_CLUSTER, "etcd-operator.cozystack.io/cluster");
	assert_string_equal(EO_LABEL_ROLE, "etcd-operator.cozystack.io/role");
	assert_string_equal(EO_FINALIZER_MEMBER_CLEANUP,
			    "etcd-operator.cozystack.io/member-cleanup");
	assert_string_equal(EO_ANNOTATION_DATA_DIR_SUBPATH,
			    "etcd-operator.cozystack.io/data-dir-subpath");
	assert_string_equal(EO_LEADER_ELECTION_ID, "aa20b3a9.etcd-operator.cozystack.io");
}

static void test_reserved_keys(void **state)
{
	(void)state;
	assert_true(eo_name_key_reserved("etcd-operator.cozystack.io/cluster"));
	assert_true(eo_name_key_reserved("etcd-operator.cozystack.io/anything"));
	assert_false(eo_name_key_reserved("etcd-operator.cozystack.io"));
	assert_false(eo_name_key_reserved("app.kubernetes.io/name"));
	assert_false(eo_name_key_reserved("x.etcd-operator.cozystack.io/a"));
	assert_false(eo_name_key_reserved(NULL));
}

static void test_dns1035(void **state)
{
	struct {
		const char *s;
		size_t max;
		bool ok;
	} cases[] = {
	    {"my-etcd", 56, true},
	    {"a", 56, true},
	    {"a1", 56, true},
	    {"abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-x", 56, true},
	    {"abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-xy", 56, false},
	    {"1abc", 56, false},
	    {"-abc", 56, false},
	    {"abc-", 56, false},
	    {"My-etcd", 56, false},
	    {"my_etcd", 56, false},
	    {"my.etcd", 56, false},
	    {"", 56, false},
	    {NULL, 56, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (eo_name_is_dns1035_label(cases[i].s, cases[i].max) != cases[i].ok)
			fail_msg("\"%s\": want %d", cases[i].s ? cases[i].s : "(null)",
				 cases[i].ok);
}

#define S63                                                                                        \
	"abcdefghij"                                                                               \
	"abcdefghij"                                                                               \
	"abcdefghij"                                                                               \
	"abcdefghij"                                                                               \
	"abcdefghij"                                                                               \
	"abcdefghij"                                                                               \
	"abc"
#define S50                                                                                        \
	"abcdefghij"                                                                               \
	"abcdefghij"                                                                               \
	"abcdefghij"                                                                               \
	"abcdefghij"                                                                               \
	"abcdefghij"
/* A DNS subdomain of 253 characters: four labels of 50 and one of 49, dot-separated. */
#define SUB253                                                                                     \
	S50 "." S50 "." S50 "." S50 "."                                                            \
	    "abcdefghij"                                                                           \
	    "abcdefghij"                                                                           \
	    "abcdefghij"                                                                           \
	    "abcdefghij"                                                                           \
	    "abcdefghi"

static void test_label_key_value(void **state)
{
	struct {
		const char *s;
		bool key, value;
	} cases[] = {
	    {"app", true, true},
	    {"a", true, true},
	    {"A_b.c-D9", true, true},
	    {S63, true, true},
	    {S63 "d", false, false},
	    {"app.kubernetes.io/name", true, false},
	    {"example.com/Team_A", true, false},
	    {SUB253 "/x", true, false},
	    {"x" SUB253 "/x", false, false}, /* prefix of 254 */
	    {"a.b/" S63, true, false},
	    {"a.b/" S63 "d", false, false},
	    {"bad key!", false, false},
	    {"", false, true},
	    {"/name", false, false},
	    {"prefix/", false, false},
	    {"a/b/c", false, false},
	    {"Upper.com/x", false, false}, /* the prefix is lowercase */
	    {"-a", false, false},
	    {"a-", false, false},
	    {"_a", false, false},
	    {"a.", false, false},
	    {"a..b/x", false, false},
	    {"-a.b/x", false, false},
	    {"a-.b/x", false, false},
	    {"a b", false, false},
	    {"caf\xc3\xa9", false, false},
	    {NULL, false, false},
	};

	(void)state;
	assert_int_equal(strlen(SUB253), 253);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *s = cases[i].s ? cases[i].s : "(null)";

		if (eo_name_is_label_key(cases[i].s) != cases[i].key)
			fail_msg("key \"%s\": want %d", s, cases[i].key);
		if (eo_name_is_label_value(cases[i].s) != cases[i].value)
			fail_msg("value \"%s\": want %d", s, cases[i].value);
	}
}

TU_MAIN(test_name_table, test_exact_fit, test_multi_part_names, test_constants, test_reserved_keys,
	test_dns1035, test_label_key_value)
