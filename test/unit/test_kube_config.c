/*
 * Unit tests for kube/config: kubeconfig parsing, in-cluster config, token
 * refresh, and that errors never carry secrets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/config.h"
#include "support/testutil.h"
#include "support/tu_main.h"

/* base64 of "CA-PEM", "CERT-PEM", "KEY-PEM-SECRET" */
#define CA_B64	 "Q0EtUEVN"
#define CERT_B64 "Q0VSVC1QRU0="
#define KEY_B64	 "S0VZLVBFTS1TRUNSRVQ="

static char tmpdir[64];

static int setup_dir(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/eo-kcfg-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	return 0;
}

static int teardown_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *kc_two_contexts = "apiVersion: v1\n"
				     "kind: Config\n"
				     "current-context: dev\n"
				     "clusters:\n"
				     "- name: c-dev\n"
				     "  cluster:\n"
				     "    server: https://dev.example:6443/\n"
				     "    certificate-authority-data: " CA_B64 "\n"
				     "- name: c-prod\n"
				     "  cluster:\n"
				     "    server: https://prod.example:443\n"
				     "    insecure-skip-tls-verify: true\n"
				     "users:\n"
				     "- name: u-dev\n"
				     "  user:\n"
				     "    client-certificate-data: " CERT_B64 "\n"
				     "    client-key-data: " KEY_B64 "\n"
				     "- name: u-prod\n"
				     "  user:\n"
				     "    token: prod-token-value\n"
				     "contexts:\n"
				     "- name: dev\n"
				     "  context:\n"
				     "    cluster: c-dev\n"
				     "    user: u-dev\n"
				     "    namespace: team-a\n"
				     "- name: prod\n"
				     "  context:\n"
				     "    cluster: c-prod\n"
				     "    user: u-prod\n";

static void test_inline_data_current_context(void **state)
{
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;
	const unsigned char *p;
	size_t len;
	char *tok = (char *)1;

	(void)state;
	assert_int_equal(eo_kube_config_parse_kubeconfig(kc_two_contexts, strlen(kc_two_contexts),
							 NULL, NULL, &cfg, &err),
			 EO_KUBE_OK);
	assert_string_equal(eo_kube_config_server(cfg), "https://dev.example:6443");
	assert_string_equal(eo_kube_config_namespace(cfg), "team-a");
	p = eo_kube_config_ca(cfg, &len);
	assert_int_equal(len, 6);
	assert_memory_equal(p, "CA-PEM", 6);
	p = eo_kube_config_client_cert(cfg, &len);
	assert_int_equal(len, 8);
	assert_memory_equal(p, "CERT-PEM", 8);
	p = eo_kube_config_client_key(cfg, &len);
	assert_int_equal(len, 14);
	assert_memory_equal(p, "KEY-PEM-SECRET", 14);
	assert_false(eo_kube_config_insecure(cfg));
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_null(tok);
	eo_kube_config_free(cfg);
}

static void test_context_switch(void **state)
{
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;
	char *tok = NULL;

	(void)state;
	assert_int_equal(eo_kube_config_parse_kubeconfig(kc_two_contexts, strlen(kc_two_contexts),
							 NULL, "prod", &cfg, &err),
			 EO_KUBE_OK);
	assert_string_equal(eo_kube_config_server(cfg), "https://prod.example:443");
	assert_string_equal(eo_kube_config_namespace(cfg), "default");
	assert_true(eo_kube_config_insecure(cfg));
	assert_null(eo_kube_config_ca(cfg, NULL));
	assert_null(eo_kube_config_client_key(cfg, NULL));
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_string_equal(tok, "prod-token-value");
	assert_null(eo_kube_config_token_file(cfg));
	free(tok);
	eo_kube_config_free(cfg);
}

static void test_files_relative_to_kubeconfig(void **state)
{
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;
	const unsigned char *p;
	size_t len;
	char path[256], *tok = NULL;

	(void)state;
	tu_write_file(tmpdir, "ca.pem", "FILE-CA");
	tu_write_file(tmpdir, "client.crt", "FILE-CERT");
	tu_write_file(tmpdir, "client.key", "FILE-KEY");
	tu_write_file(tmpdir, "token", "  file-token-1\n");
	tu_write_file(
	    tmpdir, "config",
	    "current-context: x\n"
	    "clusters:\n"
	    "- name: c\n"
	    "  cluster: {server: 'https://10.0.0.1:6443', certificate-authority: ca.pem}\n"
	    "users:\n"
	    "- name: u\n"
	    "  user:\n"
	    "    client-certificate: client.crt\n"
	    "    client-key: client.key\n"
	    "    tokenFile: token\n"
	    "contexts:\n"
	    "- name: x\n"
	    "  context: {cluster: c, user: u, namespace: ns1}\n");
	snprintf(path, sizeof(path), "%s/config", tmpdir);
	assert_int_equal(eo_kube_config_load_kubeconfig(path, NULL, &cfg, &err), EO_KUBE_OK);
	p = eo_kube_config_ca(cfg, &len);
	assert_int_equal(len, 7);
	assert_memory_equal(p, "FILE-CA", 7);
	p = eo_kube_config_client_cert(cfg, &len);
	assert_memory_equal(p, "FILE-CERT", 9);
	p = eo_kube_config_client_key(cfg, &len);
	assert_memory_equal(p, "FILE-KEY", 8);
	assert_string_equal(eo_kube_config_namespace(cfg), "ns1");
	assert_non_null(eo_kube_config_token_file(cfg));
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_string_equal(tok, "file-token-1"); /* trimmed */
	free(tok);
	eo_kube_config_free(cfg);

	/* The same file through $KUBECONFIG and the default loader. */
	setenv("KUBECONFIG", path, 1);
	assert_int_equal(eo_kube_config_load(NULL, NULL, &cfg, &err), EO_KUBE_OK);
	assert_string_equal(eo_kube_config_server(cfg), "https://10.0.0.1:6443");
	eo_kube_config_free(cfg);
	unsetenv("KUBECONFIG");
}

