/*
 * kube/client.c - REST calls over libcurl easy handles.
 */
#include "kube/client.h"

#include "api/meta.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/util.h"
#include "kube/client_int.h"

#include <openssl/crypto.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct eo_kube_client {
	eo_kube_config *cfg;
	atomic_long timeout_ms; /* eo_kube_client_set_timeout() may change it */
	long connect_timeout_ms;
	size_t max_body;
	size_t max_list;
	char *user_agent;
	bool proxy_from_env;
	CURLSH *share;
	pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
	/* Idle easy handles. A handle keeps its own connection cache across
	 * curl_easy_reset(), so reusing handles gives keep-alive reuse without
	 * sharing one connection cache between threads (which curl 7.88 does
	 * not support safely). */
	pthread_mutex_t pool_mu;
	CURL *pool[EO_KUBE_CLIENT_POOL];
	int pool_len;
};

static CURL *handle_get(eo_kube_client *c)
{
	CURL *h = NULL;

	pthread_mutex_lock(&c->pool_mu);
	if (c->pool_len > 0)
		h = c->pool[--c->pool_len];
	pthread_mutex_unlock(&c->pool_mu);
	if (h) {
		curl_easy_reset(h);
		return h;
	}
	return curl_easy_init();
}

static void handle_put(eo_kube_client *c, CURL *h)
{
	pthread_mutex_lock(&c->pool_mu);
	if (c->pool_len < EO_KUBE_CLIENT_POOL) {
		c->pool[c->pool_len++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&c->pool_mu);
	if (h)
		curl_easy_cleanup(h);
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- URLs and small bodies we build ourselves ------------------------ */

#define SB_MAX (64u << 10)

/* Appends s percent-encoded: libcurl keeps only RFC 3986's unreserved
 * characters (ALPHA DIGIT - . _ ~) and writes %XX, upper case, for the rest. */
static void sb_add_escaped(struct eo_strbuf *b, const char *s)
{
	size_t n = strlen(s);
	char *e;

	if (n == 0 || b->failed)
		return;
	if (n > SB_MAX) {
		b->failed = true;
		return;
	}
	e = curl_easy_escape(NULL, s, (int)n);
	if (e == NULL) {
		b->failed = true;
		return;
	}
	eo_strbuf_add(b, e);
	curl_free(e);
}

char *eo_kube_escape(const char *s)
{
	struct eo_strbuf b = EO_STRBUF_INIT(SB_MAX);

	eo_strbuf_add(&b, "");
	sb_add_escaped(&b, s);
	return eo_strbuf_take(&b, NULL);
}

char *eo_kube_url(const char *server, const struct eo_kube_resource *r, const char *subresource,
		  const char *const *params)
{
	struct eo_strbuf b = EO_STRBUF_INIT(SB_MAX);
	const char *slash;
	bool first = true;

	if (!server || !r || !eo_present(r->gv) || !eo_present(r->plural))
		return NULL;
	if (eo_present(subresource) && !eo_present(r->name))
		return NULL;
	eo_strbuf_add(&b, server);
	/* The core group has no group part and lives under /api. */
	slash = strchr(r->gv, '/');
	eo_strbuf_add(&b, slash ? "/apis/" : "/api/");
	if (slash) {
		/* Escape group and version separately to keep the '/' between them. */
		char *group = strndup(r->gv, (size_t)(slash - r->gv));

		if (!group)
			b.failed = true;
		else
			sb_add_escaped(&b, group);
		free(group);
		eo_strbuf_add(&b, "/");
		sb_add_escaped(&b, slash + 1);
	} else {
		sb_add_escaped(&b, r->gv);
	}
	if (eo_present(r->ns)) {
		eo_strbuf_add(&b, "/namespaces/");
		sb_add_escaped(&b, r->ns);
	}
	eo_strbuf_add(&b, "/");
	sb_add_escaped(&b, r->plural);
	if (eo_present(r->name)) {
		eo_strbuf_add(&b, "/");
		sb_add_escaped(&b, r->name);
		if (eo_present(subresource)) {
			eo_strbuf_add(&b, "/");
			sb_add_escaped(&b, subresource);
		}
	}
	for (; params && params[0]; params += 2) {
		if (!params[1])
			continue;
		eo_strbuf_add(&b, first ? "?" : "&");
		first = false;
		sb_add_escaped(&b, params[0]);
		eo_strbuf_add(&b, "=");
		sb_add_escaped(&b, params[1]);
	}
	return eo_strbuf_take(&b, NULL);
}

/* ---- client lifecycle ------------------------------------------------- */

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *ud)
{
	eo_kube_client *c = ud;

	(void)h;
	(void)access;
	pthread_mutex_lock(&c->locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ud)
{
	eo_kube_client *c = ud;

	(void)h;
	pthread_mutex_unlock(&c->locks[data]);
}

eo_kube_err eo_kube_client_new(eo_kube_config *cfg, const struct eo_kube_client_opts *opts,
			       eo_kube_client **out, struct eo_kube_error *err)
{
	eo_kube_client *c = NULL;
	eo_kube_err rc = EO_KUBE_OK;

	*out = NULL;
	eo_kube_error_clear(err);
	if (!cfg)
		return eo_kube_fail(err, EO_KUBE_EINVALID, "no config");
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK) {
		rc = eo_kube_fail(err, EO_KUBE_ETRANSPORT, "curl_global_init failed");
		goto fail;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "client");
		goto fail;
	}
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&c->locks[i], NULL);
	pthread_mutex_init(&c->pool_mu, NULL);
	c->cfg = cfg;
	cfg = NULL;
	atomic_init(&c->timeout_ms,
		    opts && opts->timeout_ms > 0 ? opts->timeout_ms : EO_KUBE_DEFAULT_TIMEOUT_MS);
	c->connect_timeout_ms =
	    opts && opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : 10000;
	c->max_body = opts && opts->max_body > 0 ? opts->max_body : EO_KUBE_DEFAULT_MAX_BODY;
	c->max_list = opts && opts->max_list > 0 ? opts->max_list : EO_KUBE_LIST_MAX_BYTES;
	c->user_agent = strdup(opts && opts->user_agent ? opts->user_agent : "etcd-operator");
	c->proxy_from_env = opts != NULL && opts->proxy_from_env;
	c->share = curl_share_init();
	if (!c->user_agent || !c->share) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "client");
		goto fail;
	}
	curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
	curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	*out = c;
	return EO_KUBE_OK;
