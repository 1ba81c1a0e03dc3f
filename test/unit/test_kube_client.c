/*
 * Unit tests for kube/err and kube/client: URL and query building, Status
 * parsing, and the REST verbs against an in-process fake apiserver
 * (pagination, 409, 401 with token re-read, body cap, timeouts, threads).
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
#include <sys/stat.h>
#include <unistd.h>

#include "api/meta.h"
#include "kube/client.h"
#include "kube/client_int.h"
#include "support/fake_apiserver.h"
#include "support/testutil.h"
#include "support/tu_main.h"

/* ---- pure helpers ---------------------------------------------------- */

static void test_url_building(void **state)
{
	struct eo_kube_resource pod = {"v1", "pods", "ns1", "web-0"};
	struct eo_kube_resource all_pods = {"v1", "pods", NULL, NULL};
	struct eo_kube_resource ec = {"etcd-operator.cozystack.io/v1alpha2", "etcdclusters", "db",
				      "main"};
	struct eo_kube_resource node = {"v1", "nodes", "", "n1"};
	struct eo_kube_resource bad = {"v1", NULL, NULL, NULL};
	const char *sel[] = {
	    "labelSelector", "app in (a,b),tier!=db", "fieldSelector", NULL, "limit", "500", NULL};
	char *u;

	(void)state;
	u = eo_kube_url("https://k:6443", &pod, NULL, NULL);
	assert_string_equal(u, "https://k:6443/api/v1/namespaces/ns1/pods/web-0");
	free(u);
	u = eo_kube_url("https://k:6443", &ec, "status", NULL);
	assert_string_equal(u, "https://k:6443/apis/etcd-operator.cozystack.io/v1alpha2/"
			       "namespaces/db/etcdclusters/main/status");
	free(u);
	u = eo_kube_url("https://k", &node, NULL, NULL);
	assert_string_equal(u, "https://k/api/v1/nodes/n1");
	free(u);
	u = eo_kube_url("https://k", &all_pods, NULL, sel);
	assert_string_equal(u, "https://k/api/v1/pods"
			       "?labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Ddb&limit=500");
	free(u);
	/* A subresource needs a name; a resource needs a plural. */
	assert_null(eo_kube_url("https://k", &all_pods, "status", NULL));
	assert_null(eo_kube_url("https://k", &bad, NULL, NULL));

	u = eo_kube_escape("etcd-operator.cozystack.io/cluster=a b&c");
	assert_string_equal(u, "etcd-operator.cozystack.io%2Fcluster%3Da%20b%26c");
	free(u);
}

/* Percent-encoding: only RFC 3986 unreserved characters stay as they are. */
static void test_escape_edges(void **state)
{
	static const struct {
		const char *in, *want;
	} rows[] = {
	    {"", ""},
	    {"AZaz09-._~", "AZaz09-._~"},
	    {"a+b", "a%2Bb"}, /* '+' is not a space to keep */
	    {"%41", "%2541"}, /* no double decoding */
	    {"?#[]@!$'*;,", "%3F%23%5B%5D%40%21%24%27%2A%3B%2C"},
	    {"\xc3\xa9t\xc3\xa9", "%C3%A9t%C3%A9"}, /* UTF-8 bytes, upper-case hex */
	    {"tab\tnl\n", "tab%09nl%0A"},
	    {"\x7f\xff", "%7F%FF"},
	};
	struct eo_kube_resource cm = {"v1", "configmaps", "ns", "a b"};
	const char *params[] = {"labelSelector", "k in (x y)", "empty", "", NULL};
	char *u;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		u = eo_kube_escape(rows[i].in);
		assert_non_null(u);
		if (strcmp(u, rows[i].want) != 0)
			fail_msg("row %zu: got %s, want %s", i, u, rows[i].want);
		free(u);
	}
	u = eo_kube_url("https://k", &cm, NULL, params);
	assert_string_equal(u, "https://k/api/v1/namespaces/ns/configmaps/a%20b"
			       "?labelSelector=k%20in%20%28x%20y%29&empty=");
	free(u);
}

