/* A watch over etcd's v3 JSON gateway (watch.h). */
#include "etcd/watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "core/sleep.h"
#include "etcd/internal.h"

#define WATCH_MAX_TOKEN 4096

static void dset(struct eo_etcd_detail *d, const char *msg)
{
	if (d != NULL)
		eo__etcd_copy(d->message, sizeof(d->message), msg);
}

/* ---- decoding (pure) ------------------------------------------------------ */

void eo_etcd_watch_resp_clear(struct eo_etcd_watch_resp *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++) {
		eo_etcd_kv_clear(&r->events[i].kv);
		eo_etcd_kv_clear(&r->events[i].prev);
	}
	free(r->events);
	memset(r, 0, sizeof(*r));
}

static const json_t *field2(const json_t *o, const char *snake, const char *camel)
{
	const json_t *v = json_object_get(o, snake);

	return v != NULL ? v : json_object_get(o, camel);
}

static eo_etcd_err event_from(const json_t *o, struct eo_etcd_watch_event *ev)
{
	const json_t *t, *prev;
	eo_etcd_err err;

	if (!json_is_object(o))
		return EO_ETCD_PROTOCOL;
	t = json_object_get(o, "type");
	if (t == NULL || (json_is_string(t) && strcmp(json_string_value(t), "PUT") == 0) ||
	    (json_is_integer(t) && json_integer_value(t) == 0))
		ev->type = EO_ETCD_EVENT_PUT;
	else if ((json_is_string(t) && strcmp(json_string_value(t), "DELETE") == 0) ||
		 (json_is_integer(t) && json_integer_value(t) == 1))
		ev->type = EO_ETCD_EVENT_DELETE;
	else
		return EO_ETCD_PROTOCOL;
	err = eo__etcd_parse_kv(json_object_get(o, "kv"), &ev->kv);
	if (err != EO_ETCD_OK)
		return err;
	prev = field2(o, "prev_kv", "prevKv");
	if (prev == NULL)
		return EO_ETCD_OK;
	ev->has_prev = true;
	return eo__etcd_parse_kv(prev, &ev->prev);
}

/* An {"error":{...}} line: the gRPC code and message as any call's error. */
static eo_etcd_err error_line(const json_t *e, struct eo_etcd_detail *d)
{
	const json_t *msg = json_object_get(e, "message");
	const json_t *code = field2(e, "grpc_code", "code");
	const char *m = json_is_string(msg) ? json_string_value(msg) : NULL;
	int c = json_is_integer(code) ? (int)json_integer_value(code) : -1;

	if (d != NULL) {
		d->grpc_code = c;
		dset(d, m ? m : "watch stream error without a message");
	}
	return eo__etcd_map_grpc(c, m);
}

static eo_etcd_err parse_result(const json_t *res, struct eo_etcd_watch_resp *out,
				struct eo_etcd_detail *d)
{
	const json_t *hdr = json_object_get(res, "header"), *evs, *reason;
	uint64_t cid = 0;
	size_t i;
	eo_etcd_err err;

	if ((hdr != NULL && !json_is_object(hdr)) ||
	    !eo__etcd_json_i64(json_object_get(hdr, "revision"), &out->revision) ||
	    !eo_etcd_wire_json_u64(field2(hdr, "cluster_id", "clusterId"), &cid) ||
	    !eo__etcd_json_bool(json_object_get(res, "created"), &out->created) ||
	    !eo__etcd_json_bool(json_object_get(res, "canceled"), &out->canceled) ||
	    !eo__etcd_json_i64(field2(res, "compact_revision", "compactRevision"),
			       &out->compact_revision)) {
		dset(d, "watch response: malformed header or flags");
		return EO_ETCD_PROTOCOL;
	}
	out->cluster_id = cid;
	reason = field2(res, "cancel_reason", "cancelReason");
	if (json_is_string(reason))
		eo__etcd_copy(out->cancel_reason, sizeof(out->cancel_reason),
			      json_string_value(reason));
	evs = json_object_get(res, "events");
	if (evs == NULL)
		return EO_ETCD_OK;
	if (!json_is_array(evs)) {
		dset(d, "watch response: events is not an array");
		return EO_ETCD_PROTOCOL;
	}
	if (json_array_size(evs) == 0)
		return EO_ETCD_OK;
	out->events = calloc(json_array_size(evs), sizeof(*out->events));
	if (out->events == NULL)
		return EO_ETCD_NOMEM;
	for (i = 0; i < json_array_size(evs); i++) {
		out->n = i + 1;
		err = event_from(json_array_get(evs, i), &out->events[i]);
		if (err != EO_ETCD_OK) {
			dset(d, "watch response: malformed event");
			return err;
		}
		if (i > 0 && out->events[i].kv.mod_revision < out->events[i - 1].kv.mod_revision) {
			dset(d, "watch response: events out of revision order");
			return EO_ETCD_PROTOCOL;
		}
	}
	return EO_ETCD_OK;
}