static void test_token_file_refresh(void **state)
{
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;
	char *tok = NULL, path[256];

	(void)state;
	tu_write_file(tmpdir, "tok", "first\n");
	tu_write_file(tmpdir, "kc",
		      "current-context: x\n"
		      "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n"
		      "users: [{name: u, user: {tokenFile: tok}}]\n"
		      "contexts: [{name: x, context: {cluster: c, user: u}}]\n");
	snprintf(path, sizeof(path), "%s/kc", tmpdir);
	assert_int_equal(eo_kube_config_load_kubeconfig(path, NULL, &cfg, &err), EO_KUBE_OK);
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_string_equal(tok, "first");
	free(tok);

	/* Rotated on disk: the cached token stays until the refresh interval. */
	tu_write_file(tmpdir, "tok", "second\n");
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_string_equal(tok, "first");
	free(tok);

	/* Invalidation (what the client does on a 401) forces a re-read. */
	eo_kube_config_token_invalidate(cfg);
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_string_equal(tok, "second");
	free(tok);

	/* A short refresh interval re-reads on its own. */
	eo_kube_config_set_token_refresh(cfg, 1);
	tu_write_file(tmpdir, "tok", "third");
	usleep(5000);
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_string_equal(tok, "third");
	free(tok);

	/* If the file disappears the last good token is still used. */
	snprintf(path, sizeof(path), "%s/tok", tmpdir);
	unlink(path);
	usleep(5000);
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_string_equal(tok, "third");
	free(tok);
	eo_kube_config_free(cfg);
}

static void expect_config_error(const char *yaml, const char *context, eo_kube_err want,
				const char *needle)
{
	eo_kube_config *cfg = (eo_kube_config *)1;
	struct eo_kube_error err;

	assert_int_equal(
	    eo_kube_config_parse_kubeconfig(yaml, strlen(yaml), tmpdir, context, &cfg, &err), want);
	assert_null(cfg);
	if (!strstr(err.message, needle))
		fail_msg("message \"%s\" lacks \"%s\"", err.message, needle);
}

static void test_missing_fields(void **state)
{
	(void)state;
	expect_config_error("clusters: []\n", NULL, EO_KUBE_ECONFIG, "no current-context");
	expect_config_error(kc_two_contexts, "staging", EO_KUBE_ECONFIG,
			    "context \"staging\" not found");
	expect_config_error("current-context: x\ncontexts: [{name: x, context: {user: u}}]\n", NULL,
			    EO_KUBE_ECONFIG, "has no cluster");
	expect_config_error("current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n",
			    NULL, EO_KUBE_ECONFIG, "cluster \"c\" not found");
	expect_config_error("current-context: x\n"
			    "clusters: [{name: c, cluster: {insecure-skip-tls-verify: true}}]\n"
			    "contexts: [{name: x, context: {cluster: c}}]\n",
			    NULL, EO_KUBE_ECONFIG, "has no server");
	expect_config_error("current-context: x\n"
			    "clusters: [{name: c, cluster: {server: 'https://a'}}]\n"
			    "contexts: [{name: x, context: {cluster: c, user: nobody}}]\n",
			    NULL, EO_KUBE_ECONFIG, "user \"nobody\" not found");
	expect_config_error("current-context: x\n"
			    "clusters: [{name: c, cluster: {server: 'https://a'}}]\n"
			    "users: [{name: u, user: {client-certificate-data: " CERT_B64 "}}]\n"
			    "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
			    NULL, EO_KUBE_ECONFIG, "both a client certificate and a client key");
	expect_config_error("current-context: x\n"
			    "clusters: [{name: c, cluster: {server: 'https://a'}}]\n"
			    "users: [{name: u, user: {exec: {command: aws}}}]\n"
			    "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
			    NULL, EO_KUBE_ECONFIG, "exec apiVersion must be");
	expect_config_error("current-context: x\n"
			    "clusters: [{name: c, cluster: {server: 'ftp://a'}}]\n"
			    "contexts: [{name: x, context: {cluster: c}}]\n",
			    NULL, EO_KUBE_ECONFIG, "https://");
	expect_config_error("current-context: x\n"
			    "clusters: [{name: c, cluster: {server: 'https://a', "
			    "certificate-authority: no-such-ca.pem}}]\n"
			    "contexts: [{name: x, context: {cluster: c}}]\n",
			    NULL, EO_KUBE_EIO, "certificate-authority");
	expect_config_error("key: [unclosed\n", NULL, EO_KUBE_ECONFIG, "yaml error");
}

