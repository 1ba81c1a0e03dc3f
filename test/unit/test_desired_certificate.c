/*
 * Unit tests for desired/certificate.c: the cert-manager Certificates of a cluster (golden
 * JSON: SANs, usages, issuer, owner, labels, Secret names), straight from the spec's issuers
 * and from a per-cluster CA (its Certificate and two Issuers), which roles a spec asks for,
 * names that do not fit, and the drift patch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/names.h"
#include "desired/certificate.h"
#include "support/testutil.h"
#include "support/tu_main.h"

#define GOLDEN_DIR	  "test/unit/test_desired_golden/"
#define golden(file, obj) tu_golden(GOLDEN_DIR file, obj)

static const struct eo_desired_opts OPTS = {.cluster_domain = "cozy.local"};

/* A cluster "demo" in "tenant" with the given spec.tls (single quotes for double). */
static json_t *cluster_tls(const char *tls)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdCluster',"
		 "'metadata':{'name':'demo','namespace':'tenant','uid':'c-uid'},"
		 "'spec':{'replicas':3,'version':'3.6.11','additionalMetadata':{'labels':"
		 "{'team':'db'}},'tls':%s}}",
		 tls);
	return tu_jsonq(buf);
}

#define FULL                                                                                       \
	"{'client':{'certManager':{'serverIssuerRef':{'name':'ca','kind':'Issuer'},"               \
	"'operatorClientIssuerRef':{'name':'ops','kind':'ClusterIssuer'}}},"                       \
	"'peer':{'certManager':{'issuerRef':{'name':'peer-ca'}}}}"

static void test_golden_full(void **state)
{
	json_t *c = cluster_tls(FULL);
	json_t *s = eo_desired_certificate(c, EO_CERT_SERVER, false, &OPTS);
	json_t *o = eo_desired_certificate(c, EO_CERT_OPERATOR_CLIENT, false, &OPTS);
	json_t *p = eo_desired_certificate(c, EO_CERT_PEER, false, &OPTS);

	(void)state;
	golden("certificate_server.json", s);
	golden("certificate_operator_client.json", o);
	golden("certificate_peer.json", p);
	/* Straight from the spec's issuers: no CA of the operator's. */
	assert_false(eo_desired_certificate_wanted(c, EO_CERT_CA, false));
	assert_null(eo_desired_certificate(c, EO_CERT_CA, false, &OPTS));
	json_decref(s);
	json_decref(o);
	json_decref(p);
	json_decref(c);
}

static const char *issuer_of(const json_t *cert)
{
	return json_string_value(
	    json_object_get(json_object_get(json_object_get(cert, "spec"), "issuerRef"), "name"));
}

/*
 * A per-cluster CA: the bootstrap Issuer signs the CA Certificate (isCA, its own root), the CA
 * Issuer uses its Secret, and every leaf comes from that Issuer, whatever the spec names.
 */
static void test_golden_per_cluster_ca(void **state)
{
	json_t *c = cluster_tls(FULL);
	json_t *ca = eo_desired_certificate(c, EO_CERT_CA, true, &OPTS);
	json_t *boot = eo_desired_ca_issuer(c, EO_CA_ISSUER_SELFSIGNED);
	json_t *iss = eo_desired_ca_issuer(c, EO_CA_ISSUER_CA);
	json_t *srv = eo_desired_certificate(c, EO_CERT_SERVER, true, &OPTS);

	(void)state;
	assert_true(eo_desired_certificate_wanted(c, EO_CERT_CA, true));
	golden("certificate_cluster_ca.json", ca);
	golden("issuer_cluster_ca_bootstrap.json", boot);
	golden("issuer_cluster_ca.json", iss);
	golden("certificate_server_per_cluster_ca.json", srv);
	for (int r = 0; r < EO_CERT_CA; r++) {
		json_t *leaf = eo_desired_certificate(c, (enum eo_cert_role)r, true, &OPTS);

		assert_string_equal(issuer_of(leaf), "demo-cluster-ca");
		json_decref(leaf);
	}
	assert_string_equal(issuer_of(ca), "demo-cluster-ca-bootstrap");
	json_decref(ca);
	json_decref(boot);
	json_decref(iss);
	json_decref(srv);
	json_decref(c);
}

