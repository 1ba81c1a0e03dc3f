/*
 * etcd client: transport (one libcurl easy handle, HTTP/1.1, reused
 * connections), endpoint failover and the public operations. The JSON side
 * lives in wire.c and endpoint ordering in select.c.
 */
#include <curl/curl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sleep.h"
#include "core/strbuf.h"
#include "etcd/internal.h"

#define DEFAULT_TIMEOUT_MS	   5000
#define DEFAULT_CONNECT_TIMEOUT_MS 2000
#define DEFAULT_BACKOFF_MS	   10000
#define DEFAULT_MAX_BODY	   (4u << 20)
#define MAX_ENDPOINTS		   64
#define MAX_BODY_LIMIT		   ((size_t)1 << 30)
#define MAX_TOKEN		   4096
#define INITIAL_BODY		   4096

/* The gateway's route prefix for etcd 3.4 and later (3.4 also serves the old
 * /v3beta, which 3.5 drops, so /v3 is the one name all supported versions share). */
#define GATEWAY_PREFIX "/v3/"

struct eo_etcd_client {
	struct eo__etcd_ep *eps;
	size_t n_eps;
	CURL *curl;
	struct curl_slist *headers;
	struct curl_slist *connect_to; /* eo_etcd_config.connect_to, then .routes; NULL: none */
	long timeout_ms;
	long connect_timeout_ms;
	long backoff_ms;
	struct eo_capbuf body;
	char errbuf[CURL_ERROR_SIZE];
	/* Credentials (cleansed on free) and the token they bought, at token_ep. */
	char *username;
	char *password;
	char token[MAX_TOKEN + 1];
	char token_ep[EO_ETCD_URL_MAX];
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* +1 keeps 0 free to mean "never failed". */
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1;
}

static void detail_reset(struct eo_etcd_detail *d)
{
	memset(d, 0, sizeof(*d));
	d->grpc_code = -1;
}

static void detail_set(struct eo_etcd_detail *d, const char *endpoint, const char *msg)
{
	detail_reset(d);
	eo__etcd_copy(d->endpoint, sizeof(d->endpoint), endpoint);
	eo__etcd_copy(d->message, sizeof(d->message), msg);
}

/* ---- transport ---------------------------------------------------------- */

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	return eo_capbuf_append(userdata, ptr, size * nmemb);
}

static eo_etcd_err map_curl(CURLcode rc, bool overflow)
{
	switch (rc) {
	case CURLE_OK:
		return EO_ETCD_OK;
	case CURLE_OPERATION_TIMEDOUT:
		return EO_ETCD_TIMEOUT;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_GOT_NOTHING:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
		return EO_ETCD_UNAVAILABLE;
	case CURLE_WRITE_ERROR:
		return overflow ? EO_ETCD_TOOBIG : EO_ETCD_NOMEM;
	case CURLE_OUT_OF_MEMORY:
		return EO_ETCD_NOMEM;
	default:
		return EO_ETCD_TRANSPORT;
	}
}

/*
 * One POST to one endpoint. On EO_ETCD_OK the 200 body is in c->body.
 * *delivered tells whether the request may have reached the server: false
 * only when the transfer failed before anything was sent, or the server
 * refused it before acting (learner refusal, unknown route).
 */
static eo_etcd_err post_once(eo_etcd_client *c, const char *base, const char *path, const char *req,
			     struct eo_etcd_detail *d, bool *delivered)
{
	char url[EO_ETCD_URL_MAX + 64];
	CURLcode rc;
	long status = 0;
	curl_off_t pretransfer = 0;
	eo_etcd_err err;
	int n;

	detail_reset(d);
	eo__etcd_copy(d->endpoint, sizeof(d->endpoint), base);
	*delivered = false;
	n = snprintf(url, sizeof(url), "%s%s%s", base, GATEWAY_PREFIX, path);
	if (n < 0 || (size_t)n >= sizeof(url)) {
		eo__etcd_copy(d->message, sizeof(d->message), "endpoint URL too long");
		return EO_ETCD_INVALID;
	}
	c->body.len = 0;
	c->body.overflow = false;
	c->body.data[0] = '\0';
	c->errbuf[0] = '\0';
	if (curl_easy_setopt(c->curl, CURLOPT_URL, url) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, req) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(req)) !=
		CURLE_OK)
		return EO_ETCD_NOMEM;
	rc = curl_easy_perform(c->curl);
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	d->http_status = status;
	if (rc != CURLE_OK) {
		d->curl_code = (int)rc;
		eo__etcd_copy(d->message, sizeof(d->message),
			      c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc));
		err = map_curl(rc, c->body.overflow);
		/*
		 * With TLS 1.3 a server that refuses the client certificate says so in an alert
		 * read after the handshake: a TLS failure, not an unreachable member.
		 */
		if (rc == CURLE_RECV_ERROR && strstr(c->errbuf, "SSL") != NULL &&
		    strstr(c->errbuf, "alert") != NULL)
			err = EO_ETCD_TRANSPORT;
		/* A transfer that never got past connecting sent nothing. */
		if (curl_easy_getinfo(c->curl, CURLINFO_PRETRANSFER_TIME_T, &pretransfer) !=
			CURLE_OK ||
		    pretransfer > 0 || err == EO_ETCD_TOOBIG)
			*delivered = true;
		return err;
	}
	if (status == 200) {
		*delivered = true;
		return EO_ETCD_OK;
	}
	err = eo_etcd_wire_map_error(status, c->body.data, c->body.len, d);
	d->http_status = status;
	*delivered = !(err == EO_ETCD_LEARNER || err == EO_ETCD_UNSUPPORTED);
	return err;
}

static eo_etcd_err set_headers(eo_etcd_client *c, const char *token);
static bool endpoint_fault(eo_etcd_err err);