static void test_status_parsing(void **state)
{
	struct eo_kube_error err;
	const char *exists = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
			     "\"message\":\"pods \\\"a\\\" already exists\","
			     "\"reason\":\"AlreadyExists\",\"code\":409}";
	const char *conflict = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"the "
			       "object has been modified\",\"reason\":\"Conflict\",\"code\":409}";
	const char *gone = "{\"kind\":\"Status\",\"reason\":\"Expired\",\"code\":410,"
			   "\"message\":\"too old resource version: 1 (5)\"}";

	(void)state;
	assert_int_equal(eo_kube_status_parse(409, exists, strlen(exists), &err), EO_KUBE_EEXISTS);
	assert_int_equal(err.http_status, 409);
	assert_int_equal(err.code, 409);
	assert_string_equal(err.reason, "AlreadyExists");
	assert_string_equal(err.message, "pods \"a\" already exists");

	assert_int_equal(eo_kube_status_parse(409, conflict, strlen(conflict), &err),
			 EO_KUBE_ECONFLICT);
	assert_string_equal(err.reason, "Conflict");

	assert_int_equal(eo_kube_status_parse(410, gone, strlen(gone), &err), EO_KUBE_EGONE);
	assert_string_equal(err.reason, "Expired");
	assert_int_equal(err.code, 410);

	/* Not JSON (a proxy error page): status only. */
	assert_int_equal(eo_kube_status_parse(502, "<html>bad gateway</html>", 24, &err),
			 EO_KUBE_EUNAVAILABLE);
	assert_int_equal(err.http_status, 502);
	assert_string_equal(err.reason, "");
	assert_string_equal(err.message, "http status 502");

	/* A JSON object that is not a Status does not lend its fields. */
	assert_int_equal(eo_kube_status_parse(404, "{\"kind\":\"Pod\",\"reason\":\"x\"}", 28, &err),
			 EO_KUBE_ENOTFOUND);
	assert_string_equal(err.reason, "");

	/* The mapping table. */
	assert_int_equal(eo_kube_err_from_http(200, NULL), EO_KUBE_OK);
	assert_int_equal(eo_kube_err_from_http(201, NULL), EO_KUBE_OK);
	assert_int_equal(eo_kube_err_from_http(400, NULL), EO_KUBE_EINVALID);
	assert_int_equal(eo_kube_err_from_http(401, NULL), EO_KUBE_EUNAUTHORIZED);
	assert_int_equal(eo_kube_err_from_http(403, NULL), EO_KUBE_EFORBIDDEN);
	assert_int_equal(eo_kube_err_from_http(422, NULL), EO_KUBE_EINVALID);
	assert_int_equal(eo_kube_err_from_http(429, NULL), EO_KUBE_ETHROTTLED);
	assert_int_equal(eo_kube_err_from_http(500, NULL), EO_KUBE_EUNAVAILABLE);
	assert_int_equal(eo_kube_err_from_http(504, NULL), EO_KUBE_ETIMEOUT);
	assert_int_equal(eo_kube_err_from_http(302, NULL), EO_KUBE_EHTTP);
	assert_true(eo_kube_err_retryable(EO_KUBE_EUNAVAILABLE));
	assert_false(eo_kube_err_retryable(EO_KUBE_EFORBIDDEN));
	for (int e = EO_KUBE_OK; e <= EO_KUBE_EHTTP; e++)
		assert_string_not_equal(eo_kube_strerror((eo_kube_err)e), "unknown error");

	/* Prefixing keeps the message bounded. */
	memset(&err, 0, sizeof(err));
	memset(err.message, 'x', sizeof(err.message) - 1);
	eo_kube_error_prefix(&err, "ctx");
	assert_int_equal(strlen(err.message), sizeof(err.message) - 1);
	assert_memory_equal(err.message, "ctx: xx", 7);
}

/* ---- fake apiserver -------------------------------------------------- */

struct seen {
	char method[16];
	char uri[1024];
	char path[512];
	char ctype[128];
	char auth[256];
	char body[4096];
};

struct server {
	pthread_mutex_t mu;
	struct seen last;
	int requests;
	int expire_continue; /* answer a continue page with 410 this many times */
	int delay_ms;
	const char *good_token; /* NULL: any */
};

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

static char *str(const char *s)
{
	return strdup(s);
}

static char *dump(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);

	json_decref(j);
	return s;
}

/* Five config maps served in pages of up to `limit`; the continue token is
 * the index of the next item. */
