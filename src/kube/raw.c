/* One request to any apiserver path (kube/raw.h). */
#include "kube/raw.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "kube/client_int.h"

struct raw_io {
	CURL *h;
	eo_kube_raw_sink sink;
	void *ud;
	struct eo_kube_raw_res *res;
	bool status_known, ok, delivered, aborted;
};

static size_t raw_write(char *p, size_t size, size_t nmemb, void *ud)
{
	struct raw_io *io = ud;
	size_t n = size * nmemb, room;

	if (!io->status_known) {
		curl_easy_getinfo(io->h, CURLINFO_RESPONSE_CODE, &io->res->http_status);
		io->status_known = true;
		io->ok = io->res->http_status >= 200 && io->res->http_status < 300;
	}
	if (io->ok) {
		io->delivered = true;
		if (n > 0 && io->sink && io->sink(io->ud, p, n) != 0) {
			io->aborted = true;
			return 0;
		}
		return n;
	}
	room = EO_KUBE_RAW_ERRBODY_MAX - io->res->errbody_len;
	if (n < room)
		room = n;
	memcpy(io->res->errbody + io->res->errbody_len, p, room);
	io->res->errbody_len += room;
	io->res->errbody[io->res->errbody_len] = '\0';
	return n;
}

static eo_kube_err raw_once(eo_kube_client *c, const struct eo_kube_raw_req *req, struct raw_io *io,
			    struct eo_kube_error *err)
{
	struct curl_slist *hdrs = NULL, *n;
	char errbuf[CURL_ERROR_SIZE] = "", line[160], *url = NULL, *token = NULL;
	const char *server = eo_kube_config_server(eo_kube_client_config(c));
	CURLcode cc;
	eo_kube_err rc;

	io->res->http_status = 0;
	io->res->errbody_len = 0;
	io->res->errbody[0] = '\0';
	io->status_known = io->ok = io->aborted = false;
	if (!req->path || req->path[0] != '/' || !req->method)
		return eo_kube_fail(err, EO_KUBE_EINVALID, "raw request: bad method or path");
	if (asprintf(&url, "%s%s", server, req->path) < 0)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "url");
	rc = eo_kube_config_token(eo_kube_client_config(c), &token, err);
	if (rc != EO_KUBE_OK)
		goto out;
	io->h = curl_easy_init();
	if (!io->h) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "curl handle");
		goto out;
	}
	rc = eo__kube_easy_setup(c, io->h, token, &hdrs, false, err);
	if (rc != EO_KUBE_OK)
		goto out;
	if (req->content_type) {
		snprintf(line, sizeof(line), "Content-Type: %s", req->content_type);
		n = curl_slist_append(hdrs, line);
		if (!n) {
			rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "headers");
			goto out;
		}
		hdrs = n;
	}
	curl_easy_setopt(io->h, CURLOPT_URL, url);
	curl_easy_setopt(io->h, CURLOPT_HTTPHEADER, hdrs);
	if (req->timeout_ms > 0)
		curl_easy_setopt(io->h, CURLOPT_TIMEOUT_MS, req->timeout_ms);
	else if (req->timeout_ms == 0)
		curl_easy_setopt(io->h, CURLOPT_TIMEOUT_MS, (long)EO_KUBE_DEFAULT_TIMEOUT_MS);
	if (req->stall_s > 0) {
		curl_easy_setopt(io->h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(io->h, CURLOPT_LOW_SPEED_TIME, req->stall_s);
	}
	curl_easy_setopt(io->h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(io->h, CURLOPT_WRITEFUNCTION, raw_write);
	curl_easy_setopt(io->h, CURLOPT_WRITEDATA, io);
	if (strcmp(req->method, "GET") != 0)
		curl_easy_setopt(io->h, CURLOPT_CUSTOMREQUEST, req->method);
	if (req->body) {
		curl_easy_setopt(io->h, CURLOPT_POSTFIELDS, req->body);
		curl_easy_setopt(io->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(req->body));
	}
	cc = curl_easy_perform(io->h);
	if (!io->status_known)
		curl_easy_getinfo(io->h, CURLINFO_RESPONSE_CODE, &io->res->http_status);
	if (cc != CURLE_OK) {
		rc = io->aborted ? eo_kube_fail(err, EO_KUBE_ECANCELED, "stopped by the receiver")
				 : eo__kube_curl_err(cc, errbuf, false, err);
		if (err)
			err->http_status = (int)io->res->http_status;
		goto out;
	}
	if (io->res->http_status < 200 || io->res->http_status >= 300) {
		rc = eo_kube_status_parse((int)io->res->http_status, io->res->errbody,
					  io->res->errbody_len, err);
		goto out;
	}
	eo_kube_error_clear(err);
	rc = EO_KUBE_OK;
out:
	if (io->h) {
		curl_easy_cleanup(io->h);
		io->h = NULL;
	}
	eo__kube_headers_free(hdrs); /* wipes the Authorization line */
	if (token) {
		OPENSSL_cleanse(token, strlen(token));
		free(token);
	}
	free(url);
	return rc;
}

eo_kube_err eo_kube_raw(eo_kube_client *c, const struct eo_kube_raw_req *req, eo_kube_raw_sink sink,
			void *ud, struct eo_kube_raw_res *res, struct eo_kube_error *err)
{
	struct raw_io io = {.sink = sink, .ud = ud, .res = res};
	eo_kube_err rc;

	rc = raw_once(c, req, &io, err);
	if (rc == EO_KUBE_EUNAUTHORIZED && !io.delivered &&
	    eo_kube_config_token_file(eo_kube_client_config(c))) {
		eo_kube_config_token_invalidate(eo_kube_client_config(c));
		rc = raw_once(c, req, &io, err);
	}
	return rc;
}
