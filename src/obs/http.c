/*
 * obs/http.c - /metrics, /healthz and /readyz over libmicrohttpd.
 */
#include "obs/http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "obs/log.h"

#define SERVE_METRICS 1u
#define SERVE_HEALTH  2u

#define HTTP_ERR_MAX	 256
#define READY_REASON_MAX 192

struct listener {
	struct eo_http *srv; /* back pointer for the handler */
	struct MHD_Daemon *d;
	unsigned serves;
	int port;
	char last_error[HTTP_ERR_MAX]; /* last libmicrohttpd message, for bind failures */
};

struct eo_http {
	struct eo_http_config cfg; /* strings not kept: only metrics and ready are used later */
	struct listener ls[2];
	size_t nls;
	int metrics_port;
	int health_port;
};

/* ------------------------------------------------------------------------------------------ */
/* Bind addresses                                                                              */
/* ------------------------------------------------------------------------------------------ */

int eo_bind_addr_parse(const char *s, struct eo_bind_addr *out, char *err, size_t errcap)
{
	const char *host, *hend, *port;
	size_t hlen, i;
	unsigned long p = 0;

	memset(out, 0, sizeof(*out));
	if (!s || !*s || strcmp(s, "0") == 0) {
		out->disabled = true;
		return 0;
	}
	if (s[0] == '[') {
		host = s + 1;
		hend = strchr(host, ']');
		if (!hend || hend[1] != ':') {
			eo_set_err(err, errcap, "bind address %.64s: expected [host]:port", s);
			return -1;
		}
		port = hend + 2;
	} else {
		host = s;
		hend = strrchr(s, ':');
		if (!hend) {
			eo_set_err(err, errcap,
				   "bind address %.64s: missing port (use host:port or :port)", s);
			return -1;
		}
		if (memchr(host, ':', (size_t)(hend - host))) {
			eo_set_err(err, errcap,
				   "bind address %.64s: IPv6 hosts need brackets ([::1]:8080)", s);
			return -1;
		}
		port = hend + 1;
	}
	hlen = (size_t)(hend - host);
	if (hlen >= sizeof(out->host)) {
		eo_set_err(err, errcap, "bind address: host too long");
		return -1;
	}
	if (!*port || strlen(port) > 5) {
		eo_set_err(err, errcap, "bind address %.64s: invalid port", s);
		return -1;
	}
	for (i = 0; port[i]; i++) {
		if (port[i] < '0' || port[i] > '9') {
			eo_set_err(err, errcap, "bind address %.64s: invalid port", s);
			return -1;
		}
		p = p * 10 + (unsigned long)(port[i] - '0');
	}
	if (p > 65535) {
		eo_set_err(err, errcap, "bind address %.64s: port out of range", s);
		return -1;
	}
	memcpy(out->host, host, hlen);
	out->host[hlen] = '\0';
	out->any = hlen == 0;
	out->port = (uint16_t)p;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Request handling                                                                            */
/* ------------------------------------------------------------------------------------------ */

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status, const char *ctype,
			       char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, body, mode);
	if (!resp) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result respond_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
	return respond(conn, status, "text/plain; charset=utf-8", (char *)text, strlen(text),
		       MHD_RESPMEM_MUST_COPY);
}

static enum MHD_Result serve_metrics(struct eo_http *srv, struct MHD_Connection *conn)
{
	char *page = NULL;
	size_t len = 0;