fail:
	eo_kube_config_free(cfg);
	eo_kube_client_free(c);
	return rc;
}

void eo_kube_client_free(eo_kube_client *c)
{
	if (!c)
		return;
	/* Handles first: they reference the share. */
	for (int i = 0; i < c->pool_len; i++)
		curl_easy_cleanup(c->pool[i]);
	pthread_mutex_destroy(&c->pool_mu);
	if (c->share)
		curl_share_cleanup(c->share);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&c->locks[i]);
	eo_kube_config_free(c->cfg);
	free(c->user_agent);
	free(c);
}

eo_kube_config *eo_kube_client_config(eo_kube_client *c)
{
	return c->cfg;
}

void eo_kube_client_set_timeout(eo_kube_client *c, long timeout_ms)
{
	atomic_store(&c->timeout_ms, timeout_ms > 0 ? timeout_ms : 1);
}

long eo__kube_client_connect_timeout_ms(const eo_kube_client *c)
{
	return c->connect_timeout_ms;
}

size_t eo__kube_client_max_body(const eo_kube_client *c)
{
	return c->max_body;
}

/* ---- transport -------------------------------------------------------- */

eo_kube_err eo__kube_curl_err(CURLcode cc, const char *errbuf, bool overflow,
			      struct eo_kube_error *err)
{
	const char *detail = errbuf && errbuf[0] ? errbuf : curl_easy_strerror(cc);

	if (overflow)
		return eo_kube_fail(err, EO_KUBE_ETOOLARGE, "response exceeds the size cap");
	switch (cc) {
	case CURLE_OPERATION_TIMEDOUT:
		return eo_kube_fail(err, EO_KUBE_ETIMEOUT, "%s", detail);
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_GOT_NOTHING:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_PARTIAL_FILE:
		return eo_kube_fail(err, EO_KUBE_EUNAVAILABLE, "%s", detail);
	case CURLE_OUT_OF_MEMORY:
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "%s", detail);
	case CURLE_ABORTED_BY_CALLBACK:
		return eo_kube_fail(err, EO_KUBE_ECANCELED, "%s", detail);
	default:
		return eo_kube_fail(err, EO_KUBE_ETRANSPORT, "%s", detail);
	}
}