/* Authenticate at base; on success the token is in the header for every later request. */
static eo_etcd_err authenticate_at(eo_etcd_client *c, const char *base, struct eo_etcd_detail *d)
{
	char *req = NULL;
	bool delivered;
	eo_etcd_err err;

	if (c->password == NULL) {
		detail_set(d, base, "no credentials configured");
		return EO_ETCD_INVALID;
	}
	req = eo_etcd_wire_req_name_password(c->username, c->password, false);
	if (req == NULL) {
		detail_set(d, base, "cannot encode the credentials (not UTF-8?)");
		return EO_ETCD_INVALID;
	}
	/* Without the old token: etcd 3.4 refuses an Authenticate that carries a stale one. */
	explicit_bzero(c->token, sizeof(c->token));
	c->token_ep[0] = '\0';
	err = set_headers(c, NULL);
	if (err == EO_ETCD_OK)
		err = post_once(c, base, "auth/authenticate", req, d, &delivered);
	explicit_bzero(req, strlen(req));
	free(req);
	if (err == EO_ETCD_OK)
		err = eo__etcd_parse_token(c->body.data, c->body.len, c->token, sizeof(c->token));
	/* The body held the token: wipe it. */
	explicit_bzero(c->body.data, c->body.cap);
	c->body.len = 0;
	if (err == EO_ETCD_OK)
		err = set_headers(c, c->token);
	if (err == EO_ETCD_OK)
		eo__etcd_copy(c->token_ep, sizeof(c->token_ep), base);
	else
		explicit_bzero(c->token, sizeof(c->token));
	return err;
}

/* Whether a refusal may go away with a (new) token from base. */
static bool wants_token(const eo_etcd_client *c, const char *base, eo_etcd_err err,
			const struct eo_etcd_detail *d)
{
	if (c->password == NULL)
		return false;
	/* etcd 3.4.23's gateway answers a missing or stale token with an empty reply. */
	if (err == EO_ETCD_UNAVAILABLE && d->curl_code == CURLE_GOT_NOTHING)
		return true;
	if (err != EO_ETCD_AUTH)
		return false;
	if (strstr(d->message, "user name is empty") != NULL ||
	    strstr(d->message, "invalid auth token") != NULL ||
	    strstr(d->message, "revision of auth store is old") != NULL)
		return true;
	/* Permission refused while we hold no token from this member: not ours yet. */
	return strstr(d->message, "permission denied") != NULL && strcmp(c->token_ep, base) != 0;
}

/*
 * One POST, authenticating first and sending it again when etcd refused it for want of a
 * token (see eo_etcd_config.password). An Authenticate that fails is what the caller sees
 * (a wrong password reads "authentication failed"), unless etcd has no auth on, where the
 * first answer stands.
 */
static eo_etcd_err post(eo_etcd_client *c, const char *base, const char *path, const char *req,
			struct eo_etcd_detail *d, bool *delivered)
{
	struct eo_etcd_detail ad;
	eo_etcd_err err = post_once(c, base, path, req, d, delivered);
	eo_etcd_err aerr;

	if (err == EO_ETCD_OK || !wants_token(c, base, err, d))
		return err;
	aerr = authenticate_at(c, base, &ad);
	if (aerr != EO_ETCD_OK) {
		/* No auth on, or the member is simply down: the first answer stands. */
		if (strstr(ad.message, "authentication is not enabled") != NULL ||
		    endpoint_fault(aerr))
			return err;
		*d = ad;
		return aerr;
	}
	return post_once(c, base, path, req, d, delivered);
}

static void mark_ok(eo_etcd_client *c, size_t i, bool voter_only)
{
	if (i >= c->n_eps)
		return;
	c->eps[i].failed_at_ms = 0;
	if (voter_only)
		c->eps[i].role = EO__ETCD_ROLE_VOTER;
}

static void mark_failed(eo_etcd_client *c, size_t i)
{
	if (i < c->n_eps)
		c->eps[i].failed_at_ms = now_ms();
}

/* Errors after which the endpoint, not the request, is the likely problem. */
static bool endpoint_fault(eo_etcd_err err)
{
	return err == EO_ETCD_UNAVAILABLE || err == EO_ETCD_TIMEOUT || err == EO_ETCD_TRANSPORT ||
	       err == EO_ETCD_UNSUPPORTED;
}

static eo_etcd_err status_at(eo_etcd_client *c, const char *base, struct eo_etcd_status *out,
			     struct eo_etcd_detail *d);

/*
 * When every remaining endpoint is marked as a learner, asks each of them
 * (status is allowed on learners) whether it still is one: a promoted
 * learner becomes usable again without waiting for a member list.
 */
static void recheck_learners(eo_etcd_client *c)
{
	struct eo_etcd_detail scratch;

	for (size_t i = 0; i < c->n_eps; i++) {
		struct eo_etcd_status st = {0};

		if (c->eps[i].role != EO__ETCD_ROLE_LEARNER)
			continue;
		(void)status_at(c, c->eps[i].url, &st, &scratch);
		eo_etcd_status_clear(&st);
	}
}

/*
 * Sends one request, failing over across endpoints. need_voter keeps it
 * away from learners; idempotent allows a retry on another endpoint after an
 * attempt whose outcome is unknown. On EO_ETCD_OK the body is in c->body.
 */
