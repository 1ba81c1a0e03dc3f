/*
 * Unit tests of controller/authload.c: the root password read from the Secret
 * spec.auth.rootCredentialsSecretRef names (GET only, through a fake apiserver), the problems
 * it reports, and the in-memory record of passwords etcd accepted.
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

#include "controller/authload.h"
#include "kube/client.h"
#include "kube/config.h"
#include "plan/auth.h"
#include "support/fake_apiserver.h"
#include "support/testutil.h"
#include "support/tu_main.h"

struct api {
	pthread_mutex_t mu;
	json_t *secrets; /* name -> data object */
	int gets, others;
};

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct api *a = ud;
	const char *prefix = "/api/v1/namespaces/ns/secrets/";
	json_t *data;

	pthread_mutex_lock(&a->mu);
	if (strcmp(rq->method, "GET") == 0 && strncmp(rq->path, prefix, strlen(prefix)) == 0) {
		a->gets++;
		data = json_object_get(a->secrets, rq->path + strlen(prefix));
		if (data == NULL) {
			rs->status = 404;
			rs->body = tu_status_body(404, "NotFound", "secrets not found");
		} else {
			json_t *s = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:O}", "apiVersion",
					      "v1", "kind", "Secret", "metadata", "name",
					      rq->path + strlen(prefix), "namespace", "ns", "type",
					      "kubernetes.io/basic-auth", "data", data);

			rs->body = json_dumps(s, JSON_COMPACT);
			json_decref(s);
		}
	} else {
		a->others++; /* a list or a watch of Secrets would be a bug */
		rs->status = 400;
	}
	pthread_mutex_unlock(&a->mu);
}

static json_t *cluster(bool auth)
{
	json_t *c = tu_jsonq("{'apiVersion':'etcd-operator.cozystack.io/v1alpha2',"
			     "'kind':'EtcdCluster','metadata':{'name':'demo','namespace':'ns',"
			     "'uid':'u1'},'spec':{'version':'3.6.11','tls':{'client':{"
			     "'serverSecretRef':{'name':'srv'}}}}}");

	if (auth)
		json_object_set_new(json_object_get(c, "spec"), "auth",
				    tu_jsonq("{'enabled':true,'rootCredentialsSecretRef':{'name':"
					     "'root'}}"));
	return c;
}

static void test_load(void **state)
{
	/* base64: "s3cret" = czNjcmV0, "root" = cm9vdA==, "admin" = YWRtaW4= */
	const struct {
		const char *name;
		const char *data; /* NULL: no Secret */
		bool auth;
		enum eo_tlsload_result want;
		const char *reason;
		const char *msg_has;
	} rows[] = {
	    {"no spec.auth: nothing read", NULL, false, EO_TLSLOAD_OK, NULL, NULL},
	    {"Secret missing", NULL, true, EO_TLSLOAD_PROBLEM, EO_REASON_AUTH_SECRET_NOT_FOUND,
	     "ns/root does not exist"},
	    {"password only", "{'password':'czNjcmV0'}", true, EO_TLSLOAD_OK, NULL, NULL},
	    {"basic-auth with root", "{'username':'cm9vdA==','password':'czNjcmV0'}", true,
	     EO_TLSLOAD_OK, NULL, NULL},
	    {"no password", "{'username':'cm9vdA=='}", true, EO_TLSLOAD_PROBLEM,
	     EO_REASON_AUTH_SECRET_INVALID, "has no \"password\""},
	    {"empty password", "{'password':''}", true, EO_TLSLOAD_PROBLEM,
	     EO_REASON_AUTH_SECRET_INVALID, "has no \"password\""},
	    {"not base64", "{'password':'%%%'}", true, EO_TLSLOAD_PROBLEM,
	     EO_REASON_AUTH_SECRET_INVALID, "not valid base64"},
	    {"another user", "{'username':'YWRtaW4=','password':'czNjcmV0'}", true,
	     EO_TLSLOAD_PROBLEM, EO_REASON_AUTH_SECRET_INVALID, "must be \"root\""},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct api a = {.secrets = json_object()};
		eo_kube_fake *fake;
		eo_kube_config *cfg = NULL;
		eo_kube_client *kc = NULL;
		struct eo_auth_creds creds = {0};
		struct eo_tlsload_problem p;
		json_t *c = cluster(rows[i].auth);
		enum eo_tlsload_result res;

		pthread_mutex_init(&a.mu, NULL);
		if (rows[i].data != NULL)
			json_object_set_new(a.secrets, "root", tu_jsonq(rows[i].data));
		fake = eo_kube_fake_start(handler, &a);
		assert_non_null(fake);
		assert_int_equal(eo_kube_config_new(eo_kube_fake_url(fake), NULL, NULL, &cfg, NULL),
				 EO_KUBE_OK);
		assert_int_equal(eo_kube_client_new(cfg, NULL, &kc, NULL), EO_KUBE_OK);
		res = eo_authload(kc, c, &creds, &p, NULL);
		if (res != rows[i].want)
			fail_msg("%s: result %d, want %d (%s)", rows[i].name, res, rows[i].want,
				 p.message);
		if (res == EO_TLSLOAD_OK && rows[i].auth) {
			assert_non_null(creds.password);
			assert_string_equal(creds.password, "s3cret");
		} else {
			assert_null(creds.password);
		}
		if (rows[i].reason != NULL) {
			assert_string_equal(p.reason, rows[i].reason);
			if (strstr(p.message, rows[i].msg_has) == NULL)
				fail_msg("%s: message \"%s\" lacks \"%s\"", rows[i].name, p.message,
					 rows[i].msg_has);
			assert_null(strstr(p.message, "s3cret"));
			assert_null(strstr(p.message, "czNjcmV0"));
		}
		assert_int_equal(a.gets, rows[i].auth ? 1 : 0);
		assert_int_equal(a.others, 0);
		eo_auth_creds_clear(&creds);
		assert_null(creds.password);
		eo_kube_client_free(kc);
		eo_kube_fake_stop(fake);
		json_decref(a.secrets);
		json_decref(c);
		pthread_mutex_destroy(&a.mu);
	}
}

