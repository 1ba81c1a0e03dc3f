/*
 * kube/watch.c - streaming watch over a private curl multi handle.
 */
#include "kube/watch.h"
#include "core/util.h"
#include "kube/client_int.h"

#include <openssl/crypto.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WATCH_ERRBODY_MAX (64u << 10)

struct eo_kube_watch {
	eo_kube_client *c;
	CURLM *multi;
	atomic_bool cancelled;
};

static const char *const names[] = {
    [EO_KUBE_WATCH_ADDED] = "ADDED",	 [EO_KUBE_WATCH_MODIFIED] = "MODIFIED",
    [EO_KUBE_WATCH_DELETED] = "DELETED", [EO_KUBE_WATCH_BOOKMARK] = "BOOKMARK",
    [EO_KUBE_WATCH_ERROR] = "ERROR",
};

const char *eo_kube_watch_type_name(enum eo_kube_watch_type t)
{
	return EO_ENUM_NAME(names, t, "UNKNOWN");
}

eo_kube_err eo_kube_watch_error(json_t *status, struct eo_kube_error *err)
{
	json_int_t code = json_integer_value(json_object_get(status, "code"));
	const char *reason = json_string_value(json_object_get(status, "reason"));
	const char *message = json_string_value(json_object_get(status, "message"));
	eo_kube_err rc;

	/* An ERROR without a code is still an error: treat it as a server fault. */
	rc = eo_kube_err_from_http(code ? (int)code : 500, reason);
	if (rc == EO_KUBE_OK)
		rc = EO_KUBE_EPROTOCOL;
	if (err) {
		eo_kube_error_clear(err);
		err->code = (int)code;
		err->http_status = 200;
		snprintf(err->reason, sizeof(err->reason), "%s", reason ? reason : "");
		snprintf(err->message, sizeof(err->message), "watch error: %s",
			 message ? message : "no message");
	}
	return rc;
}

/* ---- streaming -------------------------------------------------------- */

struct run {
	eo_kube_watch *w;
	CURL *h;
	long status;
	bool opened;
	eo_kube_objstream *os;
	char *errbody;
	size_t errlen;
	const struct eo_kube_watch_opts *opts;
	eo_kube_watch_cb cb;
	void *ud;
	eo_kube_err stop_rc;
	struct eo_kube_error stop_err;
	/* the current event's object, or what is known of a skipped one */
	json_t *obj;
	bool skipped;
	struct eo_kube_watch_skip skip;
	struct eo_kube_objref ref;
	char skip_detail[160];
};

static void mark_open(struct run *r)
{
	if (!r->opened && r->status >= 200 && r->status < 300) {
		r->opened = true;
		if (r->opts && r->opts->on_open)
			r->opts->on_open(r->ud);
	}
}

static int parse_type(const char *t, enum eo_kube_watch_type *type)
{
	for (int i = EO_KUBE_WATCH_ADDED; i <= EO_KUBE_WATCH_ERROR; i++)
		if (t && strcmp(t, eo_kube_watch_type_name((enum eo_kube_watch_type)i)) == 0) {
			*type = (enum eo_kube_watch_type)i;
			return 0;
		}
	return -1;
}

/* One event is complete: env is its envelope, r->obj or r->skip its object. */
static int dispatch(struct run *r, json_t *env)
{
	const char *t = json_string_value(json_object_get(env, "type"));
	enum eo_kube_watch_type type;

	if (parse_type(t, &type) != 0) {
		r->stop_rc = eo_kube_fail(&r->stop_err, EO_KUBE_EPROTOCOL,
					  t ? "unknown watch event type \"%.32s\""
					    : "watch event lacks type%.0s",
					  t ? t : "");
		return 1;
	}
	if (!r->obj && !r->skipped) {
		r->stop_rc =
		    eo_kube_fail(&r->stop_err, EO_KUBE_EPROTOCOL, "watch event lacks an object");
		return 1;
	}
	if (type == EO_KUBE_WATCH_ERROR) {
		if (r->obj)
			r->stop_rc = eo_kube_watch_error(r->obj, &r->stop_err);
		else
			r->stop_rc =
			    eo_kube_fail(&r->stop_err, EO_KUBE_EPROTOCOL,
					 "watch ERROR event does not decode: %s", r->skip.detail);
		return 1;
	}
	if (r->skipped) {
		/* An object over the cap or one that does not decode: report it, go on. */
		r->skip.type = type;
		if (r->opts && r->opts->on_skip)
			r->opts->on_skip(r->ud, &r->skip);
		return 0;
	}
	if (r->cb(r->ud, type, r->obj) != 0) {
		r->stop_rc = eo_kube_fail(&r->stop_err, EO_KUBE_ECANCELED, "stopped by callback");
		return 1;
	}
	return 0;
}