static eo_etcd_err call(eo_etcd_client *c, const char *path, const char *req, bool need_voter,
			bool idempotent, struct eo_etcd_detail *d)
{
	size_t order[MAX_ENDPOINTS];
	size_t n, tried = 0;
	eo_etcd_err err = EO_ETCD_UNAVAILABLE;

	detail_reset(d);
	n = eo__etcd_select(c->eps, c->n_eps, need_voter, now_ms(), c->backoff_ms, order);
	if (n == 0 && need_voter) {
		recheck_learners(c);
		n = eo__etcd_select(c->eps, c->n_eps, need_voter, now_ms(), c->backoff_ms, order);
	}
	for (size_t k = 0; k < n; k++) {
		size_t i = order[k];
		bool delivered;

		tried++;
		err = post(c, c->eps[i].url, path, req, d, &delivered);
		if (err == EO_ETCD_OK) {
			mark_ok(c, i, need_voter);
			return EO_ETCD_OK;
		}
		if (err == EO_ETCD_LEARNER) {
			/* Refused before acting: always safe to move on. */
			c->eps[i].role = EO__ETCD_ROLE_LEARNER;
			continue;
		}
		if (!endpoint_fault(err))
			return err; /* the cluster answered; another endpoint would agree */
		mark_failed(c, i);
		if (delivered && !idempotent)
			return err; /* may have been applied: the caller must look first */
	}
	if (tried == 0) {
		detail_set(d, "", "no usable endpoint: every endpoint is a learner");
		return EO_ETCD_LEARNER;
	}
	return err;
}

/* call() with a request built for it (NULL: allocation failed), freed afterwards. */
static eo_etcd_err call_owned(eo_etcd_client *c, const char *path, char *req, bool need_voter,
			      bool idempotent, struct eo_etcd_detail *d)
{
	eo_etcd_err err;

	if (req == NULL) {
		detail_reset(d);
		return EO_ETCD_NOMEM;
	}
	err = call(c, path, req, need_voter, idempotent, d);
	free(req);
	return err;
}

/* ---- lifecycle ---------------------------------------------------------- */

void eo__etcd_free_headers(struct curl_slist *h)
{
	for (struct curl_slist *i = h; i != NULL; i = i->next)
		if (i->data != NULL && strncmp(i->data, "Authorization:", 14) == 0)
			explicit_bzero(i->data, strlen(i->data));
	curl_slist_free_all(h);
}

eo_etcd_err eo__etcd_headers(const char *token, struct curl_slist **out)
{
	struct curl_slist *h = NULL, *t;
	char *auth = NULL;
	eo_etcd_err err = EO_ETCD_NOMEM;

	*out = NULL;
	if (token != NULL) {
		size_t len = strnlen(token, MAX_TOKEN + 1);

		if (len == 0 || len > MAX_TOKEN || strpbrk(token, "\r\n") != NULL) {
			err = EO_ETCD_INVALID;
			goto out;
		}
		/* etcd takes the whole header value as the token: no "Bearer ". */
		if (asprintf(&auth, "Authorization: %s", token) < 0) {
			auth = NULL;
			goto out;
		}
	}
	t = curl_slist_append(h, "Content-Type: application/json");
	if (t == NULL)
		goto out;
	h = t;
	/* No "Expect: 100-continue" round trip for large puts. */
	t = curl_slist_append(h, "Expect:");
	if (t == NULL)
		goto out;
	h = t;
	if (auth != NULL) {
		t = curl_slist_append(h, auth);
		if (t == NULL)
			goto out;
		h = t;
	}
	*out = h;
	h = NULL;
	err = EO_ETCD_OK;
out:
	eo__etcd_free_headers(h);
	if (auth != NULL)
		explicit_bzero(auth, strlen(auth));
	free(auth);
	return err;
}

static eo_etcd_err set_headers(eo_etcd_client *c, const char *token)
{
	struct curl_slist *h = NULL;
	eo_etcd_err err = eo__etcd_headers(token, &h);

	if (err != EO_ETCD_OK)
		return err;
	if (curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, h) != CURLE_OK) {
		eo__etcd_free_headers(h);
		return EO_ETCD_NOMEM;
	}
	eo__etcd_free_headers(c->headers);
	c->headers = h;
	return EO_ETCD_OK;
}

eo_etcd_err eo_etcd_client_set_token(eo_etcd_client *c, const char *token)
{
	if (c == NULL)
		return EO_ETCD_INVALID;
	return set_headers(c, token);
}

static bool set_blob(CURL *curl, CURLoption opt, const void *data, size_t len)
{
	struct curl_blob blob = {.data = (void *)data, .len = len, .flags = CURL_BLOB_COPY};

	return curl_easy_setopt(curl, opt, &blob) == CURLE_OK;
}

/*
 * One TLS source: the PEM in memory (and then extra_opt set to extra), else the file, else
 * nothing.
 */
static bool set_source(CURL *curl, CURLoption blob_opt, const void *pem, size_t len,
		       CURLoption extra_opt, const char *extra, CURLoption file_opt,
		       const char *file)
{
	if (pem != NULL)
		return set_blob(curl, blob_opt, pem, len) &&
		       curl_easy_setopt(curl, extra_opt, extra) == CURLE_OK;
	return file == NULL || curl_easy_setopt(curl, file_opt, file) == CURLE_OK;
}

static eo_etcd_err setup_tls(CURL *curl, const struct eo_etcd_config *cfg)
{
	/* Only the given bundle is trusted, not the system's CA directory too (CAPATH NULL). */
	if (!set_source(curl, CURLOPT_CAINFO_BLOB, cfg->ca_pem, cfg->ca_pem_len, CURLOPT_CAPATH,
			NULL, CURLOPT_CAINFO, cfg->ca_file) ||
	    !set_source(curl, CURLOPT_SSLCERT_BLOB, cfg->cert_pem, cfg->cert_pem_len,
			CURLOPT_SSLCERTTYPE, "PEM", CURLOPT_SSLCERT, cfg->cert_file) ||
	    !set_source(curl, CURLOPT_SSLKEY_BLOB, cfg->key_pem, cfg->key_pem_len,
			CURLOPT_SSLKEYTYPE, "PEM", CURLOPT_SSLKEY, cfg->key_file))
		return EO_ETCD_TRANSPORT;
	return EO_ETCD_OK;
}

static bool add_connect_to(struct curl_slist **routes, const char *entry)
{
	struct curl_slist *l = curl_slist_append(*routes, entry);

	if (l == NULL)
		return false;
	*routes = l;
	return true;
}