static void test_errors_carry_no_secrets(void **state)
{
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;
	const char *yaml = "current-context: x\n"
			   "clusters: [{name: c, cluster: {server: 'https://a'}}]\n"
			   "users: [{name: u, user: {client-certificate-data: " CERT_B64 ", "
			   "client-key-data: 'c2VjcmV0LWtleS1ieXRlcw=*'}}]\n"
			   "contexts: [{name: x, context: {cluster: c, user: u}}]\n";

	(void)state;
	assert_int_equal(
	    eo_kube_config_parse_kubeconfig(yaml, strlen(yaml), NULL, NULL, &cfg, &err),
	    EO_KUBE_ECONFIG);
	assert_non_null(strstr(err.message, "client-key-data"));
	assert_null(strstr(err.message, "c2VjcmV0"));
	assert_null(strstr(err.message, "secret"));

	/* An empty token file is an error that names the file, not a token. */
	tu_write_file(tmpdir, "empty-token", "\n");
	yaml = "current-context: x\n"
	       "clusters: [{name: c, cluster: {server: 'https://a'}}]\n"
	       "users: [{name: u, user: {tokenFile: empty-token, token2: hunter2}}]\n"
	       "contexts: [{name: x, context: {cluster: c, user: u}}]\n";
	assert_int_equal(
	    eo_kube_config_parse_kubeconfig(yaml, strlen(yaml), tmpdir, NULL, &cfg, &err),
	    EO_KUBE_ECONFIG);
	assert_non_null(strstr(err.message, "empty-token"));
	assert_null(strstr(err.message, "hunter2"));
}

/* *-data fields: standard padded base64, line-wrapped as `base64` writes it. */
static void test_inline_data_base64(void **state)
{
	static const struct {
		const char *ca;	  /* YAML scalar */
		const char *want; /* NULL: rejected */
	} rows[] = {
	    {"'Q0Et\nUEVN'", "CA-PEM"},		    /* wrapped (YAML keeps the newline) */
	    {"\" Q0VS VC1Q\\tRU0= \"", "CERT-PEM"}, /* spaces and a tab inside */
	    {"Q0VSVC1QRU0", NULL},		    /* padding missing */
	    {"Q0VSVC1QRU0==", NULL},		    /* padding too long */
	    {"Q0VS=C1QRU0=", NULL},		    /* '=' inside */
	    {"Q0VSVC1QRU0_", NULL},		    /* URL-safe alphabet */
	    {"'   '", NULL},			    /* nothing but space */
	    {"'===='", NULL},			    /* nothing but padding */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char yaml[512];
		eo_kube_config *cfg = NULL;
		struct eo_kube_error err;
		const unsigned char *ca;
		size_t len = 0;
		eo_kube_err rc;

		snprintf(yaml, sizeof(yaml),
			 "current-context: x\n"
			 "clusters: [{name: c, cluster: {server: 'https://a', "
			 "certificate-authority-data: %s}}]\n"
			 "contexts: [{name: x, context: {cluster: c}}]\n",
			 rows[i].ca);
		rc = eo_kube_config_parse_kubeconfig(yaml, strlen(yaml), NULL, NULL, &cfg, &err);
		if (rows[i].want == NULL) {
			if (rc != EO_KUBE_ECONFIG || strstr(err.message, "invalid base64") == NULL)
				fail_msg("row %zu: rc %d (%s), want invalid base64", i, rc,
					 err.message);
			continue;
		}
		if (rc != EO_KUBE_OK)
			fail_msg("row %zu: rc %d (%s)", i, rc, err.message);
		ca = eo_kube_config_ca(cfg, &len);
		assert_int_equal(len, strlen(rows[i].want));
		assert_memory_equal(ca, rows[i].want, len);
		eo_kube_config_free(cfg);
	}
}

static void test_in_cluster(void **state)
{
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;
	struct eo_kube_incluster_paths paths;
	char tok_path[256], ca_path[256], ns_path[256], *tok = NULL;
	const unsigned char *p;
	size_t len;

	(void)state;
	snprintf(tok_path, sizeof(tok_path), "%s/sa-token", tmpdir);
	snprintf(ca_path, sizeof(ca_path), "%s/sa-ca.crt", tmpdir);
	snprintf(ns_path, sizeof(ns_path), "%s/sa-namespace", tmpdir);
	paths.token = tok_path;
	paths.ca = ca_path;
	paths.ns = ns_path;

	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	assert_int_equal(eo_kube_config_in_cluster(&paths, &cfg, &err), EO_KUBE_ECONFIG);
	assert_non_null(strstr(err.message, "KUBERNETES_SERVICE_HOST"));

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	/* No CA file yet. */
	assert_int_equal(eo_kube_config_in_cluster(&paths, &cfg, &err), EO_KUBE_EIO);
	assert_non_null(strstr(err.message, "sa-ca.crt"));

	tu_write_file(tmpdir, "sa-ca.crt", "SA-CA");
	/* No token file yet. */
	assert_int_equal(eo_kube_config_in_cluster(&paths, &cfg, &err), EO_KUBE_EIO);
	assert_non_null(strstr(err.message, "sa-token"));

	tu_write_file(tmpdir, "sa-token", "sa-token-v1\n");
	/* No namespace file: "default". */
	assert_int_equal(eo_kube_config_in_cluster(&paths, &cfg, &err), EO_KUBE_OK);
	assert_string_equal(eo_kube_config_server(cfg), "https://10.96.0.1:443");
	assert_string_equal(eo_kube_config_namespace(cfg), "default");
	p = eo_kube_config_ca(cfg, &len);
	assert_int_equal(len, 5);
	assert_memory_equal(p, "SA-CA", 5);
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_string_equal(tok, "sa-token-v1");
	free(tok);
	/* The service-account token rotates: it must be re-read. */
	tu_write_file(tmpdir, "sa-token", "sa-token-v2\n");
	eo_kube_config_token_invalidate(cfg);
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_string_equal(tok, "sa-token-v2");
	free(tok);
	eo_kube_config_free(cfg);

	tu_write_file(tmpdir, "sa-namespace", "operators\n");
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	assert_int_equal(eo_kube_config_in_cluster(&paths, &cfg, &err), EO_KUBE_OK);
	assert_string_equal(eo_kube_config_server(cfg), "https://[fd00::1]:443");
	assert_string_equal(eo_kube_config_namespace(cfg), "operators");
	eo_kube_config_free(cfg);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
}