	if (!srv->cfg.metrics || eo_metrics_render(srv->cfg.metrics, &page, &len) != 0)
		return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				    "metrics rendering failed\n");
	/* MHD takes the page and frees it with free(). */
	return respond(conn, MHD_HTTP_OK, EO_METRICS_CONTENT_TYPE, page, len,
		       MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result serve_readyz(struct eo_http *srv, struct MHD_Connection *conn)
{
	char reason[READY_REASON_MAX] = "";
	char body[READY_REASON_MAX + 32];

	if (srv->cfg.ready && srv->cfg.ready(srv->cfg.ready_ud, reason, sizeof(reason)))
		return respond_text(conn, MHD_HTTP_OK, "ok\n");
	if (!srv->cfg.ready)
		snprintf(reason, sizeof(reason), "no readiness check configured");
	snprintf(body, sizeof(body), "not ready: %s\n", reason[0] ? reason : "unknown");
	return respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, body);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct listener *l = cls;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	/* A GET with a body is odd but harmless: discard it. */
	if (*upload_data_size != 0)
		*upload_data_size = 0;
	if ((l->serves & SERVE_METRICS) && strcmp(url, "/metrics") == 0)
		return serve_metrics(l->srv, conn);
	if ((l->serves & SERVE_HEALTH) && strcmp(url, "/healthz") == 0)
		return respond_text(conn, MHD_HTTP_OK, "ok\n");
	if ((l->serves & SERVE_HEALTH) && strcmp(url, "/readyz") == 0)
		return serve_readyz(l->srv, conn);
	return respond_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* ------------------------------------------------------------------------------------------ */
/* Listeners                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct listener *l = cls;
	size_t n;

	vsnprintf(l->last_error, sizeof(l->last_error), fmt, ap);
	n = strlen(l->last_error);
	while (n > 0 && (l->last_error[n - 1] == '\n' || l->last_error[n - 1] == '.'))
		l->last_error[--n] = '\0';
	eo_log_kv(EO_LOG_DEBUG, NULL, "http server message", "detail", l->last_error, NULL);
}

static struct MHD_Daemon *start_daemon(struct listener *l, unsigned extra_flags,
				       const struct sockaddr *sa, uint16_t port)
{
	unsigned flags =
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG | extra_flags;

	l->last_error[0] = '\0';
	if (sa)
		return MHD_start_daemon(
		    flags, port, NULL, NULL, handle, l, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, l,
		    MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_CONNECTION_LIMIT,
		    (unsigned)EO_HTTP_CONNECTIONS_MAX, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		    (unsigned)EO_HTTP_CONNECTIONS_PER_IP_MAX, MHD_OPTION_CONNECTION_TIMEOUT,
		    (unsigned)10, MHD_OPTION_END);
	return MHD_start_daemon(
	    flags, port, NULL, NULL, handle, l, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, l,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)EO_HTTP_CONNECTIONS_MAX,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)EO_HTTP_CONNECTIONS_PER_IP_MAX,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
}

/* Binds one listener; on failure fills err with "<what>: bind <addr>: <reason>". */
static int listener_start(struct listener *l, const char *what, const char *text,
			  const struct eo_bind_addr *a, char *err, size_t errcap)
{
	struct addrinfo hints, *res = NULL, *ai;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	const union MHD_DaemonInfo *info;
	int rc = -1, gai;

	if (a->any) {
		/* Every interface: dual-stack IPv6 when the kernel has IPv6, else IPv4. */
		l->d = start_daemon(l, MHD_USE_DUAL_STACK, NULL, a->port);
		if (!l->d)
			l->d = start_daemon(l, 0, NULL, a->port);
	} else if (inet_pton(AF_INET, a->host, &sin.sin_addr) == 1) {
		sin.sin_family = AF_INET;
		sin.sin_port = htons(a->port);
		memset(sin.sin_zero, 0, sizeof(sin.sin_zero));
		l->d = start_daemon(l, 0, (const struct sockaddr *)&sin, a->port);
	} else if (inet_pton(AF_INET6, a->host, &sin6.sin6_addr) == 1) {
		memset(&sin6, 0, sizeof(sin6));
		inet_pton(AF_INET6, a->host, &sin6.sin6_addr);
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = htons(a->port);
		l->d = start_daemon(l, MHD_USE_IPv6, (const struct sockaddr *)&sin6, a->port);
	} else {
		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		gai = getaddrinfo(a->host, NULL, &hints, &res);
		if (gai != 0) {
			eo_set_err(err, errcap, "%s: resolve %s: %s", what, text,
				   gai_strerror(gai));
			goto out;
		}
		for (ai = res; ai && !l->d; ai = ai->ai_next) {
			if (ai->ai_family == AF_INET) {
				memcpy(&sin, ai->ai_addr, sizeof(sin));
				sin.sin_port = htons(a->port);
				l->d = start_daemon(l, 0, (const struct sockaddr *)&sin, a->port);
			} else if (ai->ai_family == AF_INET6) {
				memcpy(&sin6, ai->ai_addr, sizeof(sin6));
				sin6.sin6_port = htons(a->port);
				l->d = start_daemon(l, MHD_USE_IPv6, (const struct sockaddr *)&sin6,
						    a->port);
			}
		}
	}
	if (!l->d) {
		eo_set_err(err, errcap, "%s: bind %s: %s", what, text,
			   l->last_error[0] ? l->last_error : "cannot start HTTP server");
		goto out;
	}
	info = MHD_get_daemon_info(l->d, MHD_DAEMON_INFO_BIND_PORT);
	l->port = info ? (int)info->port : (int)a->port;
	rc = 0;
out:
	if (res)
		freeaddrinfo(res);
	return rc;
}

int eo_http_start(const struct eo_http_config *cfg, struct eo_http **out, char *err, size_t errcap)
{
	struct eo_http *srv = NULL;
	struct eo_bind_addr ma, ha;
	struct listener *l;
	char perr[HTTP_ERR_MAX];
	bool shared;
	int rc = -1;

	*out = NULL;
	if (eo_bind_addr_parse(cfg->metrics_addr, &ma, perr, sizeof(perr)) != 0) {
		eo_set_err(err, errcap, "metrics: %s", perr);
		goto out;
	}
	if (eo_bind_addr_parse(cfg->health_addr, &ha, perr, sizeof(perr)) != 0) {
		eo_set_err(err, errcap, "health probe: %s", perr);
		goto out;
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		eo_set_err(err, errcap, "out of memory");
		goto out;
	}
	srv->cfg = *cfg;
	srv->cfg.metrics_addr = NULL;
	srv->cfg.health_addr = NULL;
	srv->metrics_port = -1;
	srv->health_port = -1;
	/* One listener for both when they name the same fixed address. */
	shared = !ma.disabled && !ha.disabled && ma.port != 0 && ma.port == ha.port &&
		 strcmp(ma.host, ha.host) == 0;

	if (!ma.disabled) {
		l = &srv->ls[srv->nls++];
		l->srv = srv;
		l->serves = SERVE_METRICS | (shared ? SERVE_HEALTH : 0);
		if (listener_start(l, "metrics", cfg->metrics_addr, &ma, err, errcap) != 0)
			goto out;
		srv->metrics_port = l->port;
		if (shared)
			srv->health_port = l->port;
	}
	if (!ha.disabled && !shared) {
		l = &srv->ls[srv->nls++];
		l->srv = srv;
		l->serves = SERVE_HEALTH;
		if (listener_start(l, "health probe", cfg->health_addr, &ha, err, errcap) != 0)
			goto out;
		srv->health_port = l->port;
	}
	*out = srv;
	srv = NULL;
	rc = 0;
out:
	eo_http_stop(srv);
	return rc;
}

int eo_http_metrics_port(const struct eo_http *srv)
{
	return srv ? srv->metrics_port : -1;
}

int eo_http_health_port(const struct eo_http *srv)
{
	return srv ? srv->health_port : -1;
}

void eo_http_stop(struct eo_http *srv)
{
	size_t i;

	if (!srv)
		return;
	for (i = 0; i < srv->nls; i++) {
		if (srv->ls[i].d)
			MHD_stop_daemon(srv->ls[i].d);
	}
	free(srv);
}