static int on_object(void *ud, const struct eo_kube_objstream_event *ev)
{
	struct run *r = ud;
	int stop = 0;

	switch (ev->type) {
	case EO_KUBE_OS_ITEM:
		json_decref(r->obj);
		r->obj = json_incref(ev->obj);
		r->skipped = false;
		break;
	case EO_KUBE_OS_SKIP:
		json_decref(r->obj);
		r->obj = NULL;
		r->skipped = true;
		r->ref = *ev->ref;
		snprintf(r->skip_detail, sizeof(r->skip_detail), "%s",
			 ev->detail ? ev->detail : "");
		r->skip = (struct eo_kube_watch_skip){
		    .ref = &r->ref, .why = ev->why, .detail = r->skip_detail, .size = ev->size};
		break;
	case EO_KUBE_OS_END:
		stop = dispatch(r, ev->obj);
		json_decref(r->obj);
		r->obj = NULL;
		r->skipped = false;
		break;
	case EO_KUBE_OS_RESTART:
		break;
	}
	return stop;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *ud)
{
	struct run *r = ud;
	size_t n = size * nmemb;
	struct eo_kube_error e;
	eo_kube_err rc;

	if (atomic_load(&r->w->cancelled))
		return 0;
	if (r->status == 0)
		curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->status < 200 || r->status >= 300) {
		/* A failed watch answers with a Status body: keep a capped copy. */
		size_t room = WATCH_ERRBODY_MAX - r->errlen, k = n < room ? n : room;
		char *nb = realloc(r->errbody, r->errlen + k + 1);

		if (!nb)
			return 0;
		r->errbody = nb;
		memcpy(r->errbody + r->errlen, data, k);
		r->errlen += k;
		r->errbody[r->errlen] = '\0';
		return n;
	}
	mark_open(r);
	rc = eo_kube_objstream_feed(r->os, data, n, &e);
	if (rc == EO_KUBE_OK)
		return n;
	if (r->stop_rc == EO_KUBE_OK) {
		r->stop_rc = rc;
		r->stop_err = e;
	}
	return 0;
}

eo_kube_watch *eo_kube_watch_new(eo_kube_client *c)
{
	eo_kube_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->c = c;
	atomic_init(&w->cancelled, false);
	w->multi = curl_multi_init();
	if (!w->multi) {
		free(w);
		return NULL;
	}
	return w;
}

void eo_kube_watch_free(eo_kube_watch *w)
{
	if (!w)
		return;
	curl_multi_cleanup(w->multi);
	free(w);
}

void eo_kube_watch_cancel(eo_kube_watch *w)
{
	atomic_store(&w->cancelled, true);
	curl_multi_wakeup(w->multi);
}

eo_kube_err eo_kube_watch_run(eo_kube_watch *w, const struct eo_kube_resource *r,
			      const struct eo_kube_watch_opts *opts, eo_kube_watch_cb cb, void *ud,
			      struct eo_kube_error *err)
{
	struct eo_kube_resource coll = *r;
	struct run run = {.w = w, .cb = cb, .ud = ud, .opts = opts};
	struct curl_slist *hdrs = NULL;
	char errbuf[CURL_ERROR_SIZE] = "", tmo[16];
	char *url = NULL, *token = NULL;
	const char *params[15];
	int timeout_s = opts && opts->timeout_seconds > 0 ? opts->timeout_seconds : 300;
	struct eo_kube_objstream_opts so = {
	    .mode = EO_KUBE_OBJSTREAM_WATCH,
	    .max_object = opts ? opts->max_object : 0,
	    .keep_all = opts && opts->keep_all,
	    .cb = on_object,
	    .ud = &run,
	};
	bool added = false;
	CURLcode result = CURLE_OK;
	eo_kube_err rc = EO_KUBE_OK;
	int i = 0, running = 1;