static void test_new_simple(void **state)
{
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;
	char *tok = NULL;

	(void)state;
	assert_int_equal(eo_kube_config_new("http://127.0.0.1:8080//", "t", NULL, &cfg, &err),
			 EO_KUBE_OK);
	assert_string_equal(eo_kube_config_server(cfg), "http://127.0.0.1:8080");
	assert_string_equal(eo_kube_config_namespace(cfg), "default");
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_string_equal(tok, "t");
	free(tok);
	eo_kube_config_free(cfg);
	assert_int_equal(eo_kube_config_new("", NULL, NULL, &cfg, &err), EO_KUBE_ECONFIG);
	assert_null(cfg);
}

/* eo_kube_read_file with the largest cap reads the file (the cap arithmetic must not wrap). */
static void test_read_file_max_cap(void **state)
{
	char path[256], *data = NULL;
	size_t len = 0;

	(void)state;
	tu_write_file(tmpdir, "plain.txt", "hello\n");
	snprintf(path, sizeof(path), "%s/plain.txt", tmpdir);
	assert_int_equal(eo_kube_read_file(path, SIZE_MAX, &data, &len, NULL), EO_KUBE_OK);
	assert_int_equal(len, 6);
	assert_string_equal(data, "hello\n");
	free(data);
	assert_int_equal(eo_kube_read_file(path, 5, &data, &len, NULL), EO_KUBE_ETOOLARGE);
	assert_null(data);
}

/* Which kubeconfig gets which transport warning (table-driven). */
static void test_transport_risks(void **state)
{
	static const struct {
		const char *name, *server, *extra;
		unsigned want;
	} cases[] = {
	    {"verified https", "https://k.example:6443", "", 0},
	    {"skip verify", "https://k.example:6443", "    insecure-skip-tls-verify: true\n",
	     EO_KUBE_RISK_INSECURE_TLS},
	    {"skip verify false", "https://k.example:6443", "    insecure-skip-tls-verify: false\n",
	     0},
	    {"plain http", "http://127.0.0.1:8080", "", EO_KUBE_RISK_PLAIN_HTTP},
	    /* http already sends everything in clear: one warning, not two */
	    {"plain http, skip verify", "http://127.0.0.1:8080",
	     "    insecure-skip-tls-verify: true\n", EO_KUBE_RISK_PLAIN_HTTP},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char yaml[1024];
		eo_kube_config *cfg = NULL;
		struct eo_kube_error err;

		snprintf(yaml, sizeof(yaml),
			 "current-context: x\n"
			 "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
			 "clusters:\n- name: c\n  cluster:\n    server: %s\n%s"
			 "users: [{name: u, user: {token: tok-%zu}}]\n",
			 cases[i].server, cases[i].extra, i);
		assert_int_equal(
		    eo_kube_config_parse_kubeconfig(yaml, strlen(yaml), NULL, NULL, &cfg, &err),
		    EO_KUBE_OK);
		if (eo_kube_config_risks(cfg) != cases[i].want)
			fail_msg("%s: risks %u, want %u", cases[i].name, eo_kube_config_risks(cfg),
				 cases[i].want);
		eo_kube_config_free(cfg);
	}
	assert_int_equal(eo_kube_config_risks(NULL), 0);
	/* The texts say what is wrong and never repeat a token. */
	assert_non_null(
	    strstr(eo_kube_risk_text(EO_KUBE_RISK_INSECURE_TLS), "insecure-skip-tls-verify"));
	assert_non_null(strstr(eo_kube_risk_text(EO_KUBE_RISK_PLAIN_HTTP), "http://"));
}

/* Each risk is reported once per flag word, however many configs carry it. */
static void test_transport_risks_once(void **state)
{
	eo_kube_config *http = NULL, *https = NULL, *http2 = NULL;
	struct eo_kube_error err;
	atomic_uint warned = 0;

	(void)state;
	assert_int_equal(eo_kube_config_new("http://127.0.0.1:1", "t", NULL, &http, &err),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_config_new("http://127.0.0.1:2", "t", NULL, &http2, &err),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_config_new("https://127.0.0.1:3", "t", NULL, &https, &err),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_config_risks_once(https, &warned), 0);
	assert_int_equal(eo_kube_config_risks_once(http, &warned), EO_KUBE_RISK_PLAIN_HTTP);
	assert_int_equal(eo_kube_config_risks_once(http, &warned), 0);
	assert_int_equal(eo_kube_config_risks_once(http2, &warned), 0);
	assert_int_equal(atomic_load(&warned), EO_KUBE_RISK_PLAIN_HTTP);
	eo_kube_config_free(http);
	eo_kube_config_free(http2);
	eo_kube_config_free(https);
}

