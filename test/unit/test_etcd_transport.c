/*
 * Unit tests of the etcd client's request path (src/etcd/client.c) against
 * in-process fake gateways (libmicrohttpd): failover order, learner marks,
 * no resend of writes with an unknown outcome, timeouts, the body cap, the
 * auth header and what goes on the wire.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "etcd/client.h"

/* ---- fake gateway ----------------------------------------------------------- */

#define MAX_ROUTES 8

struct route {
	const char *path; /* e.g. "/v3/cluster/member/list"; NULL ends the table */
	int status;
	const char *body;
};

struct fake {
	struct MHD_Daemon *d;
	char url[64];
	struct route routes[MAX_ROUTES];
	bool learner;	    /* refuse like a learner (3.6 shape) */
	long delay_ms;	    /* before answering */
	size_t huge;	    /* answer with this many bytes instead */
	pthread_mutex_t mu; /* guards what follows */
	int hits;
	char last_path[128];
	char last_body[4096];
	char last_auth[256];
};

struct upload {
	char buf[4096];
	size_t len;
};

static const char learner_refusal[] =
    "{\"code\":9,\"message\":\"etcdserver: rpc not supported for learner\"}";
static const char learner_status[] =
    "{\"header\":{\"member_id\":\"2\"},\"version\":\"3.6.16\",\"leader\":\"1\","
    "\"isLearner\":true}";

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct fake *f = cls;
	struct upload *up = *con_cls;
	struct MHD_Response *resp;
	const char *auth, *body = "{}";
	char *big = NULL;
	int status = 404;
	enum MHD_Result ret;

	(void)method;
	(void)version;
	if (up == NULL) {
		up = calloc(1, sizeof(*up));
		if (up == NULL)
			return MHD_NO;
		*con_cls = up;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		size_t n = *upload_data_size;

		if (n > sizeof(up->buf) - 1 - up->len)
			n = sizeof(up->buf) - 1 - up->len;
		memcpy(up->buf + up->len, upload_data, n);
		up->len += n;
		up->buf[up->len] = '\0';
		*upload_data_size = 0;
		return MHD_YES;
	}
	auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	pthread_mutex_lock(&f->mu);
	f->hits++;
	snprintf(f->last_path, sizeof(f->last_path), "%s", url);
	snprintf(f->last_body, sizeof(f->last_body), "%s", up->buf);
	snprintf(f->last_auth, sizeof(f->last_auth), "%s", auth ? auth : "");
	pthread_mutex_unlock(&f->mu);

	if (f->delay_ms > 0)
		usleep((useconds_t)f->delay_ms * 1000);
	if (f->learner && strcmp(url, "/v3/maintenance/status") == 0) {
		status = 200;
		body = learner_status;
	} else if (f->learner && !(strcmp(url, "/v3/kv/range") == 0 &&
				   strstr(up->buf, "\"serializable\":true") != NULL)) {
		status = 400;
		body = learner_refusal;
	} else {
		body = "Not Found";
		for (size_t i = 0; i < MAX_ROUTES && f->routes[i].path != NULL; i++) {
			if (strcmp(f->routes[i].path, url) == 0) {
				status = f->routes[i].status;
				body = f->routes[i].body;
				break;
			}
		}
	}
	if (f->huge > 0) {
		big = malloc(f->huge);
		if (big == NULL)
			return MHD_NO;
		memset(big, ' ', f->huge);
		resp = MHD_create_response_from_buffer(f->huge, big, MHD_RESPMEM_MUST_FREE);
	} else {
		resp = MHD_create_response_from_buffer(strlen(body), (void *)body,
						       MHD_RESPMEM_PERSISTENT);
	}
	ret = MHD_queue_response(conn, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)conn;
	(void)toe;
	free(*con_cls);
	*con_cls = NULL;
}

static struct fake *fake_start(void)
{
	struct fake *f = calloc(1, sizeof(*f));
	const union MHD_DaemonInfo *info;

	assert_non_null(f);
	pthread_mutex_init(&f->mu, NULL);
	f->d = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG, 0,
	    NULL, NULL, on_request, f, MHD_OPTION_NOTIFY_COMPLETED, on_completed, f,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
	assert_non_null(f->d);
	info = MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT);
	assert_non_null(info);
	snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u", (unsigned)info->port);
	return f;
}

