/*
 * kube/err.h - result codes and error detail for the Kubernetes client.
 *
 * Every function in src/kube that can fail returns an eo_kube_err and, when
 * the caller passes a non-NULL struct eo_kube_error, fills it with what is
 * known about the failure: the HTTP status, and the reason / message / code
 * taken from a Kubernetes Status body. The detail never contains bearer
 * tokens, private keys or other credentials.
 */
#ifndef EO_KUBE_ERR_H
#define EO_KUBE_ERR_H

#include <stdbool.h>
#include <stddef.h>

typedef enum eo_kube_err {
	EO_KUBE_OK = 0,
	EO_KUBE_ENOTFOUND,     /* 404 */
	EO_KUBE_EEXISTS,       /* 409 with reason AlreadyExists */
	EO_KUBE_ECONFLICT,     /* 409 otherwise: stale resourceVersion, a normal outcome */
	EO_KUBE_EGONE,	       /* 410: resourceVersion too old, relist */
	EO_KUBE_EINVALID,      /* 400, 422, bad arguments */
	EO_KUBE_EUNAUTHORIZED, /* 401 */
	EO_KUBE_EFORBIDDEN,    /* 403 */
	EO_KUBE_ETHROTTLED,    /* 429 */
	EO_KUBE_ETIMEOUT,      /* 504 or a client-side timeout */
	EO_KUBE_EUNAVAILABLE,  /* 5xx, connection refused, server went away */
	EO_KUBE_ETRANSPORT,    /* other transport failures (TLS, DNS, ...) */
	EO_KUBE_EPROTOCOL,     /* malformed or unexpected response */
	EO_KUBE_ETOOLARGE,     /* a capped buffer would overflow */
	EO_KUBE_ECONFIG,       /* kubeconfig / in-cluster configuration problem */
	EO_KUBE_EIO,	       /* local file could not be read */
	EO_KUBE_ENOMEM,
	EO_KUBE_ECANCELED, /* stopped on request (shutdown) */
	EO_KUBE_EHTTP,	   /* any other non-2xx status */
} eo_kube_err;

#define EO_KUBE_REASON_MAX  64
#define EO_KUBE_MESSAGE_MAX 512

/* Detail of the last failure. Plain data, no ownership; zero it before use
 * or let the functions do it (they reset it on entry). */
struct eo_kube_error {
	int http_status;		   /* 0 when no HTTP response was received */
	int code;			   /* Status.code from the body, 0 when absent */
	char reason[EO_KUBE_REASON_MAX];   /* Status.reason, e.g. "AlreadyExists" */
	char message[EO_KUBE_MESSAGE_MAX]; /* Status.message or a local description */
};

/* Static, human readable name of a result code. Never NULL. */
const char *eo_kube_strerror(eo_kube_err e);

/* True for results worth retrying with backoff (timeouts, 5xx, 429, transport). */
bool eo_kube_err_retryable(eo_kube_err e);

/* Maps an HTTP status (and optional Status.reason, may be NULL) to a result. */
eo_kube_err eo_kube_err_from_http(int http_status, const char *reason);

/*
 * Parses a Kubernetes Status object (or any JSON body) of a failed response
 * into err: http_status, code, reason and message. A body that is not a
 * Status leaves reason empty and puts a short excerpt-free description in
 * message. Returns the result code for the status. err may be NULL.
 */
eo_kube_err eo_kube_status_parse(int http_status, const char *body, size_t len,
				 struct eo_kube_error *err);

/* Resets err (if not NULL) and fills message with a printf-style text.
 * Returns e so callers can write `return eo_kube_fail(err, E, "...")`. */
eo_kube_err eo_kube_fail(struct eo_kube_error *err, eo_kube_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "prefix: " to err->message (truncating at the end). err may be NULL. */
void eo_kube_error_prefix(struct eo_kube_error *err, const char *prefix);

/* Clears err (if not NULL). */
void eo_kube_error_clear(struct eo_kube_error *err);

#endif