/* Trimming a token wipes what the shift leaves behind the terminator. */
static void test_trim_wipes_tail(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
	    {"  \tsecret-token-value\n", "secret-token-value"},
	    {"secret-token-value\n\n", "secret-token-value"},
	    {"\n\n  x", "x"},
	    {"plain", "plain"},
	    {" \n ", ""},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[64];
		size_t n = strlen(cases[i].in);

		memset(buf, 'Z', sizeof(buf));
		memcpy(buf, cases[i].in, n + 1);
		eo__kube_trim(buf);
		assert_string_equal(buf, cases[i].want);
		/* Between the new end and the old terminator nothing but zeros. */
		for (size_t j = strlen(buf); j <= n; j++)
			if (buf[j] != '\0')
				fail_msg("case %zu: byte %zu after the trimmed end is 0x%02x", i, j,
					 (unsigned char)buf[j]);
	}
}

/* A token file longer than the first read buffer (4 KiB) still reads whole and trimmed. */
static void test_long_token_file(void **state)
{
	char path[256], *big = malloc(10001), *tok = NULL;
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;
	char yaml[512];

	(void)state;
	assert_non_null(big);
	big[0] = ' ';
	memset(big + 1, 'k', 9998);
	big[9999] = '\n';
	big[10000] = '\0';
	tu_write_file(tmpdir, "long-token", big);
	snprintf(path, sizeof(path), "%s/long-token", tmpdir);
	snprintf(yaml, sizeof(yaml),
		 "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
		 "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
		 "users: [{name: u, user: {tokenFile: '%s'}}]\n",
		 path);
	assert_int_equal(
	    eo_kube_config_parse_kubeconfig(yaml, strlen(yaml), NULL, NULL, &cfg, &err),
	    EO_KUBE_OK);
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_int_equal(strlen(tok), 9998);
	assert_int_equal(strspn(tok, "k"), 9998);
	free(tok);
	eo_kube_config_free(cfg);
	free(big);
}

/* ---- exec credential plugins ------------------------------------------ */

/*
 * The test plugin: counts its runs in $DIR/count, saves KUBERNETES_EXEC_INFO and its args, and
 * prints an ExecCredential of apiVersion $API whose token carries $FOO and the run number,
 * expiring at $EXP. MODE picks a broken answer.
 */
static const char *cred_sh =
    "#!/bin/sh\n"
    "n=$(cat \"$DIR/count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$DIR/count\"\n"
    "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$DIR/info\"\n"
    "echo \"$@\" > \"$DIR/args\"\n"
    "tok=exec-token-$FOO-$n\n"
    "case \"$MODE\" in\n"
    "exit3) echo \"{\\\"token\\\":\\\"$tok\\\"}\"; exit 3 ;;\n"
    "garbage) echo \"not json $tok\" ;;\n"
    "nokey) echo '{\"apiVersion\":\"'$API'\",\"kind\":\"ExecCredential\","
    "\"status\":{\"clientCertificateData\":\"CERT\"}}' ;;\n"
    "cert) echo '{\"apiVersion\":\"'$API'\",\"kind\":\"ExecCredential\","
    "\"status\":{\"clientCertificateData\":\"EXEC-CERT-'$n'\",\"clientKeyData\":\"EXEC-KEY\"}}' "
    ";;\n"
    "*) echo '{\"apiVersion\":\"'$API'\",\"kind\":\"ExecCredential\","
    "\"status\":{\"token\":\"'$tok'\",\"expirationTimestamp\":\"'$EXP'\"}}' ;;\n"
    "esac\n";

/* Writes cred.sh and a kubeconfig "exec.kubeconfig" whose user runs ./cred.sh with env
 * DIR=tmpdir plus extra (a YAML flow list body) and the exec fields in fields. */
