/*
 * kube/raw.h - one request to any apiserver path, with the client's credentials.
 *
 * The typed verbs of kube/client.h cover objects; this covers the rest: subresources such as
 * a Pod's proxy (/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/...), whose answers are not
 * Kubernetes objects and may be long streams. It runs on the typed verbs' own transfer (a
 * pooled handle, the client's TLS material and bearer token); a 401 with a token file
 * re-reads the token and tries once more, before any byte was delivered.
 *
 * A 2xx body goes to the sink as it arrives (no cap: the sink decides); any other body is
 * kept, up to EO_KUBE_RAW_ERRBODY_MAX bytes, in res->errbody and parsed as a Kubernetes
 * Status into err (the body may also be the proxied server's own error: the caller reads
 * errbody for that).
 */
#ifndef EO_KUBE_RAW_H
#define EO_KUBE_RAW_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

#include "kube/client.h"

#define EO_KUBE_RAW_ERRBODY_MAX 4096

/* Receives 2xx body bytes in order; 0 to go on, nonzero to abort (EO_KUBE_ECANCELED). */
typedef int (*eo_kube_raw_sink)(void *ud, const char *p, size_t n);

struct eo_kube_raw_req {
	const char *method;	  /* "GET", "POST", ... */
	const char *path;	  /* starts with '/', already escaped; appended to the server URL */
	const char *content_type; /* NULL: none */
	const char *body;	  /* NULL: none; sent as is (strlen bytes) */
	long timeout_ms;	  /* whole request; 0: the client's timeout; < 0: none */
	long stall_s;		  /* abort when nothing arrived for this long; 0: no such limit */
	const char *const *headers; /* extra "Name: value" lines, NULL-terminated, or NULL;
				       wiped from the request's header list after it */
};

struct eo_kube_raw_res {
	long http_status; /* 0 when no response arrived */
	char errbody[EO_KUBE_RAW_ERRBODY_MAX + 1];
	size_t errbody_len;
};

/*
 * Performs req. EO_KUBE_OK only for a 2xx answer delivered whole to the sink; otherwise the
 * transport or Status result, err filled (res->http_status and res->errbody tell more).
 */
eo_kube_err eo_kube_raw(eo_kube_client *c, const struct eo_kube_raw_req *req, eo_kube_raw_sink sink,
			void *ud, struct eo_kube_raw_res *res, struct eo_kube_error *err);

/*
 * One transfer's write state: a 2xx body goes to sink, any other is kept in res->errbody
 * (capped). eo_kube_raw_write is its CURLOPT_WRITEFUNCTION (ud: the eo_kube_raw_io), also
 * for transfers of other modules over their own handle.
 */
struct eo_kube_raw_io {
	CURL *h; /* the transfer's handle, set while it runs */
	eo_kube_raw_sink sink;
	void *ud;
	struct eo_kube_raw_res *res;
	bool status_known, ok, delivered, aborted;
};

size_t eo_kube_raw_write(char *p, size_t size, size_t nmemb, void *ud);

#endif