static void fake_stop(struct fake *f)
{
	if (f == NULL)
		return;
	MHD_stop_daemon(f->d);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

static int hits(struct fake *f)
{
	int n;

	pthread_mutex_lock(&f->mu);
	n = f->hits;
	pthread_mutex_unlock(&f->mu);
	return n;
}

static void route(struct fake *f, const char *path, int status, const char *body)
{
	for (size_t i = 0; i < MAX_ROUTES; i++) {
		if (f->routes[i].path == NULL || strcmp(f->routes[i].path, path) == 0) {
			f->routes[i] = (struct route){path, status, body};
			return;
		}
	}
	fail_msg("too many routes");
}

/* A URL on which nothing listens. */
static void closed_url(char *out, size_t cap)
{
	struct fake *f = fake_start();

	snprintf(out, cap, "%s", f->url);
	fake_stop(f);
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static eo_etcd_client *client(const char *const *eps, size_t n, long timeout_ms, size_t max_body)
{
	struct eo_etcd_config cfg = {
	    .endpoints = eps,
	    .n_endpoints = n,
	    .timeout_ms = timeout_ms,
	    .max_body = max_body,
	};
	eo_etcd_client *c = NULL;
	struct eo_etcd_detail d;

	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
	return c;
}

/* A voter's member list naming `learner_url` as a learner's client URL. */
static char members_body[512];

static const char *members_with_learner(const char *voter_url, const char *learner_url)
{
	snprintf(members_body, sizeof(members_body),
		 "{\"header\":{\"cluster_id\":\"7\",\"member_id\":\"1\"},\"members\":["
		 "{\"ID\":\"1\",\"name\":\"a\",\"clientURLs\":[\"%s\"]},"
		 "{\"ID\":\"2\",\"name\":\"b\",\"clientURLs\":[\"%s\"],\"isLearner\":true}]}",
		 voter_url, learner_url);
	return members_body;
}

static int group_setup(void **state)
{
	(void)state;
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	curl_global_cleanup();
	return 0;
}

/* ---- tests ------------------------------------------------------------------- */

static void test_learner_skipped_and_remembered(void **state)
{
	struct fake *l = fake_start(), *v = fake_start();
	const char *eps[] = {l->url, v->url};
	eo_etcd_client *c;
	struct eo_etcd_members ms = {0};
	struct eo_etcd_detail d;

	(void)state;
	l->learner = true;
	route(v, "/v3/cluster/member/list", 200, members_with_learner(v->url, l->url));
	c = client(eps, 2, 2000, 0);

	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_OK);
	assert_string_equal(d.endpoint, v->url);
	assert_int_equal(ms.n, 2);
	assert_int_equal(hits(l), 1);
	assert_true(eo_etcd_client_endpoint_is_learner(c, 0));
	assert_false(eo_etcd_client_endpoint_is_learner(c, 1));
	eo_etcd_members_clear(&ms);

	/* Known now: the learner is not asked again. */
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_OK);
	assert_int_equal(hits(l), 1);
	assert_int_equal(hits(v), 2);
	eo_etcd_members_clear(&ms);
	/* Serializable reads may go to it. */
	route(l, "/v3/kv/range", 200, "{}");
	assert_int_equal(eo_etcd_range(c, "k", 1,
				       &(struct eo_etcd_range_opts){.serializable = true},
				       &(struct eo_etcd_range){0}, &d),
			 EO_ETCD_OK);
	assert_string_equal(d.endpoint, l->url);

	eo_etcd_client_free(c);
	fake_stop(l);
	fake_stop(v);
}

static void test_only_learners(void **state)
{
	struct fake *l = fake_start();
	const char *eps[] = {l->url};
	eo_etcd_client *c;
	struct eo_etcd_members ms = {0};
	struct eo_etcd_detail d;

	(void)state;
	l->learner = true;
	c = client(eps, 1, 2000, 0);
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_LEARNER);
	assert_int_equal(d.grpc_code, 9);
	assert_int_equal(d.http_status, 400);
	assert_int_equal(hits(l), 1);
	/* Second time only a status re-check is sent, never the member call. */
	assert_int_equal(eo_etcd_member_remove(c, 5, NULL, &d), EO_ETCD_LEARNER);
	assert_int_equal(hits(l), 2);
	assert_string_equal(l->last_path, "/v3/maintenance/status");
	assert_true(strstr(d.message, "learner") != NULL);
	/* Health on a learner: a serializable read after the refusal. */
	route(l, "/v3/kv/range", 200, "{}");
	assert_int_equal(eo_etcd_health(c, l->url, &d), EO_ETCD_OK);
	assert_true(strstr(l->last_body, "serializable") != NULL);
	assert_int_equal(hits(l), 3); /* already known: no linearizable attempt */
	eo_etcd_client_free(c);
	fake_stop(l);
}