static void write_exec_kubeconfig(const char *fields, const char *extra_env)
{
	char path[128], kc[2048];

	tu_write_file(tmpdir, "cred.sh", cred_sh);
	snprintf(path, sizeof(path), "%s/cred.sh", tmpdir);
	assert_int_equal(chmod(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/count", tmpdir);
	unlink(path);
	snprintf(kc, sizeof(kc),
		 "current-context: x\n"
		 "clusters: [{name: c, cluster: {server: 'https://a', "
		 "certificate-authority-data: " CA_B64 "}}]\n"
		 "contexts: [{name: x, context: {cluster: c, user: login}}]\n"
		 "users:\n"
		 "- name: login\n"
		 "  user:\n"
		 "    exec:\n"
		 "      command: ./cred.sh\n"
		 "      args: [--flag, two words]\n"
		 "      env: [{name: DIR, value: '%s'}%s]\n"
		 "%s",
		 tmpdir, extra_env, fields);
	tu_write_file(tmpdir, "exec.kubeconfig", kc);
}

static eo_kube_config *load_exec(void)
{
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;
	char path[128];

	snprintf(path, sizeof(path), "%s/exec.kubeconfig", tmpdir);
	if (eo_kube_config_load_kubeconfig(path, NULL, &cfg, &err) != EO_KUBE_OK)
		fail_msg("load: %s", err.message);
	return cfg;
}

static int runs(void)
{
	char path[128];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/count", tmpdir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

static void expect_token(eo_kube_config *cfg, const char *want)
{
	struct eo_kube_error err;
	char *tok = NULL;

	if (eo_kube_config_token(cfg, &tok, &err) != EO_KUBE_OK)
		fail_msg("token: %s", err.message);
	assert_non_null(tok);
	assert_string_equal(tok, want);
	free(tok);
}

static json_t *saved_json(const char *name)
{
	char path[128];
	json_t *j;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	j = json_load_file(path, 0, NULL);
	assert_non_null(j);
	return j;
}

/* Plugins see a stdin that is not a terminal, whoever runs the tests. */
static int stdin_null(void)
{
	int saved = dup(STDIN_FILENO), fd = open("/dev/null", O_RDONLY);

	assert_true(saved >= 0 && fd >= 0);
	assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	close(fd);
	return saved;
}

static void stdin_restore(int saved)
{
	dup2(saved, STDIN_FILENO);
	close(saved);
}

static void test_exec_token_cached_and_refreshed(void **state)
{
	eo_kube_config *cfg;
	json_t *info;
	char args[64] = "";
	char path[128];
	FILE *f;
	int in = stdin_null();

	(void)state;
	write_exec_kubeconfig("      apiVersion: client.authentication.k8s.io/v1\n"
			      "      interactiveMode: IfAvailable\n",
			      ", {name: FOO, value: bar}, {name: API, value: "
			      "client.authentication.k8s.io/v1}, {name: EXP, value: "
			      "'2099-01-01T00:00:00Z'}");
	cfg = load_exec();
	assert_int_equal(runs(), 0); /* not at load time */
	assert_true(eo_kube_config_token_renewable(cfg));
	expect_token(cfg, "exec-token-bar-1");
	expect_token(cfg, "exec-token-bar-1"); /* cached until it expires */
	assert_int_equal(runs(), 1);

	info = saved_json("info");
	assert_string_equal(json_string_value(json_object_get(info, "apiVersion")),
			    "client.authentication.k8s.io/v1");
	assert_string_equal(json_string_value(json_object_get(info, "kind")), "ExecCredential");
	assert_true(json_is_false(json_object_get(json_object_get(info, "spec"), "interactive")));
	assert_null(json_object_get(json_object_get(info, "spec"), "cluster"));
	json_decref(info);
	snprintf(path, sizeof(path), "%s/args", tmpdir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(args, sizeof(args), f));
	fclose(f);
	assert_string_equal(args, "--flag two words\n");

	/* A 401 invalidates: the plugin runs again. */
	eo_kube_config_token_invalidate(cfg);
	expect_token(cfg, "exec-token-bar-2");
	assert_int_equal(runs(), 2);
	eo_kube_config_free(cfg);
	stdin_restore(in);
}

static void test_exec_expired_is_rerun(void **state)
{
	eo_kube_config *cfg;
	int in = stdin_null();

	(void)state;
	write_exec_kubeconfig("      apiVersion: client.authentication.k8s.io/v1beta1\n",
			      ", {name: FOO, value: old}, {name: API, value: "
			      "client.authentication.k8s.io/v1beta1}, {name: EXP, value: "
			      "'2001-01-01T00:00:00.5+02:00'}");
	cfg = load_exec();
	expect_token(cfg, "exec-token-old-1");
	expect_token(cfg, "exec-token-old-2");
	expect_token(cfg, "exec-token-old-3");
	eo_kube_config_free(cfg);
	stdin_restore(in);
}

static void test_exec_client_cert_and_cluster_info(void **state)
{
	eo_kube_config *cfg;
	struct eo_kube_error err;
	const unsigned char *p;
	json_t *info, *cl;
	char *tok = (char *)1;
	size_t len = 0;
	int in = stdin_null();

	(void)state;
	write_exec_kubeconfig("      apiVersion: client.authentication.k8s.io/v1\n"
			      "      interactiveMode: Never\n"
			      "      provideClusterInfo: true\n",
			      ", {name: MODE, value: cert}, {name: API, value: "
			      "client.authentication.k8s.io/v1}");
	cfg = load_exec();
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_null(tok);
	p = eo_kube_config_client_cert(cfg, &len);
	assert_int_equal(len, 11);
	assert_memory_equal(p, "EXEC-CERT-1", 11);
	p = eo_kube_config_client_key(cfg, &len);
	assert_int_equal(len, 8);
	assert_memory_equal(p, "EXEC-KEY", 8);

	info = saved_json("info");
	cl = json_object_get(json_object_get(info, "spec"), "cluster");
	assert_string_equal(json_string_value(json_object_get(cl, "server")), "https://a");
	assert_string_equal(json_string_value(json_object_get(cl, "certificate-authority-data")),
			    CA_B64);
	json_decref(info);

	/* A re-run replaces the pair; the pointer handed out before stays readable. */
	eo_kube_config_token_invalidate(cfg);
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_memory_equal(p, "EXEC-KEY", 8);
	p = eo_kube_config_client_cert(cfg, &len);
	assert_memory_equal(p, "EXEC-CERT-2", 11);
	{
		const unsigned char *cert, *key;
		size_t cert_n, kl;

		eo_kube_config_client_pair(cfg, &cert, &cert_n, &key, &kl);
		assert_ptr_equal(cert, p);
		assert_int_equal(kl, 8);
		assert_memory_equal(key, "EXEC-KEY", 8);
	}
	eo_kube_config_free(cfg);
	stdin_restore(in);
}

/* A run that fails: the message names the user and the plugin, never the token. */
static void expect_exec_failure(const char *fields, const char *env, const char *needle)
{
	eo_kube_config *cfg;
	struct eo_kube_error err;
	char *tok = NULL;

	write_exec_kubeconfig(fields, env);
	cfg = load_exec();
	assert_int_not_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_OK);
	assert_null(tok);
	if (!strstr(err.message, needle) || !strstr(err.message, "user \"login\""))
		fail_msg("message \"%s\" lacks \"%s\" or the user", err.message, needle);
	if (strstr(err.message, "exec-token"))
		fail_msg("message \"%s\" carries the token", err.message);
	eo_kube_config_free(cfg);
}

static void test_exec_failures(void **state)
{
	const char *v1 = "      apiVersion: client.authentication.k8s.io/v1\n";
	const char *env = ", {name: FOO, value: s3cr3t}, {name: API, value: "
			  "client.authentication.k8s.io/v1beta1}, {name: EXP, value: "
			  "'2099-01-01T00:00:00Z'}";
	int in = stdin_null();

	(void)state;
	expect_exec_failure(v1, env, "configured with apiVersion client.authentication.k8s.io/v1");
	expect_exec_failure("      apiVersion: client.authentication.k8s.io/v1\n"
			    "      installHint: install cred.sh from the wiki\n",
			    ", {name: MODE, value: exit3}", "exit status 3 (install cred.sh");
	expect_exec_failure(v1, ", {name: MODE, value: garbage}",
			    "did not print an ExecCredential");
	expect_exec_failure(v1,
			    ", {name: MODE, value: nokey}, {name: API, value: "
			    "client.authentication.k8s.io/v1}",
			    "certificate without its key");
	expect_exec_failure("      apiVersion: client.authentication.k8s.io/v1\n"
			    "      interactiveMode: Always\n",
			    "", "stdin is not a terminal");
	expect_exec_failure(v1,
			    ", {name: API, value: client.authentication.k8s.io/v1}, "
			    "{name: EXP, value: yesterday}",
			    "invalid status.expirationTimestamp");
	stdin_restore(in);

	/* Refused when the kubeconfig is read. */
	expect_config_error("current-context: x\n"
			    "clusters: [{name: c, cluster: {server: 'https://a'}}]\n"
			    "users: [{name: u, user: {exec: {command: aws}}}]\n"
			    "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
			    NULL, EO_KUBE_ECONFIG, "exec apiVersion must be");
	expect_config_error("current-context: x\n"
			    "clusters: [{name: c, cluster: {server: 'https://a'}}]\n"
			    "users: [{name: u, user: {exec: {command: aws, interactiveMode: Maybe, "
			    "apiVersion: client.authentication.k8s.io/v1}}}]\n"
			    "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
			    NULL, EO_KUBE_ECONFIG, "interactiveMode must be");
	expect_config_error("current-context: x\n"
			    "clusters: [{name: c, cluster: {server: 'https://a'}}]\n"
			    "users: [{name: u, user: {exec: {command: aws, env: [{value: v}], "
			    "apiVersion: client.authentication.k8s.io/v1}}}]\n"
			    "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
			    NULL, EO_KUBE_ECONFIG, "env[0] needs a name");
}

static void test_exec_command_not_found(void **state)
{
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;
	char *tok = NULL;
	const char *yaml = "current-context: x\n"
			   "clusters: [{name: c, cluster: {server: 'https://a'}}]\n"
			   "users: [{name: u, user: {exec: {command: eo-no-such-plugin, "
			   "apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, "
			   "installHint: get it}}}]\n"
			   "contexts: [{name: x, context: {cluster: c, user: u}}]\n";

	(void)state;
	assert_int_equal(
	    eo_kube_config_parse_kubeconfig(yaml, strlen(yaml), tmpdir, NULL, &cfg, &err),
	    EO_KUBE_OK);
	assert_int_equal(eo_kube_config_token(cfg, &tok, &err), EO_KUBE_ECONFIG);
	if (!strstr(err.message, "eo-no-such-plugin: cannot be started"))
		fail_msg("%s", err.message);
	assert_non_null(strstr(err.message, "(get it)"));
	eo_kube_config_free(cfg);
}

static void test_auth_provider(void **state)
{
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;
	const char *yaml = "current-context: x\n"
			   "clusters: [{name: c, cluster: {server: 'https://a'}}]\n"
			   "users: [{name: me, user: {auth-provider: {name: oidc, config: "
			   "{id-token: the-id-token, refresh-token: r}}}}]\n"
			   "contexts: [{name: x, context: {cluster: c, user: me}}]\n";

	(void)state;
	expect_config_error("current-context: x\n"
			    "clusters: [{name: c, cluster: {server: 'https://a'}}]\n"
			    "users: [{name: gke-user, user: {auth-provider: {name: gcp}}}]\n"
			    "contexts: [{name: x, context: {cluster: c, user: gke-user}}]\n",
			    NULL, EO_KUBE_ECONFIG,
			    "user \"gke-user\" uses the auth-provider \"gcp\", which kubectl etcd "
			    "does not support");
	expect_config_error("current-context: x\n"
			    "clusters: [{name: c, cluster: {server: 'https://a'}}]\n"
			    "users: [{name: o, user: {auth-provider: {name: oidc, config: "
			    "{refresh-token: r}}}}]\n"
			    "contexts: [{name: x, context: {cluster: c, user: o}}]\n",
			    NULL, EO_KUBE_ECONFIG, "switch the user to an exec credential plugin");
	assert_int_equal(
	    eo_kube_config_parse_kubeconfig(yaml, strlen(yaml), tmpdir, NULL, &cfg, &err),
	    EO_KUBE_OK);
	expect_token(cfg, "the-id-token");
	assert_false(eo_kube_config_token_renewable(cfg));
	eo_kube_config_free(cfg);
}

/* ---- KUBECONFIG lists ------------------------------------------------- */

static eo_kube_config *load_list(const char *list, const char *context)
{
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;

	if (eo_kube_config_load_kubeconfig_list(list, context, &cfg, &err) != EO_KUBE_OK)
		fail_msg("list %s: %s", list, err.message);
	return cfg;
}

static void test_kubeconfig_list_merge(void **state)
{
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;
	const unsigned char *ca;
	char list[512], dir2[128];
	size_t len = 0;

	(void)state;
	snprintf(dir2, sizeof(dir2), "%s/two", tmpdir);
	assert_int_equal(mkdir(dir2, 0700), 0);
	tu_write_file(
	    tmpdir, "one.yaml",
	    "current-context: a\n"
	    "clusters: [{name: shared, cluster: {server: 'https://first'}}]\n"
	    "users: [{name: u, user: {token: first-token}}]\n"
	    "contexts: [{name: a, context: {cluster: shared, user: u, namespace: ns-a}}]\n");
	tu_write_file(dir2, "ca.pem", "CA-FROM-TWO");
	tu_write_file(
	    dir2, "two.yaml",
	    "current-context: b\n"
	    "clusters:\n"
	    "- {name: shared, cluster: {server: 'https://second'}}\n"
	    "- {name: own, cluster: {server: 'https://own', certificate-authority: ca.pem}}\n"
	    "users: [{name: u, user: {token: second-token}}]\n"
	    "contexts:\n"
	    "- {name: a, context: {cluster: own, namespace: ns-two}}\n"
	    "- {name: b, context: {cluster: own, user: u}}\n");

	/* The first file's current-context, and its definitions of a, shared and u. */
	snprintf(list, sizeof(list), "%s/one.yaml:%s/missing.yaml::%s/two.yaml", tmpdir, tmpdir,
		 dir2);
	cfg = load_list(list, NULL);
	assert_string_equal(eo_kube_config_server(cfg), "https://first");
	assert_string_equal(eo_kube_config_namespace(cfg), "ns-a");
	expect_token(cfg, "first-token");
	eo_kube_config_free(cfg);

	/* A context only the second file has; its cluster's CA resolves against that file's
	 * directory, and its user u is the first file's. */
	cfg = load_list(list, "b");
	assert_string_equal(eo_kube_config_server(cfg), "https://own");
	ca = eo_kube_config_ca(cfg, &len);
	assert_int_equal(len, 11);
	assert_memory_equal(ca, "CA-FROM-TWO", 11);
	expect_token(cfg, "first-token");
	eo_kube_config_free(cfg);

	/* Reversed: the second file wins everything it defines. */
	snprintf(list, sizeof(list), "%s/two.yaml:%s/one.yaml", dir2, tmpdir);
	cfg = load_list(list, NULL);
	assert_string_equal(eo_kube_config_server(cfg), "https://own");
	expect_token(cfg, "second-token");
	eo_kube_config_free(cfg);
	cfg = load_list(list, "a");
	assert_string_equal(eo_kube_config_server(cfg), "https://own");
	assert_string_equal(eo_kube_config_namespace(cfg), "ns-two");
	eo_kube_config_free(cfg);

	/* Nothing there; a broken file is an error that names it. */
	snprintf(list, sizeof(list), "%s/nope1:%s/nope2", tmpdir, tmpdir);
	assert_int_equal(eo_kube_config_load_kubeconfig_list(list, NULL, &cfg, &err),
			 EO_KUBE_ECONFIG);
	assert_non_null(strstr(err.message, "none of the listed files"));
	tu_write_file(tmpdir, "bad.yaml", "- just\n- a list\n");
	snprintf(list, sizeof(list), "%s/one.yaml:%s/bad.yaml", tmpdir, tmpdir);
	assert_int_equal(eo_kube_config_load_kubeconfig_list(list, NULL, &cfg, &err),
			 EO_KUBE_ECONFIG);
	assert_non_null(strstr(err.message, "bad.yaml"));
	assert_null(cfg);
}

static void test_load_uses_kubeconfig_list(void **state)
{
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;
	char list[512];
	char *old = getenv("KUBECONFIG") ? strdup(getenv("KUBECONFIG")) : NULL;

	(void)state;
	tu_write_file(tmpdir, "l1.yaml", "current-context: b\n");
	tu_write_file(tmpdir, "l2.yaml",
		      "clusters: [{name: c, cluster: {server: 'https://from-l2'}}]\n"
		      "contexts: [{name: b, context: {cluster: c}}]\n");
	snprintf(list, sizeof(list), "%s/l1.yaml:%s/l2.yaml", tmpdir, tmpdir);
	setenv("KUBECONFIG", list, 1);
	assert_int_equal(eo_kube_config_load(NULL, NULL, &cfg, &err), EO_KUBE_OK);
	assert_string_equal(eo_kube_config_server(cfg), "https://from-l2");
	eo_kube_config_free(cfg);
	if (old)
		setenv("KUBECONFIG", old, 1);
	else
		unsetenv("KUBECONFIG");
	free(old);
}

TU_MAIN_SETUP(setup_dir, teardown_dir, test_inline_data_current_context, test_context_switch,
	      test_files_relative_to_kubeconfig, test_token_file_refresh, test_missing_fields,
	      test_errors_carry_no_secrets, test_inline_data_base64, test_in_cluster,
	      test_new_simple, test_read_file_max_cap, test_transport_risks,
	      test_transport_risks_once, test_trim_wipes_tail, test_long_token_file,
	      test_exec_token_cached_and_refreshed, test_exec_expired_is_rerun,
	      test_exec_client_cert_and_cluster_info, test_exec_failures,
	      test_exec_command_not_found, test_auth_provider, test_kubeconfig_list_merge,
	      test_load_uses_kubeconfig_list)
