/*
 * kube/err.c - result codes, Kubernetes Status parsing.
 */
#include "kube/err.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *eo_kube_strerror(eo_kube_err e)
{
	switch (e) {
	case EO_KUBE_OK:
		return "ok";
	case EO_KUBE_ENOTFOUND:
		return "not found";
	case EO_KUBE_EEXISTS:
		return "already exists";
	case EO_KUBE_ECONFLICT:
		return "conflict";
	case EO_KUBE_EGONE:
		return "gone (resource version too old)";
	case EO_KUBE_EINVALID:
		return "invalid";
	case EO_KUBE_EUNAUTHORIZED:
		return "unauthorized";
	case EO_KUBE_EFORBIDDEN:
		return "forbidden";
	case EO_KUBE_ETHROTTLED:
		return "too many requests";
	case EO_KUBE_ETIMEOUT:
		return "timeout";
	case EO_KUBE_EUNAVAILABLE:
		return "server unavailable";
	case EO_KUBE_ETRANSPORT:
		return "transport error";
	case EO_KUBE_EPROTOCOL:
		return "protocol error";
	case EO_KUBE_ETOOLARGE:
		return "response too large";
	case EO_KUBE_ECONFIG:
		return "configuration error";
	case EO_KUBE_EIO:
		return "i/o error";
	case EO_KUBE_ENOMEM:
		return "out of memory";
	case EO_KUBE_ECANCELED:
		return "canceled";
	case EO_KUBE_EHTTP:
		return "unexpected http status";
	}
	return "unknown error";
}

bool eo_kube_err_retryable(eo_kube_err e)
{
	switch (e) {
	case EO_KUBE_ETHROTTLED:
	case EO_KUBE_ETIMEOUT:
	case EO_KUBE_EUNAVAILABLE:
	case EO_KUBE_ETRANSPORT:
	case EO_KUBE_EPROTOCOL:
	case EO_KUBE_ECONFLICT:
		return true;
	default:
		return false;
	}
}

eo_kube_err eo_kube_err_from_http(int http_status, const char *reason)
{
	if (http_status >= 200 && http_status < 300)
		return EO_KUBE_OK;
	switch (http_status) {
	case 400:
	case 422:
		return EO_KUBE_EINVALID;
	case 401:
		return EO_KUBE_EUNAUTHORIZED;
	case 403:
		return EO_KUBE_EFORBIDDEN;
	case 404:
		return EO_KUBE_ENOTFOUND;
	case 409:
		if (reason && strcmp(reason, "AlreadyExists") == 0)
			return EO_KUBE_EEXISTS;
		return EO_KUBE_ECONFLICT;
	case 410:
		return EO_KUBE_EGONE;
	case 429:
		return EO_KUBE_ETHROTTLED;
	case 504:
		return EO_KUBE_ETIMEOUT;
	default:
		break;
	}
	if (http_status >= 500 && http_status < 600)
		return EO_KUBE_EUNAVAILABLE;
	return EO_KUBE_EHTTP;
}

void eo_kube_error_clear(struct eo_kube_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}

eo_kube_err eo_kube_fail(struct eo_kube_error *err, eo_kube_err e, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return e;
	memset(err, 0, sizeof(*err));
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return e;
}

void eo_kube_error_prefix(struct eo_kube_error *err, const char *prefix)
{
	size_t cap, plen, mlen;

	if (!err || !prefix)
		return;
	cap = sizeof(err->message);
	plen = strlen(prefix) + 2;
	if (plen >= cap)
		return;
	mlen = strnlen(err->message, cap - 1);
	if (mlen > cap - 1 - plen)
		mlen = cap - 1 - plen;
	memmove(err->message + plen, err->message, mlen);
	err->message[plen + mlen] = '\0';
	memcpy(err->message, prefix, plen - 2);
	err->message[plen - 2] = ':';
	err->message[plen - 1] = ' ';
}

/* Copies src into a fixed buffer, truncating. */
static void copy_trunc(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

eo_kube_err eo_kube_status_parse(int http_status, const char *body, size_t len,
				 struct eo_kube_error *err)
{
	json_t *root = NULL;
	const char *reason = NULL, *message = NULL, *kind = NULL;
	json_int_t code = 0;
	eo_kube_err e;

	if (body && len > 0)
		root = json_loadb(body, len, 0, NULL);
	if (json_is_object(root)) {
		kind = json_string_value(json_object_get(root, "kind"));
		reason = json_string_value(json_object_get(root, "reason"));
		message = json_string_value(json_object_get(root, "message"));
		code = json_integer_value(json_object_get(root, "code"));
	}
	if (kind && strcmp(kind, "Status") != 0) {
		/* Some other object: do not trust its fields as Status fields. */
		reason = message = NULL;
		code = 0;
	}
	e = eo_kube_err_from_http(http_status, reason);
	if (err) {
		memset(err, 0, sizeof(*err));
		err->http_status = http_status;
		err->code = (int)code;
		if (reason)
			copy_trunc(err->reason, sizeof(err->reason), reason);
		if (message)
			copy_trunc(err->message, sizeof(err->message), message);
		else
			snprintf(err->message, sizeof(err->message), "http status %d", http_status);
	}
	json_decref(root);
	return e;
}