	eo_kube_error_clear(err);
	run.os = eo_kube_objstream_new(&so);
	if (!run.os) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "watch decoder");
		goto out;
	}
	coll.name = NULL;
	snprintf(tmo, sizeof(tmo), "%d", timeout_s);
	params[i++] = "watch";
	params[i++] = "1";
	params[i++] = "allowWatchBookmarks";
	params[i++] = "true";
	params[i++] = "timeoutSeconds";
	params[i++] = tmo;
	params[i++] = "resourceVersion";
	params[i++] = opts && opts->resource_version && opts->resource_version[0]
			  ? opts->resource_version
			  : NULL;
	params[i++] = "labelSelector";
	params[i++] =
	    opts && opts->label_selector && opts->label_selector[0] ? opts->label_selector : NULL;
	params[i++] = "fieldSelector";
	params[i++] =
	    opts && opts->field_selector && opts->field_selector[0] ? opts->field_selector : NULL;
	params[i] = NULL;

	if (atomic_load(&w->cancelled)) {
		rc = eo_kube_fail(err, EO_KUBE_ECANCELED, "watch canceled");
		goto out;
	}
	url = eo_kube_url(eo_kube_config_server(eo_kube_client_config(w->c)), &coll, NULL, params);
	if (!url) {
		rc = eo_kube_fail(err, EO_KUBE_EINVALID, "cannot build watch URL");
		goto out;
	}
	rc = eo_kube_config_token(eo_kube_client_config(w->c), &token, err);
	if (rc != EO_KUBE_OK)
		goto out;
	run.h = curl_easy_init();
	if (!run.h) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "curl handle");
		goto out;
	}
	/* Watches stay off the shared connection pool: each holds its own
	 * HTTP/1.1 connection for minutes. */
	rc = eo__kube_easy_setup(w->c, run.h, token, &hdrs, false, err);
	if (rc != EO_KUBE_OK)
		goto out;
	curl_easy_setopt(run.h, CURLOPT_URL, url);
	curl_easy_setopt(run.h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(run.h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(run.h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(run.h, CURLOPT_WRITEDATA, &run);
	/* The server ends the stream after timeoutSeconds; this is only a
	 * safety net against a silently dead connection. */
	curl_easy_setopt(run.h, CURLOPT_TIMEOUT_MS, (long)(timeout_s + 30) * 1000L);
	if (curl_multi_add_handle(w->multi, run.h) != CURLM_OK) {
		rc = eo_kube_fail(err, EO_KUBE_ETRANSPORT, "curl_multi_add_handle failed");
		goto out;
	}
	added = true;

	while (running) {
		CURLMcode mc;

		if (atomic_load(&w->cancelled))
			break;
		mc = curl_multi_perform(w->multi, &running);
		if (mc != CURLM_OK) {
			rc = eo_kube_fail(err, EO_KUBE_ETRANSPORT, "curl multi: %s",
					  curl_multi_strerror(mc));
			goto out;
		}
		if (!running)
			break;
		if (!run.opened) {
			/* Headers are in once the status is known: a 2xx means the watch is open.
			 */
			curl_easy_getinfo(run.h, CURLINFO_RESPONSE_CODE, &run.status);
			mark_open(&run);
		}
		mc = curl_multi_poll(w->multi, NULL, 0, 1000, NULL);
		if (mc != CURLM_OK) {
			rc = eo_kube_fail(err, EO_KUBE_ETRANSPORT, "curl multi: %s",
					  curl_multi_strerror(mc));
			goto out;
		}
	}
	if (atomic_load(&w->cancelled)) {
		rc = eo_kube_fail(err, EO_KUBE_ECANCELED, "watch canceled");
		goto out;
	}
	{
		CURLMsg *msg;
		int left;

		while ((msg = curl_multi_info_read(w->multi, &left)))
			if (msg->msg == CURLMSG_DONE && msg->easy_handle == run.h)
				result = msg->data.result;
	}
	if (run.status == 0)
		curl_easy_getinfo(run.h, CURLINFO_RESPONSE_CODE, &run.status);
	if (run.stop_rc != EO_KUBE_OK) {
		rc = run.stop_rc;
		if (err)
			*err = run.stop_err;
		goto out;
	}
	if (result != CURLE_OK) {
		rc = eo__kube_curl_err(result, errbuf, false, err);
		goto out;
	}
	if (run.status < 200 || run.status >= 300) {
		rc = eo_kube_status_parse((int)run.status, run.errbody, run.errlen, err);
		goto out;
	}
	rc = EO_KUBE_OK; /* the server closed the stream: resume from the last version */
out:
	if (added)
		curl_multi_remove_handle(w->multi, run.h);
	if (run.h)
		curl_easy_cleanup(run.h);
	eo__kube_headers_free(hdrs);
	eo_kube_objstream_free(run.os);
	json_decref(run.obj);
	free(run.errbody);
	free(url);
	if (token) {
		OPENSSL_cleanse(token, strlen(token));
		free(token);
	}
	return rc;
}