static char *list_page(const struct eo_kube_fake_request *rq, int *status, struct server *s)
{
	const char *lim = eo_kube_fake_arg(rq, "limit");
	const char *cont = eo_kube_fake_arg(rq, "continue");
	int start = cont ? atoi(cont) : 0, limit = lim ? atoi(lim) : 1000, i;
	json_t *items, *meta;

	if (cont && s->expire_continue > 0) {
		s->expire_continue--;
		*status = 410;
		return tu_status_body(410, "Expired", "continue token expired");
	}
	items = json_array();
	for (i = start; i < 5 && i < start + limit; i++) {
		char name[16];

		snprintf(name, sizeof(name), "cm-%d", i);
		json_array_append_new(items, json_pack("{s:{s:s}}", "metadata", "name", name));
	}
	meta = json_pack("{s:s}", "resourceVersion", i < 5 ? "100" : "101");
	if (i < 5) {
		char next[16];

		snprintf(next, sizeof(next), "%d", i);
		json_object_set_new(meta, "continue", json_string(next));
		json_object_set_new(meta, "remainingItemCount", json_integer(5 - i));
	}
	return dump(json_pack("{s:s, s:s, s:o, s:o}", "kind", "ConfigMapList", "apiVersion", "v1",
			      "metadata", meta, "items", items));
}

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct server *s = ud;
	const char *auth = eo_kube_fake_header(rq, "Authorization");

	pthread_mutex_lock(&s->mu);
	s->requests++;
	copy(s->last.method, sizeof(s->last.method), rq->method);
	copy(s->last.uri, sizeof(s->last.uri), rq->raw_uri);
	copy(s->last.path, sizeof(s->last.path), rq->path);
	copy(s->last.ctype, sizeof(s->last.ctype), eo_kube_fake_header(rq, "Content-Type"));
	copy(s->last.auth, sizeof(s->last.auth), auth);
	copy(s->last.body, sizeof(s->last.body), rq->body);
	if (s->delay_ms)
		usleep((useconds_t)s->delay_ms * 1000);

	if (s->good_token) {
		char want[128];

		snprintf(want, sizeof(want), "Bearer %s", s->good_token);
		if (!auth || strcmp(auth, want) != 0) {
			rs->status = 401;
			rs->body = tu_status_body(401, "Unauthorized", "Unauthorized");
			goto out;
		}
	}
	if (strcmp(rq->path, "/api/v1/namespaces/ns1/configmaps") == 0 &&
	    strcmp(rq->method, "GET") == 0) {
		rs->body = list_page(rq, &rs->status, s);
	} else if (strcmp(rq->path, "/api/v1/namespaces/ns1/configmaps") == 0 &&
		   strcmp(rq->method, "POST") == 0) {
		json_t *obj = json_loads(rq->body, 0, NULL);
		json_t *meta = json_object_get(obj, "metadata");
		const char *gen = json_string_value(json_object_get(meta, "generateName"));

		if (gen) {
			char name[128];

			snprintf(name, sizeof(name), "%sx7k2p", gen);
			json_object_set_new(meta, "name", json_string(name));
			json_object_set_new(meta, "resourceVersion", json_string("1"));
			rs->status = 201;
			rs->body = dump(obj);
		} else {
			json_decref(obj);
			rs->status = 409;
			rs->body =
			    tu_status_body(409, "AlreadyExists", "configmaps \"x\" already exists");
		}
	} else if (strcmp(rq->path, "/api/v1/namespaces/ns1/configmaps/cm") == 0) {
		if (strcmp(rq->method, "PUT") == 0) {
			json_t *obj = json_loads(rq->body, 0, NULL);

			if (strcmp(eo_meta_resource_version(obj), "7") != 0) {
				rs->status = 409;
				rs->body =
				    tu_status_body(409, "Conflict",
						   "the object has been modified; please apply "
						   "your changes to the latest version");
				json_decref(obj);
			} else {
				json_object_set_new(json_object_get(obj, "metadata"),
						    "resourceVersion", json_string("8"));
				rs->body = dump(obj);
			}
		} else if (strcmp(rq->method, "DELETE") == 0) {
			rs->body = tu_status_body(200, "", "deleted");
		} else {
			rs->body = str("{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\","
				       "\"resourceVersion\":\"7\"},\"data\":{\"k\":\"v\"}}");
		}
	} else if (strcmp(rq->path, "/api/v1/namespaces/ns1/pods/busy/eviction") == 0 &&
		   strcmp(rq->method, "POST") == 0) {
		/* As the apiserver answers when a PodDisruptionBudget allows no disruption. */
		rs->status = 429;
		rs->body =
		    tu_status_body(429, "TooManyRequests",
				   "Cannot evict pod as it would violate the pod's disruption "
				   "budget.");
	} else if (strcmp(rq->path, "/api/v1/namespaces/ns1/pods/m-1/eviction") == 0 &&
		   strcmp(rq->method, "POST") == 0) {
		rs->status = 201;
		rs->body = str("{\"kind\":\"Eviction\",\"apiVersion\":\"policy/v1\"}");
	} else if (strcmp(rq->path, "/apis/etcd-operator.cozystack.io/v1alpha2/namespaces/ns1/"
				    "etcdclusters/main/status") == 0) {
		rs->body = str("{\"kind\":\"EtcdCluster\",\"status\":{\"readyMembers\":3}}");
	} else if (strcmp(rq->path, "/big") == 0 ||
		   strcmp(rq->path, "/api/v1/namespaces/ns1/configmaps/big") == 0) {
		char *b = malloc(8192);

		memset(b, ' ', 8191);
		b[0] = '{';
		b[8190] = '}';
		b[8191] = '\0';
		rs->body = b;
	} else {
		rs->status = 404;
		rs->body = tu_status_body(404, "NotFound", "not found");
	}
out:
	pthread_mutex_unlock(&s->mu);
}

struct fixture {
	struct server srv;
	eo_kube_fake *fake;
	eo_kube_client *c;
};

static struct fixture *fixture_new(const char *token, const struct eo_kube_client_opts *opts)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	eo_kube_config *cfg = NULL;
	struct eo_kube_error err;

	assert_non_null(fx);
	pthread_mutex_init(&fx->srv.mu, NULL);
	fx->fake = eo_kube_fake_start(handler, &fx->srv);
	assert_non_null(fx->fake);
	assert_int_equal(eo_kube_config_new(eo_kube_fake_url(fx->fake), token, "ns1", &cfg, &err),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(cfg, opts, &fx->c, &err), EO_KUBE_OK);
	return fx;
}

static void fixture_free(struct fixture *fx)
{
	eo_kube_client_free(fx->c);
	eo_kube_fake_stop(fx->fake);
	pthread_mutex_destroy(&fx->srv.mu);
	free(fx);
}

