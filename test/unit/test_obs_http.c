/*
 * Unit tests for obs/http: bind-address parsing, and the servers answering /healthz, /readyz
 * and /metrics on 127.0.0.1:0 (libcurl as the client), shared and disabled listeners, bind
 * failures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "obs/http.h"
#include "obs/metrics.h"
#include "obs/ready.h"

static void test_bind_addr_parse(void **state)
{
	static const struct {
		const char *in;
		int rc;
		bool disabled;
		bool any;
		const char *host;
		unsigned port;
	} cases[] = {
	    {":8080", 0, false, true, "", 8080},
	    {"0.0.0.0:8080", 0, false, false, "0.0.0.0", 8080},
	    {"127.0.0.1:0", 0, false, false, "127.0.0.1", 0},
	    {"localhost:9090", 0, false, false, "localhost", 9090},
	    {"[::1]:8081", 0, false, false, "::1", 8081},
	    {"[::]:65535", 0, false, false, "::", 65535},
	    {":0", 0, false, true, "", 0},
	    {"0", 0, true, false, "", 0},
	    {"", 0, true, false, "", 0},
	    {"8080", -1, false, false, "", 0},
	    {"127.0.0.1", -1, false, false, "", 0},
	    {":", -1, false, false, "", 0},
	    {":65536", -1, false, false, "", 0},
	    {":123456", -1, false, false, "", 0},
	    {":80a", -1, false, false, "", 0},
	    {":-1", -1, false, false, "", 0},
	    {"::1:8080", -1, false, false, "", 0},
	    {"[::1]8080", -1, false, false, "", 0},
	    {"[::1", -1, false, false, "", 0},
	};
	struct eo_bind_addr a;
	char err[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		assert_int_equal(eo_bind_addr_parse(cases[i].in, &a, err, sizeof(err)),
				 cases[i].rc);
		if (cases[i].rc != 0) {
			assert_true(strlen(err) > 0);
			continue;
		}
		assert_int_equal(a.disabled, cases[i].disabled);
		assert_int_equal(a.any, cases[i].any);
		assert_string_equal(a.host, cases[i].host);
		assert_int_equal(a.port, cases[i].port);
	}
	assert_int_equal(eo_bind_addr_parse(NULL, &a, NULL, 0), 0);
	assert_true(a.disabled);
}

struct reply {
	long status;
	char body[8192];
	size_t len;
	char ctype[128];
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct reply *r = ud;
	size_t len = size * n;

	if (len > sizeof(r->body) - 1 - r->len)
		len = sizeof(r->body) - 1 - r->len;
	memcpy(r->body + r->len, p, len);
	r->len += len;
	r->body[r->len] = '\0';
	return size * n;
}

/* Performs one request; returns the CURLcode. */
static int fetch(const char *method, int port, const char *path, struct reply *r)
{
	char url[128];
	char *ct = NULL;
	CURL *c = curl_easy_init();
	int rc;

	memset(r, 0, sizeof(*r));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else if (strcmp(method, "GET") != 0)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	rc = (int)curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
		snprintf(r->ctype, sizeof(r->ctype), "%s", ct);
	curl_easy_cleanup(c);
	return rc;
}

