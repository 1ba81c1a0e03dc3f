/*
 * Unit tests for etcd/tlscheck (the checks of TLS material, table-driven over the fixtures in
 * test/unit/test_tls_data/, made by its gen.sh) and controller/tlsload (the Secrets of a
 * cluster read through a fake apiserver: missing Secret, missing keys, bad material, the good
 * case with the operator's client material kept in memory).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "controller/tlsload.h"
#include "core/base64.h"
#include "etcd/tlscheck.h"
#include "kube/client.h"
#include "kube/config.h"
#include "support/fake_apiserver.h"
#include "support/testutil.h"
#include "support/tu_main.h"

#define DATA "test/unit/test_tls_data/"

/* Fixed instants (the fixtures are valid from November 2026 for ten years). */
#define NOW_VALID ((time_t)1811808000) /* 2027-06-01 */
#define NOW_LATE  ((time_t)2208988800) /* 2040-01-01 */
#define NOW_EARLY ((time_t)1577836800) /* 2020-01-01 */

static char *slurp(const char *name, size_t *len)
{
	char path[256];
	FILE *f = NULL;
	char *buf = NULL;
	long n;

	snprintf(path, sizeof(path), DATA "%s", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

struct pair_case {
	const char *what;
	enum eo_tls_role role;
	const char *cert, *key, *ca; /* file names; ca NULL: no chain check */
	time_t now;
	const char *want; /* NULL: accepted; else a part of the message */
};

static const struct pair_case PAIRS[] = {
    {"server", EO_TLS_ROLE_SERVER, "server.pem", "server-key.pem", "ca.pem", NOW_VALID, NULL},
    {"peer", EO_TLS_ROLE_PEER, "server.pem", "server-key.pem", "ca.pem", NOW_VALID, NULL},
    {"client", EO_TLS_ROLE_CLIENT, "client.pem", "client-key.pem", "ca.pem", NOW_VALID, NULL},
    {"no EKU allows all", EO_TLS_ROLE_SERVER, "noeku.pem", "noeku-key.pem", "ca.pem", NOW_VALID,
     NULL},
    {"server without clientAuth", EO_TLS_ROLE_SERVER, "server-noclient.pem",
     "server-noclient-key.pem", "ca.pem", NOW_VALID,
     "the server certificate lacks the clientAuth extended key usage"},
    {"peer without clientAuth", EO_TLS_ROLE_PEER, "server-noclient.pem", "server-noclient-key.pem",
     "ca.pem", NOW_VALID, "peer certificate lacks the clientAuth"},
    {"client cert as server", EO_TLS_ROLE_SERVER, "client.pem", "client-key.pem", "ca.pem",
     NOW_VALID, "lacks the serverAuth extended key usage"},
    {"expired", EO_TLS_ROLE_SERVER, "server.pem", "server-key.pem", "ca.pem", NOW_LATE,
     "the server certificate expired on "},
    {"not yet valid", EO_TLS_ROLE_CLIENT, "client.pem", "client-key.pem", "ca.pem", NOW_EARLY,
     "the client certificate is not valid before "},
    {"wrong key", EO_TLS_ROLE_SERVER, "server.pem", "client-key.pem", "ca.pem", NOW_VALID,
     "tls.key is not the private key of the certificate in tls.crt"},
    {"wrong CA", EO_TLS_ROLE_CLIENT, "client-other.pem", "client-other-key.pem", "ca.pem",
     NOW_VALID, "the client certificate does not chain to the CA bundle"},
    {"wrong CA, no chain check", EO_TLS_ROLE_CLIENT, "client-other.pem", "client-other-key.pem",
     NULL, NOW_VALID, NULL},
    {"key as certificate", EO_TLS_ROLE_SERVER, "server-key.pem", "server-key.pem", "ca.pem",
     NOW_VALID, "tls.crt holds no PEM certificate"},
    {"certificate as key", EO_TLS_ROLE_SERVER, "server.pem", "server.pem", "ca.pem", NOW_VALID,
     "tls.key holds no unencrypted PEM private key"},
};

static void test_pairs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(PAIRS) / sizeof(PAIRS[0]); i++) {
		const struct pair_case *t = &PAIRS[i];
		size_t cl = 0, kl = 0, al = 0;
		char *cert = slurp(t->cert, &cl), *key = slurp(t->key, &kl);
		char *ca = t->ca ? slurp(t->ca, &al) : NULL;
		char msg[EO_TLSCHECK_MSG_MAX] = "";
		int rc =
		    eo_tls_check_pair(t->role, cert, cl, key, kl, ca, al, t->now, msg, sizeof(msg));

		if (t->want == NULL && rc != 0)
			fail_msg("%s: refused: %s", t->what, msg);
		if (t->want != NULL && (rc == 0 || strstr(msg, t->want) == NULL))
			fail_msg("%s: rc %d, message '%s', want '%s'", t->what, rc, msg, t->want);
		/* Never any key material in a message. */
		assert_null(strstr(msg, "PRIVATE KEY"));
		free(cert);
		free(key);
		free(ca);
	}
}