static void set_blob(CURL *h, CURLoption opt, const unsigned char *data, size_t len)
{
	struct curl_blob blob = {
	    .data = (void *)data,
	    .len = len,
	    .flags = CURL_BLOB_COPY,
	};

	curl_easy_setopt(h, opt, &blob);
}

void eo__kube_headers_scrub(struct curl_slist *hdrs)
{
	for (struct curl_slist *n = hdrs; n != NULL; n = n->next)
		if (n->data != NULL)
			OPENSSL_cleanse(n->data, strlen(n->data));
}

void eo__kube_headers_free(struct curl_slist *hdrs)
{
	eo__kube_headers_scrub(hdrs);
	curl_slist_free_all(hdrs);
}

eo_kube_err eo__kube_easy_setup(eo_kube_client *c, CURL *h, const char *token,
				struct curl_slist **hdrs, bool share, struct eo_kube_error *err)
{
	const unsigned char *p, *key;
	size_t len, key_len;
	struct curl_slist *n;

	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 15L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	/* "" turns proxies off even when the environment names one (CURLOPT_PROXY(3)). */
	if (!c->proxy_from_env)
		curl_easy_setopt(h, CURLOPT_PROXY, "");
	if (share)
		curl_easy_setopt(h, CURLOPT_SHARE, c->share);

	p = eo_kube_config_ca(c->cfg, &len);
	if (p)
		set_blob(h, CURLOPT_CAINFO_BLOB, p, len);
	eo_kube_config_client_pair(c->cfg, &p, &len, &key, &key_len);
	if (p) {
		set_blob(h, CURLOPT_SSLCERT_BLOB, p, len);
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (key) {
		set_blob(h, CURLOPT_SSLKEY_BLOB, key, key_len);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (eo_kube_config_insecure(c->cfg)) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}

	n = curl_slist_append(*hdrs, "Accept: application/json");
	if (!n)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "headers");
	*hdrs = n;
	if (token) {
		char *line = NULL;
		int ln = asprintf(&line, "Authorization: Bearer %s", token);

		if (ln < 0)
			return eo_kube_fail(err, EO_KUBE_ENOMEM, "headers");
		n = curl_slist_append(*hdrs, line);
		OPENSSL_cleanse(line, (size_t)ln);
		free(line);
		if (!n)
			return eo_kube_fail(err, EO_KUBE_ENOMEM, "headers");
		*hdrs = n;
	}
	return EO_KUBE_OK;
}

static size_t body_write(char *data, size_t size, size_t nmemb, void *ud)
{
	return eo_capbuf_append(ud, data, size * nmemb);
}

static eo_kube_err transfer(eo_kube_client *c, const char *method, const char *url,
			    const char *content_type, const char *payload,
			    curl_write_callback write_fn, void *write_ud, CURL **hp, long *status,
			    bool *overflow, struct eo_kube_error *err)
{
	return eo__kube_transfer(c, method, url, content_type, payload, NULL, write_fn, write_ud,
				 hp, status, overflow, err);
}

eo_kube_err eo__kube_transfer(eo_kube_client *c, const char *method, const char *url,
			      const char *content_type, const char *payload,
			      const struct eo__kube_xfer_opts *xo, curl_write_callback write_fn,
			      void *write_ud, CURL **hp, long *status, bool *overflow,
			      struct eo_kube_error *err)
{
	CURL *h = NULL;
	struct curl_slist *hdrs = NULL;
	char errbuf[CURL_ERROR_SIZE] = "";
	char *token = NULL;
	CURLcode cc;
	eo_kube_err rc;