static void test_endpoints(void **state)
{
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_metric_family *c;
	struct eo_ready ready;
	struct eo_http *srv = NULL;
	struct eo_http_config cfg;
	struct reply r;
	char err[256];
	int mp, hp;

	(void)state;
	c = eo_metrics_counter(reg, "test_requests_total", "Requests.", NULL);
	eo_metrics_add(c, NULL, 41);
	eo_metrics_inc(c, NULL);
	eo_ready_init(&ready, "caches not synced");
	cfg = (struct eo_http_config){.metrics_addr = "127.0.0.1:0",
				      .health_addr = "127.0.0.1:0",
				      .metrics = reg,
				      .ready = eo_ready_check,
				      .ready_ud = &ready};
	assert_int_equal(eo_http_start(&cfg, &srv, err, sizeof(err)), 0);
	mp = eo_http_metrics_port(srv);
	hp = eo_http_health_port(srv);
	assert_true(mp > 0 && mp < 65536);
	assert_true(hp > 0 && hp < 65536);
	assert_int_not_equal(mp, hp);

	assert_int_equal(fetch("GET", hp, "/healthz", &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "ok\n");

	assert_int_equal(fetch("GET", hp, "/readyz", &r), CURLE_OK);
	assert_int_equal(r.status, 503);
	assert_string_equal(r.body, "not ready: caches not synced\n");
	assert_string_equal(r.ctype, "text/plain; charset=utf-8");

	eo_ready_set(&ready, true, NULL);
	assert_int_equal(fetch("GET", hp, "/readyz?verbose", &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "ok\n");
	eo_ready_set(&ready, false, "shutting down");
	assert_int_equal(fetch("GET", hp, "/readyz", &r), CURLE_OK);
	assert_int_equal(r.status, 503);
	assert_string_equal(r.body, "not ready: shutting down\n");

	assert_int_equal(fetch("GET", mp, "/metrics", &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.ctype, "text/plain; version=0.0.4; charset=utf-8");
	assert_string_equal(r.body, "# HELP test_requests_total Requests.\n"
				    "# TYPE test_requests_total counter\n"
				    "test_requests_total 42\n");
	assert_int_equal(fetch("HEAD", mp, "/metrics", &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, 0);

	/* Each listener serves only its own paths. */
	assert_int_equal(fetch("GET", mp, "/healthz", &r), CURLE_OK);
	assert_int_equal(r.status, 404);
	assert_int_equal(fetch("GET", hp, "/metrics", &r), CURLE_OK);
	assert_int_equal(r.status, 404);
	assert_int_equal(fetch("GET", hp, "/nope", &r), CURLE_OK);
	assert_int_equal(r.status, 404);
	assert_int_equal(fetch("POST", hp, "/healthz", &r), CURLE_OK);
	assert_int_equal(r.status, 405);
	assert_int_equal(fetch("DELETE", mp, "/metrics", &r), CURLE_OK);
	assert_int_equal(r.status, 405);

	eo_http_stop(srv);
	/* Stopped means closed. */
	assert_int_not_equal(fetch("GET", hp, "/healthz", &r), CURLE_OK);
	eo_ready_destroy(&ready);
	eo_metrics_free(reg);
}

static void test_disabled_and_no_ready_callback(void **state)
{
	struct eo_http *srv = NULL;
	struct eo_http_config cfg = {.metrics_addr = "0", .health_addr = "127.0.0.1:0"};
	struct reply r;
	char err[256];

	(void)state;
	assert_int_equal(eo_http_start(&cfg, &srv, err, sizeof(err)), 0);
	assert_int_equal(eo_http_metrics_port(srv), -1);
	assert_true(eo_http_health_port(srv) > 0);
	assert_int_equal(fetch("GET", eo_http_health_port(srv), "/readyz", &r), CURLE_OK);
	assert_int_equal(r.status, 503);
	assert_string_equal(r.body, "not ready: no readiness check configured\n");
	eo_http_stop(srv);

	/* Both disabled: nothing listens, nothing fails. */
	cfg = (struct eo_http_config){.metrics_addr = "0", .health_addr = ""};
	assert_int_equal(eo_http_start(&cfg, &srv, err, sizeof(err)), 0);
	assert_int_equal(eo_http_metrics_port(srv), -1);
	assert_int_equal(eo_http_health_port(srv), -1);
	eo_http_stop(srv);
	eo_http_stop(NULL);
}

static void test_shared_address_and_bind_failure(void **state)
{
	struct eo_metrics *reg = eo_metrics_new();
	struct eo_ready ready;
	struct eo_http *a = NULL, *b = NULL;
	struct eo_http_config cfg;
	struct reply r;
	char err[256], addr[64], want[128];
	int port;

	(void)state;
	eo_ready_init(&ready, "not yet");
	eo_ready_set(&ready, true, NULL);
	cfg = (struct eo_http_config){.metrics_addr = "127.0.0.1:0",
				      .health_addr = "0",
				      .metrics = reg,
				      .ready = eo_ready_check,
				      .ready_ud = &ready};
	assert_int_equal(eo_http_start(&cfg, &a, err, sizeof(err)), 0);
	port = eo_http_metrics_port(a);
	assert_true(port > 0);

	/* A second server on a taken port fails with a precise message and leaves nothing. */
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	cfg.metrics_addr = "127.0.0.1:0";
	cfg.health_addr = addr;
	err[0] = '\0';
	assert_int_equal(eo_http_start(&cfg, &b, err, sizeof(err)), -1);
	assert_null(b);
	snprintf(want, sizeof(want), "health probe: bind %s: ", addr);
	assert_memory_equal(err, want, strlen(want));
	assert_true(strlen(err) > strlen(want));

	/* Malformed addresses are reported before anything binds. */
	cfg.metrics_addr = "nonsense";
	assert_int_equal(eo_http_start(&cfg, &b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "metrics: bind address nonsense: missing port"));

	/* Free the port, then bind metrics and health to the same fixed address: one listener. */
	eo_http_stop(a);
	cfg.metrics_addr = addr;
	cfg.health_addr = addr;
	assert_int_equal(eo_http_start(&cfg, &b, err, sizeof(err)), 0);
	assert_int_equal(eo_http_metrics_port(b), port);
	assert_int_equal(eo_http_health_port(b), port);
	assert_int_equal(fetch("GET", port, "/metrics", &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	assert_int_equal(fetch("GET", port, "/readyz", &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	assert_int_equal(fetch("GET", port, "/healthz", &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	eo_http_stop(b);
	eo_ready_destroy(&ready);
	eo_metrics_free(reg);
}

static void test_hostname_and_any(void **state)
{
	struct eo_http *srv = NULL;
	struct eo_http_config cfg = {.metrics_addr = "localhost:0", .health_addr = ":0"};
	struct reply r;
	char err[256];

	(void)state;
	assert_int_equal(eo_http_start(&cfg, &srv, err, sizeof(err)), 0);
	assert_true(eo_http_metrics_port(srv) > 0);
	/* ":0" listens on every interface, loopback included. */
	assert_int_equal(fetch("GET", eo_http_health_port(srv), "/healthz", &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	eo_http_stop(srv);

	cfg.metrics_addr = "no-such-host.invalid:0";
	assert_int_equal(eo_http_start(&cfg, &srv, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "metrics: resolve no-such-host.invalid:0: "));
}

static int setup(void **state)
{
	(void)state;
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	curl_global_cleanup();
	return 0;
}

/* GET path from source address src (a loopback address), giving up after 3 s. */
static int fetch_from(const char *src, int port, const char *path, struct reply *r)
{
	char url[128];
	CURL *c = curl_easy_init();
	int rc;

	memset(r, 0, sizeof(*r));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_INTERFACE, src);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 3L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	rc = (int)curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_cleanup(c);
	return rc;
}

/*
 * One address holding idle connections (as many as the listener takes in all) leaves room
 * for another address: the kubelet's probe still gets its answer (issue 21 item 2, review
 * L2). The hog's own next request is turned away.
 */
static void test_per_address_limit(void **state)
{
	struct eo_http *srv = NULL;
	struct eo_http_config cfg = {.metrics_addr = "0", .health_addr = "127.0.0.1:0"};
	struct sockaddr_in sin = {.sin_family = AF_INET};
	int fds[EO_HTTP_CONNECTIONS_MAX];
	struct reply r;
	char err[256];
	int hp;

	(void)state;
	assert_int_equal(eo_http_start(&cfg, &srv, err, sizeof(err)), 0);
	hp = eo_http_health_port(srv);
	sin.sin_port = htons((uint16_t)hp);
	assert_int_equal(inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr), 1);
	for (size_t i = 0; i < EO_HTTP_CONNECTIONS_MAX; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		assert_true(fds[i] >= 0);
		assert_int_equal(connect(fds[i], (struct sockaddr *)&sin, sizeof(sin)), 0);
	}
	usleep(200 * 1000); /* the server accepts them */
	assert_int_equal(fetch_from("127.0.0.2", hp, "/healthz", &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	assert_int_not_equal(fetch_from("127.0.0.1", hp, "/healthz", &r), CURLE_OK);
	for (size_t i = 0; i < EO_HTTP_CONNECTIONS_MAX; i++)
		close(fds[i]);
	eo_http_stop(srv);
}

TU_MAIN_SETUP(setup, teardown, test_bind_addr_parse, test_endpoints,
	      test_disabled_and_no_ready_callback, test_shared_address_and_bind_failure,
	      test_hostname_and_any, test_per_address_limit)