static void test_unknown_outcome_write_not_resent(void **state)
{
	struct fake *a = fake_start(), *b = fake_start();
	const char *eps[] = {a->url, b->url};
	eo_etcd_client *c;
	struct eo_etcd_member added = {0};
	struct eo_etcd_members ms = {0};
	struct eo_etcd_detail d;
	const char *peers[] = {"http://new:2380"};

	(void)state;
	route(a, "/v3/cluster/member/add", 503,
	      "{\"code\":14,\"message\":\"etcdserver: request timed out\"}");
	route(a, "/v3/cluster/member/list", 503,
	      "{\"code\":14,\"message\":\"etcdserver: request timed out\"}");
	route(b, "/v3/cluster/member/list", 200, "{\"members\":[{\"ID\":\"1\"}]}");
	c = client(eps, 2, 2000, 0);
	assert_int_equal(eo_etcd_member_add(c, peers, 1, true, &added, NULL, &d), EO_ETCD_TIMEOUT);
	assert_string_equal(d.endpoint, a->url);
	assert_int_equal(hits(b), 0);
	/* A read is retried elsewhere; a is now at the back of the queue. */
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_OK);
	assert_string_equal(d.endpoint, b->url);
	assert_int_equal(hits(a), 1);
	eo_etcd_members_clear(&ms);
	eo_etcd_client_free(c);
	fake_stop(a);
	fake_stop(b);
}

static void test_undelivered_write_fails_over(void **state)
{
	char dead[64];
	struct fake *b = fake_start(), *nogw = fake_start();
	const char *eps[] = {dead, nogw->url, b->url};
	eo_etcd_client *c;
	struct eo_etcd_detail d;
	int64_t rev = 0;

	(void)state;
	closed_url(dead, sizeof(dead));
	/* nogw has no routes: a plain 404, as with the gateway disabled. */
	route(b, "/v3/kv/put", 200, "{\"header\":{\"revision\":\"9\"}}");
	c = client(eps, 3, 2000, 0);
	assert_int_equal(eo_etcd_put(c, "k", 1, "v", 1, &rev, &d), EO_ETCD_OK);
	assert_true(rev == 9);
	assert_int_equal(hits(nogw), 1);
	assert_string_equal(b->last_path, "/v3/kv/put");
	assert_string_equal(b->last_body, "{\"key\":\"aw==\",\"value\":\"dg==\"}");
	eo_etcd_client_free(c);
	fake_stop(b);
	fake_stop(nogw);
}

static void test_semantic_error_not_retried(void **state)
{
	struct fake *a = fake_start(), *b = fake_start();
	const char *eps[] = {a->url, b->url};
	eo_etcd_client *c;
	struct eo_etcd_members ms = {0};
	struct eo_etcd_detail d;

	(void)state;
	route(a, "/v3/cluster/member/remove", 404,
	      "{\"error\":\"etcdserver: member not found\",\"code\":5,"
	      "\"message\":\"etcdserver: member not found\"}");
	route(a, "/v3/cluster/member/promote", 400,
	      "{\"code\":9,\"message\":\"etcdserver: can only promote a learner member which is "
	      "in sync with leader\"}");
	c = client(eps, 2, 2000, 0);
	assert_int_equal(eo_etcd_member_remove(c, 13847567121247652255ull, &ms, &d),
			 EO_ETCD_NOTFOUND);
	assert_string_equal(a->last_body, "{\"ID\":\"13847567121247652255\"}");
	assert_int_equal(d.grpc_code, 5);
	assert_int_equal(d.http_status, 404);
	assert_string_equal(d.message, "etcdserver: member not found");
	assert_int_equal(eo_etcd_member_promote(c, 3, NULL, &d), EO_ETCD_LEARNER_NOT_READY);
	assert_int_equal(hits(b), 0);
	assert_int_equal(ms.n, 0);
	/* Invalid arguments never reach the wire. */
	assert_int_equal(eo_etcd_member_remove(c, 0, NULL, &d), EO_ETCD_INVALID);
	assert_int_equal(
	    eo_etcd_member_add(c, NULL, 0, true, &(struct eo_etcd_member){0}, NULL, &d),
	    EO_ETCD_INVALID);
	assert_int_equal(hits(a), 2);
	eo_etcd_client_free(c);
	fake_stop(a);
	fake_stop(b);
}