eo_etcd_err eo_etcd_watch_parse_line(const char *line, size_t len, struct eo_etcd_watch_resp *out,
				     bool *empty, struct eo_etcd_detail *d)
{
	json_t *root;
	const json_t *res, *e;
	json_error_t je;
	eo_etcd_err err = EO_ETCD_PROTOCOL;

	memset(out, 0, sizeof(*out));
	*empty = false;
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0) {
		*empty = true;
		return EO_ETCD_OK;
	}
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(root)) {
		dset(d, "watch response: not a JSON object");
		goto out;
	}
	e = json_object_get(root, "error");
	if (e != NULL) {
		err = json_is_object(e) ? error_line(e, d) : EO_ETCD_PROTOCOL;
		goto out;
	}
	res = json_object_get(root, "result");
	if (!json_is_object(res)) {
		dset(d, "watch response: no result");
		goto out;
	}
	err = parse_result(res, out, d);
out:
	json_decref(root);
	if (err != EO_ETCD_OK)
		eo_etcd_watch_resp_clear(out);
	return err;
}

char *eo_etcd_watch_req_create(int64_t start_revision, bool prev_kv, bool progress_notify)
{
	char *s = NULL;

	/* "AA==" is base64 of "\0": key "\0" to range_end "\0" is every key. */
	if (asprintf(&s,
		     "{\"create_request\":{\"key\":\"AA==\",\"range_end\":\"AA==\","
		     "\"start_revision\":\"%lld\",\"prev_kv\":%s,\"progress_notify\":%s}}",
		     (long long)(start_revision > 0 ? start_revision : 0),
		     prev_kv ? "true" : "false", progress_notify ? "true" : "false") < 0)
		return NULL;
	return s;
}

/* ---- the stream ------------------------------------------------------------- */

struct wstream {
	CURL *h;
	eo_etcd_watch_fn fn;
	void *ud;
	char *line;
	size_t len, cap, max;
	long status;
	char errbody[1024]; /* a non-200 body, capped */
	size_t errbody_len;
	struct eo_etcd_watch_result *res;
	struct eo_etcd_detail *d;
	eo_etcd_err err;      /* why the transfer was stopped from here */
	bool done;	      /* the callback ended it */
	int64_t last_data_ms; /* monotonic */
	long idle_ms;
};

/* 0 to go on, -1 when the stream must stop (w->err / w->done say why). */
static int handle_line(struct wstream *w, const char *p, size_t n)
{
	struct eo_etcd_watch_resp r;
	char msg[EO_ETCD_MSG_MAX] = "";
	bool empty;
	int rc;

	w->err = eo_etcd_watch_parse_line(p, n, &r, &empty, w->d);
	if (w->err != EO_ETCD_OK)
		return -1;
	if (empty)
		return 0;
	if (r.compact_revision > 0) {
		w->res->compact_revision = r.compact_revision;
		if (w->d != NULL)
			snprintf(w->d->message, sizeof(w->d->message),
				 "watch start revision compacted away: oldest available %lld",
				 (long long)r.compact_revision);
		w->err = EO_ETCD_COMPACTED;
		eo_etcd_watch_resp_clear(&r);
		return -1;
	}
	if (r.canceled) {
		dset(w->d, r.cancel_reason[0] ? r.cancel_reason : "watch cancelled by etcd");
		w->err = EO_ETCD_UNAVAILABLE;
		eo_etcd_watch_resp_clear(&r);
		return -1;
	}
	w->res->responses++;
	w->res->last_revision = r.revision;
	rc = w->fn(w->ud, &r, msg, sizeof(msg));
	eo_etcd_watch_resp_clear(&r);
	if (rc == 0)
		return 0;
	if (rc > 0) {
		w->done = true;
	} else {
		dset(w->d, msg[0] ? msg : "watch callback failed");
		w->err = EO_ETCD_INTERNAL;
	}
	return -1;
}