	*status = 0;
	rc = eo_kube_config_token(c->cfg, &token, err);
	if (rc != EO_KUBE_OK)
		goto out;
	h = handle_get(c);
	if (!h) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "curl handle");
		goto out;
	}
	if (hp)
		*hp = h;
	rc = eo__kube_easy_setup(c, h, token, &hdrs, true, err);
	if (rc != EO_KUBE_OK)
		goto out;
	if (content_type) {
		char line[128];
		struct curl_slist *n;

		snprintf(line, sizeof(line), "Content-Type: %s", content_type);
		n = curl_slist_append(hdrs, line);
		if (!n) {
			rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "headers");
			goto out;
		}
		hdrs = n;
	}
	for (size_t i = 0; xo && xo->headers && xo->headers[i]; i++) {
		struct curl_slist *n = curl_slist_append(hdrs, xo->headers[i]);

		if (!n) {
			rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "headers");
			goto out;
		}
		hdrs = n;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	if (xo && xo->timeout_ms < 0)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 0L);
	else if (xo && xo->timeout_ms > 0)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, xo->timeout_ms);
	else
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, atomic_load(&c->timeout_ms));
	if (xo && xo->stall_s > 0) {
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, xo->stall_s);
	}
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_fn);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, write_ud);
	if (strcmp(method, "GET") != 0)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (payload) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(payload));
	}
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	if (cc != CURLE_OK) {
		rc = eo__kube_curl_err(cc, errbuf, overflow && *overflow, err);
		goto out;
	}
	eo_kube_error_clear(err);
out:
	if (hp)
		*hp = NULL;
	if (h) {
		/* Drop pointers into this frame before the handle goes back. */
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
		handle_put(c, h);
	}
	eo__kube_headers_free(hdrs);
	if (token) {
		OPENSSL_cleanse(token, strlen(token));
		free(token);
	}
	return rc;
}

/* One HTTP exchange; no retries. On 2xx with out != NULL parses the body. */
static eo_kube_err perform(eo_kube_client *c, const char *method, const char *url,
			   const char *content_type, const char *payload, json_t **out,
			   struct eo_kube_error *err)
{
	struct eo_capbuf b = {.max = c->max_body};
	long status = 0;
	eo_kube_err rc;

	rc = transfer(c, method, url, content_type, payload, body_write, &b, NULL, &status,
		      &b.overflow, err);
	if (rc != EO_KUBE_OK)
		goto out;
	if (status < 200 || status >= 300) {
		rc = eo_kube_status_parse((int)status, b.data, b.len, err);
		goto out;
	}
	if (out) {
		json_error_t jerr;

		*out = b.data ? json_loadb(b.data, b.len, 0, &jerr) : NULL;
		if (!*out) {
			rc = eo_kube_fail(err, EO_KUBE_EPROTOCOL, "invalid JSON in response: %s",
					  b.data ? jerr.text : "empty body");
			if (err)
				err->http_status = (int)status;
			goto out;
		}
	}
	eo_kube_error_clear(err);
out:
	free(b.data);
	return rc;
}

/* perform() plus one retry after a 401 when the token comes from a file that
 * may have been rotated since we last read it. */
static eo_kube_err request(eo_kube_client *c, const char *method, const char *url,
			   const char *content_type, json_t *body, json_t **out,
			   struct eo_kube_error *err)
{
	char *payload = NULL;
	eo_kube_err rc;

	if (out)
		*out = NULL;
	if (body) {
		payload = eo_json_dumps(body, JSON_COMPACT, NULL);
		if (!payload)
			return eo_kube_fail(err, EO_KUBE_ENOMEM, "encoding request body");
	}
	rc = perform(c, method, url, content_type, payload, out, err);
	if (rc == EO_KUBE_EUNAUTHORIZED && eo_kube_config_token_renewable(c->cfg)) {
		eo_kube_config_token_invalidate(c->cfg);
		rc = perform(c, method, url, content_type, payload, out, err);
	}
	free(payload);
	return rc;
}

/* ---- verbs ------------------------------------------------------------ */

/* Fills in name / namespace from obj when the caller left them out. */
static struct eo_kube_resource with_obj(const struct eo_kube_resource *r, const json_t *obj,
					bool want_name)
{
	struct eo_kube_resource x = *r;

	if (!eo_present(x.ns))
		x.ns = eo_meta_namespace(obj);
	if (want_name) {
		if (!eo_present(x.name))
			x.name = eo_meta_name(obj);
	} else {
		x.name = NULL;
	}
	return x;
}