static void test_timeout_then_failover(void **state)
{
	struct fake *slow = fake_start(), *b = fake_start();
	const char *eps[] = {slow->url, b->url};
	eo_etcd_client *c;
	struct eo_etcd_status st = {0};
	struct eo_etcd_members ms = {0};
	struct eo_etcd_detail d;
	int64_t t0;

	(void)state;
	slow->delay_ms = 1500;
	route(b, "/v3/cluster/member/list", 200, "{}");
	c = client(eps, 2, 300, 0);
	t0 = mono_ms();
	assert_int_equal(eo_etcd_status(c, slow->url, &st, &d), EO_ETCD_TIMEOUT);
	assert_true(mono_ms() - t0 < 1200);
	assert_int_equal(d.curl_code, CURLE_OPERATION_TIMEDOUT);
	assert_string_equal(d.endpoint, slow->url);
	/* status marked it failed: member list goes to b first. */
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_OK);
	assert_string_equal(d.endpoint, b->url);
	assert_int_equal(hits(slow), 1);
	eo_etcd_members_clear(&ms);
	eo_etcd_client_free(c);
	fake_stop(slow);
	fake_stop(b);
}

static void test_body_cap(void **state)
{
	struct fake *a = fake_start();
	const char *eps[] = {a->url};
	eo_etcd_client *c;
	struct eo_etcd_members ms = {0};
	struct eo_etcd_detail d;

	(void)state;
	a->huge = 64 * 1024;
	route(a, "/v3/cluster/member/list", 200, "{}");
	c = client(eps, 1, 2000, 4096);
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_TOOBIG);
	assert_int_equal(d.curl_code, CURLE_WRITE_ERROR);
	/* Within the cap the same body is merely not JSON. */
	eo_etcd_client_free(c);
	c = client(eps, 1, 2000, 128 * 1024);
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_PROTOCOL);
	/* Request side: keys and values are bounded by the cap too. */
	eo_etcd_client_free(c);
	c = client(eps, 1, 2000, 4096);
	char big[4096] = {0};
	assert_int_equal(eo_etcd_put(c, "k", 1, big, sizeof(big), NULL, &d), EO_ETCD_TOOBIG);
	eo_etcd_client_free(c);
	fake_stop(a);
}

static void test_auth_header(void **state)
{
	struct fake *a = fake_start();
	const char *eps[] = {a->url};
	struct eo_etcd_config cfg = {.endpoints = eps, .n_endpoints = 1, .auth_token = "tok.1"};
	eo_etcd_client *c = NULL;
	struct eo_etcd_members ms = {0};
	struct eo_etcd_detail d;

	(void)state;
	route(a, "/v3/cluster/member/list", 200, "{}");
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_OK);
	assert_string_equal(a->last_auth, "tok.1"); /* no "Bearer " */
	assert_string_equal(a->last_body, "{\"linearizable\":true}");
	assert_int_equal(eo_etcd_client_set_token(c, "other"), EO_ETCD_OK);
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_OK);
	assert_string_equal(a->last_auth, "other");
	assert_int_equal(eo_etcd_client_set_token(c, "bad\r\nX-Injected: 1"), EO_ETCD_INVALID);
	assert_int_equal(eo_etcd_client_set_token(c, NULL), EO_ETCD_OK);
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_OK);
	assert_string_equal(a->last_auth, "");
	eo_etcd_client_free(c);
	fake_stop(a);
}

static void test_bad_config(void **state)
{
	const char *bad[] = {"http://ok:2379", "tcp://x:1"};
	struct eo_etcd_config cfg = {.endpoints = bad, .n_endpoints = 2};
	eo_etcd_client *c = (eo_etcd_client *)1;
	struct eo_etcd_detail d;

	(void)state;
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_INVALID);
	assert_null(c);
	assert_string_equal(d.endpoint, "tcp://x:1");
	cfg.n_endpoints = 0;
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_INVALID);
	assert_int_equal(eo_etcd_client_new(NULL, &c, NULL), EO_ETCD_INVALID);
	cfg.n_endpoints = 1;
	cfg.auth_token = "a\nb";
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_INVALID);
	cfg.auth_token = NULL;
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
	assert_int_equal(eo_etcd_client_endpoint_count(c), 1);
	assert_string_equal(eo_etcd_client_endpoint(c, 0), "http://ok:2379");
	assert_null(eo_etcd_client_endpoint(c, 1));
	assert_int_equal(eo_etcd_status(c, "nonsense", &(struct eo_etcd_status){0}, &d),
			 EO_ETCD_INVALID);
	eo_etcd_client_free(c);
	eo_etcd_client_free(NULL);
}