static int feed(struct wstream *w, const char *p, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;

		if (w->len == 0 && nl != NULL) {
			if (take > w->max) /* a whole line in the input: no copy */
				goto toobig;
			if (handle_line(w, p, take) != 0)
				return -1;
		} else {
			if (take > w->max - w->len)
				goto toobig;
			if (w->len + take > w->cap) {
				size_t cap = w->cap ? w->cap : 4096;
				char *q;

				while (cap < w->len + take)
					cap *= 2;
				cap = cap < w->max ? cap : w->max;
				q = realloc(w->line, cap);
				if (q == NULL) {
					w->err = EO_ETCD_NOMEM;
					return -1;
				}
				w->line = q;
				w->cap = cap;
			}
			memcpy(w->line + w->len, p, take);
			w->len += take;
			if (nl != NULL) {
				if (handle_line(w, w->line, w->len) != 0)
					return -1;
				w->len = 0;
			}
		}
		p += take + (nl ? 1 : 0);
		n -= take + (nl ? 1 : 0);
	}
	return 0;
toobig:
	if (w->d != NULL)
		snprintf(w->d->message, sizeof(w->d->message),
			 "watch response longer than %zu bytes", w->max);
	w->err = EO_ETCD_TOOBIG;
	return -1;
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *ud)
{
	struct wstream *w = ud;
	size_t n = size * nmemb, take;

	w->last_data_ms = eo_mono_ms();
	if (w->status == 0)
		curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &w->status);
	if (w->status != 200) {
		take = sizeof(w->errbody) - 1 - w->errbody_len;
		take = n < take ? n : take;
		memcpy(w->errbody + w->errbody_len, p, take);
		w->errbody_len += take;
		w->errbody[w->errbody_len] = '\0';
		return n;
	}
	return feed(w, p, n) == 0 ? n : 0;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct wstream *w = ud;

	(void)dt, (void)dn, (void)ut, (void)un;
	if (w->idle_ms > 0 && eo_mono_ms() - w->last_data_ms > w->idle_ms) {
		w->err = EO_ETCD_TIMEOUT;
		dset(w->d, "watch idle for longer than its idle timeout");
		return 1;
	}
	return 0;
}

/* The token to send: the configured one, or one bought with the password at base. */
static eo_etcd_err get_token(const struct eo_etcd_config *cfg, const char *base, char *tok,
			     size_t cap, struct eo_etcd_detail *d)
{
	eo_etcd_client *c = NULL;
	eo_etcd_err err;

	tok[0] = '\0';
	if (cfg->auth_token != NULL) {
		eo__etcd_copy(tok, cap, cfg->auth_token);
		return EO_ETCD_OK;
	}
	if (cfg->password == NULL)
		return EO_ETCD_OK;
	err = eo_etcd_client_new(cfg, &c, d);
	if (err == EO_ETCD_OK)
		err = eo_etcd_authenticate(c, base, d);
	/* A cluster without auth on answers every request without a token. */
	if (err == EO_ETCD_INVALID && d != NULL &&
	    strstr(d->message, "authentication is not enabled") != NULL)
		err = EO_ETCD_OK;
	else if (err == EO_ETCD_OK && eo_etcd_client_token(c) != NULL)
		eo__etcd_copy(tok, cap, eo_etcd_client_token(c));
	eo_etcd_client_free(c);
	return err;
}

static eo_etcd_err setup(struct wstream *w, const struct eo_etcd_watch_opts *o, const char *url,
			 const char *req, struct curl_slist *hdr, struct curl_slist **routes,
			 char *errbuf)
{
	CURL *h = w->h;
	long cto = o->cfg->connect_timeout_ms > 0 ? o->cfg->connect_timeout_ms : 2000L;

	if (curl_easy_setopt(h, CURLOPT_URL, url) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_POSTFIELDS, req) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(req)) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_WRITEDATA, w) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_XFERINFODATA, w) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK)
		return EO_ETCD_TRANSPORT;
	return eo__etcd_curl_setup(h, o->cfg, o->max_duration_ms > 0 ? o->max_duration_ms : 0L, cto,
				   routes);
}