static void test_get_sends_auth_and_parses(void **state)
{
	struct fixture *fx = fixture_new("tok-1", NULL);
	struct eo_kube_resource r = {"v1", "configmaps", "ns1", "cm"};
	struct eo_kube_resource missing = {"v1", "configmaps", "ns1", "nope"};
	struct eo_kube_error err;
	json_t *obj = NULL;

	(void)state;
	assert_int_equal(eo_kube_get(fx->c, &r, &obj, &err), EO_KUBE_OK);
	assert_string_equal(fx->srv.last.method, "GET");
	assert_string_equal(fx->srv.last.auth, "Bearer tok-1");
	assert_string_equal(eo_meta_resource_version(obj), "7");
	assert_string_equal(json_string_value(json_object_get(json_object_get(obj, "data"), "k")),
			    "v");
	json_decref(obj);

	assert_int_equal(eo_kube_get(fx->c, &missing, &obj, &err), EO_KUBE_ENOTFOUND);
	assert_null(obj);
	assert_int_equal(err.http_status, 404);
	assert_string_equal(err.reason, "NotFound");
	fixture_free(fx);
}

/*
 * The operator's client goes straight to the apiserver whatever the proxy environment says;
 * the plugin's (proxy_from_env) follows it, as kubectl does (issue 21 item 7). The proxy
 * named here listens nowhere, so a client that used it fails.
 */
static void test_proxy_environment(void **state)
{
	static const char *const vars[] = {"http_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"};
	struct eo_kube_client_opts plugin = {.proxy_from_env = true, .timeout_ms = 3000};
	struct eo_kube_resource r = {"v1", "configmaps", "ns1", "cm"};
	struct fixture *fx, *px;
	struct eo_kube_error err;
	json_t *obj = NULL;

	(void)state;
	fx = fixture_new("tok-1", NULL);
	px = fixture_new("tok-1", &plugin);
	unsetenv("no_proxy");
	unsetenv("NO_PROXY");
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		setenv(vars[i], "http://127.0.0.1:1", 1);
	assert_int_equal(eo_kube_get(fx->c, &r, &obj, &err), EO_KUBE_OK);
	json_decref(obj);
	obj = NULL;
	assert_int_not_equal(eo_kube_get(px->c, &r, &obj, &err), EO_KUBE_OK);
	assert_null(obj);
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	fixture_free(fx);
	fixture_free(px);
}

/* The header lines, the Authorization one with the token, are wiped before they are freed. */
static void test_headers_scrubbed(void **state)
{
	struct fixture *fx = fixture_new("tok-1", NULL);
	struct curl_slist *hdrs = NULL;
	struct eo_kube_error err;
	size_t lens[8] = {0}, n = 0;
	bool saw_auth = false;
	CURL *h = curl_easy_init();

	(void)state;
	assert_non_null(h);
	assert_int_equal(eo__kube_easy_setup(fx->c, h, "very-secret-token", &hdrs, false, &err),
			 EO_KUBE_OK);
	for (struct curl_slist *l = hdrs; l != NULL && n < 8; l = l->next, n++) {
		lens[n] = strlen(l->data);
		saw_auth |= strcmp(l->data, "Authorization: Bearer very-secret-token") == 0;
	}
	assert_true(saw_auth);
	eo__kube_headers_scrub(hdrs);
	n = 0;
	for (struct curl_slist *l = hdrs; l != NULL && n < 8; l = l->next, n++)
		for (size_t i = 0; i < lens[n]; i++)
			if (l->data[i] != '\0')
				fail_msg("header %zu byte %zu not wiped", n, i);
	eo__kube_headers_free(hdrs);
	eo__kube_headers_free(NULL);
	curl_easy_cleanup(h);
	fixture_free(fx);
}

static void test_list_pagination_merge(void **state)
{
	struct fixture *fx = fixture_new(NULL, NULL);
	struct eo_kube_resource r = {"v1", "configmaps", "ns1", NULL};
	struct eo_kube_list_opts lo = {.label_selector = "app=etcd,tier in (db)", .limit = 2};
	struct eo_kube_error err;
	json_t *list = NULL, *items;

	(void)state;
	assert_int_equal(eo_kube_list(fx->c, &r, &lo, &list, &err), EO_KUBE_OK);
	assert_int_equal(fx->srv.requests, 3);
	/* The last page still carried the selector and the limit. */
	assert_non_null(
	    strstr(fx->srv.last.uri, "labelSelector=app%3Detcd%2Ctier%20in%20%28db%29"));
	assert_non_null(strstr(fx->srv.last.uri, "limit=2"));
	assert_non_null(strstr(fx->srv.last.uri, "continue=4"));
	items = json_object_get(list, "items");
	assert_int_equal(json_array_size(items), 5);
	for (size_t i = 0; i < 5; i++) {
		char want[16];

		snprintf(want, sizeof(want), "cm-%zu", i);
		assert_string_equal(eo_meta_name(json_array_get(items, i)), want);
	}
	assert_string_equal(json_string_value(json_object_get(json_object_get(list, "metadata"),
							      "resourceVersion")),
			    "101");
	assert_null(json_object_get(json_object_get(list, "metadata"), "continue"));
	assert_string_equal(json_string_value(json_object_get(list, "kind")), "ConfigMapList");
	json_decref(list);

	/* An expired continue token restarts the list once, unpaged. */
	fx->srv.requests = 0;
	fx->srv.expire_continue = 1;
	assert_int_equal(eo_kube_list(fx->c, &r, &lo, &list, &err), EO_KUBE_OK);
	assert_int_equal(fx->srv.requests, 3); /* page 1, expired page 2, full list */
	assert_null(strstr(fx->srv.last.uri, "limit="));
	assert_int_equal(json_array_size(json_object_get(list, "items")), 5);
	json_decref(list);

	/* Without a limit there is one request. */
	fx->srv.requests = 0;
	assert_int_equal(eo_kube_list(fx->c, &r, NULL, &list, &err), EO_KUBE_OK);
	assert_int_equal(fx->srv.requests, 1);
	assert_int_equal(json_array_size(json_object_get(list, "items")), 5);
	json_decref(list);
	fixture_free(fx);
}