static void test_all_unreachable(void **state)
{
	char dead1[64], dead2[64];
	const char *eps[] = {dead1, dead2};
	eo_etcd_client *c;
	struct eo_etcd_members ms = {0};
	struct eo_etcd_detail d;

	(void)state;
	closed_url(dead1, sizeof(dead1));
	closed_url(dead2, sizeof(dead2));
	c = client(eps, 2, 1000, 0);
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_UNAVAILABLE);
	assert_int_equal(d.curl_code, CURLE_COULDNT_CONNECT);
	assert_int_equal(d.http_status, 0);
	assert_string_equal(d.endpoint, dead2);
	eo_etcd_client_free(c);
}

static void test_get(void **state)
{
	struct fake *a = fake_start();
	const char *eps[] = {a->url};
	eo_etcd_client *c;
	struct eo_etcd_kv kv = {0};
	struct eo_etcd_detail d;

	(void)state;
	route(a, "/v3/kv/range", 200,
	      "{\"header\":{\"revision\":\"3\"},\"kvs\":[{\"key\":\"aw==\",\"value\":\"dg==\","
	      "\"mod_revision\":\"3\"}],\"count\":\"1\"}");
	c = client(eps, 1, 2000, 0);
	assert_int_equal(eo_etcd_get(c, "k", 1, &kv, &d), EO_ETCD_OK);
	assert_string_equal((char *)kv.value, "v");
	assert_true(kv.mod_revision == 3);
	assert_string_equal(a->last_body, "{\"key\":\"aw==\"}");
	eo_etcd_kv_clear(&kv);
	route(a, "/v3/kv/range", 200, "{\"header\":{\"revision\":\"3\"}}");
	assert_int_equal(eo_etcd_get(c, "k", 1, &kv, &d), EO_ETCD_KEY_NOT_FOUND);
	assert_null(kv.value);
	eo_etcd_client_free(c);
	fake_stop(a);
}

/* A route sends an endpoint whose name does not resolve to where its member listens. */
static void test_routes(void **state)
{
	struct fake *a = fake_start();
	const char *eps[] = {"http://m0.c.ns.svc.cluster.invalid:2379"};
	char entry[128];
	const char *routes[] = {entry};
	struct eo_etcd_config cfg = {.endpoints = eps,
				     .n_endpoints = 1,
				     .timeout_ms = 2000,
				     .routes = routes,
				     .n_routes = 1};
	eo_etcd_client *c = NULL;
	struct eo_etcd_kv kv = {0};
	struct eo_etcd_detail d;
	const char *port = strrchr(a->url, ':');

	(void)state;
	assert_non_null(port);
	snprintf(entry, sizeof(entry), "m0.c.ns.svc.cluster.invalid:2379:127.0.0.1:%s", port + 1);
	route(a, "/v3/kv/range", 200,
	      "{\"header\":{\"revision\":\"3\"},\"kvs\":[{\"key\":\"aw==\",\"value\":\"dg==\","
	      "\"mod_revision\":\"3\"}],\"count\":\"1\"}");
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
	assert_int_equal(eo_etcd_get(c, "k", 1, &kv, &d), EO_ETCD_OK);
	assert_string_equal((char *)kv.value, "v");
	assert_string_equal(d.endpoint, eps[0]);
	eo_etcd_kv_clear(&kv);
	eo_etcd_client_free(c);
	/* Routes announced but not given: refused. */
	cfg.routes = NULL;
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_INVALID);
	assert_null(c);
	fake_stop(a);
}