eo_etcd_err eo__etcd_curl_setup(CURL *h, const struct eo_etcd_config *cfg, long timeout_ms,
				long connect_timeout_ms, struct curl_slist **routes)
{
	if (curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    /* etcd is reached directly; never through a proxy from the environment. */
	    curl_easy_setopt(h, CURLOPT_PROXY, "") != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK)
		return EO_ETCD_TRANSPORT;
	/* curl takes the first entry that matches a host: the test seam, then the routes. */
	if (cfg->connect_to != NULL && !add_connect_to(routes, cfg->connect_to))
		return EO_ETCD_TRANSPORT;
	for (size_t i = 0; i < cfg->n_routes; i++)
		if (cfg->routes[i] != NULL && !add_connect_to(routes, cfg->routes[i]))
			return EO_ETCD_TRANSPORT;
	if (*routes != NULL && curl_easy_setopt(h, CURLOPT_CONNECT_TO, *routes) != CURLE_OK)
		return EO_ETCD_TRANSPORT;
	return setup_tls(h, cfg);
}

static eo_etcd_err setup_curl(eo_etcd_client *c, const struct eo_etcd_config *cfg)
{
	CURL *h = c->curl;

	if (curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_WRITEDATA, &c->body) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf) != CURLE_OK)
		return EO_ETCD_TRANSPORT;
	return eo__etcd_curl_setup(h, cfg, c->timeout_ms, c->connect_timeout_ms, &c->connect_to);
}

eo_etcd_err eo_etcd_client_new(const struct eo_etcd_config *cfg, eo_etcd_client **out,
			       struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	eo_etcd_client *c = NULL;
	eo_etcd_err err = EO_ETCD_INVALID;

	detail_reset(d);
	if (out != NULL)
		*out = NULL;
	if (cfg == NULL || out == NULL || cfg->endpoints == NULL || cfg->n_endpoints == 0 ||
	    (cfg->n_routes > 0 && cfg->routes == NULL) || cfg->n_endpoints > MAX_ENDPOINTS ||
	    cfg->timeout_ms < 0 || cfg->connect_timeout_ms < 0 || cfg->fail_backoff_ms < 0 ||
	    cfg->max_body > MAX_BODY_LIMIT) {
		eo__etcd_copy(d->message, sizeof(d->message), "invalid client configuration");
		goto out;
	}
	err = EO_ETCD_NOMEM;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		goto out;
	c->eps = calloc(cfg->n_endpoints, sizeof(*c->eps));
	if (c->eps == NULL)
		goto out;
	err = EO_ETCD_INVALID;
	for (size_t i = 0; i < cfg->n_endpoints; i++) {
		if (!eo__etcd_url_normalise(cfg->endpoints[i], c->eps[i].url,
					    sizeof(c->eps[i].url))) {
			detail_set(d, cfg->endpoints[i] ? cfg->endpoints[i] : "",
				   "endpoint must be http(s)://host[:port]");
			goto out;
		}
		c->n_eps++;
	}
	c->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
	c->connect_timeout_ms =
	    cfg->connect_timeout_ms ? cfg->connect_timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS;
	if (c->connect_timeout_ms > c->timeout_ms)
		c->connect_timeout_ms = c->timeout_ms;
	c->backoff_ms = cfg->fail_backoff_ms ? cfg->fail_backoff_ms : DEFAULT_BACKOFF_MS;
	c->body.max = cfg->max_body ? cfg->max_body : DEFAULT_MAX_BODY;
	err = EO_ETCD_NOMEM;
	/* Always allocated, so a 200 with an empty body still reads as "". */
	c->body.cap = c->body.max < INITIAL_BODY ? c->body.max + 1 : INITIAL_BODY;
	c->body.data = malloc(c->body.cap);
	if (c->body.data == NULL)
		goto out;
	c->body.data[0] = '\0';
	c->curl = curl_easy_init();
	if (c->curl == NULL)
		goto out;
	err = setup_curl(c, cfg);
	if (err != EO_ETCD_OK) {
		eo__etcd_copy(d->message, sizeof(d->message), "cannot configure TLS/transport");
		goto out;
	}
	err = set_headers(c, cfg->auth_token);
	if (err != EO_ETCD_OK) {
		eo__etcd_copy(d->message, sizeof(d->message), "invalid auth token");
		goto out;
	}
	if (cfg->password != NULL) {
		err = EO_ETCD_NOMEM;
		c->username = strdup(cfg->username != NULL ? cfg->username : "root");
		c->password = strdup(cfg->password);
		if (c->username == NULL || c->password == NULL)
			goto out;
		err = EO_ETCD_OK;
	}
	*out = c;
	c = NULL;
out:
	eo_etcd_client_free(c);
	return err;
}

void eo_etcd_client_free(eo_etcd_client *c)
{
	if (c == NULL)
		return;
	if (c->curl != NULL)
		curl_easy_cleanup(c->curl);
	eo__etcd_free_headers(c->headers);
	curl_slist_free_all(c->connect_to);
	if (c->password != NULL)
		explicit_bzero(c->password, strlen(c->password));
	free(c->password);
	free(c->username);
	explicit_bzero(c->token, sizeof(c->token));
	if (c->body.data != NULL)
		explicit_bzero(c->body.data, c->body.cap);
	free(c->body.data);
	free(c->eps);
	free(c);
}

size_t eo_etcd_client_endpoint_count(const eo_etcd_client *c)
{
	return c ? c->n_eps : 0;
}

const char *eo_etcd_client_endpoint(const eo_etcd_client *c, size_t i)
{
	return c && i < c->n_eps ? c->eps[i].url : NULL;
}

bool eo_etcd_client_endpoint_is_learner(const eo_etcd_client *c, size_t i)
{
	return c && i < c->n_eps && c->eps[i].role == EO__ETCD_ROLE_LEARNER;
}

/* ---- members ------------------------------------------------------------ */