/* A merged LIST is capped as a whole, not only page by page. */
static void test_list_total_cap(void **state)
{
	struct eo_kube_client_opts opts = {.max_list = 100};
	struct fixture *fx = fixture_new(NULL, &opts);
	struct eo_kube_resource r = {"v1", "configmaps", "ns1", NULL};
	struct eo_kube_list_opts lo = {.limit = 2};
	struct eo_kube_error err;
	json_t *list = NULL;

	(void)state;
	assert_int_equal(eo_kube_list(fx->c, &r, &lo, &list, &err), EO_KUBE_ETOOLARGE);
	assert_null(list);
	assert_non_null(strstr(err.message, "list exceeds its cap of 100 bytes"));
	/* The cap counts items as they are decoded, so one unpaged response is capped too. */
	assert_int_equal(eo_kube_list(fx->c, &r, NULL, &list, &err), EO_KUBE_ETOOLARGE);
	assert_null(list);
	fixture_free(fx);
}

static void test_create_generate_name_and_exists(void **state)
{
	struct fixture *fx = fixture_new(NULL, NULL);
	struct eo_kube_resource r = {"v1", "configmaps", NULL, NULL};
	struct eo_kube_error err;
	json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
				"metadata", "generateName", "main-", "namespace", "ns1");
	json_t *named = json_pack("{s:{s:s, s:s}}", "metadata", "name", "x", "namespace", "ns1");
	json_t *out = NULL;

	(void)state;
	assert_int_equal(eo_kube_create(fx->c, &r, obj, &out, &err), EO_KUBE_OK);
	assert_string_equal(fx->srv.last.method, "POST");
	assert_string_equal(fx->srv.last.path, "/api/v1/namespaces/ns1/configmaps");
	assert_string_equal(fx->srv.last.ctype, "application/json");
	assert_string_equal(eo_meta_name(out), "main-x7k2p");
	/* The argument is borrowed and left untouched. */
	assert_null(eo_meta_name(obj));
	json_decref(out);

	assert_int_equal(eo_kube_create(fx->c, &r, named, &out, &err), EO_KUBE_EEXISTS);
	assert_null(out);
	assert_string_equal(err.reason, "AlreadyExists");
	json_decref(obj);
	json_decref(named);
	fixture_free(fx);
}

static void test_update_conflict_is_a_result(void **state)
{
	struct fixture *fx = fixture_new(NULL, NULL);
	struct eo_kube_resource r = {"v1", "configmaps", "ns1", NULL};
	struct eo_kube_error err;
	json_t *stale =
	    json_pack("{s:{s:s, s:s}}", "metadata", "name", "cm", "resourceVersion", "6");
	json_t *fresh =
	    json_pack("{s:{s:s, s:s}}", "metadata", "name", "cm", "resourceVersion", "7");
	json_t *out = NULL;

	(void)state;
	assert_int_equal(eo_kube_update(fx->c, &r, stale, &out, &err), EO_KUBE_ECONFLICT);
	assert_null(out);
	assert_int_equal(err.http_status, 409);
	assert_string_equal(err.reason, "Conflict");
	assert_non_null(strstr(err.message, "modified"));
	assert_string_equal(fx->srv.last.method, "PUT");
	assert_string_equal(fx->srv.last.path, "/api/v1/namespaces/ns1/configmaps/cm");

	assert_int_equal(eo_kube_update(fx->c, &r, fresh, &out, &err), EO_KUBE_OK);
	assert_string_equal(eo_meta_resource_version(out), "8");
	json_decref(out);
	json_decref(stale);
	json_decref(fresh);
	fixture_free(fx);
}

static void test_patch_and_status(void **state)
{
	struct fixture *fx = fixture_new(NULL, NULL);
	struct eo_kube_resource ec = {"etcd-operator.cozystack.io/v1alpha2", "etcdclusters", "ns1",
				      "main"};
	struct eo_kube_resource cm = {"v1", "configmaps", "ns1", "cm"};
	struct eo_kube_error err;
	json_t *patch = json_pack("{s:{s:i}}", "status", "readyMembers", 3);
	json_t *out = NULL;

	(void)state;
	assert_int_equal(eo_kube_patch_status(fx->c, &ec, patch, &out, &err), EO_KUBE_OK);
	assert_string_equal(fx->srv.last.method, "PATCH");
	assert_string_equal(fx->srv.last.ctype, "application/merge-patch+json");
	assert_string_equal(fx->srv.last.path, "/apis/etcd-operator.cozystack.io/v1alpha2/"
					       "namespaces/ns1/etcdclusters/main/status");
	assert_string_equal(fx->srv.last.body, "{\"status\":{\"readyMembers\":3}}");
	json_decref(out);

	assert_int_equal(eo_kube_patch(fx->c, &cm, patch, NULL, &err), EO_KUBE_OK);
	assert_string_equal(fx->srv.last.path, "/api/v1/namespaces/ns1/configmaps/cm");
	assert_string_equal(fx->srv.last.ctype, "application/merge-patch+json");

	assert_int_equal(eo_kube_update_status(fx->c, &ec, patch, &out, &err), EO_KUBE_OK);
	assert_string_equal(fx->srv.last.method, "PUT");
	assert_string_equal(fx->srv.last.path, "/apis/etcd-operator.cozystack.io/v1alpha2/"
					       "namespaces/ns1/etcdclusters/main/status");
	json_decref(out);
	json_decref(patch);
	fixture_free(fx);
}