static eo_kube_err simple(eo_kube_client *c, const char *method, const struct eo_kube_resource *r,
			  const char *sub, const char *ctype, json_t *body, json_t **out,
			  struct eo_kube_error *err)
{
	char *url = eo_kube_url(eo_kube_config_server(c->cfg), r, sub, NULL);
	eo_kube_err rc;

	if (out)
		*out = NULL;
	if (!url)
		return eo_kube_fail(err, EO_KUBE_EINVALID, "cannot build URL for %s %s",
				    r->plural ? r->plural : "?", r->name ? r->name : "");
	rc = request(c, method, url, ctype, body, out, err);
	free(url);
	return rc;
}

eo_kube_err eo_kube_get_path(eo_kube_client *c, const char *path, json_t **out,
			     struct eo_kube_error *err)
{
	const char *server = eo_kube_config_server(c->cfg);
	char *url = NULL;
	eo_kube_err rc;

	if (out)
		*out = NULL;
	if (!eo_present(server) || !eo_present(path) || path[0] != '/' || strlen(path) > 1024)
		return eo_kube_fail(err, EO_KUBE_EINVALID, "get_path needs an absolute API path");
	if (asprintf(&url, "%s%s", server, path) < 0)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "building URL");
	rc = request(c, "GET", url, NULL, NULL, out, err);
	free(url);
	return rc;
}

eo_kube_err eo_kube_get(eo_kube_client *c, const struct eo_kube_resource *r, json_t **out,
			struct eo_kube_error *err)
{
	if (!eo_present(r->name)) {
		*out = NULL;
		return eo_kube_fail(err, EO_KUBE_EINVALID, "get needs a name");
	}
	return simple(c, "GET", r, NULL, NULL, NULL, out, err);
}

eo_kube_err eo_kube_create(eo_kube_client *c, const struct eo_kube_resource *r, json_t *obj,
			   json_t **out, struct eo_kube_error *err)
{
	struct eo_kube_resource x = with_obj(r, obj, false);

	return simple(c, "POST", &x, NULL, "application/json", obj, out, err);
}

static eo_kube_err put(eo_kube_client *c, const struct eo_kube_resource *r, const char *sub,
		       json_t *obj, json_t **out, struct eo_kube_error *err)
{
	struct eo_kube_resource x = with_obj(r, obj, true);

	if (!eo_present(x.name)) {
		if (out)
			*out = NULL;
		return eo_kube_fail(err, EO_KUBE_EINVALID, "update needs a name");
	}
	return simple(c, "PUT", &x, sub, "application/json", obj, out, err);
}

eo_kube_err eo_kube_update(eo_kube_client *c, const struct eo_kube_resource *r, json_t *obj,
			   json_t **out, struct eo_kube_error *err)
{
	return put(c, r, NULL, obj, out, err);
}

eo_kube_err eo_kube_update_status(eo_kube_client *c, const struct eo_kube_resource *r, json_t *obj,
				  json_t **out, struct eo_kube_error *err)
{
	return put(c, r, "status", obj, out, err);
}

static eo_kube_err merge_patch(eo_kube_client *c, const struct eo_kube_resource *r, const char *sub,
			       json_t *patch, json_t **out, struct eo_kube_error *err)
{
	if (!eo_present(r->name)) {
		if (out)
			*out = NULL;
		return eo_kube_fail(err, EO_KUBE_EINVALID, "patch needs a name");
	}
	return simple(c, "PATCH", r, sub, "application/merge-patch+json", patch, out, err);
}

eo_kube_err eo_kube_patch(eo_kube_client *c, const struct eo_kube_resource *r, json_t *patch,
			  json_t **out, struct eo_kube_error *err)
{
	return merge_patch(c, r, NULL, patch, out, err);
}

eo_kube_err eo_kube_patch_status(eo_kube_client *c, const struct eo_kube_resource *r, json_t *patch,
				 json_t **out, struct eo_kube_error *err)
{
	return merge_patch(c, r, "status", patch, out, err);
}