/* Parses a members response from c->body and refreshes learner marks. */
static eo_etcd_err take_members(eo_etcd_client *c, struct eo_etcd_members *out)
{
	struct eo_etcd_members tmp = {0};
	eo_etcd_err err = eo_etcd_wire_parse_members(c->body.data, c->body.len, &tmp);

	if (err == EO_ETCD_OK)
		eo__etcd_learn_roles(c->eps, c->n_eps, &tmp);
	if (out != NULL && err == EO_ETCD_OK)
		*out = tmp;
	else
		eo_etcd_members_clear(&tmp);
	return err;
}

eo_etcd_err eo_etcd_member_list(eo_etcd_client *c, struct eo_etcd_members *out,
				struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	eo_etcd_err err;

	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (c == NULL || out == NULL) {
		detail_set(d, "", "NULL argument");
		return EO_ETCD_INVALID;
	}
	/* 3.4 ignores the unknown field; 3.5+ then answer after a ReadIndex. */
	err = call(c, "cluster/member/list", "{\"linearizable\":true}", true, true, d);
	if (err == EO_ETCD_OK)
		err = take_members(c, out);
	return err;
}

eo_etcd_err eo_etcd_member_add(eo_etcd_client *c, const char *const *peer_urls, size_t n_peer_urls,
			       bool as_learner, struct eo_etcd_member *added,
			       struct eo_etcd_members *members, struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	struct eo_etcd_members ms = {0};
	char *req = NULL;
	eo_etcd_err err = EO_ETCD_INVALID;

	detail_reset(d);
	if (added != NULL)
		memset(added, 0, sizeof(*added));
	if (members != NULL)
		memset(members, 0, sizeof(*members));
	if (c == NULL || added == NULL || peer_urls == NULL || n_peer_urls == 0) {
		eo__etcd_copy(d->message, sizeof(d->message), "no peer URLs");
		goto out;
	}
	for (size_t i = 0; i < n_peer_urls; i++) {
		if (peer_urls[i] == NULL || peer_urls[i][0] == '\0') {
			eo__etcd_copy(d->message, sizeof(d->message), "empty peer URL");
			goto out;
		}
	}
	err = EO_ETCD_NOMEM;
	req = eo__etcd_req_member_add(peer_urls, n_peer_urls, as_learner);
	if (req == NULL)
		goto out;
	err = call(c, "cluster/member/add", req, true, false, d);
	if (err != EO_ETCD_OK)
		goto out;
	err = eo__etcd_parse_member_add(c->body.data, c->body.len, added, &ms);
	if (err != EO_ETCD_OK)
		goto out;
	eo__etcd_learn_roles(c->eps, c->n_eps, &ms);
	if (members != NULL) {
		*members = ms;
		memset(&ms, 0, sizeof(ms));
	}
out:
	eo_etcd_members_clear(&ms);
	free(req);
	return err;
}

static eo_etcd_err member_by_id(eo_etcd_client *c, const char *path, uint64_t id,
				struct eo_etcd_members *members, struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	char *req = NULL;
	eo_etcd_err err = EO_ETCD_INVALID;

	detail_reset(d);
	if (members != NULL)
		memset(members, 0, sizeof(*members));
	if (c == NULL || id == 0) {
		eo__etcd_copy(d->message, sizeof(d->message), "member id 0");
		goto out;
	}
	err = EO_ETCD_NOMEM;
	req = eo__etcd_req_member_id(id);
	if (req == NULL)
		goto out;
	err = call(c, path, req, true, false, d);
	if (err == EO_ETCD_OK)
		err = take_members(c, members);
out:
	free(req);
	return err;
}

eo_etcd_err eo_etcd_member_promote(eo_etcd_client *c, uint64_t id, struct eo_etcd_members *members,
				   struct eo_etcd_detail *detail)
{
	return member_by_id(c, "cluster/member/promote", id, members, detail);
}

eo_etcd_err eo_etcd_member_remove(eo_etcd_client *c, uint64_t id, struct eo_etcd_members *members,
				  struct eo_etcd_detail *detail)
{
	return member_by_id(c, "cluster/member/remove", id, members, detail);
}

/* ---- status and health -------------------------------------------------- */

static eo_etcd_err status_at(eo_etcd_client *c, const char *base, struct eo_etcd_status *out,
			     struct eo_etcd_detail *d)
{
	size_t i = eo__etcd_find_ep(c->eps, c->n_eps, base);
	bool delivered;
	eo_etcd_err err;

	err = post(c, base, "maintenance/status", "{}", d, &delivered);
	if (err == EO_ETCD_OK)
		err = eo_etcd_wire_parse_status(c->body.data, c->body.len, out);
	if (i < c->n_eps) {
		if (err == EO_ETCD_OK) {
			c->eps[i].failed_at_ms = 0;
			c->eps[i].role =
			    out->is_learner ? EO__ETCD_ROLE_LEARNER : EO__ETCD_ROLE_VOTER;
		} else if (endpoint_fault(err)) {
			mark_failed(c, i);
		}
	}
	return err;
}

eo_etcd_err eo_etcd_status(eo_etcd_client *c, const char *endpoint, struct eo_etcd_status *out,
			   struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	char base[EO_ETCD_URL_MAX];

	detail_reset(d);
	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (c == NULL || out == NULL || !eo__etcd_url_normalise(endpoint, base, sizeof(base))) {
		detail_set(d, endpoint ? endpoint : "", "invalid endpoint");
		return EO_ETCD_INVALID;
	}
	return status_at(c, base, out, d);
}

eo_etcd_err eo_etcd_move_leader(eo_etcd_client *c, const char *leader_endpoint, uint64_t target_id,
				struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	char base[EO_ETCD_URL_MAX], *req;
	bool delivered;
	eo_etcd_err rc;

	detail_reset(d);
	if (c == NULL || target_id == 0 ||
	    !eo__etcd_url_normalise(leader_endpoint, base, sizeof(base))) {
		detail_set(d, leader_endpoint ? leader_endpoint : "",
			   "invalid endpoint or target id 0");
		return EO_ETCD_INVALID;
	}
	req = eo_etcd_wire_req_move_leader(target_id);
	if (req == NULL) {
		detail_set(d, leader_endpoint, "out of memory");
		return EO_ETCD_NOMEM;
	}
	rc = post(c, base, "maintenance/transfer-leadership", req, d, &delivered);
	free(req);
	return rc;
}