static void test_delete_options(void **state)
{
	struct fixture *fx = fixture_new(NULL, NULL);
	struct eo_kube_resource cm = {"v1", "configmaps", "ns1", "cm"};
	struct eo_kube_delete_opts o = {.propagation_policy = "Foreground",
					.uid = "u-1",
					.resource_version = "7",
					.grace_period_seconds = -1};
	struct eo_kube_error err;
	json_t *body, *want;

	(void)state;
	assert_int_equal(eo_kube_delete(fx->c, &cm, &o, &err), EO_KUBE_OK);
	assert_string_equal(fx->srv.last.method, "DELETE");
	body = json_loads(fx->srv.last.body, 0, NULL);
	want = json_pack("{s:s, s:s, s:s, s:{s:s, s:s}}", "kind", "DeleteOptions", "apiVersion",
			 "v1", "propagationPolicy", "Foreground", "preconditions", "uid", "u-1",
			 "resourceVersion", "7");
	assert_true(json_equal(body, want));
	json_decref(body);
	json_decref(want);

	o.propagation_policy = NULL;
	o.uid = NULL;
	o.resource_version = NULL;
	o.grace_period_seconds = 0;
	assert_int_equal(eo_kube_delete(fx->c, &cm, &o, &err), EO_KUBE_OK);
	body = json_loads(fx->srv.last.body, 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(body, "gracePeriodSeconds")), 0);
	assert_null(json_object_get(body, "preconditions"));
	json_decref(body);

	cm.name = "gone";
	assert_int_equal(eo_kube_delete(fx->c, &cm, NULL, &err), EO_KUBE_ENOTFOUND);
	cm.name = NULL;
	assert_int_equal(eo_kube_delete(fx->c, &cm, NULL, &err), EO_KUBE_EINVALID);
	fixture_free(fx);
}

/*
 * A Pod is evicted through its eviction subresource with the UID precondition; a refusal by a
 * PodDisruptionBudget (429) comes back as EO_KUBE_ETHROTTLED with the apiserver's message,
 * and is not retried by the client.
 */
static void test_evict(void **state)
{
	struct fixture *fx = fixture_new(NULL, NULL);
	struct eo_kube_error err;
	json_t *body, *want;

	(void)state;
	assert_int_equal(eo_kube_evict(fx->c, "ns1", "m-1", "u-1", &err), EO_KUBE_OK);
	assert_string_equal(fx->srv.last.method, "POST");
	assert_string_equal(fx->srv.last.path, "/api/v1/namespaces/ns1/pods/m-1/eviction");
	assert_string_equal(fx->srv.last.ctype, "application/json");
	body = json_loads(fx->srv.last.body, 0, NULL);
	want = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}}}", "apiVersion", "policy/v1", "kind",
			 "Eviction", "metadata", "name", "m-1", "namespace", "ns1", "deleteOptions",
			 "preconditions", "uid", "u-1");
	assert_true(json_equal(body, want));
	json_decref(body);
	json_decref(want);

	/* Without a UID: no deleteOptions at all. */
	assert_int_equal(eo_kube_evict(fx->c, "ns1", "m-1", NULL, &err), EO_KUBE_OK);
	body = json_loads(fx->srv.last.body, 0, NULL);
	assert_null(json_object_get(body, "deleteOptions"));
	json_decref(body);

	/* The budget refuses: one request, a result to wait on, the reason kept. */
	fx->srv.requests = 0;
	assert_int_equal(eo_kube_evict(fx->c, "ns1", "busy", "u-2", &err), EO_KUBE_ETHROTTLED);
	assert_int_equal(fx->srv.requests, 1);
	assert_int_equal(err.http_status, 429);
	assert_non_null(strstr(err.message, "disruption budget"));

	assert_int_equal(eo_kube_evict(fx->c, "ns1", "gone", "u-3", &err), EO_KUBE_ENOTFOUND);
	assert_int_equal(eo_kube_evict(fx->c, "ns1", NULL, "u-3", &err), EO_KUBE_EINVALID);
	assert_int_equal(eo_kube_evict(fx->c, "", "m-1", "u-3", &err), EO_KUBE_EINVALID);
	fixture_free(fx);
}

/* Out of memory while building DeleteOptions: the call fails with ENOMEM and
 * sends nothing, or it sends the uid precondition; never a DELETE without it. */