static void test_ca(void **state)
{
	size_t n = 0;
	char *ca = slurp("ca.pem", &n), *key = slurp("ca-key.pem", &n);
	char msg[EO_TLSCHECK_MSG_MAX];

	(void)state;
	assert_int_equal(eo_tls_check_ca(ca, strlen(ca), msg, sizeof(msg)), 0);
	assert_int_equal(eo_tls_check_ca(key, strlen(key), msg, sizeof(msg)), -1);
	assert_string_equal(msg, "ca.crt holds no PEM certificate");
	assert_int_equal(eo_tls_check_ca(NULL, 0, msg, sizeof(msg)), -1);
	assert_int_equal(eo_tls_check_pair(EO_TLS_ROLE_SERVER, NULL, 0, NULL, 0, NULL, 0, NOW_VALID,
					   msg, sizeof(msg)),
			 -1);
	free(ca);
	free(key);
}

/* --- tlsload through a fake apiserver --- */

/* The Secrets the fake serves: name -> data object; GETs counted. */
struct api {
	pthread_mutex_t mu;
	json_t *secrets;
	int gets, lists;
};

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct api *a = ud;
	const char *prefix = "/api/v1/namespaces/ns/secrets/";
	json_t *data = NULL;

	pthread_mutex_lock(&a->mu);
	if (strcmp(rq->method, "GET") == 0 && strncmp(rq->path, prefix, strlen(prefix)) == 0) {
		a->gets++;
		data = json_object_get(a->secrets, rq->path + strlen(prefix));
		if (data == NULL) {
			rs->status = 404;
			rs->body = tu_status_body(404, "NotFound", "secrets not found");
		} else {
			/* The resourceVersion moves with the data, as the apiserver's does. */
			char *text = json_dumps(data, JSON_COMPACT | JSON_SORT_KEYS), rv[24];
			unsigned long long h = 1469598103934665603ULL;
			json_t *s = NULL;

			for (const char *c = text; c != NULL && *c; c++)
				h = (h ^ (unsigned char)*c) * 1099511628211ULL;
			free(text);
			snprintf(rv, sizeof(rv), "%llu", h % 1000000007ULL);
			s = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:O}", "apiVersion", "v1",
				      "kind", "Secret", "metadata", "name",
				      rq->path + strlen(prefix), "namespace", "ns",
				      "resourceVersion", rv, "data", data);
			rs->body = json_dumps(s, JSON_COMPACT);
			json_decref(s);
		}
	} else {
		a->lists++; /* anything else (a list or a watch) is a failure of the test */
		rs->status = 400;
	}
	pthread_mutex_unlock(&a->mu);
}