/* base64("health"): the key etcdctl's health check reads as well. */
#define HEALTH_KEY_B64 "aGVhbHRo"

eo_etcd_err eo_etcd_health(eo_etcd_client *c, const char *endpoint, struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	char base[EO_ETCD_URL_MAX];
	size_t i;
	bool learner, delivered;
	eo_etcd_err err;
	struct eo_etcd_range r = {0};

	detail_reset(d);
	if (c == NULL || !eo__etcd_url_normalise(endpoint, base, sizeof(base))) {
		detail_set(d, endpoint ? endpoint : "", "invalid endpoint");
		return EO_ETCD_INVALID;
	}
	i = eo__etcd_find_ep(c->eps, c->n_eps, base);
	learner = i < c->n_eps && c->eps[i].role == EO__ETCD_ROLE_LEARNER;
	err = post(c, base, "kv/range",
		   learner ? "{\"key\":\"" HEALTH_KEY_B64 "\",\"serializable\":true}"
			   : "{\"key\":\"" HEALTH_KEY_B64 "\"}",
		   d, &delivered);
	if (err == EO_ETCD_LEARNER) {
		/* Not known to be a learner until now: a local read is all it serves. */
		learner = true;
		if (i < c->n_eps)
			c->eps[i].role = EO__ETCD_ROLE_LEARNER;
		err = post(c, base, "kv/range",
			   "{\"key\":\"" HEALTH_KEY_B64 "\",\"serializable\":true}", d, &delivered);
	}
	if (err == EO_ETCD_OK) {
		err = eo_etcd_wire_parse_range(c->body.data, c->body.len, &r);
		eo_etcd_range_clear(&r);
	} else if (err == EO_ETCD_AUTH && strstr(d->message, "permission denied") != NULL) {
		err = EO_ETCD_OK; /* it answered; the key is simply not ours to read */
	}
	if (i < c->n_eps) {
		if (err == EO_ETCD_OK)
			mark_ok(c, i, !learner);
		else if (endpoint_fault(err))
			mark_failed(c, i);
	}
	return err;
}

/* ---- maintenance -------------------------------------------------------- */

eo_etcd_err eo_etcd_defragment(eo_etcd_client *c, const char *endpoint,
			       struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	char base[EO_ETCD_URL_MAX];
	size_t i;
	bool delivered;
	eo_etcd_err err;

	detail_reset(d);
	if (c == NULL || !eo__etcd_url_normalise(endpoint, base, sizeof(base))) {
		detail_set(d, endpoint ? endpoint : "", "invalid endpoint");
		return EO_ETCD_INVALID;
	}
	i = eo__etcd_find_ep(c->eps, c->n_eps, base);
	err = post(c, base, "maintenance/defragment", "{}", d, &delivered);
	if (i < c->n_eps && err != EO_ETCD_OK && endpoint_fault(err))
		mark_failed(c, i);
	return err;
}

eo_etcd_err eo_etcd_alarm_list(eo_etcd_client *c, struct eo_etcd_alarms *out,
			       struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	eo_etcd_err err;

	detail_reset(d);
	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (c == NULL || out == NULL) {
		detail_set(d, "", "NULL argument");
		return EO_ETCD_INVALID;
	}
	err =
	    call_owned(c, "maintenance/alarm", eo_etcd_wire_req_alarm("GET", NULL), false, true, d);
	if (err == EO_ETCD_OK)
		err = eo__etcd_parse_alarms(c->body.data, c->body.len, out);
	return err;
}

eo_etcd_err eo_etcd_alarm_disarm(eo_etcd_client *c, const struct eo_etcd_alarm *a,
				 struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;

	detail_reset(d);
	if (c == NULL || a == NULL) {
		detail_set(d, "", "NULL argument");
		return EO_ETCD_INVALID;
	}
	/* Deactivating an alarm that is gone is a no-op: safe to send twice. */
	return call_owned(c, "maintenance/alarm", eo_etcd_wire_req_alarm("DEACTIVATE", a), true,
			  true, d);
}

eo_etcd_err eo_etcd_compact(eo_etcd_client *c, int64_t revision, bool physical,
			    struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;

	detail_reset(d);
	if (c == NULL || revision <= 0) {
		detail_set(d, "", "invalid revision");
		return EO_ETCD_INVALID;
	}
	/* Compacting to a revision twice answers COMPACTED: idempotent in effect. */
	return call_owned(c, "kv/compaction", eo_etcd_wire_req_compact(revision, physical), true,
			  true, d);
}

eo_etcd_err eo_etcd_lease_grant(eo_etcd_client *c, int64_t ttl_s, int64_t *id,
				struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	eo_etcd_err err;

	detail_reset(d);
	if (id != NULL)
		*id = 0;
	if (c == NULL || id == NULL || ttl_s <= 0) {
		detail_set(d, "", "invalid lease request");
		return EO_ETCD_INVALID;
	}
	err = call_owned(c, "lease/grant", eo__etcd_req_lease_grant(ttl_s), true, false, d);
	if (err == EO_ETCD_OK)
		err = eo__etcd_parse_lease_grant(c->body.data, c->body.len, id);
	return err;
}