eo_kube_err eo_kube_delete(eo_kube_client *c, const struct eo_kube_resource *r,
			   const struct eo_kube_delete_opts *opts, struct eo_kube_error *err)
{
	json_t *body = NULL, *pre = NULL;
	eo_kube_err rc;
	int bad = 0;

	if (!eo_present(r->name))
		return eo_kube_fail(err, EO_KUBE_EINVALID, "delete needs a name");
	body = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1");
	if (!body)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "delete options");
	/* Every set is checked: a precondition that silently went missing would
	 * turn a guarded DELETE into an unguarded one. */
	if (opts && opts->propagation_policy)
		bad |= json_object_set_new(body, "propagationPolicy",
					   json_string(opts->propagation_policy));
	if (opts && opts->grace_period_seconds >= 0)
		bad |= json_object_set_new(body, "gracePeriodSeconds",
					   json_integer(opts->grace_period_seconds));
	if (opts && (opts->uid || opts->resource_version)) {
		pre = json_object();
		if (pre && opts->uid)
			bad |= json_object_set_new(pre, "uid", json_string(opts->uid));
		if (pre && opts->resource_version)
			bad |= json_object_set_new(pre, "resourceVersion",
						   json_string(opts->resource_version));
		bad |= json_object_set_new(body, "preconditions", pre);
	}
	if (bad) {
		json_decref(body);
		return eo_kube_fail(err, EO_KUBE_ENOMEM,
				    "delete options: out of memory (or a value that is not UTF-8)");
	}
	rc = simple(c, "DELETE", r, NULL, "application/json", body, NULL, err);
	json_decref(body);
	return rc;
}

eo_kube_err eo_kube_evict(eo_kube_client *c, const char *ns, const char *name, const char *uid,
			  struct eo_kube_error *err)
{
	struct eo_kube_resource r = {.gv = "v1", .plural = "pods", .ns = ns, .name = name};
	json_t *body = NULL;
	eo_kube_err rc;

	if (!eo_present(ns) || !eo_present(name))
		return eo_kube_fail(err, EO_KUBE_EINVALID, "evict needs a namespace and a name");
	body = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "policy/v1", "kind", "Eviction",
			 "metadata", "name", name, "namespace", ns);
	/* The precondition is checked like delete's: a lost one would make it unguarded. */
	if (body != NULL && uid != NULL &&
	    json_object_set_new(body, "deleteOptions",
				json_pack("{s:{s:s}}", "preconditions", "uid", uid)) != 0) {
		json_decref(body);
		body = NULL;
	}
	if (body == NULL)
		return eo_kube_fail(err, EO_KUBE_ENOMEM,
				    "eviction: out of memory (or a value that is not UTF-8)");
	rc = simple(c, "POST", &r, "eviction", "application/json", body, NULL, err);
	json_decref(body);
	return rc;
}

/* ---- streamed LIST ---------------------------------------------------- */

#define LIST_ERRBODY_MAX (64u << 10)
#define LIST_MAX_PAGES	 100000

struct page {
	CURL *h;
	long status;
	eo_kube_objstream *os;
	struct eo_capbuf errbody;
	eo_kube_err rc; /* a decode failure that aborted the transfer */
	struct eo_kube_error e;
	/* from the page's envelope */
	char *cont;
	json_t *env;
	bool ended;
	eo_kube_list_cb cb;
	void *ud;
	bool stopped;
};

static size_t page_write(char *data, size_t size, size_t nmemb, void *ud)
{
	struct page *pg = ud;
	size_t n = size * nmemb;

	if (pg->status == 0 && pg->h)
		curl_easy_getinfo(pg->h, CURLINFO_RESPONSE_CODE, &pg->status);
	if (pg->status < 200 || pg->status >= 300) {
		/* A failed LIST answers with a Status: keep a capped copy. */
		size_t room = pg->errbody.max - pg->errbody.len, k = n < room ? n : room;

		if (k > 0 && body_write(data, 1, k, &pg->errbody) != k)
			return 0;
		return n;
	}
	pg->rc = eo_kube_objstream_feed(pg->os, data, n, &pg->e);
	return pg->rc == EO_KUBE_OK ? n : 0;
}