/* Secret data from fixture files: keys "tls.crt", "tls.key", "ca.crt" (NULL: left out). */
static json_t *secret_data(const char *crt, const char *key, const char *ca)
{
	const char *keys[] = {"tls.crt", "tls.key", "ca.crt"};
	const char *files[] = {crt, key, ca};
	json_t *d = json_object();

	for (int i = 0; i < 3; i++) {
		size_t n = 0;
		char *pem = NULL, *b64 = NULL;

		if (files[i] == NULL)
			continue;
		pem = slurp(files[i], &n);
		b64 = eo_base64_encode(pem, n);
		json_object_set_new(d, keys[i], json_string(b64));
		free(pem);
		free(b64);
	}
	return d;
}

struct rig {
	struct api api;
	eo_kube_fake *fake;
	eo_kube_config *cfg;
	eo_kube_client *kc;
};

static void rig_start(struct rig *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->api.mu, NULL);
	r->api.secrets = json_object();
	r->fake = eo_kube_fake_start(handler, &r->api);
	assert_non_null(r->fake);
	assert_int_equal(eo_kube_config_new(eo_kube_fake_url(r->fake), NULL, NULL, &r->cfg, NULL),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(r->cfg, NULL, &r->kc, NULL), EO_KUBE_OK);
}

static void rig_stop(struct rig *r)
{
	eo_kube_client_free(r->kc); /* frees the config too */
	eo_kube_fake_stop(r->fake);
	json_decref(r->api.secrets);
	pthread_mutex_destroy(&r->api.mu);
}

static json_t *cluster(const char *tls)
{
	json_t *c = tu_jsonq("{'apiVersion':'etcd-operator.cozystack.io/v1alpha2',"
			     "'kind':'EtcdCluster','metadata':{'name':'demo','namespace':'ns',"
			     "'uid':'u1'},'spec':{'version':'3.6.11'}}");

	if (tls != NULL)
		json_object_set_new(json_object_get(c, "spec"), "tls", tu_jsonq(tls));
	return c;
}

#define MTLS_PEER                                                                                  \
	"{'client':{'serverSecretRef':{'name':'srv'},'operatorClientSecretRef':{'name':'op'}},"    \
	"'peer':{'secretRef':{'name':'peer'}}}"

struct load_case {
	const char *what;
	const char *tls; /* spec.tls, NULL: plaintext */
	/* the Secrets: srv, op, peer data (file triples; NULL crt: no such Secret) */
	const char *srv[3], *op[3], *peer[3];
	enum eo_tlsload_result want;
	const char *reason;  /* PROBLEM: the reason */
	const char *message; /* PROBLEM: part of the message */
	int gets;	     /* Secrets read: all the spec uses, up to a missing one */
};