eo_etcd_err eo_etcd_lease_grant_id(eo_etcd_client *c, int64_t id, int64_t ttl_s,
				   struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	int64_t got = 0;
	eo_etcd_err err;

	detail_reset(d);
	if (c == NULL || id <= 0 || ttl_s <= 0) {
		detail_set(d, "", "invalid lease request");
		return EO_ETCD_INVALID;
	}
	err = call_owned(c, "lease/grant", eo__etcd_req_lease_grant_id(id, ttl_s), true, false, d);
	if (err == EO_ETCD_OK)
		err = eo__etcd_parse_lease_grant(c->body.data, c->body.len, &got);
	if (err == EO_ETCD_OK && got != id) {
		detail_set(d, "", "etcd granted another lease ID");
		err = EO_ETCD_PROTOCOL;
	}
	return err;
}

eo_etcd_err eo_etcd_hash_kv(eo_etcd_client *c, int64_t revision, uint32_t *hash,
			    int64_t *compact_revision, struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	int64_t cr = 0;
	uint32_t h = 0;
	char body[64];
	eo_etcd_err err;

	detail_reset(d);
	if (c == NULL || hash == NULL || revision < 0) {
		detail_set(d, "", "invalid hash_kv request");
		return EO_ETCD_INVALID;
	}
	snprintf(body, sizeof(body), "{\"revision\":\"%" PRId64 "\"}", revision);
	err = call(c, "maintenance/hashkv", body, false, true, d);
	if (err == EO_ETCD_OK)
		err = eo__etcd_parse_hash_kv(c->body.data, c->body.len, &h, &cr);
	*hash = h;
	if (compact_revision != NULL)
		*compact_revision = cr;
	return err;
}

eo_etcd_err eo_etcd_txn_apply(eo_etcd_client *c, const struct eo_etcd_txn_op *ops, size_t n,
			      int64_t *revision, struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	size_t i, bytes = 0;

	detail_reset(d);
	if (revision != NULL)
		*revision = 0;
	if (c == NULL || ops == NULL || n == 0 || n > EO_ETCD_TXN_MAX_OPS) {
		detail_set(d, "", "a txn needs 1 to EO_ETCD_TXN_MAX_OPS operations");
		return EO_ETCD_INVALID;
	}
	for (i = 0; i < n; i++) {
		if (ops[i].key == NULL || ops[i].key_len == 0 ||
		    (!ops[i].del && ops[i].value == NULL && ops[i].value_len > 0)) {
			detail_set(d, "", "empty key");
			return EO_ETCD_INVALID;
		}
		bytes += ops[i].key_len + (ops[i].del ? 0 : ops[i].value_len);
	}
	/* Base64 grows by 4/3; keep the request within what a reply may be. */
	if (bytes > c->body.max / 2) {
		detail_set(d, "", "txn too large");
		return EO_ETCD_TOOBIG;
	}
	{
		eo_etcd_err err = call_owned(c, "kv/txn", eo__etcd_req_txn(ops, n), true, false, d);

		if (err == EO_ETCD_OK)
			err = eo__etcd_parse_put(c->body.data, c->body.len, revision);
		return err;
	}
}

eo_etcd_err eo_etcd_lease_revoke(eo_etcd_client *c, int64_t id, struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	eo_etcd_err err;

	detail_reset(d);
	if (c == NULL || id <= 0) {
		detail_set(d, "", "invalid lease id");
		return EO_ETCD_INVALID;
	}
	err = call_owned(c, "lease/revoke", eo__etcd_req_lease_id(id), true, true, d);
	return err == EO_ETCD_NOTFOUND ? EO_ETCD_OK : err; /* gone already, or expired */
}

eo_etcd_err eo_etcd_backend_commit(eo_etcd_client *c, long gap_ms, struct eo_etcd_detail *detail)
{
	int64_t id = 0;
	eo_etcd_err err = eo_etcd_lease_grant(c, 5, &id, detail);

	if (err != EO_ETCD_OK)
		return err;
	eo_sleep_ms(gap_ms);
	err = eo_etcd_lease_revoke(c, id, detail);
	if (err == EO_ETCD_OK)
		eo_sleep_ms(gap_ms);
	return err;
}

eo_etcd_err eo_etcd_revision(eo_etcd_client *c, int64_t *revision, struct eo_etcd_detail *detail)
{
	struct eo_etcd_range_opts o = {.count_only = true};
	struct eo_etcd_range r = {0};
	eo_etcd_err err;

	if (revision == NULL)
		return EO_ETCD_INVALID;
	*revision = 0;
	err = eo_etcd_range(c, "health", 6, &o, &r, detail);
	if (err == EO_ETCD_OK)
		*revision = r.revision;
	eo_etcd_range_clear(&r);
	return err;
}

/* ---- keys --------------------------------------------------------------- */

eo_etcd_err eo_etcd_put(eo_etcd_client *c, const void *key, size_t key_len, const void *value,
			size_t value_len, int64_t *revision, struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	char *req = NULL;
	eo_etcd_err err = EO_ETCD_INVALID;

	detail_reset(d);
	if (revision != NULL)
		*revision = 0;
	if (c == NULL || key == NULL || key_len == 0 || (value == NULL && value_len > 0)) {
		eo__etcd_copy(d->message, sizeof(d->message), "empty key");
		goto out;
	}
	/* Base64 grows by 4/3; keep the request within what a reply may be. */
	if (key_len > c->body.max / 2 || value_len > c->body.max / 2) {
		err = EO_ETCD_TOOBIG;
		eo__etcd_copy(d->message, sizeof(d->message), "key or value too large");
		goto out;
	}
	err = EO_ETCD_NOMEM;
	req = eo__etcd_req_put(key, key_len, value ? value : "", value_len);
	if (req == NULL)
		goto out;
	err = call(c, "kv/put", req, true, false, d);
	if (err == EO_ETCD_OK)
		err = eo__etcd_parse_put(c->body.data, c->body.len, revision);
out:
	free(req);
	return err;
}