/* The operator's client certificate names its cluster: another cluster's is another name. */
static void test_operator_client_names_cluster(void **state)
{
	static const char *const specs[] = {
	    FULL, "{'client':{'certManager':{'serverIssuerRef':{'name':'ca'},"
		  "'operatorClientIssuerRef':{'name':'ca'}}}}"};

	(void)state;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		json_t *c = cluster_tls(specs[i]);
		json_t *o = NULL;
		json_t *names = NULL;

		for (int auth = 0; auth < 2; auth++) {
			if (auth)
				json_object_set_new(json_object_get(c, "spec"), "auth",
						    tu_jsonq("{'enabled':true}"));
			o = eo_desired_certificate(c, EO_CERT_OPERATOR_CLIENT, i == 1, &OPTS);
			names = json_object_get(json_object_get(o, "spec"), "dnsNames");
			assert_int_equal(json_array_size(names), 1);
			assert_string_equal(json_string_value(json_array_get(names, 0)),
					    "etcd-operator.demo.tenant");
			/* With auth the gateway refuses a CommonName. */
			assert_int_equal(
			    json_object_get(json_object_get(o, "spec"), "commonName") == NULL,
			    auth);
			json_decref(o);
		}
		json_object_set_new(json_object_get(c, "metadata"), "name", json_string("other"));
		o = eo_desired_certificate(c, EO_CERT_OPERATOR_CLIENT, i == 1, &OPTS);
		names = json_object_get(json_object_get(o, "spec"), "dnsNames");
		assert_string_equal(json_string_value(json_array_get(names, 0)),
				    "etcd-operator.other.tenant");
		json_decref(o);
		json_decref(c);
	}
}

/*
 * The contract with the Pod builder and the operator's etcd client: each Certificate's
 * Secret is the one eo_cluster_*_secret_name resolves for the cluster, which is what the
 * member Pods mount and the operator reads.
 */
static void test_secret_names_agree(void **state)
{
	json_t *c = cluster_tls(FULL);
	char want[EO_NAME_MAX];
	int (*const resolve[EO_CERT_ROLE_COUNT_])(const json_t *, char *, size_t) = {
	    [EO_CERT_SERVER] = eo_cluster_server_secret_name,
	    [EO_CERT_OPERATOR_CLIENT] = eo_cluster_operator_client_secret_name,
	    [EO_CERT_PEER] = eo_cluster_peer_secret_name,
	};

	(void)state;
	for (int r = 0; r < EO_CERT_ROLE_COUNT_; r++) {
		json_t *cert = eo_desired_certificate(c, (enum eo_cert_role)r, true, &OPTS);

		assert_non_null(cert);
		if (r == EO_CERT_CA)
			snprintf(want, sizeof(want), "demo-cluster-ca"); /* the CA Issuer's */
		else
			assert_int_equal(resolve[r](c, want, sizeof(want)), 0);
		assert_string_equal(
		    json_string_value(json_object_get(json_object_get(cert, "spec"), "secretName")),
		    want);
		json_decref(cert);
	}
	json_decref(c);
}