/* What a finished transfer means, when nothing from here stopped it. */
static eo_etcd_err outcome(struct wstream *w, CURLcode cc, const char *errbuf)
{
	if (w->done)
		return EO_ETCD_OK;
	if (w->err != EO_ETCD_OK)
		return w->err;
	if (w->status != 0 && w->status != 200) {
		eo_etcd_err err =
		    eo_etcd_wire_map_error(w->status, w->errbody, w->errbody_len, w->d);

		if (w->d != NULL)
			w->d->http_status = w->status;
		return err;
	}
	if (cc == CURLE_OPERATION_TIMEDOUT) {
		dset(w->d, "watch ended at its max duration");
		return EO_ETCD_TIMEOUT;
	}
	if (cc != CURLE_OK) {
		if (w->d != NULL)
			w->d->curl_code = (int)cc;
		dset(w->d, errbuf[0] ? errbuf : curl_easy_strerror(cc));
		return cc == CURLE_COULDNT_CONNECT || cc == CURLE_RECV_ERROR ||
			       cc == CURLE_GOT_NOTHING || cc == CURLE_PARTIAL_FILE ||
			       cc == CURLE_COULDNT_RESOLVE_HOST
			   ? EO_ETCD_UNAVAILABLE
			   : EO_ETCD_TRANSPORT;
	}
	dset(w->d, "watch stream ended by the server");
	return EO_ETCD_UNAVAILABLE;
}

eo_etcd_err eo_etcd_watch(const struct eo_etcd_watch_opts *o, eo_etcd_watch_fn fn, void *ud,
			  struct eo_etcd_watch_result *res, struct eo_etcd_detail *detail)
{
	struct eo_etcd_detail scratch;
	struct eo_etcd_watch_result rscratch;
	struct eo_etcd_detail *d = detail ? detail : &scratch;
	struct wstream w = {.fn = fn, .ud = ud, .d = d};
	struct curl_slist *hdr = NULL, *routes = NULL;
	char base[EO_ETCD_URL_MAX], url[EO_ETCD_URL_MAX + 16], errbuf[CURL_ERROR_SIZE] = "";
	char tok[WATCH_MAX_TOKEN + 1];
	char *req = NULL;
	CURLcode cc;
	eo_etcd_err err;

	memset(d, 0, sizeof(*d));
	d->grpc_code = -1;
	w.res = res ? res : &rscratch;
	memset(w.res, 0, sizeof(*w.res));
	tok[0] = '\0';
	if (o == NULL || o->cfg == NULL || fn == NULL ||
	    (o->endpoint == NULL && (o->cfg->n_endpoints == 0 || o->cfg->endpoints == NULL)) ||
	    !eo__etcd_url_normalise(o->endpoint ? o->endpoint : o->cfg->endpoints[0], base,
				    sizeof(base))) {
		dset(d, "invalid watch options");
		return EO_ETCD_INVALID;
	}
	eo__etcd_copy(d->endpoint, sizeof(d->endpoint), base);
	snprintf(url, sizeof(url), "%s/v3/watch", base);
	w.max = o->line_max > 0 ? o->line_max : EO_ETCD_WATCH_LINE_MAX;
	w.idle_ms = o->idle_timeout_ms;
	err = get_token(o->cfg, base, tok, sizeof(tok), d);
	if (err != EO_ETCD_OK)
		goto out;
	eo__etcd_copy(d->endpoint, sizeof(d->endpoint), base);
	err = EO_ETCD_NOMEM;
	req = eo_etcd_watch_req_create(o->start_revision, o->prev_kv, o->progress_notify);
	w.h = curl_easy_init();
	if (req == NULL || w.h == NULL)
		goto out;
	err = eo__etcd_headers(tok[0] != '\0' ? tok : NULL, &hdr);
	if (err == EO_ETCD_OK)
		err = setup(&w, o, url, req, hdr, &routes, errbuf);
	if (err != EO_ETCD_OK)
		goto out;
	w.last_data_ms = eo_mono_ms();
	cc = curl_easy_perform(w.h);
	curl_easy_getinfo(w.h, CURLINFO_RESPONSE_CODE, &w.status);
	w.res->http_status = w.status;
	d->http_status = w.status;
	err = outcome(&w, cc, errbuf);
out:
	explicit_bzero(tok, sizeof(tok));
	eo__etcd_free_headers(hdr);
	curl_slist_free_all(routes);
	if (w.h != NULL)
		curl_easy_cleanup(w.h);
	free(w.line);
	free(req);
	return err;
}