static void test_health(void **state)
{
	struct fake *a = fake_start();
	const char *eps[] = {a->url};
	eo_etcd_client *c;
	struct eo_etcd_detail d;

	(void)state;
	c = client(eps, 1, 2000, 0);
	/* A voter: linearizable read of "health". */
	route(a, "/v3/kv/range", 200, "{\"header\":{\"revision\":\"1\"}}");
	assert_int_equal(eo_etcd_health(c, a->url, &d), EO_ETCD_OK);
	assert_string_equal(a->last_body, "{\"key\":\"aGVhbHRo\"}");
	assert_false(eo_etcd_client_endpoint_is_learner(c, 0));
	/* With auth on and no right to the key, the member still answered. */
	route(a, "/v3/kv/range", 403, "{\"code\":7,\"message\":\"etcdserver: permission denied\"}");
	assert_int_equal(eo_etcd_health(c, a->url, &d), EO_ETCD_OK);
	/* No leader: unhealthy. */
	route(a, "/v3/kv/range", 503, "{\"code\":14,\"message\":\"etcdserver: no leader\"}");
	assert_int_equal(eo_etcd_health(c, a->url, &d), EO_ETCD_UNAVAILABLE);
	assert_string_equal(d.message, "etcdserver: no leader");
	/* An endpoint outside the client's list is fine too. */
	route(a, "/v3/kv/range", 200, "{}");
	eo_etcd_client_free(c);
	c = client((const char *[]){"http://127.0.0.1:1"}, 1, 2000, 0);
	assert_int_equal(eo_etcd_health(c, a->url, &d), EO_ETCD_OK);
	eo_etcd_client_free(c);
	fake_stop(a);
}

static void test_promote_refreshes_marks(void **state)
{
	struct fake *l = fake_start(), *v = fake_start();
	const char *eps[] = {l->url, v->url};
	eo_etcd_client *c;
	struct eo_etcd_members ms = {0};
	struct eo_etcd_detail d;
	char promoted[512];

	(void)state;
	l->learner = true;
	route(v, "/v3/cluster/member/list", 200, members_with_learner(v->url, l->url));
	snprintf(promoted, sizeof(promoted),
		 "{\"members\":[{\"ID\":\"1\",\"clientURLs\":[\"%s\"]},"
		 "{\"ID\":\"2\",\"clientURLs\":[\"%s\"]}]}",
		 v->url, l->url);
	route(v, "/v3/cluster/member/promote", 200, promoted);
	c = client(eps, 2, 2000, 0);
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_OK);
	eo_etcd_members_clear(&ms);
	assert_true(eo_etcd_client_endpoint_is_learner(c, 0));
	assert_int_equal(eo_etcd_member_promote(c, 2, &ms, &d), EO_ETCD_OK);
	assert_string_equal(v->last_body, "{\"ID\":\"2\"}");
	assert_int_equal(ms.n, 2);
	assert_false(eo_etcd_client_endpoint_is_learner(c, 0));
	eo_etcd_members_clear(&ms);
	eo_etcd_client_free(c);
	fake_stop(l);
	fake_stop(v);
}

static void test_member_add_voter(void **state)
{
	struct fake *a = fake_start();
	const char *eps[] = {a->url};
	const char *peers[] = {"https://m2.c.ns.svc:2380", "https://10.1.2.3:2380"};
	eo_etcd_client *c;
	struct eo_etcd_member added = {0};
	struct eo_etcd_detail d;

	(void)state;
	route(a, "/v3/cluster/member/add", 200,
	      "{\"member\":{\"ID\":\"18446744073709551615\",\"peerURLs\":"
	      "[\"https://m2.c.ns.svc:2380\",\"https://10.1.2.3:2380\"]},\"members\":[]}");
	c = client(eps, 1, 2000, 0);
	assert_int_equal(eo_etcd_member_add(c, peers, 2, false, &added, NULL, &d), EO_ETCD_OK);
	assert_string_equal(a->last_path, "/v3/cluster/member/add");
	assert_string_equal(
	    a->last_body,
	    "{\"peerURLs\":[\"https://m2.c.ns.svc:2380\",\"https://10.1.2.3:2380\"]}");
	assert_true(added.id == UINT64_MAX);
	assert_false(added.is_learner);
	assert_int_equal(added.n_peer_urls, 2);
	eo_etcd_member_clear(&added);
	eo_etcd_client_free(c);
	fake_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_learner_skipped_and_remembered),
	    cmocka_unit_test(test_only_learners),
	    cmocka_unit_test(test_unknown_outcome_write_not_resent),
	    cmocka_unit_test(test_undelivered_write_fails_over),
	    cmocka_unit_test(test_semantic_error_not_retried),
	    cmocka_unit_test(test_timeout_then_failover),
	    cmocka_unit_test(test_body_cap),
	    cmocka_unit_test(test_auth_header),
	    cmocka_unit_test(test_bad_config),
	    cmocka_unit_test(test_all_unreachable),
	    cmocka_unit_test(test_get),
	    cmocka_unit_test(test_routes),
	    cmocka_unit_test(test_health),
	    cmocka_unit_test(test_promote_refreshes_marks),
	    cmocka_unit_test(test_member_add_voter),
	};

	return cmocka_run_group_tests_name("etcd_transport", tests, group_setup, group_teardown);
}