static void test_verified(void **state)
{
	(void)state;
	assert_false(eo_authload_verified("uid-a", "pw-1"));
	eo_authload_mark_verified("uid-a", "pw-1");
	assert_true(eo_authload_verified("uid-a", "pw-1"));
	/* Another password or another cluster is not verified. */
	assert_false(eo_authload_verified("uid-a", "pw-2"));
	assert_false(eo_authload_verified("uid-b", "pw-1"));
	/* A new accepted password replaces the old one of that cluster. */
	eo_authload_mark_verified("uid-a", "pw-2");
	assert_true(eo_authload_verified("uid-a", "pw-2"));
	assert_false(eo_authload_verified("uid-a", "pw-1"));
	assert_false(eo_authload_verified(NULL, "pw-1"));
	/* Many clusters: the table stays bounded and the newest are remembered. */
	for (int i = 0; i < 1500; i++) {
		char uid[32];

		snprintf(uid, sizeof(uid), "many-%d", i);
		eo_authload_mark_verified(uid, "x");
	}
	assert_true(eo_authload_verified("many-1499", "x"));
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(65536);

	*n = 0;
	if (f == NULL || buf == NULL) {
		if (f != NULL)
			fclose(f);
		free(buf);
		return NULL;
	}
	*n = fread(buf, 1, 65535, f);
	fclose(f);
	buf[*n] = '\0';
	return buf;
}

/* The operator client certificate's CommonName (etcd's gateway refuses one with auth on). */
static void test_cert_cn(void **state)
{
	const char *nocn = "-----BEGIN CERTIFICATE-----\n"
			   "MIIBETCBuKADAgECAgEBMAoGCCqGSM49BAMCMBAxDjAMBgNVBAoMBWVvLW9wMB4X\n";
	char cn[64];
	size_t n = 0;
	char *pem = slurp("test/unit/test_tls_data/client.pem", &n);

	(void)state;
	assert_non_null(pem);
	assert_int_equal(eo_authload_cert_cn((unsigned char *)pem, n, cn, sizeof(cn)), 1);
	assert_string_equal(cn, "client");
	free(pem);
	/* Subject /O=eo-operator only: no CommonName. */
	pem = slurp("test/unit/test_tls_data/nocn.pem", &n);
	assert_non_null(pem);
	assert_int_equal(eo_authload_cert_cn((unsigned char *)pem, n, cn, sizeof(cn)), 0);
	assert_string_equal(cn, "");
	free(pem);
	/* Not a certificate (truncated): -1, never a false "no CN". */
	assert_int_equal(
	    eo_authload_cert_cn((const unsigned char *)nocn, strlen(nocn), cn, sizeof(cn)), -1);
	assert_int_equal(eo_authload_cert_cn(NULL, 0, cn, sizeof(cn)), -1);
}

TU_MAIN(test_load, test_verified, test_cert_cn)
