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

long eo__kube_client_connect_timeout_ms(const eo_kube_client *c);
size_t eo__kube_client_max_body(const eo_kube_client *c);

#endif