eo_etcd_err eo_etcd_range(eo_etcd_client *c, const void *key, size_t key_len,
			  const struct eo_etcd_range_opts *opts, struct eo_etcd_range *out,
			  struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	char *req = NULL;
	eo_etcd_err err = EO_ETCD_INVALID;
	bool serializable = opts != NULL && opts->serializable;

	detail_reset(d);
	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (c == NULL || out == NULL || key == NULL || key_len == 0 ||
	    (opts != NULL && opts->limit < 0)) {
		eo__etcd_copy(d->message, sizeof(d->message), "invalid range");
		goto out;
	}
	if (key_len > c->body.max / 2) {
		err = EO_ETCD_TOOBIG;
		goto out;
	}
	err = EO_ETCD_NOMEM;
	req = eo_etcd_wire_req_range(key, key_len, opts);
	if (req == NULL)
		goto out;
	/* Learners serve serializable reads only. */
	err = call(c, "kv/range", req, !serializable, true, d);
	if (err == EO_ETCD_OK)
		err = eo_etcd_wire_parse_range(c->body.data, c->body.len, out);
out:
	free(req);
	return err;
}

eo_etcd_err eo_etcd_get(eo_etcd_client *c, const void *key, size_t key_len, struct eo_etcd_kv *out,
			struct eo_etcd_detail *detail)
{
	struct eo_etcd_range r = {0};
	eo_etcd_err err;

	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (out == NULL)
		return EO_ETCD_INVALID;
	err = eo_etcd_range(c, key, key_len, NULL, &r, detail);
	if (err == EO_ETCD_OK) {
		if (r.n == 0) {
			err = EO_ETCD_KEY_NOT_FOUND;
		} else {
			*out = r.kvs[0];
			memset(&r.kvs[0], 0, sizeof(r.kvs[0]));
		}
	}
	eo_etcd_range_clear(&r);
	return err;
}

/* ---- authentication ------------------------------------------------------ */

eo_etcd_err eo_etcd_authenticate(eo_etcd_client *c, const char *endpoint,
				 struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	char base[EO_ETCD_URL_MAX];
	size_t order[MAX_ENDPOINTS], n;
	eo_etcd_err err = EO_ETCD_UNAVAILABLE;

	detail_reset(d);
	if (c == NULL || c->password == NULL) {
		detail_set(d, "", "no credentials configured");
		return EO_ETCD_INVALID;
	}
	if (endpoint != NULL) {
		if (!eo__etcd_url_normalise(endpoint, base, sizeof(base))) {
			detail_set(d, endpoint, "invalid endpoint");
			return EO_ETCD_INVALID;
		}
		return authenticate_at(c, base, d);
	}
	n = eo__etcd_select(c->eps, c->n_eps, false, now_ms(), c->backoff_ms, order);
	for (size_t k = 0; k < n; k++) {
		err = authenticate_at(c, c->eps[order[k]].url, d);
		if (err == EO_ETCD_OK || !endpoint_fault(err))
			return err;
		mark_failed(c, order[k]);
	}
	return err;
}

const char *eo_etcd_client_token(const eo_etcd_client *c)
{
	return c != NULL && c->token_ep[0] != '\0' ? c->token : NULL;
}

eo_etcd_err eo_etcd_auth_status(eo_etcd_client *c, bool *enabled, struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	eo_etcd_err err;

	if (enabled != NULL)
		*enabled = false;
	if (c == NULL || enabled == NULL) {
		detail_set(d, "", "NULL argument");
		return EO_ETCD_INVALID;
	}
	err = call(c, "auth/status", "{}", true, true, d);
	if (err == EO_ETCD_OK)
		return eo__etcd_parse_auth_status(c->body.data, c->body.len, enabled);
	if (err == EO_ETCD_AUTH) {
		/* etcd answers AuthStatus only to a user: a refusal is the answer "on". */
		*enabled = true;
		return EO_ETCD_OK;
	}
	if (err != EO_ETCD_UNSUPPORTED)
		return err;
	/* etcd 3.4 has no AuthStatus: Authenticate, or an anonymous read, tells. */
	if (c->password != NULL) {
		err = eo_etcd_authenticate(c, NULL, d);
		if (err == EO_ETCD_OK || err == EO_ETCD_AUTH) {
			*enabled = true;
			return EO_ETCD_OK;
		}
		if (strstr(d->message, "authentication is not enabled") != NULL)
			return EO_ETCD_OK;
		return err;
	}
	err = call(c, "kv/range", "{\"key\":\"" HEALTH_KEY_B64 "\",\"serializable\":true}", false,
		   true, d);
	if (err == EO_ETCD_AUTH) {
		*enabled = true;
		return EO_ETCD_OK;
	}
	return err;
}

/* One provisioning step; "already exists" counts as done. */
static eo_etcd_err auth_step(eo_etcd_client *c, const char *path, const char *req,
			     struct eo_etcd_detail *d)
{
	eo_etcd_err err = call(c, path, req, true, true, d);

	if (err != EO_ETCD_OK && strstr(d->message, "already exists") != NULL)
		err = EO_ETCD_OK;
	return err;
}

eo_etcd_err eo_etcd_auth_enable_root(eo_etcd_client *c, const char *password,
				     struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	char *req = NULL;
	eo_etcd_err err;

	detail_reset(d);
	if (c == NULL || password == NULL || password[0] == '\0') {
		detail_set(d, "", "empty root password");
		return EO_ETCD_INVALID;
	}
	req = eo_etcd_wire_req_name_password("root", password, true);
	if (req == NULL) {
		detail_set(d, "", "cannot encode the root password (not UTF-8?)");
		return EO_ETCD_INVALID;
	}
	err = auth_step(c, "auth/user/add", req, d);
	explicit_bzero(req, strlen(req));
	free(req);
	if (err == EO_ETCD_OK)
		err = auth_step(c, "auth/role/add", "{\"name\":\"root\"}", d);
	if (err == EO_ETCD_OK)
		err = auth_step(c, "auth/user/grant", "{\"user\":\"root\",\"role\":\"root\"}", d);
	if (err == EO_ETCD_OK)
		err = auth_step(c, "auth/enable", "{}", d);
	return err;
}