static const struct load_case LOADS[] = {
    {"plaintext reads nothing", NULL, {NULL}, {NULL}, {NULL}, EO_TLSLOAD_OK, NULL, NULL, 0},
    {"full mTLS and peer",
     MTLS_PEER,
     {"server.pem", "server-key.pem", "ca.pem"},
     {"client.pem", "client-key.pem", NULL},
     {"server.pem", "server-key.pem", "ca.pem"},
     EO_TLSLOAD_OK,
     NULL,
     NULL,
     3},
    {"server Secret missing",
     MTLS_PEER,
     {NULL},
     {"client.pem", "client-key.pem", NULL},
     {"server.pem", "server-key.pem", "ca.pem"},
     EO_TLSLOAD_PROBLEM,
     EO_REASON_TLS_SECRET_NOT_FOUND,
     "the server Secret ns/srv does not exist",
     1},
    {"operator client Secret missing",
     MTLS_PEER,
     {"server.pem", "server-key.pem", "ca.pem"},
     {NULL},
     {"server.pem", "server-key.pem", "ca.pem"},
     EO_TLSLOAD_PROBLEM,
     EO_REASON_TLS_SECRET_NOT_FOUND,
     "the operator client Secret ns/op does not exist",
     2},
    {"server Secret without ca.crt",
     MTLS_PEER,
     {"server.pem", "server-key.pem", NULL},
     {"client.pem", "client-key.pem", NULL},
     {"server.pem", "server-key.pem", "ca.pem"},
     EO_TLSLOAD_PROBLEM,
     EO_REASON_TLS_SECRET_INVALID,
     "the server Secret ns/srv has no ca.crt",
     3},
    {"peer Secret without tls.key",
     MTLS_PEER,
     {"server.pem", "server-key.pem", "ca.pem"},
     {"client.pem", "client-key.pem", NULL},
     {"server.pem", NULL, "ca.pem"},
     EO_TLSLOAD_PROBLEM,
     EO_REASON_TLS_SECRET_INVALID,
     "the peer Secret ns/peer has no tls.key",
     3},
    {"server certificate without clientAuth",
     MTLS_PEER,
     {"server-noclient.pem", "server-noclient-key.pem", "ca.pem"},
     {"client.pem", "client-key.pem", NULL},
     {"server.pem", "server-key.pem", "ca.pem"},
     EO_TLSLOAD_PROBLEM,
     EO_REASON_TLS_SECRET_INVALID,
     "the server Secret ns/srv: the server certificate lacks the clientAuth",
     3},
    {"operator client from another CA",
     MTLS_PEER,
     {"server.pem", "server-key.pem", "ca.pem"},
     {"client-other.pem", "client-other-key.pem", NULL},
     {"server.pem", "server-key.pem", "ca.pem"},
     EO_TLSLOAD_PROBLEM,
     EO_REASON_TLS_SECRET_INVALID,
     "the operator client Secret ns/op: the client certificate does not chain",
     3},
    {"server-TLS only reads one Secret",
     "{'client':{'serverSecretRef':{'name':'srv'}}}",
     {"server.pem", "server-key.pem", "ca.pem"},
     {NULL},
     {NULL},
     EO_TLSLOAD_OK,
     NULL,
     NULL,
     1},
    {"peer only",
     "{'peer':{'secretRef':{'name':'peer'}}}",
     {NULL},
     {NULL},
     {"server.pem", "server-key.pem", "ca.pem"},
     EO_TLSLOAD_OK,
     NULL,
     NULL,
     1},
};

static void test_load(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(LOADS) / sizeof(LOADS[0]); i++) {
		const struct load_case *t = &LOADS[i];
		struct eo_tls_material m;
		struct eo_tlsload_problem p;
		struct rig r;
		json_t *c = cluster(t->tls);
		enum eo_tlsload_result res;

		rig_start(&r);
		if (t->srv[0] != NULL)
			json_object_set_new(r.api.secrets, "srv",
					    secret_data(t->srv[0], t->srv[1], t->srv[2]));
		if (t->op[0] != NULL)
			json_object_set_new(r.api.secrets, "op",
					    secret_data(t->op[0], t->op[1], t->op[2]));
		if (t->peer[0] != NULL)
			json_object_set_new(r.api.secrets, "peer",
					    secret_data(t->peer[0], t->peer[1], t->peer[2]));
		res = eo_tlsload(r.kc, c, NOW_VALID, &m, &p, NULL);
		if (res != t->want)
			fail_msg("%s: result %d, want %d (%s)", t->what, res, t->want, p.message);
		if (t->want == EO_TLSLOAD_PROBLEM) {
			assert_string_equal(p.reason, t->reason);
			if (strstr(p.message, t->message) == NULL)
				fail_msg("%s: message '%s', want '%s'", t->what, p.message,
					 t->message);
			assert_false(m.client_tls);
			assert_null(m.key);
		}
		if (r.api.gets != t->gets || r.api.lists != 0)
			fail_msg("%s: %d GETs and %d other requests, want %d GETs", t->what,
				 r.api.gets, r.api.lists, t->gets);
		eo_tls_material_clear(&m);
		rig_stop(&r);
		json_decref(c);
	}
}