static void test_delete_out_of_memory(void **state)
{
	struct fixture *fx = fixture_new(NULL, NULL);
	struct eo_kube_resource cm = {"v1", "configmaps", "ns1", "cm"};
	struct eo_kube_delete_opts o = {
	    .propagation_policy = "Foreground", .uid = "u-1", .grace_period_seconds = 5};
	struct eo_kube_error err;
	int enomem = 0, at;

	(void)state;
	for (at = 1; at < 200; at++) {
		int before = fx->srv.requests, n;
		eo_kube_err e;

		tu_json_alloc_fail_at(at);
		e = eo_kube_delete(fx->c, &cm, &o, &err);
		n = tu_json_alloc_count();
		tu_json_alloc_fail_at(0);
		if (e == EO_KUBE_ENOMEM) {
			enomem++;
			assert_int_equal(fx->srv.requests, before);
			continue;
		}
		assert_int_equal(e, EO_KUBE_OK);
		assert_int_equal(fx->srv.requests, before + 1);
		assert_string_equal(fx->srv.last.method, "DELETE");
		assert_non_null(strstr(fx->srv.last.body, "\"uid\":\"u-1\""));
		assert_non_null(strstr(fx->srv.last.body, "\"gracePeriodSeconds\":5"));
		assert_non_null(strstr(fx->srv.last.body, "\"propagationPolicy\":\"Foreground\""));
		if (n < at)
			break; /* no allocation failed this time: every step was tried */
	}
	assert_true(at < 200);
	assert_true(enomem >= 5); /* pack, three values, preconditions */
	fixture_free(fx);
}