static int page_event(void *ud, const struct eo_kube_objstream_event *ev)
{
	struct page *pg = ud;

	if (ev->type == EO_KUBE_OS_END) {
		const char *next = json_string_value(eo_meta_get(ev->obj, "continue"));

		json_decref(pg->env);
		pg->env = json_incref(ev->obj);
		free(pg->cont);
		pg->cont = eo_present(next) ? strdup(next) : NULL;
		pg->ended = true;
		if (eo_present(next) && !pg->cont)
			return 1;
	}
	if (pg->cb(pg->ud, ev) != 0) {
		pg->stopped = true;
		return 1;
	}
	return 0;
}

/* One LIST page, streamed through cb. On success pg->env is the page's envelope and
 * pg->cont its continue token (NULL on the last page). */
static eo_kube_err list_page(eo_kube_client *c, const struct eo_kube_resource *r,
			     const struct eo_kube_list_opts *o, const char *cont, bool paged,
			     struct page *pg, struct eo_kube_error *err)
{
	char limit[32];
	const char *params[11];
	int i = 0, attempt;
	char *url;
	eo_kube_err rc = EO_KUBE_OK;

	params[i++] = "labelSelector";
	params[i++] = o && eo_present(o->label_selector) ? o->label_selector : NULL;
	params[i++] = "fieldSelector";
	params[i++] = o && eo_present(o->field_selector) ? o->field_selector : NULL;
	params[i++] = "limit";
	params[i++] = NULL;
	if (paged && o && o->limit > 0) {
		snprintf(limit, sizeof(limit), "%ld", o->limit);
		params[i - 1] = limit;
	}
	params[i++] = "continue";
	params[i++] = cont;
	/* resourceVersion only makes sense on the first page. */
	params[i++] = "resourceVersion";
	params[i++] = !cont && o && eo_present(o->resource_version) ? o->resource_version : NULL;
	params[i] = NULL;

	url = eo_kube_url(eo_kube_config_server(c->cfg), r, NULL, params);
	if (!url)
		return eo_kube_fail(err, EO_KUBE_EINVALID, "cannot build URL for list of %s",
				    r->plural ? r->plural : "?");
	/* A 401 may mean a rotated token file: one more try (nothing was decoded yet). */
	for (attempt = 0; attempt < 2; attempt++) {
		struct eo_kube_objstream_opts so = {
		    .mode = EO_KUBE_OBJSTREAM_LIST,
		    .max_object = o ? o->max_object : 0,
		    .keep_all = o && o->keep_all,
		    .cb = page_event,
		    .ud = pg,
		};

		eo_kube_objstream_free(pg->os);
		free(pg->errbody.data);
		pg->errbody = (struct eo_capbuf){.max = LIST_ERRBODY_MAX};
		pg->status = 0;
		pg->rc = EO_KUBE_OK;
		pg->ended = false;
		pg->os = eo_kube_objstream_new(&so);
		if (!pg->os) {
			rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "list decoder");
			break;
		}
		rc = transfer(c, "GET", url, NULL, NULL, page_write, pg, &pg->h, &pg->status, NULL,
			      err);
		if (pg->rc != EO_KUBE_OK) {
			rc = pg->rc;
			if (err)
				*err = pg->e;
			if (rc == EO_KUBE_ECANCELED && !pg->stopped)
				rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "continue token");
		} else if (rc == EO_KUBE_OK && (pg->status < 200 || pg->status >= 300)) {
			rc = eo_kube_status_parse((int)pg->status, pg->errbody.data,
						  pg->errbody.len, err);
		} else if (rc == EO_KUBE_OK) {
			rc = eo_kube_objstream_finish(pg->os, err);
			if (rc == EO_KUBE_OK && !json_is_array(json_object_get(pg->env, "items")))
				rc = eo_kube_fail(err, EO_KUBE_EPROTOCOL,
						  "list response has no items array");
		}
		if (rc != EO_KUBE_EUNAUTHORIZED || !eo_kube_config_token_renewable(c->cfg))
			break;
		eo_kube_config_token_invalidate(c->cfg);
	}
	if (rc != EO_KUBE_OK && err && err->http_status == 0 && pg->status)
		err->http_status = (int)pg->status;
	free(url);
	return rc;
}

eo_kube_err eo_kube_list_each(eo_kube_client *c, const struct eo_kube_resource *r,
			      const struct eo_kube_list_opts *opts, eo_kube_list_cb cb, void *ud,
			      struct eo_kube_error *err)
{
	struct eo_kube_resource x = *r;
	struct page pg = {.cb = cb, .ud = ud};
	char *cont = NULL;
	bool paged = true, restarted = false;
	eo_kube_err rc;
	int pages = 0;

