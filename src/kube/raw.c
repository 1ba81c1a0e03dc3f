/* One request to any apiserver path (kube/raw.h), on the client's own transfer. */
#include "kube/raw.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "kube/client_int.h"

size_t eo_kube_raw_write(char *p, size_t size, size_t nmemb, void *ud)
{
	struct eo_kube_raw_io *io = ud;
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

static eo_kube_err raw_once(eo_kube_client *c, const struct eo_kube_raw_req *req,
			    struct eo_kube_raw_io *io, struct eo_kube_error *err)
{
	const char *server = eo_kube_config_server(eo_kube_client_config(c));
	struct eo__kube_xfer_opts xo = {req->timeout_ms, req->stall_s, req->headers};
	char *url = NULL;
	long status = 0;
	eo_kube_err rc;

	io->res->http_status = 0;
	io->res->errbody_len = 0;
	io->res->errbody[0] = '\0';
	io->status_known = io->ok = io->aborted = false;
	if (!req->path || req->path[0] != '/' || !req->method)
		return eo_kube_fail(err, EO_KUBE_EINVALID, "raw request: bad method or path");
	if (asprintf(&url, "%s%s", server, req->path) < 0)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "url");
	rc = eo__kube_transfer(c, req->method, url, req->content_type, req->body, &xo,
			       eo_kube_raw_write, io, &io->h, &status, NULL, err);
	io->res->http_status = status;
	if (rc != EO_KUBE_OK) {
		if (io->aborted)
			rc = eo_kube_fail(err, EO_KUBE_ECANCELED, "stopped by the receiver");
		if (err)
			err->http_status = (int)status;
	} else if (status < 200 || status >= 300) {
		rc = eo_kube_status_parse((int)status, io->res->errbody, io->res->errbody_len, err);
	}
	free(url);
	return rc;
}

eo_kube_err eo_kube_raw(eo_kube_client *c, const struct eo_kube_raw_req *req, eo_kube_raw_sink sink,
			void *ud, struct eo_kube_raw_res *res, struct eo_kube_error *err)
{
	struct eo_kube_raw_io io = {.sink = sink, .ud = ud, .res = res};
	eo_kube_err rc;

	rc = raw_once(c, req, &io, err);
	if (rc == EO_KUBE_EUNAUTHORIZED && !io.delivered &&
	    eo_kube_config_token_renewable(eo_kube_client_config(c))) {
		eo_kube_config_token_invalidate(eo_kube_client_config(c));
		rc = raw_once(c, req, &io, err);
	}
	return rc;
}