static void test_401_rereads_token_file(void **state)
{
	struct server srv = {.good_token = "rotated"};
	eo_kube_fake *fake;
	eo_kube_config *cfg = NULL;
	eo_kube_client *c = NULL;
	struct eo_kube_error err;
	struct eo_kube_resource r = {"v1", "configmaps", "ns1", "cm"};
	char dir[] = "/tmp/eo-kc401-XXXXXX", path[128], kc[512], cmd[128];
	json_t *obj = NULL;
	FILE *f;

	(void)state;
	pthread_mutex_init(&srv.mu, NULL);
	fake = eo_kube_fake_start(handler, &srv);
	assert_non_null(fake);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/token", dir);
	f = fopen(path, "w");
	fputs("original\n", f);
	fclose(f);
	snprintf(kc, sizeof(kc),
		 "current-context: x\n"
		 "clusters: [{name: c, cluster: {server: '%s'}}]\n"
		 "users: [{name: u, user: {tokenFile: %s}}]\n"
		 "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
		 eo_kube_fake_url(fake), path);
	assert_int_equal(eo_kube_config_parse_kubeconfig(kc, strlen(kc), NULL, NULL, &cfg, &err),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(cfg, NULL, &c, &err), EO_KUBE_OK);

	/* Still the old token on disk: 401, and the message holds no token. */
	assert_int_equal(eo_kube_get(c, &r, &obj, &err), EO_KUBE_EUNAUTHORIZED);
	assert_int_equal(srv.requests, 2); /* retried once after re-reading */
	assert_null(strstr(err.message, "original"));

	/* Rotate: the first request still carries the cached token, gets 401,
	 * re-reads the file and succeeds. */
	f = fopen(path, "w");
	fputs("rotated\n", f);
	fclose(f);
	srv.requests = 0;
	assert_int_equal(eo_kube_get(c, &r, &obj, &err), EO_KUBE_OK);
	assert_string_equal(srv.last.auth, "Bearer rotated");
	json_decref(obj);

	eo_kube_client_free(c);
	eo_kube_fake_stop(fake);
	pthread_mutex_destroy(&srv.mu);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* An exec plugin's token: a 401 runs the plugin again, once per request. */
static void test_401_reruns_exec_plugin(void **state)
{
	struct server srv = {.good_token = "rotated"};
	eo_kube_fake *fake;
	eo_kube_config *cfg = NULL;
	eo_kube_client *c = NULL;
	struct eo_kube_error err;
	struct eo_kube_resource r = {"v1", "configmaps", "ns1", "cm"};
	char dir[] = "/tmp/eo-kcexec-XXXXXX", path[128], kc[1024], cmd[128];
	json_t *obj = NULL;
	FILE *f;

	(void)state;
	pthread_mutex_init(&srv.mu, NULL);
	fake = eo_kube_fake_start(handler, &srv);
	assert_non_null(fake);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/plugin.sh", dir);
	f = fopen(path, "w");
	fputs(
	    "#!/bin/sh\n"
	    "echo x >> \"$D/runs\"\n"
	    "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
	    "\"status\":{\"token\":\"'$(cat \"$D/tok\")'\"}}'\n",
	    f);
	fclose(f);
	assert_int_equal(chmod(path, 0700), 0);
	snprintf(cmd, sizeof(cmd), "echo original > %s/tok", dir);
	assert_int_equal(system(cmd), 0);
	snprintf(kc, sizeof(kc),
		 "current-context: x\n"
		 "clusters: [{name: c, cluster: {server: '%s'}}]\n"
		 "users: [{name: u, user: {exec: {command: %s, interactiveMode: Never, "
		 "apiVersion: client.authentication.k8s.io/v1, env: [{name: D, value: %s}]}}}]\n"
		 "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
		 eo_kube_fake_url(fake), path, dir);
	assert_int_equal(eo_kube_config_parse_kubeconfig(kc, strlen(kc), NULL, NULL, &cfg, &err),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(cfg, NULL, &c, &err), EO_KUBE_OK);

	assert_int_equal(eo_kube_get(c, &r, &obj, &err), EO_KUBE_EUNAUTHORIZED);
	assert_int_equal(srv.requests, 2); /* retried once, with the plugin run again */
	assert_null(strstr(err.message, "original"));

	snprintf(cmd, sizeof(cmd), "echo rotated > %s/tok", dir);
	assert_int_equal(system(cmd), 0);
	srv.requests = 0;
	assert_int_equal(eo_kube_get(c, &r, &obj, &err), EO_KUBE_OK);
	assert_string_equal(srv.last.auth, "Bearer rotated");
	json_decref(obj);
	/* Runs: the first request and its retry, the second request's retry; the third request
	 * uses the cached token. */
	srv.requests = 0;
	assert_int_equal(eo_kube_get(c, &r, &obj, &err), EO_KUBE_OK);
	assert_int_equal(srv.requests, 1);
	json_decref(obj);
	snprintf(cmd, sizeof(cmd), "test $(wc -l < %s/runs) -eq 3", dir);
	assert_int_equal(system(cmd), 0);

	eo_kube_client_free(c);
	eo_kube_fake_stop(fake);
	pthread_mutex_destroy(&srv.mu);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_body_cap_and_timeout(void **state)
{
	struct eo_kube_client_opts opts = {.max_body = 4096, .timeout_ms = 300};
	struct fixture *fx = fixture_new(NULL, &opts);
	struct eo_kube_resource big = {"v1", "configmaps", "ns1", "big"};
	struct eo_kube_resource cm = {"v1", "configmaps", "ns1", "cm"};
	struct eo_kube_error err;
	json_t *obj = NULL;

	(void)state;
	assert_int_equal(eo_kube_get(fx->c, &big, &obj, &err), EO_KUBE_ETOOLARGE);
	assert_null(obj);

	fx->srv.delay_ms = 900;
	assert_int_equal(eo_kube_get(fx->c, &cm, &obj, &err), EO_KUBE_ETIMEOUT);
	assert_null(obj);
	fixture_free(fx);
}

/* The largest cap works like no cap: "max + 1" in the buffer growth must not wrap to 0. */
static void test_body_cap_size_max(void **state)
{
	struct eo_kube_client_opts opts = {.max_body = SIZE_MAX};
	struct fixture *fx = fixture_new(NULL, &opts);
	struct eo_kube_resource cm = {"v1", "configmaps", "ns1", "cm"};
	struct eo_kube_error err;
	json_t *obj = NULL;

	(void)state;
	assert_int_equal(eo_kube_get(fx->c, &cm, &obj, &err), EO_KUBE_OK);
	assert_string_equal(eo_meta_resource_version(obj), "7");
	json_decref(obj);
	fixture_free(fx);
}

static void test_connection_refused(void **state)
{
	eo_kube_config *cfg = NULL;
	eo_kube_client *c = NULL;
	struct eo_kube_error err;
	struct eo_kube_resource cm = {"v1", "configmaps", "ns1", "cm"};
	json_t *obj = NULL;

	(void)state;
	/* Port 1 on loopback: nothing listens there. */
	assert_int_equal(eo_kube_config_new("http://127.0.0.1:1", NULL, NULL, &cfg, &err),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(cfg, NULL, &c, &err), EO_KUBE_OK);
	assert_int_equal(eo_kube_get(c, &cm, &obj, &err), EO_KUBE_EUNAVAILABLE);
	assert_int_equal(err.http_status, 0);
	assert_true(err.message[0] != '\0');
	eo_kube_client_free(c);
}

struct worker_arg {
	eo_kube_client *c;
	int ok;
};

static void *worker(void *p)
{
	struct worker_arg *a = p;
	struct eo_kube_resource r = {"v1", "configmaps", "ns1", "cm"};
	struct eo_kube_error err;

	for (int i = 0; i < 25; i++) {
		json_t *obj = NULL;

		if (eo_kube_get(a->c, &r, &obj, &err) == EO_KUBE_OK &&
		    strcmp(eo_meta_name(obj), "cm") == 0)
			a->ok++;
		json_decref(obj);
	}
	return NULL;
}

static void test_concurrent_calls(void **state)
{
	struct fixture *fx = fixture_new("t", NULL);
	pthread_t th[4];
	struct worker_arg args[4];

	(void)state;
	for (int i = 0; i < 4; i++) {
		args[i].c = fx->c;
		args[i].ok = 0;
		assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(args[i].ok, 25);
	}
	assert_int_equal(fx->srv.requests, 100);
	fixture_free(fx);
}

TU_MAIN(test_url_building, test_escape_edges, test_status_parsing, test_get_sends_auth_and_parses,
	test_headers_scrubbed, test_proxy_environment, test_list_pagination_merge,
	test_list_total_cap, test_create_generate_name_and_exists, test_update_conflict_is_a_result,
	test_patch_and_status, test_delete_options, test_delete_out_of_memory, test_evict,
	test_401_rereads_token_file, test_401_reruns_exec_plugin, test_body_cap_and_timeout,
	test_body_cap_size_max, test_connection_refused, test_concurrent_calls)