	x.name = NULL;
	for (;;) {
		rc = list_page(c, &x, opts, cont, paged, &pg, err);
		if (rc == EO_KUBE_EGONE && cont && !restarted) {
			/* The continue token expired: start over with one unpaged list. */
			struct eo_kube_objstream_event ev = {.type = EO_KUBE_OS_RESTART};

			restarted = true;
			paged = false;
			free(cont);
			cont = NULL;
			if (cb(ud, &ev) != 0) {
				rc = eo_kube_fail(err, EO_KUBE_ECANCELED, "stopped by callback");
				break;
			}
			continue;
		}
		if (rc != EO_KUBE_OK)
			break;
		free(cont);
		cont = pg.cont;
		pg.cont = NULL;
		if (!cont)
			break;
		if (++pages > LIST_MAX_PAGES) {
			rc = eo_kube_fail(err, EO_KUBE_ETOOLARGE, "list has too many pages");
			break;
		}
	}
	free(cont);
	free(pg.cont);
	free(pg.errbody.data);
	json_decref(pg.env);
	eo_kube_objstream_free(pg.os);
	return rc;
}

/* eo_kube_list(): the pages merged into one list object. */
struct merged {
	json_t *items;
	json_t *env;
	size_t total, max;
	eo_kube_err rc;
	char detail[200];
};

static int merge_event(void *ud, const struct eo_kube_objstream_event *ev)
{
	struct merged *m = ud;

	switch (ev->type) {
	case EO_KUBE_OS_ITEM:
		m->total += json_dumpb(ev->obj, NULL, 0, JSON_COMPACT);
		if (m->total > m->max) {
			m->rc = EO_KUBE_ETOOLARGE;
			snprintf(m->detail, sizeof(m->detail), "list exceeds its cap of %zu bytes",
				 m->max);
			return 1;
		}
		if (json_array_append(m->items, ev->obj) != 0) {
			m->rc = EO_KUBE_ENOMEM;
			snprintf(m->detail, sizeof(m->detail), "merging list pages");
			return 1;
		}
		return 0;
	case EO_KUBE_OS_SKIP:
		/* A caller of the merged form gets all items or an error. */
		m->rc = ev->why;
		snprintf(m->detail, sizeof(m->detail), "list item %.64s/%.100s: %s", ev->ref->ns,
			 ev->ref->name, ev->detail ? ev->detail : "skipped");
		return 1;
	case EO_KUBE_OS_END:
		json_decref(m->env);
		m->env = json_incref(ev->obj);
		return 0;
	case EO_KUBE_OS_RESTART:
		json_array_clear(m->items);
		m->total = 0;
		return 0;
	}
	return 0;
}

eo_kube_err eo_kube_list(eo_kube_client *c, const struct eo_kube_resource *r,
			 const struct eo_kube_list_opts *opts, json_t **out,
			 struct eo_kube_error *err)
{
	struct merged m = {.items = json_array(), .max = c->max_list};
	struct eo_kube_list_opts o = opts ? *opts : (struct eo_kube_list_opts){0};
	eo_kube_err rc;

	*out = NULL;
	o.keep_all = true; /* the merged form returns objects as the server sent them */
	if (!o.max_object)
		o.max_object = c->max_body;
	if (!m.items)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "list");
	rc = eo_kube_list_each(c, r, &o, merge_event, &m, err);
	if (rc == EO_KUBE_ECANCELED && m.rc != EO_KUBE_OK)
		rc = eo_kube_fail(err, m.rc, "%s", m.detail);
	if (rc == EO_KUBE_OK) {
		json_t *meta = json_object_get(m.env, "metadata");

		/* The merged list is complete: drop the last page's continue. */
		json_object_del(meta, "continue");
		json_object_del(meta, "remainingItemCount");
		if (json_object_set(m.env, "items", m.items) != 0) {
			rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "list");
		} else {
			*out = m.env;
			m.env = NULL;
		}
	}
	json_decref(m.items);
	json_decref(m.env);
	return rc;
}
