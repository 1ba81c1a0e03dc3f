/*
 * kube/client_int.h - internal glue between client.c and watch.c.
 * Not for use outside src/kube.
 */
#ifndef EO_KUBE_CLIENT_INT_H
#define EO_KUBE_CLIENT_INT_H

#include <curl/curl.h>

#include "kube/client.h"

/*
 * Applies the common options to a fresh easy handle: TLS material from the
 * config, HTTP/1.1, no signals, user agent, keepalive, and the bearer token
 * (token may be NULL). Adds "Authorization" and "Accept" headers to *hdrs
 * (which the caller frees with eo__kube_headers_free after the transfer).
 * share selects whether the handle joins the client's share handle.
 */
eo_kube_err eo__kube_easy_setup(eo_kube_client *c, CURL *h, const char *token,
				struct curl_slist **hdrs, bool share, struct eo_kube_error *err);

/* Wipes every header line (one carries the bearer token), without freeing. */
void eo__kube_headers_scrub(struct curl_slist *hdrs);

/* eo__kube_headers_scrub, then curl_slist_free_all. NULL is fine. */
void eo__kube_headers_free(struct curl_slist *hdrs);

/* Maps a curl failure to a result and fills err with curl's text. */
eo_kube_err eo__kube_curl_err(CURLcode cc, const char *errbuf, bool overflow,
			      struct eo_kube_error *err);

/* What a caller of eo__kube_transfer may add to the client's defaults. */
struct eo__kube_xfer_opts {
	long timeout_ms;	    /* whole request; 0: the client's timeout; < 0: none */
	long stall_s;		    /* abort when nothing arrived for this long; 0: no limit */
	const char *const *headers; /* extra "Name: value" lines, NULL-terminated; scrubbed */
};

/*
 * One HTTP exchange on a pooled handle with the client's credentials; no retries. The body
 * goes to write_fn; *status gets the HTTP status (readable from write_fn through *hp, which
 * points at the handle during the transfer when hp is not NULL). xo may be NULL. Returns the
 * transport result only (a non-2xx answer is EO_KUBE_OK with *status telling).
 */
eo_kube_err eo__kube_transfer(eo_kube_client *c, const char *method, const char *url,
			      const char *content_type, const char *payload,
			      const struct eo__kube_xfer_opts *xo, curl_write_callback write_fn,
			      void *write_ud, CURL **hp, long *status, bool *overflow,
			      struct eo_kube_error *err);

long eo__kube_client_connect_timeout_ms(const eo_kube_client *c);
size_t eo__kube_client_max_body(const eo_kube_client *c);

#endif