/* The good case keeps exactly what the etcd client needs, in memory. */
static void test_load_material(void **state)
{
	struct eo_tls_material m;
	struct rig r;
	json_t *c = cluster(MTLS_PEER);
	size_t n = 0;
	char *ca = slurp("ca.pem", &n), *crt = slurp("client.pem", &n);
	char *key = slurp("client-key.pem", &n);

	(void)state;
	rig_start(&r);
	json_object_set_new(r.api.secrets, "srv",
			    secret_data("server.pem", "server-key.pem", "ca.pem"));
	json_object_set_new(r.api.secrets, "op", secret_data("client.pem", "client-key.pem", NULL));
	json_object_set_new(r.api.secrets, "peer",
			    secret_data("server.pem", "server-key.pem", "ca.pem"));
	assert_int_equal(eo_tlsload(r.kc, c, NOW_VALID, &m, NULL, NULL), EO_TLSLOAD_OK);
	assert_true(m.client_tls);
	assert_int_equal(m.ca_len, strlen(ca));
	assert_memory_equal(m.ca, ca, m.ca_len);
	assert_int_equal(m.cert_len, strlen(crt));
	assert_memory_equal(m.cert, crt, m.cert_len);
	assert_int_equal(m.key_len, strlen(key));
	assert_memory_equal(m.key, key, m.key_len);
	eo_tls_material_clear(&m);
	assert_null(m.key);
	assert_int_equal(m.key_len, 0);
	/* Expired by the time given: refused. */
	assert_int_equal(eo_tlsload(r.kc, c, NOW_LATE, &m, NULL, NULL), EO_TLSLOAD_PROBLEM);
	rig_stop(&r);
	json_decref(c);
	free(ca);
	free(crt);
	free(key);
}

/* Replaces data[key] of Secret name with the concatenation of the files (a CA bundle). */
static void set_bundle(struct rig *r, const char *name, const char *key, const char *f1,
		       const char *f2)
{
	size_t n1 = 0, n2 = 0;
	char *a = slurp(f1, &n1), *b = slurp(f2, &n2), *both = malloc(n1 + n2 + 1), *b64 = NULL;

	assert_non_null(both);
	memcpy(both, a, n1);
	memcpy(both + n1, b, n2);
	b64 = eo_base64_encode(both, n1 + n2);
	json_object_set_new(json_object_get(r->api.secrets, name), key, json_string(b64));
	free(a);
	free(b);
	free(both);
	free(b64);
}