/* Which roles each spec asks for. */
static void test_wanted(void **state)
{
	static const struct {
		const char *tls;
		bool server, opclient, peer;
	} cases[] = {
	    {FULL, true, true, true},
	    {"{'client':{'certManager':{'serverIssuerRef':{'name':'ca'}}}}", true, false, false},
	    {"{'peer':{'certManager':{'issuerRef':{'name':'ca'}}}}", false, false, true},
	    {"{'client':{'serverSecretRef':{'name':'s'}},'peer':{'certManager':{'issuerRef':{'name'"
	     ":"
	     "'ca'}}}}",
	     false, false, true},
	    {"{'client':{'serverSecretRef':{'name':'s'},'operatorClientSecretRef':{'name':'o'}}}",
	     false, false, false},
	    {"{}", false, false, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *c = cluster_tls(cases[i].tls);
		json_t *o = NULL;

		for (int pcc = 0; pcc < 2; pcc++) {
			assert_int_equal(eo_desired_certificate_wanted(c, EO_CERT_SERVER, pcc),
					 cases[i].server);
			assert_int_equal(
			    eo_desired_certificate_wanted(c, EO_CERT_OPERATOR_CLIENT, pcc),
			    cases[i].opclient);
			assert_int_equal(eo_desired_certificate_wanted(c, EO_CERT_PEER, pcc),
					 cases[i].peer);
			/* The CA: only per cluster, and only with a plane in cert-manager mode. */
			assert_int_equal(eo_desired_certificate_wanted(c, EO_CERT_CA, pcc),
					 pcc && (cases[i].server || cases[i].peer));
		}
		/* A role that is not wanted has no Certificate. */
		o = eo_desired_certificate(c, EO_CERT_OPERATOR_CLIENT, false, &OPTS);
		assert_int_equal(o != NULL, cases[i].opclient);
		json_decref(o);
		json_decref(c);
	}
}

static void test_issuer_default_kind(void **state)
{
	json_t *c = cluster_tls("{'peer':{'certManager':{'issuerRef':{'name':'peer-ca'}}}}");
	const char *name = NULL, *kind = NULL;
	char buf[EO_NAME_MAX], small[8];

	(void)state;
	assert_int_equal(
	    eo_desired_certificate_issuer(c, EO_CERT_PEER, false, buf, sizeof(buf), &name, &kind),
	    0);
	assert_string_equal(name, "peer-ca");
	assert_string_equal(kind, "Issuer");
	assert_int_equal(
	    eo_desired_certificate_issuer(c, EO_CERT_SERVER, false, buf, sizeof(buf), &name, &kind),
	    -1);
	/* Per cluster: the operator's Issuers, the CA's for the leaves, the bootstrap's for it. */
	assert_int_equal(
	    eo_desired_certificate_issuer(c, EO_CERT_PEER, true, buf, sizeof(buf), &name, &kind),
	    0);
	assert_string_equal(name, "demo-cluster-ca");
	assert_string_equal(kind, "Issuer");
	assert_int_equal(
	    eo_desired_certificate_issuer(c, EO_CERT_CA, true, buf, sizeof(buf), &name, &kind), 0);
	assert_string_equal(name, "demo-cluster-ca-bootstrap");
	assert_int_equal(
	    eo_desired_certificate_issuer(c, EO_CERT_SERVER, true, buf, sizeof(buf), &name, &kind),
	    -1);
	assert_int_equal(eo_desired_certificate_issuer(c, EO_CERT_PEER, true, small, sizeof(small),
						       &name, &kind),
			 -1);
	json_decref(c);
}

static void test_names(void **state)
{
	char buf[EO_NAME_MAX], small[9], big[300];

	(void)state;
	assert_int_equal(eo_desired_certificate_name(buf, sizeof(buf), "demo", EO_CERT_SERVER), 0);
	assert_string_equal(buf, "demo-server");
	assert_int_equal(
	    eo_desired_certificate_name(buf, sizeof(buf), "demo", EO_CERT_OPERATOR_CLIENT), 0);
	assert_string_equal(buf, "demo-operator-client");
	assert_int_equal(eo_desired_certificate_name(buf, sizeof(buf), "demo", EO_CERT_PEER), 0);
	assert_string_equal(buf, "demo-peer");
	assert_int_equal(eo_desired_certificate_name(buf, sizeof(buf), "demo", EO_CERT_CA), 0);
	assert_string_equal(buf, "demo-cluster-ca");
	assert_int_equal(
	    eo_desired_ca_issuer_name(buf, sizeof(buf), "demo", EO_CA_ISSUER_SELFSIGNED), 0);
	assert_string_equal(buf, "demo-cluster-ca-bootstrap");
	assert_int_equal(eo_desired_ca_issuer_name(buf, sizeof(buf), "demo", EO_CA_ISSUER_CA), 0);
	assert_string_equal(buf, "demo-cluster-ca");
	assert_int_equal(eo_desired_ca_issuer_name(small, sizeof(small), "demo", EO_CA_ISSUER_CA),
			 -1);
	assert_int_equal(eo_desired_ca_issuer_name(buf, sizeof(buf), "d", EO_CA_ISSUER_COUNT_), -1);
	/* Too small a buffer, a name over 253 characters, no cluster, no such role. */
	assert_int_equal(eo_desired_certificate_name(small, sizeof(small), "demo", EO_CERT_PEER),
			 -1);
	assert_string_equal(small, "");
	memset(big, 'a', 250);
	big[250] = '\0';
	assert_int_equal(eo_desired_certificate_name(buf, sizeof(buf), big, EO_CERT_SERVER), -1);
	assert_int_equal(eo_desired_certificate_name(buf, sizeof(buf), "", EO_CERT_SERVER), -1);
	assert_int_equal(eo_desired_certificate_name(buf, sizeof(buf), "d", EO_CERT_ROLE_COUNT_),
			 -1);
	assert_string_equal(eo_cert_role_name(EO_CERT_ROLE_COUNT_), "unknown");
}

/* No metadata: no object. */
static void test_missing_metadata(void **state)
{
	json_t *c = cluster_tls(FULL);

	(void)state;
	json_object_del(json_object_get(c, "metadata"), "uid");
	assert_null(eo_desired_certificate(c, EO_CERT_SERVER, false, &OPTS));
	assert_null(eo_desired_certificate(c, EO_CERT_CA, true, &OPTS));
	assert_null(eo_desired_ca_issuer(c, EO_CA_ISSUER_CA));
	json_decref(c);
}

static void test_patch(void **state)
{
	json_t *c = cluster_tls(FULL);
	json_t *want = eo_desired_certificate(c, EO_CERT_SERVER, false, &OPTS);
	json_t *have = json_deep_copy(want), *patch = NULL, *expect = NULL;

	(void)state;
	/* What cert-manager adds (status, its own annotations) is not drift. */
	json_object_set_new(have, "status", tu_jsonq("{'conditions':[{'type':'Ready'}]}"));
	json_object_set_new(json_object_get(have, "metadata"), "annotations",
			    tu_jsonq("{'cert-manager.io/x':'y'}"));
	assert_null(eo_desired_certificate_patch(want, have));

	/* A user who edits the SANs and drops a label gets both back, and only those. */
	json_object_set_new(json_object_get(have, "spec"), "dnsNames", tu_jsonq("['x']"));
	json_object_del(json_object_get(json_object_get(have, "metadata"), "labels"), "team");
	patch = eo_desired_certificate_patch(want, have);
	assert_non_null(patch);
	expect = json_pack("{s:{s:O}, s:{s:{s:s}}}", "spec", "dnsNames",
			   json_object_get(json_object_get(want, "spec"), "dnsNames"), "metadata",
			   "labels", "team", "db");
	tu_assert_json_equal(patch, expect, "patch");
	json_decref(expect);
	json_decref(patch);
	json_decref(have);
	json_decref(want);
	json_decref(c);
}

/*
 * A running cluster of an older operator: its server Certificate names the spec's issuer and
 * its operator client one has CN etcd-operator only. The operator's patch in Issuer mode keeps
 * the issuer (no CA swapped under running members) and only adds the name of the cluster.
 */
static void test_patch_keeps_issuer_of_old_cluster(void **state)
{
	json_t *c = cluster_tls(FULL);
	json_t *want = eo_desired_certificate(c, EO_CERT_SERVER, false, &OPTS);
	json_t *have = json_deep_copy(want);
	json_t *owant = eo_desired_certificate(c, EO_CERT_OPERATOR_CLIENT, false, &OPTS);
	json_t *ohave = json_deep_copy(owant), *patch = NULL;

	(void)state;
	assert_null(eo_desired_certificate_patch(want, have));
	json_object_del(json_object_get(ohave, "spec"), "dnsNames");
	patch = eo_desired_certificate_patch(owant, ohave);
	assert_non_null(patch);
	assert_null(json_object_get(json_object_get(patch, "spec"), "issuerRef"));
	assert_non_null(json_object_get(json_object_get(patch, "spec"), "dnsNames"));
	json_decref(patch);
	json_decref(ohave);
	json_decref(owant);
	json_decref(have);
	json_decref(want);
	json_decref(c);
}

TU_MAIN(test_golden_full, test_secret_names_agree, test_wanted, test_issuer_default_kind,
	test_names, test_missing_metadata, test_patch, test_golden_per_cluster_ca,
	test_operator_client_names_cluster, test_patch_keeps_issuer_of_old_cluster)