/* The digest of the CA bundles etcd trusts (tlsload.h): what moves it and what does not. */
static void test_load_ca_digest(void **state)
{
	struct eo_tls_material m;
	struct rig r;
	json_t *peer_only = cluster("{'peer':{'secretRef':{'name':'peer'}}}");
	json_t *server_only = cluster("{'client':{'serverSecretRef':{'name':'srv'}}}");
	json_t *full = cluster(MTLS_PEER), *plain = cluster(NULL);
	char first[65], bundle[65];

	(void)state;
	rig_start(&r);
	json_object_set_new(r.api.secrets, "srv",
			    secret_data("server.pem", "server-key.pem", "ca.pem"));
	json_object_set_new(r.api.secrets, "op", secret_data("client.pem", "client-key.pem", NULL));
	json_object_set_new(r.api.secrets, "peer",
			    secret_data("server.pem", "server-key.pem", "ca.pem"));
	assert_int_equal(eo_tlsload(r.kc, peer_only, NOW_VALID, &m, NULL, NULL), EO_TLSLOAD_OK);
	assert_int_equal(strlen(m.ca_bundle_digest), 64);
	assert_true(strspn(m.ca_bundle_digest, "0123456789abcdef") == 64);
	memcpy(first, m.ca_bundle_digest, sizeof(first));
	eo_tls_material_clear(&m);

	/* A leaf rotated under the same CA (etcd reloads it itself): the same digest. */
	json_object_set_new(r.api.secrets, "peer",
			    secret_data("noeku.pem", "noeku-key.pem", "ca.pem"));
	assert_int_equal(eo_tlsload(r.kc, peer_only, NOW_VALID, &m, NULL, NULL), EO_TLSLOAD_OK);
	assert_string_equal(m.ca_bundle_digest, first);
	eo_tls_material_clear(&m);

	/* A second CA added to the bundle: another digest. */
	set_bundle(&r, "peer", "ca.crt", "ca.pem", "other-ca.pem");
	assert_int_equal(eo_tlsload(r.kc, peer_only, NOW_VALID, &m, NULL, NULL), EO_TLSLOAD_OK);
	assert_int_equal(strlen(m.ca_bundle_digest), 64);
	assert_string_not_equal(m.ca_bundle_digest, first);
	memcpy(bundle, m.ca_bundle_digest, sizeof(bundle));
	eo_tls_material_clear(&m);

	/* Client mTLS adds the server Secret's bundle (etcd's --trusted-ca-file). */
	assert_int_equal(eo_tlsload(r.kc, full, NOW_VALID, &m, NULL, NULL), EO_TLSLOAD_OK);
	assert_int_equal(strlen(m.ca_bundle_digest), 64);
	assert_string_not_equal(m.ca_bundle_digest, bundle);
	eo_tls_material_clear(&m);

	/* Server TLS alone gives etcd no CA to trust, plaintext none at all. */
	assert_int_equal(eo_tlsload(r.kc, server_only, NOW_VALID, &m, NULL, NULL), EO_TLSLOAD_OK);
	assert_string_equal(m.ca_bundle_digest, "");
	eo_tls_material_clear(&m);
	assert_int_equal(eo_tlsload(r.kc, plain, NOW_VALID, &m, NULL, NULL), EO_TLSLOAD_OK);
	assert_string_equal(m.ca_bundle_digest, "");
	eo_tls_material_clear(&m);
	rig_stop(&r);
	json_decref(peer_only);
	json_decref(server_only);
	json_decref(full);
	json_decref(plain);
}

/*
 * The cache: a Secret whose resourceVersion did not move is not checked again (the GETs still
 * happen), a changed one is, and a cached check expires so that validity periods are seen.
 * A problem is flagged as repeated from its second load on, until it changes or goes away.
 */
static void test_load_cache(void **state)
{
	struct eo_tls_cache *cache = eo_tls_cache_new(2);
	struct eo_tls_material m, m2;
	struct eo_tlsload_problem p;
	struct rig r;
	json_t *c = cluster(MTLS_PEER), *c2 = cluster(MTLS_PEER), *c3 = cluster(MTLS_PEER);
	unsigned long hits = 0, misses = 0;

	(void)state;
	assert_non_null(cache);
	json_object_set_new(json_object_get(c2, "metadata"), "uid", json_string("u2"));
	json_object_set_new(json_object_get(c3, "metadata"), "uid", json_string("u3"));
	rig_start(&r);
	json_object_set_new(r.api.secrets, "srv",
			    secret_data("server.pem", "server-key.pem", "ca.pem"));
	json_object_set_new(r.api.secrets, "op", secret_data("client.pem", "client-key.pem", NULL));
	json_object_set_new(r.api.secrets, "peer",
			    secret_data("server.pem", "server-key.pem", "ca.pem"));
	assert_int_equal(eo_tlsload_cached(cache, r.kc, c, NOW_VALID, &m, &p, NULL), EO_TLSLOAD_OK);
	assert_int_equal(eo_tlsload_cached(cache, r.kc, c, NOW_VALID + 30, &m2, &p, NULL),
			 EO_TLSLOAD_OK);
	eo_tls_cache_stats(cache, &hits, &misses);
	assert_int_equal(hits, 1);
	assert_int_equal(misses, 1);
	assert_int_equal(r.api.gets, 6);
	/* A hit decodes the same bytes again (the cache keeps none). */
	assert_true(m2.client_tls);
	assert_ptr_not_equal(m.key, m2.key);
	assert_int_equal(m.key_len, m2.key_len);
	assert_memory_equal(m.key, m2.key, m.key_len);
	assert_memory_equal(m.ca, m2.ca, m.ca_len);
	assert_memory_equal(m.cert, m2.cert, m.cert_len);
	assert_string_equal(m.ca_bundle_digest, m2.ca_bundle_digest);
	eo_tls_material_clear(&m2);

	/* Older than EO_TLS_RECHECK_S: checked again, and the clock moved past the expiry. */
	assert_int_equal(eo_tlsload_cached(cache, r.kc, c, NOW_LATE, &m2, &p, NULL),
			 EO_TLSLOAD_PROBLEM);
	assert_non_null(strstr(p.message, "expired"));
	assert_false(p.repeated);
	assert_null(m2.key);
	assert_int_equal(eo_tlsload_cached(cache, r.kc, c, NOW_LATE + 1, &m2, &p, NULL),
			 EO_TLSLOAD_PROBLEM);
	assert_true(p.repeated);
	eo_tls_cache_stats(cache, &hits, &misses);
	assert_int_equal(hits, 2);
	assert_int_equal(misses, 2);

	/* A changed Secret (another resourceVersion) is checked at once, however young. */
	assert_int_equal(eo_tlsload_cached(cache, r.kc, c, NOW_VALID, &m2, &p, NULL),
			 EO_TLSLOAD_OK);
	eo_tls_material_clear(&m2);
	json_object_set_new(r.api.secrets, "op",
			    secret_data("client-other.pem", "client-other-key.pem", NULL));
	assert_int_equal(eo_tlsload_cached(cache, r.kc, c, NOW_VALID + 1, &m2, &p, NULL),
			 EO_TLSLOAD_PROBLEM);
	assert_false(p.repeated);
	assert_non_null(strstr(p.message, "does not chain"));
	assert_int_equal(eo_tlsload_cached(cache, r.kc, c, NOW_VALID + 2, &m2, &p, NULL),
			 EO_TLSLOAD_PROBLEM);
	assert_true(p.repeated);
	/* A missing Secret is a problem of its own, repeated from the second load on. */
	json_object_del(r.api.secrets, "peer");
	json_object_set_new(r.api.secrets, "op", secret_data("client.pem", "client-key.pem", NULL));
	assert_int_equal(eo_tlsload_cached(cache, r.kc, c, NOW_VALID + 3, &m2, &p, NULL),
			 EO_TLSLOAD_PROBLEM);
	assert_false(p.repeated);
	assert_int_equal(eo_tlsload_cached(cache, r.kc, c, NOW_VALID + 4, &m2, &p, NULL),
			 EO_TLSLOAD_PROBLEM);
	assert_true(p.repeated);
	json_object_set_new(r.api.secrets, "peer",
			    secret_data("server.pem", "server-key.pem", "ca.pem"));
	assert_int_equal(eo_tlsload_cached(cache, r.kc, c, NOW_VALID + 5, &m2, &p, NULL),
			 EO_TLSLOAD_OK);
	eo_tls_material_clear(&m2);

	/* Three clusters in a cache of two: each still loads right. */
	for (int round = 0; round < 2; round++) {
		json_t *cs[] = {c, c2, c3};

		for (int i = 0; i < 3; i++) {
			assert_int_equal(
			    eo_tlsload_cached(cache, r.kc, cs[i], NOW_VALID + 6, &m2, &p, NULL),
			    EO_TLSLOAD_OK);
			assert_memory_equal(m.key, m2.key, m.key_len);
			eo_tls_material_clear(&m2);
		}
	}
	eo_tls_material_clear(&m);
	rig_stop(&r);
	eo_tls_cache_free(cache);
	json_decref(c);
	json_decref(c2);
	json_decref(c3);
}

TU_MAIN(test_pairs, test_ca, test_load, test_load_material, test_load_ca_digest, test_load_cache)
